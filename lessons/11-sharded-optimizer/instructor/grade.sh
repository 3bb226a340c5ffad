#!/usr/bin/env bash
# instructor/grade.sh — lesson 11's instructor-only cases (lessons/grade 11 --instructor;
# kept beside solution/, so the handout has neither): what the public grade.sh never runs —
# P = 5 and 7 under mpirun (public: 1..4) and P = 24 under smpirun (public: 16), with a
# ResNet-8 of 5 classes, whose n_trainable (77,717 = 23·31·109) is odd, so that no P here divides it
# and the shards' sizes differ (public: 78,042, even, divisible by 2 and 3); the simulated
# time at 24 ranks against the closed form too. One line per check over the runs
# (lessons/kit/runs.sh); run_grader.sh names them instructor.<check>.
set -u
. "$LESSON_DIR/../kit/runs.sh"
RUNS_ARGS="resnet8 5" LESSON_RUN_TIMEOUT=${LESSON_RUN_TIMEOUT:-60} \
  runs_mpi_smpi "5 7" 24 simulated_time_within_5pc_of_closed_form \
    --cfg=network/model:CM02 --cfg=network/crosstraffic:0 --cfg=smpi/test:0 \
    --cfg=smpi/send-is-detached-thresh:0
