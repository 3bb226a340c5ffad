#!/bin/sh
# dtsim_speed.sh — how long dtsim takes to simulate ResNet-50 (32 images per GPU, V100, the
# default fat-tree cluster, 1 timed iteration after 1 warm-up) at several GPU counts, for our
# algorithms, with the wall time, the peak memory of the simulation, and the simulated
# iteration time.
# usage: bench/dtsim_speed.sh [DTSIM] [GPU counts...]   (default: build/dtsim 256 1024)
# Then, at MPI_GPUS (default 64; empty: skip) GPUs, the same iteration without overlap (one
# blocking MPI_Allreduce per bucket, which SMPI runs with its ring "lr") by SMPI's own
# allreduce and by our ring, with the speed-up. (SMPI's collectives allocate real buffers per
# rank, about 100 MB each for ResNet-50: 256 GPUs would need 27 GB. Its MPI_Iallreduce,
# which "mpi" uses with overlap, sends to every rank: not a ring.)
one() {  # GPUs, algo, extra flags -> "wall rss_kb iter_s images_s"
  out=$(/usr/bin/time -f "TIME %e %M" "$DTSIM" --gpus "$1" --algo "$2" $3 --iters 1 --quiet --json 2>&1)
  echo "$out" | sed -n 's/^TIME \([0-9.]*\) \([0-9]*\)/\1 \2/p' | tr '\n' ' '
  echo "$out" | sed -n 's/.*"iter_s": \([0-9.e+-]*\).*"images_per_s": \([0-9.e+-]*\).*/\1 \2/p'
}
DTSIM=${1:-build/dtsim}; shift 2>/dev/null
COUNTS=${*:-256 1024}
printf "| GPUs | algorithm | wall s | peak RSS GiB | simulated iteration ms | images/s |\n|---|---|---|---|---|---|\n"
for g in $COUNTS; do
  for a in ${ALGOS:-hier ring rhd dbtree}; do
    set -- $(one "$g" "$a" "")
    awk -v g="$g" -v a="$a" -v t="$1" -v m="$2" -v it="$3" -v ips="$4" 'BEGIN { printf "| %d | %s | %s | %.2f | %.2f | %.0f |\n", g, a, t, m / 1048576, 1e3 * it, ips }'
  done
done
[ -n "${MPI_GPUS-64}" ] || exit 0
printf "\n| GPUs | no overlap | wall s | peak RSS GiB | simulated iteration ms | our speed-up |\n|---|---|---|---|---|---|\n"
for g in ${MPI_GPUS-64}; do
  set -- $(one "$g" mpi --no-overlap); ts=$1
  awk -v g="$g" -v t="$1" -v m="$2" -v it="$3" 'BEGIN { printf "| %d | SMPI MPI_Allreduce, lr | %s | %.2f | %.2f | |\n", g, t, m / 1048576, 1e3 * it }'
  set -- $(one "$g" ring --no-overlap)
  awk -v g="$g" -v t="$1" -v m="$2" -v it="$3" -v ts="$ts" 'BEGIN { printf "| %d | dtlab ring | %s | %.2f | %.2f | %.1fx |\n", g, t, m / 1048576, 1e3 * it, ts / t }'
done
