#!/usr/bin/env python3
"""readme_commands.py — every shell command of the lessons' README.md and HINTS.md, run as
written in a student's handout: each must start (no usage error, no missing file or
program, no refusal to run as root).

usage: readme_commands.py HANDOUT BUILD [--timeout S] [--lessons NN,NN] [--show N] [--list]
                          [--complete] [--variant V]

HANDOUT is a folder `lessons/handout` wrote; BUILD a configured and built build folder, which
the commands reach as HANDOUT/build (a link made here when HANDOUT has none). The commands
are the lines of the lessons' code blocks (fenced or indented) that start like a command —
lessons/..., build/..., mpirun, cmake, sh, bash, python3, a `for NAME in` loop up to its
`done`, with VAR=value in front — joined over trailing backslashes. A line with a
placeholder (`<seed>`, `...`) is a template, not a command: listed, not run.

Each command runs with bash in HANDOUT, in a session of its own, and is stopped after S
seconds (3 by default): a command still running by then has started. It fails when it
exits with 2 (usage), 126 or 127 (not executable, not found), or prints a usage line, an
unknown option, a missing file, "command not found" or Open MPI's refusal to run as root.
Other exits are the command's own verdict (a skeleton's grade fails cleanly with 1) and
pass, as does an exit 2 whose output says which file of the lesson to write first (04's
dtrain and dtsim refuse the skeleton's empty ring: "write lessons/.../ring.c first"). --lessons limits it to those lessons; --show N prints the last N lines each command
printed; --list prints the commands and runs none. Exit 0: every command started; 1: some did
not (each named with its file and line, and what it printed); 2: bad arguments.

--complete: every command must also finish within S seconds (300 by default) and exit 0,
its whole run checked, not only its start; `lessons/grade` lines are left out (the grades
have their own tests, and a skeleton's grade fails by design). --variant V (with a full
checkout as HANDOUT: lesson 11's test, V = solution): the commands run in a scratch folder
that looks like HANDOUT's root, whose build/lessons/NN/student is BUILD's
build/lessons/NN/V for the lessons run, so that a command comparing the student's program
with the library's sees a finished one; HANDOUT itself is not touched.
"""
import shutil
import tempfile
import os
import re
import signal
import subprocess
import sys
import threading
import time

START = re.compile(r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*"
                   r"(?:lessons/|build/|bench/|\.ci/|mpirun\b|smpirun\b|cmake\b|ctest\b|"
                   r"sh\b|bash\b|python3\b|for [A-Za-z_]+ in\b)")
# a program's refusal of an unwritten skeleton (exit 2): the command ran as written
SKELETON = re.compile(r"write lessons/\S+ first")
TEMPLATE = re.compile(r"<[a-z][^>]*>|\.\.\.")
BAD = re.compile(r"^usage:|unknown (option|argument)|[Nn]o such file or directory|command "
                 r"not found|allow-run-as-root|unrecognized option|invalid option",
                 re.MULTILINE)


def code_lines(path):
    """(line number, text) of the lines inside the file's code blocks, indent removed."""
    out, fenced, indent, prev_blank = [], False, None, True
    with open(path, encoding="utf-8") as f:
        for no, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            stripped = line.strip()
            if stripped.startswith("```"):
                fenced = not fenced
                indent = len(line) - len(line.lstrip()) if fenced else None
                continue
            if fenced:
                out.append((no, line[indent:] if line[:indent].strip() == "" else line))
                prev_blank = False
                continue
            lead = len(line) - len(line.lstrip())
            # an indented block: after a blank line, four spaces or more deeper than a list
            # item's text (README lists indent their code by 7)
            if stripped and lead >= 4 and (prev_blank or out and out[-1][0] == no - 1):
                out.append((no, line.lstrip()))
            prev_blank = stripped == ""
    return out


def commands(path):
    """(line number, command) in the file, loops and continuations joined."""
    lines, cmds, i = code_lines(path), [], 0
    while i < len(lines):
        no, text = lines[i]
        body = re.sub(r"\s+#.*$", "", text).strip()
        if not START.match(body):
            i += 1
            continue
        parts = [body]
        loop = body.startswith("for ")
        while i + 1 < len(lines) and (parts[-1].endswith("\\") or
                                      (loop and not re.match(r"^done\b", parts[-1]))):
            i += 1
            parts.append(re.sub(r"\s+#.*$", "", lines[i][1]).strip())
        cmds.append((no, "\n".join(parts)))
        i += 1
    return cmds


def run(cmd, cwd, timeout):
    """(status, output): status None when it was still running after timeout seconds, and
    then only what it printed before it was stopped (a stopped script's cleanup may say
    "No such file or directory" about its own removed files)."""
    # as a student's shell has it: no Open MPI permission to run as root from outside (the
    # commands must carry --allow-run-as-root themselves; lessons/grade sets its own)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMPI_ALLOW_RUN_AS_ROOT")}
    p = subprocess.Popen(["bash", "-c", cmd], cwd=cwd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, start_new_session=True)
    chunks = []
    reader = threading.Thread(target=lambda: chunks.extend(iter(lambda: p.stdout.read1(65536), b"")))
    reader.start()
    try:
        p.wait(timeout=timeout)
        reader.join()
        return p.returncode, b"".join(chunks).decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        before = len(chunks)
        for sig, wait in ((signal.SIGTERM, 3), (signal.SIGKILL, 5)):
            try:
                os.killpg(p.pid, sig)
                p.wait(timeout=wait)
                break
            except ProcessLookupError:
                break
            except subprocess.TimeoutExpired:
                continue
        reader.join(timeout=5)
        return None, b"".join(chunks[:before]).decode("utf-8", "replace")


