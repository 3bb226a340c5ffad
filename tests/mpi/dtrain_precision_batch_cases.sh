#!/bin/sh
# dtrain_precision_batch_cases.sh CASE — mixed precision end to end (dtrain --precision, nn/net_half.c,
# the trainer's dynamic loss scaling) under mpirun (tests/mpi/CMakeLists.txt).
# Environment: DTRAIN, ST_COMPARE (tests/mpi/st_compare.c), MPIRUN. Fresh seeds, printed.
set -u
CASE=$1
W=$(mktemp -d "${TMPDIR:-/tmp}/dtrain_pb_${CASE}_XXXXXX")
trap 'rm -rf "$W"' EXIT
SEED=${DT_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "# seed $SEED (replay with DT_TEST_SEED=$SEED)"
run() { np=$1; shift; "$MPIRUN" -np "$np" --oversubscribe "$DTRAIN" --quiet --threads 1 --seed "$SEED" "$@"; }
fail() { echo "FAIL: $*"; exit 1; }
json() { grep '^{' "$1" | tail -1 | sed -n "s/.*\"$2\": \"*\([^,\"}]*\).*/\1/p"; }
SYN="--data synthetic --image-size 16 --classes 4"

case "$CASE" in
bad_input)
  # each bad value: exit 2 and a message naming the option, before any training
  for bad in "--precision fp8" "--precision" "--loss-scale 0.5" "--loss-scale abc" \
             "--loss-scale-interval 0" "--loss-scale inf"; do
    run 1 $SYN --synthetic-examples 32 --batch 8 --epochs 1 $bad >"$W/out" 2>&1
    rc=$?
    [ $rc -eq 2 ] || { cat "$W/out"; fail "'$bad' exited $rc, not 2"; }
    opt=${bad%% *}
    grep -q -- "$opt" "$W/out" || { cat "$W/out"; fail "'$bad': the message does not name $opt"; }
  done
  echo "PASS bad_input" ;;
overflow_skips)
  # Rank 1 alone puts an Inf into its reduced gradient at step 2 (--fault-inf-grad-at-step):
  # every rank must skip that update (or the replicas would differ, which dtrain checks at
  # the end: exit 1), the scale must halve once, and the weights after 3 steps with step 2
  # skipped must equal, bit for bit, those of a run of steps 0-1 only: nothing else changed
  # (smallcnn without dropout: no batch-norm statistics, no masks; the learning rate is
  # constant so step 3's update would differ from step 2's only through the data).
  A="$SYN --synthetic-examples 240 --model smallcnn --dropout 0 --batch 16 --epochs 1 --eval-every 0 --precision fp16 --lr-schedule const --warmup 0 --json"
  run 2 $A --max-steps 2 --save-weights "$W/two.safetensors" >"$W/two.out" 2>&1 || { cat "$W/two.out"; fail "2 steps"; }
  run 2 $A --max-steps 3 --fault-inf-grad-at-step 2 --save-weights "$W/skip.safetensors" >"$W/skip.out" 2>&1 || { cat "$W/skip.out"; fail "3 steps with an overflow"; }
  [ "$(json "$W/skip.out" skipped_steps)" = 1 ] || { cat "$W/skip.out"; fail "expected 1 skipped step"; }
  [ "$(json "$W/skip.out" loss_scale)" = 32768 ] || { cat "$W/skip.out"; fail "the scale did not halve from 65536"; }
  [ "$(json "$W/two.out" loss_scale)" = 65536 ] || { cat "$W/two.out"; fail "the scale moved without overflow"; }
  "$ST_COMPARE" "$W/skip.safetensors" "$W/two.safetensors" 0 || fail "the skipped step changed the weights"
  # and the same fault in fp32 (no loss scaling) is not skipped: the Inf reaches the weights
  # and the run stops on a non-finite loss (exit 1), so the case above proves the skip
  run 2 $SYN --synthetic-examples 240 --model smallcnn --dropout 0 --batch 16 --epochs 1 --eval-every 0 --max-steps 4 --fault-inf-grad-at-step 2 >"$W/fp32.out" 2>&1
  [ $? -eq 1 ] || { cat "$W/fp32.out"; fail "fp32 with an Inf gradient should stop with exit 1"; }
  echo "PASS overflow_skips" ;;
