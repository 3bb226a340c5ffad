#!/usr/bin/env bash
# dtrain_check.sh MINE LIBRARY ST_COMPARE — lesson 11's check in the real system (grade.sh
# runs it, under runs.sh): MINE (the variant's dtrain, whose --shard-optimizer runs the
# student's sharded_step: in_dtrain.c) and LIBRARY (dtlab's own dtrain, nn/train_shard.c)
# train the same ResNet-8 for 6 steps under `mpirun -np 2` with the ring, momentum 0.8 and
# weight decay 1e-3 (not the grader's 0.9 and 1e-4), lr by dtrain's warm-up and decay
# schedule (another lr every step). Both run the ring's reduce-scatter and allgather, so the
# loss and every weight must be the same bits. Prints the check's line and the grader's
# "# N of 1 checks passed"; exit 0 pass, 1 fail, 3 a run failed.
set -u
mine=$1 lib=$2 stc=$3
name=dtrain_shard_optimizer_trains_like_the_library
w=$(mktemp -d "${TMPDIR:-/tmp}/lesson11_dtrain_XXXXXX")
trap 'rm -rf "$w"' EXIT
args=(--data synthetic --image-size 16 --classes 4 --synthetic-examples 96 --model resnet8
      --batch 16 --max-steps 6 --lr 0.2 --warmup 0.5 --momentum 0.8 --wd 1e-3 --algo ring
      --eval-every 0 --json --quiet --shard-optimizer)
for v in mine lib; do
  prog=$mine
  [ "$v" = lib ] && prog=$lib
  if [ ! -x "$prog" ]; then
    echo "FAIL $name: $prog is not built (cmake --build build --target lesson11_student)"
    echo "# 0 of 1 checks passed"
    exit 1
  fi
  "$MPIRUN" -np 2 --oversubscribe -x OMP_NUM_THREADS -x OPENBLAS_NUM_THREADS "$prog" \
      "${args[@]}" --save-weights "$w/$v.st" >"$w/$v.out" 2>"$w/$v.err"
  rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "# mpirun -np 2 $prog ${args[*]} exited with status $rc:"
    tail -n 15 "$w/$v.err" "$w/$v.out"
    exit 3
  fi
done
cmd="mpirun --allow-run-as-root -np 2 dtrain ${args[*]}"
if ! grep -q "runs lesson 11's sharded_step" "$w/mine.err"; then
  echo "FAIL $name: $mine did not run sharded_step (in_dtrain.c's wrap is missing: rebuild" \
       "the lesson, lessons/grade 11)"
  echo "# 0 of 1 checks passed"
  exit 1
fi
loss() { sed -n 's/.*"train_loss": *\([-0-9.e+naif]*\).*/\1/p' "$1"; }
lm=$(loss "$w/mine.out") ll=$(loss "$w/lib.out")
"$stc" "$w/mine.st" "$w/lib.st" 0 >"$w/cmp" 2>&1
src=$?
if [ "$lm" = "$ll" ] && [ -n "$lm" ] && [ "$src" -eq 0 ]; then
  echo "PASS $name (P = 2, mpirun) 6 steps of resnet8 in dtrain (momentum 0.8, wd 1e-3," \
       "scheduled lr): train loss $lm and every weight bit for bit the library's" \
       "--shard-optimizer run"
  echo "# 1 of 1 checks passed"
  exit 0
fi
echo "FAIL $name: (P = 2, mpirun) your sharded_step in dtrain gives train loss ${lm:-none}," \
     "the library's ${ll:-none}; the weights: $(tr '\n' ' ' <"$w/cmp")(st_compare; replay:" \
     "$cmd, with build/lessons/11/student/dtrain and build/dtrain). The grader's" \
     "checks use momentum 0.9, weight decay 1e-4 and one lr: does your step use the" \
     "state's momentum and decay and the lr it is given?"
echo "# 0 of 1 checks passed"
exit 1
