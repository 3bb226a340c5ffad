# Lesson 09 — mixed precision: fp32 <-> fp16 with round-to-nearest-even, dynamic loss
# scaling, fp16 gradients on the wire summed in fp32 (half.c). The grader needs nothing but
# the C library; the experiment (underflow.c) runs the student's to_half over a real
# network's activation gradients (build/lessons/09/<variant>/underflow).
dt_lesson(09 SOURCES half.c GRADER grader.c)
dt_lesson_program(09 underflow DIR ${CMAKE_CURRENT_LIST_DIR} SOURCES half.c)

# the answer sheet's key runs underflow (instructor/answers_key.sh)
dt_lesson_answers_needs(09 student_underflow)
