#!/usr/bin/env bash
# answers_key.sh PROGRAMS_DIR — lesson 12's answer key (kit/answers.py grades answers.txt
# against it), computed with dtsim (the library's, DT_BUILD): GPT-3 175B on 1,024 A100s laid
# out as Megatron-LM does, tp 8 x pp 16 x dp 8, 32 micro-batches of 1 (the README's
# command): the pipeline's bubble as dtsim prints it (its stages' modelled compute and
# messages, not the closed form), and the activations per GPU of the busiest stage under
# --pp-schedule gpipe over those under 1f1b. Two analytic runs, milliseconds.
set -u
B=${DT_BUILD:-build}
run() { "$B/dtsim" --model gpt3-175b --gpu a100 --gpus 1024 --tp 8 --pp 16 --pp-schedule "$1" 2>/dev/null; }
one=$(run 1f1b) gp=$(run gpipe)
bub=$(printf '%s\n' "$one" | sed -n 's/.*(bubble \([0-9.]*\) %.*/\1/p')
a1=$(printf '%s\n' "$one" | sed -n 's/.* + activations \([0-9.]*\),.*/\1/p')
ag=$(printf '%s\n' "$gp" | sed -n 's/.* + activations \([0-9.]*\),.*/\1/p')
[ -n "$bub" ] && [ -n "$a1" ] && [ -n "$ag" ] ||
  { echo "dtsim printed no bubble or activations (is $B/dtsim built?)" >&2; exit 2; }
printf 'bubble_pct_175b_1024_m32\t%s\t+-0.15\tdtsim --model gpt3-175b --gpu a100 --gpus 1024 --tp 8 --pp 16: the "bubble" of its step line\n' "$bub"
awk -v a="$ag" -v b="$a1" 'BEGIN { printf "activations_gpipe_over_1f1b\t%.6g\t2%%\tthe same with --pp-schedule gpipe: the activations of its memory line over 1f1b'"'"'s\n", a / b }'
