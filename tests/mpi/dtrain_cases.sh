#!/bin/sh
# dtrain_cases.sh CASE — end-to-end checks of dtrain under mpirun (tests/mpi/CMakeLists.txt).
# Environment: DTRAIN (the program), ST_COMPARE (tests/mpi/st_compare.c), MPIRUN.
# Every case uses fresh random seeds (printed) and small synthetic data, so it runs in seconds.
set -u
CASE=$1
W=$(mktemp -d "${TMPDIR:-/tmp}/dtrain_${CASE}_XXXXXX")
trap 'rm -rf "$W"' EXIT
SEED=${DT_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "# seed $SEED (replay with DT_TEST_SEED=$SEED)"
run() { np=$1; shift; "$MPIRUN" -np "$np" --oversubscribe "$DTRAIN" --quiet --threads 1 --seed "$SEED" "$@"; }
fail() { echo "FAIL: $*"; exit 1; }
SYN="--data synthetic --image-size 16 --classes 4"

case "$CASE" in
equivalence)
  # Same global batch on 1, 2 and 3 ranks: the same weights (fp32 sums in another order), and
  # dtrain itself exits 1 unless all ranks' parameters are bit-identical at the end.
  # smallcnn without dropout has no per-rank state (no batchnorm statistics, no masks).
  A="$SYN --synthetic-examples 240 --model smallcnn --dropout 0 --batch 12 --epochs 1 --max-steps 6 --eval-every 0"
  for np in 1 2 3; do
    run $np $A --save-weights "$W/w$np.safetensors" >"$W/log$np" 2>&1 || { cat "$W/log$np"; fail "np $np exited $?"; }
  done
  # tolerance: 6 SGD steps of fp32 gradients summed in a different order; differences are
  # ~1e-7 of the largest weight; 1e-4 leaves room while a wrong average (x P) is ~1e-1.
  "$ST_COMPARE" "$W/w2.safetensors" "$W/w1.safetensors" 1e-4 || fail "2 ranks differ from 1"
  "$ST_COMPARE" "$W/w3.safetensors" "$W/w1.safetensors" 1e-4 || fail "3 ranks differ from 1"
  echo "PASS equivalence" ;;
weights)
  # --weights: a trained smallcnn's file (no batchnorm, no dropout: every tensor is a weight)
  # loaded by a run with another seed (another initialisation) that then moves the weights by
  # lr 1e-12: its saved weights are the file's to 1e-9; without --weights they are not.
  A="$SYN --synthetic-examples 64 --model smallcnn --dropout 0 --batch 8 --epochs 1 --eval-every 0"
  Z="--lr 1e-12 --momentum 0 --wd 0 --warmup 0 --lr-schedule const --max-steps 1"
  O=$((SEED % 1000000 + 1))
  run 2 $A --max-steps 3 --save-weights "$W/w1.safetensors" >"$W/1.out" 2>&1 || { cat "$W/1.out"; fail "training run"; }
  run 1 $A --seed $O $Z --weights "$W/w1.safetensors" --save-weights "$W/w2.safetensors" >"$W/2.out" 2>&1 || { cat "$W/2.out"; fail "--weights run"; }
  "$ST_COMPARE" "$W/w2.safetensors" "$W/w1.safetensors" 1e-9 || fail "--weights did not start from the file"
  run 1 $A --seed $O $Z --save-weights "$W/w3.safetensors" >"$W/3.out" 2>&1 || { cat "$W/3.out"; fail "run without --weights"; }
  if "$ST_COMPARE" "$W/w3.safetensors" "$W/w1.safetensors" 1e-9 >/dev/null; then fail "seed $O's own initialisation equals the file: the check cannot tell"; fi
  # another number of classes: refused naming the classifier, accepted with --weights-new-head
  B="--data synthetic --image-size 16 --classes 7 --synthetic-examples 64 --model smallcnn --dropout 0 --batch 8 --epochs 1 --eval-every 0"
  run 1 $B $Z --weights "$W/w1.safetensors" >"$W/4.out" 2>&1; rc=$?
  [ $rc -eq 2 ] && grep -q "fc2.weight' has shape" "$W/4.out" || { cat "$W/4.out"; fail "another head: exit $rc, expected 2 naming fc2.weight"; }
  run 1 $B $Z --weights "$W/w1.safetensors" --weights-new-head --save-weights "$W/w5.safetensors" >"$W/5.out" 2>&1 || { cat "$W/5.out"; fail "--weights-new-head"; }
  # bad input, before any step: another model's file, a missing file, --weights with --resume
  run 1 $SYN --synthetic-examples 64 --model resnet8 --batch 8 --weights "$W/w1.safetensors" >"$W/6.out" 2>&1; rc=$?
  [ $rc -eq 2 ] && grep -q "w1.safetensors: tensor" "$W/6.out" || { cat "$W/6.out"; fail "resnet8 from smallcnn's file: exit $rc"; }
  run 1 $A --weights "$W/none.safetensors" >"$W/7.out" 2>&1; rc=$?
  [ $rc -eq 2 ] && grep -q "none.safetensors" "$W/7.out" || { cat "$W/7.out"; fail "missing file: exit $rc"; }
  run 1 $A --weights "$W/w1.safetensors" --checkpoint-dir "$W/c" --resume >"$W/8.out" 2>&1; rc=$?
  [ $rc -eq 2 ] && grep -q "give one of them" "$W/8.out" || { cat "$W/8.out"; fail "--weights with --resume: exit $rc"; }
  echo "PASS weights" ;;
