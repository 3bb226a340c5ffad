#!/usr/bin/python3
"""batch_test.py — CI's test of the batch grader (lessons/grade NN --submissions,
kit/batch.py): lesson.batch_grader_grades_and_names_the_copy.

usage: batch_test.py SOURCE_DIR BUILD_DIR

A folder of five lesson-09 submissions — the reference solution, the skeleton, two mutants
(build/lessons/09/mutant_<check>/: one a public check catches, one only the instructor's
cases catch) and dtlab's own fp16 conversions and loss scaler (nn/kernels.h,
nn/lr_schedule.c) renamed into half.c — graded in one batch, then checked: five rows, the
solution passes and is not named against nn/, the skeleton and the mutants fail with their
checks named (the instructor's case among them: --instructor is in effect), the copy is
named against nn/kernels.h in the CSV and the similarity report; then one submission for
Gradescope (its results.json), and bad input refused with exit 2 and no output file.
Lesson 09: its grade takes ~3 s a submission and its pristine build ~20 s (dtnn and one
grader), and its library counterpart is a real one a student could transcribe.
Exit 77 (skipped) without git (the pristine tree is `git archive HEAD`), sim_c, or the
solution (a handout).
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

LESSON = "lessons/09-mixed-precision"
MUTANTS = {"mutant_a": ("to_half_ties_to_even", "to_half_ties_to_even"),
           "mutant_b": ("instructor__nan_payload_kept_unquieted", "instructor.to_half_nan_stays_nan")}
errors = []


def check(ok, what):
    print(("ok    " if ok else "WRONG ") + what)
    if not ok:
        errors.append(what)


def head_file(src, path):
    return subprocess.run(["git", "-C", src, "show", f"HEAD:{path}"], capture_output=True,
                          text=True, check=True).stdout


def body(text, signature):
    """The body of the function whose definition starts with signature, braces matched,
    #ifdef __CUDA_ARCH__ ... #endif blocks and DT_ASSERT lines left out."""
    at = text.find(signature)
    if at < 0:
        sys.exit(f"batch_test: {signature!r} is not in the library any more: update {__file__}")
    i = text.index("{", at)
    depth, j = 0, i
    while True:
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        j += 1
        if depth == 0:
            break
    code = re.sub(r"#ifdef __CUDA_ARCH__.*?#endif\n", "", text[i:j], flags=re.S)
    return re.sub(r"\n\s*DT_ASSERT\([^\n]*", "", code)


def the_copy(src):
    """half.c as a student who transcribed the library would hand it in: dtlab's bodies
    under the lesson's names."""
    k, ls = head_file(src, "nn/kernels.h"), head_file(src, "nn/lr_schedule.c")
    scaler = body(ls, "int dt_loss_scaler_update(")
    for a, b in (("ls->good_steps", "s->good"), ("ls->growth_interval", "s->interval"), ("ls->", "s->")):
        scaler = scaler.replace(a, b)
    return ("// half.c\n#include <math.h>\n#include <string.h>\n\n#include \"half.h\"\n\n"
            "uint16_t to_half(float f) " + body(k, "uint16_t dt_f32_to_f16(float f)") + "\n\n"
            "float from_half(uint16_t h) " + body(k, "float dt_f16_to_f32(uint16_t h)") + "\n\n"
            "int scaler_step(scaler *s, int overflow) " + scaler + "\n\n"
            "void wire_pack(const float *g, uint16_t *wire, size_t n) {\n"
            "    for (size_t k = 0; k < n; ++k) wire[k] = to_half(g[k]);\n}\n\n"
            "void wire_accumulate(float *acc, const uint16_t *wire, size_t n) {\n"
            "    for (size_t k = 0; k < n; ++k) acc[k] = acc[k] + from_half(wire[k]);\n}\n")


def make_submissions(src, build, subs):
    def put(student, name, text):
        os.makedirs(os.path.join(subs, student), exist_ok=True)
        with open(os.path.join(subs, student, name), "w") as f:
            f.write(text)
    for name in ("half.c", "answers.txt"):
        put("solution", name, head_file(src, f"{LESSON}/solution/{name}"))
        put("skeleton", name, head_file(src, f"{LESSON}/{name}"))
    for student, (mutant, _check) in MUTANTS.items():
        d = os.path.join(build, "lessons", "09", f"mutant_{mutant}")
        if not os.path.isfile(os.path.join(d, "half.c")):
            sys.exit(f"batch_test: {d}/half.c is missing: configure the build (it writes the mutants)")
        os.makedirs(os.path.join(subs, student))
        for name in ("half.c", "answers.txt"):
            shutil.copyfile(os.path.join(d, name), os.path.join(subs, student, name))
    put("copy", "half.c", the_copy(src))
    shutil.copyfile(os.path.join(subs, "solution", "answers.txt"), os.path.join(subs, "copy", "answers.txt"))


