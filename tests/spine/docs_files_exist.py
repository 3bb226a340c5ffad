#!/usr/bin/python3
"""docs_files_exist.py [SOURCE_DIR] — every file of the repository that the documentation
cites exists: README.md, docs/*.md, lessons/README.md and lessons/*/README.md are read line by
line for two kinds of citation:

  - a path under one of the repository's top-level folders (nn/coll/coll_sched.c, sim/rank.c,
    real/cuda/, lessons/kit/subject.c, tests/coll/algo_reverse_ring.h, bench/HELDOUT.md,
    .ci/run, ...), a folder or a file of any kind, with shell globs and braces allowed
    (sim/device_model*.c, sim/gpu_calib*.{c,h}: at least one file must match); it must exist
    from the repository's root (or from the citing document's folder);
  - a file name ending in .c, .h, .cu, .cuh, .sh or .py without such a prefix (ring.c,
    coll_sched.c, kit/subject.h, solution/sgd.c): resolved against the citing document's
    folder (a lesson's own files), then the root, then anywhere in the tree (a file named
    that, or a path ending so).

Each citation of a missing file is printed as FILE:LINE with the path; exit 1 if any.
Not citations: what NOT_FILES lists (other projects' names, the user's own files in an
example, files and folders a program writes), and placeholders (lessons/NN-topic/). In a
student handout (lessons/handout: no lessons/*/solution/) the lessons' solution/ and
instructor/ files, mutations.tsv and the sources of lessons/components.txt are left out on
purpose, so citations of them are not checked there.
Registered as spine.docs_files_exist (tests/spine/CMakeLists.txt). lesson.kit.cited_files_exist
checks the lessons' own sources, headers and hints the same way (prefixed paths only).
"""
import fnmatch
import os
import re
import sys

# Names that look like files but are none of the repository's, and folders that a program
# writes (with what is under them); the reason is the value.
NOT_FILES = {
    "llm.c": "Karpathy's llm.c, a project",
    "sample.py": "nanoGPT's sampling script (docs/dtrain.md)",
    "encoder.py": "GPT-2's tokenizer in openai/gpt-2 (docs/dtrain.md, nn/bpe.h)",
    "prepare.py": "nanoGPT's data preparation script (docs/dtrain.md)",
    "my_algo.c": "the user's own algorithm in docs/architecture.md's example",
    "my_algo.h": "the user's own algorithm in docs/architecture.md's example",
    "runs/dtsim-srun.sh": "written by dtsim --slurm runs (docs/dtsim.md)",
    "nn/reference": "written into a handout by lessons/handout (lessons/README.md)",
    "setup.sh": "Gradescope's autograder script, shown in lessons/README.md",
}
# a path component that stands for any name: NN-topic, DIR, FILE.json, ...
PLACEHOLDER = re.compile(r"^(NN|N|DIR|FILE|NAME|PATH|ROOT|OUT)([-_.].*)?$")
SEG = r"(?:[\w.*+-]|\{[\w,.]+\})+"          # a path component: name, globs, {a,b}
BARE_EXT = ("c", "h", "cu", "cuh", "sh", "py")
MIN_CITATIONS = 100  # fewer found means the scanner broke, not that the docs are clean


def tree_files(root):
    """Every file under root, relative, without .git, caches and build trees."""
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in (".git", "__pycache__")
                         and not os.path.exists(os.path.join(d, x, "CMakeCache.txt")))
        rel = os.path.relpath(d, root)
        out.extend(os.path.normpath(os.path.join(rel, f)) for f in files)
    return out


def braces(t):
    m = re.search(r"\{([^{}]*)\}", t)
    if not m:
        return [t]
    return [x for alt in m.group(1).split(",")
            for x in braces(t[:m.start()] + alt + t[m.end():])]


