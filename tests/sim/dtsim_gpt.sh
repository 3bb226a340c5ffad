#!/bin/sh
# dtsim_gpt.sh CASE — transformers and ZeRO in dtsim (sim/dtsim_gpt.c, sim/rank_zero.c,
# sim/zero.c). DTSIM = the program; PY = a Python 3 (the references are computed here).
#   zero    GPT-2 124M on 16 simulated GPUs at ZeRO stages 0-3 (SimGrid) and --analytic: the
#           parameter count against GPT-2's closed form V*C + T*C + L*(12C^2 + 13C) + 2C; the
#           memory fields against the ZeRO paper's 2Ψ + 2Ψ + KΨ (K = 12, mixed-precision Adam)
#           divided stage by stage, recomputed here, stage 3's parameters with the two layers
#           gathered at once (the tied embedding and the next layer's 2C); stages 1 and 2 the
#           same bits; SimGrid and the analytic model within 10 % of each other
#   zero3   stage 3 per layer (dtrain's schedule, nn/train_zero.c) on 8 GPUs of one node: the
#           bytes each GPU's collectives sent against the ZeRO paper's 1.5x of a plain
#           allreduce's 2Ψ(N-1)/N (plus GPT-2's tied embedding, gathered once more per pass);
#           the step between the compute-only bound and the no-overlap bounds (simulated:
#           compute + the same schedule with the kernels made 10^3x faster; closed form:
#           --analytic, the collectives one after another), the prefetch hiding some of it
#   plan    dtsim plan over the stages: the unsharded candidate rejected for its memory, the
#           sharded one ranked with stage 3's memory (the gathered layers included) and time
#           (the per-layer collectives) as dtsim gives them
#   preset  dle-bert (NVIDIA's BERT-Large on 32 DGX A100) at 8 and 256 GPUs: its calibration and
#           inputs, and its score within the committed error of bench/PAPERS.md (PAPERS = it)
#   words   a gpt run says sequences (and tokens) where an image model says images: the
#           set-up, the table's header, one GPU's rate, time-to-train, the CSV header; no
#           "image" in its report; ResNet-50's lines as before
#   refuse  a model that does not fit its GPU's memory (exit 2, the reason and the GPU's
#           size), the same model fitting once sharded (stage 3); a stage on one GPU, an
#           unknown stage, an image optimizer for a gpt model and the reverse: exit 2
set -u
CHECKS=$(dirname "$0")/checks.py  # check(ok, msg), row(name)
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
  "$PY" "$CHECKS" "$W" <<'PYEOF' || exit 1
import json, sys
V, T, L, C = 50257, 1024, 12, 768
psi = V * C + T * C + L * (12 * C * C + 13 * C) + 2 * C
sim = [row(f"sim{s}") for s in range(4)]
ana = [row(f"ana{s}") for s in range(4)]
check(sim[0]["params"] == psi, f"GPT-2 small has {sim[0]['params']} parameters, closed form {psi}")
N = 16
for s in range(4):
    r = sim[s]
    gathered = 2 * (V * C + T * C + 2 * C) if s >= 3 else 0  # the tied embedding + ln_f
    want = {"mem_params_bytes": 2 * psi / (N if s >= 3 else 1) + gathered,
            "mem_grads_bytes": 2 * psi / (N if s >= 2 else 1),
            "mem_optim_bytes": 12 * psi / (N if s >= 1 else 1)}
    for k, v in want.items():
        check(abs(r[k] - v) <= 1e-9 * v, f"stage {s}: {k} {r[k]:.6g} = {v:.6g}")
    tot = sum(r[k] for k in want) + r["mem_activations_bytes"]
    check(abs(r["mem_total_bytes"] - tot) <= 1e-9 * tot, f"stage {s}: the total adds up")
    check(r["mem_activations_bytes"] == sim[0]["mem_activations_bytes"] > 0,
          f"stage {s}: activations not sharded")
    check(r["iter_s"] >= r["compute_s"], f"stage {s}: the step is at least its compute")
    a = ana[s]
    check(a["iter_s"] >= a["compute_s"] and a["exposed_s"] >= 0,
          f"stage {s}: the analytic step {a['iter_s']:.4f} s is at least its compute {a['compute_s']:.4f} s")
    if s < 3:
        d = abs(a["iter_s"] / r["iter_s"] - 1)
        check(d < 0.10, f"stage {s}: analytic {a['iter_s']:.4f} s vs SimGrid {r['iter_s']:.4f} s ({100*d:.1f} %)")
    else:  # the analytic's collectives progress while the layers compute, SimGrid's at polls
        bound = a["compute_s"] + a["model_comm_s"]
        check(a["compute_s"] < a["iter_s"] <= r["iter_s"] <= bound * 1.02,
              f"stage 3: compute {a['compute_s']:.4f} s < analytic {a['iter_s']:.4f} s <= SimGrid "
              f"{r['iter_s']:.4f} s <= compute + every collective {bound:.4f} s")
