# lesson 03 — data parallel: broadcast, shard, average, step (data_parallel.c), graded under
# mpirun at P = 1..4 and under smpirun at P = 8 (grade.sh).
dt_lesson(03 SOURCES data_parallel.c GRADER grader.c MPI SMPI)

# the answer sheet's key runs dtsim (instructor/answers_key.sh)
dt_lesson_answers_needs(03 dtsim)
