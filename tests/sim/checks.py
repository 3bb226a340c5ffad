"""checks.py ARGS... < CHECKS — the Python half of tests/sim/*.sh: runs the checks read from
stdin with sys.argv = [checks.py, ARGS...] and two names given to them:
  check(ok, msg)  prints "ok: msg", or "FAIL: msg" and exits 1 (the tests' FAIL pattern)
  row(name)       the first row of ARGS[0]/name.json (a dtsim --json summary)"""
import json
import sys


def check(ok, msg):
    print(("ok: " if ok else "FAIL: ") + msg)
    if not ok:
        sys.exit(1)


def row(name):
    with open(f"{sys.argv[1]}/{name}.json") as f:
        return json.load(f)[0]


exec(compile(sys.stdin.read(), "<checks>", "exec"),
     {"__name__": "__main__", "check": check, "row": row})