check(sim[1]["comm_s"] == sim[2]["comm_s"], "stages 1 and 2 send the same messages")
check(sim[3]["mem_params_gathered_bytes"] == 2 * (V * C + T * C + 2 * C),
      f"stage 3 gathers {sim[3]['mem_params_gathered_bytes']:.0f} bytes at once")
PYEOF
  echo "PASS zero"
  ;;
zero3)
  B="--model gpt2 --gpus 8 --per-gpu-batch 4 --precision fp16 --calib none --algo ring --iters 1 --warmup 1 --json --quiet"
  "$DTSIM" $B --shard 0 --fusion none >"$W/s0.json" || fail "stage 0"
  "$DTSIM" $B --shard 3 >"$W/s3.json" || fail "stage 3"
  "$DTSIM" $B --shard 3 --analytic >"$W/a3.json" || fail "stage 3 --analytic"
  "$DTSIM" $B --shard 3 --shard-units block >"$W/b3.json" || fail "stage 3, a block at a time"
  "$DTSIM" $B --shard 3 --shard-units block --analytic >"$W/ba3.json" || fail "stage 3, blocks, --analytic"
  slow=$("$PY" -c "import json; r = json.load(open('$W/s3.json'))[0]; print(4e-3 / r['single_gpu_iter_s'])")
  "$DTSIM" $(echo "$B" | sed 's/--calib none//') --shard 3 --gpu-img-s "$slow" --analytic >"$W/k3a.json" || fail "stage 3 --analytic, compute alone"
  # the kernels' work 10^3x cheaper than the host's part of the step (its launches and upload,
  # H, which no calibration scales: one GPU's calibrated step is H + (roofline - H) x factor,
  # H solved from the slow run's): the schedule's communication beside the launches alone
  r=$("$PY" -c "import json; k = json.load(open('$W/k3a.json'))[0]; s, one, roof = k['time_scale'], k['single_gpu_iter_s'], k['roofline_single_gpu_iter_s']; h = (one - s * roof) / (1 - s); print(4 / (h + 1e-3 * (roof - h)))")
  "$DTSIM" $(echo "$B" | sed 's/--calib none//') --shard 3 --gpu-img-s "$r" >"$W/c3.json" || fail "stage 3, communication alone"
  "$DTSIM" $(echo "$B" | sed 's/--calib none//') --shard 3 --gpu-img-s "$r" --analytic >"$W/c3a.json" || fail "stage 3 --analytic, communication alone"
  "$PY" "$CHECKS" "$W" <<'PYEOF' || exit 1
import json, sys
V, T, L, C, N = 50257, 1024, 12, 768, 8
psi = V * C + T * C + L * (12 * C * C + 13 * C) + 2 * C
s0, s3, a3, c3 = row("s0"), row("s3"), row("a3"), row("c3")
f = (N - 1) / N
plain = 2 * psi * 4 * f  # a ring allreduce of the fp32 gradient: 2Ψ(N-1)/N elements
check(abs(s0["comm_bytes_per_gpu"] / plain - 1) < 1e-6,
      f"plain allreduce sent {s0['comm_bytes_per_gpu']:.0f} bytes per GPU, 2Ψ(N-1)/N x 4 = {plain:.0f}")
