#!/bin/sh
# shard_cases.sh CASE — dtrain --shard-optimizer (ZeRO stage 1, nn/train_shard.c) under
# mpirun against plain data parallelism (tests/mpi/CMakeLists.txt). Environment: DTRAIN,
# ST_COMPARE (tests/mpi/st_compare.c), MPIRUN. Fresh random seeds (printed), synthetic data.
#   sgd_bit_identical   SGD (and Nesterov, and 2 micro-batches): the weights after 5 steps are
#                       bit for bit the plain run's, np 2, 3 (ring) and 4 (rhd), on a model
#                       with batch norm (biases and BN parameters in the shards too). The
#                       condition: the same sums — the plain run allreduces the whole gradient
#                       in one bucket with the same algorithm (ring; rhd at P = 2^k), whose
#                       reduce-scatter half sums each element in the same order.
#   lars_matches        LARS: |g| of each weight tensor is summed from the shards' parts, in
#                       float64 in another order than the whole-tensor sum, so the trust ratio
#                       may differ in its last bits: within 1e-6 (relative) of the plain run
#   state_is_1_over_p   the momentum each rank holds (--json optimizer_state_bytes) is the
#                       plain run's / P, to one element, at np 2, 3, 4
#   bad_input           one rank, --fp16-grads: exit 2, a message naming the
#                       option, no weights written
set -u
CASE=$1
W=$(mktemp -d "${TMPDIR:-/tmp}/shard_${CASE}_XXXXXX")
trap 'rm -rf "$W"' EXIT
SEED=${DT_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "# seed $SEED (replay with DT_TEST_SEED=$SEED)"
run() { np=$1; shift; "$MPIRUN" -np "$np" --oversubscribe "$DTRAIN" --quiet --threads 1 --seed "$SEED" "$@"; }
fail() { echo "FAIL: $*"; exit 1; }
A="--data synthetic --image-size 16 --classes 4 --synthetic-examples 240 --model resnet8 --batch 12 --epochs 1 --max-steps 5 --eval-every 0 --lr 0.2"

pair() {  # pair NAME NP ARGS...: the plain run and the sharded run, weights saved
  name=$1 np=$2; shift 2
  run "$np" $A "$@" --save-weights "$W/$name.plain.st" > "$W/$name.plain.log" 2>&1 || { cat "$W/$name.plain.log"; fail "$name: plain run"; }
  run "$np" $A "$@" --shard-optimizer --json --save-weights "$W/$name.shard.st" > "$W/$name.shard.log" 2>&1 || { cat "$W/$name.shard.log"; fail "$name: sharded run"; }
  grep -q '"replicas_identical": true' "$W/$name.shard.log" || fail "$name: the replicas differ after the allgather"
}

case "$CASE" in
sgd_bit_identical)
  pair np2 2 --algo ring --nesterov
  pair np3 3 --algo ring --accumulate 2
  pair np4 4 --algo rhd
  for n in np2 np3 np4; do
    "$ST_COMPARE" "$W/$n.shard.st" "$W/$n.plain.st" 0 || fail "$n: sharded weights are not the plain run's bits"
  done
  # the check can tell: 5 steps with another learning rate move the weights
  run 2 $A --algo ring --nesterov --lr 0.21 --save-weights "$W/other.st" > /dev/null 2>&1
  if "$ST_COMPARE" "$W/other.st" "$W/np2.plain.st" 0 > /dev/null; then fail "lr 0.21 gives lr 0.2's weights: the comparison cannot tell"; fi
  echo "PASS sgd_bit_identical" ;;
lars_matches)
  pair lars 3 --algo ring --optimizer lars
  "$ST_COMPARE" "$W/lars.shard.st" "$W/lars.plain.st" 1e-6 || fail "LARS sharded is not the plain run's to 1e-6"
  echo "PASS lars_matches" ;;
state_is_1_over_p)
  for np in 2 3 4; do
    run "$np" $A --algo ring --json > "$W/p$np" 2>&1 || { cat "$W/p$np"; fail "np $np plain"; }
    run "$np" $A --algo ring --json --shard-optimizer > "$W/s$np" 2>&1 || { cat "$W/s$np"; fail "np $np sharded"; }
    p=$(sed -n 's/.*"optimizer_state_bytes": \([0-9]*\).*/\1/p' "$W/p$np")
    s=$(sed -n 's/.*"optimizer_state_bytes": \([0-9]*\).*/\1/p' "$W/s$np")
    [ -n "$p" ] && [ -n "$s" ] || fail "np $np: no optimizer_state_bytes in --json"
    # rank 0's shard: floor(n/P) or ceil(n/P) floats of the n the plain run holds
    d=$(( s * np - p )); [ $d -lt 0 ] && d=$(( -d ))
    [ $d -le $(( 4 * np )) ] || fail "np $np: sharded state $s B x $np vs plain $p B"
    echo "np $np: $s B per rank, plain $p B (x1/$np)"
  done
  echo "PASS state_is_1_over_p" ;;
bad_input)
  run 1 $A --shard-optimizer --save-weights "$W/x.st" > "$W/o1" 2>&1; rc=$?
  [ $rc -eq 2 ] && grep -q -- "--shard-optimizer needs 2 or more ranks" "$W/o1" || { cat "$W/o1"; fail "one rank: exit $rc"; }
  run 2 $A --shard-optimizer --fp16-grads --save-weights "$W/x.st" > "$W/o2" 2>&1; rc=$?
  [ $rc -eq 2 ] && grep -q -- "--shard-optimizer and --fp16-grads" "$W/o2" || { cat "$W/o2"; fail "--fp16-grads: exit $rc"; }
  [ ! -e "$W/x.st" ] || fail "a refused run wrote something"
  echo "PASS bad_input" ;;
*) echo "unknown case $CASE"; exit 2 ;;
esac
