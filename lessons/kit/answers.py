#!/usr/bin/env python3
"""answers.py — grades a lesson's answer sheet: the numbers a student read off the lesson's
experiment, against what the lesson's key (instructor/answers_key.sh) computes with dtlab's
own tools; in a handout, which has no key, only the sheet's form.

usage: answers.py LESSON_DIR SHEET PROGRAMS_DIR

SHEET (the student's answers.txt) holds one answer a line, `key = number`; `#` starts a
comment; a value of TODO is an answer not written yet. A plain text file rather than C: the
answers are numbers read off runs, not code, so a sheet needs no build between edits and
has nothing to call (the no_library_answer check has no surface here), and a bad line is
named by its number.

LESSON_DIR/answers_form.txt (it ships) lists the keys the sheet must answer, one a line.

LESSON_DIR/instructor/answers_key.sh PROGRAMS_DIR (the instructor's checkout only:
lessons/handout leaves instructor/ out) prints the key, one line per answer, tab-separated:
    key <TAB> value <TAB> tolerance <TAB> how it was computed
tolerance: "2%" (relative), "+-3" (absolute), or "0" (exact); a value of NA means the key
could not be computed (the how field says why: e.g. the student's planner failed). The
script gets PROGRAMS_DIR, the build folder of the variant graded (build/lessons/NN/<variant>)
for keys computed with the student's own code (07's planner, 08's trust, 09's underflow),
and DT_BUILD, DT_SOURCE in its environment. Its keys must be the form's.

With the key: one line per key, `PASS answer_<key> ...` (with the key's value) or `FAIL
answer_<key>: hint` (too high or too low, and how the key is computed, not its value: a
sheet must not be answerable by copying a failure's line); exit 0 when every answer passed,
1 when one failed, 2 when the key could not be run at all (or disagrees with the form).

Without the key (a handout): the form alone. A key not answered with a number is a `FAIL
answer_<key>` line, a malformed line a `FAIL answer_sheet_form`; a number is a comment line,
never a PASS (it is not graded here, and a
sheet must not look passed before the instructor has graded it); exit 1 when a FAIL was
printed, else 0.
"""
import os
import re
import subprocess
import sys

KEY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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


def read_form(path):
    """The keys the sheet must answer (answers_form.txt), in order; None when unreadable."""
    try:
        with open(path, encoding="utf-8") as f:
            words = [l.split("#", 1)[0].strip() for l in f]
    except OSError:
        return None
    keys = [w for w in words if w]
    return keys if keys and all(KEY_NAME.fullmatch(k) for k in keys) else None


def parse_tol(tol):
    """(relative, absolute) from "2%", "+-3" or "0"."""
    if tol.endswith("%"):
        return float(tol[:-1]) / 100, 0.0
    if tol.startswith("+-"):
        return 0.0, float(tol[2:])
    return 0.0, float(tol)


def run_key(script, programs):
    """The key's lines [key, value, tolerance, how], or None after saying why it failed."""
    try:
        run = subprocess.run(["bash", script, programs], capture_output=True, text=True,
                             timeout=240)
    except subprocess.TimeoutExpired:
        print(f"# the answer key did not finish in 240 s ({script})")
        return None
    keys = []
    for line in run.stdout.split("\n"):
        f = line.split("\t")
        if len(f) == 4 and KEY_NAME.fullmatch(f[0]):
            keys.append(f)
    if run.returncode != 0 or not keys:
        print(f"# the answer key could not be computed ({script} exited {run.returncode}):")
        print("\n".join("#   " + l for l in (run.stderr or run.stdout).strip().split("\n")[-5:]))
        return None
    return keys


def form_failure(key, answers, problems, name, how):
    """(FAIL line, None) when the sheet does not answer key with a number, else (None, it)."""
    check = f"answer_{key}"
    if answers is None:
        return f"FAIL {check}: {problems[0][1]} (copy it from the lesson's folder)", None
    if key not in answers:
        return (f"FAIL {check}: no line `{key} = ...` in {name} (the README's experiment "
                f"asks it{': ' + how if how else ''})"), None
    no, text = answers[key]
    if text.upper() == "TODO":
        return (f"FAIL {check}: not answered yet ({name}:{no} reads TODO); the README's "
                f"experiment asks it"), None
    try:
        return None, float(text.replace("_", ""))
    except ValueError:
        return (f"FAIL {check}: {name}:{no}: '{text}' is not a number (write the number "
                f"alone, in the unit the sheet's comment names)"), None


