#!/bin/sh
# preload_setup.sh — bench/PRELOAD-SETUP.md: bench_preload_setup (bench/preload_setup.c), a
# plain MPI program, run with Open MPI alone and with libdtcoll_mpi.so preloaded for each
# algorithm, in the same run, at np 2 and 3 and both thread levels; prints the table (ours,
# Open MPI's, the ratio) and writes it to bench/PRELOAD-SETUP.md.
# usage: bench/preload_setup.sh [BUILD]   (default build; about a minute on 2 cores)
set -eu
B=${1:-build}
prog=$B/bench/bench_preload_setup lib=$B/libdtcoll_mpi.so
[ -x "$prog" ] && [ -f "$lib" ] || { echo "preload_setup.sh: build $prog and $lib first" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fig() { echo "$1" | awk -v k="$2" '$1 == k { print $2 }'; }
out=bench/PRELOAD-SETUP.md tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
echo "# What the preload costs beside the allreduce"
echo
echo "Written by \`bench/preload_setup.sh\` on $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p' | head -1)), Open MPI $(mpirun --version | sed -n 's/.*Open MPI) //p' | head -1); do not edit by hand. Medians of 300 rounds of the slowest rank's microseconds (bench/preload_setup.c). **setup**: MPI_Comm_dup, one MPI_Allreduce of 1024 floats on it, MPI_Comm_free (the library builds its state at that first allreduce; issue 52 asks for at most 2x Open MPI's). **warm**: that allreduce on a communicator already used. **barrier**: MPI_Barrier with nothing of the library's in flight (its interposer). **overlap**: MPI_Iallreduce of 65,536 floats, MPI_Barrier, MPI_Wait (at MPI_THREAD_MULTIPLE the library's progress thread advances the allreduce inside the barrier; below, the wait does). More ranks than cores oversubscribe: np 3 on 2 cores is noisier."
echo
echo "| np | thread level | library | setup us | x Open MPI | warm us | barrier us | x Open MPI | overlap us | x Open MPI |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for np in 2 3; do
  for level in single multiple; do
    base=$(mpirun -np $np --oversubscribe "$prog" 300 $level)
    bs=$(fig "$base" setup) bb=$(fig "$base" barrier) bo=$(fig "$base" overlap)
    echo "| $np | $level | Open MPI alone | $bs | 1.00 | $(fig "$base" warm) | $bb | 1.00 | $bo | 1.00 |"
    for algo in ring rhd hier torus2d auto; do
      r=$(mpirun -np $np --oversubscribe -x LD_PRELOAD="$lib" -x DTCOLL_ALGO=$algo -x DTCOLL_GROUP=2 "$prog" 300 $level)
      s=$(fig "$r" setup) b=$(fig "$r" barrier) o=$(fig "$r" overlap)
      echo "| $np | $level | $algo | $s | $(echo "$s $bs" | awk '{printf "%.2f", $1/$2}') | $(fig "$r" warm) | $b | $(echo "$b $bb" | awk '{printf "%.2f", $1/$2}') | $o | $(echo "$o $bo" | awk '{printf "%.2f", $1/$2}') |"
    done
  done
done
} > "$tmp"
cp "$tmp" "$out"
cat "$out"
