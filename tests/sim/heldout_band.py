#!/usr/bin/env python3
"""tests/sim/heldout_band.py — the band dtsim prints is the held-out error bench/HELDOUT.md measured.

Reads the committed table (bench/HELDOUT.md, "Runs"), recomputes from its errors, on its own,
the band of each GPU generation calibrated from the table, from one node of the run's own
software (--gpu-img-s) and on the roofline alone (the most negative and most positive error,
0 included, of that generation's runs, or of every generation's where it has fewer than three),
checks sim/dtsim_heldout.h carries exactly those, and that dtsim's JSON prints them: for a
run of each generation calibrated by default, with --gpu-img-s and with --calib none, a preset on
its own paper's figure (bench/PAPERS.md's largest time error), and that every held-out run's
published figure lies inside its own printed band.

usage: heldout_band.py DTSIM REPO_ROOT
"""
import json
import re
import subprocess
import sys

exe, root = sys.argv[1], sys.argv[2]


def fail(msg):
    print("FAIL heldout_band: " + msg)
    sys.exit(1)


rows = []
for line in open(root + "/bench/HELDOUT.md"):
    c = [x.strip() for x in line.split("|")]
    if len(c) > 10 and c[2] in ("pascal", "volta", "ampere", "hopper"):
        pct = lambda s: float(s.replace("%", "").replace(" ", "")) / 100
        rows.append(dict(id=c[1], gen=c[2], err=pct(c[5]), cal=c[6] != "uncalibrated (roofline)",
                         roof=pct(c[8]), stack=pct(c[12]) if c[12] else None))
if len(rows) < 12:
    fail("bench/HELDOUT.md has %d runs, fewer than 12" % len(rows))
gens = sorted({r["gen"] for r in rows})
if len(gens) < 4:
    fail("bench/HELDOUT.md spans %d GPU generations, fewer than 4" % len(gens))

want = {}
for cal in (1, 2, 0):  # the table's row, one node of its software, the roofline
    pool = [(r["gen"], [r["roof"], r["err"], r["stack"]][cal]) for r in rows
            if [True, r["cal"], r["stack"] is not None][cal]]
    for g in gens:
        mine = [e for gg, e in pool if gg == g]
        if len(mine) < 3:
            mine = [e for _, e in pool]
        want[(g, cal)] = (min(0.0, min(mine)), max(0.0, max(mine)))

have = {}
for m in re.finditer(r'\{"(\w+)", (\d), (\d+), (\d), (-?[0-9.]+), (-?[0-9.]+)\}',
                     open(root + "/sim/dtsim_heldout.h").read()):
    have[(m.group(1), int(m.group(2)))] = (float(m.group(5)), float(m.group(6)))
for k, v in want.items():
    if k not in have or max(abs(have[k][0] - v[0]), abs(have[k][1] - v[1])) > 1e-9:
        fail("sim/dtsim_heldout.h: %s %s band %s, the table gives %s" % (
            k[0], ["roofline", "calibrated", "own node"][k[1]], have.get(k), v))
print("ok: sim/dtsim_heldout.h = the bands recomputed from bench/HELDOUT.md's %d runs: %s" % (
    len(rows), ", ".join("%s %s %+.1f/%+.1f %%" % (g, ["roof", "cal", "own"][c], 100 * v[0],
                                                   100 * v[1])
                         for (g, c), v in sorted(want.items()))))


def band(args):
    p = subprocess.run([exe] + args + ["--iters", "1", "--warmup", "0", "--json", "--quiet",
                                       "--analytic"], capture_output=True, text=True)
    if p.returncode:
        fail("dtsim %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return json.loads(p.stdout)[0]


GPU = {"pascal": "p100", "volta": "v100", "ampere": "a100", "hopper": "h100"}
for g in gens:
    for extra, cal in (([], 1), (["--calib", "none"], 0), (["--gpu-img-s", "100"], 2)):
        model = ["--model", "gpt2", "--per-gpu-batch", "4"] if g == "hopper" and cal else []
        r = band(["--gpu", GPU[g], "--gpus", "16"] + model + extra)
        is_cal = r["calibration"] != "uncalibrated (roofline)"
        if is_cal != bool(cal) or (cal == 2) != (r["calibration"] == "calibrated: --gpu-img-s"):
            fail("%s %s: calibration %r" % (GPU[g], extra, r["calibration"]))
        lo, hi = want[(g, cal)]
        if (abs(r["band_low"] - lo) > 1e-12 or abs(r["band_high"] - hi) > 1e-12 or
                abs(r["band"] - max(-lo, hi)) > 1e-12 or "bench/HELDOUT.md" not in r["band_basis"]
                or abs(r["train_s_low"] - r["train_s"] * (1 + lo)) > 1e-9 * r["train_s"]
                or abs(r["train_s_high"] - r["train_s"] * (1 + hi)) > 1e-9 * r["train_s"]):
            fail("%s %s: band %s to %s (%s), the table gives %s" % (
                GPU[g], extra, r["band_low"], r["band_high"], r["band_basis"], want[(g, cal)]))
print("ok: dtsim's JSON band for every generation, calibrated and not, is the table's")

papers = []
for line in open(root + "/bench/PAPERS.md"):
    c = [x.strip() for x in line.split("|")]
    if len(c) > 8 and re.match(r"^[a-z]+20\d\d$", c[1]) and c[8].endswith("%"):
        papers.append(abs(float(c[8].replace("%", ""))) / 100)
r = band(["--preset", "goyal2017", "--gpus", "16"])
if (not (max(papers) <= r["band"] <= max(papers) + 0.005) or "in-sample" not in r["band_basis"]
        or r["band_low"] != -r["band"] or r["band_high"] != r["band"]):
    fail("a preset on its paper's figure: band %.4f (%s), PAPERS.md's largest %.4f" % (
        r["band"], r["band_basis"], max(papers)))
print("ok: a preset on its own paper's figure: ±%.1f %% in-sample (bench/PAPERS.md)" %
      (100 * r["band"]))

outside = [x["id"] for x in rows
           if not want[(x["gen"], 1 if x["cal"] else 0)][0] - 1e-9 <= x["err"] <=
           want[(x["gen"], 1 if x["cal"] else 0)][1] + 1e-9]
outside += [x["id"] + " (own node)" for x in rows if x["stack"] is not None and
            not want[(x["gen"], 2)][0] - 1e-9 <= x["stack"] <= want[(x["gen"], 2)][1] + 1e-9]
if outside:
    fail("runs outside their own band: %s" % outside)
print("ok: every held-out run's published figure lies inside the band printed for it")
print("PASS heldout_band")
