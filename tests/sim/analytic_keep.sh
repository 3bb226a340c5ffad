#!/bin/sh
# analytic_keep.sh ANALYTIC.md SCRIPT DIR — bench/analytic_error.py --keep FILE --rerun ALGO
# remeasures only ALGO: with a stand-in dtsim (fixed figures, an analytic answer 10 % short),
# every row of the other algorithms comes out as the committed table writes it, byte for byte
# (a "not run" reason included), ALGO's rows carry the stand-in's figures and -10.0 %, and the
# stand-in ran once per ALGO row and mode, never for a kept one; --rerun ALGO:GPUS remeasures
# that one row and keeps every other byte for byte. A --keep without --rerun, a --rerun
# outside --algos, or GPUS outside --gpus, is refused (exit 2, nothing written). PY = a Python 3.
set -u
# (checks.py: check(ok, msg))
MD=$1 SCRIPT=$2 DIR=$3
rm -rf "$DIR" && mkdir -p "$DIR" || exit 1
cat > "$DIR/dtsim" <<'STUB'
#!/bin/sh
echo "$*" >> "$(dirname "$0")/calls"
case "$*" in
  *--analytic*) echo '[{"iter_s": 0.09, "exposed_s": 0.001}]' ;;
  *) echo '[{"iter_s": 0.1, "exposed_s": 0.004}]' ;;
esac
STUB
chmod +x "$DIR/dtsim"
"$PY" "$SCRIPT" --dtsim "$DIR/dtsim" --keep "$MD" --rerun torus2d --out "$DIR/A.md" \
    --header "$DIR/err.h" 2>"$DIR/log" || { cat "$DIR/log"; echo "FAIL: the run"; exit 1; }
"$PY" "$(dirname "$0")/checks.py" "$MD" "$DIR" <<'PYEOF'
import re, sys
md, d = open(sys.argv[1]).read(), sys.argv[2]
out, calls = open(d + "/A.md").read(), open(d + "/calls").read().splitlines()
rows = lambda t, pat: [l for l in t.splitlines() if re.match(pat, l)]
old = rows(md, r"^\| (ring|rhd|dbtree|hier) \| \d+ \|")
new = rows(out, r"^\| (ring|rhd|dbtree|hier) \| \d+ \|")
check(len(old) == 24 and old == new, f"the {len(old)} rows of ring, rhd, dbtree, hier kept byte for byte")
check(any("not run: " in l for l in new) == any("not run: " in l for l in old), "a not-run row kept with its reason")
t = rows(out, r"^\| torus2d \| \d+ \|")
check(len(t) == 6 and all("| 100.00 | 90.00 | -10.0 % | 4.00 | 1.00 |" in l for l in t),
      "torus2d's 6 rows remeasured by the stand-in")
check(len(calls) == 12 and all("--algo torus2d" in c for c in calls), f"dtsim ran {len(calls)} times, for torus2d only")
check("| torus2d | 8 to 16384 | -10.0 % to -10.0 % | - |" in out, "torus2d's range from its new rows")
h = open(d + "/err.h").read()
check('{"torus2d", 8, 16384, -10.0, -10.0,' in h and "--keep" in h, "the header has the new range and says what was kept")
PYEOF
[ $? -eq 0 ] || exit 1
# one row: torus2d on 64 GPUs
rm -f "$DIR/calls"
"$PY" "$SCRIPT" --dtsim "$DIR/dtsim" --keep "$MD" --rerun torus2d:64 --out "$DIR/R.md" \
    2>"$DIR/log" || { cat "$DIR/log"; echo "FAIL: the run of --rerun torus2d:64"; exit 1; }
"$PY" "$(dirname "$0")/checks.py" "$MD" "$DIR" <<'PYEOF'
import os, re, sys
md, d = open(sys.argv[1]).read(), sys.argv[2]
out = open(d + "/R.md").read()
calls = open(d + "/calls").read().splitlines() if os.path.exists(d + "/calls") else []
rows = lambda t: [l for l in t.splitlines() if re.match(r"^\| \w+ \| \d+ \|", l) and not l.startswith("| algorithm")]
old, new = rows(md), rows(out)
changed = [(o, n) for o, n in zip(old, new) if o != n]
check(len(old) == len(new) == 30 and len(changed) == 1 and changed[0][1].startswith("| torus2d | 64 | 100.00 | 90.00 | -10.0 % |"),
      "--rerun torus2d:64: that row remeasured, the other 29 byte for byte")
check(calls == [c for c in calls if "--gpus 64 --algo torus2d" in c] and len(calls) == 2, f"dtsim ran {len(calls)} times, for torus2d on 64 GPUs only")
PYEOF
[ $? -eq 0 ] || exit 1
for bad in "--keep $MD" "--keep $MD --rerun tree" "--keep $MD --rerun torus2d:65"; do
    # shellcheck disable=SC2086
    "$PY" "$SCRIPT" --dtsim "$DIR/dtsim" $bad --out "$DIR/B.md" 2>"$DIR/log2"
    rc=$?
    if [ $rc -ne 2 ] || [ -e "$DIR/B.md" ] || ! grep -q -- "--rerun" "$DIR/log2"; then
        cat "$DIR/log2"; echo "FAIL: $bad: exit $rc, expected 2 and no table"; exit 1
    fi
    echo "ok: $bad refused: $(cat "$DIR/log2")"
done
echo "PASS analytic_keep"
