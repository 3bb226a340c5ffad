#!/bin/sh
# preload_mpi4py.sh — an outside test suite through libdtcoll_mpi.so: mpi4py's own tests (the
# test/ directory of its source distribution, which .ci/install-deps.sh fetches from PyPI at
# the version of Debian's python3-mpi4py), the collective, request and communicator modules,
# run on Debian's mpi4py at the thread level mpi4py asks for by default (MPI_THREAD_MULTIPLE,
# which the library supports). For each NP: one baseline run without the library, then one
# run per algorithm with LD_PRELOAD; each test's outcome on each rank (preload_mpi4py.py) must
# be the baseline's, and the run must say (DTCOLL_VERBOSE=1) that the library took over.
# Skips (exit 77) when mpi4py or the source distribution is missing.
# usage: preload_mpi4py.sh MPIRUN LIBRARY "ALGOS" "NPS"
# The source distribution is looked for in $DTLAB_CACHE, /var/cache/dtlab, ~/.cache/dtlab.
set -u
mpirun=$1 lib=$2 algos=$3 nps=$4
version=3.1.4
# the collectives on buffers (MPI_Allreduce and MPI_Iallreduce among them), the operations,
# requests, communicators; not the vector and object collectives (no MPI_Allreduce of ours)
modules="test_cco_buf test_cco_nb_buf test_op test_request test_grequest test_comm test_comm_topo"
python=/usr/bin/python3  # Debian's, with Debian's mpi4py
here=$(cd "$(dirname "$0")" && pwd)
if ! "$python" -c "import mpi4py.MPI" 2>/dev/null; then
    echo "SKIPPED: no mpi4py for $python (apt-get install python3-mpi4py)"; exit 77
fi
sdist=""
for d in "${DTLAB_CACHE:-}" /var/cache/dtlab "${HOME:-/nonexistent}/.cache/dtlab"; do
    if [ -n "$d" ] && [ -f "$d/mpi4py-$version.tar.gz" ]; then sdist=$d/mpi4py-$version.tar.gz; break; fi
done
if [ -z "$sdist" ]; then
    echo "SKIPPED: no mpi4py-$version.tar.gz in \$DTLAB_CACHE, /var/cache/dtlab or" \
         "~/.cache/dtlab (.ci/install-deps.sh fetches it)"; exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
if ! tar xzf "$sdist" -C "$tmp" "mpi4py-$version/test"; then
    echo "FAIL: cannot unpack $sdist"; exit 1
fi
testdir=$tmp/mpi4py-$version/test
# run NAME NP [mpirun options...]: the outcomes in $tmp/NAME/rank*, the output in $tmp/NAME.log
run() {
    name=$1 np=$2
    shift 2
    mkdir -p "$tmp/$name"
    timeout 300 "$mpirun" -np "$np" --oversubscribe "$@" "$python" "$here/preload_mpi4py.py" \
        "$testdir" "$tmp/$name" multiple $modules > "$tmp/$name.log" 2>&1
    rc=$?
    if [ $rc -ne 0 ] || [ "$(ls "$tmp/$name" | wc -l)" -ne "$np" ]; then
        echo "FAIL: $name: exit code $rc$( [ $rc -eq 124 ] && echo ' (no end after 300 s)')"
        tail -50 "$tmp/$name.log"; exit 1
    fi
}
for np in $nps; do
    start=$(date +%s)
    run base$np "$np"
    cat "$tmp/base$np"/rank* > "$tmp/base$np.all"
    echo "np $np without the library ($(( $(date +%s) - start )) s): $(grep '^mpi4py' "$tmp/base$np.log")," \
         "outcomes: $(awk '{print $2}' "$tmp/base$np.all" | sort | uniq -c | tr -s ' \n' ' ')"
    for algo in $algos; do
        start=$(date +%s)
        run "$algo$np" "$np" -x LD_PRELOAD="$lib" -x DTCOLL_ALGO="$algo" -x DTCOLL_VERBOSE=1 \
            -x DTCOLL_GROUP=2
        lines=$(grep -c "^dtcoll: MPI_Allreduce via $algo " "$tmp/$algo$np.log")
        if [ "$lines" -eq 0 ]; then
            echo "FAIL: $algo np $np: no 'dtcoll: MPI_Allreduce via $algo' line: the library was not used"
            tail -50 "$tmp/$algo$np.log"; exit 1
        fi
        cat "$tmp/$algo$np"/rank* > "$tmp/$algo$np.all"
        if ! diff "$tmp/base$np.all" "$tmp/$algo$np.all" > "$tmp/diff"; then
            echo "FAIL: $algo np $np: test outcomes differ from the run without the library" \
                 "(< without, > with):"
            cat "$tmp/diff"; grep -v '^dtcoll:' "$tmp/$algo$np.log" | tail -80; exit 1
        fi
        echo "np $np $algo ($(( $(date +%s) - start )) s): the same outcomes; $lines" \
             "communicators taken over"
    done
done
echo "PASS preload_mpi4py: mpi4py $version's" $modules "at np $nps for $algos"
