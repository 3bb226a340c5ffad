#!/bin/sh
# dtsim_faults.sh CASE — dtsim on a cluster that is not perfect (sim/dtsim_faults.c). DTSIM =
# the program; PY = a Python 3 (the independent references are computed here, in float64).
#   stragglers  the simulated penalty of slow GPUs against closed forms: a rank 1.5x slower
#               adds half a compute to a step without overlap; a per-step lognormal slowdown
#               of CV 0.05 on 64 GPUs adds between half of compute x (E[max of 64 draws] - 1)
#               and the 99.5th percentile of its 24-step mean (Monte-Carlo here: the ring
#               absorbs part of it); the same spec and seed give the same bits, another
#               seed other ones; percentiles ordered; bad specs refused with exit 2
#   goodput     the failure figures in the JSON against the closed form recomputed here
#               (Daly 2006), the Monte-Carlo within its interval, more failures cost more,
#               bad combinations refused with exit 2
set -u
CHECKS=$(dirname "$0")/checks.py  # check(ok, msg), row(name)
CASE=$1
W=$(mktemp -d "${TMPDIR:-/tmp}/dtsim_faults_${CASE}_XXXXXX")
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
field() { "$PY" -c "import json,sys; print(repr(json.load(open(sys.argv[1]))[0][sys.argv[2]]))" "$1" "$2"; }
expect2() {
  what=$1; pat=$2; shift 2
  out=$("$DTSIM" "$@" 2>&1); rc=$?
  [ $rc -eq 2 ] || { echo "$out"; fail "$what: exit $rc, expected 2"; }
  echo "$out" | grep -q -e "$pat" || { echo "$out"; fail "$what: message lacks '$pat'"; }
  echo "ok: $what -> $(echo "$out" | grep -m1 -e "$pat")"
}
SEED=${DT_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "# seed $SEED (replay with DT_TEST_SEED=$SEED)"

case "$CASE" in
stragglers)
  B="--gpus 64 --no-overlap --iters 24 --warmup 1 --json --quiet --seed $SEED"
  "$DTSIM" $B --straggler rank:5:1.5 >"$W/fixed.json" || fail "rank:5:1.5"
  "$DTSIM" $B --straggler cv:0.05 >"$W/cv.json" || fail "cv:0.05"
  "$DTSIM" $B --straggler cv:0.05 >"$W/cv2.json" || fail "cv:0.05 again"
  "$DTSIM" --gpus 64 --no-overlap --iters 24 --warmup 1 --json --quiet \
      --seed $((SEED + 1)) --straggler cv:0.05 >"$W/cv3.json" || fail "cv:0.05, seed + 1"
  "$DTSIM" --gpus 64 --no-overlap --iters 24 --warmup 1 --json --quiet >"$W/none.json" ||
      fail "no straggler"
  cmp -s "$W/cv.json" "$W/cv2.json" || fail "the same spec and seed gave other figures"
  cmp -s "$W/cv.json" "$W/cv3.json" && fail "another seed gave the same figures"
  "$PY" "$CHECKS" "$W" <<'EOF' || exit 1
import json, math, random, sys
fixed, cv, none = row("fixed"), row("cv"), row("none")
for name, r in (("fixed", fixed), ("cv", cv)):
    check(abs(r["perfect_iter_s"] - none["iter_s"]) <= 1e-12 * none["iter_s"],
          f"{name}: the perfect cluster it compares with is the run without stragglers")
    check(r["iter_p50_s"] <= r["iter_p95_s"] <= r["iter_max_s"], f"{name}: p50 <= p95 <= max")
check(none["iter_p50_s"] == none["iter_p95_s"] == none["iter_max_s"],
      "without stragglers every step takes the same time")
compute = none["compute_s"]
# one rank 1.5x slower: every step waits for its compute, half a compute more (no overlap)
pen = (fixed["iter_s"] - none["iter_s"]) / compute
check(abs(pen - 0.5) <= 0.05, f"rank:5:1.5 adds {pen:.3f} of a compute (closed form 0.5)")
# lognormal of mean 1, CV 0.05: the mean over the 24 steps of (max of 64 draws - 1), by
# Monte-Carlo in float64, independent of dtsim: 400 such means, their 99.5th percentile the
# most a step can lose to the slowest GPU (the ring absorbs part of it: a chunk that does not
# pass the slowest rank moves while it computes, so the simulated loss is less, by how much
# depends on where the slow ranks sit: at least half of it, seed after seed)
s2 = math.log1p(0.05 ** 2); mu, sig = -s2 / 2, math.sqrt(s2)
rng = random.Random(12345)
means = sorted(sum(max(math.exp(rng.gauss(mu, sig)) for _ in range(64)) - 1
                   for _ in range(24)) / 24 for _ in range(400))
emax, hi = sum(means) / len(means), means[int(0.995 * len(means))]
pen = (cv["iter_s"] - none["iter_s"]) / compute
check(0.5 * emax <= pen <= hi,
      f"cv:0.05 on 64 GPUs adds {pen:.4f} of a compute (order statistics: {emax:.4f}, "
      f"99.5 % of 24-step means below {hi:.4f})")
