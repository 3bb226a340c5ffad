#!/usr/bin/env python3
"""mutate.py — makes a lesson's mutants: the reference solution with one deliberate bug each.

usage: mutate.py LESSON_DIR OUT_DIR

LESSON_DIR/mutations.tsv has one mutation a line, tab-separated:
    check-name <TAB> file under solution/ <TAB> text to find <TAB> replacement [<TAB> expect]
"\\n" in either text stands for a newline, "\\t" for a tab; lines starting with # are
comments. The optional fifth field, an extended regular expression, is what the failed
check's line must say (a hint that names the bug), written to mutant_<check>/EXPECT. A
second mutant of one check is named CHECK__what (the part before "__" is the check).
Some check names are not checks: `crash` and `crash__what` (a submission that crashes part-way: its score
must say so, and its grade must print the fifth field's match, the reason), `hang__what`
(one that hangs: the same, for a HANG), and `no_library_answer` (the cheat, refused by
kit/no_library_answer.py; `no_library_answer__what`, another cheat of the lesson). A name
`instructor__what` is a bug the public grade passes and only the lesson's
instructor-only cases (instructor/grade.sh) catch. The text must occur exactly once in the file. Each mutant is written to
OUT_DIR/mutant_<check>/ (every file of solution/, the one file changed), rewriting a file
only when its content changes (so builds stay incremental). Prints the check names, one a
line. Exit 2 with a message naming the line on a malformed file.
"""
import os
import sys


def fail(msg):
    print(f"mutate.py: {msg}", file=sys.stderr)
    sys.exit(2)


def write_if_changed(path, text):
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    if len(sys.argv) != 3:
        fail("usage: mutate.py LESSON_DIR OUT_DIR")
    lesson, out = sys.argv[1], sys.argv[2]
    tsv, sol = os.path.join(lesson, "mutations.tsv"), os.path.join(lesson, "solution")
    if not os.path.isfile(tsv) or not os.path.isdir(sol):
        return
    files = sorted(f for f in os.listdir(sol) if os.path.isfile(os.path.join(sol, f)))
    seen = set()
    with open(tsv, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for no, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) not in (4, 5) or (len(fields) == 4 and
                                         (fields[0] == "crash" or fields[0].startswith(("crash__", "hang__")))):
            fail(f"{tsv}:{no}: expected 4 or 5 tab-separated fields (check, file, find, "
                 f"replace[, what the failure must say]; `crash` needs the fifth), got "
                 f"{len(fields)}")
        check, name, find, repl = fields[:4]
        find = find.replace("\\n", "\n").replace("\\t", "\t")
        repl = repl.replace("\\n", "\n").replace("\\t", "\t")
        if not check.isidentifier() or check in seen:
            fail(f"{tsv}:{no}: check name '{check}' must be a new identifier")
        seen.add(check)
        if name not in files:
            fail(f"{tsv}:{no}: no file solution/{name}")
        with open(os.path.join(sol, name), encoding="utf-8") as g:
            text = g.read()
        if text.count(find) != 1:
            fail(f"{tsv}:{no}: the text to find occurs {text.count(find)} times in "
                 f"solution/{name} (must be once): {find!r}")
        mdir = os.path.join(out, f"mutant_{check}")
        os.makedirs(mdir, exist_ok=True)
        for fn in files:
            with open(os.path.join(sol, fn), encoding="utf-8") as g:
                body = g.read()
            write_if_changed(os.path.join(mdir, fn),
                             text.replace(find, repl) if fn == name else body)
        if len(fields) == 5:
            write_if_changed(os.path.join(mdir, "EXPECT"), fields[4] + "\n")
        print(check)


if __name__ == "__main__":
    main()
