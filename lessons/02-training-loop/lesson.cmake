# Lesson 02 — the training loop: sgd_step (torch.optim.SGD: momentum, weight decay,
# Nesterov) and one process training smallcnn on Fashion-MNIST (real/data.h's datasets).
# The grader is split (lessons/kit/subject.h): it is linked with remote02.c in place of
# sgd.c and train_loop.c, which run in a program of its own per variant, so that the
# process that prints the verdicts never holds the student's code:
#   subject  sgd.c and train_loop.c in a server the grader asks for each sgd_step,
#            evaluate_top1 and train_loop (subject02.c), on a mirror of the grader's net
#            (the same model and state on a cpu device of its own) and a copy of its
#            dataset; each forward pass told to the grader as it begins. Linked with only
#            what they reach of dtlab's library (--gc-sections: dtlab's optimiser step and
#            training step, which calls.txt refuses, are not in the process)
if(TARGET dtdata)
  dt_lesson(02 SOURCES sgd.c train_loop.c GRADER grader.c grader_train.c LIBS dtdata
            JUDGE remote02.c SUBJECT subject02.c)
else()
  message(STATUS "dtlab: lesson 02 skipped: it needs libdtdata (zlib)")
endif()