trace)
  # --trace: every rank's Horovod-style timeline of the steps after the first, in Chrome's
  # trace format: per traced step one "forward + loss", one "backward <layer>" per layer
  # that ran, one "allreduce bucket k (X MB)" per bucket, one "step"; all spans inside
  # their step; the buckets' allreduces one after another (nn/train_comm.c: one channel),
  # with overlap and without it (then all of them wait for backward's end). Then bad input:
  # an uncreatable path and --trace with --profile (exit 2).
  A="$SYN --synthetic-examples 256 --model resnet8 --batch 16 --eval-every 0 --fusion 64KB"
  K=$(( SEED % 3 + 2 ))
  for ov in "" --no-overlap; do
  run 2 $A $ov --max-steps $((K + 2)) --trace-steps $K --trace "$W/t.json" >"$W/t.out" 2>&1 || { cat "$W/t.out"; fail "traced run $ov"; }
  [ -z "$(ls "$W" | grep part)" ] || fail "parts left behind: $(ls "$W")"
  python3 - "$W/t.json" "$K" <<'PY' || fail "the trace $ov"
import json, sys
doc = json.load(open(sys.argv[1]))
k = int(sys.argv[2])
ev = [e for e in doc["traceEvents"] if e["ph"] == "X"]
for rank in (0, 1):
    mine = [e for e in ev if e["pid"] == rank]
    steps = sorted((e for e in mine if e["name"] == "step"), key=lambda e: e["ts"])
    assert len(steps) == k, f"rank {rank}: {len(steps)} steps, expected {k}"
    fwd = [e for e in mine if e["name"] == "forward + loss"]
    bw = [e for e in mine if e["name"].startswith("backward ")]
    ar = [e for e in mine if e["name"].startswith("allreduce bucket ")]
    assert len(fwd) == k, f"rank {rank}: {len(fwd)} forward spans"
    assert len(bw) >= 6 * k and len(bw) % k == 0, f"rank {rank}: {len(bw)} backward spans"
    buckets = {e["name"] for e in ar}
    assert len(buckets) >= 2 and len(ar) == k * len(buckets), f"rank {rank}: buckets {buckets}, {len(ar)} spans"
    assert all(e["tid"] == 1 for e in ar) and all(e["tid"] == 0 for e in fwd + bw)
    # each bucket's exact bytes (dtsim calibrate --intra-trace): its name's MB, and the
    # buckets of a step together hold every gradient: resnet8 at 4 classes, 77,652 floats
    # (conv1 432 + bn 32; layer1 2 x 2304 + 64; layer2 4608 + 9216 + 128 + 512 + 64;
    # layer3 18432 + 36864 + 256 + 2048 + 128; fc 64 x 4 + 4)
    for e in ar:
        assert abs(e["args"]["bytes"] / 1e6 - float(e["name"].split("(")[1].split()[0])) <= 0.051, e
    assert sum(e["args"]["bytes"] for e in ar) == k * 4 * 77652, sum(e["args"]["bytes"] for e in ar)
    for e in mine:
        assert e["dur"] >= 0, e
        if e["name"] == "step":
            continue
        inside = [s for s in steps if s["ts"] - 1 <= e["ts"] and e["ts"] + e["dur"] <= s["ts"] + s["dur"] + 1]
        assert inside, f"rank {rank}: {e['name']} outside every step"
    for s in steps:  # one channel: each bucket starts after the one before it has ended
        mine_ar = sorted((e for e in ar if s["ts"] - 1 <= e["ts"] <= s["ts"] + s["dur"] + 1), key=lambda e: e["ts"])
        for a, b in zip(mine_ar, mine_ar[1:]):
            assert b["ts"] >= a["ts"] + a["dur"] - 1, f"rank {rank}: {b['name']} starts at {b['ts']}, before {a['name']} ends at {a['ts'] + a['dur']}"
