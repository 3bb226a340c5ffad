#!/bin/sh
# dtsim_cases.sh CASE — end-to-end checks of dtsim (tests/sim/CMakeLists.txt). DTSIM = the
# program. Each case is small (16 to 32 simulated GPUs) and takes seconds.
set -u
CASE=$1
W=$(mktemp -d "${TMPDIR:-/tmp}/dtsim_${CASE}_XXXXXX")
trap 'rm -rf "$W"' EXIT
PY=${PYTHON:-/usr/bin/python3}  # Debian's, for its json and csv
fail() { echo "FAIL: $*"; exit 1; }
num() { sed -n "s/.*\"$1\": \([-0-9.e+]*\).*/\1/p" "$2" | head -1; }
# |a - b| <= tol * |b|
close() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t * (b < 0 ? -b : b)) }'; }

case "$CASE" in
trace_link)
  # dtsim calibrate --intra-trace (sim/profile_trace.c): the link fitted to a dtrain trace's
  # buckets. A trace made here from a fresh random alpha A and beta B on P ranks (2-4), 3
  # buckets of fresh random sizes, one in each of 16-24, 32-40 and 48-56 MB (all in the
  # large end, 8 MB apart at least) and the same in both files, as one model's buckets are
  # (the intercept is the line through the two smallest sizes: two a few KB apart magnify
  # the trace's 1 ps rounding thousands of times; seed 1692066516 once drew 23733376 and
  # 23736528 bytes in its two files, alpha off by 3e-4), 6 steps: in each step and
  # bucket one random rank takes exactly 2(P-1)A + 2(P-1)/P n B and the others longer
  # (waiting for it: up to 50 ms more), plus one step where every rank is slow (a hiccup,
  # outvoted by the median). Calibrate must return A (1e-5: the intercept, extrapolated from
  # 16-40 MB) and B (1e-6) from two such files; a trace of one bucket size gives
  # beta = t / (2(P-1)/P n), alpha 0; malformed files and --intra with --intra-trace exit 2
  # naming the file, writing nothing.
  R=$(od -An -N4 -tu4 /dev/urandom | awk '{ print $1 % 2147483000 }')
  echo "# seed $R"
  P=$((R % 3 + 2))
  A=$(awk -v r="$R" 'BEGIN { srand(r + 1); printf "%.6g", 1e-6 + 2e-5 * rand() }')
  B=$(awk -v r="$R" 'BEGIN { srand(r + 2); printf "%.6g", 1e-10 + 1e-9 * rand() }')
  echo '{"dtlab_profile": 1, "model": "resnet8", "device": "cpu", "precision": "fp32", "batch": 32, "image_size": 32, "channels": 3, "classes": 10, "steps": 7, "kinds": {"conv.forward": 0.01, "conv.backward": 0.02, "bn.forward": 0.001, "bn.backward": 0.001, "relu.forward": 0.001, "relu.backward": 0.001, "add.forward": 0.001, "add.backward": 0.001, "avgpool.forward": 0.001, "avgpool.backward": 0.001, "linear.forward": 0.001, "linear.backward": 0.001, "rest": 0.001}, "step_s": 0.041}' >"$W/step.json"
  # mktrace SEED NBUCKETS [PROGRAM]: the trace's events, rank by rank, step by step
  # (the sizes drawn from R, the timings from SEED)
  mktrace() { awk -v r="$1" -v nb="$2" -v prog="${3:-dtrain}" -v P="$P" -v a="$A" -v b="$B" -v sr="$R" 'BEGIN {
    srand(sr); for (k = 0; k < nb; k++) n[k] = 4 * int(4e6 + 4e6 * k + 2e6 * rand()); srand(r)
    printf "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"program\": \"%s\"}, \"traceEvents\": [\n{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"args\": {\"name\": \"rank 0\"}}", prog
    for (s = 0; s < 7; s++) for (k = 0; k < nb; k++) { last[s, k] = int(P * rand()); for (p = 0; p < P; p++) extra[s, k, p] = (s == 3 ? 0.2 : 0) + (p == last[s, k] && s != 3 ? 0 : 0.001 + 0.05 * rand()) }
    for (p = 0; p < P; p++) for (s = 0; s < 7; s++) {
      printf ",\n{\"name\": \"step\", \"ph\": \"X\", \"pid\": %d, \"tid\": 2, \"ts\": %.3f, \"dur\": 1000.0}", p, s * 1e6
      for (k = 0; k < nb; k++) printf ",\n{\"name\": \"allreduce bucket %d (%.1f MB)\", \"ph\": \"X\", \"pid\": %d, \"tid\": 1, \"ts\": %.3f, \"dur\": %.6f, \"args\": {\"bytes\": %d}}", k, n[k] / 1e6, p, s * 1e6 + k, 1e6 * (2 * (P - 1) * a + 2 * (P - 1) / P * n[k] * b + extra[s, k, p]), n[k] }
    printf "\n]}\n" }'; }
  mktrace "$R" 3 >"$W/t1.json"; mktrace $((R + 7)) 3 >"$W/t2.json"
  "$DTSIM" calibrate --step "$W/step.json" --intra-trace "$W/t1.json" --intra-trace "$W/t2.json" --out "$W/cal.json" >"$W/c.out" 2>&1 || { cat "$W/c.out"; fail "calibrate --intra-trace"; }
  cat "$W/c.out"
  fa=$(num alpha_s "$W/cal.json"); fb=$(num beta_s_per_byte "$W/cal.json")
  close "$fa" "$A" 1e-5 && close "$fb" "$B" 1e-6 || fail "$P ranks: fitted alpha $fa beta $fb from traces made with $A and $B"
  grep -q '"from": "'"$W"'/t1.json"' "$W/cal.json" || { cat "$W/cal.json"; fail "the profile does not name the trace"; }
  echo "ok: $P ranks, alpha $fa beta $fb recovered (made with $A and $B)"
  mktrace "$R" 1 >"$W/one.json"
  "$DTSIM" calibrate --step "$W/step.json" --intra-trace "$W/one.json" --out "$W/one.out.json" >/dev/null 2>&1 || fail "calibrate --intra-trace (one bucket)"
  n1=$(awk -v r="$R" 'BEGIN { srand(r); printf "%d", 4 * int(4e6 + 2e6 * rand()) }')
  b1=$(awk -v a="$A" -v b="$B" -v n="$n1" -v P="$P" 'BEGIN { x = 2 * (P - 1) / P * n; printf "%.9g", (2 * (P - 1) * a + x * b) / x }')
  close "$(num beta_s_per_byte "$W/one.out.json")" "$b1" 1e-6 && [ "$(num alpha_s "$W/one.out.json")" = 0 ] ||
    fail "one bucket of $n1 bytes: beta $(num beta_s_per_byte "$W/one.out.json") alpha $(num alpha_s "$W/one.out.json"), expected $b1 and 0"
  echo "ok: one bucket: beta = t/x = $b1, alpha 0"
  bad() { what=$1; pat=$2; shift 2; rm -f "$W/bad.json"; out=$("$DTSIM" calibrate --step "$W/step.json" "$@" --out "$W/bad.json" 2>&1); rc=$?
    [ $rc -eq 2 ] || { echo "$out"; fail "$what: exit $rc, expected 2"; }
    echo "$out" | grep -q -e "$pat" || { echo "$out"; fail "$what: message lacks '$pat'"; }
    [ ! -e "$W/bad.json" ] || fail "$what: left $W/bad.json"; echo "ok: $what -> $(echo "$out" | head -1)"; }
  head -c 300 "$W/t1.json" >"$W/cut.json"
  bad "a truncated trace" "cut.json: not JSON" --intra-trace "$W/cut.json"
  mktrace "$R" 3 dtsim >"$W/sim.json"
  bad "a dtsim trace" "sim.json: expected a dtrain --trace" --intra-trace "$W/sim.json"
  sed 's/, "args": {"bytes": [0-9]*}//' "$W/t1.json" >"$W/nobytes.json"
  bad "events without bytes" "nobytes.json: an allreduce event without" --intra-trace "$W/nobytes.json"
  sed '/"pid": [1-9],/s/allreduce bucket/other span/' "$W/t1.json" >"$W/rank0.json"
  bad "one rank's trace" "rank0.json: allreduce events of fewer than 2 ranks" --intra-trace "$W/rank0.json"
  awk '/"pid": 1, "tid": 1/ && !done++ { sub(/allreduce bucket/, "other span") } { print }' "$W/t1.json" >"$W/short.json"
  bad "a rank with fewer allreduces" "short.json: the ranks traced different numbers" --intra-trace "$W/short.json"
  bad "a missing trace" "none.json: cannot open" --intra-trace "$W/none.json"
  printf 'ranks,bytes,count,algo,time_us,x\n2,4096,1024,ring,10,1\n2,65536,16384,ring,40,1\n' >"$W/i.csv"
  bad "--intra and --intra-trace" "give one of them" --intra "$W/i.csv" --intra-trace "$W/t1.json"
  echo "PASS trace_link" ;;
