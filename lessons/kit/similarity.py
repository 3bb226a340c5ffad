"""similarity.py — the batch grader's similarity report (kit/batch.py), with Debian's
similarity-tester (`sim_c`, package similarity-tester; `man sim_c`).

Each submission's C files are compared with (a) dtlab's own source (nn/, real/, sim/: what a
student could transcribe, the handout keeps it readable), (b) the lesson's reference solution
(solution/), (c) every other submission's C files. sim_c reduces C to tokens (identifiers,
numbers and strings each become one token; layout and comments are ignored), so renaming and
reformatting do not hide a copy; `-p` gives "F consists for x % of G material": the share of
F's tokens found in G in runs of at least MIN_RUN tokens.

Only what the student wrote is measured: every line the submission shares with the lesson's
skeleton (the signatures, includes and helpers handed out) is blanked first, or every
submission would be "similar" to the solution and to every other submission through the
skeleton alone, and the skeleton itself to nn/. Lines of braces alone are kept (they match
anywhere and would otherwise cut a copied body into runs shorter than MIN_RUN).

Per pair (sim_c -e: each old file on its own, so that two students who copied one library
file are each named against it, not only against each other), and per group (nn/ real/ sim/
together, solution/ together: sim_c without -e counts each run of F once, so the sum is the
share of F found anywhere in the group: a copy pieced from several files shows there).
"""
import difflib
import os
import re
import shutil
import subprocess

LIBRARY_DIRS = ("nn", "real", "sim")  # dtlab's own source, as the pristine tree has it
C_EXT = (".c", ".h", ".cu")
LINE = re.compile(r"^(\S+) consists for (\d+) % of (\S+) material$")


def have_sim():
    return shutil.which("sim_c") is not None


def _c_files(root):
    """The C files under root, sorted (repository-relative order, for stable reports)."""
    out = []
    for d, dirs, files in os.walk(root):
        dirs.sort()
        out += [os.path.join(d, f) for f in sorted(files) if f.endswith(C_EXT)]
    return out


def blank_skeleton(skeleton_text, text):
    """text with every line it shares with the skeleton (difflib's matching blocks) blanked,
    except lines with no letter or digit (braces): the student's own lines, numbered as in
    the file."""
    a, b = skeleton_text.split("\n"), text.split("\n")
    keep = list(b)
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, _i1, _i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            for j in range(j1, j2):
                if re.search(r"\w", b[j]):
                    keep[j] = ""
    return "\n".join(keep)


def _sim(new, olds, min_run, each):
    """sim_c -p on one new file against olds: ({old: percent}, the new file's token count)."""
    if not olds:
        return {}, 0
    cmd = ["sim_c", "-p", "-S", "-t", "1", "-r", str(min_run)] + (["-e"] if each else [])
    res = subprocess.run(cmd + [new, "/"] + olds, capture_output=True, text=True,
                         errors="replace", timeout=600)
    pct, tokens = {}, 0
    for ln in res.stdout.splitlines():
        m = LINE.match(ln.strip())
        if m and m.group(1) == new:
            pct[m.group(3)] = max(pct.get(m.group(3), 0), int(m.group(2)))
        t = re.match(r"^File (\S+): (\d+) tokens", ln)
        if t and t.group(1) == new:
            tokens = int(t.group(2))
    return pct, tokens


class Finding:
    """One submission file's similarity to one other file (or group)."""

    def __init__(self, student, fname, other, kind, pct):
        self.student, self.fname, self.other, self.kind, self.pct = \
            student, fname, other, kind, pct

    def label(self):
        return f"{self.fname} vs {self.other} {self.pct}%"


def report(tree, lesson_rel, files, submissions, scratch, threshold, min_run):
    """Compares every submission; returns (findings {student: [Finding ≥ threshold]},
    text of the report). tree: the pristine tree (skeletons in tree/lesson_rel, solution
    in tree/lesson_rel/solution, the library under tree/nn...); files: the lesson's student
    file names; submissions: {student: {fname: path of the submitted file}} (missing files
    left out); scratch: an empty folder for the blanked copies."""
    lesson = os.path.join(tree, lesson_rel)
    cfiles = [f for f in files if f.endswith(C_EXT)]
    library = [p for d in LIBRARY_DIRS for p in _c_files(os.path.join(tree, d))]
    sol_dir = os.path.join(lesson, "solution")
    solution = [os.path.join(sol_dir, f) for f in cfiles if os.path.isfile(os.path.join(sol_dir, f))]
    # the student's own lines of every submitted C file, as scratch/sNNNN/<file>
    own, names = {}, {}
    for i, student in enumerate(sorted(submissions)):
        for f in cfiles:
            if f not in submissions[student]:
                continue
            with open(submissions[student][f], encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            with open(os.path.join(lesson, f), encoding="utf-8", errors="replace") as fh:
                skel = fh.read()
            p = os.path.join(scratch, f"s{i:04d}", f)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w", encoding="utf-8") as fh:
                fh.write(blank_skeleton(skel, text))
            own[(student, f)] = p
            names[p] = f"{student}/{f}"
    for p in library + solution:
        names[p] = os.path.relpath(p, tree if p in library else lesson)
    findings = {s: [] for s in submissions}
    lines = [f"# similarity: sim_c -p, runs of at least {min_run} tokens, pairs at or above "
             f"{threshold} % named (lessons/kit/similarity.py)",
             "# each submission's own lines (those it shares with the skeleton blanked) against",
             "# dtlab's source (nn/ real/ sim/), the lesson's solution/, and the other submissions", ""]
    for (student, f), p in sorted(own.items()):
        peers = [q for (s2, _f2), q in sorted(own.items()) if s2 != student]
        lib_each, tokens = _sim(p, library, min_run, True)
        groups = [("dtlab source", library, lib_each, "nn/ real/ sim/ together"),
                  ("solution", solution, _sim(p, solution, min_run, True)[0], "solution/ together"),
                  ("submissions", peers, _sim(p, peers, min_run, True)[0], None)]
        lines.append(f"{student}/{f}: {tokens} tokens of its own")
        for kind, olds, each, together in groups:
            pairs = sorted(((pct, names[o]) for o, pct in each.items()), reverse=True)
            hits = [Finding(student, f, n, kind, pct) for pct, n in pairs if pct >= threshold]
            if together and len(olds) > 1:  # the group as one: a copy pieced from several files
                union = min(100, sum(_sim(p, olds, min_run, False)[0].values()))
                if union >= threshold and not hits:
                    top = ", ".join(f"{n} {pct}%" for pct, n in pairs[:3])
                    hits.append(Finding(student, f, f"{together} ({top})", kind, union))
                lines.append(f"  {kind}: {union}% {together}; most: " +
                             (", ".join(f"{n} {pct}%" for pct, n in pairs[:3]) or "none"))
            else:
                lines.append(f"  {kind}: most: " +
                             (", ".join(f"{n} {pct}%" for pct, n in pairs[:3]) or "none"))
            for h in hits:
                lines.append(f"  SIMILAR {h.label()}  ({kind})")
            findings[student] += hits
    if not own:
        lines.append("(no submitted C file: nothing compared)")
    flagged = sorted(s for s, h in findings.items() if h)
    lines += ["", f"# {len(flagged)} of {len(submissions)} submissions named: " +
              (", ".join(flagged) or "none")]
    return findings, "\n".join(lines) + "\n"
