#!/bin/sh
# dtsim_cases.sh CASE — end-to-end checks of dtsim (tests/sim/CMakeLists.txt). DTSIM = the
# program. Each case is small (16 to 32 simulated GPUs) and takes seconds.
set -u
CASE=$1
W=$(mktemp -d "${TMPDIR:-/tmp}/dtsim_${CASE}_XXXXXX")
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
num() { sed -n "s/.*\"$1\": \([-0-9.e+]*\).*/\1/p" "$2" | head -1; }
# |a - b| <= tol * |b|
close() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t * (b < 0 ? -b : b)) }'; }

case "$CASE" in
cpu_matches_dtrain)
  # The same step, two worlds: dtsim --device cpu runs nn/'s trainer under SimGrid with real
  # numbers on 3 simulated GPUs, and `mpirun -np 3 dtrain` runs it for real, both on the
  # same synthetic data (seed fresh each run) for 2 epochs of 4 steps: the per-epoch mean
  # training losses agree to 1e-5 (the same sums in the same order; dtrain prints 6
  # decimals). Different seeds give losses that differ in the 2nd-3rd digit.
  SEED=${DT_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
  echo "# seed $SEED (replay with DT_TEST_SEED=$SEED)"
  D="--image-size 16 --classes 4 --synthetic-examples 48 --seed $SEED --lr 0.05"
  "$DTSIM" --device cpu --gpus 3 --gpus-per-node 3 --model resnet8 --per-gpu-batch 4 $D \
      --iters 8 --warmup 0 >"$W/sim" 2>&1 || { cat "$W/sim"; fail "dtsim --device cpu"; }
  "$MPIRUN" -np 3 --oversubscribe "$DTRAIN" --quiet --threads 1 --data synthetic $D \
      --model resnet8 --batch 12 --epochs 2 --eval-every 0 --lr-schedule const --warmup 0 \
      --log "$W/log.csv" >"$W/real" 2>&1 || { cat "$W/real"; fail "dtrain"; }
  for e in 1 2; do
    a=$(sed -n "s/^epoch $e train_loss //p" "$W/sim")
    b=$(awk -F, -v e=$e '$1 == e { print $4 }' "$W/log.csv")
    [ -n "$a" ] && [ -n "$b" ] || { cat "$W/sim" "$W/log.csv"; fail "epoch $e: no loss"; }
    awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-5 * b + 1e-6) }' ||
      fail "epoch $e: simulated loss $a, dtrain's $b"
    echo "ok: epoch $e: dtsim --device cpu $a, mpirun dtrain $b"
  done
  echo "PASS cpu_matches_dtrain" ;;
accumulate)
  # --accumulate K: each step runs K micro-batches and ONE allreduce, overlapping only the
  # last backward. On 16 V100s (2 nodes of 8), per-GPU batch 32: with K = 4
  #  - the allreduce time is K = 1's within 10 % (the same bytes once; one allreduce per
  #    micro-batch would be ~4x);
  #  - the compute is 4 micro-batches of 8: a step at per-GPU batch 8 plus 3 more forward
  #    and backward passes of batch 8, whose time one GPU alone gives (single_gpu_iter_s
  #    with K = 4 less with per-GPU batch 8), within 5 % (the once-per-step work, the
  #    allreduce's reductions and the update, is the same in both);
  #  - the exposed communication does not shrink (a quarter of backward is left to hide it).
  G="--gpus 16 --gpus-per-node 8 --json --quiet"
  "$DTSIM" $G --per-gpu-batch 32 >"$W/k1" 2>&1 || { cat "$W/k1"; fail "K=1"; }
  "$DTSIM" $G --per-gpu-batch 32 --accumulate 4 >"$W/k4" 2>&1 || { cat "$W/k4"; fail "K=4"; }
  "$DTSIM" $G --per-gpu-batch 8 >"$W/b8" 2>&1 || { cat "$W/b8"; fail "batch 8"; }
  c1=$(num comm_s "$W/k1"); c4=$(num comm_s "$W/k4")
  close "$c4" "$c1" 0.10 || fail "allreduce time $c4 s with K=4 vs $c1 s with K=1"
  k4=$(num compute_s "$W/k4"); b8=$(num compute_s "$W/b8")
  extra=$(awk -v a="$(num single_gpu_iter_s "$W/k4")" -v b="$(num single_gpu_iter_s "$W/b8")" 'BEGIN { print a - b }')
  close "$(awk -v a="$k4" -v b="$b8" 'BEGIN { print a - b }')" "$extra" 0.05 ||
    fail "compute $k4 s with K=4 vs $b8 s at batch 8 + $extra s for 3 more micro-batches"
  awk -v a="$(num exposed_s "$W/k4")" -v b="$(num exposed_s "$W/k1")" 'BEGIN { exit !(a >= b) }' ||
    fail "exposed communication shrank with accumulation"
  grep -q '"global_batch": 512' "$W/k4" || fail "the global batch is not 16 x 32"
  for bad in "--accumulate 0" "--accumulate 3" "--accumulate x"; do
    "$DTSIM" $G --per-gpu-batch 32 $bad >"$W/bad" 2>&1; rc=$?
    [ $rc -eq 2 ] || { cat "$W/bad"; fail "'$bad' exited $rc, not 2"; }
    grep -q -- "--accumulate" "$W/bad" || fail "'$bad': message does not name --accumulate"
  done
  echo "PASS accumulate" ;;
