# Lesson 01 — layers: conv2d as im2col + gemm, batch norm, softmax cross-entropy.
dt_lesson(01 SOURCES layers.c
          GRADER grader.c grader_conv.c grader_bn_xent.c grader_time.c)
