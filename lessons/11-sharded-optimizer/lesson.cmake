# lesson 11 — sharded optimizer state (ZeRO stage 1): the step on the ring's two halves
# (sharded.c), graded under mpirun at P = 1..4 and under smpirun at P = 16 (grade.sh).
dt_lesson(11 SOURCES sharded.c GRADER grader.c MPI SMPI)