closed_form)
  # 16 GPUs, one per node on a flat crossbar (every message: 2 links of latency, the NIC's
  # bandwidth, no contention), resnet8, allreduce after backward: the simulated iteration
  # is the modeled GPU's compute (the profile's roofline, reduction kernels included) plus
  # the α-β-γ time of every allreduce of the step (the buckets and the BN statistics),
  # within 5 %; and the compute is at least one GPU's own step.
  for fus in none segments:2 256KB; do
    "$DTSIM" --gpus 16 --gpus-per-node 1 --topology flat --model resnet8 --algo ring \
        --no-overlap --fusion $fus --json --quiet >"$W/o" 2>&1 || { cat "$W/o"; fail "dtsim --fusion $fus"; }
    it=$(num iter_s "$W/o"); co=$(num compute_s "$W/o"); mc=$(num model_comm_s "$W/o"); one=$(num single_gpu_iter_s "$W/o")
    exp=$(awk -v a="$co" -v b="$mc" 'BEGIN { printf "%.9g", a + b }')
    close "$it" "$exp" 0.05 || fail "--fusion $fus: iteration $it s, expected compute $co + allreduce $mc = $exp s"
    awk -v c="$co" -v o="$one" 'BEGIN { exit !(c >= o) }' || fail "compute $co below one GPU's $one"
    echo "ok: --fusion $fus: iteration $it s = compute $co + modeled allreduces $mc (expected $exp)"
  done
  # overlap hides communication: never slower than the same run without it
  "$DTSIM" --gpus 16 --gpus-per-node 1 --topology flat --model resnet8 --algo ring --fusion none --json --quiet >"$W/ov" 2>&1 || fail "overlap run"
  "$DTSIM" --gpus 16 --gpus-per-node 1 --topology flat --model resnet8 --algo ring --fusion none --no-overlap --json --quiet >"$W/no" 2>&1 || fail "no-overlap run"
  a=$(num iter_s "$W/ov"); b=$(num iter_s "$W/no")
  awk -v a="$a" -v b="$b" 'BEGIN { exit !(a <= b * 1.001) }' || fail "overlap $a s slower than without $b s"
  echo "ok: overlap $a s <= no overlap $b s"
  # backward skips its host waits while no allreduce is in flight (nn/train_comm.c); a trace
  # of every rank keeps them all (dt_trainer.layer_times): the same simulated time
  O="--gpus 16 --gpus-per-node 4 --model resnet8 --algo ring --fusion segments:3 --json --quiet"
  "$DTSIM" $O >"$W/skip" 2>&1 || fail "run with skipped waits"
  "$DTSIM" $O --trace "$W/t.json" --trace-ranks 16 >"$W/all" 2>&1 || fail "run with every wait"
  a=$(num iter_s "$W/skip"); b=$(num iter_s "$W/all"); c=$(num comm_s "$W/skip"); d=$(num comm_s "$W/all")
  [ -n "$a" ] && [ "$a" = "$b" ] && [ "$c" = "$d" ] ||
    fail "skipped waits: iteration $a s, comm $c s; every wait: $b s, $d s"
  echo "ok: skipped host waits: iteration $a s, comm $c s, as with every wait"
  echo "PASS closed_form" ;;
