#!/bin/sh
# analytic_polls.sh — `dtsim --analytic` advances dbtree's pipeline one round per poll of the
# host during backward, as the simulation's trainer does (sim/dtsim_analytic.c,
# polled_finish): on 32 GPUs (4 nodes of 8) its exposed communication is within 15 % of the
# SimGrid simulation's and its iteration within 3 %. Priced without the polls, the analytic
# step hides almost all of it (about 1.5 ms exposed against 21). DTSIM = the program; PY = a
# Python 3.
set -u
"$PY" - "$DTSIM" <<'PYEOF'
import json, subprocess, sys
dtsim = sys.argv[1]
def run(*extra):
    # the cluster it was measured on: one EDR NIC per node, fp32 on the roofline alone
    p = subprocess.run([dtsim, "--algo", "dbtree", "--gpus", "32", "--nics", "1", "--precision",
                        "fp32", "--calib", "none", "--json", "--quiet", *extra],
                       capture_output=True, text=True)
    if p.returncode:
        print(p.stderr); print("FAIL: dtsim " + " ".join(extra)); sys.exit(1)
    return json.loads(p.stdout)[0]
def check(ok, msg):
    print(("ok: " if ok else "FAIL: ") + msg)
    if not ok: sys.exit(1)
s, a = run(), run("--analytic")
e_s, e_a = 1e3 * s["exposed_s"], 1e3 * a["exposed_s"]
check(e_s > 5, f"the simulation exposes {e_s:.2f} ms of dbtree's allreduce")
check(abs(e_a / e_s - 1) < 0.15, f"analytic exposed {e_a:.2f} ms, simulated {e_s:.2f} ms: within 15 %")
err = 100 * (a["iter_s"] / s["iter_s"] - 1)
check(abs(err) < 3, f"analytic iteration {1e3 * a['iter_s']:.2f} ms, simulated {1e3 * s['iter_s']:.2f} ms: {err:+.1f} %")
n = run("--analytic", "--no-overlap")
check(abs(n["exposed_s"] - n["comm_s"]) < 1e-12, "without overlap every bucket is exposed, as priced")
print("PASS analytic_polls")
PYEOF
