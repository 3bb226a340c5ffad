#!/bin/sh
# plain_check.sh — runs plain_allreduce (an MPI program that knows nothing of dtlab) under
# mpirun twice: as is (Open MPI's own MPI_Allreduce) and with LD_PRELOAD=libdtcoll_mpi.so
# and DTCOLL_ALGO=ALGO, and compares the two outputs value by value:
#   exact (passed-through calls: MPI_INT sum, MPI_FLOAT max, count 0): equal
#   f32: |a - b| <= 2·P·2^-23·MAG  (each side is within P·2^-23·Σ|x| of the true sum; the
#        two libraries add in different orders)
#   f32 with fp16 on the wire: ours within (P+2)·2^-11·MAG, Open MPI's within P·2^-23·MAG
#   f64: |a - b| <= 2·P·2^-52·MAG
# and requires every "identical" line to say yes in both, and the preloaded run to print
# "dtcoll: MPI_Allreduce via ALGO" (DTCOLL_VERBOSE=1): proof that our library ran.
# usage: plain_check.sh MPIRUN NP PROGRAM LIBRARY ALGO [FP16 0|1]
# Not here: the program (plain_allreduce.c), the interposer (real/dtcoll_mpi.c).
set -u
mpirun=$1 np=$2 prog=$3 lib=$4 algo=$5 fp16=${6:-0}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
run="$mpirun -np $np --oversubscribe"
if ! $run "$prog" > "$tmp/base" 2> "$tmp/base.err"; then
    echo "FAIL: the plain run failed"; cat "$tmp/base.err"; exit 1
fi
if ! $run -x LD_PRELOAD="$lib" -x DTCOLL_ALGO="$algo" -x DTCOLL_VERBOSE=1 \
        -x DTCOLL_FP16="$fp16" -x DTCOLL_GROUP=2 "$prog" > "$tmp/ours" 2> "$tmp/ours.err"; then
    echo "FAIL: the preloaded run failed"; cat "$tmp/ours.err"; exit 1
fi
if ! grep -q "^dtcoll: MPI_Allreduce via $algo " "$tmp/ours"; then
    echo "FAIL: no 'dtcoll: MPI_Allreduce via $algo' line: the library was not used"
    cat "$tmp/ours" "$tmp/ours.err"; exit 1
fi
grep "^dtcoll:" "$tmp/ours"
awk -v fp16="$fp16" -v algo="$algo" -v np="$np" '
    FNR == 1 { file++ }
    $1 == "val" {
        key = $2 " " $3
        if (file == 1) { base[key] = $7; nbase++; next }
        nours++
        if (!(key in base)) { print "FAIL: " key " only in the preloaded run"; bad++; next }
        a = $7 + 0; b = base[key] + 0; d = a - b; if (d < 0) d = -d
        P = $5; m = $6
        if ($4 == "exact") tol = 0
        else if ($4 == "f64") tol = 2 * P * 2^-52 * m
        else if (fp16 == 1) tol = (P + 2) * 2^-11 * m + P * 2^-23 * m
        else tol = 2 * P * 2^-23 * m
        if (d > tol) { printf "FAIL: %s: ours %.9g, Open MPI %.9g, difference %.3g > %.3g\n", key, a, b, d, tol; bad++ }
        else if (d > worst) worst = d
        next
    }
    $1 == "identical" { if ($3 != "yes") { print "FAIL: ranks differ (" FILENAME "): " $0; bad++ } ; next }
    $1 == "done" { done[file] = 1 }
    END {
        if (!done[1] || !done[2]) { print "FAIL: a run did not finish"; bad++ }
        if (nours != nbase) { print "FAIL: " nbase " values in the plain run, " nours " preloaded"; bad++ }
        if (bad) exit 1
        printf "PASS plain_allreduce np=%d algo=%s fp16=%d: %d values agree (largest difference %.3g)\n", np, algo, fp16, nours, worst
    }' "$tmp/base" "$tmp/ours"
