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
# and lesson 04's ring, the ring that race.sh races your rhd against once it is one
# (your_ring.h, race_ring.c): the student's lessons/04-ring-allreduce/ring.c in every
# variant's subject, lesson 04's reference solution in the reference solution's
function(lesson05_subjects variant t libs)
  set(ring ${DT_LESSONS_DIR}/04-ring-allreduce/ring.c)
  if(variant STREQUAL "solution" AND EXISTS ${DT_LESSONS_DIR}/04-ring-allreduce/solution/ring.c)
    set(ring ${DT_LESSONS_DIR}/04-ring-allreduce/solution/ring.c)
  endif()
  target_sources(${t}_subject PRIVATE ${ring})
  target_include_directories(${t}_subject PRIVATE ${DT_LESSONS_DIR}/04-ring-allreduce)
endfunction()
dt_lesson(05 SOURCES student_rhd.c
          GRADER grader.c schedule_check.c ../kit/schedule_check.c ../kit/timing.c registry.c
                 race_ring.c
          JUDGE remote.c ../kit/subject_lane.c
          SUBJECT subject05.c ../kit/subject_lane.c MPI SMPI)

# The race (race.sh) on lesson 04's ring: the reference build races lesson 04's reference
# ring in dtlab's ring's simulated time, the skeleton's races dtlab's and says why
# (race_ring_check.sh; two 32-rank races, seconds)
if(TARGET lesson05_solution AND TARGET lesson05_student)
  add_test(NAME lesson.05.race_runs_on_your_lesson_04_ring
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/race_ring_check.sh
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(lesson.05.race_runs_on_your_lesson_04_ring PROPERTIES
    LABELS "lesson;lesson05" TIMEOUT 300 ENVIRONMENT "BUILD=${CMAKE_BINARY_DIR}"
    FAIL_REGULAR_EXPRESSION "^FAIL")
endif()
