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
function(lesson06_subjects variant t libs)
  set(dir ${CMAKE_CURRENT_FUNCTION_LIST_DIR})
  set(kit ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../kit)
  add_executable(${t}_subject ${dir}/subject06.c ${kit}/subject.c ${kit}/subject_lane.c
                 $<TARGET_OBJECTS:${t}_files>)
  target_include_directories(${t}_subject PRIVATE ${dir})
  target_link_libraries(${t}_subject PRIVATE dtnn MPI::MPI_C ${libs})
  target_link_options(${t}_subject PRIVATE -Wl,--gc-sections)
  set_target_properties(${t}_subject PROPERTIES OUTPUT_NAME subject
                        RUNTIME_OUTPUT_DIRECTORY ${DT_LESSONS_BIN}/06/${variant})
  add_dependencies(${t} ${t}_subject)  # building the grader builds it
endfunction()
dt_lesson(06 SOURCES student_hier.c
          GRADER grader.c schedule_check.c ../kit/schedule_check.c ../kit/timing.c registry.c
          JUDGE remote.c ../kit/subject_lane.c MPI SMPI)

# the answer sheet's key runs dtsim (instructor/answers_key.sh)
dt_lesson_answers_needs(06 dtsim)

# the instructor's cases simulate the flat ring over 1024 ranks round by round (~40 s), the
# check of grade.sh's FLAT_RING_TIME
if(TEST lesson.06.solution_passes_instructor_cases)
  set_property(TEST lesson.06.solution_passes_instructor_cases APPEND PROPERTY LABELS slow)
  set_property(TEST lesson.06.solution_passes_instructor_cases PROPERTY COST 50)  # started early
endif()
