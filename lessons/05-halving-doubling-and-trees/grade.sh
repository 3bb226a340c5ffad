#!/usr/bin/env bash
# grade.sh — lesson 05's driver (run by lessons/kit/run_grader.sh, which sets
# LESSON_GRADER, LESSON_GRADER_SMPI, MPIRUN, SMPIRUN, DT_SOURCE): the grader under mpirun for
# P = 1..8 (non-powers of two are the point), then under smpirun on the flat 1024-host
# platform of tests/coll at P = 64 and P = 96, where it also times one allreduce of 4 MiB
# against the closed form, and at P = 64 and 256 against the ring at 64 KiB (the
# performance target). One seed for every run (DT_LESSON_SEED replays them all). A run
# that crashes or hangs (the runs are cut at LESSON_RUN_TIMEOUT seconds, 60 by default) is
# reported as a FAIL line with a hint instead, and after a hang the other runs are skipped
# (a healthy run takes a few seconds). Exit 0 only when every run passed.
set -u
export DT_LESSON_SEED=${DT_LESSON_SEED:-$(date +%s)$((RANDOM % 1000))}
limit=${LESSON_RUN_TIMEOUT:-30}
status=0 hung=""

# one run: its label, then the command. A run that hangs, crashes or ends before its
# checks (no "# N of M checks passed" line: mpirun refused to start, say) becomes a FAIL
# line with a hint. (smpirun's own "Execution failed" lines, which repeat its command,
# are left out.)
out=$(mktemp)
trap 'rm -f "$out" "${hosts:-}"' EXIT
run() {
  local label=$1; shift
  if [ -n "$hung" ]; then
    echo "FAIL schedule_sends_meet_matching_receives_without_deadlock: $label not run:" \
         "$hung hung"
    return
  fi
  timeout -k 5 "$limit" "$@" 2>&1 | grep -v -e '^Execution failed with code' -e '_smpi.so --cfg=' \
    | tee "$out"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "FAIL schedule_sends_meet_matching_receives_without_deadlock: $label did not finish" \
         "in $limit s: an endless loop in student_rhd (a mask that never reaches its bound?)," \
         "or ranks waiting for each other"
    hung=$label
  elif ! grep -Eq '^# [0-9]+ of [0-9]+ checks passed' "$out"; then
    echo "FAIL schedule_ops_stay_inside_the_range_with_valid_peers: $label ended (exit $rc)" \
         "before its checks did: see the messages above (mpirun could not start? dt_lane_op" \
         "before the first dt_lane_round asserts)"
  fi
  [ "$rc" -eq 0 ] || status=1
}

for np in 1 2 3 4 5 6 7 8; do
  run "mpirun -np $np" "$MPIRUN" --quiet -np "$np" --oversubscribe "$LESSON_GRADER" --large 100003
done

hosts=$(mktemp)
for i in $(seq 0 1023); do echo "node-$i"; done > "$hosts"
# tests/coll/CMakeLists.txt's DT_SMPI_TIMING: CM02 (latency + size/bandwidth), no TCP
# cross-traffic, no time in MPI_Test, no detached sends: α = 2 µs (two links), β = 0.8 ns/B
# (P = 64, a power of two, is timed only: mpirun's P = 1, 2, 4, 8 checked those sums; P = 96
# checks the sums too, with 32 ranks folding in and out). The performance target: at P = 64
# and 256, 64 KiB (below n*: README, "Experiment") against the ring and the closed form.
for case in "64 --no-data --timing 4194304 --versus-ring 65536" \
            "96 --large 20011 --timing 4194304" "256 --no-data --versus-ring 65536"; do
  set -- $case
  np=$1; shift
  run "smpirun -np $np" "$SMPIRUN" -platform "$DT_SOURCE/tests/coll/flat1024.xml" \
      -hostfile "$hosts" -no-privatize --cfg=smpi/simulate-computation:no \
      --cfg=network/model:CM02 --cfg=network/crosstraffic:0 --cfg=smpi/test:0 \
      --cfg=smpi/send-is-detached-thresh:0 --log=root.thres:warning --log=smpi_kernel.thres:error \
      -np "$np" "$LESSON_GRADER_SMPI" "$@" --alpha 2e-6 --beta 8e-10
done
exit $status
