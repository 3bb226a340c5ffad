# lesson 03 — data parallel: broadcast, shard, average, step (data_parallel.c), graded under
# mpirun at P = 1..4 and under smpirun at P = 8 (grade.sh).
# The grader is split (lessons/kit/subject.h, subject03.h): it is linked with remote.c in
# place of data_parallel.c, whose calls it reads back from records that the student's file
# wrote in a run of its own just before (grade.sh, split03.sh), per variant:
#   subject_mpi      data_parallel.c under mpirun, with grader.c's sequence of calls, its
#                    verdicts quiet (subject03_mpi.c: the four functions wrapped at link time
#                    to record what each call returned)
#   subject_smpi.so  the same under smpirun (every rank in one process; the student's file
#                    compiled for SMPI as the grader's SMPI program was), recording the
#                    timed step's simulated span too
set(L03_WRAP
    -Wl,--wrap=broadcast_weights,--wrap=shard,--wrap=average_gradients,--wrap=data_parallel_step)
function(lesson03_subjects variant t libs)  # subject_smpi.so (subject_mpi: dt_lesson's SUBJECT_MPI)
  # the cheat is refused before any run: no SMPI recording for it
  if(NOT DT_HAVE_SMPI OR variant MATCHES "^mutant_no_library_answer")
    return()
  endif()
  set(dir ${CMAKE_CURRENT_FUNCTION_LIST_DIR})
  get_target_property(files ${t}_files SOURCES)  # compiled again, for SMPI
  dt_add_smpi_program(${t}_subject_smpi SOURCES ${dir}/subject03_mpi.c ${dir}/record03.c
                      ${dir}/grader.c ${dir}/../kit/subject.c ${files})
  target_include_directories(${t}_subject_smpi PRIVATE ${dir})
  target_link_options(${t}_subject_smpi PRIVATE ${L03_WRAP})
  if(variant MATCHES "^mutant_")  # a planted bug may leave a parameter unused: no noise
    target_compile_options(${t}_subject_smpi PRIVATE -w)
  endif()
  set_target_properties(${t}_subject_smpi PROPERTIES OUTPUT_NAME subject_smpi
                        LIBRARY_OUTPUT_DIRECTORY ${DT_LESSONS_BIN}/03/${variant})
  add_dependencies(${t} ${t}_subject_smpi)  # building the grader builds it
endfunction()
dt_lesson(03 SOURCES data_parallel.c GRADER grader.c JUDGE remote.c record03.c
          SUBJECT_MPI subject03_mpi.c record03.c grader.c SUBJECT_MPI_LINK_OPTIONS ${L03_WRAP}
          MPI SMPI)

# the answer sheet's key runs dtsim (instructor/answers_key.sh)
dt_lesson_answers_needs(03 dtsim)
