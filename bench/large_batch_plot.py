#!/usr/bin/env python3
"""bench/large_batch_plot.py CSV PNG — test top-1 against the global batch (log2 axis), one
line per optimizer and model, from bench/large_batch.sh's CSV; a diverged run is drawn at
chance level (10 %) with an x. Needs matplotlib (Debian: python3-matplotlib)."""
import csv
import sys


def main():
    if len(sys.argv) != 3:
        print("usage: large_batch_plot.py CSV PNG", file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("large_batch_plot.py: matplotlib is missing (apt-get install python3-matplotlib)",
              file=sys.stderr)
        return 2
    try:
        with open(sys.argv[1], newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        print(f"large_batch_plot.py: {e}", file=sys.stderr)
        return 2
    if not rows:
        print(f"large_batch_plot.py: {sys.argv[1]} has no runs", file=sys.stderr)
        return 2
    fig, ax = plt.subplots(figsize=(8, 5))
    for key in sorted({(r["model"], r["optimizer"]) for r in rows}):
        pts = sorted((int(r["global_batch"]), r) for r in rows
                     if (r["model"], r["optimizer"]) == key)
        xs = [b for b, _ in pts]
        ys = [100 * float(r["test_top1"]) if r["status"] == "ok" else 10.0 for _, r in pts]
        line, = ax.plot(xs, ys, marker="o", label=f"{key[0]} {key[1].upper()}")
        for b, r in pts:
            if r["status"] != "ok":
                ax.plot([b], [10.0], marker="x", color=line.get_color(), markersize=10)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("global batch")
    ax.set_ylabel("test top-1 (%)")
    ax.set_title(f"Fashion-MNIST, {rows[0]['epochs']} epochs: SGD (linear scaling) vs LARS")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=100)
    return 0


if __name__ == "__main__":
    sys.exit(main())
