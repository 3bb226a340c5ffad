# Lesson 08 — large batches: the learning-rate schedule of large-batch SGD (linear scaling,
# gradual warm-up, polynomial decay) and one tensor's LARS update (large_batch.c). The
# experiment's trust.c prints the trust ratio LARS gives each tensor of a real network,
# with the student's lars_step (build/lessons/08/<variant>/trust).
# The grader is split (lessons/kit/subject.h): it is linked with remote.c in place of
# large_batch.c, which runs in a program of its own per variant, so that the process that
# prints the verdicts never holds the student's code:
#   subject  large_batch.c in a server the grader asks for each lr_at and lars_step
#            (subject08.c), linked with only what large_batch.c calls of dtlab's library
#            (--gc-sections: dtlab's own schedule is not in the process)
# The experiment's program (trust) is the student's code and dtlab's alone, as before: it
# grades nothing (the answer key reads its output).
function(lesson08_subjects variant t libs)
  set(dir ${CMAKE_CURRENT_FUNCTION_LIST_DIR})
  add_executable(${t}_subject ${dir}/subject08.c ${dir}/../kit/subject.c
                 $<TARGET_OBJECTS:${t}_files>)
  target_include_directories(${t}_subject PRIVATE ${dir})
  target_link_libraries(${t}_subject PRIVATE dtnn m ${libs})
  target_link_options(${t}_subject PRIVATE -Wl,--gc-sections)
  set_target_properties(${t}_subject PROPERTIES OUTPUT_NAME subject
                        RUNTIME_OUTPUT_DIRECTORY ${DT_LESSONS_BIN}/08/${variant})
  add_dependencies(${t} ${t}_subject)  # building the grader builds it
endfunction()
dt_lesson(08 SOURCES large_batch.c GRADER grader.c JUDGE remote.c)
dt_lesson_program(08 trust DIR ${CMAKE_CURRENT_LIST_DIR} SOURCES large_batch.c)

# the answer sheet's key runs trust (instructor/answers_key.sh)
dt_lesson_answers_needs(08 student_trust)