presets)
  # every preset runs at a small scale (4 nodes), prints its row, and writes CSV and a trace
  for p in goyal2017 cho2017 akiba2017 jia2018 mikami2018 dgx-h100; do
    gpn=8; case $p in cho2017|mikami2018) gpn=4 ;; esac
    g=$((4 * gpn))
    "$DTSIM" --preset $p --gpus $g --model resnet20 --iters 1 --csv "$W/$p.csv" --trace "$W/$p.json" --quiet >"$W/$p.out" 2>&1 || { cat "$W/$p.out"; fail "preset $p"; }
    grep -q "^ *$g " "$W/$p.out" || { cat "$W/$p.out"; fail "preset $p: no result row"; }
    [ "$(wc -l <"$W/$p.csv")" -eq 2 ] || fail "preset $p: csv"
    grep -q '"traceEvents"' "$W/$p.json" && grep -q 'allreduce bucket' "$W/$p.json" || fail "preset $p: trace"
    echo "ok: $p: $(tail -1 "$W/$p.csv")"
  done
  echo "PASS presets" ;;
sweep)
  "$DTSIM" sweep --model resnet20 --sweep-gpus 8,16,32 --sweep-algos ring,hier --iters 1 --plot "$W/s.png" --csv "$W/s.csv" --quiet >"$W/out" 2>&1 || { cat "$W/out"; fail "sweep"; }
  [ "$(wc -l <"$W/s.csv")" -eq 7 ] || fail "sweep: expected 6 rows"
  [ -s "$W/s.png" ] && [ -s "$W/s-efficiency.png" ] || fail "sweep: plots missing"
  head -c 8 "$W/s.png" | od -An -c | grep -q "P   N   G" || fail "sweep: not a PNG"
  echo "PASS sweep" ;;
bad_input)
  expect2() { what=$1; pat=$2; shift 2; out=$("$DTSIM" "$@" 2>&1); rc=$?; [ $rc -eq 2 ] || { echo "$out"; fail "$what: exit $rc, expected 2"; }; echo "$out" | grep -q -e "$pat" || { echo "$out"; fail "$what: message lacks '$pat'"; }; echo "ok: $what -> $(echo "$out" | grep -m1 -e "$pat")"; }
  expect2 "unknown preset" "goyal2017" --preset summit
  expect2 "unknown model" "resnet50" --gpus 16 --model resnet51
  expect2 "unknown algorithm" "valid: mpi, ps, ring" --gpus 16 --algo butterfly
  expect2 "unknown GPU" "v100" --gpus 16 --gpu b200
  expect2 "batch does not divide" "does not divide" --gpus 16 --batch 1000
  expect2 "not whole nodes" "whole number" --gpus 12
  printf '<?xml version="1.0"?>\n<platform version="4.1"><zone id="z" routing="Full"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/></zone></platform>\n' >"$W/two.xml"
  expect2 "more GPUs than the platform" "only 2" --platform "$W/two.xml" --gpus 8
  printf '<platform version="4.1"><zone id="z"' >"$W/bad.xml"
  expect2 "malformed platform" "bad.xml" --platform "$W/bad.xml" --gpus 2
  expect2 "bad option value" "--iters" --iters zero
  # an output that cannot be written is refused before the simulation, not after it
  expect2 "unwritable trace" "no/such/dir/t.json" --gpus 16 --trace "$W/no/such/dir/t.json"
  expect2 "unwritable csv" "no/such/dir/r.csv" --gpus 16 --csv "$W/no/such/dir/r.csv"
  echo "PASS bad_input" ;;
*) echo "unknown case $CASE"; exit 2 ;;
esac
