# lesson 07 — fusion and overlap: the bucket planner (Horovod's byte threshold, Tencent's K
# segments by the cost model) and the overlap of each bucket's allreduce with backward,
# graded on random backward passes and on a real network under mpirun (grade.sh). The
# grader intercepts the student's dt_allreduce_start calls (-Wl,--wrap).
dt_lesson(07 SOURCES student_fusion.c
          GRADER grader.c grader_overlap.c
          LINK_OPTIONS -Wl,--wrap=dt_allreduce_start
          MPI)
