# Lesson 02 — the training loop: sgd_step (torch.optim.SGD: momentum, weight decay,
# Nesterov) and one process training smallcnn on Fashion-MNIST (real/data.h's datasets).
if(TARGET dtdata)
  dt_lesson(02 SOURCES sgd.c train_loop.c GRADER grader.c grader_train.c LIBS dtdata)
else()
  message(STATUS "dtlab: lesson 02 skipped: it needs libdtdata (zlib)")
endif()
