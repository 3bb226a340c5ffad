# lesson 11 — sharded optimizer state (ZeRO stage 1): the step on the ring's two halves
# (sharded.c), graded under mpirun at P = 1..4 and under smpirun at P = 16 (grade.sh).
# The grader is split (lessons/kit/subject.h): remote11.c stands in for sharded.c; the
# student's file runs in build/lessons/11/<variant>/subject (subject11.c) on a mirror of the
# grader's net, reaching the grader's device and collectives only by asking it.
dt_lesson(11 SOURCES sharded.c GRADER grader.c JUDGE remote11.c SUBJECT subject11.c MPI SMPI)
dt_lesson_answers_needs(11 dtrain dtsim)  # the answer sheet's key runs them (instructor/answers_key.sh)

# The student's step inside the real system: every variant's dtrain
# (build/lessons/11/<variant>/dtrain, target lesson11_<variant>_dtrain) is dtrain linked with
# the variant's sharded.c and in_dtrain.c, which wraps the library's two halves of the
# sharded step (-Wl,--wrap: nn/train_shard.c's finish and update, referenced from the
# strategies' registry nn/train_strategy.c in the static dtnn), so that `--shard-optimizer`
# runs sharded_step. grade.sh trains with it under
# mpirun -np 2 against the library's dtrain; building a variant's grader builds both.
if(NOT (DT_HAVE_MPI AND COMMAND dt_add_dtrain AND TARGET lesson11_student))
  message(STATUS "dtlab: lesson 11's dtrain skipped: it needs Open MPI and zlib")
  return()
endif()
set(L11 ${CMAKE_CURRENT_LIST_DIR})
dt_lesson_graded_variants(11 ${L11} l11_variants l11_dirs)
foreach(v src IN ZIP_LISTS l11_variants l11_dirs)
  if(v STREQUAL "mutant_no_library_answer")
    continue()  # the cheat: refused before any run
  endif()
  dt_add_dtrain(lesson11_${v}_dtrain OUTPUT_DIR ${DT_LESSONS_BIN}/11/${v}
                SOURCES ${src}/sharded.c ${L11}/in_dtrain.c INCLUDES ${L11} ${src})
  target_link_options(lesson11_${v}_dtrain PRIVATE
    -Wl,--wrap=dt_shard_optimizer_finish,--wrap=dt_shard_optimizer_update)
  if(v MATCHES "^mutant_")
    target_compile_options(lesson11_${v}_dtrain PRIVATE -w)
  endif()
  add_dependencies(lesson11_${v} lesson11_${v}_dtrain dtrain)
  if(TARGET st_compare)  # dtrain_check.sh compares the weights with it
    add_dependencies(lesson11_${v} st_compare)
  endif()
endforeach()

# Every command of the README and HINTS.md runs to its end as written, exit 0, as root
# without Open MPI's root variables (kit/readme_commands.py --complete; the student's dtrain
# there is the solution's, --variant solution, so that the README's comparison with the
# library's dtrain finds the same bits). ~15 s.
if(TARGET lesson11_solution_dtrain)
  add_test(NAME lesson.11.readme_commands_run_as_written
           COMMAND ${Python3_EXECUTABLE} ${DT_LESSONS_DIR}/kit/readme_commands.py
                   ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR} --lessons 11 --variant solution
                   --complete)
  set_tests_properties(lesson.11.readme_commands_run_as_written PROPERTIES
    LABELS "lesson;lesson11" TIMEOUT 300
    ENVIRONMENT "OMP_NUM_THREADS=1;OPENBLAS_NUM_THREADS=1")
endif()
