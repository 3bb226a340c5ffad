#!/bin/sh
# same_bits.sh SRC BUILD WORK — every simulated figure is the same bits whatever the CPU and
# the build options (docs/conventions.md, "Same bits everywhere").
#
# BUILD is the project's build (defaults: Release, DT_NATIVE=ON). Under WORK this script
# builds dtsim again with the most different settings the project supports and runs the same
# simulations with it; their JSON, CSV and trace files must be identical byte for byte (JSON
# and CSV print every real with 17 significant digits, i.e. every bit):
#   v3     RelWithDebInfo (-O2 where the reference has -O3), DT_NATIVE=OFF, and a user's
#          CMAKE_C_FLAGS asking for FMA and contraction (-march=x86-64-v3
#          -ffp-contract=fast), which the project's -ffp-contract=off must overrule, run
#          with glibc told the CPU has no AVX, AVX2, FMA or AVX-512 (GLIBC_TUNABLES): the
#          libm variants an older CPU runs, SimGrid's included
# and the mutant the comparison must catch: v3 with contraction let into the fusion planner
# and its cost model (their objects compiled again with -ffp-contract=fast last, dtsim
# relinked), which must change some figure. Where the CPU lacks x86-64-v3, the variant is
# a Debug (-O0) build with DT_NATIVE=OFF instead, and the mutant is skipped, saying so. (One
# variant, not two: a second build of dtsim cost CI a minute and could find nothing that
# the optimisation levels, instruction sets and libm variants compared here do not.)
#
# The simulations: the README's default run, notebook 04's fusion table (64 GPUs), lesson
# 07's runs at 256 GPUs, a dtsim sweep (8 and 64 GPUs), a preset in fp16, dbtree, stragglers
# (seeded lognormal draws and a slow node), --analytic for every algorithm and with failures
# (the goodput's closed form and Monte-Carlo), and one Chrome trace; the mutant's run, notebook 04's fusion table, compared with the same files.
set -u
SRC=$1 BUILD=$2 WORK=$3
mkdir -p "$WORK"
fail() { echo "FAIL: $*"; exit 1; }