def grade(src, *args):
    r = subprocess.run([os.path.join(src, "lessons", "grade"), "09", *args], cwd=src,
                       capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: batch_test.py SOURCE_DIR BUILD_DIR")
    src, build = (os.path.abspath(x) for x in sys.argv[1:])
    if subprocess.run(["git", "-C", src, "rev-parse", "-q", "--verify", "HEAD"],
                      capture_output=True).returncode != 0:
        print("SKIPPED: no git repository (the batch grader's pristine tree is git archive HEAD)")
        return 77
    if not os.path.isdir(os.path.join(src, LESSON, "solution")):
        print("SKIPPED: a handout (no solution/, no mutants to grade)")
        return 77
    if shutil.which("sim_c") is None:
        print("SKIPPED: sim_c is not installed (apt-get install similarity-tester)")
        return 77
    tmp = tempfile.mkdtemp(prefix="dtlab-batch-test-")
    try:
        subs, work, out = (os.path.join(tmp, d) for d in ("subs", "work", "out"))
        os.makedirs(out)
        make_submissions(src, build, subs)
        csv_path = os.path.join(out, "grades.csv")
        rc, text = grade(src, "--submissions", subs, "--out", csv_path, "--work", work)
        print(text)
        check(rc == 0, f"the batch ran (exit {rc})")
        rows = {r["student"]: r for r in csv.DictReader(open(csv_path))} \
            if os.path.isfile(csv_path) else {}
        check(len(rows) == 5, f"5 rows in the CSV (got {len(rows)})")
        sol, skel, cp = rows.get("solution", {}), rows.get("skeleton", {}), rows.get("copy", {})
        check(sol.get("status") == "pass" and not sol.get("failed_checks"),
              f"the solution passes ({sol.get('status')}, {sol.get('score')})")
        check("nn/" not in sol.get("similar_to", "x"), "the solution is not named against nn/ "
              f"({sol.get('similar_to')!r})")
        check(skel.get("status") == "fail" and "from_half_all_65536_exact" in skel.get("failed_checks", "")
              and "answer_lost_pct_scale1" in skel.get("failed_checks", ""),
              f"the skeleton fails, its checks named ({skel.get('failed_checks', '')[:60]}...)")
        check(skel.get("similar_to", "x") == "", "the skeleton is named against nothing")
        for student, (_mutant, failing) in MUTANTS.items():
            r = rows.get(student, {})
            check(r.get("status") == "fail" and failing in r.get("failed_checks", "").split(),
                  f"{student} fails {failing} ({r.get('failed_checks')})")
        b = rows.get("mutant_b", {})
        p = b.get("public", "0/1").split("/")
        check(p[0] == p[1] and b.get("instructor", "").split("/")[0] != b.get("instructor", "").split("/")[-1],
              f"mutant_b passes every public check, fails an instructor one (public {b.get('public')}, "
              f"instructor {b.get('instructor')})")
        check("nn/kernels.h" in cp.get("similar_to", ""),
              f"the copy is named against nn/kernels.h in the CSV ({cp.get('similar_to')!r})")
        rep = os.path.join(out, "grades.similarity.txt")
        rep_text = open(rep).read() if os.path.isfile(rep) else ""
        check(re.search(r"^copy/half\.c:[\s\S]*?SIMILAR half\.c vs nn/kernels\.h", rep_text, re.M)
              is not None, "the copy is named against nn/kernels.h in the similarity report")
        logs = os.path.join(out, "grades.logs")
        check(os.path.isdir(logs) and len(os.listdir(logs)) == 5, "5 grade logs beside the CSV")
        # one submission, as Gradescope runs it (the pristine tree reused)
        js = os.path.join(out, "results.json")
        rc, text = grade(src, "--gradescope", os.path.join(subs, "copy"), js, "--work", work)
        res = json.load(open(js)) if os.path.isfile(js) else {"tests": []}
        hidden = [t for t in res["tests"] if t.get("visibility") == "hidden"]
        check(rc == 0 and res.get("score") == sum(t["score"] for t in res["tests"]) and
              len(res["tests"]) > 20, f"--gradescope wrote results.json (exit {rc}, "
              f"score {res.get('score')}, {len(res['tests'])} tests)")
        check(any("nn/kernels.h" in t["output"] for t in hidden),
              "results.json names the copy in a hidden test")
        # bad input: exit 2, a message naming the option, no output file
        bad_out = os.path.join(out, "bad.csv")
        os.makedirs(os.path.join(tmp, "empty"))
        for args, says in ((["--submissions", os.path.join(tmp, "none")], "--submissions"),
                           (["--submissions", os.path.join(tmp, "empty")], "--submissions"),
                           (["--submissions", subs, "--threshold", "0"], "--threshold")):
            rc, text = grade(src, *args, "--out", bad_out)
            check(rc == 2 and says in text and not os.path.exists(bad_out),
                  f"{' '.join(args[:1] + args[2:])} refused: exit {rc}, {text.strip()[:90]!r}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(errors)} wrong" if errors else "all right")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
