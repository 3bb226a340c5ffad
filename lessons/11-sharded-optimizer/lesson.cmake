# lesson 11 — sharded optimizer state (ZeRO stage 1): the step on the ring's two halves
# (sharded.c), graded under mpirun at P = 1..4 and under smpirun at P = 16 (grade.sh).
# The grader is split (lessons/kit/subject.h): remote11.c stands in for sharded.c; the
# student's file runs in build/lessons/11/<variant>/subject (subject11.c) on a mirror of the
# grader's net, reaching the grader's device and collectives only by asking it.
dt_lesson(11 SOURCES sharded.c GRADER grader.c JUDGE remote11.c SUBJECT subject11.c MPI SMPI)
dt_lesson_answers_needs(11 dtrain dtsim)  # the answer sheet's key runs them (instructor/answers_key.sh)

# The student's step inside the real system: every variant's dtrain
# (build/lessons/11/<variant>/dtrain) is dtrain linked with the variant's sharded.c and
# in_dtrain.c, which wraps the library's two halves of the sharded step (nn/train_shard.c's
# finish and update, referenced from the strategies' registry nn/train_strategy.c in the
# static dtnn), so that `--shard-optimizer` runs sharded_step. grade.sh trains with it under
# mpirun -np 2 against the library's dtrain. Then the README's commands run as written
# (~15 s). (lessons/CMakeLists.txt dt_lesson_dtrains)
dt_lesson_dtrains(11 FILES sharded.c SOURCES in_dtrain.c
                  WRAP dt_shard_optimizer_finish dt_shard_optimizer_update)
