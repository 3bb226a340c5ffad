#!/bin/sh
# preload_run.sh — runs an MPI test program (preload_defects.c, preload_requests.c) under
# LD_PRELOAD=libdtcoll_mpi.so once per algorithm, on NP ranks, and passes when every run exits
# 0, prints the program's "PASS" line, and says (DTCOLL_VERBOSE=1) at least MIN_LINES times
# that our library took a communicator over with that algorithm — proof that it ran. A run
# that takes over 120 s (PRELOAD_TIMEOUT seconds when set) is a hang. Exit 77 (skip) when the program says it cannot run here.
# usage: preload_run.sh MPIRUN LIBRARY NP "ALGOS" MIN_LINES PROGRAM [ARGS...]
# Not here: the checks themselves (in the programs), the library (real/dtcoll_mpi*.c).
set -u
mpirun=$1 lib=$2 np=$3 algos=$4 min_lines=$5
shift 5
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
for algo in $algos; do
    start=$(date +%s)
    timeout "${PRELOAD_TIMEOUT:-120}" "$mpirun" -np "$np" --oversubscribe -x LD_PRELOAD="$lib" -x DTCOLL_ALGO="$algo" \
        -x DTCOLL_VERBOSE=1 -x DTCOLL_GROUP=2 "$@" > "$tmp/out" 2>&1
    rc=$?
    if [ $rc -eq 77 ]; then cat "$tmp/out"; exit 77; fi
    lines=$(grep -c "^dtcoll: MPI_Allreduce via $algo " "$tmp/out")
    if [ $rc -eq 124 ]; then
        echo "FAIL: $algo: no end after ${PRELOAD_TIMEOUT:-120} s (a hang)"; cat "$tmp/out"; exit 1
    elif [ $rc -ne 0 ] || ! grep -q "^PASS " "$tmp/out"; then
        echo "FAIL: $algo: exit code $rc"; cat "$tmp/out"; exit 1
    elif [ "$lines" -lt "$min_lines" ]; then
        echo "FAIL: $algo: $lines 'dtcoll: MPI_Allreduce via $algo' lines, expected at least"\
             "$min_lines: the library was not used"
        cat "$tmp/out"; exit 1
    fi
    echo "$algo ($(( $(date +%s) - start )) s, $lines communicators taken over): $(grep '^PASS ' "$tmp/out")"
done
echo "PASS preload_run np=$np: $algos"
