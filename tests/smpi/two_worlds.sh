#!/bin/sh
# two_worlds.sh — runs one training program twice and compares the losses it prints, step by
# step: typically the same source compiled against Open MPI (run with mpirun) and against
# SimGrid's SMPI (run with smpirun -no-privatize), which is dtlab's central promise
# (docs/architecture.md: "the same trainer ... is compiled twice"). It can also compare two rank
# counts of one world (data parallelism: P ranks with batch G/P each must follow the run with 1
# rank and batch G). Not a benchmark: wall times are printed for information only.
#
# usage: two_worlds.sh [options] --run KIND:NP --run KIND:NP [-- program arguments]
#   KIND mpi   runs  MPIRUN -np NP --oversubscribe MPI_EXE args
#   KIND smpi  runs  SMPIRUN -np NP -platform XML -hostfile FILE -no-privatize SMPI_SO args
# options: --mpirun PATH --mpi-exe PATH --smpirun PATH --smpi-so PATH --platform XML
#          --hostfile FILE --tol REL (default 1e-4) --no-expect-decrease
#          --extra-b "ARGS"  more program arguments for the second run only (e.g. the same
#                            training with --accumulate 4)
# The program prints lines "step <n> loss <value>" (rank 0 only); everything else (smpirun's
# [xbt_cfg/INFO] lines, Open MPI's notices) is ignored. Two losses match when
#   |a - b| <= tol * max(1, |a|, |b|).
# Exit: 0 all steps match; 1 a mismatch, a failed run, no steps, or no decrease of the loss;
#       2 bad usage; 77 a launcher or program is missing (ctest SKIP_RETURN_CODE).
set -u

MPIRUN=""; MPI_EXE=""; SMPIRUN=""; SMPI_SO=""; PLATFORM=""; HOSTFILE=""
TOL=1e-4; EXPECT_DECREASE=1; RUN_A=""; RUN_B=""; EXTRA_B=""

usage() { echo "two_worlds.sh: $*" >&2; exit 2; }
need_arg() { [ $# -ge 2 ] || usage "option $1 needs a value"; }

while [ $# -gt 0 ]; do
    case "$1" in
        --mpirun)   need_arg "$@"; MPIRUN=$2; shift 2 ;;
        --mpi-exe)  need_arg "$@"; MPI_EXE=$2; shift 2 ;;
        --smpirun)  need_arg "$@"; SMPIRUN=$2; shift 2 ;;
        --smpi-so)  need_arg "$@"; SMPI_SO=$2; shift 2 ;;
        --platform) need_arg "$@"; PLATFORM=$2; shift 2 ;;
        --hostfile) need_arg "$@"; HOSTFILE=$2; shift 2 ;;
        --tol)      need_arg "$@"; TOL=$2; shift 2 ;;
        --no-expect-decrease) EXPECT_DECREASE=0; shift ;;
        --extra-b)  need_arg "$@"; EXTRA_B=$2; shift 2 ;;
        --run)      need_arg "$@"
                    if [ -z "$RUN_A" ]; then RUN_A=$2
                    elif [ -z "$RUN_B" ]; then RUN_B=$2
                    else usage "give --run exactly twice"; fi
                    shift 2 ;;
        --) shift; break ;;
        *) usage "unknown option '$1' (expected --run KIND:NP, --tol, --mpirun, ...)" ;;
    esac
done
[ -n "$RUN_B" ] || usage "give --run exactly twice (e.g. --run mpi:4 --run smpi:4)"

# One rank = one OpenMP/BLAS thread: in SMPI all ranks share one process and one core.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
if [ "$(id -u)" = 0 ]; then  # Open MPI refuses root without these (containers, CI)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/two_worlds.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT

now() { date +%s.%N; }

