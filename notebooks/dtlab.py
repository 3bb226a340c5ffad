"""dtlab.py — dtlab's programs from Python, their results as pandas DataFrames.

For notebooks and scripts: every function runs one of dtlab's own programs (dtsim, dtsim
sweep, dtrain, dtcoll-bench, the SMPI allreduce timer) with its machine-readable output
(--json, --csv, a Chrome trace) and returns a DataFrame. Nothing here re-implements a
model, a cost or a simulation, and nothing parses the programs' human-oriented tables.

    import dtlab
    df = dtlab.sweep(gpus=[64, 256, 1024], algos=["ring", "hier"])   # dtsim sweep --csv
    one = dtlab.dtsim(preset="goyal2017")                            # dtsim --json

Options are keyword arguments named after the flags, '-' spelt '_': gpus=256 is
`--gpus 256`, no_overlap=True is `--no-overlap`, fusion="segments:2" is
`--fusion segments:2`; a list is joined by commas; None and False leave the flag out.

Where the programs are: the build directory is $DTLAB_BUILD, else `build/` at the top of
the repository this file is in (the README's first command makes it). A missing build or a
failed run raises DtlabError with the program's own message.
"""
import json
import os
import shutil
import subprocess
import tempfile

import pandas as pd

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class DtlabError(Exception):
    """A dtlab program is missing, refused its arguments or failed (the message says which)."""


# ---------------------------------------------------------------- finding and running

def build_dir():
    """The build directory: $DTLAB_BUILD, else <repository>/build."""
    return os.environ.get("DTLAB_BUILD") or os.path.join(REPO, "build")


def program(name):
    """The path of one of dtlab's programs in the build directory, or DtlabError."""
    path = os.path.join(build_dir(), name)
    if not os.path.isfile(path):
        raise DtlabError(f"{path} not found: build dtlab first (the README's first command), "
                         f"or point DTLAB_BUILD at your build directory")
    return path


def flags(options):
    """Keyword options as command-line flags (see the module's help)."""
    out = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            out.append(flag)
        elif isinstance(value, (list, tuple)):
            out += [flag, ",".join(str(v) for v in value)]
        else:
            out += [flag, str(value)]
    return out


