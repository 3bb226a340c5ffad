#!/usr/bin/python3
"""train_calls_downward.py NM LIBRARY.a — the trainer's files call one another one way only:
from the library's symbol tables (nm), object A uses object B when A leaves undefined a
global symbol that B defines (a call, or a function's address as the strategies' registry
takes it); among the objects of nn/train*.c those uses must form no cycle. A cycle is what
made the step hard to read (issue 54: train.c, train_shard.c and train_zero.c called each
other in a loop); the order printed is the order to read them from the bottom.

Exit 0 and "PASS train_calls_downward" with the order, 1 naming a cycle, 2 on bad usage.
Registered as spine.train_files_call_downward (tests/spine/CMakeLists.txt).
"""
import os
import subprocess
import sys


def symbols(nm, lib):
    """{object: (defined, undefined)} of the library's members named train*"""
    # nm is the system's: not the sanitized step's preload (.ci/sanitize), whose runtime would
    # report nm's own leaks as ours
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS",
                                                           "LSAN_OPTIONS", "UBSAN_OPTIONS")}
    out = subprocess.run([nm, "-A", "-g", lib], capture_output=True, text=True, env=env)
    if out.returncode:
        sys.exit(f"train_calls_downward: {nm} {lib}: {out.stderr.strip()}")
    objs = {}
    for line in out.stdout.splitlines():
        head, _, rest = line.rpartition(":")
        member = head.rsplit(":", 1)[-1]
        words = rest.split()
        if not member.startswith("train") or len(words) < 2:
            continue
        d, u = objs.setdefault(member, (set(), set()))
        (u if words[-2] == "U" else d).add(words[-1])
    return objs


def main():
    if len(sys.argv) != 3:
        sys.exit(2)
    objs = symbols(sys.argv[1], sys.argv[2])
    if len(objs) < 2:
        print(f"FAIL: no train*.o in {sys.argv[2]}")
        return 1
    uses = {a: sorted(b for b in objs if b != a and objs[a][1] & objs[b][0]) for a in objs}
    order, state = [], {}

    def visit(a, path):  # depth first: a cycle is a use back into the path
        if state.get(a) == "done":
            return None
        if state.get(a) == "open":
            return path[path.index(a):] + [a]
        state[a] = "open"
        for b in uses[a]:
            cycle = visit(b, path + [a])
            if cycle:
                return cycle
        state[a] = "done"
        order.append(a)
        return None

    for a in sorted(objs):
        cycle = visit(a, [])
        if cycle:
            print("FAIL: the trainer's files call one another in a cycle: " + " -> ".join(cycle))
            return 1
    for a in order:
        print(f"{a:24s} uses {', '.join(uses[a]) or '(none)'}")
    print("PASS train_calls_downward")
    return 0


if __name__ == "__main__":
    sys.exit(main())