print("trace ok:", len(ev), "spans")
PY
  done
  run 1 $A --max-steps 2 --trace "$W/no/such/dir/t.json" >"$W/b.out" 2>&1; rc=$?
  [ $rc -eq 2 ] && grep -q "cannot create a file there" "$W/b.out" && ! grep -q "step" "$W/b.out" || { cat "$W/b.out"; fail "uncreatable --trace path: exit $rc"; }
  run 1 $A --max-steps 2 --trace "$W/u.json" --profile "$W/p.json" >"$W/c.out" 2>&1; rc=$?
  [ $rc -eq 2 ] || { cat "$W/c.out"; fail "--trace with --profile: exit $rc"; }
  echo "PASS trace" ;;
resume)
  # 2 epochs in one run == 1 epoch + resume + 1 epoch == 3 steps + resume, loss for loss and
  # bit for bit (resnet8 has batchnorm running statistics and momentum buffers to restore).
  # The first half is the 2-epoch run stopped after its 6 steps (--max-steps), so that its
  # learning-rate schedule is the 2-epoch one.
  A="$SYN --synthetic-examples 96 --model resnet8 --batch 16 --epochs 2 --eval-every 1"
  run 2 $A --checkpoint-dir "$W/a" --log "$W/a.csv" --save-weights "$W/wa.safetensors" >"$W/a.out" 2>&1 || { cat "$W/a.out"; fail "uninterrupted run"; }
  run 2 $A --max-steps 6 --checkpoint-dir "$W/b" --log "$W/b.csv" >"$W/b1.out" 2>&1 || { cat "$W/b1.out"; fail "first half"; }
  run 2 $A --checkpoint-dir "$W/b" --resume --log "$W/b.csv" --save-weights "$W/wb.safetensors" >"$W/b2.out" 2>&1 || { cat "$W/b2.out"; fail "resumed half"; }
  run 2 $A --max-steps 3 --checkpoint-dir "$W/c" >"$W/c1.out" 2>&1 || { cat "$W/c1.out"; fail "3 steps"; }
  run 2 $A --checkpoint-dir "$W/c" --resume --save-weights "$W/wc.safetensors" >"$W/c2.out" 2>&1 || { cat "$W/c2.out"; fail "resume mid-epoch"; }
  cut -d, -f1,2,4,5,6 "$W/a.csv" >"$W/a.cut"; cut -d, -f1,2,4,5,6 "$W/b.csv" >"$W/b.cut"
  diff "$W/a.cut" "$W/b.cut" || fail "per-epoch losses differ after resume"
  [ "$(wc -l <"$W/a.cut")" -eq 3 ] || fail "expected a header and 2 epoch rows"
  "$ST_COMPARE" "$W/wb.safetensors" "$W/wa.safetensors" 0 || fail "weights differ after epoch resume"
  "$ST_COMPARE" "$W/wc.safetensors" "$W/wa.safetensors" 0 || fail "weights differ after mid-epoch resume"
  echo "PASS resume" ;;
