# Lesson 08 — large batches: the learning-rate schedule of large-batch SGD (linear scaling,
# gradual warm-up, polynomial decay) and one tensor's LARS update (large_batch.c). The
# experiment's trust.c prints the trust ratio LARS gives each tensor of a real network,
# with the student's lars_step (build/lessons/08/<variant>/trust).
dt_lesson(08 SOURCES large_batch.c GRADER grader.c)
dt_lesson_program(08 trust DIR ${CMAKE_CURRENT_LIST_DIR} SOURCES large_batch.c)

# the answer sheet's key runs trust (instructor/answers_key.sh)
dt_lesson_answers_needs(08 student_trust)
