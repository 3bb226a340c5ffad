#!/usr/bin/env bash
# dtsim_check.sh RANK_SO DTSIM — lesson 07's planner inside dtsim (grade.sh runs it): ResNet-50
# on 256 simulated GPUs (the lesson's cluster: 32 nodes of 8 V100 on NVLink, one 12.5 GB/s
# NIC each, a fat tree, hier allreduce; 32 images per GPU), one iteration after the warm-up
# step that measures when each gradient is ready. The rank program RANK_SO runs the
# student's plan_segments / plan_bytes (dtsim_planner.c), DTSIM without it dtlab's planner,
# on the same flags; simulated time is the same bits on every machine, so are the verdicts.
#   segments_exposed_in_dtsim_within_5pc_of_the_optimum  --fusion segments:2 and :4: the
#       exposed communication (what backward does not hide) at most 5 % above that of
#       dtlab's DP, the optimum of the one-channel model; how far above or below is printed
#   threshold_plan_in_dtsim_simulates_like_horovods  --fusion 64MB and 25MB: the threshold
#       rule has one answer, so the same buckets and the same exposed time as dtlab's
# Prints one line per check; exit 0 when both passed, 1 otherwise.
# The instructor's cases (instructor/grade.sh) run it on another cluster and other plans:
# DTSIM_CHECK_GPUS (256), DTSIM_CHECK_SEGMENTS ("2 4"), DTSIM_CHECK_THRESHOLDS ("64MB 25MB"),
# and DTSIM_CHECK_LIMIT, the seconds a run may take (120).
set -u
so=${1:?usage: dtsim_check.sh RANK_SO DTSIM} dtsim=${2:?usage: dtsim_check.sh RANK_SO DTSIM}
W=$(mktemp -d "${TMPDIR:-/tmp}/lesson07_dtsim_XXXXXX")
trap 'rm -rf "$W"' EXIT
MARGIN=5  # per cent above the optimum's exposed time that still gets full marks
GPUS=${DTSIM_CHECK_GPUS:-256} LIMIT=${DTSIM_CHECK_LIMIT:-120}
FLAGS="--gpus $GPUS --nics 1 --precision fp32 --calib none --iters 1 --json --quiet"  # the lesson's cluster (README)
num() { sed -n "s/.*\"$1\": *\([-0-9.e+]*\).*/\1/p" "$2" | head -1; }

# sim NAME FUSION [RANK_SO]: one run into $W/NAME.json (stderr: $W/NAME.err); status 0 if
# it gave a result
sim() {
  local name=$1 fusion=$2
  if [ -n "${3:-}" ]; then
    DTSIM_RANK_SO=$3 timeout -k 5 "$LIMIT" "$dtsim" $FLAGS --fusion "$fusion" >"$W/$name.json" 2>"$W/$name.err"
  else
    env -u DTSIM_RANK_SO timeout -k 5 "$LIMIT" "$dtsim" $FLAGS --fusion "$fusion" >"$W/$name.json" 2>"$W/$name.err"
  fi
  echo $? >"$W/$name.rc"
  [ -n "$(num exposed_s "$W/$name.json")" ]
}
# why a run of the student's planner gave no result: the planner's own line, else the end
why() {
  local line
  line=$(grep -o -m1 'lesson 07: your.*' "$W/$1.err")
  [ -n "$line" ] || [ "$(cat "$W/$1.rc" 2>/dev/null)" != 124 ] ||
    line="no result in $LIMIT s (timed out; the DP takes O(K m^2): does your planner try every split?)"
  [ -n "$line" ] || line=$(grep -v '^\s*$' "$W/$1.err" | tail -3 | tr '\n' ' ')
  echo "${line:-no output (exit status only)}"
}
cut_of() { grep -m1 "^lesson 07: your $2 cut" "$W/$1.err" | sed 's/.*(MB, events): //'; }

if [ ! -f "$so" ] || [ ! -x "$dtsim" ]; then
  echo "FAIL segments_exposed_in_dtsim_within_5pc_of_the_optimum: $so or $dtsim is not built (lessons/grade 07 builds both)"
  echo "FAIL threshold_plan_in_dtsim_simulates_like_horovods: not run (the same)"
  exit 1
fi
status=0
ok=1 detail=""
for k in ${DTSIM_CHECK_SEGMENTS:-2 4}; do
  if ! sim lib_s$k segments:$k; then
    echo "# dtlab's own run failed: $(why lib_s$k)"; exit 2
  fi
  if ! sim you_s$k segments:$k "$so"; then
    ok=0 detail="--fusion segments:$k at $GPUS GPUs: your plan_segments gave no simulation: $(why you_s$k)"
    break
  fi
  a=$(num exposed_s "$W/you_s$k.json") b=$(num exposed_s "$W/lib_s$k.json")
  line=$(awk -v a="$a" -v b="$b" -v m=$MARGIN -v k=$k 'BEGIN {
    d = b > 0 ? 100 * (a - b) / b : 0
    printf "%s K=%d: %.2f ms exposed, the optimum (dtlab'"'"'s DP) %.2f ms: %.1f %% %s",
           (a <= b * (1 + m / 100) + 1e-9) ? "ok" : "over", k, 1e3 * a, 1e3 * b,
           d < 0 ? -d : d, d < 0 ? "below" : "above" }')
  case "$line" in over*) ok=0 ;; esac
  detail="$detail${detail:+; }${line#* }"
  if [ "$ok" = 0 ]; then
    detail="$detail (more than $MARGIN %; your cut in MB: $(cut_of you_s$k plan_segments)) — does your DP charge each bucket max(its ready time, the previous finish) + its cost?"
    break
  fi
done
if [ "$ok" = 1 ]; then
  echo "PASS segments_exposed_in_dtsim_within_5pc_of_the_optimum $detail (full marks within $MARGIN %)"
else
  echo "FAIL segments_exposed_in_dtsim_within_5pc_of_the_optimum: $detail"; status=1
fi

ok=1 detail=""
for t in ${DTSIM_CHECK_THRESHOLDS:-64MB 25MB}; do
  if ! sim lib_$t $t; then
    echo "# dtlab's own run failed: $(why lib_$t)"; exit 2
  fi
  if ! sim you_$t $t "$so"; then
    ok=0 detail="--fusion $t at $GPUS GPUs: your plan_bytes gave no simulation: $(why you_$t)"
    break
  fi
  a=$(num exposed_s "$W/you_$t.json") b=$(num exposed_s "$W/lib_$t.json")
  na=$(num buckets "$W/you_$t.json") nb=$(num buckets "$W/lib_$t.json")
  if [ "$a" != "$b" ] || [ "$na" != "$nb" ]; then
    ok=0
    detail="--fusion $t: your $na buckets (MB: $(cut_of you_$t plan_bytes)) leave $(awk -v a="$a" 'BEGIN{printf "%.2f", 1e3*a}') ms exposed; the threshold rule gives $nb, $(awk -v b="$b" 'BEGIN{printf "%.2f", 1e3*b}') ms — are the bytes counted as (hi - lo) * elem_bytes?"
    break
  fi
  detail="$detail${detail:+; }$t: $na buckets, $(awk -v a="$a" 'BEGIN{printf "%.2f", 1e3*a}') ms exposed"
done
if [ "$ok" = 1 ]; then
  echo "PASS threshold_plan_in_dtsim_simulates_like_horovods $detail, as dtlab's"
else
  echo "FAIL threshold_plan_in_dtsim_simulates_like_horovods: $detail"; status=1
fi
exit $status