algorithms)
  # Every allreduce algorithm, fusion mode and overlap setting trains the same model: the
  # weights after 6 steps on 4 ranks agree with the MPI library's allreduce (fp32 sums in
  # another order: 1e-4 of each tensor's largest entry, as equivalence), and dtrain checks
  # at the end that the 4 replicas are bit-identical.
  # fp16 gradients: without loss scaling the smallest ones flush to zero, so a near-zero BN
  # bias may differ wholly (per tensor: up to 0.30 after 6 steps, up to 1.6 after 2, over 25
  # seeds), and the model as a whole is compared instead: its relative L2 difference. First
  # order: 6 steps, each changing the weights by ~2.6 % (one step fewer reads 2.6e-2), each
  # update off by at most (P+2)·2^-11 = 2.9e-3 (the per-message bound, tests/coll), is
  # 4.5e-4; measured 2.5e-4-2.8e-4 over 15 seeds. The bound is 5e-3, 10x the first order
  # (a missing step is 2.6e-2; a wrong average, O(1)), and the difference must exceed 1e-6,
  # 20x the fp32 runs' (4e-8): fp16 must really be on the wire.
  A="$SYN --synthetic-examples 240 --model resnet8 --batch 16 --epochs 1 --max-steps 6 --eval-every 0"
  run 4 $A --algo mpi --save-weights "$W/mpi.safetensors" >"$W/mpi.log" 2>&1 || { cat "$W/mpi.log"; fail "algo mpi"; }
  i=0
  for cfg in "--algo ps --fusion none" "--algo ring --fusion 20KB" "--algo rhd --fusion segments:3" \
             "--algo dbtree --fusion auto" "--algo hier --group 2 --fusion segments:2" \
             "--algo hier --group 2 --hier-rs --inner rhd --no-overlap" "--algo torus2d --torus 2x2" \
             "--algo auto --fusion 50KB" "--algo ring --fp16-grads --fusion 30KB"; do
    i=$((i+1))
    run 4 $A $cfg --json --save-weights "$W/c$i.safetensors" >"$W/c$i.log" 2>&1 || { cat "$W/c$i.log"; fail "$cfg exited $?"; }
    how="1e-4"; case "$cfg" in *fp16*) how="5e-3 --global 1e-6" ;; esac
    "$ST_COMPARE" "$W/c$i.safetensors" "$W/mpi.safetensors" $how || fail "$cfg differs from --algo mpi"
    grep -q '"replicas_identical": true' "$W/c$i.log" || fail "$cfg: replicas differ"
    echo "ok: $cfg -> $(grep -o '"buckets": [0-9]*, "overlap": [a-z]*, "comm_s": [0-9.]*, "comm_hidden_s": [0-9.]*' "$W/c$i.log")"
  done
  echo "PASS algorithms" ;;
