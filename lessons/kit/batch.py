#!/usr/bin/python3
"""batch.py — the instructor's batch grader (lessons/grade NN --submissions DIR ...).

usage (through lessons/grade, which passes --cwd):
  lessons/grade NN --submissions DIR [--out CSV] [--threshold PCT] [--min-run TOKENS]
                   [--timeout S] [--work WORK]
  lessons/grade NN --gradescope SUBMISSION_DIR RESULTS_JSON [--timeout S] [--work WORK]
  lessons/grade NN --work WORK      make and build the pristine tree only (an autograder's
                                    setup step), then stop

DIR holds one folder per student (the folder's name is the student's id) with that student's
copies of the lesson's files: those of the lesson's dt_lesson(NN SOURCES ...) line in
lesson.cmake, and answers.txt where the lesson has one. A file left out is graded as the
skeleton's, and the row says so. Nothing else is ever taken from a submission (no header,
script or CMake file: those are the repository's).

The grading tree is pristine: `git archive HEAD` of this repository, made once in WORK
(a temporary folder unless --work names one; a WORK already holding HEAD's tree is reused)
and built once there (target lessonNN_student). For each submission, its files replace the
lesson's, `lessons/grade NN --instructor` grades them in that tree (the public checks, the
instructor-only cases, the answer sheet against the key the grade computes there), and the
pristine files are put back. Each grade runs under --timeout seconds (900 by default); a
hang or a crash is that submission's status, and the batch goes on.

Output: CSV (default lesson-NN-grades.csv), one row per student; beside it CSV-stem.logs/
(each student's full grade log) and CSV-stem.similarity.txt (kit/similarity.py: each
submission against dtlab's source, the solution and the other submissions; pairs at or above
--threshold percent, 50 by default, are named there and in the CSV's similar_to). Every file
is written to a temporary name and renamed at the end: an interrupted or refused run leaves
no partial output. Exit 0 when the batch ran (whatever the grades), 1 when the pristine tree
could not be made or built, 2 on bad input (a message naming the option).

--gradescope: one submission (SUBMISSION_DIR holds its files, as Gradescope's
/autograder/submission does), graded the same way, written as Gradescope's results.json:
one test per check (score 1 or 0 of max_score 1, output the check's line; instructor-only
checks visible after publication), a crash or hang as a failed test, the similarity to
dtlab's source and the solution as a hidden test of no points.
"""
import argparse
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import similarity  # noqa: E402  (kit/similarity.py, beside this file)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STAMP = ".dtlab-batch-commit"  # in WORK/tree: the commit the tree was archived and built from
MARK = ".dtlab-batch-work"  # in WORK: a folder of this script's (it may remove what is in it)


USAGE = """lessons/grade NN --submissions DIR [--out CSV] [--threshold PCT] [--min-run TOKENS]
                       [--timeout S] [--work WORK]
       lessons/grade NN --gradescope SUBMISSION_DIR RESULTS_JSON [--timeout S] [--work WORK]
       lessons/grade NN --work WORK"""


def bad(msg):
    print(f"lessons/grade: {msg}", file=sys.stderr)
    sys.exit(2)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="lessons/grade", usage=USAGE)
    p.add_argument("num", metavar="NN")
    p.add_argument("--cwd", default=os.getcwd(), help=argparse.SUPPRESS)
    p.add_argument("--submissions", metavar="DIR")
    p.add_argument("--gradescope", nargs=2, metavar=("SUBMISSION_DIR", "RESULTS_JSON"))
    p.add_argument("--out", metavar="CSV")
    p.add_argument("--threshold", type=int, default=50, metavar="PCT")
    p.add_argument("--min-run", type=int, default=32, metavar="TOKENS")
    p.add_argument("--timeout", type=int, default=900, metavar="S")
    p.add_argument("--work", metavar="WORK")
    a = p.parse_args(argv)
    here = a.cwd
    fix = lambda x: None if x is None else os.path.abspath(os.path.join(here, x))  # noqa: E731
    a.submissions, a.out, a.work = fix(a.submissions), fix(a.out), fix(a.work)
    if a.gradescope:
        a.gradescope = [fix(x) for x in a.gradescope]
    if a.submissions and a.gradescope:
        bad("--submissions and --gradescope: one or the other (a folder of students, or one)")
    if not (a.submissions or a.gradescope or a.work):
        bad("--submissions DIR, --gradescope SUBMISSION_DIR RESULTS_JSON or --work WORK needed")
    if not 1 <= a.threshold <= 100:
        bad(f"--threshold {a.threshold}: a percentage, 1 to 100")
    if a.min_run < 4:
        bad(f"--min-run {a.min_run}: at least 4 tokens (sim_c's runs; 32 here, 24 is sim_c's own)")
    if a.timeout < 10:
        bad(f"--timeout {a.timeout}: at least 10 seconds per submission")
    return a


