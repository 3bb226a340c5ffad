#!/usr/bin/env bash
# grade.sh — lesson 04's driver (lessons/kit/run_grader.sh runs it; lessons/grade 04 runs that).
# The grader under mpirun for P = 1..7 (the counts, blocking and nonblocking, against
# MPI_Allreduce and dtlab's ring), then under smpirun at 64 and 256 simulated ranks (one
# allreduce of 1 MiB - 4 B: a count that P does not divide, as real buckets are) on the
# uncontended flat platform of tests/coll, with the flags of its timing tests (CM02: latency
# + size / bandwidth; no TCP cross-traffic; no time injected into MPI_Test; sends never
# detached): α = 2 × 1 µs (two links), β = 1 / 1.25 GB/s. One seed for every run
# (DT_LESSON_SEED replays). Prints one line per check, over all runs: PASS with the runs it
# passed in, or the first FAIL with the runs it failed in. Exit 0: every check passed;
# 1: some failed; a run that crashed or hung: its status (run_grader.sh says which).
set -u
: "${LESSON_GRADER:?}" "${LESSON_GRADER_SMPI:?}" "${MPIRUN:?}" "${SMPIRUN:?}" "${DT_SOURCE:?}"
seed=${DT_LESSON_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
export DT_LESSON_SEED=$seed
echo "# lesson 04 (ring allreduce), seed $seed (replay: DT_LESSON_SEED=$seed lessons/grade 04)"
W=$(mktemp -d "${TMPDIR:-/tmp}/lesson04_XXXXXX")
trap 'rm -rf "$W"' EXIT
BYTES=1048572
status=0
# launch LABEL LIMIT COMMAND...: one run, its output in $W/LABEL.out, its status in $W/LABEL.rc
launch() {
  label=$1 limit=$2
  shift 2
  timeout -k 5 "$limit" "$@" >"$W/$label.out" 2>&1
  echo $? >"$W/$label.rc"
}
# collect LABEL: its check lines into $W/all, prefixed with LABEL; a crash or a hang said
collect() {
  label=$1 rc=$(cat "$W/$1.rc" 2>/dev/null || echo 2)
  sed -n "s/^\(PASS\|FAIL\) /$label \1 /p" "$W/$label.out" >>"$W/all"
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "# $label: no result in time: the run hangs (a receive that no send ever meets?)"
    status=$rc
  elif [ "$rc" -gt 1 ]; then
    echo "# $label: the grader exited with status $rc (a crash?); its last lines:"
    grep -v '^\(PASS\|FAIL\|#\)' "$W/$label.out" | tail -n 8 | sed 's/^/#   /'
    status=$rc
  fi
}
for i in $(seq 0 255); do echo "node-$i"; done >"$W/hosts"
# the simulated runs in the background (the 256-rank ring is most of the grading time),
# the real ones meanwhile
(for P in 64 256; do
   launch "P=$P" 60 "$SMPIRUN" -platform "$DT_SOURCE/tests/coll/flat1024.xml" \
       -hostfile "$W/hosts" -no-privatize --cfg=smpi/simulate-computation:no \
       --cfg=network/model:CM02 --cfg=network/crosstraffic:0 --cfg=smpi/test:0 \
       --cfg=smpi/send-is-detached-thresh:0 --log=root.thres:warning \
       -np $P "$LESSON_GRADER_SMPI" --timing $BYTES --alpha 2e-6 --beta 8e-10
 done) &
for P in 1 2 3 4 5 6 7; do
  launch "P=$P" 30 "$MPIRUN" -np $P --oversubscribe "$LESSON_GRADER"
done
wait
: >"$W/all"
for P in 1 2 3 4 5 6 7 64 256; do collect "P=$P"; done
# one line per check, in the order the checks first appear
awk '{ label = $1; verdict = $2; name = $3; sub(/:$/, "", name)
       if (!(name in seen)) { seen[name] = 1; order[++n] = name }
       if (verdict == "FAIL") {
         if (!(name in fail)) { line = $0; sub(/^[^ ]+ /, "", line); fail[name] = line }
         failed_in[name] = failed_in[name] (nf[name]++ ? "," : "") substr(label, 3)
       } else {
         passed_in[name] = passed_in[name] (np[name]++ ? "," : "") substr(label, 3)
         line = $0; sub(/^[^ ]+ [^ ]+ [^ ]+ /, "", line); last[name] = line
       } }
     END { bad = 0
       for (i = 1; i <= n; i++) {
         k = order[i]
         if (k in fail) { bad = 1; print fail[k] (nf[k] > 1 ? " [fails at P=" failed_in[k] "]" : "") }
         else print "PASS " k " [P=" passed_in[k] "] " last[k]
       }
       exit bad }' "$W/all"
bad=$?
[ -s "$W/all" ] || { echo "# no check ran"; [ "$status" -ne 0 ] || status=2; }
[ "$status" -ne 0 ] && exit "$status"
exit $bad
