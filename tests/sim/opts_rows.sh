#!/bin/sh
# opts_rows.sh — every entry of the --help of dtsim, dtsim sweep, dtsim plan and dtsim
# calibrate is a row of their option tables (nn/opt_table.h) that the command reads: listed
# once, never "unknown option", and a value drawn at random from a pool of bad ones either
# taken (then the trailing --help answers, exit 0: nothing is simulated) or refused in the
# one format, exit 2: "PROG: option --NAME: ... 'VALUE' ... (see PROG --help)", one line. A
# value that is not a number is always refused by an option whose value is a number (N, X,
# HOURS, BW, ...). DTSIM = the program; DT_TEST_SEED replays a draw.
set -u
SEED=${DT_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "# seed $SEED (replay with DT_TEST_SEED=$SEED)"
W=$(mktemp -d "${TMPDIR:-/tmp}/opts_rows_XXXXXX") && trap 'rm -rf "$W"' EXIT
long=$(printf 'y%.0s' $(seq 600))
# the pool: not numbers, out of any range, an empty list, a format string, too long; and two
# numbers an option may take (a bandwidth of 1e20 GB/s, "3 " as "400 Gb" is read)
pool="x|12abc|nan|inf|-5|0x10|1e999|,| 3|%s%n|--|$long|99999999999999999999|3 "
fail=0 probes=0 refused=0
for sub in "" sweep plan calibrate; do
    prog="dtsim${sub:+ $sub}" name=$prog  # (sweep is a mode of dtsim's command line)
    [ "$sub" = sweep ] && prog=dtsim
    # shellcheck disable=SC2086
    "$DTSIM" $sub --help >"$W/help" 2>&1 || { echo "FAIL: $prog --help: exit $?"; fail=1; continue; }
    # an entry: "  --name ARG" (or "  -j N") up to two spaces before its help
    sed -nE 's/^  (-{1,2}[a-z0-9][a-z0-9-]*)( [^ ]+)?(  .*|$)/\1\2/p' "$W/help" >"$W/entries"
    dup=$(cut -d' ' -f1 "$W/entries" | sort | uniq -d)
    [ -z "$dup" ] || { echo "FAIL: $prog --help lists $dup more than once"; fail=1; }
    n=$(wc -l <"$W/entries")
    [ "$n" -ge 5 ] || { echo "FAIL: $prog --help has $n entries"; fail=1; }
    i=0
    while read -r opt arg; do
        i=$((i + 1))
        [ "$opt" = --help ] && continue
        if [ -z "$arg" ]; then  # a switch: taken alone, refused with a value
            # shellcheck disable=SC2086
            "$DTSIM" $sub "$opt" --help >/dev/null 2>"$W/err" ||
                { echo "FAIL: $prog $opt --help: exit $? ($(cat "$W/err"))"; fail=1; }
            # shellcheck disable=SC2086
            "$DTSIM" $sub "$opt=1" --help >/dev/null 2>"$W/err"; rc=$?
            [ $rc = 2 ] && grep -q "^$prog: unknown option or missing value: $opt=1 (see $prog --help)\$" "$W/err" ||
                { echo "FAIL: $prog $opt=1: exit $rc ($(cat "$W/err"))"; fail=1; }
            probes=$((probes + 2))
            continue
        fi
        number=1
        case "$arg" in *FILE*|*NAME*|*KIND*|DIR|SPEC|*.json|*.csv|*.xml|*.png) number=0 ;; esac
        case "$arg" in BW) number=0 ;; esac  # a bandwidth has no upper bound
        for k in 1 2 3; do
            v=$(echo "$pool" | awk -v s="$SEED" -v i="$i" -v k="$k" -F'|' \
                '{srand(s + 7919 * i + k); print $(1 + int(rand() * NF))}')
            # shellcheck disable=SC2086
            "$DTSIM" $sub "$opt" "$v" --help >/dev/null 2>"$W/err"; rc=$?
            probes=$((probes + 1))
            short=$(printf '%.40s' "$v")
            if [ $rc = 0 ]; then
                case "$number$v" in 0*|?99999999999999999999|?3\ ) continue ;; esac
            fi
            if [ $rc != 2 ]; then
                echo "FAIL: $prog $opt '$short': exit $rc, not 2 ($(head -c 300 "$W/err"))"; fail=1; continue
            fi
            refused=$((refused + 1))
            if [ "$(wc -l <"$W/err")" != 1 ] || ! grep -q "^$prog: option $opt: .* (see $prog --help)\$" "$W/err" ||
               ! grep -qF -- "$short" "$W/err"; then
                echo "FAIL: $prog $opt '$short': not the one format: $(head -c 300 "$W/err")"; fail=1
            fi
        done
    done <"$W/entries"
    echo "ok: $name --help: $n entries, each once, each read by its row"
done
echo "ok: $probes probes, $refused bad values refused in the one format"
[ $fail = 0 ] && echo "PASS opts_rows"
exit $fail
