#!/usr/bin/env python3
"""handout_check.py — CI: what a fresh student handout (lessons/handout) holds and how its
grade behaves, one CHECK a run (a handout is a git archive, written in a second; nothing is
built):

usage: handout_check.py REPO BUILD CHECK

  hints-default  the default handout's HINTS.md: each lesson's hints 1 and 2, as in REPO,
                 no hint 3 (no line of one), and a note saying level 2
  hints-0        --hints 0 (as a tarball): each HINTS.md is its title and the note alone
  hints-bad      --hints 7 (and other bad levels): exit 2, a message naming --hints and the
                 value, nothing written (neither OUT nor a scratch file beside it)
  sheet          the skeleton's answer sheet, graded in the handout (LESSON_ANSWERS_ONLY,
                 the handout's own run_grader.sh, BUILD's kit.env pointed at the handout):
                 no key there, the TODOs fail and nothing passes; a sheet of numbers still
                 passes nothing (the instructor grades them), and says so
  solution       `lessons/grade NN --solution` (and --mutant) in the handout: exit 2, "the
                 reference solution is not in a handout", before building anything (BUILD:
                 a folder that builds nothing)

Prints PASS/FAIL lines; exit 0 when every one passed.
"""
import os
import re
import subprocess
import sys
import tarfile
import tempfile

BLOCK = re.compile(r"^<details>\n<summary>Hint (\d)[^\n]*\n.*?^</details>$", re.S | re.M)
failures = []


