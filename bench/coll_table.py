#!/usr/bin/env python3
"""coll_table.py — dtcoll-bench's CSV (--csv) as the Markdown tables of COLL-RESULTS.md.

    python3 bench/coll_table.py np2.csv              one run: our busbw in GB/s (ratio)
    python3 bench/coll_table.py a.csv b.csv c.csv    repeats: median ratio (lowest–highest)

Columns of the CSV: ranks,bytes,count,algo,time_us,algbw_gbs,busbw_gbs,mpi_time_us,
mpi_busbw_gbs,ratio,check. Sizes of 1 MiB and more end with each algorithm's geometric mean
of the (median) ratios and its lowest, as the benchmark's own summary lines do.
"""
import csv
import math
import statistics
import sys
from collections import defaultdict


def size_name(b):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift} {unit}"
    return f"{b} B"


def main(paths):
    if not paths:
        sys.exit("usage: coll_table.py RUN.csv [MORE.csv ...]")
    ratio, busbw, mpi_us, mpi_bw, algos = defaultdict(list), {}, defaultdict(list), {}, []
    need = {"bytes", "algo", "busbw_gbs", "mpi_time_us", "mpi_busbw_gbs", "ratio"}
    for path in paths:
        try:
            with open(path, newline="") as f:
                rows = list(csv.DictReader(f))
            if not rows or not need <= set(rows[0]):
                raise ValueError("expected dtcoll-bench --csv columns "
                                 "ranks,bytes,count,algo,time_us,...,ratio,check")
            for row in rows:
                b, a = int(row["bytes"]), row["algo"]
                if a not in algos:
                    algos.append(a)
                ratio[b, a].append(float(row["ratio"]))
                busbw[b, a] = float(row["busbw_gbs"])
                mpi_us[b].append(float(row["mpi_time_us"]))
                mpi_bw[b] = float(row["mpi_busbw_gbs"])
        except (OSError, ValueError, TypeError) as e:
            print(f"coll_table.py: {path}: {e}", file=sys.stderr)
            sys.exit(2)
    sizes = sorted(mpi_us)
    one = len(paths) == 1
    print("| size | MPI time (µs) | MPI busbw | " + " | ".join(algos) + " |")
    print("|---:|---:|---:|" + "---:|" * len(algos))
    for b in sizes:
        cells = []
        for a in algos:
            v = ratio.get((b, a))
            if not v:
                cells.append("")
            elif one:
                cells.append(f"{busbw[b, a]:.3f} ({v[0]:.2f})")
            else:
                cells.append(f"{statistics.median(v):.2f} ({min(v):.2f}–{max(v):.2f})")
        t = statistics.median(mpi_us[b])
        print(f"| {size_name(b)} | {t:.1f} | {mpi_bw[b]:.3f} | " + " | ".join(cells) + " |")
    big = [b for b in sizes if b >= 1 << 20]
    for a in algos:
        med = [statistics.median(ratio[b, a]) for b in big if (b, a) in ratio]
        if med:
            gm = math.exp(sum(map(math.log, med)) / len(med))
            print(f"\n{a}: sizes >= 1 MiB, geometric mean of the ratios {gm:.3f}, lowest {min(med):.2f}",
                  end="")
    print()


if __name__ == "__main__":
    main(sys.argv[1:])