defaults)
  # A GPU generation brings its node and network (docs/hardware.md, "Per-generation
  # defaults"; the figures recomputed here from the published links): the description line
  # and the JSON say each figure and where it came from. 16 GPUs, resnet20: seconds.
  R="--model resnet20 --iters 1 --warmup 0"
  desc() { what=$1; want=$2; from=$3; shift 3; out=$("$DTSIM" "$@" $R 2>&1); rc=$?
    [ $rc -eq 0 ] || { echo "$out"; fail "$what: exit $rc"; }
    echo "$out" | grep -q -F -- "$want" || { echo "$out"; fail "$what: not described as '$want'"; }
    echo "$out" | grep -q -F -- "$from" || { echo "$out"; fail "$what: the sources lack '$from'"; }
    echo "ok: $what: $want; $from"; }
  # V100 (dtsim's default cluster): NVLink 2.0 one link per pair 300/2/6 GB/s; a DGX-1's 4 x EDR
  desc "no options" "2 nodes x 8 v100, NVLink 25 GB/s 1 us inside a node, 4 x 100 Gb/s (12.5 GB/s) NIC, 1 us per link, fat tree" \
    "v100 (default), 8 per node (default), NVLink (v100 generation) at 25 GB/s (v100 generation: NVLink 2.0" --gpus 16
  desc "no options: NICs" "4 x 100 Gb/s" "4 NICs (v100 generation: DGX-1: 4 x EDR, one per 2 GPUs)" --gpus 16
  # H100: NVSwitch with all 18 NVLink 4 links, 900/2 GB/s; a DGX H100's 8 x NDR 400 Gb/s
  desc "--gpu h100" "2 nodes x 8 h100, NVSwitch 450 GB/s 1 us inside a node, 8 x 400 Gb/s (50 GB/s) NIC" \
    "h100 (--gpu), 8 per node (default), NVSwitch (h100 generation) at 450 GB/s (h100 generation: NVLink 4 / NVSwitch" --gpus 16 --gpu h100
  desc "--gpu h100: NDR, one per GPU" "8 x 400 Gb/s" "8 NICs (h100 generation: DGX H100: 8 x NDR, one per GPU) at 400 Gb/s (h100 generation: NDR InfiniBand, 400 Gb/s)" --gpus 16 --gpu h100
  # A100: NVSwitch with 12 NVLink 3 links, 600/2; 8 x HDR 200 Gb/s; 4-GPU boards: 12 links / 3 peers, 4 NICs
  desc "--gpu a100" "NVSwitch 300 GB/s 1 us inside a node, 8 x 200 Gb/s (25 GB/s) NIC" "(a100 generation: HDR InfiniBand, 200 Gb/s)" --gpus 16 --gpu a100
  desc "--gpu a100 --gpus-per-node 4" "4 nodes x 4 a100, NVLink 100 GB/s 1 us inside a node, 4 x 200 Gb/s" "NVLink (a100 generation) at 100 GB/s (a100 generation: NVLink 3, 4 links per GPU pair" --gpus 16 --gpu a100 --gpus-per-node 4
  # mixed precision by default on tensor cores (bf16 from A100 on), fp32 where there are none
  desc "v100: fp16" "resnet20, 32 images per GPU (global batch 512), fp16," "fp16 (default: mixed precision on its tensor cores; --precision fp32 to opt out)" --gpus 16
  desc "a100: bf16" ", bf16," "bf16 (default: mixed precision on its tensor cores" --gpus 16 --gpu a100
  desc "p100: fp32" ", fp32," "fp32 (default: no tensor cores)" --gpus 16 --gpu p100
  desc "--precision fp32 opts out" ", fp32," "fp32 (--precision)" --gpus 16 --gpu h100 --precision fp32
  # the variants a buyer is offered, with their aliases
  desc "a100-40" "2 nodes x 8 a100-40, NVSwitch 300 GB/s" "a100-40 (--gpu)" --gpus 16 --gpu a100-40
  desc "a100-80 is a100" "2 nodes x 8 a100," "a100 (--gpu)" --gpus 16 --gpu a100-80
  desc "h100-pcie" "2 nodes x 8 h100-pcie, PCIe 48 GB/s 2 us inside a node, 4 x 400 Gb/s" "4 NICs (h100-pcie generation: one per 2 GPUs, assumed" --gpus 16 --gpu h100-pcie
  desc "h200" "2 nodes x 8 h200, NVSwitch 450 GB/s 1 us inside a node, 8 x 400 Gb/s" "h200 (--gpu)" --gpus 16 --gpu h200
  out=$("$DTSIM" --gpus 16 --precision bf16 $R 2>&1); rc=$?
  [ $rc -eq 2 ] && echo "$out" | grep -q "option --precision bf16: the v100 has no bf16 math (A100 and later have it); its mixed precision is fp16" ||
    { echo "$out"; fail "--precision bf16 on a v100: exit $rc"; }
  # memory of the variants: a gpt run that fits 141 GiB and not 40
  "$DTSIM" --gpus 16 --gpu h200 --model gpt3-6.7b --per-gpu-batch 1 --iters 1 --analytic >"$W/m" 2>&1 || { cat "$W/m"; fail "gpt3-6.7b on h200"; }
  grep -q "of the h200's 141 GiB" "$W/m" || { cat "$W/m"; fail "h200: not 141 GiB"; }
  out=$("$DTSIM" --gpus 16 --gpu a100-40 --model gpt3-6.7b --per-gpu-batch 1 --iters 1 --analytic 2>&1); rc=$?
  [ $rc -eq 2 ] && echo "$out" | grep -q "one a100-40 has 40 GiB" || { echo "$out"; fail "gpt3-6.7b on a100-40: exit $rc"; }
  echo "ok: gpt3-6.7b at stage 0 fits an h200's 141 GiB, not an a100-40's 40"
  # --intra KIND alone: that kind's figure for the GPU (V100's NVSwitch is DGX-2's 6 links;
  # PCIe 5.0 for H100, 2 us)
  desc "--intra nvswitch on v100" "NVSwitch 150 GB/s" "NVSwitch (--intra) at 150 GB/s (v100 generation: NVSwitch of DGX-2" --gpus 16 --intra nvswitch
  desc "--gpu h100 --intra pcie" "PCIe 48 GB/s 2 us inside a node, 8 x 400 Gb/s (50 GB/s) NIC" "PCIe (--intra) at 48 GB/s (h100 generation: PCIe 5.0" --gpus 16 --gpu h100 --intra pcie
  # the user's figures over the generation's, and a preset keeps its paper's hardware
  desc "--gpu h100 --intra-bw 200GB" "NVSwitch 200 GB/s" "at 200 GB/s (--intra-bw)" --gpus 16 --gpu h100 --intra-bw 200GB
  desc "--preset goyal2017 --gpu h100" "goyal2017: 2 nodes x 8 h100, NVLink 20 GB/s 1 us inside a node, 1 x 50 Gb/s (6.25 GB/s) NIC" \
    "h100 (--gpu), 8 per node (preset goyal2017), NVLink (preset goyal2017) at 20 GB/s (preset goyal2017)" --preset goyal2017 --gpus 16 --gpu h100
  desc "--preset dgx-h100" "dgx-h100: 2 nodes x 8 h100, NVSwitch 450 GB/s 1 us inside a node, 8 x 400 Gb/s (50 GB/s) NIC" "fp16 (preset)" --preset dgx-h100 --gpus 16 --per-gpu-batch 32
  out=$("$DTSIM" --gpus 16 --gpu p40 --intra nvlink $R 2>&1); rc=$?
  [ $rc -eq 2 ] && echo "$out" | grep -q "the p40 has no NVLink; give its bandwidth with --intra-bw" ||
    { echo "$out"; fail "--gpu p40 --intra nvlink: exit $rc"; }
  # the JSON carries the same figures and sources
  "$DTSIM" --gpus 16 --gpu h100 --json --quiet $R >"$W/h.json" 2>"$W/h.err" || { cat "$W/h.err"; fail "h100 --json"; }
  "$PY" - "$W/h.json" <<'PYEOF' || fail "h100 JSON"
import json, sys
r = json.load(open(sys.argv[1]))[0]
want = dict(gpu="h100", intra="NVSwitch", intra_bw_gbs=450, nic_bw_gbs=50, nics=8, gpus_per_node=8,
            precision="bf16")
bad = {k: (r.get(k), v) for k, v in want.items() if r.get(k) != v}
assert not bad, bad
assert r["sources"]["intra_bw"].startswith("h100 generation: NVLink 4"), r["sources"]
assert r["sources"]["gpu"] == "--gpu" and r["sources"]["nics"].startswith("h100 generation: DGX H100"), r["sources"]
assert r["warnings"] == [] and r["analytic"] is False, r
print("ok: the JSON: h100, NVSwitch 450 GB/s, 8 x 50 GB/s, bf16, with their sources")
PYEOF
  # the buyer's two offers, typed the obvious way, described as offered, with their band
  "$DTSIM" --gpu h100 --intra nvswitch --nics 4 --net-bw 400Gb --gpus 512 --iters 1 >"$W/o1" 2>&1 || { cat "$W/o1"; fail "the H100 offer"; }
  "$DTSIM" --gpu a100 --gpus-per-node 4 --net-bw 200Gb --gpus 512 --iters 1 >"$W/o2" 2>&1 || { cat "$W/o2"; fail "the A100 offer"; }
  grep -q "64 nodes x 8 h100, NVSwitch 450 GB/s 1 us inside a node, 4 x 400 Gb/s (50 GB/s) NIC" "$W/o1" || { cat "$W/o1"; fail "the H100 offer is not described as offered"; }
  grep -q "128 nodes x 4 a100, NVLink 100 GB/s 1 us inside a node, 4 x 200 Gb/s (25 GB/s) NIC" "$W/o2" || { cat "$W/o2"; fail "the A100 offer is not described as offered"; }
  for o in o1 o2; do
    grep -q "^time-to-train: .* [-+][0-9.]* % / +[0-9.]* % (.* to .*; held out: the errors of [0-9]* .* runs .*, bench/HELDOUT.md)" "$W/$o" && grep -q "^GPU-hours: .* [-+][0-9.]* % / +[0-9.]* %" "$W/$o" ||
      { cat "$W/$o"; fail "$o: no time-to-train or GPU-hours with their band"; }
    ! grep -q "warning" "$W/$o" || { cat "$W/$o"; fail "$o: a warning for a plausible offer"; }
  done
  echo "ok: the offers: $(grep '^GPU-hours' "$W/o1" | cut -d';' -f1) (H100), $(grep '^GPU-hours' "$W/o2" | cut -d';' -f1) (A100)"
  echo "PASS defaults" ;;
offers)
  # `dtsim plan --offer NAME=FLAGS`: exactly the offers given, each as dtsim reads its flags
  # (the JSON's time and cost are those of `dtsim FLAGS --analytic`), with the held-out band;
  # two offers whose bands overlap are said to be tied, two apart are not, and the answer is
  # the one the bands tell (offers_verdict.py); a malformed offer and one dtsim refuses end
  # with exit 2.
  H="--gpu h100 --gpus 1024 --net-bw 400Gb --price-gpu-hour 6"
  A="--gpu a100-40 --gpus 512 --nics 4 --net-bw 200Gb --price-gpu-hour 3"
  C="--model gpt3-xl --per-gpu-batch 4 --shard 1"
  "$DTSIM" plan --offer h100="$H" --offer a100="$A" $C --json >"$W/o.json" 2>"$W/o.txt" || { cat "$W/o.txt"; fail "two offers"; }
  "$DTSIM" $H $C --analytic --json --quiet >"$W/h.json" || fail "the h100 offer alone"
  "$DTSIM" plan --offer one="$H" --offer same="$H" $C --json >"$W/t.json" 2>"$W/t.txt" || fail "two equal offers"
  "$PY" - "$W" <<'PYEOF' || fail "offers"
