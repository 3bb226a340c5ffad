# Lesson 09 — mixed precision: fp32 <-> fp16 with round-to-nearest-even, dynamic loss
# scaling, fp16 gradients on the wire summed in fp32 (half.c). The grader needs nothing but
# the C library; the experiment (underflow.c) runs the student's to_half over a real
# network's activation gradients (build/lessons/09/<variant>/underflow).
dt_lesson(09 SOURCES half.c GRADER grader.c)
foreach(v student solution)
  set(src ${CMAKE_CURRENT_LIST_DIR})
  if(v STREQUAL "solution")
    set(src ${CMAKE_CURRENT_LIST_DIR}/solution)
  endif()
  if(NOT EXISTS ${src}/half.c)  # the handout has no solution
    continue()
  endif()
  add_executable(lesson09_${v}_underflow ${CMAKE_CURRENT_LIST_DIR}/underflow.c ${src}/half.c)
  target_include_directories(lesson09_${v}_underflow PRIVATE ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(lesson09_${v}_underflow PRIVATE dtnn m)
  set_target_properties(lesson09_${v}_underflow PROPERTIES OUTPUT_NAME underflow
                        RUNTIME_OUTPUT_DIRECTORY ${DT_LESSONS_BIN}/09/${v})
endforeach()
