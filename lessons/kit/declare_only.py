#!/usr/bin/python3
"""declare_only.py HEADER NAME... — lessons/handout: in HEADER (a student handout's
nn/kernels.h), each function NAME defined as `DT_HD <type> NAME(<params>) { <body> }` becomes
the declaration `<type> NAME(<params>);`: the lessons' one-element formulas
(lessons/components.txt, its "inline" lines) ship without their bodies, and the handout links
them compiled (nn/reference/<world>/kernels_ref.o, cmake/dtlab_reference.cmake). The comments
above each stay: they are the function's contract. Rewrites HEADER in place; exit 1, HEADER
untouched, when a NAME is not defined there exactly once.
"""
import re
import sys


def skip_to_close(text, i, open_ch, close_ch):
    """The index just past the bracket that closes text[i] (== open_ch); comments, strings
    and character literals are skipped."""
    depth = 0
    n = len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
            continue
        if text.startswith("/*", i):
            i = text.find("*/", i + 2) + 2
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c == open_ch:
            depth += 1
        elif c == close_ch:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced %s%s" % (open_ch, close_ch))


def declare_only(text, name):
    hits = list(re.finditer(r"^DT_HD[ \t]+([^\n(;{}]*?)\b%s[ \t]*\(" % re.escape(name), text,
                            re.M))
    if len(hits) != 1:
        raise ValueError("%s: %d definitions (DT_HD ... %s(...) { ... }), not 1"
                         % (name, len(hits), name))
    m = hits[0]
    params_end = skip_to_close(text, m.end() - 1, "(", ")")
    brace = params_end
    while brace < len(text) and text[brace] in " \t\n":
        brace += 1
    if brace >= len(text) or text[brace] != "{":
        raise ValueError("%s: no body after its parameters" % name)
    body_end = skip_to_close(text, brace, "{", "}")
    decl = "%s%s%s;" % (m.group(1), name, text[m.end() - 1:params_end])
    return text[:m.start()] + decl + text[body_end:]


def main():
    if len(sys.argv) < 3:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    path, names = sys.argv[1], sys.argv[2:]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        for name in names:
            text = declare_only(text, name)
    except ValueError as e:
        print("declare_only.py: %s: %s" % (path, e), file=sys.stderr)
        return 1
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