import json, sys
w = sys.argv[1]
o, h, t = json.load(open(w + "/o.json")), json.load(open(w + "/h.json"))[0], json.load(open(w + "/t.json"))
assert [x["name"] for x in o["offers"]] == ["h100", "a100"], o
x = o["offers"][0]
for k in ("train_s", "train_s_low", "train_s_high", "cost", "cost_low", "cost_high", "band_basis", "calibration"):
    assert x[k] == h[k], (k, x[k], h[k])
a = o["offers"][1]
apart = x["train_s_high"] < a["train_s_low"] or a["train_s_high"] < x["train_s_low"] or x["cost_high"] < a["cost_low"] or a["cost_high"] < x["cost_low"]
assert o["tied"] == (not apart), o
assert t["tied"] is True, t
print("ok: h100 %.0f s (%.0f to %.0f), a100 %.0f s; tied: %s; the same offer twice: tied" % (x["train_s"], x["train_s_low"], x["train_s_high"], a["train_s"], o["tied"]))
PYEOF
  grep -q "^tied: one and same: their bands overlap" "$W/t.txt" || { cat "$W/t.txt"; fail "two equal offers not said tied"; }
  grep -q "^h100: band: held out" "$W/o.txt" || { cat "$W/o.txt"; fail "no band basis"; }
  "$PY" "$(dirname "$0")/offers_verdict.py" "$DTSIM" || fail "the offer to buy"
  out=$("$DTSIM" plan --offer nonsense 2>&1); rc=$?
  [ $rc -eq 2 ] && echo "$out" | grep -q "option --offer: 'nonsense' is not NAME=FLAGS" || { echo "$out"; fail "--offer nonsense: exit $rc"; }
  out=$("$DTSIM" plan --offer big="--gpu v100 --gpus 8 --per-gpu-batch 4096" 2>&1); rc=$?
  [ $rc -eq 2 ] && echo "$out" | grep -q "offer big: dtsim refused it" || { echo "$out"; fail "an offer dtsim refuses: exit $rc"; }
  echo "PASS offers" ;;
signals)
  # A run ended from outside while SimGrid works (a timeout's SIGTERM, Ctrl-C's SIGINT) leaves
  # nothing behind: its folder in $TMPDIR removed, SimGrid's processes gone, and dtsim ends as
  # the signal ends a program (timeout: 124; killed by SIGINT: 130).
  mkdir -p "$W/tmp"
  TMPDIR="$W/tmp" timeout 4 "$DTSIM" --gpus 4096 --iters 1 >/dev/null 2>&1; rc=$?
  [ $rc -eq 124 ] || fail "timeout: exit $rc, expected 124"
  [ -z "$(ls -A "$W/tmp")" ] || { ls -la "$W/tmp"; fail "timeout: left $(ls "$W/tmp")"; }
  TMPDIR="$W/tmp" "$DTSIM" --gpus 4096 --iters 1 >/dev/null 2>&1 &
  pid=$!
  sleep 4
  kill -INT $pid; wait $pid; rc=$?
  [ $rc -eq 130 ] || fail "SIGINT: exit $rc, expected 130"
  [ -z "$(ls -A "$W/tmp")" ] || { ls -la "$W/tmp"; fail "SIGINT: left $(ls "$W/tmp")"; }
  sleep 1
  ! pgrep -f "smpimain.*$W/tmp" >/dev/null || fail "SimGrid still runs after the signal"
  echo "ok: timeout and SIGINT during a simulation: exit 124 and 130, nothing left in \$TMPDIR"
  # SimGrid outgrowing the memory it may use (here made small: its share of memory, Pss, is
  # about 0.05 GiB; its resident set, which counts the folded arena's every mapping, 0.7) is
  # stopped, never killed by the kernel: the run is answered with --analytic, said on stderr
  # and in the JSON
  TMPDIR="$W/tmp" DTSIM_MEMORY_LIMIT_GIB=0.02 "$DTSIM" --gpus 64 --model gpt2 --per-gpu-batch 2 --iters 1 --json >"$W/m.json" 2>"$W/m.err" ||
    { cat "$W/m.err"; fail "memory limit: exit $?"; }
  grep -q "dtsim: warning: SimGrid needed more than the 0.02 GiB of memory it may use here .* answered with --analytic instead" "$W/m.err" ||
    { cat "$W/m.err"; fail "memory limit: no warning"; }
  "$PY" -c 'import json,sys; r=json.load(open(sys.argv[1]))[0]; assert r["analytic"] is True and r["warnings"] and r["iter_s"] > 0, r' "$W/m.json" || fail "memory limit: the JSON"
  [ -z "$(ls -A "$W/tmp")" ] || fail "memory limit: left $(ls "$W/tmp")"
  echo "ok: SimGrid stopped at its memory limit, the run answered analytically, nothing left"
  echo "PASS signals" ;;
oversubscription)
  # --oversubscription R:1: a fat tree of two leaves of 16 one-GPU nodes keeps 16/R up links
  # per leaf. Recursive halving-doubling's first reduce-scatter step and last allgather step
  # pair every node with one in the other leaf, each sending half the gradient: 16 flows over
  # 16/R up links, each at 1/R of the NIC. Closed form: the non-blocking allreduce (the α-β-γ
  # model, which the simulation meets within 1 %) plus 2 (R - 1) β bytes/2.
  O="--gpus 32 --gpus-per-node 1 --algo rhd --no-overlap --fusion 1GB --precision fp32 --calib none --iters 1 --json --quiet"
  "$DTSIM" $O >"$W/r1.json" 2>&1 || { cat "$W/r1.json"; fail "non-blocking"; }
  for R in 2 4; do
    "$DTSIM" $O --oversubscription "$R:1" >"$W/r$R.json" 2>&1 || { cat "$W/r$R.json"; fail "$R:1"; }
  done
  "$PY" - "$W" <<'PYEOF' || fail "oversubscription"
import json, sys
w = sys.argv[1]
r = {R: json.load(open(f"{w}/r{R}.json"))[0] for R in (1, 2, 4)}
one = r[1]
assert abs(one["comm_s"] / one["model_comm_s"] - 1) < 0.01, one
bytes_ = 4 * one["params"]
beta = 1 / (one["nic_bw_gbs"] * 1e9 * one["nics"])
for R in (2, 4):
    want = one["model_comm_s"] + 2 * (R - 1) * beta * bytes_ / 2
    got = r[R]["comm_s"]
    assert abs(got / want - 1) < 0.01, (R, got, want)
    print("ok: %d:1: allreduce %.3f ms, closed form %.3f ms (non-blocking %.3f)" % (R, 1e3 * got, 1e3 * want, 1e3 * one["comm_s"]))
PYEOF
  # --topology rail: NIC i of every node on rail i's leaf, 32 nodes a leaf. 32 nodes are one
  # unit: 4:1 costs nothing (the non-blocking closed form); 64 nodes are two units, and rhd's
  # first and last steps cross between them as between the fat tree's leaves: 32 flows over
  # 32/R up links, the non-blocking allreduce plus 2 (R - 1) β bytes/2 again
  for n in 32 64; do
    for R in 1 4; do
      "$DTSIM" $O --gpus $n --topology rail --oversubscription "$R:1" >"$W/rail$n-$R.json" 2>&1 ||
        { cat "$W/rail$n-$R.json"; fail "rail $n $R:1"; }
    done
  done
  "$PY" - "$W" <<'PYEOF' || fail "rail-optimised"
