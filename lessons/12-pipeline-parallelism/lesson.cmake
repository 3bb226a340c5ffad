# lesson 12 — pipeline parallelism: the 1F1B schedule (one_f_one_b.c), graded on the
# simulator's model of the stages' clocks (grader.c), then inside the real dtrain under
# mpirun -np 2 against one process, bit for bit (grade.sh, dtrain_check.sh).
# The grader is split (lessons/kit/subject.h): remote.c stands in for one_f_one_b.c, which
# runs in build/lessons/12/<variant>/subject (subject12.c), linked with only what it calls of
# dtlab's library (--gc-sections: dtlab's own schedules are not in that process).
dt_lesson(12 SOURCES one_f_one_b.c GRADER grader.c JUDGE remote.c SUBJECT subject12.c)
dt_lesson_answers_needs(12 dtsim)  # the answer sheet's key runs it (instructor/answers_key.sh)

# The student's schedule inside the real system: every variant's dtrain
# (build/lessons/12/<variant>/dtrain, target lesson12_<variant>_dtrain) is dtrain linked with
# the variant's one_f_one_b.c and in_dtrain.c, which wraps the library's dt_pipe_build
# (-Wl,--wrap: nn/pipe/pipe_sched.c, called from nn/train_pipe.c in the static dtnn), so
# that `--pp P` runs the stages in the student's order. grade.sh trains with it under
# mpirun -np 2 against the library's dtrain on one rank; building a variant's grader builds
# both.
if(NOT (DT_HAVE_MPI AND COMMAND dt_add_dtrain AND TARGET lesson12_student))
  message(STATUS "dtlab: lesson 12's dtrain skipped: it needs Open MPI and zlib")
  return()
endif()
set(L12 ${CMAKE_CURRENT_LIST_DIR})
dt_lesson_graded_variants(12 ${L12} l12_variants l12_dirs)
foreach(v src IN ZIP_LISTS l12_variants l12_dirs)
  if(v STREQUAL "mutant_no_library_answer")
    continue()  # the cheat: refused before any run
  endif()
  dt_add_dtrain(lesson12_${v}_dtrain OUTPUT_DIR ${DT_LESSONS_BIN}/12/${v}
                SOURCES ${src}/one_f_one_b.c ${L12}/in_dtrain.c INCLUDES ${L12} ${src})
  target_link_options(lesson12_${v}_dtrain PRIVATE -Wl,--wrap=dt_pipe_build)
  if(v MATCHES "^mutant_")
    target_compile_options(lesson12_${v}_dtrain PRIVATE -w)
  endif()
  add_dependencies(lesson12_${v} lesson12_${v}_dtrain dtrain)
  if(TARGET st_compare)  # dtrain_check.sh compares the weights with it
    add_dependencies(lesson12_${v} st_compare)
  endif()
endforeach()

# Every command of the README and HINTS.md runs to its end as written, exit 0, as root
# without Open MPI's root variables (kit/readme_commands.py --complete; the student's dtrain
# there is the solution's, --variant solution).
if(TARGET lesson12_solution_dtrain)
  add_test(NAME lesson.12.readme_commands_run_as_written
           COMMAND ${Python3_EXECUTABLE} ${DT_LESSONS_DIR}/kit/readme_commands.py
                   ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR} --lessons 12 --variant solution
                   --complete)
  set_tests_properties(lesson.12.readme_commands_run_as_written PROPERTIES
    LABELS "lesson;lesson12" TIMEOUT 300
    ENVIRONMENT "OMP_NUM_THREADS=1;OPENBLAS_NUM_THREADS=1")
endif()
