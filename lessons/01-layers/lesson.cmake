# Lesson 01 — layers: conv2d as im2col + gemm, batch norm, softmax cross-entropy.
# The grader is split (lessons/kit/subject.h): it is linked with remote01.c in place of
# layers.c, which runs in a program of its own per variant, so that the process that
# prints the verdicts never holds the student's code:
#   subject  layers.c in a server the grader asks for each call of layers01.h's functions
#            (subject01.c), on a cpu device of its own; also `grader --time`'s measurement
#            (grader_time.c: the grader runs the subject with --time). Linked with only
#            what they reach of dtlab's library (--gc-sections: nn/'s conv and batch-norm
#            layers, the grader's references, are not in the process)
dt_lesson(01 SOURCES layers.c GRADER grader.c grader_conv.c grader_bn_xent.c JUDGE remote01.c
          SUBJECT subject01.c grader_time.c)
