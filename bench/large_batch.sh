#!/bin/sh
# bench/large_batch.sh — the large-batch experiment at our scale: Fashion-MNIST trained with
# dtrain for a fixed number of epochs at growing global batches, with
#   sgd:  SGD + momentum, the linear scaling rule lr = SGD_LR x batch/256 and gradual
#         warm-up (Goyal et al. 2017), and
#   lars: LARS (You, Gitman, Ginsburg 2017; trust 0.001, no weight decay or trust ratio on
#         biases and batch norm, as Jia et al. 2018) with warm-up, peak lr
#         LARS_LR x sqrt(batch/1024),
# everything else equal (model, seed, epochs, warm-up epochs, poly decay of power 2, weight
# decay 5e-4, momentum 0.9). Writes OUT/large_batch.csv (one row per run; a run whose loss
# became NaN is kept, marked diverged) and OUT/large_batch.png (test top-1 against the
# batch, one line per optimizer and model). bench/LARGE-BATCH.md holds the committed table.
#
# usage: bench/large_batch.sh [--dtrain PATH] [--ranks N] [--batches "256 1024 ..."]
#          [--epochs E] [--warmup EPOCHS] [--models "smallcnn ..."] [--optimizers "sgd lars"]
#          [--sgd-lr X] [--lars-lr X] [--train-examples N] [--max-steps N] [--out DIR]
#          [--no-plot]
set -u
DTRAIN=build/dtrain; RANKS=2; BATCHES="256 1024 4096 16384"; EPOCHS=3; WARMUP=1
MODELS=smallcnn; OPTS="sgd lars"; SGD_LR=0.1; LARS_LR=4; TRAIN_N=0; MAX_STEPS=0
OUT=large-batch; PLOT=1
die() { echo "large_batch.sh: $*" >&2; exit 2; }
need() { [ $# -ge 2 ] || die "option $1 needs a value"; }
posint() { case "$2" in ''|*[!0-9]*) die "$1 '$2' is not a positive integer";; esac; [ "$2" -gt 0 ] || die "$1 must be > 0"; }
posnum() { awk -v x="$2" 'BEGIN { exit !(x + 0 > 0 && x ~ /^[0-9.eE+-]+$/) }' || die "$1 '$2' is not a positive number"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --dtrain) need "$@"; DTRAIN=$2; shift 2 ;;
    --ranks) need "$@"; posint "$1" "$2"; RANKS=$2; shift 2 ;;
    --batches) need "$@"; BATCHES=$2; shift 2 ;;
    --epochs) need "$@"; posint "$1" "$2"; EPOCHS=$2; shift 2 ;;
    --warmup) need "$@"; WARMUP=$2; shift 2 ;;
    --models) need "$@"; MODELS=$2; shift 2 ;;
    --optimizers) need "$@"; OPTS=$2; shift 2 ;;
    --sgd-lr) need "$@"; posnum "$1" "$2"; SGD_LR=$2; shift 2 ;;
    --lars-lr) need "$@"; posnum "$1" "$2"; LARS_LR=$2; shift 2 ;;
    --train-examples) need "$@"; posint "$1" "$2"; TRAIN_N=$2; shift 2 ;;
    --max-steps) need "$@"; posint "$1" "$2"; MAX_STEPS=$2; shift 2 ;;
    --out) need "$@"; OUT=$2; shift 2 ;;
    --no-plot) PLOT=0; shift ;;
    -h|--help) sed -n 2,17p "$0"; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
for b in $BATCHES; do posint "--batches" "$b"; [ $((b % RANKS)) -eq 0 ] || die "--batches: $b does not divide over $RANKS ranks"; done
for o in $OPTS; do case "$o" in sgd|lars) ;; *) die "--optimizers: '$o' is not sgd or lars";; esac; done
[ -x "$DTRAIN" ] || die "--dtrain $DTRAIN is not an executable (build first)"
MPIRUN=${MPIRUN:-mpirun}
command -v "$MPIRUN" >/dev/null 2>&1 || die "mpirun not found (apt-get install openmpi-bin)"
mkdir -p "$OUT" || die "--out $OUT: cannot create it"
CSV=$OUT/large_batch.csv
EXTRA=""
[ "$TRAIN_N" -gt 0 ] && EXTRA="$EXTRA --train-examples $TRAIN_N"
[ "$MAX_STEPS" -gt 0 ] && EXTRA="$EXTRA --max-steps $MAX_STEPS"
val() { grep '^{' "$1" | tail -1 | sed -n "s/.*\"$2\": \"*\([^,\"}]*\).*/\1/p"; }
echo "model,optimizer,global_batch,lr,epochs,steps,test_top1,train_loss,wall_s,status" >"$CSV.tmp"
t_all=$(date +%s)
for m in $MODELS; do
  for o in $OPTS; do
    for b in $BATCHES; do
      if [ "$o" = sgd ]; then lr=$(awk -v l="$SGD_LR" -v b="$b" 'BEGIN { printf "%.6g", l * b / 256 }')
      else lr=$(awk -v l="$LARS_LR" -v b="$b" 'BEGIN { printf "%.6g", l * sqrt(b / 1024) }'); fi
      log=$OUT/$m-$o-$b.log
      t0=$(date +%s)
      # shellcheck disable=SC2086 # EXTRA is a list of words
      OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$MPIRUN" -np "$RANKS" --oversubscribe \
        "$DTRAIN" --quiet --model "$m" --optimizer "$o" --batch "$b" --lr "$lr" --epochs "$EPOCHS" \
        --warmup "$WARMUP" --lr-schedule poly --json $EXTRA >"$log" 2>&1
      rc=$?
      wall=$(( $(date +%s) - t0 ))
      if [ $rc -eq 0 ]; then
        row="$(val "$log" test_top1),$(val "$log" train_loss),$wall,ok"
        steps=$(val "$log" steps)
      elif grep -q "the loss is" "$log"; then  # NaN or Inf: the run diverged (exit 1)
        row=",,$wall,diverged"
        steps=$(sed -n 's/.*at step \([0-9]*\).*/\1/p' "$log" | head -1)
      else
        cat "$log" >&2; echo "large_batch.sh: dtrain failed ($m $o batch $b, exit $rc), see $log" >&2
        rm -f "$CSV.tmp"; exit 1
      fi
      echo "$m,$o,$b,$lr,$EPOCHS,$steps,$row" >>"$CSV.tmp"
      tail -1 "$CSV.tmp"
    done
  done
done
mv "$CSV.tmp" "$CSV"
echo "wrote $CSV in $(( $(date +%s) - t_all )) s"
if [ "$PLOT" -eq 1 ]; then
  PY=${DT_PYTHON:-/usr/bin/python3}
  "$PY" "$(dirname "$0")/large_batch_plot.py" "$CSV" "$OUT/large_batch.png" || exit 1
fi
