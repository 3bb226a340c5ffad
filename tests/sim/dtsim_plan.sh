#!/bin/sh
# dtsim_plan.sh CASE — `dtsim plan` (sim/dtsim_plan.c) against dtsim itself. DTSIM = the
# program; PY = a Python 3 (the brute force and the ranking are recomputed here).
#   rank     on a small space with random prices and deadline: every candidate run here as
#            `dtsim --analytic --json` with its own flags; the plan's figures equal them to the
#            bit, its ranking equals the one recomputed here (cost among those meeting the
#            deadline, then the nearest misses), the candidates that are not whole nodes, beyond
#            the published batch or beyond the GPU's memory are rejected with that reason;
#            a budget alone ranks by time; --csv - parses; bad input exits 2
#   inputs   prices per node-hour (the cost is the node-hours at the node's price, computed
#            here; a node size without a price rejected with that reason; a type priced both
#            ways refused), candidate topologies, failure rates and checkpoint intervals
#            (each row the figures of `dtsim --analytic` with its flags; goodput falls as the
#            failure rate grows), a space of over a billion candidates refused at once, and a
#            deadline nothing meets: the nearest three and by how much each misses, recomputed
#            from the plan's own JSON without the deadline
#   confirm  the top 2 confirmed with SimGrid, 2 at a time, with failures: each confirmed
#            row's simulated time-to-train (with goodput) equals `dtsim --json` of its flags
set -u
CHECKS=$(dirname "$0")/checks.py  # check(ok, msg), row(name)
CASE=$1
W=$(mktemp -d "${TMPDIR:-/tmp}/dtsim_plan_${CASE}_XXXXXX")
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
expect2() {
  what=$1; pat=$2; shift 2
  out=$("$DTSIM" plan "$@" 2>&1 >"$W/stdout"); rc=$?
  [ $rc -eq 2 ] || { echo "$out"; fail "$what: exit $rc, expected 2"; }
  [ -s "$W/stdout" ] && fail "$what: wrote on stdout"
  echo "$out" | grep -q -e "$pat" || { echo "$out"; fail "$what: message lacks '$pat'"; }
  echo "ok: $what -> $(echo "$out" | grep -m1 -e "$pat")"
}
SEED=${DT_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "# seed $SEED (replay with DT_TEST_SEED=$SEED)"

case "$CASE" in
rank)
  # random prices per GPU-hour; the deadline and the budget drawn between the 20th and 80th
  # percentiles of the candidates' time and cost, so that some meet them and some miss
  set -- $("$PY" -c "import random; r = random.Random($SEED); print('%.2f %.2f' % (r.uniform(1, 4), r.uniform(2, 8)))")
  PV=$1 PA=$2
  SPACE="--price v100=$PV,a100=$PA --gpus 8,12,16,32,128 --algos ring,hier --per-gpu-batch 64,512 \
--epochs 10 --confirm 0"
  "$DTSIM" plan $SPACE --json >"$W/free.json" 2>"$W/free.err" || { cat "$W/free.err"; fail "plan"; }
  set -- $("$PY" -c "
import json, random, sys
rows, r = json.load(open(sys.argv[1]))['ranked'], random.Random(int(sys.argv[2]))
t = sorted(x['time_to_train_s'] / 3600 for x in rows); c = sorted(x['cost'] for x in rows)
q = lambda v: v[int(len(v) * r.uniform(0.2, 0.8))]
print(f'{q(t):.4f} {q(c):.3f}')" "$W/free.json" "$SEED")
  DL=$1 BU=$2
  echo "# prices v100=$PV a100=$PA, deadline $DL h, budget $BU USD"
  "$DTSIM" plan $SPACE --deadline "$DL" --json --top 100 >"$W/plan.json" 2>"$W/plan.err" ||
    { cat "$W/plan.err"; fail "plan --deadline"; }
  "$DTSIM" plan $SPACE --budget "$BU" --json --plot "$W/plan.png" >"$W/budget.json" \
    2>"$W/budget.err" || { cat "$W/budget.err"; fail "plan --budget"; }
  [ "$(od -An -c -N4 "$W/plan.png" | tr -d ' ')" = "211PNG" ] || fail "--plot wrote no PNG"
  "$DTSIM" plan $SPACE --deadline "$DL" --csv - >"$W/plan.csv" 2>/dev/null || fail "plan --csv -"
  "$PY" "$CHECKS" "$W" "$DTSIM" "$PV" "$PA" "$DL" "$BU" <<'EOF' || exit 1
import csv, itertools, json, subprocess, sys
w, dtsim, pv, pa, dl, bu = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:])
price = {"v100": pv, "a100": pa}
plan, budget = json.load(open(f"{w}/plan.json")), json.load(open(f"{w}/budget.json"))
mem = {"v100": 16 * 2**30, "a100": 80 * 2**30}  # sim/gpu_profiles.c
rows, rejected, over = {}, {}, {}
for gpu, pgb, gpus, algo in itertools.product(["v100", "a100"], [64, 512], [8, 12, 16, 32, 128],
                                              ["ring", "hier"]):
    key = (gpu, gpus, algo, pgb)
    flags = ["--model", "resnet50", "--gpu", gpu, "--gpus", str(gpus), "--gpus-per-node", "8",
             "--nics", "1", "--algo", algo, "--fusion", "segments:2", "--per-gpu-batch",
             str(pgb), "--precision", "fp16", "--epochs", "10",
             "--price-gpu-hour", repr(price[gpu])]
    if gpus % 8: rejected[key] = "not a whole number of nodes"; continue
    if gpus * pgb > 65536: rejected[key] = "beyond the largest published"; continue
    p = subprocess.run([dtsim, *flags, "--analytic", "--json", "--quiet"], capture_output=True,
                       text=True)
    if p.returncode == 2 and f"GiB of one {gpu}'s memory" in p.stderr:  # dtsim refuses it too
        over[key] = float(p.stderr.split("needs ")[1].split(" GiB")[0])
        continue
    check(p.returncode == 0, f"dtsim --analytic {' '.join(flags)}: exit {p.returncode}")
    rows[key] = json.loads(p.stdout)[0]