import json, sys
w = sys.argv[1]
for n, crossing in ((32, 0), (64, 1)):
    one = json.load(open(f"{w}/rail{n}-1.json"))[0]
    four = json.load(open(f"{w}/rail{n}-4.json"))[0]
    assert abs(one["comm_s"] / one["model_comm_s"] - 1) < 0.01, one
    beta = 1 / (one["nic_bw_gbs"] * 1e9 * one["nics"])
    want = one["model_comm_s"] + crossing * 2 * (4 - 1) * beta * 4 * one["params"] / 2
    assert abs(four["comm_s"] / want - 1) < 0.01, (n, four["comm_s"], want)
    print("ok: rail, %d nodes (%d unit%s), 4:1: allreduce %.3f ms, closed form %.3f ms" % (
        n, n // 32, "s" if n > 32 else "", 1e3 * four["comm_s"], 1e3 * want))
PYEOF
  grep -q "fat tree 4:1" "$W/r4.json" || "$DTSIM" --gpus 32 --gpus-per-node 1 --oversubscription 4:1 --iters 1 --analytic 2>&1 | grep -q "fat tree 4:1" || fail "the description lacks 4:1"
  out=$("$DTSIM" --gpus 16 --topology torus --oversubscription 3:1 2>&1); rc=$?
  [ $rc -eq 2 ] && echo "$out" | grep -q "option --oversubscription: for a fat tree" || { echo "$out"; fail "a torus oversubscribed: exit $rc"; }
  "$DTSIM" --gpus 64 --gpus-per-node 1 --topology rail --oversubscription 3:1 --iters 1 --analytic 2>&1 |
    grep -q "rail-optimised fat tree 3:1" || fail "the description lacks the rails"
  out=$("$DTSIM" --gpus 16 --topology rails 2>&1); rc=$?
  [ $rc -eq 2 ] && echo "$out" | grep -q "is not flat, fat-tree, rail, torus or dragonfly" || { echo "$out"; fail "--topology rails: exit $rc"; }
  echo "PASS oversubscription" ;;
units)
  # Bandwidths with units (400Gb = 400Gb/s = 400Gbps = 50GB = 50GB/s = 50, GB/s) reach the
  # platform as the same figure; bad units exit 2 naming the fix; a figure beyond any link
  # warns with the likely unit mistake before the header (the run goes on), --strict refuses.
  R="--gpus 16 --model resnet20 --iters 1 --warmup 0"
  for v in 400Gb 400Gb/s 400Gbps "400 Gb/s" 50GB 50GB/s 50 0.4Tb 50000MB; do
    "$DTSIM" $R --net-bw "$v" --intra-bw 1200Gb --json --quiet >"$W/u.json" 2>"$W/u.err" || { cat "$W/u.err"; fail "--net-bw $v"; }
    [ ! -s "$W/u.err" ] || { cat "$W/u.err"; fail "--net-bw $v: said something on stderr"; }
    [ "$(num nic_bw_gbs "$W/u.json")" = 50 ] && [ "$(num intra_bw_gbs "$W/u.json")" = 150 ] ||
      fail "--net-bw $v --intra-bw 1200Gb: NIC $(num nic_bw_gbs "$W/u.json") GB/s, intra $(num intra_bw_gbs "$W/u.json") GB/s; expected 50 and 150"
  done
  echo "ok: 400Gb, 400Gb/s, 400Gbps, 50GB, 50GB/s, 50, 0.4Tb, 50000MB: 50 GB/s each"
  expect() { what=$1; rc_want=$2; pat=$3; shift 3; "$DTSIM" "$@" >"$W/e.out" 2>"$W/e.err"; rc=$?
    [ $rc -eq $rc_want ] || { cat "$W/e.out" "$W/e.err"; fail "$what: exit $rc, expected $rc_want"; }
    grep -q -F -- "$pat" "$W/e.err" || { cat "$W/e.err"; fail "$what: stderr lacks '$pat'"; }
    echo "ok: $what -> $(grep -m1 -F -- "$pat" "$W/e.err" | cut -c1-160)"; }
  expect "lower-case unit" 2 "option --net-bw: '400gb': write the prefix in capitals and b for bits or B for bytes (e.g. 400Gb or 400GB)" $R --net-bw 400gb
  expect "no b or B" 2 "'400G': bits or bytes? write 400Gb (bits/s) or 400GB (bytes/s)" $R --net-bw 400G
  expect "not a bandwidth" 2 "option --intra-bw: 'fast' is not a bandwidth" $R --intra-bw fast
  W400="dtsim: warning: --net-bw 400: 400 GB/s (3200 Gb/s) per NIC is beyond any NIC that exists (the fastest: 800 Gb/s = 100 GB/s); a plain number is GB/s: if you meant 400 Gb/s (50 GB/s), write 400Gb"
  expect "Gb/s typed as GB/s" 0 "$W400" $R --net-bw 400
  head -1 "$W/e.err" | grep -q -F "$W400" || fail "the warning is not the first line"
  "$DTSIM" $R --net-bw 400 --json --quiet >"$W/w.json" 2>/dev/null || fail "--net-bw 400 --json"
  "$PY" -c 'import json,sys; w=json.load(open(sys.argv[1]))[0]["warnings"]; assert len(w) == 1 and w[0].startswith("--net-bw 400: 400 GB/s (3200 Gb/s) per NIC is beyond any NIC that exists"), w' "$W/w.json" ||
    fail "the JSON's warnings lack the bandwidth warning"
  echo "ok: the warning is in the JSON's warnings too"
  grep -q "4 x 3200 Gb/s (400 GB/s) NIC" "$W/e.out" || { cat "$W/e.out"; fail "the warned figure is not the one described"; }
  expect "bytes beyond any NIC" 0 "GB is bytes: if you meant 200 Gb/s (25 GB/s), write 200Gb" $R --net-bw 200GB
  expect "bits beyond any NIC" 0 "give one NIC's bandwidth and their count with --nics" $R --net-bw 3200Gb
  expect "beyond NVLink 5" 0 "dtsim: warning: --intra-bw 3600: 3600 GB/s (28800 Gb/s) per direction inside a node is beyond the fastest NVLink (NVLink 5: 900 GB/s one direction, 1.8 TB/s both); a plain number is GB/s: if you meant 3600 Gb/s (450 GB/s), write 3600Gb" $R --intra-bw 3600
  expect "--strict" 2 "dtsim: --net-bw 400: 400 GB/s (3200 Gb/s) per NIC is beyond any NIC that exists" $R --net-bw 400 --strict
  grep -q "(--strict: refused)" "$W/e.err" && [ ! -s "$W/e.out" ] || { cat "$W/e.out" "$W/e.err"; fail "--strict: printed a header or did not say it refused"; }
  expect "--strict, inside a node" 2 "(--strict: refused)" $R --intra-bw 3600 --strict
  "$DTSIM" $R --net-bw 800Gb --intra-bw 900 --strict >"$W/e.out" 2>&1 || { cat "$W/e.out"; fail "800 Gb/s and 900 GB/s refused under --strict: they exist"; }
  echo "PASS units" ;;
json)
  # --json and --csv - print the machine-readable output alone on stdout, parsed here by a
  # JSON parser (CSV reader) in every mode; every refusal comes before any header, on stderr.
  R="--model resnet20 --iters 1 --warmup 0"
  for mode in "--gpus 16" "--gpus 16 --quiet" "--gpus 16 --algo auto" "--gpus 16 --algo auto --quiet" \
              "sweep --sweep-gpus 8,16 --sweep-algos ring,hier" "sweep --sweep-gpus 8,16 --sweep-algos ring,auto --quiet" \
              "--gpus 16 --price-gpu-hour 2.5" "--gpus 16 --accumulate 2 --trace $W/t.json"; do
    "$DTSIM" $mode $R --json >"$W/j.out" 2>"$W/j.err" || { cat "$W/j.err"; fail "$mode --json"; }
    n=$("$PY" -c 'import json,sys; d=json.load(sys.stdin); assert isinstance(d, list) and all("iter_s" in r for r in d); print(len(d))' <"$W/j.out") ||
      { cat "$W/j.out"; fail "$mode --json: stdout is not JSON alone"; }
    case "$mode" in *--quiet*) [ ! -s "$W/j.err" ] || { cat "$W/j.err"; fail "$mode --json: stderr not quiet"; } ;;
                    *) grep -q "^dtsim: " "$W/j.err" || fail "$mode --json: the description did not go to stderr" ;; esac
    "$DTSIM" $mode $R --csv - >"$W/c.out" 2>"$W/c.err" || { cat "$W/c.err"; fail "$mode --csv -"; }
    m=$("$PY" -c 'import csv,sys; r=list(csv.DictReader(sys.stdin)); assert r and all(len(x) == 16 and None not in x and float(x["iter_s"]) > 0 for x in r); print(len(r))' <"$W/c.out") ||
      { cat "$W/c.out"; fail "$mode --csv -: stdout is not the CSV alone"; }
    [ "$n" = "$m" ] || fail "$mode: $n JSON rows, $m CSV rows"
    echo "ok: $mode: $n JSON rows, $m CSV rows, nothing else on stdout"
  done
  # refusals before any header: nothing on stdout
  refuse() { what=$1; pat=$2; shift 2; "$DTSIM" "$@" >"$W/r.out" 2>"$W/r.err"; rc=$?
    [ $rc -eq 2 ] || { cat "$W/r.out" "$W/r.err"; fail "$what: exit $rc, expected 2"; }
    [ ! -s "$W/r.out" ] && ! grep -q "^dtsim: [a-z0-9-]*: [0-9]* nodes" "$W/r.err" || { cat "$W/r.out" "$W/r.err"; fail "$what: a header before the refusal"; }
    grep -q -F -- "$pat" "$W/r.err" || { cat "$W/r.err"; fail "$what: the message lacks '$pat'"; }
    echo "ok: $what -> $(head -1 "$W/r.err" | cut -c1-150)"; }
  refuse "unknown model" "option --model: unknown model 'resnet51'" --gpus 16 --model resnet51
  refuse "unknown model in a sweep" "unknown model 'resnet51'" sweep --sweep-gpus 8,16 --model resnet51
  refuse "a transformer that does not fit the modelled GPU's memory" "gpt3-175b does not fit: one v100 has 16 GiB" --gpus 16 --model gpt3-175b --per-gpu-batch 1
  refuse "too many GPUs" "option --gpus: 10000000 GPUs is too many: dtsim simulates at most 1048576 (2^20), and this machine's memory about" --gpus 10000000
  refuse "too many in a sweep" "option --sweep-gpus: 99999999 GPUs is too many" sweep --sweep-gpus 8,99999999
  refuse "a sweep point that will not fit" "GPUs fit here" sweep --sweep-gpus 8,1048576 $R
  refuse "--json with --csv -" "--json and --csv - both print on stdout" --gpus 16 --json --csv -
  # the batch beyond what ResNet-50 is published to train to accuracy at: SGD 8K
  "$DTSIM" --gpus 512 --optimizer sgd --iters 1 --warmup 0 --json >"$W/b.out" 2>"$W/b.err" || { cat "$W/b.err"; fail "SGD 16K"; }
  head -1 "$W/b.err" | grep -q -F "dtsim: warning: global batch 16384 is beyond the largest at which ResNet-50 is published to reach its accuracy with SGD (8K, Goyal et al. 2017; LARS: 32K-64K): the 90 epochs of the time-to-train may not reach it" ||
    { cat "$W/b.err"; fail "SGD at 16K: no warning first"; }
  "$PY" -c 'import json,sys; assert json.load(sys.stdin)[0]["batch_beyond_published"] is True' <"$W/b.out" || fail "SGD at 16K: the JSON does not say so"
  "$DTSIM" --gpus 256 --optimizer sgd --iters 1 --warmup 0 --json >"$W/b.out" 2>"$W/b.err" || fail "SGD 8K"
  ! grep -q "warning" "$W/b.err" || { cat "$W/b.err"; fail "SGD at 8K warned"; }
  # LARS: 64K (Jia et al.) holds, 128K does not; the warning comes before a refusal, too
  "$DTSIM" --gpus 2048 --per-gpu-batch 64 --gpu-img-s 1e8 >"$W/b.out" 2>"$W/b.err"; rc=$?
  [ $rc -eq 2 ] && grep -q -F "global batch 131072 is beyond the largest at which ResNet-50 is published to reach its accuracy with LARS (32K, You et al. 2017; 64K, Jia et al. 2018)" "$W/b.err" ||
    { cat "$W/b.err"; fail "LARS at 128K: no warning"; }
  echo "ok: batch beyond the published: SGD 16K and LARS 128K warned, SGD 8K not"
  echo "PASS json" ;;
band)
  # Time-to-train, GPU-hours and cost carry the band measured on held-out runs
  # (bench/HELDOUT.md, recomputed by heldout_band.py); GPU-hours = GPUs x time, cost =
  # GPU-hours x price, each low/high = x (1 -/+ band); the text says what the band rests on and
  # what calibrated the GPU.
  "$PY" "$(dirname "$0")/heldout_band.py" "$DTSIM" "$(dirname "$0")/../.." || fail "heldout_band.py"
  "$DTSIM" --gpus 32 --model resnet20 --iters 1 --price-gpu-hour 2.5 --json >"$W/b.json" 2>"$W/b.err" || { cat "$W/b.err"; fail "run"; }
  "$PY" - "$W/b.json" <<'PYEOF' || fail "the band"
