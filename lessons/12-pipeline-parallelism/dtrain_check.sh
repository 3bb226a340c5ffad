#!/usr/bin/env bash
# dtrain_check.sh MINE LIBRARY ST_COMPARE — lesson 12's check in the real system (grade.sh
# runs it, under runs.sh): MINE (the variant's dtrain, whose --pp runs the student's
# one_f_one_b: in_dtrain.c) trains gpt2-tiny (2 blocks) as 2 pipeline stages under `mpirun -np 2`;
# LIBRARY (dtlab's own dtrain) trains it as one process (--pp 1: the plain step, the
# micro-batches' gradients summed in the order 0, 1, ..., m-1). 4 steps of 8 micro-batches,
# AdamW with clipping, on this lesson's README as text, a fresh seed each grade. A
# pipeline changes no sum (nn/train_pipe.c), so every step's loss, the validation loss and
# every weight must be the same bits. Prints the check's line and "# N of 1 checks
# passed"; exit 0 pass, 1 fail, 3 a run failed.
set -u
mine=$1 lib=$2 stc=$3
name=dtrain_pp2_trains_bit_for_bit_like_one_process
w=$(mktemp -d "${TMPDIR:-/tmp}/lesson12_dtrain_XXXXXX")
trap 'rm -rf "$w"' EXIT
seed=$(( ${DT_LESSON_SEED:-1} % 1000000 + 1 ))
args=(--model gpt2-tiny --data "text:$(dirname "$0")/README.md" --seq-len 32 --batch 16
      --accumulate 8 --train-examples 64 --epochs 1 --clip 0.5 --threads 1 --seed "$seed"
      --json --quiet)
for v in mine lib; do
  prog=$mine np=2 pp=2
  [ "$v" = lib ] && prog=$lib np=1 pp=1
  if [ ! -x "$prog" ]; then
    echo "FAIL $name: $prog is not built (cmake --build build --target lesson12_student)"
    echo "# 0 of 1 checks passed"
    exit 1
  fi
  "$MPIRUN" -np $np --oversubscribe -x OMP_NUM_THREADS -x OPENBLAS_NUM_THREADS "$prog" \
      "${args[@]}" --pp $pp --save-weights "$w/$v.st" >"$w/$v.out" 2>"$w/$v.err"
  rc=$?
  if [ "$rc" -eq 2 ] && [ "$v" = mine ] && grep -q "lesson 12's one_f_one_b" "$w/mine.err"; then
    echo "FAIL $name: dtrain refused your schedule: $(grep -m1 "one_f_one_b" "$w/mine.err")"
    echo "# 0 of 1 checks passed"
    exit 1
  fi
  if [ "$rc" -ne 0 ]; then
    echo "# mpirun -np $np $prog ${args[*]} --pp $pp exited with status $rc:"
    tail -n 15 "$w/$v.err" "$w/$v.out"
    exit 3
  fi
done
cmd="dtrain ${args[*]}"
if ! grep -q "runs lesson 12's one_f_one_b" "$w/mine.err"; then
  echo "FAIL $name: $mine did not run one_f_one_b (in_dtrain.c's wrap is missing: rebuild" \
       "the lesson, lessons/grade 12)"
  echo "# 0 of 1 checks passed"
  exit 1
fi
steps() { sed -n 's/.*"train_loss_steps": *\(\[[^]]*\]\).*/\1/p' "$1"; }
val() { sed -n 's/.*"test_loss": *\([-0-9.e+naif]*\).*/\1/p' "$1"; }
sm=$(steps "$w/mine.out") sl=$(steps "$w/lib.out")
"$stc" "$w/mine.st" "$w/lib.st" 0 >"$w/cmp" 2>&1
src=$?
if [ -n "$sm" ] && [ "$sm" = "$sl" ] && [ "$(val "$w/mine.out")" = "$(val "$w/lib.out")" ] &&
   [ "$src" -eq 0 ]; then
  echo "PASS $name 2 stages on 2 ranks (mpirun), gpt2-tiny, 4 steps of 8 micro-batches:" \
       "step losses $sm, validation loss $(val "$w/mine.out") and every weight bit for bit" \
       "the one-process run's"
  echo "# 1 of 1 checks passed"
  exit 0
fi
echo "FAIL $name: 2 stages with your one_f_one_b give step losses ${sm:-none}, one" \
     "process ${sl:-none}; validation $(val "$w/mine.out") against $(val "$w/lib.out");" \
     "the weights: $(tr '\n' ' ' <"$w/cmp")(st_compare; replay: mpirun -np 2" \
     "build/lessons/12/student/dtrain ... --pp 2 against build/dtrain ... --pp 1, with" \
     "$cmd). A stage sums its micro-batches' gradients in the order its backwards run:" \
     "does every stage run the forwards and the backwards in the order 0, 1, ..., m-1?"
echo "# 0 of 1 checks passed"
exit 1
