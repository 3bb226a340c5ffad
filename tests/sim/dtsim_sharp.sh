#!/bin/sh
# dtsim_sharp.sh — dtsim --sharp (nn/coll/coll_sharp.c): hier's allreduce between nodes
# reduced in the switches. DTSIM = the program.
#  1. Closed form (Graham et al. 2016's in-network reduction, coll_cost.c): on a flat
#     crossbar (no contention), ResNet-50 at 2 images per GPU, one bucket after backward, the
#     simulated iteration is the compute plus the cost model's allreduce within 2 %, and the
#     allreduce between nodes is 2α + (n/s)β' whatever the node count: the iteration at a
#     fresh random count of nodes (3..24, of 4 GPUs) is the 2-node one's within 0.5 %, while
#     the ring between hosts grows by more than 10 % from 2 nodes to 16 (its 2(g-1)/g).
#     Fresh random NIC bandwidth (10-100 Gb/s) each run.
#  2. Its refusals (exit 2, "dtsim: --sharp: ..."): another algorithm, sweep, --shard,
#     --device cpu, --platform; the description line and the JSON say when it is on.
set -u
W=$(mktemp -d "${TMPDIR:-/tmp}/dtsim_sharp_XXXXXX")
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
num() { sed -n "s/.*\"$1\": \([-0-9.e+]*\).*/\1/p" "$2" | head -1; }
# |a - b| <= tol * |b|
close() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t * (b < 0 ? -b : b)) }'; }

R=$(od -An -N4 -tu4 /dev/urandom | awk '{ print $1 % 2147483000 }')
echo "# seed $R"
BW=$(awk -v r="$R" 'BEGIN { srand(r); printf "%d", 10 + 90 * rand() }')
NODES=$(awk -v r="$R" 'BEGIN { srand(r + 1); printf "%d", 3 + 22 * rand() }')
O="--gpus-per-node 4 --topology flat --model resnet50 --per-gpu-batch 2 --algo hier --hier-rs
   --net-bw ${BW}Gb --no-overlap --fusion segments:1 --iters 1 --warmup 1 --json"
run() {  # run NAME NODES [--sharp]: the JSON of one run in $W/NAME
  "$DTSIM" --gpus $(($2 * 4)) $O $3 >"$W/$1" 2>"$W/$1.err" || { cat "$W/$1" "$W/$1.err"; fail "dtsim $1"; }
}
run s2 2 --sharp; run sN "$NODES" --sharp; run r2 2 ""; run r16 16 ""
grep -q '"sharp": true' "$W/sN" && grep -q '"sharp": false' "$W/r2" || fail "the JSON does not say whether --sharp is on"
it=$(num iter_s "$W/sN"); co=$(num compute_s "$W/sN"); mc=$(num model_comm_s "$W/sN")
exp=$(awk -v a="$co" -v b="$mc" 'BEGIN { printf "%.9g", a + b }')
close "$it" "$exp" 0.02 || fail "$NODES nodes at $BW Gb/s: iteration $it s, expected compute $co + modelled allreduce $mc = $exp s"
echo "ok: $NODES nodes x 4 GPUs, $BW Gb/s NICs, --sharp: iteration $it s = compute $co + modelled allreduce $mc (expected $exp)"
i2=$(num iter_s "$W/s2")
close "$it" "$i2" 0.005 || fail "--sharp: $NODES nodes take $it s, 2 nodes $i2 s: in the switches the node count should not matter"
a=$(num iter_s "$W/r2"); b=$(num iter_s "$W/r16")
awk -v a="$a" -v b="$b" 'BEGIN { exit !(b > 1.1 * a) }' || fail "the ring between hosts: 16 nodes $b s, 2 nodes $a s (expected > 10 % more)"
echo "ok: --sharp at 2 and $NODES nodes: $i2 s and $it s; the ring between hosts: $a s at 2 nodes, $b s at 16"

# refusals: exit 2 before any simulation, the message names --sharp
bad() {  # bad WHAT PATTERN ARGS...
  what=$1 pat=$2; shift 2
  out=$("$DTSIM" "$@" 2>&1); rc=$?
  [ $rc -eq 2 ] || { echo "$out"; fail "$what: exit $rc, expected 2"; }
  echo "$out" | grep -q -e "^dtsim: --sharp: .*$pat" || { echo "$out"; fail "$what: the message lacks '$pat'"; }
  echo "ok: $what -> $(echo "$out" | head -1)"
}
bad "--algo ring" "give --algo hier or torus2d" --gpus 16 --sharp --algo ring
bad "sweep" "not with sweep" sweep --sweep-gpus 8,16 --sharp --algo hier
bad "--shard 1" "not with --shard" --gpus 16 --model gpt2 --shard 1 --sharp --algo hier
bad "--device cpu" "not with --device cpu" --gpus 2 --device cpu --sharp --algo hier
bad "--platform" "not with --platform" --gpus 16 --platform "$(dirname "$0")/../coll/flat1024.xml" \
    --sharp --algo hier
"$DTSIM" --gpus 16 --sharp --algo hier --analytic 2>&1 | grep -q "allreduce hier (between nodes in the switches: --sharp)" ||
  fail "the description line does not say the switches reduce"
echo "ok: the description line says so"
echo "PASS dtsim_sharp"