bad_input)
  expect2() { what=$1; shift; out=$("$@" 2>&1); rc=$?; [ $rc -eq 2 ] || { echo "$out"; fail "$what: exit $rc, expected 2"; }; echo "$out" | grep -q -e "$PAT" || { echo "$out"; fail "$what: message lacks '$PAT'"; }; echo "ok: $what -> $(echo "$out" | grep -m1 -e "$PAT")"; }
  PAT="resnet50";        expect2 "unknown model" run 1 --model resnet51 $SYN
  PAT="a language model"; expect2 "gpt model (token batches, not images)" run 1 --model gpt2-tiny $SYN
  PAT="does not divide"; expect2 "batch not divisible" run 3 --batch 10 $SYN
  PAT="too small";       expect2 "input too small" run 1 --model alexnet $SYN
  PAT="--optimizer";     expect2 "bad optimizer" run 1 --optimizer adam
  PAT="--lr-schedule";   expect2 "bad lr schedule" run 1 --lr-schedule linear
  PAT="--schedule";      expect2 "bad lr schedule by its old name" run 1 --schedule linear
  PAT="--lr";            expect2 "NaN learning rate" run 1 --lr nan
  PAT="$W/none";         expect2 "missing dataset" run 1 --data-dir "$W/none"
  PAT="larger than the training set"; expect2 "absurd batch" run 1 --batch 16000000 $SYN --synthetic-examples 96
  PAT="valid: mpi, ps, ring"; expect2 "unknown allreduce" run 1 --algo butterfly $SYN
  PAT="--fusion";        expect2 "bad fusion spec" run 1 --fusion 64M $SYN
  PAT="groups of 2";     expect2 "hier rs with unequal groups" run 3 --algo hier --hier-rs --group 2 $SYN --synthetic-examples 96 --batch 12
  PAT="torus 2x2";       expect2 "torus that does not hold P" run 3 --algo torus2d --torus 2x2 $SYN --synthetic-examples 96 --batch 12
  PAT="holds NaN";     expect2 "NaN in a batch" run 2 $SYN --synthetic-examples 96 --model smallcnn --batch 16 --fault-nan-at-step 2
  mkdir -p "$W/trunc"; for f in /usr/share/datasets/fashion-mnist/*.gz; do head -c 5000 "$f" >"$W/trunc/$(basename "$f")"; done
  if [ -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
    PAT="$W/trunc";      expect2 "truncated dataset" run 1 --data-dir "$W/trunc"
  else echo "SKIPPED truncated dataset: Fashion-MNIST not installed"; fi
  echo "PASS bad_input" ;;
slow_rank)
  # --slow-rank R:F: rank R's layers take F times as long. Within a run, the slowed rank's
  # own report (its compute, the waits added, their ratio) gives F within 2 % (waiting F
  # instead of F-1 times the layer is 33-40 % off for F in 2.5-3). Across runs, one rank's
  # profile (its layer kinds) with --slow-rank 0:F against the same run without, three times
  # each, interleaved: the smaller sums are at least (1+F)/2 apart. Not F within a bound:
  # where a core's speed depends on how busy it has been (a VM's vCPU, boost clocks), the
  # spinning run's own compute is slower (measured on a 2-core Zen 5 VM: conv backward
  # 4.6 ms in every slowed run, 3.0-4.7 ms without), so the ratio of two runs reads 2.2-8.5
  # for F = 2.6-3. Rank 1 slowed in a run of 2 leaves rank 0's profile as it was. Then bad
  # values: exit 2 naming the option.
  F=$(awk -v s="$SEED" 'BEGIN { srand(s % 2147483000); printf "%.2f", 2.5 + 0.5 * rand() }')
  A="$SYN --synthetic-examples 256 --model resnet8 --batch 16 --eval-every 0 --max-steps 8"
  layers() { awk '{ gsub(/.*"kinds": \{|\}.*/, ""); n = split($0, kv, ", "); s = 0; for (i = 1; i <= n; i++) { split(kv[i], p, ": "); if (p[1] != "\"rest\"") s += p[2] } printf "%.9f\n", s }' "$1"; }
  for i in 1 2 3; do
    run 1 $A --profile "$W/a$i.json" >"$W/a.out" 2>&1 || { cat "$W/a.out"; fail "profile"; }
    run 1 $A --profile "$W/s$i.json" --slow-rank 0:$F >"$W/s.out" 2>&1 || { cat "$W/s.out"; fail "profile --slow-rank 0:$F"; }
    x=$(sed -n 's/^dtrain: --slow-rank 0:.* of waits (x \([0-9.]*\))$/\1/p' "$W/s.out")
    [ -n "$x" ] || { cat "$W/s.out"; fail "the slowed rank did not report its waits"; }
    echo "run $i: the slowed rank's compute and waits: x $x"
    awk -v x="$x" -v f="$F" 'BEGIN { exit !(x > 0.98 * f && x < 1.02 * f) }' || fail "--slow-rank 0:$F: the waits made the compute x $x as long"
  done
  a=$(for i in 1 2 3; do layers "$W/a$i.json"; done | sort -g | head -1)
  s=$(for i in 1 2 3; do layers "$W/s$i.json"; done | sort -g | head -1)
  echo "layers: $a s, with --slow-rank 0:$F $s s: x $(awk -v a="$a" -v s="$s" 'BEGIN { printf "%.2f", s / a }')"
  awk -v a="$a" -v s="$s" -v f="$F" 'BEGIN { exit !(s / a > (1 + f) / 2) }' || fail "--slow-rank 0:$F made the layers only $s / $a times as long"
  run 2 $A --batch 32 --profile "$W/o.json" --slow-rank 1:$F >"$W/o.out" 2>&1 || { cat "$W/o.out"; fail "2 ranks, rank 1 slowed"; }
  o=$(layers "$W/o.json")
  awk -v a="$a" -v o="$o" -v f="$F" 'BEGIN { exit !(o < a * (1 + f) / 2) }' || fail "rank 1 slowed, rank 0's layers took $o s (alone: $a)"
  expect2() { what=$1; shift; out=$("$@" 2>&1); rc=$?; [ $rc -eq 2 ] || { echo "$out"; fail "$what: exit $rc, expected 2"; }; echo "$out" | grep -q -e "$PAT" || { echo "$out"; fail "$what: message lacks '$PAT'"; }; echo "ok: $what -> $(echo "$out" | grep -m1 -e "$PAT")"; }
  for v in 1 x 1:0.5 1:0 -1:2 1:abc 1:2x 1:nan 1:1e9 :2; do
    PAT="--slow-rank"; expect2 "--slow-rank $v" run 2 $A --batch 32 --slow-rank "$v"
  done
  PAT="only 2 ranks"; expect2 "--slow-rank 2:2 of 2 ranks" run 2 $A --batch 32 --slow-rank 2:2
  echo "PASS slow_rank" ;;
