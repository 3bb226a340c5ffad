# lesson 06 — hierarchy: the hierarchical allreduce (Jia et al. 2018) and the 2-D torus
# (Mikami et al. 2018) as dtlab schedules, registered as "student_hier" and
# "student_torus2d" (student_hier.h, registry.c), graded against MPI_Allreduce under mpirun
# and smpirun at 1024 ranks, and timed against the closed form under SMPI (grade.sh).
# The grader is split (lessons/kit/subject.h): it is linked with remote.c in place of
# student_hier.c, which runs in a program of its own per variant (below), so that the
# process that prints the verdicts never holds the student's code.
#   subject   student_hier.c in a server the grader asks for each rank's schedule
#             (subject06.c), linked with only what student_hier.c calls of dtlab's library
#             (--gc-sections: the ring calls.txt allows is there; dtlab's own binomial
#             trees, hier and torus are not, to be reached by their addresses)
dt_lesson(06 SOURCES student_hier.c
          GRADER grader.c schedule_check.c ../kit/schedule_check.c ../kit/timing.c registry.c
          JUDGE remote.c ../kit/subject_lane.c SUBJECT subject06.c ../kit/subject_lane.c MPI SMPI)

# the answer sheet's key runs dtsim (instructor/answers_key.sh)
dt_lesson_answers_needs(06 dtsim)

# the instructor's cases simulate the flat ring over 1024 ranks round by round (~40 s), the
# check of grade.sh's FLAT_RING_TIME
if(TEST lesson.06.solution_passes_instructor_cases)
  set_property(TEST lesson.06.solution_passes_instructor_cases APPEND PROPERTY LABELS slow)
  set_property(TEST lesson.06.solution_passes_instructor_cases PROPERTY COST 50)  # started early
endif()
