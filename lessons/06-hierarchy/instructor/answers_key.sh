#!/usr/bin/env bash
# answers_key.sh PROGRAMS_DIR — lesson 06's answer key (kit/answers.py): the first GPU count
# of the README's sweep (64, 128, 256, 512, 1024) where hier's simulated iteration is
# shorter than the ring's (the lesson's cluster, ResNet-50, 32 images per GPU; simulated
# count by count, stopping at the first where hier wins: a few seconds), and the binomial
# reduce and broadcast of one 50 MB bucket over NVLink at 25 GB/s, 3 steps each way.
set -u
B=${DT_BUILD:-build}
# the lesson's cluster: one EDR NIC per node, fp32 on the roofline (the 2017 records' regime)
iter() { "$B/dtsim" --gpus "$1" --algo "$2" --nics 1 --precision fp32 --calib none --iters 1 --json --quiet 2>/dev/null |
         sed -n 's/.*"iter_s": *\([-0-9.e+]*\).*/\1/p'; }
at=""
for g in 64 128 256 512 1024; do
  r=$(iter $g ring) h=$(iter $g hier)
  [ -n "$r" ] && [ -n "$h" ] || { echo "dtsim gave no iteration at $g GPUs (is $B/dtsim built?)" >&2; exit 2; }
  if awk -v r="$r" -v h="$h" 'BEGIN { exit !(h < r) }'; then at=$g; break; fi
done
printf 'hier_overtakes_ring_at_gpus\t%s\t0\tdtsim --algo ring and --algo hier --nics 1 --precision fp32 --calib none at 64, 128, ... GPUs: the first count where hier'"'"'s iteration is shorter\n' "${at:-NA}"
awk 'BEGIN { printf "reduce_bcast_ms_50mb\t%.6g\t2%%\t3 steps each way of 50 MB at 25 GB/s: 2 × 3 × 50e6 / 25e9 s, in ms\n", 2 * 3 * 50e6 / 25e9 * 1e3 }'
