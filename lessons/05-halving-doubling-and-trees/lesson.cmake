# lesson 05 — halving-doubling and trees: Rabenseifner's allreduce as a dtlab schedule,
# registered as "student_rhd" (student_rhd.h, registry.c), graded against MPI_Allreduce
# under mpirun and against the closed form's time under SMPI (grade.sh).
dt_lesson(05 SOURCES student_rhd.c
          GRADER grader.c schedule_check.c ../kit/schedule_check.c ../kit/timing.c registry.c
          MPI SMPI)
