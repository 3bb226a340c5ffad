#!/usr/bin/env python3
"""no_library_answer.py — the check `no_library_answer`: the student's files implement what
the lesson grades instead of calling dtlab's own implementation of it.

usage: no_library_answer.py LESSON_DIR GRADER FILES_LIST

LESSON_DIR/calls.txt is the lesson's policy (the student reads it too), one rule a line:
    allow NAME...            dtlab functions and variables the student's files may use
    refuse NAME reason...    a function refused with this reason, dtlab's or not (a libgcc
                             helper that converts to fp16, popen, ...)
    refuse-source REGEX reason...   a pattern refused in the source, comments and strings
                             removed (a device's kernel called through its function table)
FILES_LIST names the student's files, one "source<TAB>object" a line (the build writes it).

What is refused, from the objects the grader was linked from (nm):
  - every symbol a student object references (nm -u) that the grader defines (nm on GRADER:
    it was linked in from dtlab's static libraries or the lesson's own sources; a shared
    library's data the executable holds a copy of, such as MPI's MPI_FLOAT, is not) and
    that is neither the student's own nor allowed: dtlab's code is there to be read, not
    called.
    Names starting with "_" belong to the compiler's runtime and pass unless refused;
  - every NAME refused in calls.txt, and dlopen/dlsym (a function found by its name);
  - nn/kernels.h included (its static inline functions are dtlab's kernels: an inlined
    call leaves no symbol), and every refused source pattern.
Prints one line: "FAIL no_library_answer: <file> calls <symbol> (<why>); write your own",
or "# no_library_answer: ..." when nothing is refused. Exit 0 (nothing refused), 1
(refused), 2 (a missing file or a malformed calls.txt: a message names it).
"""
import os
import re
import subprocess
import sys

CHECK = "no_library_answer"
ALWAYS_REFUSED = {  # a library function found by name leaves no symbol of its own
    "dlopen": "finds a library function by its name",
    "dlmopen": "finds a library function by its name",
    "dlsym": "finds a library function by its name",
    "dlvsym": "finds a library function by its name",
}
REFUSED_HEADERS = {  # header (its path ends so) -> why
    "nn/kernels.h": "dtlab's own kernels (SGD, LARS, batch norm, softmax, fp16), inlined",
}


def fail(msg):
    print(f"no_library_answer.py: {msg}", file=sys.stderr)
    sys.exit(2)


def nm(args, path):
    r = subprocess.run(["nm", "-P"] + args + [path], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"nm {' '.join(args)} {path}: {r.stderr.strip()}")
    return r.stdout.splitlines()


def copied_in(path):
    """The grader's data symbols that live in a shared library (MPI's MPI_FLOAT is
    &ompi_mpi_float): the executable holds a copy (an R_*_COPY relocation), so nm lists
    them as defined there, but they are not dtlab's."""
    r = subprocess.run(["readelf", "-rW", path], capture_output=True, text=True)
    names = set()
    for line in r.stdout.splitlines():
        words = line.split()
        if len(words) >= 5 and words[2].endswith("_COPY"):
            names.add(words[4].split("@")[0])
    return names


def read_policy(path):
    allow, refuse, sources = set(), {}, []
    if not os.path.isfile(path):
        fail(f"{path} is missing: the lesson's policy (allow/refuse lines) is needed")
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            kind = words[0]
            if kind == "allow" and len(words) > 1:
                allow.update(words[1:])
            elif kind == "refuse" and len(words) > 2:
                refuse[words[1]] = " ".join(words[2:])
            elif kind == "refuse-source" and len(words) > 2:
                try:
                    sources.append((re.compile(words[1]), " ".join(words[2:])))
                except re.error as e:
                    fail(f"{path}:{no}: bad pattern {words[1]!r}: {e}")
            else:
                fail(f"{path}:{no}: expected 'allow NAME...', 'refuse NAME reason...' or "
                     f"'refuse-source REGEX reason...', got {line.strip()!r}")
    return allow, refuse, sources


