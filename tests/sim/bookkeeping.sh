#!/bin/sh
# bookkeeping.sh — dtsim's SimGrid settings run the collectives its rank program keeps its
# books with (the barrier before each step, the loss's allreduce, the results' reduce, the
# broadcasts) as binomial trees, the way MPI libraries run a few bytes: on the flat platform
# (every message 2 µs of latency plus its bytes at 1.25 GB/s; tests/coll/flat1024.xml),
# starting together, a barrier and an allreduce take 2·ceil(log2 P) message times, a reduce
# and a broadcast ceil(log2 P). SMPI's default selector runs the barrier and the reduce
# linearly at the root, which SimGrid prices at about one message time however large P is
# (and which costs O(P^2) host time: bench/DTSIM-SPEED.md).
#   usage: bookkeeping.sh DTSIM SMPIRUN PROGRAM PLATFORM HOSTFILE [--without-trees]
# --without-trees drops dtsim's collective settings: SMPI's defaults must then fail the barrier,
# the allreduce and the reduce (its broadcast is binomial already).
set -u
dtsim=$1 smpirun=$2 prog=$3 xml=$4 hosts=$5 without=${6:-}
W=$(mktemp -d) || exit 1
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL bookkeeping: $*"; exit 1; }

# dtsim's own settings, read from the command it runs (DTSIM_VERBOSE prints it)
DTSIM_VERBOSE=1 "$dtsim" --gpus 8 --iters 1 --quiet > /dev/null 2> "$W/cmd" ||
  fail "dtsim --gpus 8 failed: $(tail -3 "$W/cmd")"
cfg=$(tr ' ' '\n' < "$W/cmd" | grep -E '^--cfg=(smpi|network)/' |
      grep -vE 'smpi/(tmpdir|shared-malloc)' | tr '\n' ' ')
echo "$cfg" | grep -q 'smpi/barrier:' || fail "dtsim's command names no barrier algorithm: $cfg"
if [ "$without" = "--without-trees" ]; then
  cfg=$(echo "$cfg" | tr ' ' '\n' | grep -vE 'smpi/(barrier|bcast|reduce|allreduce):' | tr '\n' ' ')
fi
echo "settings: $cfg"

checks=0 failed=""
for P in 64 1000; do
  L=$(awk -v p=$P 'BEGIN { l = 0; while (2 ^ l < p) l++; print l }')
  for c in barrier:2:0 allreduce:2:4 reduce:1:4 bcast:1:4; do
    name=${c%%:*} rest=${c#*:} depth=${rest%%:*} bytes=${rest#*:}
    # shellcheck disable=SC2086  # $cfg is a list of options
    "$smpirun" -np $P -platform "$xml" -hostfile "$hosts" -no-privatize $cfg \
      --log=root.thres:critical "$prog" "$name" > "$W/out" 2>&1 ||
      fail "$name on $P ranks: $(tail -3 "$W/out")"
    line=$(grep "^collective $name " "$W/out") || fail "$name on $P ranks printed: $(tail -3 "$W/out")"
    t=$(echo "$line" | awk '{ print $9 - $7 }')
    # a message: 2 µs latency, its bytes plus SMPI's 16-byte envelope at 1.25 GB/s
    want=$(awk -v d=$depth -v l=$L -v b=$bytes 'BEGIN { printf "%.9g", d * l * (2e-6 + (b + 16) / 1.25e9) }')
    ok=$(awk -v t="$t" -v w="$want" 'BEGIN { print (t >= 0.97 * w && t <= 1.03 * w) ? 1 : 0 }')
    verdict=ok
    [ "$ok" = 1 ] || verdict=FAIL failed="$failed $name@$P"
    printf '%-9s P %4d: %.3f us, a tree of depth %d: %.3f us %s\n' "$name" $P \
      "$(awk -v t="$t" 'BEGIN { print t * 1e6 }')" $((depth * L)) \
      "$(awk -v t="$want" 'BEGIN { print t * 1e6 }')" $verdict
    checks=$((checks + 1))
  done
done
[ -z "$failed" ] || fail "not binomial trees (3 % off the depth's time):$failed"
echo "PASS bookkeeping: $checks collectives are binomial trees under dtsim's settings"
