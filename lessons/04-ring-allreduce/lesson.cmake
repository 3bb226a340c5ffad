# lessons/04-ring-allreduce — part 1: the ring in plain MPI (ring_mpi.c: student_ring_mpi,
# graded by grader_mpi.c under mpirun, a hang beyond the eager limit shown as such); part 2:
# the ring allreduce as a schedule (ring.c: student_ring), an
# entry of dtlab's registry of algorithms (registry.c: "student"). The grader runs it under
# mpirun (P = 1..7, against MPI_Allreduce and dtlab's ring) and under SMPI (64 and 256 ranks,
# simulated time against the closed form); grade.sh drives it.
# The grader is split (lessons/kit/subject.h): it is linked with remote.c in place of the
# student's files, which run in two programs of their own per variant, so that
# the process that prints the verdicts never holds the student's code.
#   subject      ring.c in a server the grader asks for each rank's schedule (subject04.c),
#                linked with only what ring.c calls of dtlab's library (--gc-sections:
#                dtlab's own ring is not in the process, to be reached by its address)
#   subject_mpi  ring_mpi.c under mpirun, recording what each call returned (subject04_mpi.c
#                and grader_mpi.c's sequence of calls), replayed by the grader's --raw runs
dt_lesson(04 SOURCES ring_mpi.c ring.c GRADER grader.c grader_mpi.c schedule_play.c registry.c
          JUDGE remote.c ../kit/subject_lane.c SUBJECT subject04.c ../kit/subject_lane.c
          SUBJECT_MPI subject04_mpi.c grader_mpi.c
          SUBJECT_MPI_LINK_OPTIONS -Wl,--wrap=student_ring_mpi MPI SMPI)
dt_lesson_answers_needs(04 dtsim)  # the answer sheet's key runs it (answers_key.sh)

# The same ring in the real system: dtrain and dtsim built with the lesson's registry and a
# variant's ring.c, as build/lessons/04/<variant>/dtrain, dtsim and dtsim_rank.so, so that
# `--algo student` runs it (cmake --build build --target lesson04_student_programs).
set(L04 ${CMAKE_CURRENT_LIST_DIR})
if(NOT (DT_HAVE_MPI AND DT_HAVE_SMPI AND COMMAND dt_add_dtrain AND COMMAND dt_add_dtsim))
  message(STATUS "dtlab: lesson 04's dtrain and dtsim skipped: they need Open MPI, zlib and SimGrid")
  return()
endif()
foreach(v student solution)
  set(src ${L04})
  if(v STREQUAL "solution")
    set(src ${L04}/solution)
  endif()
  if(NOT EXISTS ${src}/ring.c)  # the handout has no solution
    continue()
  endif()
  set(out ${DT_LESSONS_BIN}/04/${v})
  dt_add_dtrain(lesson04_${v}_dtrain OUTPUT_DIR ${out}
                SOURCES ${src}/ring.c ${L04}/registry.c INCLUDES ${L04})
  dt_add_dtsim(lesson04_${v}_dtsim OUTPUT_DIR ${out}
               SOURCES ${src}/ring.c ${L04}/registry.c INCLUDES ${L04})
  # in the programs, --algo student refuses a ring that schedules no messages (the skeleton):
  # a clear line and exit 2, not an allreduce that moves nothing (registry.c)
  foreach(t lesson04_${v}_dtrain lesson04_${v}_dtsim lesson04_${v}_dtsim_rank)
    target_compile_definitions(${t} PRIVATE LESSON04_PROGRAM)
  endforeach()
  add_custom_target(lesson04_${v}_programs DEPENDS lesson04_${v}_dtrain lesson04_${v}_dtsim)
endforeach()
# The skeleton's ring (the lesson's own ring.c, as handed out) in the programs: dtsim and
# dtrain --algo student refuse it with a line naming ring.c, exit 2 (registry.c)
if(TARGET lesson04_student_programs)
  add_test(NAME lesson.04.skeleton_ring_in_dtsim_and_dtrain_says_write_ring_c
           COMMAND sh ${L04}/programs_check.sh skeleton ${DT_LESSONS_BIN}/04/student
                   ${MPIRUN_EXECUTABLE})
  set_tests_properties(lesson.04.skeleton_ring_in_dtsim_and_dtrain_says_write_ring_c PROPERTIES
    LABELS "lesson;lesson04" TIMEOUT 120
    ENVIRONMENT "OMP_NUM_THREADS=1;OPENBLAS_NUM_THREADS=1;${DT_MPIRUN_ENV}"
    PASS_REGULAR_EXPRESSION "PASS skeleton" FAIL_REGULAR_EXPRESSION "FAIL")
endif()
if(NOT TARGET lesson04_solution_programs)
  return()
endif()

# The reference ring inside the programs: dtrain --algo student trains loss for loss and
# weight for weight like --algo ring (the solution sums in dt_sched_ring's order), and dtsim
# --algo student simulates a 256-GPU iteration in the same time as --algo ring.
foreach(case dtrain dtsim)
  set(name lesson.04.solution_ring_in_${case}_equals_algo_ring)
  if(case STREQUAL "dtsim")
    set(name ${name}_at_256_gpus)
  endif()
  add_test(NAME ${name} COMMAND sh ${L04}/programs_check.sh ${case} ${DT_LESSONS_BIN}/04/solution
                                   ${MPIRUN_EXECUTABLE})
  set_tests_properties(${name} PROPERTIES LABELS "lesson;lesson04" TIMEOUT 300
    ENVIRONMENT "OMP_NUM_THREADS=1;OPENBLAS_NUM_THREADS=1;${DT_MPIRUN_ENV}"
    PASS_REGULAR_EXPRESSION "PASS ${case}" FAIL_REGULAR_EXPRESSION "FAIL")
endforeach()
