# Lesson 09 — mixed precision: fp32 <-> fp16 with round-to-nearest-even, dynamic loss
# scaling, fp16 gradients on the wire summed in fp32 (half.c). The grader needs nothing but
# the C library; the experiment (underflow.c) runs the student's to_half over a real
# network's activation gradients (build/lessons/09/<variant>/underflow).
# The grader is split (lessons/kit/subject.h): it is linked with remote.c in place of
# half.c, which runs in a program of its own per variant, so that the process that prints
# the verdicts never holds the student's code:
#   subject  half.c in a server the grader asks (subject09.c): whole arrays for the checks
#            that call to_half, from_half or scaler_step thousands of times, one request a
#            call for the others; linked with only what half.c calls of dtlab's library
#            (--gc-sections)
# The experiment's program (underflow) is the student's code and dtlab's alone, as before:
# it grades nothing (the answer key reads its output).
function(lesson09_subjects variant t libs)
  set(dir ${CMAKE_CURRENT_FUNCTION_LIST_DIR})
  add_executable(${t}_subject ${dir}/subject09.c ${dir}/../kit/subject.c
                 $<TARGET_OBJECTS:${t}_files>)
  target_include_directories(${t}_subject PRIVATE ${dir})
  target_link_libraries(${t}_subject PRIVATE dtnn m ${libs})
  target_link_options(${t}_subject PRIVATE -Wl,--gc-sections)
  set_target_properties(${t}_subject PROPERTIES OUTPUT_NAME subject
                        RUNTIME_OUTPUT_DIRECTORY ${DT_LESSONS_BIN}/09/${variant})
  add_dependencies(${t} ${t}_subject)  # building the grader builds it
endfunction()
dt_lesson(09 SOURCES half.c GRADER grader.c JUDGE remote.c)
dt_lesson_program(09 underflow DIR ${CMAKE_CURRENT_LIST_DIR} SOURCES half.c)

# the answer sheet's key runs underflow (instructor/answers_key.sh)
dt_lesson_answers_needs(09 student_underflow)
