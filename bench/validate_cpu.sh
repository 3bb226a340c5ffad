#!/bin/sh
# bench/validate_cpu.sh — does dtsim predict a real run from a user's own measurements? The
# validation loop of docs/formulas.md ("Calibration from your measurements") on this
# machine, with the cpu device standing in for the GPU:
#   1. the link between two ranks:      mpirun -np 2 dtcoll-bench --algos ring --csv intra.csv
#   2. one rank's step per layer kind:  mpirun -np 1 dtrain ... --profile step.json, two at
#      a time, one per core (the job's load: two ranks share memory bandwidth and caches;
#      one rank alone on the machine runs faster)
#   3. the measurement:                 mpirun -np 2 dtrain ...; the time per step is
#      (T(long) - T(short)) / (long - short steps), which cancels start-up and warm-up
#   (2 and 3 alternate for REPEATS rounds, so that both sample the same spell of a shared
#   VM, whose speed drifts by ~10 % over minutes)
#   4. dtsim calibrate --step (every profile) --intra intra.csv --out cpu.json
#   5. the prediction:                  dtsim --profile cpu.json --gpus 2 --gpus-per-node 2
#      (dtrain's defaults: ring, 64 MiB fusion, overlap, SGD)
# Writes OUT (Markdown: predicted, measured as the median over the rounds, error)
# atomically and prints it.
#
# usage: bench/validate_cpu.sh [--build DIR] [--model resnet8] [--batch 64] [--short 10]
#          [--long 40] [--repeats 5] [--out bench/VALIDATION.md]
set -u
BUILD=build; MODEL=resnet8; BATCH=64; SHORT=10; LONG=40; REPEATS=5; OUT=bench/VALIDATION.md
die() { echo "validate_cpu.sh: $*" >&2; exit 2; }
need() { [ $# -ge 2 ] || die "option $1 needs a value"; }
posint() { case "$2" in ''|*[!0-9]*) die "$1 '$2' is not a positive integer";; esac; [ "$2" -gt 0 ] || die "$1 must be > 0"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build) need "$@"; BUILD=$2; shift 2 ;;
    --model) need "$@"; MODEL=$2; shift 2 ;;
    --batch) need "$@"; posint "$1" "$2"; BATCH=$2; shift 2 ;;
    --short) need "$@"; posint "$1" "$2"; SHORT=$2; shift 2 ;;
    --long) need "$@"; posint "$1" "$2"; LONG=$2; shift 2 ;;
    --repeats) need "$@"; posint "$1" "$2"; REPEATS=$2; shift 2 ;;
    --out) need "$@"; OUT=$2; shift 2 ;;
    -h|--help) sed -n 2,20p "$0"; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[ $((BATCH % 2)) -eq 0 ] || die "--batch $BATCH does not divide over 2 ranks"
[ "$LONG" -gt "$SHORT" ] || die "--long $LONG must exceed --short $SHORT"
[ "$SHORT" -gt 2 ] || die "--short $SHORT: the profile needs more than its 2 warm-up steps"
for p in dtrain dtsim dtcoll-bench; do [ -x "$BUILD/$p" ] || die "$BUILD/$p is not an executable (build first)"; done
MPIRUN=${MPIRUN:-mpirun}
command -v "$MPIRUN" >/dev/null 2>&1 || die "mpirun not found (apt-get install openmpi-bin)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
W=$(mktemp -d "${TMPDIR:-/tmp}/validate_XXXXXX")
trap 'rm -rf "$W"' EXIT
num() { sed -n "s/.*\"$1\": \([-0-9.e+]*\).*/\1/p" "$2" | head -1; }
D="--data synthetic --synthetic-examples 8192 --image-size 32 --classes 10 --model $MODEL --threads 1 --eval-every 0 --quiet --lr-schedule const --warmup 0 --json"

