#!/usr/bin/env python3
"""check_notebook.py — runs a notebook headless and checks that its committed outputs are
the current code's.

usage: check_notebook.py NOTEBOOK.ipynb [--update] [--timeout SECONDS]

Executes a copy of the notebook with nbclient (the "python3" kernel, in the notebook's own
folder, DTLAB_BUILD passed on), then compares every cell's text outputs (printed text, and
the plain-text form of results and tables) with the committed ones. Cells tagged
"nondeterministic" (figures of real runs on this machine) must print the same text around
their numbers, and each number within the cell's stated relative tolerance (its metadata
"dtlab_tolerance", e.g. 0.1 for real losses on another CPU), or, where it states none
(wall-clock times), their numbers are not compared; the check says which. Figures are not
compared byte for byte (their data comes from the cells that are). Exit 0 when they
agree, 1 with the first difference (a stale notebook: rerun with --update and commit), 2 on
a failing cell, 77 (a skip, for CTest) when Jupyter's Python packages are missing.

--update writes the executed notebook over the committed one (atomically): what to run after
changing dtlab, before committing.
"""
import argparse
import difflib
import os
import re
import sys
import tempfile

NEEDED = ("nbformat", "nbclient", "ipykernel", "pandas", "matplotlib")


def texts(cell):
    """A code cell's comparable outputs: printed text and text/plain results, in order.
    Consecutive pieces of stdout are one text, as Jupyter shows them: a kernel flushes a
    print in as many messages as its timing makes (a loaded machine split one line in two)."""
    out, streaming = [], False
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream" and o.get("name") == "stdout":
            t = o.get("text", "")
            t = t if isinstance(t, str) else "".join(t)
            if streaming:
                out[-1] += t
            else:
                out.append(t)
            streaming = True
            continue
        streaming = False
        if o.get("output_type") in ("execute_result", "display_data"):
            data = o.get("data", {})
            if "text/plain" in data and "image/png" not in data:
                out.append(data["text/plain"])
        elif o.get("output_type") == "error":
            out.append(f"ERROR {o.get('ename')}: {o.get('evalue')}")
    return "\n".join(t if isinstance(t, str) else "".join(t) for t in out).rstrip()


NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def loose_difference(t0, t1, rel):
    """Why t1 differs from the committed t0 beyond the stated tolerance: other words around
    the numbers, or (rel given) a number further than rel x its committed value. "" if none."""
    def skeleton(t):  # the words, numbers masked, blanks collapsed (a table's column widths)
        return " ".join(NUMBER.sub("#", t).split())
    if skeleton(t0) != skeleton(t1):
        return f"other text: {skeleton(t1)[:200]!r} vs {skeleton(t0)[:200]!r}"
    if rel is None:
        return ""
    for x0, x1 in zip(NUMBER.findall(t0), NUMBER.findall(t1)):
        a, b = float(x0), float(x1)
        if abs(b - a) > rel * abs(a):
            return f"{x1} against the committed {x0} (tolerance {100 * rel:g} %)"
    return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("notebook")
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--timeout", type=int, default=300, help="per cell (default 300 s)")
    a = ap.parse_args()
    missing = []
    for m in NEEDED:
        try:
            __import__(m)
        except ImportError:
            missing.append(m)
    if missing:
        print(f"SKIPPED: {a.notebook}: this Python ({sys.executable}) lacks "
              f"{', '.join(missing)} (Debian: apt-get install python3-nbclient "
              f"python3-ipykernel python3-pandas python3-matplotlib)")
        return 77
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    try:
        committed = nbformat.read(a.notebook, as_version=4)
    except (OSError, ValueError) as e:
        print(f"check_notebook: {a.notebook}: cannot read it as a notebook ({e})")
        return 2
    run = nbformat.reads(nbformat.writes(committed), as_version=4)
    here = os.path.dirname(os.path.abspath(a.notebook))
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # ipykernel's debugger noise
    os.environ.setdefault("MPLBACKEND", "Agg")
    client = NotebookClient(run, timeout=a.timeout, kernel_name="python3",
                            resources={"metadata": {"path": here}})
    try:
        client.execute()
    except CellExecutionError as e:
        print(f"check_notebook: {a.notebook}: a cell failed:\n{e}")
        return 2
    if a.update:
        fd, tmp = tempfile.mkstemp(dir=here, suffix=".ipynb")
        os.close(fd)
        nbformat.write(run, tmp)
        os.replace(tmp, a.notebook)
        print(f"check_notebook: {a.notebook}: updated with this run's outputs")
        return 0
    old = [c for c in committed.cells if c.cell_type == "code"]
    new = [c for c in run.cells if c.cell_type == "code"]
    if len(old) != len(new):
        print(f"check_notebook: {a.notebook}: {len(old)} code cells committed, {len(new)} run")
        return 1
    compared = 0
    for i, (c0, c1) in enumerate(zip(old, new)):
        if "nondeterministic" in c0.get("metadata", {}).get("tags", []):
            # a real run's figures: the same text around them, and each number within the
            # cell's stated relative tolerance (metadata dtlab_tolerance), or not compared
            # where it states none (wall-clock times: another machine, another figure)
            rel = c0.get("metadata", {}).get("dtlab_tolerance")
            why = loose_difference(texts(c0), texts(c1), rel)
            if why:
                print(f"check_notebook: {a.notebook}: code cell {i + 1} (nondeterministic) "
                      f"printed something else than the committed output: {why}")
                return 1
            print(f"check_notebook: {a.notebook}: code cell {i + 1} is tagged nondeterministic "
                  f"(figures of real runs on this machine): the same text, " +
                  (f"each number within {100 * rel:g} % of the committed one" if rel is not None
                   else "its numbers not compared"))
            continue
        t0, t1 = texts(c0), texts(c1)
        compared += 1
        if t0 != t1:
            diff = "\n".join(difflib.unified_diff(t0.splitlines(), t1.splitlines(),
                                                  "committed", "this run", lineterm="", n=1))
            print(f"check_notebook: {a.notebook}: code cell {i + 1} printed something else "
                  f"than the committed output (stale: rerun with --update and commit):\n"
                  f"{diff[:3000]}")
            return 1
    print(f"check_notebook: {a.notebook}: ran every cell; the {compared} deterministic cells "
          f"print what is committed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
