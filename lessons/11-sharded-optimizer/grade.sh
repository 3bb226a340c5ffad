#!/usr/bin/env bash
# grade.sh — lesson 11's driver (run by lessons/kit/run_grader.sh): the grader under mpirun
# at P = 1, 2, 3, 4 (odd P too) and under SMPI (smpirun -no-privatize, P = 16 ranks in one
# process, on tests/coll/flat1024.xml with lesson 04's timing flags (CM02: latency + size /
# bandwidth, no cross-traffic: α = 2 µs, β = 1 / 1.25 GB/s)), all with one seed. Every run is under `timeout`: a
# collective that some ranks never enter would hang, and must fail instead.
# Env: LESSON_GRADER, LESSON_GRADER_SMPI, MPIRUN, SMPIRUN, DT_SOURCE (run_grader.sh).
# Exit: 0 every run passed; 1 a check failed; 124 a run hung; >1 a run crashed.
set -u
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
# one seed for every run (DT_LESSON_SEED=N replays)
export DT_LESSON_SEED=${DT_LESSON_SEED:-$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')}
limit=${LESSON_RUN_TIMEOUT:-40}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
worst=0

# run LABEL COMMAND...: the grader's lines on stdout; the launcher's own notices (a rank
# "returned a non-zero exit code") are shown only when the run crashed or hung. A run that
# did not reach the grader's last line ("# N of M checks passed") did not finish: SimGrid
# reports a deadlock and exits 0, so the exit status alone cannot tell.
run() {
  label=$1; shift
  timeout -k 5 "$limit" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  # smpirun echoes its command line and "Execution failed with code 1." on stdout
  grep -v -e '^Execution failed with code' -e ' --cfg=smpi/privatization:' "$tmp/out"
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "HANG: $label ran past $limit s and was stopped (a collective that not every rank called?)"
    tail -n 5 "$tmp/err"
    worst=124
  elif grep -q 'Deadlock detected' "$tmp/err"; then
    echo "HANG: $label deadlocked: SimGrid found every rank waiting in MPI for a message" \
         "or a collective that no rank will send or join (a collective that not every rank" \
         "called?)"
    worst=124
  elif [ "$rc" -gt 1 ] || ! grep -q '^# [0-9]* of [0-9]* checks passed' "$tmp/out"; then
    echo "CRASH: $label exited with status $rc before the grader's last line:"
    tail -n 15 "$tmp/err"
    [ "$worst" -eq 124 ] || worst=$(( rc > 1 ? rc : 3 ))
  elif [ "$rc" -eq 1 ] && [ "$worst" -eq 0 ]; then
    worst=1
  fi
}

for np in 1 2 3 4; do
  run "mpirun -np $np" "$MPIRUN" -np "$np" --oversubscribe -x OMP_NUM_THREADS \
      -x OPENBLAS_NUM_THREADS -x DT_LESSON_SEED "$LESSON_GRADER"
done

if [ -f "$LESSON_GRADER_SMPI" ] && [ -x "$SMPIRUN" ]; then
  seq 0 15 | sed 's/^/node-/' >"$tmp/hosts"
  run "smpirun -np 16" "$SMPIRUN" -np 16 -platform "$DT_SOURCE/tests/coll/flat1024.xml" \
      -hostfile "$tmp/hosts" -no-privatize --cfg=smpi/simulate-computation:no \
      --cfg=network/model:CM02 --cfg=network/crosstraffic:0 --cfg=smpi/test:0 \
      --cfg=smpi/send-is-detached-thresh:0 \
      --log=root.thres:warning "$LESSON_GRADER_SMPI"
else
  echo "FAIL simulated_time_within_5pc_of_closed_form: the SMPI grader" \
       "($LESSON_GRADER_SMPI) or smpirun ($SMPIRUN) is missing"
  [ "$worst" -ne 0 ] || worst=1
fi
exit "$worst"