echo "validate_cpu.sh: the link between two ranks" >&2
"$MPIRUN" -np 2 --oversubscribe "$BUILD/dtcoll-bench" --algos ring --min-bytes 4K --max-bytes 16M --factor 4 --csv "$W/intra.csv" >"$W/c.out" 2>&1 || { cat "$W/c.out"; die "dtcoll-bench failed"; }
STEPS=""
: >"$W/meas"
i=0
while [ $i -lt "$REPEATS" ]; do
  echo "validate_cpu.sh: round $((i + 1))/$REPEATS: two single-rank profiles at once, then mpirun -np 2 dtrain for $SHORT and $LONG steps" >&2
  for c in 0 1; do
    "$MPIRUN" -np 1 --cpu-set $c --bind-to core "$BUILD/dtrain" $D --batch $((BATCH / 2)) --max-steps "$LONG" --profile "$W/step$i$c.json" >"$W/p$c.out" 2>&1 &
  done
  wait
  for c in 0 1; do [ -s "$W/step$i$c.json" ] || { cat "$W/p$c.out"; die "dtrain --profile failed"; }; STEPS="$STEPS --step $W/step$i$c.json"; done
  for s in $SHORT $LONG; do
    "$MPIRUN" -np 2 --oversubscribe "$BUILD/dtrain" $D --batch "$BATCH" --max-steps $s >"$W/r$s" 2>&1 || { cat "$W/r$s"; die "mpirun -np 2 dtrain failed"; }
  done
  awk -v t1="$(num seconds "$W/r$SHORT")" -v t2="$(num seconds "$W/r$LONG")" \
      -v c1="$(num comm_s "$W/r$SHORT")" -v c2="$(num comm_s "$W/r$LONG")" -v n=$((LONG - SHORT)) \
      -v p0="$(num step_s "$W/step${i}0.json")" -v p1="$(num step_s "$W/step${i}1.json")" \
      'BEGIN { printf "%.6f %.6f %.6f %.6f\n", (t2 - t1) / n, (c2 - c1) / n, p0, p1 }' >>"$W/meas"
  i=$((i + 1))
done
echo "validate_cpu.sh: dtsim calibrate, and dtsim's prediction" >&2
"$BUILD/dtsim" calibrate $STEPS --intra "$W/intra.csv" --out "$W/cpu.json" >"$W/cal.out" 2>&1 || { cat "$W/cal.out"; die "dtsim calibrate failed"; }
"$BUILD/dtsim" --profile "$W/cpu.json" --gpus 2 --gpus-per-node 2 --algo ring --fusion 64MiB --optimizer sgd --iters 3 --warmup 2 --json --quiet >"$W/sim.json" 2>&1 || { cat "$W/sim.json"; die "dtsim --profile failed"; }

median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
m_step=$(cut -d' ' -f1 "$W/meas" | median); m_comm=$(cut -d' ' -f2 "$W/meas" | median)
p_step=$(num iter_s "$W/sim.json"); p_comm=$(num comm_s "$W/sim.json")
one=$(num step_s "$W/cpu.json")
row() { awk -v w="$1" -v p="$2" -v m="$3" 'BEGIN { printf "| %s | %.2f | %.2f | %+.1f %% |\n", w, 1e3 * p, 1e3 * m, (m > 0 ? 100 * (p / m - 1) : 0) }'; }
{
  echo "# dtsim against a real run it was calibrated for"
  echo
  echo "Written by \`bench/validate_cpu.sh\` ($(date -u +%Y-%m-%d), $(getconf _NPROCESSORS_ONLN) cores: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)); do not edit by hand."
  echo
  echo "$MODEL, batch $BATCH over 2 ranks of the cpu device (1 thread each), synthetic 3x32x32 data."
  echo "dtsim was given only one rank's step per layer kind (\`dtrain --profile\`: $((2 * REPEATS)) single-rank"
  echo "runs, two at a time, one per core, $((LONG - 2)) timed steps each, mean $(awk -v s="$one" 'BEGIN { printf "%.2f", 1e3 * s }') ms) and the ring"
  echo "allreduce between two ranks (\`dtcoll-bench\`, fitted: $(sed -n 's/.*intra: //p' "$W/cal.out")); the 2-rank"
  echo "run is its prediction. Measured: the median over $REPEATS rounds of (T($LONG steps) - T($SHORT steps)) / $((LONG - SHORT));"
  echo "each round also took two of the profiles, so that both sample the same spell of the machine."
  echo
  echo "| per step | dtsim predicts, ms | measured, ms | error |"
  echo "|---|---|---|---|"
  row "time (mpirun -np 2 dtrain)" "$p_step" "$m_step"
  row "allreduce in flight (comm)" "$p_comm" "$m_comm"
  echo
  echo "Goal (the fidelity issue): within 10 %. The step time is what a cluster's buyer needs and"
  echo "is the prediction to judge. The comm row is not comparable at this size: dtrain's comm is"
  echo "the span during which its allreduce is in flight, and with ~300 KB of gradients the transfer"
  echo "itself takes tens of microseconds (what dtsim predicts, and what dtcoll-bench's fit gives),"
  echo "while the measured span is mostly the faster rank waiting for the slower one: the two ranks'"
  echo "steps jitter by a few %, and dtsim's ranks are identical, so it models no such skew."
  echo
  echo "Per round: the 2-rank step, its comm, and the two profiles' steps (s):"
  echo
  sed 's/^/    /' "$W/meas"
} >"$W/report.md"
mkdir -p "$(dirname "$OUT")" && cp "$W/report.md" "$OUT.tmp.$$" && mv "$OUT.tmp.$$" "$OUT" || die "--out $OUT: cannot write it"
cat "$OUT"