tied = 2 * (V * C + T * C) * 4 * f  # the embedding unit gathered again for the head, both passes
want = 1.5 * plain + tied
got = s3["comm_bytes_per_gpu"]
check(abs(got / want - 1) < 1e-6, f"stage 3 sent {got:.0f} bytes per GPU = 1.5 x plain + the tied "
      f"embedding's {tied:.0f} = {want:.0f} ({got / plain:.4f}x plain; ZeRO §7.2.2: 1.5x)")
check(abs(a3["comm_bytes_per_gpu"] / got - 1) < 1e-6, f"--analytic's closed form (each unit's "
      f"gathers counted from the layers) gives the same bytes: {a3['comm_bytes_per_gpu']:.0f}")
check(s3["buckets"] == 2 + 6 * L, f"{s3['buckets']} units: the embedding, 6 per block (2 norms, 4 linears), ln_f")
# --shard-units block (FSDP's auto-wrap): a unit per block, the same bytes (each unit gathered
# for forward and backward, reduce-scattered once), fewer and larger collectives
b3, ba3 = row("b3"), row("ba3")
check(b3["buckets"] == 2 + L and ba3["buckets"] == 2 + L,
      f"{b3['buckets']} units a block at a time: the embedding, the {L} blocks, ln_f")
check(abs(b3["comm_bytes_per_gpu"] / want - 1) < 1e-6 and
      abs(ba3["comm_bytes_per_gpu"] / want - 1) < 1e-6,
      f"... sending the same {b3['comm_bytes_per_gpu']:.0f} bytes per GPU (--analytic "
      f"{ba3['comm_bytes_per_gpu']:.0f})")
it, cp = s3["iter_s"], s3["compute_s"]
alone = c3["iter_s"] - c3["compute_s"]  # the schedule's communication beside the launches alone
check(cp < it, f"the step {1e3 * it:.2f} ms is longer than its compute {1e3 * cp:.2f} ms")
check(it <= cp + alone, f"... and at most compute + the communication alone "
      f"{1e3 * (cp + alone):.2f} ms (simulated no-overlap bound)")
check(it <= cp + s3["model_comm_s"], f"... and compute + the collectives one after another "
      f"(α-β-γ) {1e3 * (cp + s3['model_comm_s']):.2f} ms")
check(s3["exposed_s"] < alone, f"the prefetch hides part of it: {1e3 * s3['exposed_s']:.2f} ms "
      f"exposed of {1e3 * alone:.2f} ({100 * (1 - s3['exposed_s'] / alone):.0f} % hidden)")
free = a3["compute_s"] + a3["exposed_s"]
nothing = a3["compute_s"] + a3["model_comm_s"]
check(a3["compute_s"] < a3["iter_s"] < nothing, f"--analytic {1e3 * a3['iter_s']:.2f} ms lies between "
      f"its compute {1e3 * a3['compute_s']:.2f} and compute + every collective {1e3 * nothing:.2f} ms")
check(abs(free / a3["iter_s"] - 1) < 1e-9, "--analytic's step is its compute + what it exposes")
check(a3["iter_s"] <= it <= nothing * 1.02, f"SimGrid's step {1e3 * it:.2f} ms between --analytic's "
      f"{1e3 * a3['iter_s']:.2f} (collectives progressing on their own) and the no-overlap bound "
      f"{1e3 * nothing:.2f} ms (the trainer's polls gate its rounds)")
k = row("k3a")  # kernels 10^3x slower: every collective hides but the first gather
check(0 <= k["exposed_s"] < 0.01 * k["compute_s"], f"compute-bound --analytic exposes "
      f"{1e3 * k['exposed_s']:.3f} ms of {1e3 * k['model_comm_s']:.3f} beside {1e3 * k['compute_s']:.1f} ms of compute")
