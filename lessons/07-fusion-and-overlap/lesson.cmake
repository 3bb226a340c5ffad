# lesson 07 — fusion and overlap: the bucket planner (Horovod's byte threshold, Tencent's K
# segments by the cost model) and the overlap of each bucket's allreduce with backward,
# graded on random backward passes and on a real network under mpirun (grade.sh). The
# grader intercepts the student's dt_allreduce_start calls (-Wl,--wrap).
# The grader is split (lessons/kit/subject.h): remote07.c stands in for student_fusion.c in
# the grader and in the dtsim rank program below; the student's file runs in
# build/lessons/07/<variant>/subject (subject07.c), which reaches the grader's cost model
# and allreduce library only by asking it.
dt_lesson(07 SOURCES student_fusion.c
          GRADER grader.c grader_overlap.c
          JUDGE remote07.c SUBJECT subject07.c
          LINK_OPTIONS -Wl,--wrap=dt_allreduce_start
          MPI)

# The planner inside dtsim: a rank program per variant, build/lessons/07/<variant>/dtsim_rank.so,
# linked with -Wl,--wrap=dt_fusion_plan so that the trainer's call (nn/train_comm.c) runs
# plan_segments / plan_bytes (dtsim_planner.c), which ask the variant's subject
# (remote07.c; LESSON_SUBJECT names it: lessons/grade sets it);
# build/dtsim runs it when DTSIM_RANK_SO names it (dtsim_check.sh: grade.sh's checks in simulated
# time at 256 GPUs). dtsim's sources are compiled once for all variants; each variant adds
# two files and a link. `lessons/grade 07` builds it with the grader.
set(L07 ${CMAKE_CURRENT_LIST_DIR})
if(NOT (DT_HAVE_SMPI AND TARGET dtsim AND TARGET lesson07_student))
  message(STATUS "dtlab: lesson 07's planner in dtsim skipped: it needs SimGrid and dtsim")
  return()
endif()
set(S ${PROJECT_SOURCE_DIR}/sim)
get_property(rank GLOBAL PROPERTY DT_RANK_SOURCES)  # sim/programs.cmake
add_library(lesson07_dtsim_objs OBJECT ${rank})
target_include_directories(lesson07_dtsim_objs PRIVATE ${S})
target_link_libraries(lesson07_dtsim_objs PRIVATE dtnn_smpi)
set_target_properties(lesson07_dtsim_objs PROPERTIES POSITION_INDEPENDENT_CODE ON)
file(GLOB l07_mutants LIST_DIRECTORIES true ${DT_LESSONS_BIN}/07/mutant_*)
set(l07_variants student solution)
foreach(d IN LISTS l07_mutants)
  get_filename_component(v ${d} NAME)
  list(APPEND l07_variants ${v})
endforeach()
foreach(v IN LISTS l07_variants)
  # the cheat is refused before any run; an answer sheet's mutant runs the solution's
  if(NOT TARGET lesson07_${v} OR v STREQUAL "mutant_no_library_answer")
    continue()
  endif()
  set(t lesson07_${v}_dtsim_rank)
  dt_add_smpi_program(${t} SOURCES $<TARGET_OBJECTS:lesson07_dtsim_objs> ${L07}/remote07.c
                      ${L07}/../kit/subject.c ${L07}/dtsim_planner.c)
  target_include_directories(${t} PRIVATE ${L07})
  target_link_options(${t} PRIVATE -Wl,--wrap=dt_fusion_plan)
  set_target_properties(${t} PROPERTIES OUTPUT_NAME dtsim_rank
                        LIBRARY_OUTPUT_DIRECTORY ${DT_LESSONS_BIN}/07/${v})
  add_dependencies(lesson07_${v} ${t} dtsim)  # lessons/grade 07 builds both
endforeach()

# The answer key after a planner that crashes inside dtsim (the crash mutant's
# dtsim_rank.so): the answer's line says how dtsim ended (the signal, or the split
# grader's word on the student's process), not "in dtsim ()".
# A second; instructor/ and the mutants are not in a handout.
if(EXISTS ${L07}/instructor/answers_key.sh AND TARGET lesson07_mutant_crash_dtsim_rank)
  add_test(NAME lesson.07.answer_key_names_a_dtsim_crash
           COMMAND sh -c "out=$(DT_BUILD=\"$1\" bash \"$0\" \"$1/lessons/07/mutant_crash\") || exit 1; echo \"$out\"; echo \"$out\" | grep -Eq 'gave no plan in dtsim \\(.*(Segmentation fault|Aborted|double free|free\\(\\)|signal [0-9])'"
                   ${L07}/instructor/answers_key.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(lesson.07.answer_key_names_a_dtsim_crash PROPERTIES
    LABELS "lesson;lesson07;answers" TIMEOUT 60
    ENVIRONMENT "LESSON_SUBJECT=${DT_LESSONS_BIN}/07/mutant_crash/subject")
endif()
