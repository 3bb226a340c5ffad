#!/usr/bin/env bash
# grade.sh — lesson 11's driver (run by lessons/kit/run_grader.sh): the grader under mpirun
# at P = 1, 2, 3, 4 (odd P too) and under SMPI (smpirun -no-privatize, P = 16 ranks in one
# process, on tests/coll/flat1024.xml with lesson 04's timing flags (CM02: latency + size /
# bandwidth, no cross-traffic: α = 2 µs, β = 1 / 1.25 GB/s)), all with one seed. Every run
# is under `timeout`: a collective that some ranks never enter would hang, and must fail
# instead. One line per check over the runs, a crash or a hang at any P shown and counted
# (lessons/kit/runs.sh). Then the student's step in the real system: dtrain_check.sh trains
# with the variant's dtrain (--shard-optimizer on sharded_step, in_dtrain.c) under mpirun
# -np 2 against the library's dtrain, loss and weights bit for bit.
# Env: LESSON_GRADER, LESSON_GRADER_SMPI, MPIRUN, SMPIRUN, DT_SOURCE (run_grader.sh).
# Exit: 0 every check passed; 1 a check failed; 124 a run hung; 3 a run crashed.
set -u
. "$LESSON_DIR/../kit/runs.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
runs_mpi_smpi "1 2 3 4" 16 simulated_time_within_5pc_of_closed_form \
    --cfg=network/model:CM02 --cfg=network/crosstraffic:0 --cfg=smpi/test:0 \
    --cfg=smpi/send-is-detached-thresh:0 | tee "$out"
rc=${PIPESTATUS[0]}
if [ -n "${LESSON_STOP_AT_FAIL:-}" ] && grep -q "^FAIL $LESSON_STOP_AT_FAIL\b" "$out"; then
  echo "# $LESSON_STOP_AT_FAIL failed: the dtrain run is skipped (LESSON_STOP_AT_FAIL)"
  exit "$rc"
fi
runs_begin
trap 'rm -rf "$out" "$RUNS_W"' EXIT
run_launch "dtrain P=2" "${LESSON_RUN_TIMEOUT:-120}" bash "$LESSON_DIR/dtrain_check.sh" \
    "$(dirname "$LESSON_GRADER")/dtrain" "$DT_BUILD/dtrain" "$DT_BUILD/tests/mpi/st_compare"
runs_report "dtrain P=2"
rc2=$?
# the worse of the two: a hang, a crash, a failed check
for v in 124 3 1; do
  if [ "$rc" -eq "$v" ] || [ "$rc2" -eq "$v" ]; then exit "$v"; fi
done
exit 0