def scratch_root(src, build, variant, nums):
    """A temporary folder of links to src's entries, with build/ a folder of links to BUILD's
    whose lessons/NN/student is BUILD's lessons/NN/<variant> for each NN of nums."""
    w = tempfile.mkdtemp(prefix="lesson_readme_")
    for e in os.listdir(src):
        if e != "build":
            os.symlink(os.path.join(src, e), os.path.join(w, e))
    os.makedirs(os.path.join(w, "build", "lessons"))
    for e in os.listdir(build):
        if e != "lessons":
            os.symlink(os.path.join(build, e), os.path.join(w, "build", e))
    for e in os.listdir(os.path.join(build, "lessons")):
        here = os.path.join(build, "lessons", e)
        if e not in nums:
            os.symlink(here, os.path.join(w, "build", "lessons", e))
            continue
        os.makedirs(os.path.join(w, "build", "lessons", e))
        for f in os.listdir(here):
            if f != "student":
                os.symlink(os.path.join(here, f), os.path.join(w, "build", "lessons", e, f))
        os.symlink(os.path.join(here, variant), os.path.join(w, "build", "lessons", e, "student"))
    return w


def main(argv):
    args, timeout, listing, only, show, complete, variant = [], None, False, None, 0, False, None
    it = iter(argv)
    for a in it:
        try:
            if a == "--timeout":
                timeout = float(next(it))
            elif a == "--complete":
                complete = True
            elif a == "--variant":
                variant = next(it)
            elif a == "--show":
                show = int(next(it))
            elif a == "--lessons":
                only = next(it).split(",")
            elif a == "--list":
                listing = True
            else:
                args.append(a)
        except (StopIteration, ValueError):
            print(f"readme_commands.py: {a} needs a value (--timeout S, --show N, "
                  "--lessons NN,NN, --variant V)", file=sys.stderr)
            return 2
    if timeout is None:
        timeout = 300.0 if complete else 3.0
    if len(args) != 2 or not os.path.isdir(os.path.join(args[0], "lessons")):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    handout, build = (os.path.abspath(a) for a in args)
    lessons = os.path.join(handout, "lessons")
    dirs = [d for d in os.listdir(lessons)
            if re.match(r"^\d\d-", d) and (only is None or d[:2] in only)]
    files = sorted(os.path.join(lessons, d, n) for d in dirs for n in ("README.md", "HINTS.md")
                   if os.path.isfile(os.path.join(lessons, d, n)))
    root = handout
    if variant and not listing:
        if not os.path.isfile(os.path.join(build, "CMakeCache.txt")):
            print(f"readme_commands.py: {build} is no build folder", file=sys.stderr)
            return 2
        root = scratch_root(handout, build, variant, [d[:2] for d in dirs])
    elif not os.path.exists(os.path.join(handout, "build")):
        os.symlink(build, os.path.join(handout, "build"))
    try:
        return run_all(files, handout, root, timeout, listing, show, complete)
    finally:
        if root != handout:
            shutil.rmtree(root, ignore_errors=True)


def run_all(files, handout, root, timeout, listing, show, complete):
    env_root = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    os.environ.update({k: os.environ.get(k, v) for k, v in env_root.items()})
    failed = ran = 0
    for path in files:
        rel = os.path.relpath(path, handout)
        for no, cmd in commands(path):
            where = f"{rel}:{no}"
            if TEMPLATE.search(cmd):
                print(f"TEMPLATE {where}: {cmd.splitlines()[0]} (a placeholder: not run)")
                continue
            if listing:
                print(f"{where}: {cmd}")
                continue
            if complete and re.match(r"^lessons/grade\b", cmd):
                continue
            t0 = time.monotonic()
            rc, out = run(cmd, root, timeout)
            ran += 1
            bad = BAD.search(out)
            verdict = "started" if rc is None else f"exit {rc}"
            if rc == 2 and not complete and SKELETON.search(out):
                rc, verdict = 1, f"exit 2, refused: {SKELETON.search(out).group(0)}"
            if complete and rc is None:
                verdict = f"still running after {timeout:g} s"
            # --complete: the whole run must succeed, not only start
            if bad or rc in (2, 126, 127) or (complete and rc != 0):
                failed += 1
                tail = "\n".join("    " + l for l in out.strip().splitlines()[-6:])
                print(f"FAIL {where}: {cmd.splitlines()[0]} ({verdict}"
                      f"{', printed: ' + repr(bad.group(0)) if bad else ''}):\n{tail}")
            else:
                print(f"PASS {where}: {cmd.splitlines()[0]} ({verdict}, "
                      f"{time.monotonic() - t0:.1f} s)")
            if show:
                print("\n".join("    | " + l for l in out.rstrip().splitlines()[-show:]))
    if listing:
        return 0
    print(f"# {ran - failed} of {ran} commands {'ran' if complete else 'started'} as written"
          f"{' (as root)' if os.geteuid() == 0 else ''}")
    return 1 if failed or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
