#!/bin/sh
# help_shared.sh DTSIM DTRAIN DTCOLL_BENCH — the allreduce options come from one table
# (nn/coll/coll_cli.c): dtsim --help and dtrain --help print the same entries for them, line
# for line, and dtcoll-bench's entries for the ones it takes (--group, --inner, --hier-rs)
# are those lines too. The rows `dtsim plan` shares with dtsim (sim/dtsim_plan.c: the model,
# output, failure and job rows) print the same entries in both --help.
set -u
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
# the entries from "  --algo" to the last indented line after it
block() { "$1" --help 2>&1 | awk '/^  --algo /{on=1} on && !/^  /{exit} on'; }
# one option's entry: its line and the continuation lines under it
# (-j: a short option)
entry() { awk -v o="  -$([ ${#2} -gt 1 ] && echo -)$2" 'index($0 " ", o " ") == 1 {on=1; print; next}
                on && /^      /{print; next} {on=0}' "$1"; }
block "$1" >"$tmp/sim"
block "$2" >"$tmp/train"
"$3" --help >"$tmp/bench" 2>&1
fail=0
for o in algo fusion no-overlap fp16-grads group inner hier-rs torus; do
    [ -n "$(entry "$tmp/sim" "$o")" ] || { echo "FAIL: dtsim --help has no --$o in its allreduce block"; fail=1; }
done
if cmp -s "$tmp/sim" "$tmp/train"; then
    echo "ok: dtsim and dtrain print the same $(wc -l <"$tmp/sim") lines for the allreduce options"
else
    echo "FAIL: dtsim --help and dtrain --help differ in the allreduce options:"; diff "$tmp/sim" "$tmp/train"; fail=1
fi
for o in group inner hier-rs; do
    if [ -n "$(entry "$tmp/bench" "$o")" ] && [ "$(entry "$tmp/bench" "$o")" = "$(entry "$tmp/sim" "$o")" ]; then
        echo "ok: dtcoll-bench --$o: $(entry "$tmp/bench" "$o" | head -1 | sed 's/  */ /g')"
    else
        echo "FAIL: dtcoll-bench --help's --$o is not dtsim's:"; entry "$tmp/bench" "$o"; entry "$tmp/sim" "$o"; fail=1
    fi
done
"$1" plan --help >"$tmp/plan" 2>&1
"$1" --help >"$tmp/simall" 2>&1
shared=0
for o in model dataset-size epochs csv json quiet mtbf node-fail-rate ckpt-async storage-bw \
         fs-bw restart j slurm slurm-tasks submit slice results gather; do
    if [ -n "$(entry "$tmp/plan" "$o")" ] && [ "$(entry "$tmp/plan" "$o")" = "$(entry "$tmp/simall" "$o")" ]; then
        shared=$((shared + 1))
    else
        echo "FAIL: dtsim plan --help's $o is not dtsim's:"; entry "$tmp/plan" "$o"; entry "$tmp/simall" "$o"; fail=1
    fi
done
echo "ok: dtsim plan and dtsim print the same entries for the $shared options they share"
[ $fail = 0 ] && echo "PASS help_shared"
exit $fail
