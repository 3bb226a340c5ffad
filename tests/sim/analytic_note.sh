#!/bin/sh
# analytic_note.sh ANALYTIC.md — `dtsim --analytic` states the committed error of its
# algorithm: for every algorithm of bench/ANALYTIC.md, the range its measured rows span (the
# smallest and largest error over the GPU counts whose simulation finished, recomputed here
# from the rows) is the one dtsim prints, with the GPU counts measured and the one not
# finished; a GPU count beyond them is said to be so. DTSIM = the program; PY = a Python 3.
set -u
CHECKS=$(dirname "$0")/checks.py  # check(ok, msg), row(name)
MD=$1
"$PY" "$CHECKS" "$DTSIM" "$MD" <<'EOF'
import re, subprocess, sys
dtsim, md = sys.argv[1], open(sys.argv[2]).read()
rows = re.findall(r"^\| (\w+) \| (\d+) \| ([0-9.]+) \| ([0-9.]+) \| ([-+][0-9.]+) % \|", md, re.M)
stopped = dict((a, int(g)) for a, g in re.findall(r"^\| (\w+) \| (\d+) \| not (?:finished|run)", md, re.M))
algos = sorted({r[0] for r in rows})
check(len(algos) == 5 and max(int(r[1]) for r in rows) == 16384, f"ANALYTIC.md measures {algos} up to 16384 GPUs")
for a in algos:
    errs = [float(r[4]) for r in rows if r[0] == a]
    gpus = [int(r[1]) for r in rows if r[0] == a]
    # the error recomputed from the iteration times, to the table's rounding
    for r in rows:
        if r[0] == a:
            check(abs(100 * (float(r[3]) / float(r[2]) - 1) - float(r[4])) < 0.06, f"{a} {r[1]}: {r[4]} % is analytic/simulated - 1")
    out = subprocess.run([dtsim, "--analytic", "--algo", a, "--gpus", "32768"], capture_output=True, text=True).stdout
    want = f"{a}: {min(errs):+.1f} % to {max(errs):+.1f} % of the simulated step from {min(gpus)} to {max(gpus)} GPUs"
    line = next((l for l in out.splitlines() if l.startswith("analytic against SimGrid, ")), "")
    check(want in line and "32768 GPUs is outside what was measured" in line, f"dtsim --analytic --algo {a}: {line}")
    if a in stopped:
        check(f"(not measured: {stopped[a]} GPUs" in line, f"{a}: says {stopped[a]} GPUs was not measured")
print("PASS analytic_note")
EOF