# the timeline's closed form in the limit: collectives 10^3x cheaper than the compute hide
# (all but the first gather); kernels 10^3x faster leave the channel alone (every collective)
x = row("c3a")
check(x["iter_s"] >= x["compute_s"] + 0.9 * x["model_comm_s"],
      f"compute-free --analytic {1e3 * x['iter_s']:.3f} ms ~ its collectives one after another "
      f"{1e3 * (x['compute_s'] + x['model_comm_s']):.3f} ms")
check(abs(a3["model_comm_s"] / s3["model_comm_s"] - 1) < 1e-9, "the same collectives priced")
PYEOF
  echo "PASS zero3"
  ;;
words)
  "$DTSIM" --model gpt2 --gpus 16 --per-gpu-batch 2 --analytic >"$W/g.txt" 2>&1 || { cat "$W/g.txt"; fail "gpt2"; }
  "$DTSIM" --model gpt2 --gpus 16 --per-gpu-batch 2 --analytic --quiet --csv - >"$W/g.csv" || fail "gpt2 --csv"
  "$DTSIM" --model resnet50 --gpus 16 --analytic >"$W/r.txt" 2>&1 || { cat "$W/r.txt"; fail "resnet50"; }
  for pat in "^       gpt2, 2 sequences per GPU (global batch 32)" " sequences/s  *eff %" \
             "^one GPU: .* ms per iteration ([1-9][0-9]* sequences/s)$" \
             "^time-to-train: .*, 1 epochs of 292968750 sequences of 1024 tokens$" \
             "^tokens/s: .* (2 sequences of 1024 tokens per GPU"; do
    grep -q -e "$pat" "$W/g.txt" || { cat "$W/g.txt"; fail "gpt2's report lacks '$pat'"; }
  done
  ! grep -i "image" "$W/g.txt" || fail "gpt2's report speaks of images"
  head -1 "$W/g.csv" | grep -q ",exposed_s,sequences_per_s,efficiency," || { head -1 "$W/g.csv"; fail "CSV header"; }
  for pat in "^       resnet50, 32 images per GPU (global batch 512)" " images/s  *eff %" \
             "^one GPU: .* ms per iteration ([1-9][0-9]* images/s)$" \
             "^time-to-train: .*, 90 epochs of 1281167 images$"; do
    grep -q -e "$pat" "$W/r.txt" || { cat "$W/r.txt"; fail "resnet50's report lacks '$pat'"; }
  done
  echo "ok: gpt2 reports sequences and tokens, resnet50 images"
  echo "PASS words"
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
plan)
  # dtsim plan searches the stage: GPT-2 XL does not fit unsharded on 16 GiB V100s (rejected
  # with its memory), fits at stage 3 (ranked, its flags carry --shard 3)
  "$DTSIM" plan --model gpt2-xl --gpu v100 --gpus 64 --per-gpu-batch 1 --algos ring \
      --shard 0,3 --price v100=2 --confirm 0 --json >"$W/plan.json" 2>"$W/plan.err" ||
      { cat "$W/plan.err"; fail "plan"; }
  flags=$("$PY" -c "import json; print(json.load(open('$W/plan.json'))['ranked'][0]['flags'])")
  "$DTSIM" $flags --analytic --json --quiet >"$W/one.json" || fail "the ranked candidate: $flags"
  "$PY" "$CHECKS" "$W/plan.json" "$W/one.json" <<'PYEOF' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
one = json.load(open(sys.argv[2]))[0]
check(d["candidates"] == 2, f"two candidates ({d['candidates']})")
check(len(d["ranked"]) == 1 and d["ranked"][0].get("shard") == "3", "stage 3 ranked")
check("--shard 3" in d["ranked"][0]["flags"], "its flags rerun it at stage 3")
check(d["ranked"][0]["mem_bytes_per_gpu"] < 16 * 2**30,
      f"it fits: {d['ranked'][0]['mem_bytes_per_gpu'] / 2**30:.1f} GiB of 16")