EOF
  expect2 "rank beyond the cluster" "rank 64 is beyond the cluster's 64 GPUs" --gpus 64 --straggler rank:64:2
  expect2 "node beyond the cluster" "node 8 is beyond the cluster's 8 nodes" --gpus 64 --straggler node:8:2
  expect2 "cv out of range" "coefficient of variation in \[0, 2\]" --gpus 64 --straggler cv:3
  expect2 "factor not a number" "rank:INDEX:FACTOR" --gpus 64 --straggler rank:1:slow
  expect2 "unknown term" "expected rank:R:F, node:N:F or cv:X" --gpus 64 --straggler link:1:2
  echo "PASS stragglers" ;;
goodput)
  "$DTSIM" --gpus 256 --fail-rate 2e-4 --ckpt-interval 2 --json --quiet --seed $SEED \
      >"$W/a.json" || fail "--fail-rate"
  "$DTSIM" --gpus 256 --fail-rate 8e-4 --ckpt-interval 2 --json --quiet --seed $SEED \
      >"$W/b.json" || fail "--fail-rate x4"
  "$DTSIM" --gpus 256 --mtbf 102.4 --ckpt-async --json --quiet --seed $SEED \
      >"$W/c.json" || fail "--mtbf --ckpt-async"
  "$DTSIM" --gpus 256 --job-mtbf 0.4 --ckpt-async --json --quiet --seed $SEED \
      >"$W/d.json" || fail "--job-mtbf --ckpt-async"
  # a transformer's checkpoint (AdamW: two moments), and a file system's cap at 1024 nodes
  "$DTSIM" --gpus 16 --model gpt2 --per-gpu-batch 4 --fail-rate 2e-5 --analytic --json --quiet \
      >"$W/g.json" || fail "gpt2 with failures"
  "$DTSIM" --gpus 8192 --fail-rate 2e-5 --analytic --json --quiet >"$W/e.json" || fail "8192 GPUs with failures"
  "$PY" "$CHECKS" "$W" <<'EOF' || exit 1
import json, math, sys
a, b, c, jm, g, e = row("a"), row("b"), row("c"), row("d"), row("g"), row("e")
# the job's MTBF from the rate, and Daly's expected time recomputed here
check(abs(a["mtbf_s"] - 3600 / (2e-4 * 256)) <= 1e-9 * a["mtbf_s"], f"MTBF {a['mtbf_s']:.1f} s")
check(abs(a["ckpt_bytes"] - 8 * a["params"]) < 1, "LARS: checkpoint = fp32 weights + momentum, 8 bytes per parameter")
check(abs(g["ckpt_bytes"] - 12 * g["params"]) < 1, "AdamW: fp32 weights + two moments, 12 bytes per parameter")
check(abs(a["ckpt_write_bw"] - 32 * 2e9) < 1, f"32 nodes write at 32 x 2 GB/s: {a['ckpt_write_bw']:.3g}")
check(abs(e["ckpt_write_bw"] - 100e9) < 1, f"1024 nodes at the file system's 100 GB/s cap: {e['ckpt_write_bw']:.3g}")
M, C, R, tau, T = a["mtbf_s"], a["ckpt_stall_s"], a["restart_s"], a["ckpt_interval_s"], a["train_s"]
check(abs(tau - 120) < 1e-9, "--ckpt-interval 2 is 120 s")
n = math.ceil(T / tau - 1e-9) - 1
f = lambda x: M * math.exp(R / M) * math.expm1(x / M)
want = n * f(tau + C) + f(T - n * tau)
check(abs(a["train_with_failures_s"] - want) <= 1e-9 * want,
      f"time with failures {a['train_with_failures_s']:.3f} s, Daly's closed form {want:.3f} s")
check(abs(a["failures"] - want / M) <= 1e-9 * a["failures"], "interruptions = wall / MTBF")
check(abs(a["goodput"] - T / want) <= 1e-12, "goodput = failure-free time / wall time")
for r, name in ((a, "a"), (b, "b"), (c, "c")):
    d = abs(r["train_with_failures_mc_s"] - r["train_with_failures_s"])
    tol = 3 * r["train_with_failures_mc_ci_s"] + (0.03 if name == "c" else 0.002) * r["train_s"]
    check(d <= tol, f"{name}: Monte-Carlo {r['train_with_failures_mc_s']:.2f} s within "
                    f"{tol:.2f} s of the closed form {r['train_with_failures_s']:.2f} s")
check(b["goodput"] < a["goodput"] < 1, "four times the failures, less goodput")
check(abs(c["mtbf_s"] - 102.4 * 3600 / 256) < 1e-9, "--mtbf 102.4 (one GPU's) on 256 GPUs: the job's 1440 s")
check(abs(jm["mtbf_s"] - 0.4 * 3600) < 1e-9, "--job-mtbf 0.4 is 1440 s")
# auto: the interval is the closed form's best, at least as good as Young's
check(c["ckpt_interval_s"] > 0 and c["young_interval_s"] > 0, "auto interval and Young's")
EOF
  expect2 "checkpoint option without a failure rate" "need a failure rate" --gpus 64 --ckpt-interval 10
  expect2 "MTBF and a rate" "give one or the other" --gpus 64 --mtbf 3 --fail-rate 1e-5
  expect2 "two MTBFs" "give one or the other" --gpus 64 --mtbf 3 --job-mtbf 1
  expect2 "bad rate" "failures per GPU-hour" --gpus 64 --fail-rate -1
  expect2 "bad interval" "minutes > 0 or auto" --gpus 64 --mtbf 3 --ckpt-interval 0
  expect2 "bad storage bandwidth" "storage-bw" --gpus 64 --mtbf 3 --storage-bw fast
  echo "PASS goodput" ;;
*) echo "unknown case $CASE"; exit 2 ;;
esac
