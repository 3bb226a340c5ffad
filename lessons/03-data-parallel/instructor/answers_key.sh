#!/usr/bin/env bash
# answers_key.sh PROGRAMS_DIR — lesson 03's answer key (kit/answers.py): Goyal et al.'s
# warm-up in steps (5 epochs of ImageNet's 1,281,167 images at batch 8192), and how much
# faster an epoch runs on 64 simulated V100s than on 8 (dtsim, ResNet-50, ring, 32 images
# per GPU: images/s at 64 over images/s at 8; two simulations of about a second), and one
# step's communication at P = 64 (the grade's performance target: the closed form of a ring
# allreduce of ResNet-8's gradient on the grade's network).
set -u
B=${DT_BUILD:-build}
awk 'BEGIN { printf "warmup_steps_goyal\t%.6g\t+-4\t5 epochs × 1,281,167 images / 8192 per step\n", 5 * 1281167 / 8192 }'
awk 'BEGIN { p = 64; n = 78042 * 4; a = 2e-6; b = 8e-10
             printf "step_comm_us_p64\t%.6g\t2%%\tthe ring allreduce of ResNet-8%ss gradient (78,042 floats) at P = 64: 2(P-1)α + 2(P-1)/P·nβ, α = 2 µs, β = 0.8 ns/B\n", 1e6 * (2 * (p - 1) * a + 2 * (p - 1) / p * n * b), "\047" }'
ips() { "$B/dtsim" --gpus "$1" --algo ring --per-gpu-batch 32 --iters 1 --json --quiet 2>/dev/null |
        sed -n 's/.*"images_per_s": *\([-0-9.e+]*\).*/\1/p'; }
a=$(ips 8) b=$(ips 64)
[ -n "$a" ] && [ -n "$b" ] || { echo "dtsim gave no images/s (is $B/dtsim built?)" >&2; exit 2; }
awk -v a="$a" -v b="$b" 'BEGIN { printf "epoch_speedup_8_to_64\t%.6g\t2%%\tdtsim --algo ring --per-gpu-batch 32: images/s at 64 GPUs over images/s at 8\n", b / a }'
