#!/usr/bin/env python3
"""bench/analytic_error.py — how far `dtsim --analytic` (the cost model, the roofline and the
fusion schedule, no SimGrid) is from the SimGrid simulation of the same configuration, for
every modelled algorithm and GPU count. Writes bench/ANALYTIC.md.

usage: bench/analytic_error.py [--dtsim build/dtsim] [--gpus 8,64,256,1024,4096,16384]
       [--algos ring,rhd,dbtree,hier,torus2d] [--out bench/ANALYTIC.md]
       [--header sim/dtsim_analytic_error.h] [--cache FILE.json] [--timeout S]
       [--keep bench/ANALYTIC.md --rerun ALGO[:GPUS],...]
--cache keeps each measured row (the simulated figures are the same bits on every run), so a
long table can be measured one configuration at a time (each under the build lock) and
written at the end from the cache; --timeout stops a simulation that runs longer and records
it as not finished with the time it ran. --header writes the per-algorithm error range that
`dtsim --analytic` prints (sim/dtsim_analytic.c). --keep FILE --rerun ALGOS measures only
the algorithms ALGOS and takes every other algorithm's rows from FILE's table as they are
written there (figures, errors, wall times, reasons): one algorithm's rows remeasured without
the other simulations (the whole table is half an hour of one core); an item ALGO:GPUS
remeasures that one row and keeps the algorithm's others.
Both runs are ResNet-50 on V100s (32 per GPU, hier's nodes of 8, fusion segments:2,
overlapping backward) on one EDR NIC per node, in fp32 on the roofline alone (PINNED: dtsim's
defaults when the table was measured); the simulated figures are the same bits on every
machine, so the table is reproducible anywhere.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time


# The cluster the table was measured on, dtsim's defaults until its V100 node became a
# DGX-1 (four EDR NICs) training in mixed precision from the calibration table: pinned, so
# that every row stays reproducible.
PINNED = ["--nics", "1", "--precision", "fp32", "--calib", "none"]


def run(dtsim, args, timeout=None):
    try:
        p = subprocess.run([dtsim] + args + ["--json", "--quiet"], capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if p.returncode:
        sys.exit(f"analytic_error.py: dtsim {' '.join(args)} failed:\n{p.stderr}")
    return json.loads(p.stdout)[0]


def measure(a, algo, g):
    """One row: the simulation and the analytic answer of algo on g GPUs (or the cache's)"""
    args = ["--gpus", str(g), "--algo", algo] + PINNED
    t = time.time()
    s = run(a.dtsim, args, a.timeout)
    ts = time.time() - t
    if s is None:
        print(f"analytic_error.py: {algo} {g} GPUs: the simulation ran past {a.timeout:.0f} s, "
              "stopped", file=sys.stderr)
        return {"algo": algo, "gpus": g, "finished": False, "sim_wall_s": ts}
    t = time.time()
    m = run(a.dtsim, args + ["--analytic"])
    ta = time.time() - t
    err = 100 * (m["iter_s"] / s["iter_s"] - 1)
    print(f"analytic_error.py: {algo} {g} GPUs: simulated {1e3 * s['iter_s']:.2f} ms "
          f"({ts:.1f} s), analytic {1e3 * m['iter_s']:.2f} ms ({ta:.2f} s): {err:+.1f} %",
          file=sys.stderr)
    return {"algo": algo, "gpus": g, "finished": True, "sim_iter_s": s["iter_s"],
            "an_iter_s": m["iter_s"], "err_pct": err, "sim_exposed_s": s["exposed_s"],
            "an_exposed_s": m["exposed_s"], "sim_wall_s": ts, "an_wall_s": ta}


KEPT_ROW = re.compile(r"^\| (\w+) \| (\d+) \| (.*) \|$")


def kept_rows(path, rerun):
    """The rows of an earlier table (FILE of --keep) that are not rerun (rerun(algo, gpus)
    false), keyed by (algo, gpus), with the figures as the table prints them"""
    rows = {}
    for line in open(path).read().splitlines():
        m = KEPT_ROW.match(line)
        if not m or m.group(1) == "algorithm" or rerun(m.group(1), int(m.group(2))):
            continue
        algo, g, cells = m.group(1), int(m.group(2)), m.group(3).split(" | ")
        if cells[0].startswith("not run: "):
            r = {"finished": False, "sim_wall_s": 0, "note": cells[0][len("not run: "):]}
        elif cells[0] == "not finished":
            r = {"finished": False, "sim_wall_s": float(cells[5].split()[-1])}
        else:
            ms = [float(c.replace(" %", "")) for c in cells]
            r = {"finished": True, "sim_iter_s": ms[0] / 1e3, "an_iter_s": ms[1] / 1e3,
                 "err_pct": ms[2], "sim_exposed_s": ms[3] / 1e3, "an_exposed_s": ms[4] / 1e3,
                 "sim_wall_s": ms[5], "an_wall_s": ms[6]}
        rows[(algo, g)] = dict(r, algo=algo, gpus=g)
    return rows


def write_atomic(path, text):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)) or ".")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def header(rows, cmd):
    """sim/dtsim_analytic_error.h: per algorithm, the GPU counts and the error range measured"""
    out = ["// dtsim_analytic_error.h — the analytic model's difference from the SimGrid",
           "// simulation per algorithm, as measured in bench/ANALYTIC.md (the iteration time,",
           "// analytic against simulated, in %). Written by",
           f"// `{cmd}`;",
           "// do not edit by hand. `dtsim --analytic` prints its algorithm's line.",
           "#ifndef DT_SIM_DTSIM_ANALYTIC_ERROR_H",
           "#define DT_SIM_DTSIM_ANALYTIC_ERROR_H",
           "",
           "typedef struct {",
           "    const char *algo;",
           "    int gpus_lo, gpus_hi;    // the GPU counts measured (simulation finished)",
           "    double err_lo, err_hi;   // the smallest and largest error, %",
           "    const char *not_measured;  // the GPU counts left out and why (\"\": none)",
           "} dtsim_analytic_error;",
           "",
           "static const dtsim_analytic_error dtsim_analytic_errors[] = {"]
    for algo in dict.fromkeys(r["algo"] for r in rows):
        done = [r for r in rows if r["algo"] == algo and r["finished"]]
        stop = [r for r in rows if r["algo"] == algo and not r["finished"]]
        if not done:
            continue
        e = [r["err_pct"] for r in done]
        g = [r["gpus"] for r in done]
        why = "; ".join(f"{r['gpus']} GPUs not run, {r['note']}" if "note" in r else
                        f"{r['gpus']} GPUs: its simulation ran past {r['sim_wall_s']:.0f} s"
                        for r in stop)
        out.append(f'    {{"{algo}", {min(g)}, {max(g)}, {min(e):.1f}, {max(e):.1f},')
        out.append(f'     "{why}"}},')
    out += ["};", "", "#endif", ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtsim", default="build/dtsim")
    ap.add_argument("--gpus", default="8,64,256,1024,4096,16384")
    ap.add_argument("--algos", default="ring,rhd,dbtree,hier,torus2d")
    ap.add_argument("--out", default="bench/ANALYTIC.md")
    ap.add_argument("--header", default="")
    ap.add_argument("--cache", default="")
    ap.add_argument("--timeout", type=float, default=None)
    ap.add_argument("--not-run", default="",
                    help="ALGO:GPUS=WHY,...: configurations left out, each with the reason")
    ap.add_argument("--keep", default="",
                    help="FILE: an earlier table whose rows are kept but for --rerun's algorithms")
    ap.add_argument("--rerun", default="",
                    help="ALGO[:GPUS],...: with --keep, the algorithms (or single rows) measured")
    a = ap.parse_args()
    if bool(a.keep) != bool(a.rerun):
        print("analytic_error.py: --keep FILE and --rerun ALGO,... go together (the table whose "
              "rows are kept, the algorithms measured again)", file=sys.stderr)
        sys.exit(2)
    gpus = [int(x) for x in a.gpus.split(",")]
    items = [i.split(":", 1) for i in filter(None, a.rerun.split(","))]
    bad = [":".join(i) for i in items if i[0] not in a.algos.split(",") or
           (len(i) == 2 and (not i[1].isdigit() or int(i[1]) not in gpus))]
    if bad:
        print(f"analytic_error.py: --rerun {a.rerun}: {','.join(bad)} is not an algorithm of "
              f"--algos {a.algos} (or ALGO:GPUS with GPUS in --gpus {a.gpus})", file=sys.stderr)
        sys.exit(2)
    whole = {i[0] for i in items if len(i) == 1}
    rows_only = {(i[0], int(i[1])) for i in items if len(i) == 2}

    def rerun(algo, g):
        return algo in whole or (algo, g) in rows_only
    kept = kept_rows(a.keep, rerun) if a.keep else {}
    for algo in a.algos.split(",") if a.keep else []:
        missing = [g for g in gpus if not rerun(algo, g) and (algo, g) not in kept]
        if missing:  # before any simulation runs
            print(f"analytic_error.py: --keep {a.keep} has no row for {algo} on "
                  f"{','.join(map(str, missing))} GPUs (add {algo} to --rerun)", file=sys.stderr)
            sys.exit(2)
    cache = {}
    if a.cache and os.path.exists(a.cache):
        cache = {(r["algo"], r["gpus"]): r for r in json.load(open(a.cache))}
    skip = {}
    for item in filter(None, a.not_run.split(";")):
        what, why = item.split("=", 1)
        algo, g = what.split(":")
        skip[(algo, int(g))] = why
    rows = []
    for algo in a.algos.split(","):
        for g in gpus:
            if a.keep and not rerun(algo, g):
                rows.append(kept[(algo, g)])
                continue
            if (algo, g) in skip:
                rows.append({"algo": algo, "gpus": g, "finished": False, "sim_wall_s": 0,
                             "note": skip[(algo, g)]})
                continue
            r = cache.get((algo, g))
            if r is None or (not r["finished"] and a.timeout and r["sim_wall_s"] < a.timeout):
                r = cache[(algo, g)] = measure(a, algo, g)
                if a.cache:
                    write_atomic(a.cache, json.dumps(list(cache.values()), indent=1))
            rows.append(r)
    done = [r for r in rows if r["finished"]]
    worst = max(abs(r["err_pct"]) for r in done)
    total = sum(r["sim_wall_s"] + r.get("an_wall_s", 0) for r in rows)
    cmd = f"bench/analytic_error.py --gpus {a.gpus} --algos {a.algos}"
    if a.timeout:
        cmd += f" --timeout {a.timeout:.0f}"
    if a.not_run:
        cmd += f" --not-run '{a.not_run}'"
    if a.keep:  # the others' rows, as the table before had them
        cmd += f" --keep {a.keep} --rerun {a.rerun}"
    lines = [
        "# dtsim --analytic against the SimGrid simulation",
        "",
        f"Written by `{cmd}` ({total / 60:.0f} min of simulation on the project's 2-core, "
        "24 GiB VM, one run at a time); do not edit by hand.",
        "",
        "`--analytic` answers a configuration with the pieces the simulation is made of, "
        "without SimGrid: one GPU's step on the model device with each layer's gradient-ready "
        "time, the fusion planner's buckets and one-channel schedule, each bucket priced by "
        "the α-β-γ cost model (sim/dtsim_analytic.c). ResNet-50 on V100s with one EDR NIC per "
        "node, in fp32 on the roofline alone (`--nics 1 --precision fp32 --calib none`: "
        "dtsim's defaults when the table was measured), 32 images per GPU, fusion segments:2, "
        "overlapping backward. The simulated figures "
        "are the same bits on every machine; the wall times are this VM's.",
        "",
        "| algorithm | GPUs | simulated iter ms | analytic iter ms | analytic error | "
        "exposed ms, simulated | exposed ms, analytic | simulation s | analytic s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r["finished"]:
            lines.append(f"| {r['algo']} | {r['gpus']} | {1e3 * r['sim_iter_s']:.2f} | "
                         f"{1e3 * r['an_iter_s']:.2f} | {r['err_pct']:+.1f} % | "
                         f"{1e3 * r['sim_exposed_s']:.2f} | {1e3 * r['an_exposed_s']:.2f} | "
                         f"{r['sim_wall_s']:.1f} | {r['an_wall_s']:.2f} |")
        elif "note" in r:
            lines.append(f"| {r['algo']} | {r['gpus']} | not run: {r['note']} | | | | | | |")
        else:
            lines.append(f"| {r['algo']} | {r['gpus']} | not finished | | | | | "
                         f"stopped at {r['sim_wall_s']:.0f} | |")
    lines += ["", "Per algorithm, the range `dtsim --analytic` states in its output "
              "(sim/dtsim_analytic_error.h):", "",
              "| algorithm | GPUs measured | analytic error | not measured |", "|---|---|---|---|"]
    for algo in a.algos.split(","):
        d = [r for r in done if r["algo"] == algo]
        u = [r for r in rows if r["algo"] == algo and not r["finished"]]
        if not d:
            continue
        e = [r["err_pct"] for r in d]
        miss = ", ".join(f"{r['gpus']} GPUs, not run: {r['note']}" if "note" in r else
                         f"{r['gpus']} GPUs (the simulation ran past {r['sim_wall_s']:.0f} s "
                         "here)" for r in u) or "-"
        lines.append(f"| {algo} | {min(r['gpus'] for r in d)} to {max(r['gpus'] for r in d)} | "
                     f"{min(e):+.1f} % to {max(e):+.1f} % | {miss} |")
    lines += [
        "",
        f"Largest difference: {worst:.1f} %. The analytic step moves dbtree's pipeline one "
        "round per poll of the host while backward runs, as the trainer does (its hundreds of "
        "rounds per bucket are what a poll between layers holds back); it leaves out what "
        "only the simulation has: the other algorithms' rounds also wait for those polls, "
        "the reductions' kernels run on the GPU between them, and messages share links "
        "beyond the cost model's sharing factor. On one node (8 GPUs) the cost model prices "
        "dbtree's rounds on the network where they run on NVLink, and the polled rounds "
        "left after backward come out too long. It is a search tool (thousands of "
        "configurations a second); the simulation confirms.",
        "",
    ]
    write_atomic(a.out, "\n".join(lines))
    print(f"analytic_error.py: wrote {a.out}", file=sys.stderr)
    if a.header:
        write_atomic(a.header, header(rows, cmd))
        print(f"analytic_error.py: wrote {a.header}", file=sys.stderr)


if __name__ == "__main__":
    main()