ranked = {(r["gpu"], r["gpus"], r["algo"], r["per_gpu_batch"]): r for r in plan["ranked"]}
rej = {}
for r in plan["rejected"]:
    f = r["flags"].split()
    rej[(f[f.index("--gpu") + 1], int(f[f.index("--gpus") + 1]), f[f.index("--algo") + 1],
         int(f[f.index("--per-gpu-batch") + 1]))] = r["reason"]
check(plan["candidates"] == 40 and len(ranked) + len(rej) == 40, "40 candidates, each once")
for k, why in rejected.items():
    check(why in rej.get(k, ""), f"{k} rejected: {rej.get(k)}")
# beyond the GPU's memory: the plan's own figure for it, above the GPU's memory, and the
# same batch on the larger GPU ranked with that same figure
check(all(k not in ranked for k in over), "a candidate dtsim refuses for memory is ranked")
for k in [k for k in rows if k not in ranked] + list(over):
    why = rej.get(k, "")
    check("GiB per GPU" in why and k[0] == "v100", f"{k} rejected for memory: {why}")
    need = float(why.split("needs ")[1].split(" GiB")[0])
    check(k not in over or abs(need - over[k]) < 0.051, f"{k}: plan {need} GiB, dtsim {over.get(k)}")
    twin = ranked[("a100", k[1], k[2], k[3])]
    check(need * 2**30 > mem["v100"] and twin["mem_bytes_per_gpu"] <= mem["a100"],
          f"{k}: {need} GiB > 16 GiB; on an a100 {twin['mem_bytes_per_gpu'] / 2**30:.1f} GiB")
check(any("GiB per GPU" in v for v in rej.values()), "some candidate is beyond a GPU's memory")
def ttt(r): return r.get("train_with_failures_s", r["train_s"])
for k, r in ranked.items():
    a = rows.get(k)
    check(a is not None and r["train_s"] == a["train_s"] and r["time_to_train_s"] == ttt(a)
          and r["efficiency"] == a["efficiency"], f"{k}: {r['time_to_train_s']} s is dtsim --analytic's")
    cost = ttt(a) / 3600 * k[1] * price[k[0]]
    check(abs(r["cost"] - cost) <= 1e-12 * cost, f"{k}: cost {r['cost']:.2f} USD = {cost:.2f}")
    check(r["cost_low"] < r["cost"] < r["cost_high"] and r["time_low_s"] < r["time_to_train_s"],
          f"{k}: a band around time and cost")
