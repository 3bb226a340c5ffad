#!/usr/bin/env bash
# grade.sh — lesson 04's driver (lessons/kit/run_grader.sh runs it; lessons/grade 04 runs that).
# Part 1 (ring_mpi.c): the grader's --raw checks under mpirun for P = 1..4, one after the
# other, each call of the student's ring stopped after LESSON_HANG_S seconds (3 by
# default: the correct ring takes milliseconds) and reported as a HANG that names the
# message size where it stuck (above Open MPI's eager limit, a blocking ring deadlocks).
# Part 2 (ring.c): the grader under mpirun for P = 1..7 (the counts, blocking and nonblocking, against
# MPI_Allreduce and dtlab's ring), then under smpirun at 64 and 256 simulated ranks (one
# allreduce of 1 MiB - 4 B: a count that P does not divide, as real buckets are) on the
# uncontended flat platform of tests/coll, with the flags of its timing tests (CM02: latency
# + size / bandwidth; no TCP cross-traffic; no time injected into MPI_Test; sends never
# detached): α = 2 × 1 µs (two links), β = 1 / 1.25 GB/s. One seed for every run
# (DT_LESSON_SEED replays). Prints one line per check, over all runs: PASS with the runs it
# passed in, or the first FAIL with the runs it failed in (lessons/kit/runs.sh). Exit 0:
# every check passed; 1: some failed; 3 or 124: a run crashed or hung (run_grader.sh says which).
set -u
: "${LESSON_GRADER:?}" "${LESSON_GRADER_SMPI:?}" "${MPIRUN:?}" "${SMPIRUN:?}" "${DT_SOURCE:?}"
seed=${DT_LESSON_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
export DT_LESSON_SEED=$seed
echo "# lesson 04 (ring allreduce), seed $seed (replay: DT_LESSON_SEED=$seed lessons/grade 04)"
. "$LESSON_DIR/../kit/runs.sh"  # run_launch, runs_report: one line per check over the runs
. "$LESSON_DIR/../kit/split.sh"  # split_record, split_log: the student's code in a process of its own
runs_begin
W=$RUNS_W
BYTES=1048572
RUNS_HANG_HINT="a receive that no send ever meets?"
for i in $(seq 0 255); do echo "node-$i"; done >"$W/hosts"
# the simulated runs in the background (the 256-rank ring is most of the grading time),
# the real ones meanwhile; for CI's mutants (runs_stopping, lessons/kit/runs.sh) one after
# the other instead, and none after the run that showed the mutant
smpi_runs() {
  for P in 64 256; do
    [ -z "${RUNS_STOPPED:-}" ] || break
    LESSON_SUBJECT_LOG=$(split_log "P=$P") run_launch "P=$P" 60 "$SMPIRUN" \
        -platform "$DT_SOURCE/tests/coll/flat1024.xml" \
        -hostfile "$W/hosts" -no-privatize --cfg=smpi/simulate-computation:no \
        --cfg=network/model:CM02 --cfg=network/crosstraffic:0 --cfg=smpi/test:0 \
        --cfg=smpi/send-is-detached-thresh:0 --log=root.thres:warning \
        -np $P "$LESSON_GRADER_SMPI" --timing $BYTES --alpha 2e-6 --beta 8e-10
    echo "P=$P" >>"$W/smpi_done"
    runs_stop_at_fail && break
  done
}
: >"$W/smpi_done"
runs_stopping || smpi_runs &
# part 1 one P after the other; after a hang the larger P are left out (they would hang
# the same way: a few seconds each)
labels=()
for P in 1 2 3 4; do
  # ring_mpi.c under mpirun, recording; then the grader judges what it returned
  split_record "raw-P=$P" "${LESSON_RUN_TIMEOUT:-30}" $P --raw "${LESSON_HANG_S:-3}" --seed "$seed"
  # (its records and log in the environment, not on the command line: runs.sh tells runs of
  # one kind by their commands)
  (export "${SPLIT_ENV[@]}"
   run_launch "raw-P=$P" "${LESSON_RUN_TIMEOUT:-30}" "$MPIRUN" -np $P --oversubscribe \
       "$LESSON_GRADER" --raw "${LESSON_HANG_S:-3}")
  labels+=("raw-P=$P")
  [ "$(cat "$W/raw-P=$P.rc")" != 124 ] || { echo "# part 1 hung at P=$P: P > $P left out"; break; }
  runs_stop_at_fail && break
done
for P in 1 2 3 4 5 6 7; do
  [ -z "${RUNS_STOPPED:-}" ] || break
  LESSON_SUBJECT_LOG=$(split_log "P=$P") run_launch "P=$P" "${LESSON_RUN_TIMEOUT:-30}" \
      "$MPIRUN" -np $P --oversubscribe "$LESSON_GRADER"
  labels+=("P=$P")
  runs_stop_at_fail && break
done
! runs_stopping || smpi_runs
wait
while read -r label; do labels+=("$label"); done <"$W/smpi_done"
runs_report "${labels[@]}"
