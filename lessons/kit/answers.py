#!/usr/bin/env python3
"""answers.py — grades a lesson's answer sheet: the numbers a student read off the lesson's
experiment, against what the lesson's answers_key.sh computes with dtlab's own tools.

usage: answers.py LESSON_DIR SHEET PROGRAMS_DIR

SHEET (the student's answers.txt) holds one answer a line, `key = number`; `#` starts a
comment; a value of TODO is an answer not written yet. A plain text file rather than C: the
answers are numbers read off runs, not code, so a sheet needs no build between edits and
has nothing to call (the no_library_answer check has no surface here), and a bad line is
named by its number.

LESSON_DIR/answers_key.sh PROGRAMS_DIR prints the key, one line per answer, tab-separated:
    key <TAB> value <TAB> tolerance <TAB> how it was computed
tolerance: "2%" (relative), "+-3" (absolute), or "0" (exact); a value of NA means the key
could not be computed (the how field says why: e.g. the student's planner failed). The
script gets PROGRAMS_DIR, the build folder of the variant graded (build/lessons/NN/<variant>)
for keys computed with the student's own code (07's planner, 08's trust, 09's underflow),
and DT_BUILD, DT_SOURCE in its environment.

Prints one line per key, `PASS answer_<key> ...` (with the key's value) or `FAIL
answer_<key>: hint` (too high or too low, and how the key is computed, not its value: a
sheet must not be answerable by copying a failure's line); exit 0 when
every answer passed, 1 when one failed, 2 when the key could not be run at all.
"""
import os
import re
import subprocess
import sys


def read_sheet(path):
    """{key: (line number, text of the value)} and a list of (line, problem)."""
    answers, problems = {}, []
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError as e:
        return None, [(0, f"cannot read {path}: {e.strerror}")]
    for no, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(\S.*?)", text)
        if not m:
            problems.append((no, f"expected `key = number`, got {line.strip()!r}"))
            continue
        answers[m.group(1)] = (no, m.group(2))
    return answers, problems


def parse_tol(tol):
    """(relative, absolute) from "2%", "+-3" or "0"."""
    if tol.endswith("%"):
        return float(tol[:-1]) / 100, 0.0
    if tol.startswith("+-"):
        return 0.0, float(tol[2:])
    return 0.0, float(tol)


def main():
    if len(sys.argv) != 4:
        print("usage: answers.py LESSON_DIR SHEET PROGRAMS_DIR", file=sys.stderr)
        return 2
    lesson, sheet, programs = sys.argv[1:]
    script = os.path.join(lesson, "answers_key.sh")
    try:
        run = subprocess.run(["bash", script, programs], capture_output=True, text=True,
                             timeout=240)
    except subprocess.TimeoutExpired:
        print(f"# the answer key did not finish in 240 s ({script})")
        return 2
    keys = []
    for line in run.stdout.split("\n"):
        f = line.split("\t")
        if len(f) == 4 and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", f[0]):
            keys.append(f)
    if run.returncode != 0 or not keys:
        print(f"# the answer key could not be computed ({script} exited {run.returncode}):")
        print("\n".join("#   " + l for l in (run.stderr or run.stdout).strip().split("\n")[-5:]))
        return 2
    name = os.path.relpath(sheet, os.environ.get("DT_SOURCE", "."))
    answers, problems = read_sheet(sheet)
    print(f"# answer sheet {name}: {len(keys)} answers, against {os.path.basename(script)}")
    for no, why in problems:
        print(f"# {name}:{no}: {why}")
    known = {k[0] for k in keys}
    for k in sorted(set(answers or {}) - known):
        print(f"# {name}:{answers[k][0]}: unknown key '{k}' (the sheet's keys: "
              f"{', '.join(sorted(known))})")
    failed = 0
    for key, value, tol, how in keys:
        check = f"answer_{key}"
        if answers is None:
            print(f"FAIL {check}: {problems[0][1]} (copy it from the lesson's folder)")
            failed += 1
            continue
        if key not in answers:
            print(f"FAIL {check}: no line `{key} = ...` in {name} (the README's experiment "
                  f"asks it: {how})")
            failed += 1
            continue
        no, text = answers[key]
        if text.upper() == "TODO":
            print(f"FAIL {check}: not answered yet ({name}:{no} reads TODO); the README's "
                  f"experiment asks it")
            failed += 1
            continue
        try:
            got = float(text.replace("_", ""))
        except ValueError:
            print(f"FAIL {check}: {name}:{no}: '{text}' is not a number (write the number "
                  f"alone, in the unit the sheet's comment names)")
            failed += 1
            continue
        if value == "NA":
            print(f"FAIL {check}: you wrote {text}; the key could not be computed: {how}")
            failed += 1
            continue
        want = float(value)
        rel, ab = parse_tol(tol)
        ok = abs(got - want) <= max(rel * abs(want), ab) + 1e-12 * abs(want)
        margin = f"within {tol}" if tol != "0" else "exactly"
        if ok:
            print(f"PASS {check} {got:g} (the key: {want:g}, {margin}; {how})")
        else:  # the key's value is not shown: the sheet would be answered by a wrong guess
            print(f"FAIL {check}: you wrote {got:g}: too {'high' if got > want else 'low'} "
                  f"(more than {tol} off) against the key, computed as: {how}"
                  if tol != "0" else f"FAIL {check}: you wrote {got:g}: not the key's "
                  f"(too {'high' if got > want else 'low'}), computed as: {how}")
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