resume)
  # fp16 with a loss scale that grows every 2 steps and overflows on the way (the growth
  # interval is short and the start 2^24 so that both paths run): 2 epochs in one run ==
  # 3 steps + resume, bit for bit; the checkpoint carries the scaler's state.
  for p in fp16 bf16; do
    A="$SYN --synthetic-examples 96 --model resnet8 --batch 16 --epochs 2 --eval-every 1 --precision $p --loss-scale 16777216 --loss-scale-interval 2 --json"
    run 2 $A --checkpoint-dir "$W/a$p" --save-weights "$W/wa$p.safetensors" >"$W/a$p.out" 2>&1 || { cat "$W/a$p.out"; fail "$p uninterrupted run"; }
    run 2 $A --max-steps 3 --checkpoint-dir "$W/c$p" >"$W/c1$p.out" 2>&1 || { cat "$W/c1$p.out"; fail "$p 3 steps"; }
    run 2 $A --checkpoint-dir "$W/c$p" --resume --save-weights "$W/wc$p.safetensors" >"$W/c2$p.out" 2>&1 || { cat "$W/c2$p.out"; fail "$p resume mid-epoch"; }
    "$ST_COMPARE" "$W/wc$p.safetensors" "$W/wa$p.safetensors" 0 || fail "$p weights differ after mid-epoch resume"
    for k in loss_scale skipped_steps train_loss; do
      [ "$(json "$W/a$p.out" $k)" = "$(json "$W/c2$p.out" $k)" ] || fail "$p: $k differs after resume"
    done
  done
  [ "$(json "$W/afp16.out" skipped_steps)" -ge 1 ] || { cat "$W/afp16.out"; fail "fp16 from 2^24 never overflowed: the overflow path did not run"; }
  echo "PASS resume" ;;
accuracy)
  # Fashion-MNIST (the real data) in fp32, bf16 and fp16 from the same seed, the same epochs:
  # the small CNN on the first 20,000 examples, one epoch at batch 128 on 2 ranks; the test
  # top-1 of each half run not more than 0.5 points below fp32's (the issue's bar: rounding
  # changes the trajectory a little, not where it goes) nor more than 2 above (a gain that
  # large would be suspect), and fp32 must have learned (> 60 %), or the comparison would
  # mean nothing. (Measured: -0.05..+0.11 points; seed 311973664: fp16 +0.51, a gain the
  # symmetric bound of 0.5 refused, which no loss of precision explains.) ResNet-8 is compared
  # over whole epochs in bench/MIXED-PRECISION.md (bench/mixed_precision.sh): after one short
  # epoch on 10,000 examples its batch-norm network is still in its noisy early phase (seed
  # 1: fp32 64.37 %, fp16 -0.21, bf16 -0.08 points; another seed: bf16 +1.0, fp16 +2.7).
  for m in "smallcnn 20000 0.05"; do
    set -- $m
    for p in fp32 bf16 fp16; do
      run 2 --model $1 --train-examples $2 --lr $3 --batch 128 --epochs 1 --json --precision $p >"$W/$1$p.out" 2>&1 || { cat "$W/$1$p.out"; fail "$1 $p run"; }
    done
    r=$(awk -v m=$1 -v a="$(json "$W/$1fp32.out" test_top1)" -v b="$(json "$W/$1bf16.out" test_top1)" -v c="$(json "$W/$1fp16.out" test_top1)" \
        'BEGIN { d1 = 100*(b-a); d2 = 100*(c-a); printf "%s: fp32 %.2f %%, bf16 %+.2f, fp16 %+.2f points\n", m, 100*a, d1, d2;
                 if (a == "" || a < 0.6 || d1 > 2 || d1 < -0.5 || d2 > 2 || d2 < -0.5) print "BAD" }')
    echo "$r"
    case "$r" in *BAD*) fail "$1: half precision more than 0.5 points below fp32 or 2 above (or fp32 did not learn)";; esac
  done
  echo "PASS accuracy" ;;
accumulate)
  # 2 ranks x 3 micro-batches of 4 follow 2 ranks x one batch of 12 (smallcnn without
  # dropout: no batch norm, no masks): the weights after 6 steps agree to 1e-4 of each
  # tensor's largest entry (fp32 sums in another order, as the equivalence case), while
  # dividing by P instead of P*K or stepping after each micro-batch is off by > 1e-2.
  A="$SYN --synthetic-examples 240 --model smallcnn --dropout 0 --batch 24 --epochs 1 --max-steps 6 --eval-every 0 --json"
  run 2 $A --save-weights "$W/k1.safetensors" >"$W/k1.out" 2>&1 || { cat "$W/k1.out"; fail "K=1"; }
  run 2 $A --accumulate 3 --save-weights "$W/k3.safetensors" >"$W/k3.out" 2>&1 || { cat "$W/k3.out"; fail "K=3"; }
  [ "$(json "$W/k3.out" micro_batch)" = 4 ] && [ "$(json "$W/k3.out" accumulate)" = 3 ] || { cat "$W/k3.out"; fail "micro-batch is not 24/(2x3) = 4"; }
  [ "$(json "$W/k3.out" steps)" = 6 ] || fail "K=3 did not take 6 optimizer steps"
  "$ST_COMPARE" "$W/k3.safetensors" "$W/k1.safetensors" 1e-4 || fail "3 micro-batches of 4 differ from one batch of 12"
  # bad values: exit 2 before training, the message names the option
  for bad in "--accumulate 0" "--accumulate -2" "--accumulate x" "--accumulate 5"; do
    run 2 $SYN --synthetic-examples 240 --batch 24 --epochs 1 $bad >"$W/bad" 2>&1; rc=$?
    [ $rc -eq 2 ] || { cat "$W/bad"; fail "'$bad' exited $rc, not 2"; }
    grep -q -- "--accumulate" "$W/bad" || { cat "$W/bad"; fail "'$bad': the message does not name --accumulate"; }
  done
  echo "PASS accumulate" ;;
*) fail "unknown case $CASE" ;;
esac
