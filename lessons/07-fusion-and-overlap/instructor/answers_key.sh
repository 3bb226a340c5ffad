#!/usr/bin/env bash
# answers_key.sh PROGRAMS_DIR — lesson 07's answer key (kit/answers.py): computed with the
# student's own planner inside dtsim (PROGRAMS_DIR/dtsim_rank.so, dtsim_planner.c), ResNet-50
# on 256 GPUs of the lesson's cluster (one EDR NIC per node, fp32): the last bucket of --fusion segments:2 (where the cut falls),
# and the exposed communication of --fusion 25MB (PyTorch DDP's default bucket).
set -u
so="$1/dtsim_rank.so" B=${DT_BUILD:-build}
[ -f "$so" ] && [ -x "$B/dtsim" ] || { echo "$so or $B/dtsim is not built (lessons/grade 07)" >&2; exit 2; }
# the lesson's cluster: one EDR NIC per node, fp32 on the roofline (README, "The experiment")
run() { DTSIM_RANK_SO="$so" "$B/dtsim" --gpus 256 --nics 1 --precision fp32 --calib none --iters 1 --json --quiet --fusion "$1" 2>&1; }
# why dtsim gave no plan: the planner's own complaint (dtsim_planner.c), else how dtsim ended
# (a planner that crashed: the signal or the failed assertion, and dtsim's last word)
no_plan_why() {
  local w
  w=$(echo "$1" | grep -o -m1 'lesson 07: your.*')
  [ -z "$w" ] && w=$(echo "$1" | grep -E 'Segmentation fault|Aborted|double free|free\(\)|corrupted|[Aa]ssert|Floating point|signal|^dtsim: ' |
                     sed 's/\.$//' | awk '!seen[$0]++' | head -n 3 | paste -sd ';' | sed 's/;/; /g')
  [ -z "$w" ] && w=$(echo "$1" | grep -v '^\s*$' | tail -n 1)
  echo "${w:-dtsim printed nothing}"
}
out=$(run segments:2)
mb=$(echo "$out" | sed -n 's/.*lesson 07: your plan_segments cut .*(MB, events): [0-9.]* ([0-9.]*) \([0-9.]*\) .*/\1/p' | head -1)
if [ -n "$mb" ]; then
  printf 'segments2_last_bucket_mb\t%s\t1%%\tthe last of the 2 buckets your plan_segments makes of ResNet-50 (DTSIM_RANK_SO=%s dtsim --gpus 256 --nics 1 --precision fp32 --calib none --fusion segments:2 prints the cut), in MB\n' "$mb" "$so"
else
  printf 'segments2_last_bucket_mb\tNA\t-\tyour plan_segments gave no plan in dtsim (%s)\n' "$(no_plan_why "$out")"
fi
out=$(run 25MB)
ms=$(echo "$out" | sed -n 's/.*"exposed_s": *\([-0-9.e+]*\).*/\1/p' | head -1)
if [ -n "$ms" ]; then
  printf 'fusion_25mb_exposed_ms\t%s\t2%%\tthe exposed ms of --fusion 25MB at 256 GPUs with your plan_bytes (DTSIM_RANK_SO=%s dtsim --gpus 256 --nics 1 --precision fp32 --calib none --fusion 25MB)\n' "$(awk -v s="$ms" 'BEGIN{printf "%.4f", 1e3*s}')" "$so"
else
  printf 'fusion_25mb_exposed_ms\tNA\t-\tyour plan_bytes gave no plan in dtsim (%s)\n' "$(no_plan_why "$out")"
fi