# run_one LABEL KIND:NP args... — runs, keeps the full log in $WORK/LABEL.log and the losses
# ("<step> <loss>") in $WORK/LABEL.loss, prints the wall time.
run_one() {
    label=$1; spec=$2; shift 2
    kind=${spec%%:*}; np=${spec#*:}
    case "$np" in ''|*[!0-9]*) usage "bad --run '$spec': NP must be a positive integer" ;; esac
    case "$kind" in
        mpi)
            [ -x "$MPIRUN" ] || { echo "SKIPPED: mpirun not found ('$MPIRUN')"; exit 77; }
            [ -x "$MPI_EXE" ] || { echo "SKIPPED: MPI program not built ('$MPI_EXE')"; exit 77; }
            set -- "$MPIRUN" -np "$np" --oversubscribe -x OMP_NUM_THREADS \
                   -x OPENBLAS_NUM_THREADS "$MPI_EXE" "$@" ;;
        smpi)
            [ -x "$SMPIRUN" ] || { echo "SKIPPED: smpirun not found ('$SMPIRUN')"; exit 77; }
            [ -f "$SMPI_SO" ] || { echo "SKIPPED: SMPI program not built ('$SMPI_SO')"; exit 77; }
            [ -f "$PLATFORM" ] && [ -f "$HOSTFILE" ] || usage "smpi needs --platform and --hostfile"
            set -- "$SMPIRUN" -np "$np" -platform "$PLATFORM" -hostfile "$HOSTFILE" \
                   -no-privatize --cfg=smpi/simulate-computation:no \
                   --log=root.thres:warning "$SMPI_SO" "$@" ;;
        *) usage "bad --run '$spec': KIND is mpi or smpi" ;;
    esac
    echo "== $label: $*"
    t0=$(now)
    "$@" >"$WORK/$label.log" 2>&1
    rc=$?
    t1=$(now)
    awk -v a="$t0" -v b="$t1" -v l="$label" 'BEGIN { printf "== %s: wall %.2f s\n", l, b - a }'
    if [ $rc -ne 0 ]; then
        echo "FAIL: $label exited with status $rc; its output:"
        cat "$WORK/$label.log"
        exit 1
    fi
    awk '$1 == "step" && $3 == "loss" && NF == 4 { print $2, $4 }' "$WORK/$label.log" \
        >"$WORK/$label.loss"
}

run_one A "$RUN_A" "$@"
# shellcheck disable=SC2086 # EXTRA_B is a list of words
run_one B "$RUN_B" "$@" $EXTRA_B

# Compare step by step; print the table. awk's numbers are doubles: the printed values carry
# 9 significant digits, enough to resolve one fp32 ulp.
awk -v tol="$TOL" -v dec="$EXPECT_DECREASE" -v la="$RUN_A" -v lb="$RUN_B" '
    function abs(x) { return x < 0 ? -x : x }
    function max(x, y) { return x > y ? x : y }
    NR == FNR { a[$1] = $2; order[na++] = $1; next }
    { b[$1] = $2; nb++ }
    END {
        if (na == 0 || nb == 0) { printf "FAIL: no \"step N loss X\" lines (A %d, B %d)\n", na, nb; exit 1 }
        if (na != nb) { printf "FAIL: A printed %d steps, B %d\n", na, nb; exit 1 }
        printf "%6s %16s %16s %12s\n", "step", la, lb, "|diff|"
        bad = 0; worst = 0
        for (i = 0; i < na; i++) {
            s = order[i]
            if (!(s in b)) { printf "FAIL: step %s missing in B\n", s; exit 1 }
            x = a[s] + 0; y = b[s] + 0; d = abs(x - y)
            if (a[s] ~ /nan|inf/ || b[s] ~ /nan|inf/) { printf "FAIL: step %s loss not finite\n", s; exit 1 }
            lim = tol * max(1, max(abs(x), abs(y)))
            mark = d <= lim ? "" : "  <-- exceeds tolerance"
            if (d > lim) bad++
            worst = max(worst, d)
            printf "%6s %16s %16s %12.3g%s\n", s, a[s], b[s], d, mark
        }
        printf "max |diff| %.3g, tolerance %s relative (to max(1,|loss|))\n", worst, tol
        if (bad) { printf "FAIL: %d of %d steps differ\n", bad, na; exit 1 }
        if (dec && !(a[order[na-1]] + 0 < a[order[0]] + 0)) {
            printf "FAIL: the loss did not decrease (%s -> %s): nothing was learned\n", a[order[0]], a[order[na-1]]
            exit 1
        }
        printf "PASS: %d steps match\n", na
    }' "$WORK/A.loss" "$WORK/B.loss"
