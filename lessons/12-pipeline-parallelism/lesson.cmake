# lesson 12 — pipeline parallelism: the 1F1B schedule (one_f_one_b.c), graded on the
# simulator's model of the stages' clocks (grader.c), then inside the real dtrain under
# mpirun -np 2 against one process, bit for bit (grade.sh, dtrain_check.sh).
# The grader is split (lessons/kit/subject.h): remote.c stands in for one_f_one_b.c, which
# runs in build/lessons/12/<variant>/subject (subject12.c), linked with only what it calls of
# dtlab's library (--gc-sections: dtlab's own schedules are not in that process).
dt_lesson(12 SOURCES one_f_one_b.c GRADER grader.c JUDGE remote.c SUBJECT subject12.c)
dt_lesson_answers_needs(12 dtsim)  # the answer sheet's key runs it (instructor/answers_key.sh)

# The student's schedule inside the real system: every variant's dtrain
# (build/lessons/12/<variant>/dtrain) is dtrain linked with the variant's one_f_one_b.c and
# in_dtrain.c, which wraps the library's dt_pipe_build (nn/pipe/pipe_sched.c, called from
# nn/train_pipe.c in the static dtnn), so that `--pp P` runs the stages in the student's
# order. grade.sh trains with it under mpirun -np 2 against the library's dtrain on one rank.
# Then the README's commands run as written. (lessons/CMakeLists.txt dt_lesson_dtrains)
dt_lesson_dtrains(12 FILES one_f_one_b.c SOURCES in_dtrain.c WRAP dt_pipe_build)
