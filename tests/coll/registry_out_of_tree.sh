#!/bin/sh
# registry_out_of_tree.sh SOURCE_DIR BUILD_DIR CMAKE CTEST — an algorithm added from outside
# the tree (cmake -DDT_ALGO_EXTRA=tests/coll/algo_reverse_ring.h -DDT_ALGO_EXTRA_SOURCES=
# tests/coll/algo_reverse_ring.c, nn/CMakeLists.txt) joins tests/coll's lists like a built-in:
# a configured (not built) tree whose coll tests name and run reverse_ring, where the
# project's own tree has none.
set -u
src=$1 dir=$2 cmake=$3 ctest=$4
rm -rf "$dir"
"$cmake" -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=Release \
    -DDT_ALGO_EXTRA="$src/tests/coll/algo_reverse_ring.h" \
    -DDT_ALGO_EXTRA_SOURCES="$src/tests/coll/algo_reverse_ring.c" >"$dir.log" 2>&1 ||
    { tail -20 "$dir.log"; echo "FAIL: configure"; exit 1; }
plus=$("$ctest" --test-dir "$dir" --show-only=json-v1 -L coll)
fail=0
for want in 'coll.preload_np3_reverse_ring_matches_open_mpi_allreduce' \
            '"mpi,ps,rhd,dbtree,reverse_ring"' \
            'valid: mpi, ps, ring, rhd, dbtree, hier, torus2d, nccl, auto, reverse_ring'; do
    if echo "$plus" | grep -q -- "$want"; then echo "ok: the lists hold $want"
    else echo "FAIL: no $want in the coll tests of the tree with the extra entry"; fail=1; fi
done
rm -rf "$dir" "$dir.log"
[ $fail = 0 ] && echo "PASS registry_out_of_tree"
exit $fail
