#!/bin/sh
# dtrain_cuda_cases.sh CASE — dtrain --device cuda end to end (registered in
# tests/mpi/CMakeLists.txt, beside the other dtrain cases and st_compare).
# Environment: DTRAIN, ST_COMPARE (tests/mpi/st_compare.c), MPIRUN. Fresh seed each run.
# The GPU cases exit 77 (ctest: skipped) with a visible line when there is no GPU;
# bad_input runs everywhere.
set -u
CASE=$1
W=$(mktemp -d "${TMPDIR:-/tmp}/dtrain_cuda_${CASE}_XXXXXX")
trap 'rm -rf "$W"' EXIT
SEED=${DT_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "# seed $SEED (replay with DT_TEST_SEED=$SEED)"
run() { np=$1; shift; "$MPIRUN" -np "$np" --oversubscribe "$DTRAIN" --quiet --threads 1 --seed "$SEED" "$@"; }
fail() { echo "FAIL: $*"; exit 1; }
gpus() { nvidia-smi -L 2>/dev/null | grep -c '^GPU'; }
need_gpu() {
  if [ "$(gpus)" -lt 1 ]; then echo "SKIPPED: $CASE needs a CUDA GPU (none on this machine)"; exit 77; fi
}
SYN="--data synthetic --image-size 16 --classes 4 --synthetic-examples 240 --epochs 1 --eval-every 0"

case "$CASE" in
matches_cpu)
  # resnet8 (convolutions, batch norm, pooling, residual adds, softmax, SGD with momentum)
  # for 6 steps on the cuda device in deterministic mode (fp32 gemms) and on the cpu device:
  # the weights agree to 1e-3 of each tensor's largest entry (fp32 sums in other orders,
  # amplified by 6 steps of training; a wrong kernel is off by 1e-1 or more).
  need_gpu
  A="$SYN --model resnet8 --batch 16 --max-steps 6"
  run 1 $A --device cpu --save-weights "$W/cpu.st" >"$W/cpu.log" 2>&1 || { cat "$W/cpu.log"; fail "cpu run"; }
  run 1 $A --device cuda --deterministic --save-weights "$W/gpu.st" >"$W/gpu.log" 2>&1 || { cat "$W/gpu.log"; fail "cuda run"; }
  "$ST_COMPARE" "$W/gpu.st" "$W/cpu.st" 1e-3 || fail "cuda weights differ from cpu weights"
  # TF32 (the default on Ampere and newer) rounds the products' inputs to 10 bits (relative
  # error ~5e-4 per product). Weights are the wrong yardstick for it: a bias gradient is a
  # sum with cancellation, and one step moved smallcnn's conv2.bias by 4 % of its largest
  # entry. The loss is a sum of positive terms: the mean training loss of one epoch (6
  # steps of resnet8) must agree with the cpu's to 1 % (a wrong kernel moves it by far more).
  C="--data synthetic --image-size 16 --classes 4 --synthetic-examples 96 --epochs 1 --eval-every 0 --model resnet8 --batch 16 --json"
  lcpu=$(run 1 $C --device cpu 2>"$W/l1.err" | sed -n 's/.*"train_loss": \([0-9.]*\).*/\1/p')
  ltf=$(run 1 $C --device cuda 2>"$W/l2.err" | sed -n 's/.*"train_loss": \([0-9.]*\).*/\1/p')
  echo "# epoch mean loss: cpu $lcpu, cuda (tf32) $ltf"
  [ -n "$lcpu" ] && [ -n "$ltf" ] || { cat "$W/l1.err" "$W/l2.err"; fail "no loss from the tf32 runs"; }
  awk -v a="$lcpu" -v b="$ltf" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.01 * a) }' ||
    fail "cuda (tf32) epoch loss $ltf differs from the cpu's $lcpu by more than 1 %"
  echo "PASS matches_cpu" ;;
deterministic)
  # --deterministic twice gives the same bits; 2 ranks (sharing GPU 0 if there is one) with
  # the staged ring overlapping backward match 1 rank to 1e-4 (another summation order), and
  # dtrain itself checks that the 2 replicas are bit-identical.
  need_gpu
  A="$SYN --model resnet8 --batch 16 --max-steps 6 --device cuda --deterministic"
  run 1 $A --save-weights "$W/a.st" >"$W/a.log" 2>&1 || { cat "$W/a.log"; fail "first run"; }
  run 1 $A --save-weights "$W/b.st" >"$W/b.log" 2>&1 || { cat "$W/b.log"; fail "second run"; }
  "$ST_COMPARE" "$W/b.st" "$W/a.st" 0 || fail "two deterministic runs differ"
  B="$SYN --model smallcnn --dropout 0 --batch 12 --max-steps 6 --device cuda --deterministic"
  run 1 $B --save-weights "$W/n1.st" >"$W/n1.log" 2>&1 || { cat "$W/n1.log"; fail "np 1"; }
  run 2 $B --algo ring --fusion 20KB --save-weights "$W/n2.st" >"$W/n2.log" 2>&1 || { cat "$W/n2.log"; fail "np 2 ring staged"; }
  "$ST_COMPARE" "$W/n2.st" "$W/n1.st" 1e-4 || fail "2 ranks on cuda differ from 1"
  run 2 $B --algo rhd --fp16-grads --fusion 8KB --save-weights "$W/h2.st" >"$W/h2.log" 2>&1 || { cat "$W/h2.log"; fail "np 2 rhd fp16"; }
  "$ST_COMPARE" "$W/h2.st" "$W/n1.st" 0.3 || fail "2 ranks with fp16 gradients are far from 1"
  if [ "$(gpus)" -ge 2 ]; then  # NCCL needs one GPU per rank
    run 2 $B --algo nccl --save-weights "$W/c2.st" >"$W/c2.log" 2>&1 || { cat "$W/c2.log"; fail "np 2 nccl"; }
    "$ST_COMPARE" "$W/c2.st" "$W/n1.st" 1e-4 || fail "nccl on 2 GPUs differs from 1 rank"
  else
    run 1 $B --algo nccl --save-weights "$W/c1.st" >"$W/c1.log" 2>&1 || { cat "$W/c1.log"; fail "np 1 nccl"; }
    "$ST_COMPARE" "$W/c1.st" "$W/n1.st" 0 || fail "nccl on 1 GPU changed the weights"
    echo "# one GPU: nccl checked on 1 rank only (NCCL needs one GPU per rank)"
  fi
  echo "PASS deterministic" ;;
bad_input)
  # Options that need a GPU or another option: a message and exit 2, with or without a GPU.
  expect2() {
    msg=$1; shift
    out=$(run 1 $SYN --model smallcnn --batch 8 --max-steps 1 "$@" 2>&1); rc=$?
    [ $rc -eq 2 ] || { echo "$out"; fail "$* exited $rc, expected 2"; }
    echo "$out" | grep -q -- "$msg" || { echo "$out"; fail "$*: no message '$msg'"; }
  }
  expect2 "needs --device cuda" --algo nccl
  expect2 "needs --device cuda" --cuda-aware
  expect2 "cpu or cuda" --device tpu
  expect2 "byte-threshold --fusion" --device cuda --deterministic --fusion auto
  if [ "$(gpus)" -lt 1 ]; then
    expect2 "no CUDA GPU\|no cuda device" --device cuda
  fi
  echo "PASS bad_input" ;;
*) fail "unknown case $CASE" ;;
esac
