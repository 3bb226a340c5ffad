# Lesson 08 — large batches: the learning-rate schedule of large-batch SGD (linear scaling,
# gradual warm-up, polynomial decay) and one tensor's LARS update (large_batch.c). The
# experiment's trust.c prints the trust ratio LARS gives each tensor of a real network,
# with the student's lars_step (build/lessons/08/<variant>/trust).
dt_lesson(08 SOURCES large_batch.c GRADER grader.c)
foreach(v student solution)
  set(src ${CMAKE_CURRENT_LIST_DIR})
  if(v STREQUAL "solution")
    set(src ${CMAKE_CURRENT_LIST_DIR}/solution)
  endif()
  if(NOT EXISTS ${src}/large_batch.c)  # the handout has no solution
    continue()
  endif()
  add_executable(lesson08_${v}_trust ${CMAKE_CURRENT_LIST_DIR}/trust.c ${src}/large_batch.c)
  target_include_directories(lesson08_${v}_trust PRIVATE ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(lesson08_${v}_trust PRIVATE dtnn m)
  set_target_properties(lesson08_${v}_trust PROPERTIES OUTPUT_NAME trust
                        RUNTIME_OUTPUT_DIRECTORY ${DT_LESSONS_BIN}/08/${v})
endforeach()
