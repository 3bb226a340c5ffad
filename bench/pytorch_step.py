#!/usr/bin/env python3
"""The peer of bench/train_step.c: one torchvision training step (forward, backward, SGD with
momentum) on random data, timed the same way (warm-up steps, then the median of timed steps).
Prints one line: `images_per_s <float>`. Run with Debian's python3 (python3-torchvision)."""
import argparse
import contextlib
import statistics
import sys
import time

import torch
import torchvision


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--tf32", type=int, default=0, help="cuda: TF32 in convolutions and matmuls")
    ap.add_argument("--amp", default="none", choices=["none", "bf16", "fp16"],
                    help="mixed precision: torch.autocast to bf16 (cpu or cuda) or fp16 with a "
                         "GradScaler (cuda; PyTorch 1.13 autocasts the cpu to bf16 only)")
    a = ap.parse_args()
    if a.amp == "fp16" and a.device == "cpu":
        print("pytorch_step.py: --amp fp16 needs --device cuda (CPU autocast is bf16 only)",
              file=sys.stderr)
        sys.exit(2)
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    dev = torch.device(a.device)
    if a.device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = bool(a.tf32)
        torch.backends.cudnn.allow_tf32 = bool(a.tf32)
        torch.backends.cudnn.benchmark = True
    sync = torch.cuda.synchronize if a.device == "cuda" else (lambda: None)
    model = getattr(torchvision.models, a.model.replace("-", "_"))(num_classes=1000).to(dev)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    x = torch.randn(a.batch, 3, a.size, a.size, device=dev)
    y = torch.randint(0, 1000, (a.batch,), device=dev)
    loss_fn = torch.nn.CrossEntropyLoss()
    half = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(a.amp)
    cast = (lambda: torch.autocast(a.device, dtype=half)) if half else contextlib.nullcontext
    scaler = None
    if a.amp == "fp16":  # torch.amp.GradScaler("cuda") since 2.3; torch.cuda.amp's is deprecated
        scaler = (torch.amp.GradScaler("cuda") if hasattr(torch.amp, "GradScaler")
                  else torch.cuda.amp.GradScaler())
    times = []
    for i in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=False)
        with cast():
            loss = loss_fn(model(x), y)
        if scaler:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        sync()
        t1 = time.perf_counter()
        if i >= a.warmup:
            times.append(t1 - t0)
    print(f"images_per_s {a.batch / statistics.median(times):.4f}")
    print(f"torch {torch.__version__} threads {torch.get_num_threads()} "
          f"mkldnn {torch.backends.mkldnn.is_available()}")


if __name__ == "__main__":
    main()