import json, sys
r = json.load(open(sys.argv[1]))[0]
b = r["band"]
close = lambda a, e: abs(a - e) <= 1e-5 * abs(e)
assert close(r["gpu_hours"], r["gpus"] * r["train_s"] / 3600), r
assert close(r["cost"], 2.5 * r["gpu_hours"]), r
lo, hi = r["band_low"], r["band_high"]
assert lo <= 0 <= hi and b == max(-lo, hi), r
for k in ("train_s", "gpu_hours", "cost"):
    assert close(r[k + "_low"], r[k] * (1 + lo)) and close(r[k + "_high"], r[k] * (1 + hi)), (k, r)
assert r["band_basis"].startswith("held out: the errors of") and r["band_basis"].endswith("bench/HELDOUT.md"), r
assert r["calibration"] == "calibrated: dle-pyt-rn50-v100-amp", r
assert "DeepLearningExamples" in r["calibration_source"], r
print("ok: band %.3f (%s); GPU-hours %.3f, cost %.3f" % (b, r["band_basis"], r["gpu_hours"], r["cost"]))
PYEOF
  grep -q "^time-to-train: .* [-+][0-9.]* % / +[0-9.]* % (.* to .*; held out: the errors of .*, bench/HELDOUT.md), 90 epochs of 1281167 images" "$W/b.err" &&
    grep -q "^GPU-hours: .* [-+][0-9.]* % / +[0-9.]* % (.* to .*); cost at 2.5 per GPU-hour: .* (.* to .*); two runs closer than the band are a tie" "$W/b.err" &&
    grep -q "^calibrated: dle-pyt-rn50-v100-amp: one v100 trains 1200.0 images/s at 256 per GPU in fp16 (PyTorch 21.03 (NGC), AMP; NVIDIA/DeepLearningExamples" "$W/b.err" ||
    { cat "$W/b.err"; fail "the text lacks the band or the calibration"; }
  # a GPU the table has no row of takes its generation's (the P40 the P100's; in fp16 too,
  # which a P40 computes in fp32) and says so; where its generation has none either (a
  # transformer on a P40) it says it is uncalibrated, and its band is the roofline's
  for p in fp32 fp16; do
    "$DTSIM" --gpus 16 --gpu p40 --model resnet20 --precision $p --iters 1 --json >"$W/h" 2>"$W/h.err" || fail "p40 $p"
    grep -q "^calibrated: fb-caffe2-rn50-p100-fp32: one p100 trains 138.1 images/s at 32 per GPU in fp32 (.*; the table has no p40 row: its generation's measured fraction of the roofline stands in$" "$W/h.err" &&
      grep -q '"calibration": "calibrated: fb-caffe2-rn50-p100-fp32 (a p100.s: no p40 row)"' "$W/h" &&
      grep -q "runs calibrated from the table, bench/HELDOUT.md" "$W/h.err" || { cat "$W/h.err"; fail "p40 $p: not calibrated from the p100's row"; }
  done
  "$DTSIM" --gpus 16 --gpu p40 --model gpt2-tiny --iters 1 >"$W/h" 2>&1 || { cat "$W/h"; fail "p40 gpt2-tiny"; }
  grep -q "^uncalibrated (roofline): the calibration table has no p40 fp32 row for a transformer (\`dtsim calibrations\`)" "$W/h" &&
    grep -q "runs on the roofline alone, bench/HELDOUT.md" "$W/h" || { cat "$W/h"; fail "p40 transformer: not said uncalibrated"; }
  # the H200 and the H100 PCIe take MLPerf's one-node ResNet-50 (fp16 stands in for bf16)
  for g in h200:mlperf4-rn50-h200-1n h100-pcie:mlperf4-rn50-h100-pcie-1n; do
    "$DTSIM" --gpus 16 --gpu "${g%%:*}" --model resnet20 --iters 1 >"$W/h" 2>&1 || fail "${g%%:*}"
    grep -q "^calibrated: ${g#*:}: one ${g%%:*} trains [0-9.]* images/s at 400 per GPU in fp16 (MXNet 24.04 (NGC)" "$W/h" || { cat "$W/h"; fail "${g%%:*}: not calibrated from ${g#*:}"; }
  done
  # --calib: a row, table, none; refusals name the option
  "$DTSIM" --gpus 16 --model resnet20 --iters 1 --calib dle-mx-rn50-v100-amp >"$W/c" 2>&1 && grep -q "^calibrated: dle-mx-rn50-v100-amp: one v100 trains 1376.0 images/s at 192" "$W/c" || { cat "$W/c"; fail "--calib ROW"; }
  "$DTSIM" --gpus 16 --model resnet20 --iters 1 --calib none >"$W/c" 2>&1 && grep -q "^uncalibrated (roofline): --calib none (" "$W/c" || { cat "$W/c"; fail "--calib none: not said why uncalibrated"; }
  for bad in "nosuchrow:not a row of the calibration table" "dle-pyt-rn50-a100-amp:that row measured the a100, and this run simulates the v100" "dle-pyt-bert128-v100-amp:that row measured gpt2-medium, a transformer, and this run trains resnet20"; do
    out=$("$DTSIM" --gpus 16 --model resnet20 --iters 1 --calib "${bad%%:*}" 2>&1); rc=$?
    [ $rc -eq 2 ] && echo "$out" | grep -q -F "option --calib ${bad%%:*}" && echo "$out" | grep -q -F "${bad#*:}" || { echo "$out"; fail "--calib ${bad%%:*}: exit $rc"; }
  done
  out=$("$DTSIM" --gpus 16 --model resnet20 --iters 1 --calib table --gpu-img-s 100 2>&1); rc=$?
  [ $rc -eq 2 ] && echo "$out" | grep -q "\-\-calib table: --gpu-img-s already calibrates this run" || { echo "$out"; fail "--calib with --gpu-img-s: exit $rc"; }
  "$DTSIM" calibrations --csv >"$W/t.csv" || fail "dtsim calibrations --csv"
  "$PY" -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); g={x["gpu"] for x in r}; assert len(r) >= 20 and {"p100","v100","a100","a100-40","h100"} <= g and all(x["source"] and float(x["per_gpu"]) > 0 for x in r), (len(r), g); print("ok: dtsim calibrations: %d rows on %s" % (len(r), sorted(g)))' "$W/t.csv" || fail "the calibration table"
  # the default row of a ResNet-50 run where the table offers a choice (a node's first)
  "$PY" "$(dirname "$0")/calib_default_row.py" "$DTSIM" "$W/t.csv" || fail "the default row"
  # a row measured on a node (gpus > 1) is reproduced by the node modelled whole, its own
  # collectives included (sim/dtsim_calib.c dtsim_calib_node): the analytic run of that node
  # at the row's batch, accumulation, precision and ZeRO stage trains the row's figure per GPU
  "$PY" - "$W/t.csv" "$DTSIM" <<'PYEOF' || fail "a node's row is not reproduced by its node"
import csv, json, subprocess, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if int(r["gpus"]) > 1]
assert len(rows) >= 8, len(rows)
for r in rows:
    g = int(r["gpus"])
    acc = 1 if int(r["shard"]) else int(r["accumulate"])  # FSDP: every micro-batch the same
    a = ["--gpu", r["gpu"], "--gpus", str(g), "--gpus-per-node", str(g), "--model", r["model"],
         "--precision", r["precision"], "--per-gpu-batch", str(int(r["batch_per_gpu"]) * acc),
         "--accumulate", str(acc), "--calib", r["id"], "--analytic", "--json", "--quiet",
         "--iters", "1", "--warmup", "1"]
    if int(r["seq_len"]):
        a += ["--seq-len", r["seq_len"], "--vocab", r["vocab"]]
    if int(r["shard"]):
        a += ["--shard", r["shard"], "--shard-units", "block"]  # FSDP: a block at a time
    p = subprocess.run([sys.argv[2]] + a, capture_output=True, text=True)
    assert p.returncode == 0, (r["id"], p.stderr)
    j = json.loads(p.stdout)[0]
    got, want = j["images_per_s"] / g, float(r["per_gpu"])
    assert abs(got / want - 1) < 1e-6, (r["id"], got, want)
    print("ok: %s: its node of %d %s trains %.4g per GPU, the row's %.4g" % (
        r["id"], g, r["gpu"], got, want))
PYEOF
  echo "PASS band" ;;