# runs DTSIM OUT [fusion]: every simulation of the comparison, its machine-readable output in
# OUT/; with "fusion", only notebook 04's fusion table (the runs the mutant must move)
runs() {
  d=$1 o=$2 only=${3:-}
  rm -rf "$o" && mkdir -p "$o"
  one() {  # one NAME ARGS...: the JSON summary (the last line that starts with '[')
    n=$1; shift
    "$d" "$@" --json --quiet >"$o/$n.out" 2>"$o/$n.err" ||
      { cat "$o/$n.out" "$o/$n.err"; fail "$d $*"; }
    grep '^\[' "$o/$n.out" | tail -n 1 >"$o/$n.json"
    [ -s "$o/$n.json" ] || { cat "$o/$n.out"; fail "$d $*: no JSON"; }
  }
  for f in 1MB 4MB 25MB 64MB 256MB segments:1 segments:2 segments:3 segments:4 auto; do
    one "nb04_$(echo $f | tr : -)" --gpus 64 --fusion "$f"
  done
  if [ "$only" = fusion ]; then rm -f "$o"/*.out "$o"/*.err; return 0; fi
  one readme_default
  one lesson07_auto --gpus 256 --fusion auto
  one lesson07_segments4 --gpus 256 --fusion segments:4
  one lesson07_no_overlap --gpus 256 --fusion segments:2 --no-overlap
  one jia2018_fp16 --preset jia2018 --gpus 256
  one dbtree_64 --gpus 64 --algo dbtree
  one straggler_64 --gpus 64 --straggler cv:0.05,node:3:1.3 --iters 6
  for a in ring rhd dbtree hier torus2d; do
    one "analytic_${a}_1024" --gpus 1024 --algo "$a" --analytic
  done
  one analytic_goodput_16384 --gpus 16384 --analytic --fail-rate 2e-5 --ckpt-async
  one trace_64MB --gpus 64 --fusion 64MB --trace "$o/trace.json"
  "$d" sweep --sweep-gpus 8,64 --sweep-algos ring,rhd,hier,dbtree --csv "$o/sweep.csv" \
      >"$o/sweep.out" 2>&1 || { cat "$o/sweep.out"; fail "$d sweep"; }
  rm -f "$o"/*.out "$o"/*.err
}

# same A B LABEL: 0 if every file of A/ is byte for byte in B/, else prints the first difference
same() {
  for f in "$1"/*; do
    g="$2/$(basename "$f")"
    if ! cmp -s "$f" "$g"; then
      echo "  $(basename "$f") differs ($3):"
      diff "$f" "$g" | head -n 6 | cut -c 1-400
      return 1
    fi
  done
  return 0
}

# MUTANT: the sources the mutant compiles with contraction allowed
MUTANT="nn/coll/fusion.c nn/coll/coll_cost.c"
# mutant_objects DIR: the compile commands of MUTANT's objects in the tree DIR that dtsim
# links (nn/'s libraries), one "cd DIRECTORY && COMMAND" line each, from compile_commands.json
mutant_objects() {
  for f in $MUTANT; do
    awk -v file="$SRC/$f" '
      /^  "directory": / { d = $0; sub(/^  "directory": "/, "", d); sub(/",$/, "", d) }
      /^  "command": / { c = $0; sub(/^  "command": "/, "", c); sub(/",$/, "", c); gsub(/\\"/, "\"", c) }
      /^  "file": / { g = $0; sub(/^  "file": "/, "", g); sub(/",?$/, "", g)
                      if (g == file && d ~ /\/nn$/) print "cd \"" d "\" && " c }' "$1/compile_commands.json"
  done
}

# build DIR ARGS...: dtsim configured with ARGS, built (only dtsim and what it needs; the
# cuda device, which dtsim does not link, not even looked for)
build() {
  b=$1; shift
  cmake -S "$SRC" -B "$b" -DCMAKE_CUDA_COMPILER= "$@" >"$b.log" 2>&1 &&
    cmake --build "$b" -j2 --target dtsim >>"$b.log" 2>&1 ||
    { tail -n 30 "$b.log"; fail "building dtsim in $b ($*)"; }
}

runs "$BUILD/dtsim" "$WORK/ref"
echo "ok: the reference runs ($(ls "$WORK/ref" | wc -l) files) from $BUILD"

OLD_LIBM=glibc.cpu.hwcaps=-AVX,-AVX2,-FMA,-AVX512F
if ! /lib64/ld-linux-x86-64.so.2 --help 2>/dev/null | grep -q "x86-64-v3 (supported"; then
  build "$WORK/O0" -DCMAKE_BUILD_TYPE=Debug -DDT_NATIVE=OFF
  GLIBC_TUNABLES=$OLD_LIBM runs "$WORK/O0/dtsim" "$WORK/O0-out"
  same "$WORK/ref" "$WORK/O0-out" "Debug -O0, DT_NATIVE=OFF, glibc's libm for a CPU without AVX/FMA" ||
    fail "a simulated figure depends on the optimisation level, DT_NATIVE or the libm variant" \
         "the CPU selects"
  echo "ok: the same bits from a Debug (-O0) build with DT_NATIVE=OFF on the libm of a CPU" \
       "without AVX, FMA or AVX-512"
  echo "SKIPPED (part): this CPU lacks x86-64-v3 (FMA, AVX2): no FMA build or mutant here"
  echo "PASS same_bits"
  exit 0
fi
# (an earlier run's mutant objects removed first: make would take them as up to date)
[ ! -f "$WORK/v3/compile_commands.json" ] ||
  mutant_objects "$WORK/v3" | sed 's/.* -o \([^ ]*\) .*/\1/' | while read -r o; do rm -f "$WORK/v3/nn/$o"; done
build "$WORK/v3" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDT_NATIVE=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
      "-DCMAKE_C_FLAGS=-march=x86-64-v3 -ffp-contract=fast"
GLIBC_TUNABLES=$OLD_LIBM runs "$WORK/v3/dtsim" "$WORK/v3-out"
same "$WORK/ref" "$WORK/v3-out" "-O2 -march=x86-64-v3 -ffp-contract=fast in CMAKE_C_FLAGS, DT_NATIVE=OFF, glibc's libm for a CPU without AVX/FMA" ||
  fail "a simulated figure depends on the optimisation level, the instruction set, FMA" \
       "contraction or the libm variant the CPU selects"
echo "ok: the same bits from -O2 -march=x86-64-v3 with the user's -ffp-contract=fast and" \
     "DT_NATIVE=OFF, on the libm of a CPU without AVX, FMA or AVX-512"

# the mutant: MUTANT's objects compiled again with the same command and -ffp-contract=fast
# after the project's -ffp-contract=off (the last one counts), dtsim relinked with them; then
# removed, so that the next build compiles them as they are
mutant_objects "$WORK/v3" >"$WORK/mutant.sh"
[ "$(wc -l <"$WORK/mutant.sh")" -eq 4 ] ||
  { cat "$WORK/mutant.sh"; fail "expected 4 compile commands of $MUTANT (dtnn, dtnn_smpi)"; }
sed 's/$/ -ffp-contract=fast/' "$WORK/mutant.sh" | sh -e >"$WORK/mutant.log" 2>&1 &&
  cmake --build "$WORK/v3" -j2 --target dtsim >>"$WORK/mutant.log" 2>&1 ||
  { tail -n 30 "$WORK/mutant.log"; fail "building the mutant"; }
runs "$WORK/v3/dtsim" "$WORK/mutant-out" fusion
sed 's/.* -o \([^ ]*\) .*/\1/' "$WORK/mutant.sh" | while read -r o; do rm -f "$WORK/v3/nn/$o"; done
if same "$WORK/mutant-out" "$WORK/ref" "mutant" >/dev/null; then
  fail "the mutant (FMA contraction in nn/coll/fusion.c and coll_cost.c) changed no figure:" \
       "this comparison cannot see contraction"
fi
echo "ok: the mutant (contraction in the fusion planner and cost model) is caught:"
same "$WORK/mutant-out" "$WORK/ref" "mutant"
echo "PASS same_bits"
