#!/usr/bin/env bash
# instructor/grade.sh — lesson 03's instructor-only cases (lessons/grade 03 --instructor;
# kept beside solution/, so the handout has neither): rank counts the public grade.sh never
# runs — P = 5 and 6 under mpirun (public: 1..4; 5 is prime, so a shard or an average that
# only works for P dividing 4 or 12 shows) and P = 16 under smpirun on tests/coll/flat1024.xml
# (public: 8), every rank in one process, with the step's simulated time too (grade.sh's
# network flags); and P = 6 split into 2 data-parallel groups of 3 (grader --groups 2: world
# rank w in group w % 2, each group's own data and weights), where the student's functions
# get the group's communicator, not MPI_COMM_WORLD (public: comm is always the world, so a
# broadcast or an average on MPI_COMM_WORLD passes there). One line per check over the runs
# (lessons/kit/runs.sh); run_grader.sh names them instructor.<check>. Each run recorded,
# then judged, as in grade.sh (split03.sh).
set -u
. "$LESSON_DIR/../kit/runs.sh"
. "$LESSON_DIR/../kit/split.sh"
. "$LESSON_DIR/split03.sh"
LESSON_RUN_TIMEOUT=${LESSON_RUN_TIMEOUT:-60} split03_runs "5 6 6:--groups,2" 16 smpi_p_ranks_match_one_process_with_batch_pb \
    --cfg=network/model:CM02 --cfg=network/crosstraffic:0 --cfg=smpi/test:0 \
    --cfg=smpi/send-is-detached-thresh:0 --cfg=smpi/allreduce:lr