auto)
  # --algo auto against the simulated best on a small grid (bench/auto_grid.py --quick: every
  # algorithm simulated on its own, and auto): auto's pick is the fastest, and its candidates'
  # times are those of the same algorithms run alone.
  G=$(dirname "$0")/../../bench/auto_grid.py
  "$PY" "$G" --dtsim "$DTSIM" --quick --check --out "$W/AUTO.md" || { cat "$W/AUTO.md" 2>/dev/null; fail "auto grid"; }
  cat "$W/AUTO.md"
  out=$("$DTSIM" --gpus 16 --model resnet20 --iters 1 --algo auto 2>&1) || { echo "$out"; fail "auto"; }
  echo "$out" | grep -q "^auto: the fastest simulated step of .*; the cost model alone picks " || { echo "$out"; fail "auto does not say what it simulated"; }
  echo "PASS auto" ;;
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
profile_roundtrip)
  # The loop with real measurements, small: `dtrain --profile` on one rank (resnet8, 4 steps,
  # 2 of them timed), `dtcoll-bench` between two ranks, `dtsim calibrate`, `dtsim --profile`:
  # the profile has every kind of resnet8 and a positive time for each, dtsim's one GPU takes
  # exactly the measured step (1e-6), and fewer than 3 steps cannot profile (exit 2).
  D="--data synthetic --synthetic-examples 128 --image-size 32 --classes 10 --model resnet8 --threads 1 --eval-every 0 --quiet --batch 16"
  "$MPIRUN" -np 1 "$DTRAIN" $D --max-steps 4 --profile "$W/step.json" >"$W/d" 2>&1 || { cat "$W/d"; fail "dtrain --profile"; }
  cat "$W/step.json"
  for k in conv.forward conv.backward bn.forward bn.backward relu.forward add.backward avgpool.forward linear.backward rest; do
    v=$(num "$k" "$W/step.json")
    awk -v v="$v" 'BEGIN { exit !(v > 0) }' || fail "$k: $v s in the profile, expected > 0"
  done
  grep -q '"steps": 2,' "$W/step.json" || fail "expected 2 timed steps (4 - 2 warm-up)"
  "$MPIRUN" -np 2 --oversubscribe "$DTCOLL" --algos ring --min-bytes 1K --max-bytes 256K --factor 4 --iters 5 --csv "$W/intra.csv" >"$W/c" 2>&1 || { cat "$W/c"; fail "dtcoll-bench"; }
  "$DTSIM" calibrate --step "$W/step.json" --intra "$W/intra.csv" --out "$W/cal.json" || fail "calibrate"
  "$DTSIM" --profile "$W/cal.json" --gpus 2 --gpus-per-node 2 --algo ring --optimizer sgd --iters 1 --json --quiet >"$W/o" 2>&1 || { cat "$W/o"; fail "dtsim --profile"; }
  close "$(num single_gpu_iter_s "$W/o")" "$(num step_s "$W/step.json")" 1e-6 ||
    fail "one GPU $(num single_gpu_iter_s "$W/o") s, measured $(num step_s "$W/step.json") s"
  out=$("$MPIRUN" -np 1 "$DTRAIN" $D --max-steps 2 --profile "$W/short.json" 2>&1); rc=$?
  [ $rc -eq 2 ] && echo "$out" | grep -q -- "--max-steps 3 or more" && [ ! -e "$W/short.json" ] ||
    { echo "$out"; fail "2 steps: exit $rc, expected 2 and no file"; }
  echo "ok: dtrain --profile -> calibrate -> dtsim: one GPU $(num single_gpu_iter_s "$W/o") s = measured"
  # a profile of another input shape (16x16 images, 4 classes): dtsim models the network that
  # was measured. resnet8's classifier is 64 features -> classes (+ bias), so it has
  # (10 - 4) x 65 = 390 parameters fewer than at 10 classes; one GPU still takes the measured
  # step
  D4=$(echo "$D" | sed 's/--image-size 32 --classes 10/--image-size 16 --classes 4/')
  "$MPIRUN" -np 1 "$DTRAIN" $D4 --max-steps 4 --profile "$W/step4.json" >"$W/d4" 2>&1 || { cat "$W/d4"; fail "dtrain --profile at 16x16, 4 classes"; }
  "$DTSIM" calibrate --step "$W/step4.json" --intra "$W/intra.csv" --out "$W/cal4.json" || fail "calibrate at 16x16"
  "$DTSIM" --profile "$W/cal4.json" --gpus 2 --gpus-per-node 2 --algo ring --optimizer sgd --iters 1 --json --quiet >"$W/o4" 2>&1 || { cat "$W/o4"; fail "dtsim --profile at 16x16, 4 classes"; }
  p10=$(num params "$W/o"); p4=$(num params "$W/o4")
  [ -n "$p10" ] && [ -n "$p4" ] && [ $((p10 - p4)) -eq 390 ] || fail "parameters: $p10 at 10 classes, $p4 at 4: expected 390 fewer"
  close "$(num single_gpu_iter_s "$W/o4")" "$(num step_s "$W/step4.json")" 1e-6 ||
    fail "16x16: one GPU $(num single_gpu_iter_s "$W/o4") s, measured $(num step_s "$W/step4.json") s"
  echo "ok: a 16x16, 4-class profile: $p4 parameters (10 classes: $p10), one GPU = measured"
  echo "PASS profile_roundtrip" ;;
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
  # backward skips its host waits while no allreduce is in flight (sim/rank.c layer_wait,
  # called by nn/train_replicate.c); a trace of every rank keeps them all: the same
  # simulated time
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
  # and as the paper ran it (ResNet-50, its batch per GPU: dgx-h100's 256 images/GPU needs
  # 25 GiB of modelled device memory, which must not become 25 GiB of this machine's), on 2
  # nodes: the paper's calibration is applied, its precision and allreduce are the defaults
  for p in goyal2017:142.6:hier cho2017:159.3:hier akiba2017:156.4:ring jia2018:146.6:hier \
           mikami2018:258.2:torus2d dgx-h100:0:hier; do
    name=${p%%:*}; rest=${p#*:}; cal=${rest%%:*}; algo=${rest#*:}
    gpn=8; case $name in cho2017|mikami2018) gpn=4 ;; esac
    "$DTSIM" --preset $name --gpus $((2 * gpn)) --iters 1 --warmup 0 >"$W/$name.paper" 2>&1 ||
      { cat "$W/$name.paper"; fail "preset $name as its paper ran it"; }
    grep -q "allreduce $algo" "$W/$name.paper" || { cat "$W/$name.paper"; fail "$name: not $algo"; }
    if [ "$cal" = 0 ]; then
      # no paper figure: the calibration table's row, never a fitted one
      ! grep -q "paper figure" "$W/$name.paper" || fail "$name: calibrated from a paper figure it has not"
    else
      grep -q "^calibrated: one GPU trains $cal images/s" "$W/$name.paper" ||
        { cat "$W/$name.paper"; fail "$name: not calibrated to $cal images/s"; }
    fi
    echo "ok: $name as its paper ran it: $(grep '^one GPU' "$W/$name.paper")"
  done
  grep -q "fp16, LARS, allreduce hier fp16" "$W/jia2018.paper" || fail "jia2018: not fp16 + LARS + fp16 gradients"
  echo "PASS presets" ;;
calibration)
  # --gpu-img-s X: one GPU's step takes exactly batch/X (the JSON's single_gpu_iter_s, to
  # 1e-6), the roofline's step unchanged; every simulated GPU's compute is scaled by the same
  # factor but for the host's part (the images' upload over PCIe and a launch per kernel: one
  # GPU's step, calibrated, is h + (roofline - h) x factor, h the upload plus a whole number
  # of the V100's 5 us launches) and the allreduce's reductions, which are the communication
  # library's (the compute of 16 GPUs, calibrated, within 4 % of and below the uncalibrated
  # run's kernels times the factor plus h: the reductions, their launches included, are up to
  # 3 % of the rest);
  # a preset's paper figure is dropped for another GPU;
  # bad values and --device cpu exit 2.
  X=$(awk -v r="$(od -An -N2 -tu2 /dev/urandom)" 'BEGIN { printf "%.1f", 50 + r % 2000 }')
  echo "# --gpu-img-s $X"
  G="--gpus 16 --gpus-per-node 8 --nics 1 --precision fp32 --model resnet20 --per-gpu-batch 64 --iters 1 --json --quiet"
  "$DTSIM" $G --calib none >"$W/raw" 2>&1 || { cat "$W/raw"; fail "uncalibrated run"; }
  "$DTSIM" $G --gpu-img-s "$X" >"$W/cal" 2>&1 || { cat "$W/cal"; fail "calibrated run"; }
  one=$(num single_gpu_iter_s "$W/cal"); roof=$(num roofline_single_gpu_iter_s "$W/cal"); s=$(num time_scale "$W/cal")
  close "$one" "$(awk -v x="$X" 'BEGIN { printf "%.12g", 64 / x }')" 1e-6 || fail "one GPU: $one s per step, expected 64/$X"
  close "$roof" "$(num single_gpu_iter_s "$W/raw")" 1e-9 || fail "the roofline step changed with calibration"
  # the step's upload (PCIe, never scaled): 64 images of 3x32x32 fp32 and 64 labels at the
  # V100 profile's 12 GB/s, a 5 us launch each
  up=$(awk 'BEGIN { printf "%.12g", (64 * 3 * 32 * 32 * 4 + 64 * 4) / 12e9 + 2 * 5e-6 }')
  h=$(awk -v o="$one" -v r="$roof" -v b="$s" 'BEGIN { printf "%.12g", (o - r * b) / (1 - b) }')
  awk -v h="$h" -v u="$up" 'BEGIN { k = (h - u) / 5e-6; exit !(k > 100 && (k - int(k + 0.5))^2 < 1e-6) }' ||
    fail "one GPU's unscaled part $h s is not the upload $up s plus whole 5 us launches"
  cr=$(num compute_s "$W/raw"); cc=$(num compute_s "$W/cal")
  cs=$(awk -v a="$cr" -v u="$h" -v b="$s" 'BEGIN { printf "%.12g", (a - u) * b + u }')
  close "$cc" "$cs" 0.04 || fail "16 GPUs' compute $cc s, expected about ($cr - host $h) x $s + $h = $cs"
  awk -v a="$cc" -v b="$cs" 'BEGIN { exit !(a < b * (1 - 1e-6)) }' ||
    fail "16 GPUs' compute $cc s is not below $cs: the allreduce's reductions were scaled too"
  echo "ok: one GPU $one s = 64 / $X (roofline $roof s, kernels x $s, host $h s: upload $up s + launches); 16 GPUs' compute $cc s, just below ($cr - $h) x $s + $h = $cs (the reductions are not scaled)"
  "$DTSIM" --preset goyal2017 --gpus 16 --gpu v100 --iters 1 --warmup 0 >"$W/v100" 2>&1 || { cat "$W/v100"; fail "goyal2017 on v100"; }
  grep -q '^calibrated: dle-pyt-rn50-v100-fp32: one v100 trains 367.0' "$W/v100" || { cat "$W/v100"; fail "goyal2017 on a V100 kept the P100 paper's figure, or did not take the table's V100 fp32 row"; }
  for bad in "--gpu-img-s -5" "--gpu-img-s fast" "--gpu-img-s nan" "--gpu-img-s 100 --device cpu" "--gpu-img-s 1e8"; do
    "$DTSIM" --gpus 16 $bad >"$W/bad" 2>&1; rc=$?
    [ $rc -eq 2 ] || { cat "$W/bad"; fail "'$bad' exited $rc, not 2"; }
    grep -q -- "--gpu-img-s" "$W/bad" || { cat "$W/bad"; fail "'$bad': message does not name --gpu-img-s"; }
  done
  echo "PASS calibration" ;;
