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
dt_lesson(09 SOURCES half.c GRADER grader.c JUDGE remote.c SUBJECT subject09.c)
dt_lesson_program(09 underflow DIR ${CMAKE_CURRENT_LIST_DIR} SOURCES half.c)

# the answer sheet's key runs underflow (instructor/answers_key.sh)
dt_lesson_answers_needs(09 student_underflow)