def order(deadline, budget):
    def key(k):
        t = ttt(rows[k]); c = t / 3600 * k[1] * price[k[0]]
        meets = (deadline is None or t <= deadline * 3600) and (budget is None or c <= budget)
        if not meets:
            miss = max(t / (deadline * 3600) if deadline else 0, c / budget if budget else 0)
            return (1, miss)
        return (0, t if deadline is None else c)
    return sorted(ranked, key=lambda k: (key(k), " ".join(ranked[k]["flags"].split())))
got = [(r["gpu"], r["gpus"], r["algo"], r["per_gpu_batch"]) for r in plan["ranked"]]
check(got == order(dl, None), f"the deadline's ranking is the brute force's: first {got[0]}")
gb = [(r["gpu"], r["gpus"], r["algo"], r["per_gpu_batch"]) for r in budget["ranked"]]
check(gb == order(None, bu) and budget["rank_by"] == "time",
      f"the budget's ranking (by time) is the brute force's: first {gb[0]}")
meets = [r["meets"] for r in plan["ranked"]]
check(meets == sorted(meets, reverse=True), "those meeting the deadline come first")
c = list(csv.DictReader(open(f"{w}/plan.csv")))
check(len(c) == 40 and [float(x["time_to_train_s"]) for x in c[:len(got)]] ==
      [r["time_to_train_s"] for r in plan["ranked"]], "--csv -: the same rows and figures")
print("ok: the plan is the brute force's")
EOF
  grep -q "confirming" "$W/plan.err" && fail "--confirm 0 confirmed"
  expect2 "no price" "needs\|--price" --deadline 10
  expect2 "a price of 0" "--price" --price v100=0
  expect2 "an unknown GPU" "unknown GPU 'x100'" --price x100=2
  expect2 "a GPU without a price" "no price" --price v100=2 --gpu v100,a100
  expect2 "a negative deadline" "--deadline" --price v100=2 --deadline -3
  expect2 "a billion points" "candidates, more than" --price v100=2 --gpus-per-node 1,2,4,8 \
    --gpus 8,16,24,32,40,48,56,64,72,80,88,96,104,112,120,128,136,144,152,160 \
    --per-gpu-batch 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 --fusion none,auto,segments:1,segments:2,segments:4
  expect2 "a budget nothing meets" "none of the .* meets the budget" --price v100=2 \
    --gpus 8,16 --algos ring --per-gpu-batch 64 --budget 1
  expect2 "a deadline nothing meets" "h ([0-9]* %) over the deadline" --price v100=2 \
    --gpus 8,16 --algos ring --per-gpu-batch 64 --deadline 0.01
  expect2 "a negative MTBF" "--mtbf" --price v100=2 --mtbf -1
  expect2 "a straggler" "not searched" --price v100=2 --straggler rank:1:2
  expect2 "an unknown algorithm" "--algos" --price v100=2 --algos ring,bogus
  expect2 "--json with --csv -" "both print on stdout" --price v100=2 --json --csv -
  echo "PASS rank"
  ;;
inputs)
  NODE="--price-node a100:8=30,a100:4=14 --gpus-per-node 2,4,8 --gpus 8,16 --algos ring,hier \
--per-gpu-batch 64 --epochs 1 --confirm 0 --topology flat,torus --fail-rate 1e-4,1e-3 \
--ckpt-interval 20,auto"
  "$DTSIM" plan $NODE --json >"$W/node.json" 2>"$W/node.err" || { cat "$W/node.err"; fail "plan --price-node"; }
  SPACE="--price v100=2 --gpus 8,16,32,64 --algos ring,hier --per-gpu-batch 32,64 --epochs 5 --confirm 0"
  "$DTSIM" plan $SPACE --json --top 1000 >"$W/free.json" 2>/dev/null || fail "plan without a deadline"
  DL=$("$PY" -c "import json,sys; print(min(r['time_to_train_s'] for r in json.load(open(sys.argv[1]))['ranked']) / 3600 * 0.8)" "$W/free.json")
  "$DTSIM" plan $SPACE --deadline "$DL" >"$W/miss.out" 2>"$W/miss.err"; rc=$?
  [ $rc -eq 2 ] && [ ! -s "$W/miss.out" ] || fail "a deadline nothing meets: exit $rc, stdout $(cat "$W/miss.out")"
  cat "$W/miss.err"
  "$PY" "$CHECKS" "$W" "$DTSIM" "$DL" <<'EOF' || exit 1