profile)
  # dtsim calibrate + dtsim --profile on a profile with fresh random times per layer kind and
  # a dtcoll-bench table made from a fresh random alpha and beta (2 ranks, ring:
  # t = 2 alpha + n beta): calibrate recovers alpha and beta (1e-6); dtsim --profile takes one
  # GPU's step to be exactly the measured one (1e-6); its 2 GPUs' iteration without overlap
  # grows by exactly the allreduces' extra latency when alpha is 10x (the fitted link is the
  # one SimGrid simulates). Bad files and mismatches exit 2, writing nothing.
  R=$(od -An -N4 -tu4 /dev/urandom | awk '{ print $1 % 2147483000 }')  # mawk's srand clamps at 2^31 - 1
  echo "# seed $R"
  mkprof() { awk -v r="$R" -v skip="$1" 'BEGIN { srand(r); n = split("conv.forward conv.backward bn.forward bn.backward relu.forward relu.backward add.forward add.backward avgpool.forward avgpool.backward linear.forward linear.backward rest", k, " ");
    printf "{\"dtlab_profile\": 1, \"model\": \"resnet8\", \"device\": \"cpu\", \"precision\": \"fp32\", \"batch\": 32, \"image_size\": 32, \"channels\": 3, \"classes\": 10, \"steps\": 7, \"kinds\": {";
    s = 0; m = 0; for (i = 1; i <= n; i++) { v = 0.0005 + 0.02 * rand(); if (k[i] == skip) continue; s += v; printf "%s\"%s\": %.9g", m++ ? ", " : "", k[i], v }
    printf "}, \"step_s\": %.12g}\n", s }'; }
  mkprof "" >"$W/step.json"
  mkprof add.forward >"$W/noadd.json"
  A=$(awk -v r="$R" 'BEGIN { srand(r + 1); printf "%.6g", 1e-6 + 2e-5 * rand() }')
  B=$(awk -v r="$R" 'BEGIN { srand(r + 2); printf "%.6g", 1e-10 + 1e-9 * rand() }')
  coll() { echo "ranks,bytes,count,algo,time_us,algbw_gbs,busbw_gbs,mpi_time_us,mpi_busbw_gbs,ratio,check"
    for n in 4096 65536 1048576 16777216; do awk -v a="$1" -v b="$B" -v n=$n 'BEGIN { printf "2,%d,%d,ring,%.6f,1,1,1,1,1,OK\n2,%d,%d,rhd,%.6f,1,1,1,1,1,OK\n", n, n / 4, (2 * a + n * b) * 1e6, n, n / 4, 1e6 * (9e-5 + n * b * 3) }'; done; }
  coll "$A" >"$W/intra.csv"
  coll "$(awk -v a="$A" 'BEGIN { print 10 * a }')" >"$W/slow.csv"
  "$DTSIM" calibrate --step "$W/step.json" --intra "$W/intra.csv" --out "$W/cal.json" >"$W/c.out" 2>&1 || { cat "$W/c.out"; fail "calibrate"; }
  cat "$W/c.out"
  fa=$(num alpha_s "$W/cal.json"); fb=$(num beta_s_per_byte "$W/cal.json")
  close "$fa" "$A" 1e-6 && close "$fb" "$B" 1e-6 || fail "fitted alpha $fa beta $fb, made from $A and $B"
  "$DTSIM" calibrate --step "$W/step.json" --intra "$W/slow.csv" --out "$W/slow.json" >/dev/null 2>&1 || fail "calibrate (slow)"
  # a link whose bytes beyond the first 4 MB (the caches) go a fresh random factor F (1.5-4)
  # slower (4 KB-64 MB, factor 4, rows in a random order): beta is the large sizes' F x B,
  # alpha the small sizes' A (1e-6; one line over all sizes gives neither, and the large
  # sizes' intercept is 2A - (F - 1) x 4 MB x B)
  F=$(awk -v r="$R" 'BEGIN { srand(r + 3); printf "%.6g", 1.5 + 2.5 * rand() }')
  { echo "ranks,bytes,count,algo,time_us,algbw_gbs,busbw_gbs,mpi_time_us,mpi_busbw_gbs,ratio,check"
    for n in 1048576 67108864 4096 262144 16777216 16384 4194304 65536; do awk -v a="$A" -v b="$B" -v f="$F" -v n=$n 'BEGIN { printf "2,%d,%d,ring,%.6f,1,1,1,1,1,OK\n", n, n / 4, (2 * a + n * b + (n > 4194304 ? (f - 1) * (n - 4194304) * b : 0)) * 1e6 }'; done; } >"$W/cache.csv"
  "$DTSIM" calibrate --step "$W/step.json" --intra "$W/cache.csv" --out "$W/cache.json" >"$W/c.out" 2>&1 || { cat "$W/c.out"; fail "calibrate (caches)"; }
  grep -q "intra: alpha .* GB/s (fitted over 4194304-67108864 bytes)" "$W/c.out" || { cat "$W/c.out"; fail "calibrate does not say which sizes it fitted"; }
  ca=$(num alpha_s "$W/cache.json"); cb=$(num beta_s_per_byte "$W/cache.json"); FB=$(awk -v f="$F" -v b="$B" 'BEGIN { printf "%.9g", f * b }')
  close "$ca" "$A" 1e-6 && close "$cb" "$FB" 1e-6 || fail "bandwidth falling by $F at 4 MB: fitted alpha $ca beta $cb, expected $A and $FB"
  echo "ok: bandwidth falling by $F at 4 MB: alpha $ca, beta $cb (the large sizes')"
  G="--gpus 2 --gpus-per-node 2 --algo ring --no-overlap --iters 1 --json --quiet"
  "$DTSIM" --profile "$W/cal.json" $G >"$W/o" 2>&1 || { cat "$W/o"; fail "dtsim --profile"; }
  one=$(num single_gpu_iter_s "$W/o"); step=$(num step_s "$W/step.json")
  close "$one" "$step" 1e-6 || fail "one GPU's step $one s, measured $step s"
  it=$(num iter_s "$W/o")
  # every simulated GPU computes the measured step too (its kernels scaled kind by kind in
  # the rank program, not only in dtsim's single-GPU count; + the allreduce's few kernels)
  close "$(num compute_s "$W/o")" "$step" 0.02 || fail "2 GPUs compute $(num compute_s "$W/o") s per step, measured $step s"
  "$DTSIM" --profile "$W/slow.json" $G >"$W/s" 2>&1 || { cat "$W/s"; fail "dtsim --profile (slow)"; }
  # 10x alpha: the step's allreduces run one after another (the buckets, then the BN
  # statistics and the step's loss; 2 ranks: 2 messages each, the loss a reduce and a
  # broadcast), so the iteration grows by (buckets + 2) x 2 x 9 alpha, within 1 % below and
  # 5 % above
  nb=$(num buckets "$W/o"); grow=$(awk -v a="$(num iter_s "$W/s")" -v b="$it" 'BEGIN { printf "%.9g", a - b }')
  want=$(awk -v n="$nb" -v a="$A" 'BEGIN { printf "%.9g", (n + 2) * 2 * 9 * a }')
  awk -v g="$grow" -v w="$want" 'BEGIN { exit !(g >= 0.99 * w && g <= 1.05 * w) }' ||
    fail "10x alpha made the iteration $grow s longer, expected ($nb buckets + 2) x 2 x 9 x $A = $want s (-1 %, +5 %)"
  echo "ok: alpha $fa beta $fb recovered; one GPU $one s = measured $step s; 10x alpha: +$grow s over $nb bucket(s), the BN statistics and the loss (expected $want s)"
  "$DTSIM" --profile "$W/cal.json" --gpus 2 --gpus-per-node 2 --iters 1 >"$W/txt" 2>&1 || fail "dtsim --profile (table)"
  grep -q "^profiled: $W/cal.json (resnet8, 32 per GPU" "$W/txt" || { cat "$W/txt"; fail "no profiled line"; }
  # measured on the cpu device (one core computes and copies): the allreduce after backward;
  # the same profile measured on a GPU keeps the overlap, and its iteration is shorter
  grep -q "after backward\$" "$W/txt" && grep -q "the allreduce after backward, as on the cpu device" "$W/txt" ||
    { cat "$W/txt"; fail "a cpu profile simulated with overlap"; }
  sed 's/"device": "cpu"/"device": "cuda"/' "$W/cal.json" >"$W/gpu.json"
  "$DTSIM" --profile "$W/gpu.json" --gpus 2 --gpus-per-node 2 --iters 1 >"$W/gtxt" 2>&1 || { cat "$W/gtxt"; fail "dtsim --profile (cuda)"; }
  grep -q "overlapping backward\$" "$W/gtxt" && ! grep -q "as on the cpu device" "$W/gtxt" || { cat "$W/gtxt"; fail "a cuda profile lost its overlap"; }
  echo "ok: cpu profile: allreduce after backward; the same on a GPU overlaps"
  bad() { what=$1; pat=$2; shift 2; rm -f "$W/bad.json"; out=$("$DTSIM" "$@" 2>&1); rc=$?
    [ $rc -eq 2 ] || { echo "$out"; fail "$what: exit $rc, expected 2"; }
    echo "$out" | grep -q -e "$pat" || { echo "$out"; fail "$what: message lacks '$pat'"; }
    [ ! -e "$W/bad.json" ] || fail "$what: left $W/bad.json"; echo "ok: $what -> $(echo "$out" | head -1)"; }
  printf '{"dtlab_profile": 1, "model": ' >"$W/trunc.json"
  sed 's/"kinds": {/"kinds": {"conv.sideways": 1, /' "$W/step.json" >"$W/kind.json"
  sed 's/"step_s": [0-9.e-]*/"step_s": 9/' "$W/step.json" >"$W/sum.json"
  sed 's/"rest": [0-9.e-]*/"rest": -0.5/' "$W/step.json" >"$W/neg.json"
  sed 's/"batch": 32, //' "$W/step.json" >"$W/nobatch.json"
  sed 's/"channels": 3/"channels": 1/' "$W/step.json" >"$W/gray.json"
  head -3 "$W/intra.csv" | grep -v rhd >"$W/short.csv"
  sed 's/^ranks,/rank,/' "$W/intra.csv" >"$W/hdr.csv"
  bad "truncated profile" "trunc.json: not JSON" calibrate --step "$W/trunc.json" --out "$W/bad.json"
  bad "unknown kind" "conv.sideways" calibrate --step "$W/kind.json" --out "$W/bad.json"
  bad "kinds do not add up" "add up to" calibrate --step "$W/sum.json" --out "$W/bad.json"
  bad "negative time" "kinds.rest" calibrate --step "$W/neg.json" --out "$W/bad.json"
  bad "missing batch" "member 'batch'" calibrate --step "$W/nobatch.json" --out "$W/bad.json"
  bad "one ring row" "short.csv: 1 row" calibrate --step "$W/step.json" --intra "$W/short.csv" --out "$W/bad.json"
  bad "not dtcoll-bench's table" "hdr.csv: line 1" calibrate --step "$W/step.json" --intra "$W/hdr.csv" --out "$W/bad.json"
  bad "no --out" "required" calibrate --step "$W/step.json"
  bad "missing file" "no/such.json" --profile "$W/no/such.json" --gpus 2
  bad "another model" "not --model resnet20" --profile "$W/cal.json" --model resnet20 --gpus 2
  bad "1-channel images" "gray.json.*3 channels" --profile "$W/gray.json" --gpus 2
  bad "a kind the network has" "has no add.forward" --profile "$W/noadd.json" --gpus 2 --gpus-per-node 2
  bad "with --gpu-img-s" "not with --gpu-img-s" --profile "$W/cal.json" --gpu-img-s 100 --gpus 2
  echo "PASS profile" ;;
