# Lesson 01 — layers: conv2d as im2col + gemm, batch norm, softmax cross-entropy.
# The grader is split (lessons/kit/subject.h): it is linked with remote01.c in place of
# layers.c, which runs in a program of its own per variant, so that the process that
# prints the verdicts never holds the student's code:
#   subject  layers.c in a server the grader asks for each call of layers01.h's functions
#            (subject01.c), on a cpu device of its own; also `grader --time`'s measurement
#            (grader_time.c: the grader runs the subject with --time). Linked with only
#            what they reach of dtlab's library (--gc-sections: nn/'s conv and batch-norm
#            layers, the grader's references, are not in the process)
function(lesson01_subjects variant t libs)
  set(dir ${CMAKE_CURRENT_FUNCTION_LIST_DIR})
  add_executable(${t}_subject ${dir}/subject01.c ${dir}/grader_time.c ${dir}/../kit/subject.c
                 $<TARGET_OBJECTS:${t}_files>)
  target_include_directories(${t}_subject PRIVATE ${dir})
  target_link_libraries(${t}_subject PRIVATE dtnn m ${libs})
  target_link_options(${t}_subject PRIVATE -Wl,--gc-sections)
  set_target_properties(${t}_subject PROPERTIES OUTPUT_NAME subject
                        RUNTIME_OUTPUT_DIRECTORY ${DT_LESSONS_BIN}/01/${variant})
  add_dependencies(${t} ${t}_subject)  # building the grader builds it
endfunction()
dt_lesson(01 SOURCES layers.c GRADER grader.c grader_conv.c grader_bn_xent.c JUDGE remote01.c)
