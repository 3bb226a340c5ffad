#!/bin/sh
# registry_help.sh PLUS_DTSIM PLUS_DTRAIN DTSIM DTRAIN — one registry entry (algo_reverse_ring.h)
# reaches every --help that lists the allreduce algorithms: dtsim's and dtrain's built with it
# list reverse_ring beside the built-ins; the ones built without it do not.
set -u
fail=0
for prog in "$1" "$2"; do
    out=$("$prog" --help 2>&1)
    if echo "$out" | grep -q "mpi, ps, ring, .*auto, reverse_ring"; then
        echo "ok: $(basename "$(dirname "$prog")")/$(basename "$prog") --help lists reverse_ring"
    else
        echo "FAIL: $prog --help does not list reverse_ring after the built-ins:"; echo "$out" | grep -n "ring" | head -5; fail=1
    fi
done
for prog in "$3" "$4"; do
    out=$("$prog" --help 2>&1)
    if echo "$out" | grep -q "mpi, ps, ring" && ! echo "$out" | grep -q reverse_ring; then
        echo "ok: $prog --help lists the built-ins only"
    else
        echo "FAIL: $prog --help: the built-ins missing or reverse_ring present"; fail=1
    fi
done
[ $fail = 0 ] && echo "PASS registry_help"
exit $fail
