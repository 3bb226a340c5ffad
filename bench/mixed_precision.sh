#!/bin/sh
# bench/mixed_precision.sh — Fashion-MNIST in fp32, bf16 and fp16 (dtrain --precision), the
# same seed and epochs: test top-1, train loss, images/s and activation memory per
# precision, one CSV row per run (bench/MIXED-PRECISION.md holds the committed table).
# Usage: bench/mixed_precision.sh [--dtrain PATH] [--ranks N] [--out DIR] [--models "M:EPOCHS ..."]
set -eu
DTRAIN=build/dtrain; RANKS=2; OUT=mixed-precision; MODELS="smallcnn:5 resnet8:3"
while [ $# -gt 0 ]; do
  case "$1" in
    --dtrain) DTRAIN=$2; shift 2 ;;
    --ranks) RANKS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --models) MODELS=$2; shift 2 ;;
    -h|--help) sed -n 2,5p "$0"; exit 0 ;;
    *) echo "mixed_precision.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$DTRAIN" ] || { echo "mixed_precision.sh: --dtrain $DTRAIN is not an executable (build first)" >&2; exit 2; }
mkdir -p "$OUT"
CSV="$OUT/mixed_precision.csv"
echo "model,precision,epochs,test_top1,train_loss,images_per_s,seconds,activation_bytes,loss_scale,skipped_steps" >"$CSV.tmp"
val() { sed -n "s/.*\"$2\": \"*\([^,\"}]*\).*/\1/p" "$1"; }
for me in $MODELS; do
  m=${me%%:*}; e=${me##*:}
  for p in fp32 bf16 fp16; do
    log="$OUT/$m-$p.log"
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np "$RANKS" --oversubscribe \
      "$DTRAIN" --quiet --model "$m" --epochs "$e" --precision "$p" --json >"$log" 2>&1 ||
      { cat "$log" >&2; echo "mixed_precision.sh: dtrain failed ($m $p), see $log" >&2; exit 1; }
    j=$(grep '^{' "$log" | tail -1); echo "$j" >"$log.json"
    echo "$m,$p,$e,$(val "$log.json" test_top1),$(val "$log.json" train_loss),$(val "$log.json" images_per_s),$(val "$log.json" seconds),$(val "$log.json" activation_bytes),$(val "$log.json" loss_scale),$(val "$log.json" skipped_steps)" >>"$CSV.tmp"
    tail -1 "$CSV.tmp"
  done
done
mv "$CSV.tmp" "$CSV"
echo "wrote $CSV"
