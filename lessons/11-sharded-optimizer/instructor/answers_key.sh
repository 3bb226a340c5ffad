#!/usr/bin/env bash
# answers_key.sh PROGRAMS_DIR — lesson 11's answer key (kit/answers.py grades answers.txt
# against it), computed with dtlab's tools: the optimizer state dtrain --shard-optimizer
# allocates at P = 3 (the library's dtrain, the README's model; one step, under a second);
# ResNet-50's parameters (dtsim --analytic) and rank 0's shard of them at P = 8 (the ring's
# chunk 0, dt_shard_lo: floor(n/8)); the simulated communication of one ring allreduce of
# the whole gradient, which the sharded step's two halves send, at 16 and 256 GPUs (dtsim,
# one bucket, no overlap: two simulations of under a second); ZeRO's stage-1 model states,
# (2 + 2 + 12/Nd)·Ψ bytes (Rajbhandari et al. 2020, §5.1 and Figure 1; docs/formulas.md).
set -u
B=${DT_BUILD:-build}
M=${MPIRUN:-mpirun}
b=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$M" -np 3 --oversubscribe \
      "$B/dtrain" --data synthetic --image-size 16 --classes 4 --model resnet8 --batch 12 \
      --synthetic-examples 12 --max-steps 1 --eval-every 0 --shard-optimizer --json --quiet \
      2>/dev/null | sed -n 's/.*"optimizer_state_bytes": *\([0-9]*\).*/\1/p')
[ -n "$b" ] || { echo "dtrain gave no optimizer_state_bytes (is $B/dtrain built? mpirun $M?)" >&2; exit 2; }
printf 'optimizer_state_bytes_resnet8_p3\t%s\t0\tdtrain --shard-optimizer at mpirun -np 3, the README'"'"'s resnet8 --classes 4: its optimizer_state_bytes\n' "$b"
n=$("$B/dtsim" --gpus 8 --analytic --json 2>/dev/null | sed -n 's/.*"params": *\([0-9]*\).*/\1/p')
[ -n "$n" ] || { echo "dtsim --analytic gave no parameter count (is $B/dtsim built?)" >&2; exit 2; }
awk -v n="$n" 'BEGIN { printf "momentum_mb_rank0_resnet50_p8\t%.6g\t1%%\tResNet-50'"'"'s parameters (dtsim) / 8, the ring'"'"'s chunk 0 (dt_shard_lo), × 4 bytes, in MB\n", int(n / 8) * 4 / 1e6 }'
comm() { "$B/dtsim" --gpus "$1" --nics 1 --precision fp32 --calib none --algo ring --fusion 1GB --no-overlap --per-gpu-batch 32 --iters 1 \
           --json --quiet 2>/dev/null | sed -n 's/.*"comm_s": *\([-0-9.e+]*\).*/\1/p'; }
c16=$(comm 16) c256=$(comm 256)
[ -n "$c16" ] && [ -n "$c256" ] || { echo "dtsim gave no comm_s (is $B/dtsim built?)" >&2; exit 2; }
awk -v a="$c16" -v b="$c256" 'BEGIN {
  printf "sharded_comm_ms_resnet50_256gpus\t%.6g\t2%%\tdtsim --gpus 256 --nics 1 --precision fp32 --calib none --algo ring --fusion 1GB --no-overlap: comm_s, in ms\n", b * 1e3
  printf "sharded_comm_ratio_256_over_16\t%.6g\t2%%\tdtsim --nics 1 --precision fp32 --calib none --algo ring --fusion 1GB --no-overlap: comm_s at 256 GPUs over at 16\n", b / a }'
awk 'BEGIN { printf "zero1_gb_per_gpu_7_5b_nd64\t%.6g\t1%%\t(2 + 2 + 12/Nd)·Ψ bytes at Ψ = 7.5e9, Nd = 64 (parameters and gradients in fp16, the optimizer state sharded), in GB\n", (4 + 12 / 64) * 7.5 }'