V, T, C = 50257, 1024, 1600
check(one["mem_params_gathered_bytes"] == 2 * (V * C + T * C + 2 * C),
      "stage 3 holds the tied embedding and the next layer gathered (fp16)")
check(d["ranked"][0]["mem_bytes_per_gpu"] == one["mem_total_bytes"],
      "the plan's memory is dtsim's, the gathered layers included")
check(d["ranked"][0]["train_s"] == one["train_s"], "the plan's time is dtsim's at stage 3 (per-layer collectives)")
check(len(d["rejected"]) == 1 and "--shard 0" in d["rejected"][0]["flags"],
      f"stage 0 rejected: {d['rejected'][0]['reason'] if d['rejected'] else None}")
PYEOF
  echo "PASS plan"
  ;;
preset)
  # the transformer preset as published (bench/PAPERS.md, "Transformers"): 256 GPUs and the
  # 8-GPU baseline at the global batch of 32K; its calibration (210 sequences/s per GPU),
  # its inputs, and its figure within the committed error of bench/PAPERS.md (+-1 point)
  for g in 8 256; do
    per=$((32768 / g))
    "$DTSIM" --preset dle-bert --gpus $g --per-gpu-batch $per --accumulate $((per / 32)) \
        --iters 1 --warmup 1 >"$W/bert$g.txt" 2>&1 || { cat "$W/bert$g.txt"; fail "dle-bert $g GPUs"; }
    "$DTSIM" --preset dle-bert --gpus $g --per-gpu-batch $per --accumulate $((per / 32)) \
        --iters 1 --warmup 1 --json --quiet >"$W/bert$g.json" || fail "dle-bert $g GPUs --json"
  done
  grep -q "^calibrated: one GPU trains 210.0 sequences/s at 32 per GPU in fp16" "$W/bert8.txt" ||
      { cat "$W/bert8.txt"; fail "not calibrated to 210 sequences/s"; }
  grep -q "gpt2-medium, .*fp16, naive attention, LAMB, allreduce hier" "$W/bert8.txt" || fail "not the paper's set-up"
  grep -q "tokens/s: .* sequences of 512 tokens" "$W/bert8.txt" || fail "not 512 tokens"
  "$PY" "$CHECKS" "$W" "$PAPERS" <<'PYEOF' || exit 1
import json, re, sys
papers = sys.argv[2]
C, L, V, N_CTX = 1024, 24, 30522, 1024  # gpt2-medium keeps its 1024 positions at 512 tokens
psi = V * C + N_CTX * C + L * (12 * C * C + 13 * C) + 2 * C
r8, r256 = row("bert8"), row("bert256")
check(r256["params"] == psi, f"{r256['params']} parameters (closed form {psi}; BERT-Large 340M)")
m = re.search(r"^\| dle-bert \| 256 \| 49663 \| (\d+) \| ([-+0-9.]+) % \|.*\| ([-+0-9.]+) pt \|$",
              open(papers).read(), re.M)
check(m is not None, "bench/PAPERS.md has the dle-bert row")
err = r256["images_per_s"] / 49663 - 1
check(abs(100 * err - float(m.group(2))) <= 1.0, f"256 GPUs: {r256['images_per_s']:.0f} sequences/s, "
      f"{100 * err:+.1f} % against the published 49663 (committed {m.group(2)} %)")
eff = (r256["images_per_s"] / 256) / (r8["images_per_s"] / 8)
pe = (49663 / 256) / (1648 / 8)
check(abs(100 * (eff - pe) - float(m.group(3))) <= 1.0, f"scaling 256 vs 8: {100 * eff:.1f} % "
      f"against the published {100 * pe:.1f} % (committed {m.group(3)} pt)")
PYEOF
  echo "PASS preset"
  ;;
*) fail "unknown case $CASE" ;;
esac
