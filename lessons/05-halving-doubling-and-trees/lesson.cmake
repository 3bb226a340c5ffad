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
function(lesson05_subjects variant t libs)
  set(dir ${CMAKE_CURRENT_FUNCTION_LIST_DIR})
  set(kit ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../kit)
  add_executable(${t}_subject ${dir}/subject05.c ${kit}/subject.c ${kit}/subject_lane.c
                 $<TARGET_OBJECTS:${t}_files>)
  target_include_directories(${t}_subject PRIVATE ${dir})
  target_link_libraries(${t}_subject PRIVATE dtnn MPI::MPI_C ${libs})
  target_link_options(${t}_subject PRIVATE -Wl,--gc-sections)
  set_target_properties(${t}_subject PROPERTIES OUTPUT_NAME subject
                        RUNTIME_OUTPUT_DIRECTORY ${DT_LESSONS_BIN}/05/${variant})
  add_dependencies(${t} ${t}_subject)  # building the grader builds it
endfunction()
dt_lesson(05 SOURCES student_rhd.c
          GRADER grader.c schedule_check.c ../kit/schedule_check.c ../kit/timing.c registry.c
          JUDGE remote.c ../kit/subject_lane.c MPI SMPI)