coarsen_dbtree)
  # --coarsen-dbtree K: dbtree's pipeline merged K segments per simulated message
  # (nn/coll/coll_coarsen.c; within 1 % of the cost model on an uncontended fabric, tests/coll
  # coarsened cases). Here on a fat tree of one EDR NIC per node (the default node before it
  # had a DGX-1's four: with four, the simulated dbtree is 26 % under the model, a gap of the
  # fabric's model, not of the coarsening), the allreduce after backward: the option
  # reaches the ranks (the time moves), the iteration moves by at most 2 %, and the
  # coarsened allreduce stays within 3 % of the α-β-γ model.
  O="--gpus 32 --nics 1 --algo dbtree --no-overlap --iters 1 --json --quiet"
  "$DTSIM" $O >"$W/fine" 2>&1 || { cat "$W/fine"; fail "fine dbtree"; }
  "$DTSIM" $O --coarsen-dbtree 4 >"$W/coarse" 2>&1 || { cat "$W/coarse"; fail "--coarsen-dbtree 4"; }
  a=$(num iter_s "$W/fine"); b=$(num iter_s "$W/coarse"); c=$(num comm_s "$W/coarse"); m=$(num model_comm_s "$W/coarse")
  [ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ] || fail "--coarsen-dbtree 4 changed nothing: $a s, $b s"
  close "$b" "$a" 0.02 || fail "--coarsen-dbtree 4: iteration $b s, segment by segment $a s: more than 2 % apart"
  close "$c" "$m" 0.03 || fail "--coarsen-dbtree 4: allreduces $c s, model $m s: more than 3 % apart"
  echo "ok: dbtree coarsened by 4: iteration $b s (segment by segment $a s), allreduces $c s (model $m s)"
  echo "PASS coarsen_dbtree" ;;
preloads)
  # SimGrid runs with jemalloc (where the build found it: DT_JEMALLOC) and the CPU-time shim
  # preloaded (sim/dtsim_run.c), for speed only: every figure of the result is the same to
  # the last digit without them, for each algorithm whose polls differ (hier, rhd, dbtree);
  # and jemalloc is the run's allocator (its statistics, MALLOC_CONF=stats_print:true, are
  # printed at exit by jemalloc alone). The JSON line is compared; the table has the wall time.
  for a in hier rhd dbtree; do
    O="--gpus 32 --algo $a --iters 1 --json --quiet"
    "$DTSIM" $O >"$W/with" 2>&1 || { cat "$W/with"; fail "$a with the preloads"; }
    DTSIM_MALLOC=0 DTSIM_CPUTIME_SHIM=0 "$DTSIM" $O >"$W/without" 2>&1 ||
      { cat "$W/without"; fail "$a without the preloads"; }
    [ -n "$(num iter_s "$W/with")" ] || { cat "$W/with"; fail "$a: no result"; }
    grep '^\[{' "$W/with" >"$W/with.json"; grep '^\[{' "$W/without" >"$W/without.json"
    cmp -s "$W/with.json" "$W/without.json" ||
      { diff "$W/with.json" "$W/without.json"; fail "$a: the preloads changed the result"; }
    echo "ok: $a: $(num iter_s "$W/with") s per iteration with and without the preloads"
  done
  n() { MALLOC_CONF=stats_print:true "$@" "$DTSIM" --gpus 4 --iters 1 --quiet 2>&1 | grep -c "Begin jemalloc statistics"; }
  case "${DT_JEMALLOC:-}" in
  ""|*NOTFOUND) echo "SKIPPED: the build found no jemalloc (apt-get install libjemalloc2)" ;;
  *) [ "$(n env)" -ge 1 ] || fail "jemalloc ($DT_JEMALLOC) is not SimGrid's allocator"
     [ "$(n env DTSIM_MALLOC=0)" -eq 0 ] || fail "DTSIM_MALLOC=0 still runs jemalloc"
     echo "ok: SimGrid allocates with $DT_JEMALLOC; DTSIM_MALLOC=0 turns it off" ;;
  esac
  echo "PASS preloads" ;;
walltime)
  # SimGrid's time said before it starts (sim/dtsim_walltime.c): 6144 GPUs with the ring lie
  # between bench/DTSIM-SPEED.md's measured 4096 and 8192; the estimate, recomputed here from
  # that table in log-log, is beyond --max-sim-minutes 0.5, so the run is answered with
  # --analytic and says why, with the estimate, in its JSON
  "$DTSIM" --gpus 6144 --algo ring --iters 1 --max-sim-minutes 0.5 --json --quiet >"$W/w.json" 2>"$W/w.err" ||
    { cat "$W/w.err"; fail "6144 GPUs, --max-sim-minutes 0.5"; }
  "$PY" - "$W/w.json" "$(dirname "$0")/../../bench/DTSIM-SPEED.md" <<'PYEOF' || fail "the estimate"
import json, math, re, sys
r = json.load(open(sys.argv[1]))[0]
rows = {}
for line in open(sys.argv[2]):
    m = re.match(r"^\| ([0-9,]+) \| ring \| ([0-9.]+) \| [0-9.]+ \| [0-9.]+ \| [0-9,]+ \| [0-9.]* ?\|$", line)
    if m:
        rows.setdefault(int(m.group(1).replace(",", "")), float(m.group(2)))
lo, hi = 4096, 8192
s = rows[lo] * math.exp(math.log(rows[hi] / rows[lo]) / math.log(hi / lo) * math.log(6144 / lo))
want = "about %dm%02ds" % (int(s / 60), int(math.fmod(s, 60)))
warn = " ".join(r.get("warnings", []))
assert want in warn and "--max-sim-minutes" in warn and "--analytic" in warn, (want, warn)
assert r["iter_s"] > 0, r
print("ok: 6144 GPUs, ring: %s of SimGrid (recomputed: %.1f s from 4096's %.2f and 8192's %.2f s), answered analytic" % (want, s, rows[lo], rows[hi]))
PYEOF
  echo "PASS walltime" ;;
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
  expect2 "bad coarsening" "--coarsen-dbtree" --gpus 16 --algo dbtree --coarsen-dbtree 0
  # a per-GPU batch whose single largest buffer cannot be mapped: exit 2 before simulating,
  # saying what to change (the whole modelled memory never needs to fit)
  expect2 "absurd per-GPU batch" "lower --per-gpu-batch" --gpus 16 --per-gpu-batch 60000
  expect2 "a batch beyond the GPU's memory" "dtsim: resnet50 at 2048 images per GPU needs" --gpus 8 --gpu v100 --per-gpu-batch 2048
  # more simulated GPUs than memory holds (the estimate: 2^20 GPUs need ~57 TiB): exit 2
  # before simulating, with the count that fits and the override
  # (a single run is answered analytically instead, saying so and why, in the JSON too)
  "$DTSIM" --gpus 1048576 --iters 1 --json >"$W/big.json" 2>"$W/big.err" || { cat "$W/big.err"; fail "1M GPUs: exit $?"; }
  grep -q "dtsim: warning: simulating 1048576 GPUs needs about .* GiB of memory .* GPUs fit here: answered with --analytic instead" "$W/big.err" ||
    { cat "$W/big.err"; fail "1M GPUs: no warning that it moved to --analytic"; }
  "$PY" -c 'import json,sys; r=json.load(open(sys.argv[1]))[0]; assert r["analytic"] is True and any("answered with --analytic" in w for w in r["warnings"]), r' "$W/big.json" ||
    fail "1M GPUs: the JSON does not say it is analytic, or lacks the warning"
  echo "ok: 1M GPUs: answered with --analytic, the warning on stderr and in the JSON"
  expect2 "more GPUs than memory holds, in a sweep" "GPUs fit here" sweep --sweep-gpus 16,1048576
  # an output that cannot be written is refused before the simulation, not after it
  expect2 "unwritable trace" "no/such/dir/t.json" --gpus 16 --trace "$W/no/such/dir/t.json"
  expect2 "unwritable csv" "no/such/dir/r.csv" --gpus 16 --csv "$W/no/such/dir/r.csv"
  # the rank program is told its run by one file (sim/rank_run.h): the command DTSIM_VERBOSE
  # prints reruns it by hand in the folder --keep leaves; no file, an absent, foreign, cut or
  # other-version one is refused by the rank program with exit 2, saying which
  DTSIM_VERBOSE=1 TMPDIR="$W" "$DTSIM" --gpus 8 --iters 1 --keep --quiet >/dev/null 2>"$W/v" ||
    { cat "$W/v"; fail "dtsim --keep"; }
  cmd=$(sed -n 's/^dtsim: running //p' "$W/v")
  run=${cmd##* } cmd=${cmd% *}
  [ -s "$run" ] || { cat "$W/v"; fail "no run description kept: $run"; }
  $cmd "$run" >"$W/rank.out" 2>&1 || { cat "$W/rank.out"; fail "the kept run, by hand"; }
  rank2() { what=$1; pat=$2; shift 2; out=$($cmd "$@" 2>&1); rc=$?; [ $rc -eq 2 ] || { echo "$out"; fail "rank program, $what: exit $rc, expected 2"; }; echo "$out" | grep -q -e "$pat" || { echo "$out"; fail "rank program, $what: message lacks '$pat'"; }; echo "ok: rank program, $what -> $(echo "$out" | grep -m1 -e "$pat")"; }
  rank2 "no run description" "usage: dtsim_rank.so RUN"
  rank2 "an absent one" "No such file" "$W/none.bin"
  rank2 "a foreign one" "not a dtsim run description" "$W/v"
  head -c 100 "$run" >"$W/cut.bin"
  rank2 "a cut one" "truncated" "$W/cut.bin"
  { printf 'dtsimrun\377\000\000\000'; tail -c +13 "$run"; } >"$W/v255.bin"
  rank2 "another version" "version 255 of .* different builds" "$W/v255.bin"
  echo "PASS bad_input" ;;
*) echo "unknown case $CASE"; exit 2 ;;
esac
