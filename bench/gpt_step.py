#!/usr/bin/env python3
"""One training step (forward, backward, AdamW) of gpt2-tiny on the CPU: dtlab
(bench_gpt_step) and the PyTorch reference module of tests/ref/gpt_crosscheck.py in the same
run, the median of timed steps after warm-up, and the ratio. Run with Debian's python3 inside
the build lock; prints a bench/RESULTS.md table row.
usage: gpt_step.py BUILD_DIR [--batch 8] [--seq 64] [--threads 2] [--warmup 3] [--steps 20]
                   [--precision fp32|bf16]
bf16: PyTorch under torch.autocast("cpu", torch.bfloat16) (its matmuls in bf16, fp32 master
weights), dtlab under --precision bf16 (nn/net_half.c: activations stored in bf16, fp32 math)."""
import contextlib
import argparse
import importlib.util
import os
import statistics
import subprocess
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(
        "gpt_crosscheck", os.path.join(here, "..", "tests", "ref", "gpt_crosscheck.py"))
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = ref.make_model()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    idx = torch.randint(0, ref.V, (a.batch, a.seq))
    tgt = torch.randint(0, ref.V, (a.batch, a.seq))
    times = []
    for s in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with (torch.autocast("cpu", dtype=torch.bfloat16) if a.precision == "bf16"
              else contextlib.nullcontext()):
            _, loss = model(idx, tgt)
        loss.backward()
        opt.step()
        if s >= a.warmup:
            times.append(time.perf_counter() - t0)
    torch_tps = a.batch * a.seq / statistics.median(times)
    out = subprocess.run([os.path.join(a.build, "bench", "bench_gpt_step"), "gpt2-tiny",
                          str(a.batch), str(a.seq), str(a.threads), str(a.warmup),
                          str(a.steps), a.precision], env=dict(os.environ, OMP_NUM_THREADS=str(a.threads)),
                         check=True, capture_output=True, text=True).stdout.split()
    ours = float(out[1])
    print("| gpt2-tiny %s | %d | %d | %d | %.0f | %.0f | %.2f | %s |" % (
        a.precision, a.batch, a.seq, a.threads, ours, torch_tps, ours / torch_tps, out[5]))


if __name__ == "__main__":
    main()