def run(argv, timeout=None, cwd=None):
    """Run argv; return its stdout. DtlabError with its own message when it fails."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=cwd,
                           env=env)
    except FileNotFoundError as e:
        raise DtlabError(f"{argv[0]}: not found ({e.strerror})") from None
    except subprocess.TimeoutExpired:
        raise DtlabError(f"{os.path.basename(argv[0])} ran past {timeout} s: "
                         + " ".join(argv)) from None
    if p.returncode != 0:
        said = (p.stderr.strip() or p.stdout.strip()).splitlines()
        tail = "\n".join(line for line in said[-6:] if line.strip())
        raise DtlabError(f"{os.path.basename(argv[0])} failed (exit {p.returncode}): "
                         f"{tail or 'no message'}\n  command: {' '.join(argv)}")
    return p.stdout


def _last_json(text, who):
    """The JSON document a program printed last (dtsim and dtrain print it on the last line)."""
    for line in reversed(text.strip().splitlines()):
        if line.startswith("[") or line.startswith("{"):
            return json.loads(line)
    raise DtlabError(f"{who} printed no JSON summary (was --json passed?)")


def _with_csv(argv, flag="--csv", timeout=None):
    """Run argv with `flag FILE` added; return the CSV as a DataFrame."""
    with tempfile.TemporaryDirectory(prefix="dtlab-") as tmp:
        path = os.path.join(tmp, "out.csv")
        run(argv + [flag, path], timeout=timeout)
        if not os.path.isfile(path):
            raise DtlabError(f"{os.path.basename(argv[0])} wrote no {flag} file")
        return pd.read_csv(path, float_precision="round_trip")  # every bit dtsim wrote


# ---------------------------------------------------------------- dtsim

def dtsim(timeout=None, **options):
    """One dtsim run (`dtsim --json`): a one-row DataFrame of its summary (gpus, iter_s,
    compute_s, comm_s, exposed_s, images_per_s, efficiency, epoch_s, train_s,
    single_gpu_iter_s, model_comm_s, ...)."""
    out = run([program("dtsim")] + flags(options) + ["--json", "--quiet"], timeout=timeout)
    return pd.DataFrame(_last_json(out, "dtsim"))


def sweep(gpus, algos, timeout=None, **options):
    """`dtsim sweep` over GPU counts and allreduce algorithms: one row per (algos, gpus),
    the columns of dtsim's --csv (gpus, global_batch, algo, buckets, iter_s, compute_s,
    comm_s, exposed_s, images_per_s (gpt models: sequences_per_s), efficiency, epoch_s,
    train_s, single_gpu_iter_s)."""
    argv = [program("dtsim"), "sweep"] + flags(dict(options, sweep_gpus=list(gpus),
                                                    sweep_algos=list(algos), quiet=True))
    return _with_csv(argv, timeout=timeout)


def plan(price=None, price_node=None, jobs=None, timeout=None, **options):
    """`dtsim plan --json`: the candidates ranked (rank, flags, gpu, gpus, gpus_per_node,
    nics, algo, fusion, per_gpu_batch, precision, price_gpu_hour, time_to_train_s,
    time_low_s, time_high_s, cost, cost_low, cost_high, efficiency, mem_bytes_per_gpu,
    goodput with failures, meets, confirmed, sim_time_to_train_s, sim_cost, sim_vs_analytic
    where confirmed) as a DataFrame; df.attrs["rejected"]: the others (flags, reason).
    price / price_node: {"h100": 6.0, ...} USD per GPU-hour / per node-hour; jobs: -j N."""
    opts = dict(options, json=True, quiet=True)
    for key, table in (("price", price), ("price_node", price_node)):
        if table:
            opts[key] = ",".join(f"{k}={v!r}" for k, v in table.items())
    argv = [program("dtsim"), "plan"] + flags(opts) + (["-j", str(jobs)] if jobs else [])
    doc = json.loads(run(argv, timeout=timeout))
    df = pd.DataFrame(doc["ranked"])
    df.attrs["rejected"] = pd.DataFrame(doc["rejected"], columns=["flags", "reason"])
    return df


def layouts(top=100000, confirm=0, timeout=None, **options):
    """`dtsim plan` without prices over a transformer (model="gpt3-175b", gpu, gpus, batch,
    ...): every feasible layout ranked by time per step, one row each (rank, tp, pp, dp,
    micro_batch, pp_schedule, pp_chunks, recompute, shard, step_s, model_flops_per_gpu,
    mem_total_bytes; simgrid_step_s for the first `confirm` the trainer runs, simulated by
    SimGrid), as a DataFrame."""
    argv = [program("dtsim"), "plan"] + flags(dict(options, json=True, top=top, confirm=confirm))
    return pd.DataFrame(json.loads(run(argv, timeout=timeout)))


def trace(path):
    """A Chrome trace written by `dtsim --trace FILE` as a DataFrame: one row per span,
    rank, track ("compute" or "comm"), name, start_ms, dur_ms, end_ms."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise DtlabError(f"{path}: not a trace dtsim wrote ({e})") from None
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    rows = [dict(rank=e["pid"], track="comm" if e.get("tid") == 1 else "compute",
                 name=e["name"], start_ms=e["ts"] / 1e3, dur_ms=e["dur"] / 1e3)
            for e in events if e.get("ph") == "X"]
    df = pd.DataFrame(rows, columns=["rank", "track", "name", "start_ms", "dur_ms"])
    df["end_ms"] = df["start_ms"] + df["dur_ms"]
    return df


def dtsim_trace(path, timeout=None, **options):
    """Run dtsim with --trace path; return (its summary, its trace)."""
    summary = dtsim(timeout=timeout, trace=path, **options)
    return summary, trace(path)


# ---------------------------------------------------------------- real runs

def mpirun(np_, argv, timeout=None):
    """argv under `mpirun --oversubscribe -np np_`; returns stdout."""
    launcher = shutil.which("mpirun")
    if not launcher:
        raise DtlabError("mpirun not found: install Open MPI (the README's first command does)")
    return run([launcher, "--quiet", "--oversubscribe", "-np", str(np_)] + argv,
               timeout=timeout)


def dtrain(np_=1, timeout=None, **options):
    """A real training run (`mpirun -np np_ dtrain --log FILE --json`): (the summary as a
    one-row DataFrame, the per-epoch log as a DataFrame)."""
    with tempfile.TemporaryDirectory(prefix="dtlab-") as tmp:
        log = os.path.join(tmp, "log.csv")
        out = mpirun(np_, [program("dtrain")] + flags(options) + ["--log", log, "--json",
                                                                   "--quiet"], timeout=timeout)
        summary = _last_json(out, "dtrain")
        return (pd.DataFrame(summary if isinstance(summary, list) else [summary]),
                read_dtrain_log(log))