import json, re, subprocess, sys
w, dtsim, dl = sys.argv[1], sys.argv[2], float(sys.argv[3])
node = {8: 30.0, 4: 14.0}
plan = json.load(open(f"{w}/node.json"))
check(plan["candidates"] == 2 * 3 * 2 * 2 * 2 * 2, f"{plan['candidates']} candidates: 2 counts x 3 node sizes x 2 algos x 2 topologies x 2 rates x 2 intervals")
for r in plan["rejected"]:
    f = r["flags"].split()
    gpn = int(f[f.index("--gpus-per-node") + 1])
    check(gpn == 2 and "no price for a100 nodes of 2 GPUs" in r["reason"], f"rejected: {r['flags'][:70]}: {r['reason']}")
check(len(plan["rejected"]) == 32 and len(plan["ranked"]) == 64, "the 32 on 2-GPU nodes rejected, 64 ranked")
good = {}
for r in plan["ranked"]:
    cost = r["time_to_train_s"] / 3600 * r["gpus"] / r["gpus_per_node"] * node[r["gpus_per_node"]]
    check(abs(r["cost"] - cost) <= 1e-9 * cost, f"{r['gpus']}/{r['gpus_per_node']} {r['algo']} {r['topology']} {r['fail_rate']} {r['ckpt_interval']}: {r['cost']:.4f} USD = node-hours x node price {cost:.4f}")
    p = subprocess.run([dtsim, *r["flags"].split(), "--analytic", "--json", "--quiet"], capture_output=True, text=True)
    d = json.loads(p.stdout)[0]
    check(p.returncode == 0 and r["time_to_train_s"] == d["train_with_failures_s"] and r["goodput"] == d["goodput"]
          and ("--topology " + r["topology"]) in r["flags"], f"  its time and goodput are dtsim --analytic's with {r['flags'].split('--topology ')[1]}")
    good[(r["gpus"], r["gpus_per_node"], r["algo"], r["topology"], r["ckpt_interval"], r["fail_rate"])] = r["goodput"]
for k, g in good.items():
    if k[-1] == 1e-4:
        check(good[k[:-1] + (1e-3,)] < g, f"{k[:-1]}: goodput {g:.5f} at 1e-4 above {good[k[:-1] + (1e-3,)]:.5f} at 1e-3")
check(len({r["time_to_train_s"] for r in plan["ranked"] if r["topology"] == "flat"} ^
          {r["time_to_train_s"] for r in plan["ranked"] if r["topology"] == "torus"}) > 0, "the topologies answer differently")
# the nearest misses, recomputed from the plan's own figures without the deadline
rows = json.load(open(f"{w}/free.json"))["ranked"]
near = sorted(rows, key=lambda r: (r["time_to_train_s"] / (dl * 3600), " ".join(r["flags"].split())))[:3]
err = open(f"{w}/miss.err").read()
got = re.findall(r"(\d+)\. ([0-9.]+) h, ([0-9.]+) h \((\d+) %\) over the deadline; ([0-9.]+) USD:\n +dtsim (.*)", err)
check(len(got) == 3, f"three nearest printed: {len(got)}")
for (i, t, over, pct, usd, flags), r in zip(got, near):
    t_h = r["time_to_train_s"] / 3600
    check(flags == r["flags"] and abs(float(t) - t_h) < 6e-4 and abs(float(over) - (t_h - dl)) < 6e-4
          and int(pct) == round(100 * (t_h - dl) / dl) and abs(float(usd) - r["cost"]) < 6e-3,
          f"#{i}: {t} h, {over} h ({pct} %) over a {dl:.3f} h deadline, {usd} USD: {flags[:60]}...")