def lesson_files(lesson_dir, num):
    """The student's files: dt_lesson(NN SOURCES ...)'s, then answers.txt if there is one."""
    with open(os.path.join(lesson_dir, "lesson.cmake"), encoding="utf-8") as f:
        text = re.sub(r"#[^\n]*", "", f.read())
    m = re.search(r"\bdt_lesson\(\s*" + num + r"\b([^)]*)\)", text)
    if not m:
        bad(f"lesson {num}: no dt_lesson({num} SOURCES ...) line in {lesson_dir}/lesson.cmake")
    words, files, on = m.group(1).split(), [], False
    for w in words:
        if w in ("SOURCES",):
            on = True
        elif w.isupper():
            on = False
        elif on:
            files.append(w)
    if os.path.isfile(os.path.join(lesson_dir, "answers.txt")):
        files.append("answers.txt")
    return files


def scan_submissions(d, files, option):
    """{student: folder}: d's folders (hidden ones left out); --gradescope: d itself."""
    if not os.path.isdir(d):
        bad(f"{option} {d}: no such folder")
    if option == "--gradescope":
        return {"submission": d}
    subs = {e.name: e.path for e in os.scandir(d)
            if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")}
    if not subs:
        loose = [f for f in files if os.path.isfile(os.path.join(d, f))]
        hint = (f" (it holds {', '.join(loose)} itself: one submission? --gradescope DIR OUT "
                "grades one)") if loose else ""
        bad(f"{option} {d}: no submission folders in it (one folder per student){hint}")
    return subs


def collect(folder, files):
    """The submitted files of one folder ({fname: path}) and what the row says about it."""
    got, notes = {}, []
    for f in files:
        p = os.path.join(folder, f)
        if os.path.isfile(p) and not os.path.islink(p):
            got[f] = p
        elif os.path.lexists(p):
            notes.append(f"{f} not a regular file: the skeleton's graded")
        else:
            notes.append(f"{f} missing: the skeleton's graded")
    extra = sorted(e for e in os.listdir(folder) if e not in files and not e.startswith("."))
    if extra:
        notes.append("ignored: " + " ".join(extra))
    return got, notes


def session_pids(sid):
    """The processes of session sid (a grade's: `timeout` puts its command in a process
    group of its own, so the group of the grade's first process misses it)."""
    pids = []
    for e in os.listdir("/proc"):
        try:
            with open(f"/proc/{e}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()
            if int(state[3]) == sid and state[0] != "Z":  # (a zombie is gone already)
                pids.append(int(e))
        except (ValueError, OSError, IndexError):
            continue
    return pids


def stop_session(sid):
    """SIGTERM to every process of the session, then SIGKILL to those left after 5 s."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in session_pids(sid):
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        for _ in range(50):
            if not session_pids(sid):
                return
            time.sleep(0.1)


def run(cmd, cwd, log=None, timeout=None, env=None):
    """cmd in a session of its own; its exit status, or None when it ran past timeout (then
    every process of the session is stopped)."""
    out = open(log, "ab") if log else subprocess.DEVNULL
    try:
        pr = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                              stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            return pr.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_session(pr.pid)
            pr.wait()
            return None
    finally:
        if log:
            out.close()


def pristine_tree(work, num, log):
    """WORK/tree: `git archive HEAD` of the repository, configured and built for lesson NN
    (reused when it already holds HEAD's tree). Returns the tree's path."""
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "-q", "--verify", "HEAD"],
                          capture_output=True, text=True)
    if head.returncode != 0:
        bad(f"{ROOT} is not a git checkout with a commit: the pristine tree is `git archive HEAD`")
    commit, tree = head.stdout.strip(), os.path.join(work, "tree")
    stamp, mark = os.path.join(tree, STAMP), os.path.join(work, MARK)
    if os.listdir(work) and not os.path.isfile(mark):
        bad(f"--work {work}: holds something else; name a new or empty folder")
    open(mark, "w").close()
    for e in os.listdir(work):  # what a run cut short left: scratch folders
        if e.startswith(("logs-", "sim-")):
            shutil.rmtree(os.path.join(work, e), ignore_errors=True)
    if os.path.isfile(stamp) and open(stamp).read().strip() == commit:
        print(f"pristine tree: {tree} (HEAD {commit[:12]}, reused)")
    else:
        for d in (tree, os.path.join(work, "pristine")):
            shutil.rmtree(d, ignore_errors=True)
        os.makedirs(tree)
        arch = subprocess.Popen(["git", "-C", ROOT, "archive", "HEAD"], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", tree], stdin=arch.stdout, check=True)
        if arch.wait() != 0:
            print("lessons/grade: git archive HEAD failed", file=sys.stderr)
            sys.exit(1)
        print(f"pristine tree: {tree} (git archive HEAD {commit[:12]})")
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "lessons", "nn"],
                           capture_output=True, text=True).stdout.strip()
    if dirty:
        print("note: uncommitted changes under lessons/ or nn/ are not in the pristine tree "
              "(it is HEAD): commit them to grade with them")
    build = os.path.join(tree, "build")
    t0 = time.time()
    steps = [] if os.path.isfile(os.path.join(build, "CMakeCache.txt")) else \
        [["cmake", "-S", ".", "-B", "build", "-DCMAKE_BUILD_TYPE=Release"]]
    steps.append(["cmake", "--build", "build", "--target", f"lesson{num}_student", "-j2"])
    for cmd in steps:
        if run(cmd, tree, log) != 0:
            with open(log, encoding="utf-8", errors="replace") as f:
                tail = f.readlines()[-30:]
            print("".join(tail) + f"lessons/grade: the pristine tree does not build "
                  f"({' '.join(cmd)}, in {tree})", file=sys.stderr)
            sys.exit(1)
    with open(stamp, "w") as f:
        f.write(commit + "\n")
    print(f"pristine build: {time.time() - t0:.1f} s (lesson{num}_student; log {log})")
    return tree


def parse_log(path):
    """The grade's lines: passed and failed check names in order, the score line, CRASH or
    HANG lines, and the simulated times its lines print."""
    passed, failed, score, crash, times = [], [], None, None, []
    num = r"([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)\s*(s|ms|us|µs)\b"
    unit = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6}
    with open(path, encoding="utf-8", errors="replace") as f:
        for ln in f:
            ln = ln.rstrip("\n")
            m = re.match(r"^(PASS|FAIL) (\S+?):?(?:\s|$)", ln)
            if m:
                (passed if m.group(1) == "PASS" else failed).append(m.group(2))
                t = re.search(r"simulated\s+" + num, ln) or re.search(num + r"\s+simulated", ln)
                if t:
                    ps = re.findall(r"\bP[ =](\d+)\b", ln[:t.start()])
                    at = f" P={ps[-1]}" if ps else ""
                    secs = float(t.group(1)) * unit[t.group(2)]
                    times.append(f"{m.group(2)}{at}: {secs:.4e} s")
            elif ln.startswith(("CRASH:", "HANG:")):
                crash = ln
            elif ln.startswith("score: "):
                score = ln
    return passed, failed, score, crash, times


def parts(passed, failed):
    """Pass counts per part: the library check, the public checks, instructor.*, answer_*."""
    def part(name):
        if name == "no_library_answer":
            return "library"
        if name.startswith("instructor."):
            return "instructor"
        return "answers" if name.startswith("answer_") else "public"
    out = {k: [0, 0] for k in ("library", "public", "instructor", "answers")}
    for names, ok in ((passed, 1), (failed, 0)):
        for n in names:
            out[part(n)][0] += ok
            out[part(n)][1] += 1
    return {k: "ok" if t is None else f"{p}/{t}" if t else "" for k, (p, t) in out.items()}


def grade_one(tree, lesson_rel, num, files, student, folder, logdir, timeout, instructor):
    """One submission graded in the pristine tree; its row (a dict)."""
    lesson = os.path.join(tree, lesson_rel)
    got, notes = collect(folder, files)
    name = re.sub(r"[^\w.+-]", "_", student)
    while os.path.exists(os.path.join(logdir, name + ".log")):  # two ids, one file name
        name += "_"
    log = os.path.join(logdir, name + ".log")
    row = {"student": student, "missing": "; ".join(notes), "log": os.path.basename(log)}
    if not got:
        row.update(status="no files", score="", failed="")
        with open(log, "w") as f:
            f.write(f"# {student}: none of {', '.join(files)}: not graded\n")
        return row, got
    with open(log, "w") as f:
        f.write(f"# {student}: {', '.join(sorted(got))} submitted" +
                (f"; {'; '.join(notes)}" if notes else "") + "\n")
    saved = os.path.join(os.path.dirname(tree), "pristine")
    try:
        for f, p in got.items():  # the student's files, and nothing else, into the lesson
            shutil.copyfile(p, os.path.join(lesson, f))
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("LESSON_") or k == "LESSON_TIMEOUT"}
        env.pop("BUILD", None)
        cmd = ["bash", "lessons/grade", num] + (["--instructor"] if instructor else [])
        t0 = time.time()
        rc = run(cmd, tree, log, timeout, env)
        row["seconds"] = f"{time.time() - t0:.1f}"
    finally:
        for f in files:  # the pristine files back, before the next submission
            shutil.copyfile(os.path.join(saved, f), os.path.join(lesson, f))
    passed, failed, score, crash, times = parse_log(log)
    text = open(log, encoding="utf-8", errors="replace").read()
    if rc is None:
        with open(log, "a") as f:
            f.write(f"HANG: the grade ran past --timeout {timeout} s and was stopped\n")
        status, failed = "hang", failed + ["(hang)"]
    elif "does not compile" in text and score is None:
        status, failed = "compile error", failed + ["(compile)"]
    elif "a run HUNG" in (score or "") or (crash or "").startswith("HANG"):
        status, failed = "hang", failed + ["(hang)"]
    elif "a run CRASHED" in (score or "") or crash:
        status, failed = "crash", failed + ["(crash)"]
    elif score is None:
        status = "error"  # the grade itself could not run: the log says why
    else:
        status = "pass" if rc == 0 and not failed else "fail"
    m = re.search(r"score: (\d+)/(\d+)", score or "")
    row.update(status=status, score=f"{m.group(1)}/{m.group(2)}" if m else f"{len(passed)}/?",
               failed=" ".join(dict.fromkeys(failed)), sim_time="; ".join(times),
               **parts(passed, [x for x in failed if not x.startswith("(")]))
    row["_checks"] = (passed, failed, text)
    return row, got


COLUMNS = ["student", "status", "score", "library", "public", "instructor", "answers",
           "sim_time", "failed", "missing", "similar_to", "seconds", "log"]
HEADER = {"failed": "failed_checks", "sim_time": "simulated_time", "missing": "files"}


def write_outputs(out, rows, logtmp, sim_text):
    """The CSV, the logs' folder and the similarity report, each renamed into place."""
    stem = out[:-4] if out.endswith(".csv") else out
    logs, rep = stem + ".logs", stem + ".similarity.txt"
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(out), prefix=".batch-", suffix=".csv")
    with os.fdopen(fd, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([HEADER.get(c, c) for c in COLUMNS])
        for r in rows:
            w.writerow([r.get(c, "") for c in COLUMNS])
    with open(rep + ".tmp", "w") as f:
        f.write(sim_text)
    if os.path.isdir(logs):
        shutil.rmtree(logs)
    os.replace(logtmp, logs)
    os.replace(rep + ".tmp", rep)
    os.replace(tmp, out)
    return logs, rep


def gradescope_json(row, findings, threshold):
    """Gradescope's results.json for one graded submission: a test per check of the grade
    (1 point each, as the grade's score counts them), the crash, hang or compile error as a
    failed test, the similarity as a hidden test of no points."""
    _passed, failed, text = row.get("_checks", ([], [], ""))
    tests, seen, why = [], set(), ""
    for ln in text.splitlines():  # the checks in the grade's order
        m = re.match(r"^(PASS|FAIL) (\S+?):?(?:\s|$)", ln)
        if m and m.group(2) not in seen:
            seen.add(m.group(2))
            ok = int(m.group(1) == "PASS")
            tests.append({"name": m.group(2), "score": ok, "max_score": 1,
                          "status": "passed" if ok else "failed", "output": ln,
                          "visibility": "after_published" if m.group(2).startswith("instructor.")
                          else "visible"})
        elif ln.startswith(("CRASH:", "HANG:")):
            why = ln
    for n in failed:  # (crash), (hang), (compile): a failed test, with the grade's reason
        if n.startswith("("):
            tests.append({"name": n.strip("()"), "score": 0, "max_score": 1, "status": "failed",
                          "output": why or text[-4000:], "visibility": "visible"})
    if row["status"] in ("error", "no files"):
        tests.append({"name": row["status"], "score": 0, "max_score": 1, "status": "failed",
                      "output": text[-4000:] or row.get("missing", ""), "visibility": "visible"})
    sim = "; ".join(h.label() for h in findings) or f"none at or above {threshold} %"
    tests.append({"name": "similarity (instructors only)", "score": 0, "max_score": 0,
                  "output": sim, "visibility": "hidden"})
    score_line = next((ln for ln in text.splitlines() if ln.startswith("score: ")), "")
    return {"score": sum(t["score"] for t in tests),
            "output": f"{row['status']}: {score_line}" + (f"\n{row['missing']}" if row.get("missing") else ""),
            "tests": tests}


def main():
    a = parse_args(sys.argv[1:])
    if not re.fullmatch(r"[0-9][0-9]", a.num):
        bad(f"lesson '{a.num}': NN, two digits")
    lessons = sorted(d for d in os.listdir(os.path.join(ROOT, "lessons")) if d.startswith(a.num + "-"))
    if not lessons:
        bad(f"no lesson {a.num} (lessons/{a.num}-*/)")
    lesson_rel = os.path.join("lessons", lessons[0])
    files = lesson_files(os.path.join(ROOT, lesson_rel), a.num)
    if a.submissions:
        subs = scan_submissions(a.submissions, files, "--submissions")
        out = a.out or os.path.join(a.cwd, f"lesson-{a.num}-grades.csv")
        if os.path.isdir(out) or not os.path.isdir(os.path.dirname(out)):
            bad(f"--out {out}: a CSV file's path, in a folder that exists")
    elif a.gradescope:
        subs = scan_submissions(a.gradescope[0], files, "--gradescope")
        out = a.gradescope[1]
        if os.path.isdir(out) or not os.path.isdir(os.path.dirname(out)):
            bad(f"--gradescope ... {out}: a JSON file's path, in a folder that exists")
    if a.work and os.path.exists(a.work) and not os.path.isdir(a.work):
        bad(f"--work {a.work}: not a folder")
    own_work = a.work is None
    work = a.work or tempfile.mkdtemp(prefix="dtlab-batch-")
    os.makedirs(work, exist_ok=True)
    try:
        tree = pristine_tree(work, a.num, os.path.join(work, "pristine-build.log"))
        files = lesson_files(os.path.join(tree, lesson_rel), a.num)  # HEAD's, as graded
        saved = os.path.join(work, "pristine")
        if not os.path.isdir(saved):
            os.makedirs(saved)
            for f in files:
                shutil.copyfile(os.path.join(tree, lesson_rel, f), os.path.join(saved, f))
        for f in files:  # a run cut short may have left a student's file in the tree
            shutil.copyfile(os.path.join(saved, f), os.path.join(tree, lesson_rel, f))
        if not (a.submissions or a.gradescope):
            print(f"pristine tree ready in {work}")
            return 0
        instructor = os.path.isfile(os.path.join(tree, lesson_rel, "instructor", "grade.sh"))
        logtmp = tempfile.mkdtemp(dir=work, prefix="logs-")
        rows, graded = [], {}
        for i, student in enumerate(sorted(subs), 1):
            row, got = grade_one(tree, lesson_rel, a.num, files, student, subs[student], logtmp,
                                 a.timeout, instructor)
            rows.append(row)
            graded[student] = got
            took = f" ({row['seconds']} s)" if row.get("seconds") else ""
            print(f"[{i}/{len(subs)}] {student}: {row['status']} {row['score']}".rstrip() + took,
                  flush=True)
        if similarity.have_sim():
            scratch = tempfile.mkdtemp(dir=work, prefix="sim-")
            findings, sim_text = similarity.report(tree, lesson_rel, files, graded, scratch,
                                                   a.threshold, a.min_run)
            shutil.rmtree(scratch, ignore_errors=True)
            for r in rows:
                r["similar_to"] = "; ".join(h.label() for h in findings[r["student"]])
        else:
            findings = {s: [] for s in subs}
            sim_text = "similarity not checked: sim_c is not installed (apt-get install similarity-tester)\n"
            print("note: " + sim_text.strip())
        if a.gradescope:
            res = gradescope_json(rows[0], findings["submission"], a.threshold)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(out), prefix=".results-", suffix=".json")
            with os.fdopen(fd, "w") as f:
                json.dump(res, f, indent=1)
            os.replace(tmp, out)
            print(f"results: {out} (score {res['score']})")
            return 0
        logs, rep = write_outputs(out, rows, logtmp, sim_text)
        print(f"grades: {out}\nlogs: {logs}/\nsimilarity: {rep}")
        return 0
    finally:
        if own_work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