nan_loss)
  out=$(run 2 $SYN --synthetic-examples 96 --model smallcnn --batch 16 --lr 1e4 --warmup 0 --lr-schedule const --epochs 3 2>&1); rc=$?
  [ $rc -eq 1 ] || { echo "$out"; fail "exit $rc, expected 1"; }
  echo "$out" | grep -E "loss is (NaN|infinite) at step [0-9]+" || { echo "$out"; fail "no message with the step"; }
  echo "PASS nan_loss" ;;
rank_dies)
  # rank 1 exits abruptly at step 2: the other rank must not hang (bounded by timeout 60)
  start=$(date +%s)
  timeout 60 "$MPIRUN" -np 2 --oversubscribe "$DTRAIN" --quiet --threads 1 $SYN --synthetic-examples 960 --model smallcnn --batch 16 --epochs 5 --fault-die-at-step 2 >"$W/out" 2>&1; rc=$?
  took=$(( $(date +%s) - start ))
  [ $rc -ne 0 ] && [ $rc -ne 124 ] || { cat "$W/out"; fail "exit $rc (124 = hung until timeout)"; }
  echo "PASS rank_dies: exit $rc after ${took}s" ;;
sigint)
  # Ctrl-C mid-run: the last complete checkpoint stays intact (and resumable), no temp files
  "$MPIRUN" -np 2 --oversubscribe "$DTRAIN" --quiet --threads 1 --seed "$SEED" $SYN --synthetic-examples 480 --model resnet8 --batch 16 --epochs 200 --eval-every 0 --checkpoint-dir "$W/ck" >"$W/out" 2>&1 &
  pid=$!
  i=0; while [ ! -e "$W/ck/checkpoint.safetensors" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
  [ -e "$W/ck/checkpoint.safetensors" ] || { kill -9 $pid; cat "$W/out"; fail "no checkpoint after 60 s"; }
  sleep 1; kill -INT $pid; wait $pid; rc=$?
  [ $rc -ne 0 ] || fail "interrupted run exited 0"
  ls "$W/ck" | grep -v '^checkpoint.safetensors$' && fail "temporary files left behind"
  run 2 $SYN --synthetic-examples 480 --model resnet8 --batch 16 --epochs 200 --eval-every 0 --checkpoint-dir "$W/ck" --resume --max-steps 1 >"$W/out2" 2>&1 || { cat "$W/out" "$W/out2"; fail "checkpoint not resumable after Ctrl-C"; }
  echo "PASS sigint: exit $rc, checkpoint intact" ;;
max_steps_mid_epoch)
  # --json's train_loss when --max-steps stops the run inside an epoch (4 steps of 8 images
  # an epoch): the mean loss of the steps that ran, not 0 (the epoch never ended, so it has
  # no line). Runs of k = 1, 2, 3 steps (mid-epoch) and of 4 (the epoch's end: --log's row)
  # from one seed take the same first steps, so each step's own loss follows from the means,
  # l_k = k m_k - (k-1) m_(k-1): every one must be a cross-entropy (> 0, < 20), and the
  # 4-step run's mean is its CSV row's. Then the same on 2 ranks at k = 3.
  A="$SYN --synthetic-examples 32 --model smallcnn --dropout 0 --batch 8 --epochs 1 --eval-every 0 --json"
  loss() { sed -n 's/.*"train_loss": *\([-0-9.e+naifNAIF]*\).*/\1/p' "$1"; }
  : >"$W/means"
  for k in 1 2 3 4; do
    run 1 $A --max-steps $k --log "$W/l$k.csv" >"$W/o$k" 2>&1 || { cat "$W/o$k"; fail "--max-steps $k exited $?"; }
    loss "$W/o$k" >>"$W/means"
  done
  c=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "train_loss") k = i } NR == 2 { print $k }' "$W/l4.csv")
  [ "$(wc -l <"$W/l3.csv")" -le 1 ] || fail "a mid-epoch run wrote an epoch row: $(cat "$W/l3.csv")"
  echo "# train_loss over 1, 2, 3, 4 steps: $(cat "$W/means" | tr '\n' ' '); the epoch's CSV row: $c"
  awk -v c="$c" '{ m[NR] = $1 } END {
    bad = ""
    if (NR != 4) bad = " " NR " of 4 runs reported a train_loss;"
    for (k = 1; k <= 3; k++) if (!(m[k] + 0 > 0 && m[k] + 0 < 20)) bad = bad " the mean over " k " step(s) is " m[k] ";"
    for (k = 2; k <= 4; k++) { l = k * m[k] - (k - 1) * m[k - 1]
      if (!(l > 0 && l < 20)) bad = bad " the loss of step " k " would be " l ";" }
    d = m[4] - c; if (d < 0) d = -d
    if (d > 2e-6) bad = bad " the 4-step run reports " m[4] ", its CSV row " c ";"
    if (bad != "") { print bad; exit 1 } }' "$W/means" || fail "train_loss is not the mean of the steps that ran"
  run 2 $A --max-steps 3 >"$W/p2" 2>&1 || { cat "$W/p2"; fail "2 ranks exited $?"; }
  l=$(loss "$W/p2")
  awk -v l="$l" 'BEGIN { exit !(l + 0 > 0 && l + 0 < 20) }' || fail "2 ranks, 3 of 4 steps: train_loss $l"
  echo "PASS max_steps_mid_epoch: train_loss $(head -3 "$W/means" | tr '\n' ' ')over 1-3 of 4 steps, $l on 2 ranks" ;;
*) echo "unknown case $CASE"; exit 2 ;;
esac
