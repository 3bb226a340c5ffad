#!/bin/sh
# smpi_ring_speed.sh — the same simulated collective, two implementations: one ring
# allreduce of BYTES (default 102.4 MB, ResNet-50's fp32 gradient) on P ranks of the flat
# 1024-host platform of tests/coll (CM02, 2 µs, 1.25 GB/s links), run by SMPI's own
# MPI_Allreduce with its ring ("smpi/allreduce:lr") and by our ring (nn/coll: every message,
# then dtsim's coarsening k = ceil(P/16)). Prints wall time, peak RSS and the simulated time
# of each, and our speed-up; the simulated times must agree.
#   usage: bench/smpi_ring_speed.sh [BUILD_DIR] [P...]     (default: build 16 32 64)
#   BYTES=1.024e8 to change the size.
B=${1:-build}; shift 2>/dev/null
PS=${*:-16 32 64}
BYTES=${BYTES:-1.024e8}
SRC=$(cd "$(dirname "$0")/.." && pwd)
EXE=$B/tests/coll/coll_check_smpi.so
[ -f "$EXE" ] || { echo "smpi_ring_speed: $EXE not found (build with SimGrid first)" >&2; exit 2; }
RUN="smpirun -platform $SRC/tests/coll/flat1024.xml -hostfile $B/tests/coll/hosts1024 -no-privatize
  --cfg=smpi/simulate-computation:no --cfg=network/model:CM02 --cfg=network/crosstraffic:0
  --cfg=smpi/test:0 --log=root.thres:critical"
one() {  # label, P, extra smpirun cfg, coll_check args -> "wall rss_gib simulated"
  out=$(/usr/bin/time -f "TIME %e %M" $RUN $3 -np "$2" "$EXE" --timing "$BYTES" --alpha 2e-6 \
          --beta 8e-10 $4 2>&1)
  t=$(echo "$out" | sed -n 's/^TIME \([0-9.]*\) .*/\1/p'); m=$(echo "$out" | sed -n 's/^TIME [0-9.]* \([0-9]*\)/\1/p')
  s=$(echo "$out" | sed -n 's/.*simulated \([0-9.e+-]*\) s.*/\1/p')
  echo "$t $m $s"
}
printf "| P | bytes | implementation | wall s | peak RSS GiB | simulated s | our speed-up |\n|---|---|---|---|---|---|---|\n"
for p in $PS; do
  k=$(( (p + 15) / 16 ))
  set -- $(one smpi "$p" "--cfg=smpi/allreduce:lr" "--algos mpi"); ts=$1 ms=$2 ss=$3
  set -- $(one ring "$p" "" "--algos ring"); tr=$1 mr=$2 sr=$3
  set -- $(one ringk "$p" "" "--algos ring --coarsen $k"); tk=$1 mk=$2 sk=$3
  awk -v p="$p" -v b="$BYTES" -v ts="$ts" -v ms="$ms" -v ss="$ss" -v tr="$tr" -v mr="$mr" \
      -v sr="$sr" -v tk="$tk" -v mk="$mk" -v sk="$sk" -v k="$k" 'BEGIN {
    printf "| %d | %.3g | SMPI MPI_Allreduce, lr | %.2f | %.2f | %.6f | |\n", p, b, ts, ms / 1048576, ss
    printf "| %d | %.3g | dtlab ring | %.2f | %.2f | %.6f | %.1fx |\n", p, b, tr, mr / 1048576, sr, ts / tr
    printf "| %d | %.3g | dtlab ring, coarsened %d | %.2f | %.2f | %.6f | %.1fx |\n", p, b, k, tk, mk / 1048576, sk, ts / tk }'
done
