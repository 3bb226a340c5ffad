# Lesson 08 — large batches: the learning-rate schedule of large-batch SGD (linear scaling,
# gradual warm-up, polynomial decay) and one tensor's LARS update (large_batch.c). The
# experiment's trust.c prints the trust ratio LARS gives each tensor of a real network,
# with the student's lars_step (build/lessons/08/<variant>/trust).
# The grader is split (lessons/kit/subject.h): it is linked with remote.c in place of
# large_batch.c, which runs in a program of its own per variant, so that the process that
# prints the verdicts never holds the student's code:
#   subject  large_batch.c in a server the grader asks for each lr_at and lars_step
#            (subject08.c), linked with only what large_batch.c calls of dtlab's library
#            (--gc-sections: dtlab's own schedule is not in the process)
# The experiment's program (trust) is the student's code and dtlab's alone, as before: it
# grades nothing (the answer key reads its output).
dt_lesson(08 SOURCES large_batch.c GRADER grader.c JUDGE remote.c SUBJECT subject08.c)
dt_lesson_program(08 trust DIR ${CMAKE_CURRENT_LIST_DIR} SOURCES large_batch.c)

# the answer sheet's key runs trust (instructor/answers_key.sh)
dt_lesson_answers_needs(08 student_trust)