class Tree:
    def __init__(self, root):
        self.files = tree_files(root)
        self.fileset = set(self.files)
        self.dirs = set()
        for p in self.files:
            d = os.path.dirname(p)
            while d and d not in self.dirs:
                self.dirs.add(d)
                d = os.path.dirname(d)
        self.top = sorted(p for p in self.dirs if "/" not in p)
        self.handout = not any(fnmatch.fnmatch(d, "lessons/*/solution") for d in self.dirs)
        # a handout ships the lessons' components compiled, not their sources
        self.withheld = set()
        components = os.path.join(root, "lessons", "components.txt")
        if self.handout and os.path.isfile(components):
            with open(components, encoding="utf-8") as f:
                for line in f:
                    if re.match(r"^\d\d ", line):
                        self.withheld.update(line.split()[1:])

    def exists(self, p):
        if any(c in p for c in "*?["):
            return bool(fnmatch.filter(self.files, p))
        return p in self.fileset or p in self.dirs

    def resolve(self, token, doc_dir, prefixed):
        for t in braces(token):
            t = t.rstrip("/")
            for c in (t, os.path.join(doc_dir, t)):
                c = os.path.normpath(c)
                if not c.startswith("..") and self.exists(c):
                    return True
            if not prefixed and any(p == t or fnmatch.fnmatch(p, "*/" + t) for p in self.files):
                return True
        return False


def skipped(token, tree):
    t = token.rstrip("/")
    if any(t == k or t.startswith(k + "/") for k in NOT_FILES):
        return True
    parts = token.rstrip("/").split("/")
    if any(PLACEHOLDER.match(p) for p in parts):
        return True
    if len(parts) > 1 and "." in parts[0] and not parts[0].startswith("."):
        return True  # github.com/..., a web address without its scheme
    if tree.handout and ("solution" in parts or "instructor" in parts
                         or parts[-1] == "mutations.tsv"
                         or any(fnmatch.fnmatch(w, t) or fnmatch.fnmatch(w, "*/" + t)
                                for t in braces(token) for w in tree.withheld)):
        return True
    return False


def documents(root):
    docs = ["README.md"]
    docs += sorted("docs/" + f for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
    docs.append("lessons/README.md")
    lessons = os.path.join(root, "lessons")
    docs += sorted("lessons/%s/README.md" % d for d in os.listdir(lessons)
                   if os.path.isfile(os.path.join(lessons, d, "README.md")))
    return docs


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    tree = Tree(root)
    not_after = r"(?<![\w./~$-])"  # not inside a longer path, an address or a variable
    prefixed = re.compile(not_after + r"((?:" + "|".join(re.escape(t) for t in tree.top) +
                          r")(?:/" + SEG + r")*/?)")
    bare = re.compile(not_after + r"((?:" + SEG + r"/)*[\w*+-]+(?:\.[\w-]+)*\.(?:" +
                      "|".join(BARE_EXT) + r"))(?![\w/])")
    docs = documents(root)
    missing, found, cited = [], 0, set()
    for doc in docs:
        doc_dir = os.path.dirname(doc)
        with open(os.path.join(root, doc), encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                hits = [(m.group(1).rstrip("."), True) for m in prefixed.finditer(line)]
                hits += [(m.group(1), False) for m in bare.finditer(line)
                         if m.group(1).split("/")[0] not in tree.top]
                for token, pre in hits:
                    if skipped(token, tree):
                        continue
                    found += 1
                    cited.add(token)
                    if not tree.resolve(token, doc_dir, pre):
                        missing.append("%s:%d: %s does not exist" % (doc, n, token))
    for m in missing:
        print(m)
    if found < MIN_CITATIONS:
        print("docs_files_exist: only %d citations found in %d documents (at least %d "
              "expected): the scanner is broken" % (found, len(docs), MIN_CITATIONS))
        return 1
    if missing:
        print("docs_files_exist: %d of %d citations name a file or folder that does not exist "
              "(fix the path, or list a name that is no file of the repository in NOT_FILES)"
              % (len(missing), found))
        return 1
    print("docs_files_exist: %d citations of %d paths in %d documents, every one exists%s"
          % (found, len(cited), len(docs), " (a handout: the files it withholds not checked)"
             if tree.handout else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
