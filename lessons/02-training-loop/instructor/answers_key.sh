#!/usr/bin/env bash
# answers_key.sh PROGRAMS_DIR — lesson 02's answer key (kit/answers.py), the closed forms of
# the README's questions 3 and 5 (the experiment's lr 0.05, λ = 5e-4, 468 steps, μ = 0.9):
# what weight decay alone leaves of a weight after the epoch, w·(1 - lr·λ)^468 (SGD's
# update with g = 0: w ← w - lr·λ·w), and after how many steps a gradient's term in the
# momentum buffer b ← μ·b + g weighs less than 1 % (μ^k < 0.01).
set -u
awk 'BEGIN { printf "decay_left_after_epoch\t%.6g\t+-0.0005\t(1 - lr·λ)^468, lr = 0.05, λ = 5e-4 (w ← w - lr·λ·w, 468 times)\n", (1 - 0.05 * 5e-4) ^ 468 }'
awk 'BEGIN { k = 0; w = 1; while (w >= 0.01) { w *= 0.9; k++ }
             printf "steps_to_forget_mu_0_9\t%d\t0\tthe smallest k with 0.9^k < 0.01 (a gradient k steps old weighs 0.9^k in b)\n", k }'