def strip_c(text):
    """The source without its comments, string and character literals."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def where_defined(sym, build, source):
    """nn/coll/coll_sched.c, say: the file of dtlab's static libraries that defines sym."""
    for root, _, files in (w for top in ("nn", "real", "sim")
                           for w in os.walk(os.path.join(build, top))):
        for f in files:
            if not (f.startswith("libdt") and f.endswith(".a")):
                continue
            r = subprocess.run(["nm", "-A", "-P", "--defined-only", os.path.join(root, f)],
                               capture_output=True, text=True)
            for line in r.stdout.splitlines():
                head, _, rest = line.partition(": ")
                if rest.split(" ")[0] != sym or "[" not in head:
                    continue
                member = head[head.rindex("[") + 1:].rstrip("]")
                name = member[:-2] if member.endswith(".o") else member
                for top in ("nn", "real", "sim"):
                    for r2, _, fs in os.walk(os.path.join(source, top)):
                        if name in fs:
                            return os.path.relpath(os.path.join(r2, name), source)
                return name
    return None


def main():
    if len(sys.argv) != 4:
        fail("usage: no_library_answer.py LESSON_DIR GRADER FILES_LIST")
    lesson, grader, listing = sys.argv[1:]
    num = os.path.basename(lesson.rstrip("/"))[:2]
    allow, refuse, patterns = read_policy(os.path.join(lesson, "calls.txt"))
    for k, v in ALWAYS_REFUSED.items():
        refuse.setdefault(k, v)
    if not os.path.isfile(listing):
        fail(f"{listing} is missing: rebuild the grader (lessons/grade {num})")
    files = []
    with open(listing, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                src, _, obj = line.rstrip("\n").partition("\t")
                files.append((src, obj))
    own = set()
    for _, obj in files:
        for line in nm(["--defined-only", "-g"], obj):
            own.add(line.split(" ")[0])
    linked = {line.split(" ")[0] for line in nm(["--defined-only", "-g"], grader)}
    linked -= copied_in(grader)
    problems, used = [], set()
    for src, obj in files:
        name = os.path.basename(src)
        for line in nm(["-u"], obj):
            sym = line.split(" ")[0].split("@")[0]
            if sym in own:
                continue
            if sym in refuse:
                problems.append((name, sym, refuse[sym]))
            elif sym in allow:
                used.add(sym)
            elif sym in linked and not sym.startswith("_"):
                problems.append((name, sym, None))
        dep = obj + ".d"
        if os.path.isfile(dep):
            with open(dep, encoding="utf-8") as f:
                deps = f.read().replace("\\\n", " ").split()
            for h, why in REFUSED_HEADERS.items():
                if any(d.endswith("/" + h) for d in deps):
                    problems.append((name, h, why))
        try:
            with open(src, encoding="utf-8", errors="replace") as f:
                text = strip_c(f.read())
        except OSError as e:
            fail(f"{src}: {e}")
        for rx, why in patterns:
            m = rx.search(text)
            if m:
                problems.append((name, m.group(0).strip(), why))
    if not problems:
        print(f"# {CHECK}: your files use of dtlab only what lesson {num} allows"
              f" ({', '.join(sorted(used)) or 'nothing'})")
        return 0
    name, sym, why = problems[0]
    if why is None:
        build = os.environ.get("DT_BUILD") or os.path.dirname(
            os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(grader)))))
        source = os.path.dirname(os.path.dirname(os.path.abspath(lesson)))
        at = where_defined(sym, build, source)
        why = f"dtlab's own, {at}" if at else "dtlab's own"
    verb = "includes" if sym.endswith(".h") else "calls" if re.match(r"\w+$", sym) else "uses"
    ok = ", ".join(sorted(allow)) or "nothing"
    more = "".join(f"; also {n}: {s}" for n, s, _ in problems[1:4])
    print(f"FAIL {CHECK}: {name} {verb} {sym} ({why}){more}; write your own (of dtlab's "
          f"library lesson {num} allows {ok}: lessons/{os.path.basename(lesson.rstrip('/'))}"
          f"/calls.txt)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
