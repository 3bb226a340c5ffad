#!/bin/sh
# strategy_cases.sh — one registry entry adds a strategy (tests/mpi/strategy_blocking.h: one
# blocking allreduce of the whole gradient after backward, then the whole update), compiled
# into a dtrain of its own (PLUS). Environment: DTRAIN (the library's), PLUS, ST_COMPARE,
# MPIRUN. Fresh random seeds (printed), synthetic data, np 2:
#   - PLUS's --help lists it under --shard, the library's does not, and refuses it (exit 2);
#   - --shard blocking trains to the library's plain weights, bit for bit, where the plain
#     run allreduces the gradient in one bucket: plain SGD, and with the step's extensions
#     around the new entry's hooks (2 micro-batches, fp16 with loss scaling, clipping).
set -u
W=$(mktemp -d "${TMPDIR:-/tmp}/strategy_XXXXXX")
trap 'rm -rf "$W"' EXIT
SEED=${DT_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "# seed $SEED (replay with DT_TEST_SEED=$SEED)"
fail() { echo "FAIL: $*"; exit 1; }
A="--data synthetic --image-size 16 --classes 4 --synthetic-examples 240 --model resnet8 --batch 12 --epochs 1 --max-steps 4 --eval-every 0 --lr 0.2 --algo ring"
run() { prog=$1 out=$2; shift 2
  "$MPIRUN" -np 2 --oversubscribe "$prog" --quiet --threads 1 --seed "$SEED" $A "$@" \
    --save-weights "$W/$out.st" > "$W/$out.log" 2>&1 || { cat "$W/$out.log"; fail "$out: exit $?"; }; }

"$PLUS" --help 2>&1 | grep -q "^ *blocking: (a test) one blocking allreduce" ||
  fail "the plus dtrain's --help does not list blocking under --shard"
"$DTRAIN" --help 2>&1 | grep -q "blocking" && fail "the library's dtrain lists blocking"
out=$("$DTRAIN" --shard blocking 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q "'blocking' is not optimizer, gradients or parameters" ||
  { echo "$out"; fail "the library's dtrain --shard blocking: exit $rc"; }

for ext in "" "--accumulate 2 --precision fp16 --clip 0.5"; do
  name=$(echo "plain $ext" | tr ' -' '__')
  run "$DTRAIN" "$name.lib" $ext
  run "$PLUS" "$name.new" $ext --shard blocking --json
  grep -q '"shard": "blocking"' "$W/$name.new.log" ||
    { cat "$W/$name.new.log"; fail "--shard blocking $ext: the run does not say it ran blocking"; }
  "$ST_COMPARE" "$W/$name.lib.st" "$W/$name.new.st" 0 ||
    fail "--shard blocking $ext: not the plain run's weights"
  echo "ok: --shard blocking ${ext:-(SGD)} gives the plain run's weights, bit for bit"
done
echo "PASS strategy_one_entry"
