#!/usr/bin/env bash
# grade.sh — lesson 03's driver (run by lessons/kit/run_grader.sh): the grader under mpirun
# at P = 1, 2, 3, 4 (odd P too) and under SMPI (smpirun -no-privatize, P = 8 ranks in one
# process, on tests/coll/flat1024.xml), all with one seed. The SMPI run also times one step
# (the performance target, grader.c's check_time): CM02 (latency + size / bandwidth, no
# cross-traffic: α = 2 µs, β = 1 / 1.25 GB/s, as lessons 04 and 11) with SMPI's
# MPI_Allreduce pinned to its ring (smpi/allreduce:lr), whose cost is the closed form
# 2(P-1)α + 2(P-1)/P·nβ. Every run is under `timeout`: a
# collective that some ranks never enter would hang, and must fail instead. One line per
# check over the runs, a crash or a hang at any P shown and counted (lessons/kit/runs.sh).
# The grader is split (subject03.h): each run is first the student's file in a recording
# run of its own (subject_mpi under mpirun, subject_smpi.so under smpirun: as nobody when
# the grade runs as root, its environment empty, its output in a log), then the grader,
# which reads back what the student's calls returned and prints the verdicts (split03.sh).
# Env: LESSON_GRADER, LESSON_GRADER_SMPI, LESSON_SUBJECT_MPI, MPIRUN, SMPIRUN, DT_SOURCE
# (run_grader.sh).
# Exit: 0 every check passed; 1 a check failed; 124 a run hung; 3 a run crashed.
set -u
. "$LESSON_DIR/../kit/runs.sh"
. "$LESSON_DIR/../kit/split.sh"
. "$LESSON_DIR/split03.sh"
split03_runs "1 2 3 4" 8 smpi_p_ranks_match_one_process_with_batch_pb \
    --cfg=network/model:CM02 --cfg=network/crosstraffic:0 --cfg=smpi/test:0 \
    --cfg=smpi/send-is-detached-thresh:0 --cfg=smpi/allreduce:lr
