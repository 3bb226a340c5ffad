#!/bin/sh
# dtsim_speed.sh — how long dtsim takes to simulate ResNet-50 (32 images per GPU, V100, the
# default fat-tree cluster, 1 timed iteration after 1 warm-up) at several GPU counts, for our
# algorithms and, in the same run, SMPI's own MPI_Allreduce ("--algo mpi": SMPI's ring "lr"),
# with the wall time, the peak memory of the simulation, and the simulated iteration time.
# usage: bench/dtsim_speed.sh [DTSIM] [GPU counts...]   (default: build/dtsim 256 1024)
DTSIM=${1:-build/dtsim}; shift 2>/dev/null
COUNTS=${*:-256 1024}
printf "| GPUs | algorithm | wall s | peak RSS GiB | simulated iteration ms | images/s |\n|---|---|---|---|---|---|\n"
for g in $COUNTS; do
  for a in ${ALGOS:-hier ring rhd dbtree mpi}; do
    out=$(/usr/bin/time -f "TIME %e %M" "$DTSIM" --gpus "$g" --algo "$a" --iters 1 --quiet --json 2>&1)
    t=$(echo "$out" | sed -n 's/^TIME \([0-9.]*\) .*/\1/p'); m=$(echo "$out" | sed -n 's/^TIME [0-9.]* \([0-9]*\)/\1/p')
    it=$(echo "$out" | sed -n 's/.*"iter_s": \([0-9.e+-]*\).*/\1/p'); ips=$(echo "$out" | sed -n 's/.*"images_per_s": \([0-9.e+-]*\).*/\1/p')
    awk -v g="$g" -v a="$a" -v t="$t" -v m="$m" -v it="$it" -v ips="$ips" 'BEGIN { printf "| %d | %s | %s | %.2f | %.2f | %.0f |\n", g, a, t, m / 1048576, 1e3 * it, ips }'
  done
done