def grade_one(check, got, text, value, tol, how):
    """The PASS or FAIL line of one answered key against the key's value."""
    if value == "NA":
        return f"FAIL {check}: you wrote {text}; the key could not be computed: {how}"
    want = float(value)
    rel, ab = parse_tol(tol)
    if abs(got - want) <= max(rel * abs(want), ab) + 1e-12 * abs(want):
        margin = f"within {tol}" if tol != "0" else "exactly"
        return f"PASS {check} {got:g} (the key: {want:g}, {margin}; {how})"
    side = "high" if got > want else "low"  # the key's value is not shown: no copying it
    if tol != "0":
        return (f"FAIL {check}: you wrote {got:g}: too {side} (more than {tol} off) against "
                f"the key, computed as: {how}")
    return f"FAIL {check}: you wrote {got:g}: not the key's (too {side}), computed as: {how}"


def say_sheet_problems(name, answers, problems, known):
    """The sheet's malformed lines and unknown keys, as comments."""
    for no, why in problems:
        print(f"# {name}:{no}: {why}")
    for k in sorted(set(answers or {}) - set(known)):
        print(f"# {name}:{answers[k][0]}: unknown key '{k}' (the sheet's keys: "
              f"{', '.join(sorted(known))})")


def grade_with_key(keys, form, name, answers, problems):
    """The instructor's grade: every answer against the key. Exit status."""
    known = [k[0] for k in keys]
    if form is None or sorted(form) != sorted(known):  # the handout checks the form's keys
        listed = f"lists {', '.join(sorted(form))}" if form else "is missing or malformed"
        print(f"# the key computes {', '.join(sorted(known))}, but the lesson's "
              f"answers_form.txt {listed}: make them the same keys")
        return 2
    print(f"# answer sheet {name}: {len(keys)} answers, against instructor/answers_key.sh")
    say_sheet_problems(name, answers, problems, known)
    failed = 0
    for key, value, tol, how in keys:
        fail, got = form_failure(key, answers, problems, name, how)
        line = fail or grade_one(f"answer_{key}", got, answers[key][1], value, tol, how)
        print(line)
        failed += line.startswith("FAIL ")
    return 1 if failed else 0


def grade_form(form, name, answers, problems):
    """A handout's check: every key answered with a number; no number counts as passed."""
    print(f"# answer sheet {name}: {len(form)} answers; its key (instructor/answers_key.sh) "
          f"is not in this handout: only the sheet's form is checked here")
    say_sheet_problems(name, answers, [], form)
    failed = numbers = 0
    if answers is not None:  # a malformed line may be a mistyped answer: fixed before handing in
        for no, why in problems:
            print(f"FAIL answer_sheet_form: {name}:{no}: {why}")
            failed += 1
    for key in form:
        fail, got = form_failure(key, answers, problems, name, "")
        if fail:
            print(fail)
            failed += 1
        else:
            print(f"#   answer_{key} = {got:g}: a number (graded by the instructor)")
            numbers += 1
    print(f"# the answer sheet's numbers are graded by the instructor, who has the key: "
          f"none of them counts in this score ({numbers} of {len(form)} answered with a "
          f"number)")
    return 1 if failed else 0


def main():
    if len(sys.argv) != 4:
        print("usage: answers.py LESSON_DIR SHEET PROGRAMS_DIR", file=sys.stderr)
        return 2
    lesson, sheet, programs = sys.argv[1:]
    script = os.path.join(lesson, "instructor", "answers_key.sh")
    form_path = os.path.join(lesson, "answers_form.txt")
    form = read_form(form_path)
    name = os.path.relpath(sheet, os.environ.get("DT_SOURCE", "."))
    answers, problems = read_sheet(sheet)
    if os.path.isfile(script):
        keys = run_key(script, programs)
        return 2 if keys is None else grade_with_key(keys, form, name, answers, problems)
    if form is None:
        print(f"# the answer sheet's form could not be read ({form_path}: one key a line), "
              f"and there is no key ({script})")
        return 2
    return grade_form(form, name, answers, problems)


if __name__ == "__main__":
    sys.exit(main())