EOF
  expect2 "a type priced per GPU-hour and per node-hour" "priced twice" --price a100=3 --price-node a100=30
  expect2 "a node price for a size that is not a count" "GPUs per node" --price-node a100:x=30
  expect2 "an unknown topology" "--topology" --price v100=2 --topology flat,mesh
  expect2 "a bad failure rate in a list" "--fail-rate" --price v100=2 --fail-rate 1e-5,-1
  expect2 "a bad checkpoint interval in a list" "--ckpt-interval" --price v100=2 --ckpt-interval 30,never
  # over a billion: 32 counts x 32 node sizes x 32 batches x 8 NIC counts x 4 algorithms x
  # 3 precisions x 4 topologies x 32 failure rates x 32 intervals (refused before any is built)
  L32=$(seq -s, 8 8 256); R32=$(seq -s, 1 32 | sed 's/\([0-9]*\)/\1e-6/g')
  N=$("$PY" -c "print(32 * 32 * 32 * 8 * 4 * 3 * 4 * 32 * 32)")
  t0=$(date +%s)
  expect2 "$N candidates" "has $N candidates, more than 20000: narrow the lists" --price v100=2 \
    --gpus "$L32" --gpus-per-node "$(seq -s, 1 32)" --per-gpu-batch "$L32" --nics 1,2,3,4,5,6,7,8 \
    --algos ring,rhd,hier,dbtree --precision fp32,tf32,fp16 --topology flat,fat-tree,torus,dragonfly \
    --fail-rate "$R32" --ckpt-interval "$(seq -s, 1 32)"
  [ $(($(date +%s) - t0)) -le 2 ] || fail "the refusal took more than 2 s"
  echo "PASS inputs"
  ;;
confirm)
  "$DTSIM" plan --price v100=2 --gpus 8,16 --algos ring,hier --per-gpu-batch 32 --epochs 1 \
      --fail-rate 1e-3 --ckpt-interval 10 --confirm 2 -j 2 --json >"$W/plan.json" \
      2>"$W/plan.err" || { cat "$W/plan.err"; fail "plan --confirm 2 -j 2"; }
  cat "$W/plan.err"
  [ "$(grep -c 'confirming [12]/2' "$W/plan.err")" -eq 2 ] || fail "a progress line per confirmation"
  "$PY" -c "import json,sys; [print(r['flags']) for r in json.load(open(sys.argv[1]))['ranked'] if r['confirmed']]" \
    "$W/plan.json" >"$W/flags" || fail "the JSON does not parse"
  [ "$(wc -l <"$W/flags")" -eq 2 ] || fail "2 rows confirmed, not $(wc -l <"$W/flags")"
  i=0
  while read -r flags; do
    i=$((i + 1))
    "$DTSIM" $flags --json --quiet >"$W/run$i.json" || fail "dtsim $flags"
  done <"$W/flags"
  "$PY" "$CHECKS" "$W" <<'EOF' || exit 1
import json, sys
w = sys.argv[1]
conf = [r for r in json.load(open(f"{w}/plan.json"))["ranked"] if r["confirmed"]]
for i, r in enumerate(conf, 1):
    d = json.load(open(f"{w}/run{i}.json"))[0]
    check(r["sim_train_s"] == d["train_s"] and
          r["sim_time_to_train_s"] == d["train_with_failures_s"],
          f"{r['gpus']} x {r['algo']}: simulated {r['sim_time_to_train_s']} s is dtsim --json's")
    check(r["sim_vs_analytic"] == r["sim_time_to_train_s"] / r["time_to_train_s"] - 1
          and abs(r["sim_vs_analytic"]) < 0.25,
          f"{r['gpus']} x {r['algo']}: analytic within {100 * r['sim_vs_analytic']:+.1f} %")
    check(r["goodput"] < 1, f"goodput {r['goodput']:.4f} with failures")
print("PASS confirm")
EOF
  ;;
*) fail "unknown case $CASE" ;;
esac
