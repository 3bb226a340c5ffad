# lesson 05 — halving-doubling and trees: Rabenseifner's allreduce as a dtlab schedule,
# registered as "student_rhd" (student_rhd.h, registry.c), graded against MPI_Allreduce
# under mpirun and against the closed form's time under SMPI (grade.sh).
# The grader is split (lessons/kit/subject.h): it is linked with remote.c in place of
# student_rhd.c, which runs in a program of its own per variant (below), so that the
# process that prints the verdicts never holds the student's code.
#   subject   student_rhd.c in a server the grader asks for each rank's schedule
#             (subject05.c), linked with only what student_rhd.c calls of dtlab's library
#             (--gc-sections: dtlab's own halving-doubling, dt_sched_rhd, is not in the
#             process, to be reached by its address)
dt_lesson(05 SOURCES student_rhd.c
          GRADER grader.c schedule_check.c ../kit/schedule_check.c ../kit/timing.c registry.c
          JUDGE remote.c ../kit/subject_lane.c SUBJECT subject05.c ../kit/subject_lane.c MPI SMPI)