def check(ok, what):
    print(("PASS " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def handout(repo, *args, cwd=None):
    # the lessons' components ship compiled, from BUILD's reference/ (main() sets DTLAB_BUILD)
    return subprocess.run([os.path.join(repo, "lessons", "handout"), *args],
                          capture_output=True, text=True, timeout=120, cwd=cwd)


def lesson_dirs(root):
    base = os.path.join(root, "lessons")
    return sorted(d for d in os.listdir(base) if re.fullmatch(r"\d\d-.*", d))


def blocks(text):
    """[(hint number, the block's text)] of a HINTS.md."""
    return [(int(m.group(1)), m.group(0)) for m in BLOCK.finditer(text)]


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def hints_default(repo, work):
    out = os.path.join(work, "h")
    r = handout(repo, out)
    check(r.returncode == 0, f"lessons/handout {out}: exit {r.returncode} {r.stderr.strip()}")
    n = 0
    for d in lesson_dirs(repo):
        src = os.path.join(repo, "lessons", d, "HINTS.md")
        if not os.path.isfile(src):
            continue
        n += 1
        text, cut = read(src), read(os.path.join(out, "lessons", d, "HINTS.md"))
        want = [b for b in blocks(text) if b[0] <= 2]
        check(blocks(cut) == want and len(want) >= 2,
              f"{d}: hints 1 and 2 shipped as written ({len(want)} of them)")
        three = [b for k, b in blocks(text) if k == 3]
        others = set(text.split("\n")) - {l for b in three for l in b.split("\n")}
        only3 = {l for b in three for l in b.split("\n") if len(l.strip()) >= 20} - others
        leaked = [l for l in cut.split("\n") if l in only3]
        check(three and "<summary>Hint 3" not in cut and not leaked,
              f"{d}: no hint 3 ({len(three)} in the source), no line of one"
              + (f" (leaked: {leaked[0]!r})" if leaked else ""))
        check("level 2 of 3" in cut and "instructor can release" in cut,
              f"{d}: HINTS.md says it is cut at level 2 and that the instructor can release more")
    check(n >= 10, f"{n} lessons with HINTS.md checked")


def hints_0(repo, work):
    out = os.path.join(work, "h0.tar.gz")
    r = handout(repo, "--hints", "0", out)
    check(r.returncode == 0, f"lessons/handout --hints 0 {out}: exit {r.returncode} {r.stderr.strip()}")
    if r.returncode != 0:
        return
    n = 0
    with tarfile.open(out) as tar:
        for m in tar.getmembers():
            if not re.fullmatch(r"dtlab/lessons/\d\d-[^/]*/HINTS\.md", m.name):
                continue
            n += 1
            lines = tar.extractfile(m).read().decode().strip().split("\n")
            rest = [l for l in lines[1:] if l.strip() and not l.startswith("> ")]
            check(re.fullmatch(r"# Lesson \d\d — hints", lines[0]) is not None and not rest
                  and "level 0 of 3" in "\n".join(lines),
                  f"{m.name}: the title and the note (level 0) alone"
                  + (f"; also: {rest[0]!r}" if rest else ""))
    check(n >= 10, f"{n} HINTS.md in the --hints 0 tarball")


def hints_bad(repo, work):
    for args in (["--hints", "7"], ["--hints=7"], ["--hints", "two"], ["--hints"]):
        for name in ("h", "h.tar.gz"):
            parent = tempfile.mkdtemp(dir=work)
            # run in parent: a handout written by mistake (to OUT, or to the default
            # dtlab-handout.tar.gz) lands there
            outs = [os.path.join(parent, name)] if args != ["--hints"] else []
            r = handout(repo, *args, *outs, cwd=parent)
            bad = args[-1].split("=")[-1] if args != ["--hints"] else ""
            said = "--hints" in r.stderr and bad in r.stderr
            check(r.returncode == 2 and said and not os.listdir(parent),
                  f"lessons/handout {' '.join(args)} {name}: exit {r.returncode} (want 2), "
                  f"left {os.listdir(parent)}, said: {r.stderr.strip()}")
            if args == ["--hints"]:
                break


def kit_env(build, source, fake):
    """BUILD's kit.env with DT_SOURCE the handout, in a folder of its own."""
    os.makedirs(os.path.join(fake, "lessons"))
    text = read(os.path.join(build, "lessons", "kit.env"))
    text = re.sub(r"(?m)^DT_SOURCE=.*$", f"DT_SOURCE='{source}'", text)
    with open(os.path.join(fake, "lessons", "kit.env"), "w", encoding="utf-8") as f:
        f.write(text)


def grade_sheet(out, fake, num):
    env = dict(os.environ, LESSON_ANSWERS_ONLY="1")
    r = subprocess.run([os.path.join(out, "lessons", "kit", "run_grader.sh"), num, "student",
                        fake], capture_output=True, text=True, timeout=60, env=env)
    return r.returncode, r.stdout + r.stderr


def sheet(repo, build, work):
    out, fake = os.path.join(work, "h"), os.path.join(work, "build")
    r = handout(repo, out)
    check(r.returncode == 0, f"lessons/handout {out}: exit {r.returncode} {r.stderr.strip()}")
    keys = [p for p, _, fs in os.walk(out) for f in fs if f == "answers_key.sh"]
    check(not keys, f"the handout holds no answers_key.sh {keys[:1]}")
    kit_env(build, out, fake)
    n = 0
    for d in lesson_dirs(out):
        form = os.path.join(out, "lessons", d, "answers_form.txt")
        if not os.path.isfile(form):
            continue
        n, num = n + 1, d[:2]
        want = len([l for l in read(form).split("\n") if l.strip() and not l.startswith("#")])
        rc, said = grade_sheet(out, fake, num)
        ok = (rc == 1 and not re.search(r"(?m)^PASS ", said) and
              len(re.findall(r"(?m)^FAIL answer_\w+: not answered yet", said)) == want and
              f"score: 0/{want} checks passed" in said and "graded by the instructor" in said)
        check(ok, f"lesson {num}'s skeleton sheet in the handout: exit {rc}, {want} TODOs "
                  f"failed, nothing passed" + ("" if ok else f"; it printed:\n{said}"))
        sheet_path = os.path.join(out, "lessons", d, "answers.txt")
        numbers = re.sub(r"(?m)=[ \t]*TODO[ \t]*$", "= 1", read(sheet_path))
        with open(sheet_path, "w", encoding="utf-8") as f:
            f.write(numbers)
        rc, said = grade_sheet(out, fake, num)
        ok = (not re.search(r"(?m)^(PASS|FAIL) ", said) and "graded by the instructor" in said
              and f"{want} of {want} answered with a number" in said)
        check(ok, f"lesson {num}'s sheet of numbers in the handout: no PASS (the instructor "
                  f"grades them), no FAIL" + ("" if ok else f"; it printed:\n{said}"))
    check(n >= 10, f"{n} answer sheets graded in the handout")


def solution(repo, work):
    out, fake = os.path.join(work, "h"), os.path.join(work, "build")
    r = handout(repo, out)
    check(r.returncode == 0, f"lessons/handout {out}: exit {r.returncode} {r.stderr.strip()}")
    # a build folder that builds nothing (a grade that tried would fail at once, as "does
    # not compile", and leave its log), so that a regression costs no real build
    os.makedirs(os.path.join(fake, "lessons"))
    open(os.path.join(fake, "CMakeCache.txt"), "w").close()
    grade = os.path.join(out, "lessons", "grade")
    for d in lesson_dirs(out):
        for opt in (["--solution"], ["--mutant", "crash"]):
            g = subprocess.run([grade, d[:2], *opt], capture_output=True, text=True, timeout=60,
                               cwd=out, env=dict(os.environ, BUILD=fake))
            check(g.returncode == 2 and "reference solution is not in a handout" in g.stderr,
                  f"lessons/grade {d[:2]} {' '.join(opt)} in a handout: exit {g.returncode} "
                  f"(want 2): {g.stderr.strip()}")
    tried = os.listdir(os.path.join(fake, "lessons"))
    check(not tried, f"nothing was built {tried}")


def main():
    if len(sys.argv) != 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    repo, build, what = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3]
    os.environ["DTLAB_BUILD"] = build  # the lessons' components, compiled (lessons/handout)
    runs = {"hints-default": lambda w: hints_default(repo, w), "hints-0": lambda w: hints_0(repo, w),
            "hints-bad": lambda w: hints_bad(repo, w), "sheet": lambda w: sheet(repo, build, w),
            "solution": lambda w: solution(repo, w)}
    if what not in runs:
        print(f"handout_check.py: unknown CHECK '{what}' ({', '.join(runs)})", file=sys.stderr)
        return 2
    if subprocess.run(["git", "-C", repo, "rev-parse", "-q", "--verify", "HEAD"],
                      capture_output=True).returncode != 0:
        print("SKIPPED: no git repository (lessons/handout needs one)")
        return 77
    with tempfile.TemporaryDirectory() as work:
        runs[what](work)
    print(f"{'FAIL' if failures else 'PASS'}: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
