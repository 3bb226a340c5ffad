"""calib_default_row.py DTSIM CSV — the default calibration row of a ResNet-50 run, wherever
the table (CSV: `dtsim calibrations --csv`) offers a choice for a GPU and precision: of that
GPU and precision, the same network first, then a node's measurement (gpus > 1) over one
GPU's, then the table's order (docs/formulas.md, "The calibration table"). Recomputed here
from the table's rows and compared with the row each dtsim run names in its JSON."""
import csv
import json
import subprocess
import sys

dtsim, table = sys.argv[1], sys.argv[2]
rows = [r for r in csv.DictReader(open(table)) if not r["model"].startswith("gpt")]
seen = 0
for gpu, prec in sorted({(r["gpu"], r["precision"]) for r in rows}):
    cand = [r for r in rows if r["gpu"] == gpu and r["precision"] == prec]
    if len(cand) < 2:
        continue
    want = max(enumerate(cand), key=lambda ir: (ir[1]["model"] == "resnet50",
                                                int(ir[1]["gpus"]) > 1, -ir[0]))[1]["id"]
    out = subprocess.run([dtsim, "--gpu", gpu, "--precision", prec, "--gpus", "8",
                          "--per-gpu-batch", "32", "--iters", "1", "--analytic", "--json",
                          "--quiet"], capture_output=True, text=True)
    got = json.loads(out.stdout)[0]["calibration"] if out.returncode == 0 else out.stderr
    if got != "calibrated: " + want:
        sys.exit("FAIL: %s %s: %s, expected calibrated: %s (of %d rows)" % (gpu, prec, got, want,
                                                                           len(cand)))
    print("ok: %s %s: %s, of %d rows" % (gpu, prec, want, len(cand)))
    seen += 1
if seen < 3:
    sys.exit("FAIL: only %d GPU and precision pairs with a choice of rows" % seen)
