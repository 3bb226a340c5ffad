#!/usr/bin/env bash
# grade.sh — lesson 05's driver (run by lessons/kit/run_grader.sh, which sets
# LESSON_GRADER, LESSON_GRADER_SMPI, MPIRUN, SMPIRUN, DT_SOURCE): the grader under mpirun for
# P = 1..8 (non-powers of two are the point), then under smpirun on the flat 1024-host
# platform of tests/coll at P = 64 and P = 96, where it also times one allreduce of 4 MiB
# against the closed form, and at P = 64 and 256 against the ring at 64 KiB (the
# performance target). One seed for every run (DT_LESSON_SEED replays them all). One line
# per check over all runs (lessons/kit/runs.sh): PASS with the runs it passed in, or the
# first FAIL with the runs it failed in. A run that crashes or hangs (cut at
# LESSON_RUN_TIMEOUT seconds, 30 by default) is reported as such, with what it printed, and
# the score says so; after a hang the other runs are left out (a healthy run takes a
# second or two). Exit 0: every check passed; 1: some failed; 3 or 124: a run crashed or hung.
# The grader is split (lessons/kit/subject.h): each run's grader starts its own subject
# (LESSON_SUBJECT: student_rhd.c in a process of its own), whose output goes to the run's
# log (kit/split.sh's split_log), shown only when the subject crashes or hangs.
set -u
: "${LESSON_GRADER:?}" "${LESSON_GRADER_SMPI:?}" "${MPIRUN:?}" "${SMPIRUN:?}" "${DT_SOURCE:?}"
export DT_LESSON_SEED=${DT_LESSON_SEED:-$(date +%s)$((RANDOM % 1000))}
. "$LESSON_DIR/../kit/runs.sh"        # run_launch, runs_report
. "$LESSON_DIR/../kit/runs_smpi.sh"    # SMPI_TIMING, runs_next: no run after a hang
. "$LESSON_DIR/../kit/split.sh"        # split_log: the student's code in a process of its own
# split_next LABEL LIMIT CMD...: runs_next with the run's own subject log in its environment
# rather than on its command line, so that the runs of one kind keep one command (runs.sh's
# runs_kind: a check that a crashed run never reached, where a run of its kind did, is no PASS)
split_next() { LESSON_SUBJECT_LOG=$(split_log "$1") runs_next "$@"; }
runs_begin
RUNS_HANG_HINT="an endless loop in student_rhd (a mask that never reaches its bound?), or ranks waiting for each other"
limit=${LESSON_RUN_TIMEOUT:-30}
for np in 1 2 3 4 5 6 7 8; do
  split_next "P=$np" "$limit" "$MPIRUN" --quiet -np "$np" --oversubscribe "$LESSON_GRADER" \
      --large 100003
done

for i in $(seq 0 1023); do echo "node-$i"; done > "$RUNS_W/hosts"
# SMPI_TIMING (kit/runs_smpi.sh): α = 2 µs (two links), β = 0.8 ns/B on flat1024.xml
# (P = 64, a power of two, is timed only: mpirun's P = 1, 2, 4, 8 checked those sums; P = 96
# checks the sums too, with 32 ranks folding in and out). The performance target: at P = 64
# and 256, 64 KiB (below n*: README, "Experiment") against the ring and the closed form.
for case in "64 --no-data --timing 4194304 --versus-ring 65536" \
            "96 --large 20011 --timing 4194304" "256 --no-data --versus-ring 65536"; do
  set -- $case
  np=$1; shift
  split_next "P=$np" "$limit" "$SMPIRUN" -platform "$DT_SOURCE/tests/coll/flat1024.xml" \
      -hostfile "$RUNS_W/hosts" -no-privatize "${SMPI_TIMING[@]}" \
      -np "$np" "$LESSON_GRADER_SMPI" "$@" --alpha 2e-6 --beta 8e-10
done
runs_report "${RUNS_LABELS[@]}"
