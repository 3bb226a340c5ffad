#!/bin/sh
# dtsim_gpt.sh CASE — transformers and ZeRO in dtsim (sim/dtsim_gpt.c, sim/rank_zero.c,
# sim/zero.c). DTSIM = the program; PY = a Python 3 (the references are computed here).
#   zero    GPT-2 124M on 16 simulated GPUs at ZeRO stages 0-3 (SimGrid) and --analytic: the
#           parameter count against GPT-2's closed form V*C + T*C + L*(12C^2 + 13C) + 2C; the
#           memory fields against the ZeRO paper's 2Ψ + 2Ψ + KΨ (K = 12, mixed-precision Adam)
#           divided stage by stage, recomputed here; stage 3's collectives take 1.5x stage 1's
#           time (1.5x the data, bandwidth-bound) within 10 %, stages 1 and 2 the same bits;
#           SimGrid and the analytic model within 10 % of each other
#   refuse  a model that does not fit its GPU's memory (exit 2, the reason and the GPU's
#           size), the same model fitting once sharded (stage 3); a stage on one GPU, an
#           unknown stage, an image optimizer for a gpt model and the reverse: exit 2
set -u
CASE=$1
W=$(mktemp -d "${TMPDIR:-/tmp}/dtsim_gpt_${CASE}_XXXXXX")
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
expect2() {
  what=$1; pat=$2; shift 2
  out=$("$DTSIM" "$@" 2>&1); rc=$?
  [ $rc -eq 2 ] || { echo "$out"; fail "$what: exit $rc, expected 2"; }
  echo "$out" | grep -q -e "$pat" || { echo "$out"; fail "$what: message lacks '$pat'"; }
  echo "ok: $what -> $(echo "$out" | grep -m1 -e "$pat" | cut -c1-160)"
}

case "$CASE" in
zero)
  B="--model gpt2 --gpus 16 --per-gpu-batch 1 --precision fp16 --iters 1 --warmup 1 --json --quiet"
  for s in 0 1 2 3; do
    "$DTSIM" $B --shard $s >"$W/sim$s.json" || fail "stage $s (SimGrid)"
    "$DTSIM" $B --shard $s --analytic >"$W/ana$s.json" || fail "stage $s (--analytic)"
  done
  "$PY" - "$W" <<'PYEOF' || exit 1
import json, sys
w = sys.argv[1]
def row(n): return json.load(open(f"{w}/{n}.json"))[0]
def check(ok, msg):
    print(("ok: " if ok else "FAIL: ") + msg)
    if not ok: sys.exit(1)
V, T, L, C = 50257, 1024, 12, 768
psi = V * C + T * C + L * (12 * C * C + 13 * C) + 2 * C
sim = [row(f"sim{s}") for s in range(4)]
ana = [row(f"ana{s}") for s in range(4)]
check(sim[0]["params"] == psi, f"GPT-2 small has {sim[0]['params']} parameters, closed form {psi}")
N = 16
for s in range(4):
    r = sim[s]
    want = {"mem_params_bytes": 2 * psi / (N if s >= 3 else 1),
            "mem_grads_bytes": 2 * psi / (N if s >= 2 else 1),
            "mem_optim_bytes": 12 * psi / (N if s >= 1 else 1)}
    for k, v in want.items():
        check(abs(r[k] - v) <= 1e-9 * v, f"stage {s}: {k} {r[k]:.6g} = {v:.6g}")
    tot = sum(r[k] for k in want) + r["mem_activations_bytes"]
    check(abs(r["mem_total_bytes"] - tot) <= 1e-9 * tot, f"stage {s}: the total adds up")
    check(r["mem_activations_bytes"] == sim[0]["mem_activations_bytes"] > 0,
          f"stage {s}: activations not sharded")
    check(r["iter_s"] >= r["compute_s"], f"stage {s}: the step is at least its compute")
    d = abs(ana[s]["iter_s"] / r["iter_s"] - 1)
    check(d < 0.10, f"stage {s}: analytic {ana[s]['iter_s']:.4f} s vs SimGrid {r['iter_s']:.4f} s ({100*d:.1f} %)")
check(sim[1]["comm_s"] == sim[2]["comm_s"], "stages 1 and 2 send the same messages")
q = sim[3]["comm_s"] / sim[1]["comm_s"]
check(abs(q - 1.5) < 0.15, f"stage 3's collectives take {q:.3f}x stage 1's (1.5x the data)")
PYEOF
  echo "PASS zero"
  ;;
refuse)
  A="--gpus 64 --per-gpu-batch 1 --precision fp16 --analytic"
  expect2 "gpt2-xl unsharded on 16 GiB V100s" "does not fit: one v100 has 16 GiB" \
      --model gpt2-xl --gpu v100 $A
  out=$("$DTSIM" --model gpt2-xl --gpu v100 $A --shard 3 2>&1) || { echo "$out"; fail "stage 3 should fit"; }
  echo "$out" | grep -q "memory per GPU, ZeRO stage 3 (parameters)" || { echo "$out"; fail "no memory line"; }
  echo "ok: gpt2-xl on V100s at stage 3 fits: $(echo "$out" | grep -m1 'memory per GPU' | cut -c1-80)"
  expect2 "gpt3-175b on one A100 at any stage" "does not fit" --model gpt3-175b --gpu a100 \
      --gpus 8 --per-gpu-batch 1 --precision fp16 --shard 3 --analytic
  expect2 "a stage on one GPU" "one GPU has nobody to shard with" --model gpt2 --gpus 1 --shard 1 --analytic
  expect2 "stage 4" "option --shard" --model gpt2 --gpus 8 --shard 4 --analytic
  expect2 "SGD for a gpt model" "adamw or lamb" --model gpt2 --gpus 8 --optimizer sgd --analytic
  expect2 "AdamW for ResNet-50" "image models train" --model resnet50 --gpus 8 --optimizer adamw --analytic
  echo "PASS refuse"
  ;;
*) fail "unknown case $CASE" ;;
esac
