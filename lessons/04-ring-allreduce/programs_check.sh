#!/bin/sh
# programs_check.sh CASE DIR MPIRUN — lesson 04's ring inside the real programs (lesson.cmake's
# tests, on the solution's build/lessons/04/solution/{dtrain,dtsim}): --algo student runs the
# lesson's ring.c through the same trainer as --algo ring runs dtlab's dt_sched_ring.
#   dtrain  3 ranks (where the order of a sum of three shows in its bits), resnet8 on
#           synthetic data, fresh seed, 2 epochs of 8 steps, gradients in buckets of 20 KB
#           (several allreduces in flight, overlapping backward): the same per-epoch losses
#           and bit-identical weights as --algo ring
#   dtsim   a ResNet-50 iteration on 256 simulated GPUs (dtsim's default cluster, one
#           iteration, no warm-up): the same simulated iteration, communication and exposed
#           times as --algo ring (the same messages, coarsened the same way)
#   skeleton  (on the student's build/lessons/04/student/, the skeleton's empty ring): dtsim
#           --algo student on 8 GPUs and dtrain --algo student on 2 ranks each refuse, exit 2,
#           with the line that names lessons/04-ring-allreduce/ring.c, and print no figure
set -u
CASE=$1 DIR=$2 MPIRUN=$3
W=$(mktemp -d "${TMPDIR:-/tmp}/lesson04_${CASE}_XXXXXX")
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
num() { sed -n "s/.*\"$1\": *\([-0-9.e+]*\).*/\1/p" "$2" | head -1; }

case "$CASE" in
dtrain)
  SEED=${DT_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
  echo "# seed $SEED (replay with DT_TEST_SEED=$SEED)"
  for algo in student ring; do
    "$MPIRUN" -np 3 --oversubscribe "$DIR/dtrain" --quiet --threads 1 --seed "$SEED" \
        --data synthetic --image-size 16 --classes 4 --synthetic-examples 96 --model resnet8 \
        --batch 12 --epochs 2 --lr 0.05 --lr-schedule const --warmup 0 --eval-every 0 \
        --fusion 20KB --algo $algo --log "$W/$algo.csv" --save-weights "$W/$algo.st" \
        >"$W/$algo.out" 2>&1 || { cat "$W/$algo.out"; fail "dtrain --algo $algo exited $?"; }
    grep -q "allreduce $algo in" "$W/$algo.out" || { cat "$W/$algo.out"; fail "dtrain did not run --algo $algo"; }
    cut -d, -f1,2,4 "$W/$algo.csv" >"$W/$algo.loss"
  done
  [ "$(wc -l <"$W/ring.loss")" -eq 3 ] || fail "expected a header and 2 epochs in the log"
  diff "$W/student.loss" "$W/ring.loss" || fail "per-epoch losses differ (--algo student, then ring)"
  cmp -s "$W/student.st" "$W/ring.st" || fail "the final weights differ (not bit-identical)"
  sed -n 's/^\(epoch.*train loss [0-9.]*\).*/\1/p' "$W/student.out" | sed 's/^/ok: --algo student: /'
  echo "ok: the same losses and bit-identical weights as --algo ring"
  echo "PASS dtrain" ;;
dtsim)
  for algo in student ring; do
    "$DIR/dtsim" --gpus 256 --algo $algo --iters 1 --warmup 0 --json --quiet >"$W/$algo.json" 2>&1 ||
      { cat "$W/$algo.json"; fail "dtsim --algo $algo exited $?"; }
  done
  grep -q '"algo": *"student"' "$W/student.json" || { cat "$W/student.json"; fail "dtsim did not run --algo student"; }
  for k in iter_s comm_s exposed_s; do
    a=$(num $k "$W/student.json"); b=$(num $k "$W/ring.json")
    [ -n "$a" ] && [ "$a" = "$b" ] || fail "$k: --algo student $a s, --algo ring $b s"
    echo "ok: $k: --algo student $a s = --algo ring $b s"
  done
  echo "PASS dtsim" ;;
skeleton)
  want="the student ring schedules no messages on [0-9]+ ranks .*write lessons/04-ring-allreduce/ring.c first"
  "$DIR/dtsim" --gpus 8 --algo student --iters 1 --warmup 0 >"$W/dtsim.out" 2>&1
  rc=$?
  [ "$rc" -eq 2 ] || { cat "$W/dtsim.out"; fail "dtsim --algo student exited $rc, expected 2"; }
  grep -Eq "^dtsim: .*$want" "$W/dtsim.out" || { cat "$W/dtsim.out"; fail "dtsim did not say to write ring.c"; }
  ! grep -Eq "iter ms|images/s" "$W/dtsim.out" || { cat "$W/dtsim.out"; fail "dtsim printed a figure"; }
  echo "ok: dtsim: $(grep -E "$want" "$W/dtsim.out" | head -1)"
  "$MPIRUN" -np 2 --oversubscribe "$DIR/dtrain" --quiet --threads 1 --data synthetic \
      --image-size 16 --synthetic-examples 64 --model smallcnn --batch 16 --epochs 1 \
      --algo student >"$W/dtrain.out" 2>&1
  rc=$?
  [ "$rc" -eq 2 ] || { cat "$W/dtrain.out"; fail "dtrain --algo student exited $rc, expected 2"; }
  grep -Eq "^dtrain: .*$want" "$W/dtrain.out" || { cat "$W/dtrain.out"; fail "dtrain did not say to write ring.c"; }
  ! grep -q "^epoch" "$W/dtrain.out" || { cat "$W/dtrain.out"; fail "dtrain trained"; }
  echo "ok: dtrain: $(grep -E "$want" "$W/dtrain.out" | head -1)"
  echo "PASS skeleton" ;;
*) fail "unknown case $CASE" ;;
esac
