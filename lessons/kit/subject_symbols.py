#!/usr/bin/env python3
"""subject_symbols.py — the library's answer is not in a split grader's subject (kit/subject.h).

usage: subject_symbols.py LESSON_DIR VARIANT_DIR

The functions of dtlab's that the lesson's calls.txt refuses (`refuse NAME ...`, dtlab's own
implementations of what the lesson grades: dt_sched_ring, dt_fusion_plan, ...) must not be
defined in the programs that run the student's files (VARIANT_DIR/subject, subject_mpi):
linked with --gc-sections, they hold only what the student's files call, so the address of
an allowed function plus an offset, or a walk of the symbol table, finds nothing of the
answer there. As a check on the check, dtlab's library (BUILD/nn/libdtnn.a, BUILD three
folders above VARIANT_DIR) must define at least one of them (else the names are not
dtlab's functions at all, and the check would pass on nothing).
Prints one PASS or FAIL line; exit 0 or 1 (2: a file is missing).
"""
import os
import subprocess
import sys


def defined(path):
    r = subprocess.run(["nm", "--defined-only", "-P", path], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"subject_symbols.py: nm {path}: {r.stderr.strip()}", file=sys.stderr)
        sys.exit(2)
    return {line.split(" ")[0] for line in r.stdout.splitlines() if line.strip()}


def main():
    if len(sys.argv) != 3:
        print("usage: subject_symbols.py LESSON_DIR VARIANT_DIR", file=sys.stderr)
        return 2
    lesson, variant = sys.argv[1:]
    refused = set()
    with open(os.path.join(lesson, "calls.txt"), encoding="utf-8") as f:
        for line in f:
            words = line.split()
            if len(words) >= 2 and words[0] == "refuse" and words[1].startswith("dt_"):
                refused.add(words[1])
    subjects = [os.path.join(variant, n) for n in ("subject", "subject_mpi")
                if os.path.isfile(os.path.join(variant, n))]
    lib = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(variant)))), "nn", "libdtnn.a")
    if not refused or not subjects or not os.path.isfile(lib):
        print(f"subject_symbols.py: {lesson}/calls.txt refuses no dt_ function, or "
              f"{variant} has no subject, or {lib} is missing", file=sys.stderr)
        return 2
    in_judge = refused & defined(lib)
    found = {}
    for s in subjects:
        for name in refused & defined(s):
            found.setdefault(name, os.path.basename(s))
    check = "subject_holds_none_of_dtlabs_answer"
    if not in_judge:
        print(f"FAIL {check}: dtlab's library defines none of {sorted(refused)}: are they "
              "dtlab's functions?")
        return 1
    if found:
        print(f"FAIL {check}: " + ", ".join(f"{s} defines {n}" for n, s in sorted(found.items()))
              + " (linked in: reachable by address from the student's code)")
        return 1
    print(f"PASS {check}: {', '.join(os.path.basename(s) for s in subjects)} define none of "
          f"{', '.join(sorted(refused))} (dtlab's library does: {', '.join(sorted(in_judge))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