def read_dtrain_log(path):
    """dtrain's --log CSV (one row per epoch) as a DataFrame."""
    try:
        return pd.read_csv(path, float_precision="round_trip")  # every bit dtsim wrote
    except (OSError, ValueError) as e:
        raise DtlabError(f"{path}: not a dtrain --log file ({e})") from None


def coll_bench(np_=2, algos=("ring", "rhd"), timeout=None, **options):
    """The allreduce benchmark on this machine (`mpirun -np np_ dtcoll-bench --csv`): one row
    per (bytes, algo): time_us, algbw_gbs, busbw_gbs, the MPI library's figures beside them
    and their ratio."""
    with tempfile.TemporaryDirectory(prefix="dtlab-") as tmp:
        path = os.path.join(tmp, "bench.csv")
        mpirun(np_, [program("dtcoll-bench")] + flags(dict(options, algos=list(algos)))
               + ["--csv", path], timeout=timeout)
        return pd.read_csv(path, float_precision="round_trip")  # every bit dtsim wrote


# ---------------------------------------------------------------- the simulated allreduce

def coll_timing(ranks, sizes, algos=("ring", "rhd", "dbtree", "hier", "torus2d"), group=8,
                alpha=2e-6, beta=8e-10, alpha_intra=1e-7, beta_intra=1e-11, timeout=600):
    """One allreduce of each size (bytes) and algorithm on `ranks` simulated ranks of the
    flat 1024-host platform (tests/coll/flat1024.xml: every host on its own link, one
    switch; α = 2 µs and β = 0.8 ns/B as set), `group` consecutive ranks per host, timed
    by SimGrid beside dtlab's α-β cost model (coll_check --timing-csv). torus2d runs with
    its rows inside the hosts (X = group). The ring's rounds are coarsened by ⌈ranks/16⌉ as
    dtsim does (coll_coarsen.c). One row per (ranks, bytes, algo; hier and torus2d name
    their variant and inner algorithm, e.g. hier/reduce/ring): simulated_s, model_s."""
    smpirun = shutil.which("smpirun")
    exe = os.path.join(build_dir(), "tests", "coll", "coll_check_smpi.so")
    if not smpirun or not os.path.isfile(exe):
        raise DtlabError("the simulated allreduce needs SimGrid (smpirun) and "
                         f"{exe}: build dtlab with SimGrid installed")
    if ranks % group or ranks // group > 1024:
        raise DtlabError(f"{ranks} ranks do not fill hosts of {group} on the 1024 hosts")
    frames = []
    with tempfile.TemporaryDirectory(prefix="dtlab-") as tmp:
        hosts = os.path.join(tmp, "hosts")
        with open(hosts, "w") as f:
            for h in range(ranks // group):
                f.write(f"node-{h}\n" * group)
        path = os.path.join(tmp, "timing.csv")
        for size in sizes:
            run([smpirun, "-platform", os.path.join(REPO, "tests", "coll", "flat1024.xml"),
                 "-hostfile", hosts, "-no-privatize", "--cfg=smpi/simulate-computation:no",
                 "--cfg=network/model:CM02", "--cfg=network/crosstraffic:0",
                 "--cfg=smpi/test:0", "--cfg=smpi/send-is-detached-thresh:0",
                 "--log=root.thres:critical", "-np", str(ranks), exe,
                 "--timing", str(size), "--algos", ",".join(algos), "--group", str(group),
                 "--alpha", str(alpha), "--beta", str(beta), "--alpha-intra",
                 str(alpha_intra), "--beta-intra", str(beta_intra), "--share", str(group),
                 "--tx", str(group),
                 "--coarsen", str(max(1, (ranks + 15) // 16)), "--timing-csv", path],
                timeout=timeout)
        frames.append(pd.read_csv(path, float_precision="round_trip"))
    return pd.concat(frames, ignore_index=True)


# ---------------------------------------------------------------- the papers

def papers():
    """What the landmark papers report (bench/papers.py's PAPERS): one row per preset with
    its GPUs, time-to-train (s), efficiency points, their sources and the dtsim flags a
    point needs beyond its preset (args: "--per-gpu-batch 32", or "")."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("dtlab_papers",
                                                  os.path.join(REPO, "bench", "papers.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = []
    for p in mod.PAPERS:
        for point in p["eff"]:
            rows.append(dict(preset=p["preset"], who=p["who"], paper_gpus=p["gpus"],
                             time_s=p["time_s"], eff_gpus=point[0], efficiency=point[1],
                             base_gpus=p["base"], source=p["eff_src"],
                             args=" ".join(point[2]) if len(point) > 2 else ""))
    return pd.DataFrame(rows)
