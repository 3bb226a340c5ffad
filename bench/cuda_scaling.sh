#!/bin/sh
# cuda_scaling.sh — the real-cluster validation run: ResNet-50 training throughput on
# 1..N GPUs (one rank per GPU) for each allreduce algorithm, to CSV, with dtsim's prediction
# for the same configuration beside it when asked. The numbers the simulator's prediction
# is compared with (issue: "people validating a real cluster against the prediction").
#
#   bench/cuda_scaling.sh [-n "1 2 4 8"] [-a "ring rhd hier dbtree nccl mpi"] [-b 64]
#                         [-s 30] [-o cuda_scaling.csv] [-d build] [-p "--gpu h100 ..."]
#                         [-- mpirun options, e.g. --hostfile hosts --map-by ppr:8:node]
#   -n  GPU counts        -a  algorithms        -b  batch per GPU      -s  timed steps
#   -o  CSV file          -d  build directory   -p  dtsim options for the predicted column
#                                                   (empty: no prediction)
# Each configuration runs twice, for 5 and for 5+S steps, on synthetic 224x224 ImageNet-
# shaped data (no I/O in the measurement); images/s = S * global batch / (difference of
# the two runs' seconds), which removes start-up (CUDA context, cuBLAS, NCCL) from the rate.
# Scaling efficiency = images/s per GPU / (images/s on one GPU with the same algorithm).
# Ranks are not bound to cores (--bind-to none; pass --map-by ...:pe=N after -- to pin
# them): mpirun's default binds each of a few ranks to one core, which starves the data
# loader that feeds the GPU (measured: 410 instead of 900 images/s on one H100).
set -eu
NS="1 2 4 8"; ALGOS="ring rhd hier dbtree nccl mpi"; B=64; S=30; OUTF=cuda_scaling.csv
BUILD=build; PRED=""
while getopts n:a:b:s:o:d:p: opt; do
  case $opt in
    n) NS=$OPTARG ;; a) ALGOS=$OPTARG ;; b) B=$OPTARG ;; s) S=$OPTARG ;; o) OUTF=$OPTARG ;;
    d) BUILD=$OPTARG ;; p) PRED=$OPTARG ;; *) sed -n 2,16p "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
DTRAIN=$BUILD/dtrain
[ -x "$DTRAIN" ] || { echo "cuda_scaling: $DTRAIN not found (build first, or -d DIR)" >&2; exit 2; }
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "cuda_scaling: no NVIDIA GPU here (nvidia-smi -L failed); run it on the GPU cluster" >&2
  exit 2
fi
num() { sed -n "s/.*\"$1\": \([-0-9.e]*\).*/\1/p"; }

# one run of N ranks and `steps` steps: prints "seconds comm_s hidden_s", or fails
run() {
  n=$1 algo=$2 steps=$3; shift 3
  ex=$(( (steps + 1) * n * B ))
  json=$(mpirun -np "$n" --bind-to none "$@" "$DTRAIN" --device cuda --model resnet50 --data synthetic \
           --image-size 224 --classes 1000 --synthetic-examples "$ex" --batch $((n * B)) \
           --epochs 1 --max-steps "$steps" --algo "$algo" --eval-every 0 --quiet --json \
           2>"$OUTF.err" | grep '^{' || true)
  [ -n "$json" ] || return 1
  echo "$(echo "$json" | num seconds) $(echo "$json" | num comm_s) $(echo "$json" | num comm_hidden_s)"
}

echo "gpus,algo,per_gpu_batch,global_batch,images_per_s,images_per_s_per_gpu,scaling_eff,comm_s_per_step,hidden_pct,predicted_images_per_s,gpu" >"$OUTF"
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
printf "%5s %-7s %8s %12s %10s %7s %9s %8s %12s\n" gpus algo batch images/s per-GPU eff% comm-ms hidden% predicted
for algo in $ALGOS; do
  base=""
  for n in $NS; do
    if [ "$algo" = nccl ] && [ "$n" -gt "$(nvidia-smi -L | grep -c '^GPU')" ] && ! echo "$*" | grep -q host; then
      echo "# nccl at $n ranks needs $n GPUs (one per rank); skipped" >&2; continue
    fi
    a=$(run "$n" "$algo" 5 "$@") && z=$(run "$n" "$algo" $((5 + S)) "$@") || {
      echo "# $algo on $n GPUs failed: $(tail -1 "$OUTF.err")" >&2; continue; }
    t=$(echo "$a $z" | awk '{print $4 - $1}')
    ips=$(awk -v s="$S" -v g=$((n * B)) -v t="$t" 'BEGIN{printf "%.1f", s * g / t}')
    per=$(awk -v x="$ips" -v n="$n" 'BEGIN{printf "%.1f", x / n}')
    [ -n "$base" ] || base=$per
    eff=$(awk -v p="$per" -v b="$base" 'BEGIN{printf "%.1f", 100 * p / b}')
    comm=$(echo "$a $z" | awk -v s="$S" '{printf "%.2f", 1000 * ($5 - $2) / s}')
    hid=$(echo "$a $z" | awk '{d = $5 - $2; printf "%.0f", (d > 0 ? 100 * ($6 - $3) / d : 0)}')
    pred=""
    if [ -n "$PRED" ] && [ -x "$BUILD/dtsim" ] && [ "$algo" != nccl ]; then
      pred=$("$BUILD/dtsim" --gpus "$n" --per-gpu-batch "$B" --algo "$algo" --model resnet50 \
               --optimizer sgd --fusion 64MiB $PRED --json --quiet 2>/dev/null |
             sed -n 's/.*"images_per_s": \([0-9.]*\).*/\1/p' | head -1)
    fi
    echo "$n,$algo,$B,$((n * B)),$ips,$per,$eff,$comm,$hid,$pred,$GPU" >>"$OUTF"
    printf "%5s %-7s %8s %12s %10s %7s %9s %8s %12s\n" "$n" "$algo" $((n * B)) "$ips" "$per" "$eff" "$comm" "$hid" "${pred:--}"
  done
done
rm -f "$OUTF.err"
echo "wrote $OUTF"
