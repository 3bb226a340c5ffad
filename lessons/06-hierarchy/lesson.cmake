# lesson 06 — hierarchy: the hierarchical allreduce (Jia et al. 2018) and the 2-D torus
# (Mikami et al. 2018) as dtlab schedules, registered as "student_hier" and
# "student_torus2d" (student_hier.h, registry.c), graded against MPI_Allreduce under mpirun
# and smpirun at 1024 ranks, and timed against the closed form under SMPI (grade.sh).
dt_lesson(06 SOURCES student_hier.c
          GRADER grader.c schedule_check.c ../kit/schedule_check.c ../kit/timing.c registry.c
          MPI SMPI)

# the answer sheet's key runs dtsim (instructor/answers_key.sh)
dt_lesson_answers_needs(06 dtsim)

# the instructor's cases simulate the flat ring over 1024 ranks round by round (~40 s), the
# check of grade.sh's FLAT_RING_TIME
if(TEST lesson.06.solution_passes_instructor_cases)
  set_property(TEST lesson.06.solution_passes_instructor_cases APPEND PROPERTY LABELS slow)
  set_property(TEST lesson.06.solution_passes_instructor_cases PROPERTY COST 50)  # started early
endif()
