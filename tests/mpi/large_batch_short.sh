#!/bin/sh
# large_batch_short.sh — the short version of bench/large_batch.sh (tests/mpi/CMakeLists.txt):
# two batch sizes, both optimizers, 512 Fashion-MNIST examples for one epoch each, so that
# the script, its CSV and its plot are proven to work; and its bad options exit 2.
# Environment: DTRAIN, MPIRUN, SCRIPT (bench/large_batch.sh). Skips (77) without matplotlib.
set -u
W=$(mktemp -d "${TMPDIR:-/tmp}/large_batch_XXXXXX")
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
PY=${DT_PYTHON:-/usr/bin/python3}
"$PY" -c "import matplotlib" 2>/dev/null || { echo "SKIPPED: matplotlib is missing (apt-get install python3-matplotlib)"; exit 77; }
export MPIRUN
sh "$SCRIPT" --dtrain "$DTRAIN" --batches "64 128" --epochs 1 --train-examples 512 \
   --out "$W/out" >"$W/log" 2>&1 || { cat "$W/log"; fail "large_batch.sh failed"; }
CSV=$W/out/large_batch.csv
[ "$(head -1 "$CSV")" = "model,optimizer,global_batch,lr,epochs,steps,test_top1,train_loss,wall_s,status" ] || fail "CSV header"
[ "$(tail -n +2 "$CSV" | wc -l)" -eq 4 ] || { cat "$CSV"; fail "expected 4 runs (2 batches x 2 optimizers)"; }
for o in sgd lars; do for b in 64 128; do
  grep -q "^smallcnn,$o,$b," "$CSV" || { cat "$CSV"; fail "no row for $o at batch $b"; }
done; done
# every run finished, was evaluated (a top-1 in (0,1]) and took 512/b steps
awk -F, 'NR > 1 && !($10 == "ok" && $7 > 0 && $7 <= 1 && $6 == 512 / $3) { bad = 1; print "bad row: " $0 }
         END { exit bad }' "$CSV" || fail "a run did not finish or was not evaluated"
# the lr rules: SGD 0.1 x b/256, LARS 4 x sqrt(b/1024)
grep -q "^smallcnn,sgd,128,0.05," "$CSV" || fail "SGD lr at batch 128 is not 0.05"
grep -q "^smallcnn,lars,64,1," "$CSV" || fail "LARS lr at batch 64 is not 1"
PNG=$W/out/large_batch.png
[ "$(head -c 8 "$PNG" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "large_batch.png is not a PNG"
[ "$(wc -c <"$PNG")" -gt 10000 ] || fail "large_batch.png is too small to hold a chart"
for bad in "--batches 63" "--epochs 0" "--optimizers adam" "--sgd-lr -1" "--bogus"; do
  # shellcheck disable=SC2086
  sh "$SCRIPT" --dtrain "$DTRAIN" $bad --out "$W/bad" >"$W/bad.log" 2>&1; rc=$?
  [ $rc -eq 2 ] || { cat "$W/bad.log"; fail "'$bad' exited $rc, not 2"; }
done
echo "PASS large_batch_short"
