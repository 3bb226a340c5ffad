#!/usr/bin/env python3
"""compare_torchvision_names.py — checks that dtlab's parameter table for a model lists
exactly torchvision's state_dict (names, order and shapes; the num_batches_tracked buffers,
which dtlab keeps as one counter per network, left out) and the same trainable parameter
count. Not a numerical check: weights are not compared.

usage: compare_torchvision_names.py PRINTER MODEL [MODEL ...]
PRINTER is the dt_print_params program (tests/ref/print_params.c)."""
import subprocess
import sys


def ours(printer, model):
    out = subprocess.run([printer, model], check=True, capture_output=True, text=True).stdout
    table = []
    for line in out.splitlines():
        name, shape = line.split(" ")
        table.append((name, tuple(int(d) for d in shape.split(","))))
    return table


def theirs(model):
    import torchvision  # imported here so that --help works without it
    net = getattr(torchvision.models, model)(weights=None)
    table = [(k, tuple(v.shape)) for k, v in net.state_dict().items()
             if not k.endswith("num_batches_tracked")]
    return table, sum(p.numel() for p in net.parameters())


def compare(printer, model):
    a = ours(printer, model)
    b, trainable = theirs(model)
    bad = 0
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        if x != y:
            print(f"{model}: entry {i}: dtlab {x} torchvision {y}")
            bad += 1
            if bad >= 10:
                print(f"{model}: (further differences not shown)")
                break
    ours_trainable = sum(_numel(s) for n, s in a
                         if not n.endswith(("running_mean", "running_var")))
    if ours_trainable != trainable:
        print(f"{model}: {ours_trainable} trainable parameters, torchvision {trainable}")
        bad += 1
    print(f"{model}: {len(a)} tensors, {ours_trainable} trainable parameters: "
          f"{'OK' if bad == 0 else 'DIFFERENT'}")
    return bad == 0


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    printer, models = sys.argv[1], sys.argv[2:]
    ok = all([compare(printer, m) for m in models])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
