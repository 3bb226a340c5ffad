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
  - MPI's own collectives, from the object's undefined symbols (so that a name written by
    token pasting, P##MPI_Allreduce, is caught too): every MPI_ or PMPI_ allreduce, reduce,
    reduce-scatter, allgather, broadcast, gather, scatter, all-to-all, scan and neighbour
    collective, its I- and persistent _init forms, unless calls.txt allows it (lesson 03
    averages with MPI_Allreduce); Open MPI's own algorithms (ompi_coll_*, mca_coll_*); and
    every PMPI_ symbol (MPI's profiling entry points skip what a grader counts through
    the MPI_ ones) unless calls.txt allows that very name;
  - what walks the program's own ELF symbol table (dtlab's functions reached without
    naming them, no dlsym needed): dl_iterate_phdr, dladdr, dladdr1, dlinfo, getauxval
    (AT_PHDR), _r_debug, _DYNAMIC, __executable_start, __ehdr_start (undefined symbols);
    _GLOBAL_OFFSET_TABLE_ named in the source (compiled PIC code references it by itself);
    any "/proc/..." path in a string (adjacent literals joined: /proc/self/exe, maps, mem);
  - nn/kernels.h included (its static inline functions are dtlab's kernels: an inlined
    call leaves no symbol), any .c file included other than the student's own files
    (#include "nn/coll/coll_sched.c" with #define renames compiles dtlab's own code into the
    student's object under other names), both from the object's depfile; and every
    refused source pattern.
Not caught here, on purpose: the address of an allowed function plus an offset (or any
pointer arithmetic into dtlab's code) leaves no symbol and no pattern to refuse; that
route, and transcribing the reference, are covered elsewhere: the grading process split
(the student's code run apart from the library's) and the similarity report.
Each refused name is reported once, however many rules or files name it.
Prints one line: "FAIL no_library_answer: <file> calls <symbol> (<why>); write your own",
or "PASS no_library_answer ..." when nothing is refused (a check like the others, so that
the score's denominator is the same whether it passes or not). Exit 0 (nothing refused), 1
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
ELF_WALK = "walks the program's own ELF symbol table, which reaches dtlab's functions " \
    "without naming them"
ALWAYS_REFUSED.update({
    "dl_iterate_phdr": ELF_WALK, "dladdr": ELF_WALK, "dladdr1": ELF_WALK, "dlinfo": ELF_WALK,
    "getauxval": ELF_WALK + " (AT_PHDR: the program headers)",
    "_r_debug": ELF_WALK + " (the dynamic linker's list of loaded objects)",
    "_DYNAMIC": ELF_WALK, "__executable_start": ELF_WALK, "__ehdr_start": ELF_WALK,
})
REFUSED_HEADERS = {  # header (its path ends so) -> why
    "nn/kernels.h": "dtlab's own kernels (SGD, LARS, batch norm, softmax, fp16), inlined",
}
# MPI's collectives (MPI_ or PMPI_, blocking, I-, persistent _init, neighbour), as nm
# lists them (C, and Fortran's lower-case mpi_allreduce_ too)
MPI_COLLECTIVE = re.compile(
    r"(?i)^p?mpi_(i?(allreduce|reduce|reduce_scatter|reduce_scatter_block|allgatherv?|bcast|"
    r"gatherv?|scatterv?|alltoall[vw]?|scan|exscan)|i?neighbor_\w+)(_init)?_*$")
MPI_COLLECTIVE_WHY = "MPI's own collective does the work the lesson grades: point-to-point " \
    "calls, or what calls.txt allows"
PMPI_WHY = "MPI's profiling entry point skips what the grader counts through the MPI_ one"
OMPI_COLL = re.compile(r"^(ompi_coll_|mca_coll_)")
OMPI_COLL_WHY = "Open MPI's own collective algorithm"
# kit-wide source rules, for every lesson: (regex on the code without comments and
# strings, why), and (regex on a string's text, adjacent literals joined, why)
CODE_PATTERNS = [
    (re.compile(r"\b_GLOBAL_OFFSET_TABLE_\b"), ELF_WALK + " (the global offset table)"),
]
STRING_PATTERNS = [
    (re.compile(r"/proc/[^\s\"]*"), "reads the process's own image or memory through /proc "
     "(/proc/self/exe, maps, mem), which reaches dtlab's functions without naming them"),
]
# where dtlab's own sources live (a .c under them included is refused by name)
LIBRARY_TOPS = ("nn", "real", "sim")


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


def strip_c(text, keep_strings=False):
    """The source without its comments, and without its string and character literals
    (keep_strings: with its string literals, the character literals still emptied)."""
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
            out.append(text[i:j + 1] if keep_strings and c == '"' else c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


STRING_RUN = re.compile(r'(?:"(?:[^"\\\n]|\\.)*"\s*)+')
ONE_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def string_texts(code):
    """The text of each string of code (comments removed, strings kept), adjacent
    literals joined as the compiler joins them ("/proc/" "self/exe")."""
    return ["".join(ONE_STRING.findall(m.group(0))) for m in STRING_RUN.finditer(code)]


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


def read_listing(listing, num):
    """[(source, object)] of the student's files, from the build's FILES_LIST."""
    if not os.path.isfile(listing):
        fail(f"{listing} is missing: rebuild the grader (lessons/grade {num})")
    files = []
    with open(listing, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                src, _, obj = line.rstrip("\n").partition("\t")
                files.append((src, obj))
    return files


def kit_rule(sym, allow):
    """Why the kit refuses an undefined symbol whatever the lesson (MPI's collectives and
    profiling entry points, Open MPI's algorithms), or None."""
    if sym in allow:
        return None
    if sym.upper().startswith("PMPI_"):
        return PMPI_WHY
    if MPI_COLLECTIVE.match(sym):
        return MPI_COLLECTIVE_WHY
    if OMPI_COLL.match(sym):
        return OMPI_COLL_WHY
    return None


def symbol_problems(obj, own, allow, refuse, linked, used):
    """(symbol, why) for each undefined symbol of obj that is refused (why None: dtlab's
    own, its file found later); the allowed ones used are added to used."""
    out = []
    for line in nm(["-u"], obj):
        sym = line.split(" ")[0].split("@")[0]
        if sym in own:
            continue
        if sym in refuse:
            out.append((sym, refuse[sym]))
        elif kit_rule(sym, allow):
            out.append((sym, kit_rule(sym, allow)))
        elif sym in allow:
            used.add(sym)
        elif sym in linked and not sym.startswith("_"):
            out.append((sym, None))
    return out


def include_problems(obj, own_sources, source_root):
    """(file, why) for each refused file the object's depfile lists: nn/kernels.h, and any
    .c but the student's own (dtlab's, named from the repository's root)."""
    dep = obj + ".d"
    if not os.path.isfile(dep):
        return []
    with open(dep, encoding="utf-8") as f:
        deps = f.read().replace("\\\n", " ").split()
    out = []
    for h, why in REFUSED_HEADERS.items():
        if any(d.endswith("/" + h) for d in deps):
            out.append((h, why))
    for d in deps[1:]:  # deps[0] is the rule's target, "x.c.o:"
        if not d.endswith(".c"):
            continue
        path = os.path.realpath(d)
        if path in own_sources:
            continue
        rel = os.path.relpath(path, source_root)
        if not rel.startswith(".."):
            top = rel.split(os.sep)[0]
            why = ("dtlab's own source, compiled into your file" if top in LIBRARY_TOPS
                   else "a source file not yours, compiled into your file")
            out.append((rel, why))
        else:
            out.append((path, "a source file not yours, compiled into your file"))
    return out


def source_problems(src, patterns):
    """(text, why) for each refused pattern in the source: the lesson's and the kit's on
    the code (comments and strings removed), the kit's on the strings' text."""
    try:
        with open(src, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        fail(f"{src}: {e}")
    code, out = strip_c(text), []
    for rx, why in patterns + CODE_PATTERNS:
        m = rx.search(code)
        if m:
            out.append((m.group(0).strip(), why))
    for s in string_texts(strip_c(text, keep_strings=True)):
        for rx, why in STRING_PATTERNS:
            m = rx.search(s)
            if m:
                out.append((f'"{m.group(0)}"', why))
    return out


def main():
    if len(sys.argv) != 4:
        fail("usage: no_library_answer.py LESSON_DIR GRADER FILES_LIST")
    lesson, grader, listing = sys.argv[1:]
    num = os.path.basename(lesson.rstrip("/"))[:2]
    allow, refuse, patterns = read_policy(os.path.join(lesson, "calls.txt"))
    for k, v in ALWAYS_REFUSED.items():
        refuse.setdefault(k, v)
    files = read_listing(listing, num)
    source = os.path.dirname(os.path.dirname(os.path.abspath(lesson)))
    own = set()
    for _, obj in files:
        for line in nm(["--defined-only", "-g"], obj):
            own.add(line.split(" ")[0])
    own_sources = {os.path.realpath(src) for src, _ in files}
    linked = {line.split(" ")[0] for line in nm(["--defined-only", "-g"], grader)}
    linked -= copied_in(grader)
    # A split grader (kit/subject.h) holds none of the student's objects, and its subjects
    # only what they call: what dtlab defines is every subject's and the library's whole
    # archive too, so that a call of any dtlab function is seen, linked anywhere or not
    build = os.environ.get("DT_BUILD") or os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(grader)))))
    for extra in (os.path.join(os.path.dirname(grader), "subject"),
                  os.path.join(os.path.dirname(grader), "subject_mpi"),
                  os.path.join(build, "nn", "libdtnn.a")):
        if os.path.isfile(extra):
            linked |= ({line.split(" ")[0] for line in nm(["--defined-only", "-g"], extra)}
                       - (set() if extra.endswith(".a") else copied_in(extra)))
    problems, used, named = [], set(), set()
    for src, obj in files:
        name = os.path.basename(src)
        found = (symbol_problems(obj, own, allow, refuse, linked, used)
                 + include_problems(obj, own_sources, source)
                 + source_problems(src, patterns))
        for what, why in found:
            if what not in named:  # once per name, whichever rule or file names it too
                named.add(what)
                problems.append((name, what, why))
    if not problems:
        print(f"PASS {CHECK} your files use of dtlab only what lesson {num} allows"
              f" ({', '.join(sorted(used)) or 'nothing'})")
        return 0
    name, sym, why = problems[0]
    if why is None:
        build = os.environ.get("DT_BUILD") or os.path.dirname(
            os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(grader)))))
        at = where_defined(sym, build, source)
        why = f"dtlab's own, {at}" if at else "dtlab's own"
    verb = ("includes" if sym.endswith((".h", ".c")) else
            "calls" if re.match(r"\w+$", sym) else "uses")
    ok = ", ".join(sorted(allow)) or "nothing"
    more = "".join(f"; also {n}: {s}" for n, s, _ in problems[1:4])
    print(f"FAIL {CHECK}: {name} {verb} {sym} ({why}){more}; write your own (of dtlab's "
          f"library lesson {num} allows {ok}: lessons/{os.path.basename(lesson.rstrip('/'))}"
          f"/calls.txt)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
