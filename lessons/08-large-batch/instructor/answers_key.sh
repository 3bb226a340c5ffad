#!/usr/bin/env bash
# answers_key.sh PROGRAMS_DIR — lesson 08's answer key (kit/answers.py), from the trust
# program built with the student's lars_step (PROGRAMS_DIR/trust; the README's experiment
# 1): the largest LARS rate among ResNet-20's conv weights over the smallest (batch 64,
# seed 1), and how many tensors get a zero gradient with the zero-initialised last γ of
# every residual block (fourth argument 1).
set -u
t="$1/trust"
[ -x "$t" ] || { echo "$t is not built (cmake --build build --target lesson08_student_trust)" >&2; exit 2; }
"$t" resnet20 64 1 0 | awk 'NR > 2 && $1 ~ /conv/ && $2 == "weight" {
    r = $5 + 0; if (n++ == 0 || r > hi) hi = r; if (n == 1 || r < lo) lo = r }
  END { if (n && lo > 0) printf "conv_rate_spread\t%.6g\t2%%\ttrust resnet20 64: the largest local rate among the conv weights over the smallest\n", hi / lo
        else printf "conv_rate_spread\tNA\t-\ttrust resnet20 64 printed no positive rates for the conv weights (your lars_step)\n" }'
"$t" resnet20 64 1 1 | awk 'NR > 2 && NF >= 5 { n += ($4 + 0 == 0) }
  END { printf "zero_grad_tensors\t%d\t0\ttrust resnet20 64 1 1: the tensors whose ||g|| is 0\n", n }'
