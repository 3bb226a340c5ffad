#!/usr/bin/python3
"""bench/auto_grid.py — how often `dtsim --algo auto` picks the fastest simulated step
(bench/AUTO.md).

On a grid of configurations (models x clusters x GPU counts) it simulates every allreduce
algorithm on its own (`dtsim --algo X`), and `dtsim --algo auto`, and writes one row per
configuration: each algorithm's simulated iteration, the simulated best, the cost model's
choice for the whole gradient (what the library's own auto takes) and by how much it is
slower, and auto's choice. `--quick` runs a smaller grid (tests/sim runs it).

usage: bench/auto_grid.py [--dtsim build/dtsim] [--out bench/AUTO.md] [--quick] [--check]
(--check: exit 1 unless auto picked the simulated best everywhere)
"""
import argparse
import json
import os
import subprocess
import sys
import time

ALGOS = ["ring", "rhd", "dbtree", "hier", "ps"]
CLUSTERS = [
    ("V100 x 8, NVLink, 1 EDR (dtsim's default)", []),
    ("H100 x 8, NVSwitch, 4 x 400 Gb/s, fp16", ["--gpu", "h100", "--intra", "nvswitch",
                                                "--nics", "4", "--net-bw", "400Gb",
                                                "--precision", "fp16"]),
    ("A100 x 4, NVLink, 1 x 200 Gb/s, tf32", ["--gpu", "a100", "--gpus-per-node", "4",
                                              "--net-bw", "200Gb", "--precision", "tf32"]),
]
MODELS = ["resnet50", "alexnet"]
GPUS = [16, 64, 256]


def dtsim(exe, args):
    cmd = [exe] + args + ["--iters", "1", "--json", "--quiet"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("auto_grid.py: %s failed (exit %d):\n%s" % (" ".join(cmd), p.returncode,
                                                            p.stderr[-2000:]))
    return json.loads(p.stdout)[0]  # --json: stdout is the JSON alone


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtsim", default="build/dtsim")
    ap.add_argument("--out", default="bench/AUTO.md")
    ap.add_argument("--quick", action="store_true", help="2 configurations (the test's)")
    ap.add_argument("--check", action="store_true", help="exit 1 unless auto is always best")
    a = ap.parse_args()
    if not os.access(a.dtsim, os.X_OK):
        sys.exit("auto_grid.py: --dtsim %s is not an executable (build first)" % a.dtsim)
    grid = [(m, c, g) for m in MODELS for c in CLUSTERS for g in GPUS]
    if a.quick:
        grid = [("resnet20", CLUSTERS[0], 16), ("alexnet", CLUSTERS[2], 16)]
    t0 = time.time()
    rows, hits, model_hits, worst = [], 0, 0, 0.0
    for model, (cname, cargs), gpus in grid:
        base = cargs + ["--model", model, "--gpus", str(gpus)]
        each = {}
        for algo in ALGOS:
            each[algo] = dtsim(a.dtsim, base + ["--algo", algo])["iter_s"]
        auto = dtsim(a.dtsim, base + ["--algo", "auto"])
        best = min(each, key=each.get)
        pick = auto["auto_model_pick"]
        # auto simulated the same configurations: the same times, to the last digit
        for algo, t in auto["auto_iter_s"].items():
            if t != each[algo]:
                sys.exit("auto_grid.py: auto's %s took %.9g s, --algo %s %.9g s (%s, %s, %d)"
                         % (algo, t, algo, each[algo], model, cname, gpus))
        hit = auto["algo"] == best or auto["iter_s"] == each[best]
        hits += hit
        model_hits += pick == best
        slower = each[pick] / each[best] - 1
        worst = max(worst, slower)
        rows.append((model, cname, gpus, each, best, pick, slower, auto, hit))
        print("%s, %s, %d GPUs: best %s, cost model %s (+%.1f %%), auto %s" % (
            model, cname, gpus, best, pick, 100 * slower, auto["algo"]), file=sys.stderr)
    n = len(rows)
    with open(a.out + ".tmp", "w") as f:
        w = lambda s="": f.write(s + "\n")
        w("# `dtsim --algo auto` against the simulated best")
        w()
        w("Written by `bench/auto_grid.py --dtsim build/dtsim%s` (%.0f s on the project's 2-core "
          "VM); do not edit by hand." % (" --quick" if a.quick else "", time.time() - t0))
        w()
        w("Each configuration is simulated with every allreduce on its own (`--algo X "
          "--iters 1`; ResNet-50 and AlexNet at 32 images per GPU, LARS, 2 fusion segments "
          "overlapping backward) and with `--algo auto`. The cost model's pick is the "
          "algorithm the α-β-γ model prices cheapest for one allreduce of the whole gradient "
          "(what the library's own `auto` takes, nn/coll/coll_algos.c); `auto` simulates "
          "every algorithm the model prices within 4x of its cheapest and keeps the fastest "
          "step (sim/dtsim_auto.c).")
        w()
        w("**auto picks the simulated best in %d of %d configurations; the cost model alone "
          "in %d of %d, up to %.0f %% slower than the best.**" % (hits, n, model_hits, n,
                                                                 100 * worst))
        w()
        w("| model | cluster | GPUs | " + " | ".join(ALGOS) + " | simulated best | cost model's "
          "pick | its step vs the best | auto simulated | auto's pick | best? |")
        w("|---|---|---|" + "---|" * len(ALGOS) + "---|---|---|---|---|---|")
        for model, cname, gpus, each, best, pick, slower, auto, hit in rows:
            w("| %s | %s | %d | %s | %s | %s | %+.1f %% | %s | %s | %s |" % (
                model, cname, gpus, " | ".join("%.2f" % (1e3 * each[x]) for x in ALGOS), best,
                pick, 100 * slower, ", ".join(auto["auto_iter_s"]), auto["algo"],
                "yes" if hit else "**no**"))
        w()
        w("Iterations in ms. Where auto's pick is not the best, the best was priced beyond "
          "4x the cheapest by the cost model and not simulated.")
    os.replace(a.out + ".tmp", a.out)
    print("auto_grid.py: wrote %s (auto best in %d/%d, cost model %d/%d)" % (
        a.out, hits, n, model_hits, n))
    if a.check and hits < n:
        sys.exit("auto_grid.py: auto missed the simulated best in %d of %d" % (n - hits, n))


if __name__ == "__main__":
    main()
