#!/usr/bin/env python3
"""no_library_answer_test.py — lessons/kit/no_library_answer.py on small crafted student
files (compiled here with cc into a temporary folder, against the real lessons' calls.txt;
no grader built, a second or two): each way testers reached the library's implementation
is refused, naming what, each refused name once, and a plain file passes.

usage: no_library_answer_test.py SOURCE_DIR [SCRIPT]    exit 0: every case as expected
(SCRIPT: another no_library_answer.py to hold to the cases, an older one, say)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

# A student file that only declares what it calls: no MPI headers needed (the check reads
# undefined symbols and the source, not types).
MPI_DECL = "typedef void *comm_t;\n" \
    "int MPI_Allreduce(const void *, void *, int, void *, void *, comm_t);\n"
# the profiling entry point's name never written whole: pasted from pieces
PASTED = "#define CAT(a, b, c) a##b##c\n" \
    "int CAT(P, MPI_All, reduce)(const void *, void *, int, void *, void *, comm_t);\n"

CASES = [
    ("a dtlab function only the split grader's subject defines, lesson 11",
     "11-sharded-optimizer",
     {"sharded.c": "int dt_optim_config_default(void);\n"
                   "int step(void) { return dt_optim_config_default(); }\n"},
     1, [r"^FAIL no_library_answer: sharded.c calls dt_optim_config_default"], {}),
    # (name, lesson folder, {file: source}, expect rc, [regexes the output must match],
    #  {text: how many times the output may name it})
    ("plain ring passes", "04-ring-allreduce",
     {"ring_mpi.c": "int MPI_Send(const void *, int, void *, int, int, void *);\n"
                    "int ring(float *x, void *c) { return MPI_Send(x, 1, 0, 1, 0, c); }\n"},
     0, [r"^PASS no_library_answer .*MPI_Send"], {}),
    ("MPI_Allreduce named once (nm rule and source rule, two files)", "04-ring-allreduce",
     {"ring_mpi.c": MPI_DECL + "int ring_mpi(float *x, comm_t c) {\n"
                    "    return MPI_Allreduce(0, x, 4, 0, 0, c);\n}\n",
      "ring.c": MPI_DECL + "int ring(float *x, comm_t c) {\n"
                "    return MPI_Allreduce(0, x, 4, 0, 0, c);\n}\n"},
     1, [r"^FAIL no_library_answer: ring_mpi.c calls MPI_Allreduce \(MPI's own allreduce"],
     {"MPI_Allreduce": 1}),
    ("(a) PMPI_Allreduce by token pasting, lesson 04", "04-ring-allreduce",
     {"ring_mpi.c": "typedef void *comm_t;\n" + PASTED + "int ring_mpi(float *x, comm_t c) {\n"
                    "    return CAT(P, MPI_All, reduce)(0, x, 4, 0, 0, c);\n}\n"},
     1, [r"^FAIL no_library_answer: ring_mpi.c calls PMPI_Allreduce \(MPI's profiling"], {}),
    ("(a) PMPI_Allreduce by token pasting, lesson 03 (which allows MPI_Allreduce)",
     "03-data-parallel",
     {"data_parallel.c": MPI_DECL + "#define PROFILED(f) P##f\n"
                         "int PROFILED(MPI_Allreduce)(const void *, void *, int, void *, void *, comm_t);\n"
                         "int average(float *x, comm_t c) {\n"
                         "    return PROFILED(MPI_Allreduce)(0, x, 4, 0, 0, c);\n}\n"},
     1, [r"calls PMPI_Allreduce \(MPI's profiling entry point"], {}),
    ("(a) MPI_Allreduce allowed in lesson 03", "03-data-parallel",
     {"data_parallel.c": MPI_DECL + "int average(float *x, comm_t c) {\n"
                         "    return MPI_Allreduce(0, x, 4, 0, 0, c);\n}\n"},
     0, [r"^PASS no_library_answer .*MPI_Allreduce"], {}),
    ("(a) MPI collectives by token pasting in lessons 07 and 11", "07-fusion-and-overlap",
     {"student_fusion.c": "#define MPI(f) MPI_##f\n"
                          "int MPI(Iallreduce)(const void *, void *, int, void *, void *, void *, void *);\n"
                          "int MPI(Allreduce_init)(const void *, void *, int, void *, void *, void *, void *, void *);\n"
                          "int MPI(Neighbor_alltoallw)(void);\n"
                          "int f(void) { return MPI(Iallreduce)(0, 0, 0, 0, 0, 0, 0)\n"
                          "    + MPI(Allreduce_init)(0, 0, 0, 0, 0, 0, 0, 0) + MPI(Neighbor_alltoallw)(); }\n"},
     1, [r"calls MPI_\w+ \(MPI's own collective does the work", r"[ :]MPI_Iallreduce[ ;]",
         r"[ :]MPI_Allreduce_init[ ;]", r"[ :]MPI_Neighbor_alltoallw[ ;]"], {}),
    ("(a) Open MPI's own ring", "11-sharded-optimizer",
     {"sharded.c": "int ompi_coll_base_allreduce_intra_ring(void);\n"
                   "int f(void) { return ompi_coll_base_allreduce_intra_ring(); }\n"},
     1, [r"calls ompi_coll_base_allreduce_intra_ring \(Open MPI's own collective"], {}),
    ("(b) dl_iterate_phdr", "07-fusion-and-overlap",
     {"student_fusion.c": "#define _GNU_SOURCE\n#include <link.h>\n"
                          "static int cb(struct dl_phdr_info *i, size_t s, void *d) { (void)i; (void)s; (void)d; return 0; }\n"
                          "int f(void) { return dl_iterate_phdr(cb, 0); }\n"},
     1, [r"calls dl_iterate_phdr \(walks the program's own ELF symbol table"], {}),
    ("(b) dladdr, getauxval, _r_debug, __executable_start, _DYNAMIC", "04-ring-allreduce",
     {"ring.c": "#define _GNU_SOURCE\n#include <dlfcn.h>\n#include <sys/auxv.h>\n#include <link.h>\n"
                "extern char __executable_start[];\nextern ElfW(Dyn) _DYNAMIC[];\n"
                "long f(void) { Dl_info i; dladdr((void *)f, &i);\n"
                "    return (long)getauxval(AT_PHDR) + (long)_r_debug.r_map + (long)__executable_start\n"
                "        + (long)_DYNAMIC; }\n"},
     1, [r"calls (dladdr|getauxval|_r_debug|__executable_start|_DYNAMIC) \(walks",
         r"also ring.c: (dladdr|getauxval|_r_debug|__executable_start|_DYNAMIC)"], {}),
    ("(b) _GLOBAL_OFFSET_TABLE_ named in the source", "11-sharded-optimizer",
     {"sharded.c": "extern char _GLOBAL_OFFSET_TABLE_[];\n"
                   "long f(void) { return (long)_GLOBAL_OFFSET_TABLE_; }\n"},
     1, [r"(calls|uses) _GLOBAL_OFFSET_TABLE_ \(walks the program's own ELF symbol table"], {}),
    ("(b) /proc/self/exe as two adjacent literals", "07-fusion-and-overlap",
     {"student_fusion.c": "#include <stdio.h>\n"
                          "int f(void) { FILE *p = fopen(\"/proc/\" \"self/exe\", \"rb\");\n"
                          "    return p != 0; }\n"},
     1, [r"uses \"/proc/self/exe\" \(reads the process's own image or memory through /proc"], {}),
    ("(b) /proc/self/maps; /proc in a comment alone passes", "11-sharded-optimizer",
     {"sharded.c": "#include <stdio.h>\n// not /proc/self/maps: a comment\n"
                   "int f(void) { return fopen(\"/proc/self/maps\", \"r\") != 0; }\n",
      "other.c": "// /proc/self/mem, in a comment only\nint g(void) { return '\"'; }\n"},
     1, [r"^FAIL no_library_answer: sharded.c uses \"/proc/self/maps\""], {"other.c": 0}),
    ("(c) #include of dtlab's coll_ring.c with #define renames", "04-ring-allreduce",
     {"ring.c": "#define dt_sched_ring my_ring\n#define dt_sched_ring_rs my_rs\n"
                "#define dt_sched_ring_ag my_ag\n#include \"coll/coll_ring.c\"\n"},
     1, [r"^FAIL no_library_answer: ring.c includes nn/coll/coll_ring.c \(dtlab's own source"],
     {}),
    ("(c) a .c outside the repository's library, and the student's own file", "07-fusion-and-overlap",
     {"student_fusion.c": "#include \"HELPER\"\nint f(void) { return helper(); }\n"},
     1, [r"includes .*helper_copy\.c \(a source file not yours"], {}),
]


def compile_case(work, src_root, files):
    """Each file compiled as the lessons' build does (-MD: its depfile beside the object);
    returns the FILES_LIST text."""
    helper = os.path.join(work, "elsewhere", "helper_copy.c")
    os.makedirs(os.path.dirname(helper), exist_ok=True)
    with open(helper, "w", encoding="utf-8") as f:
        f.write("static int helper(void) { return 1; }\n")
    listing = []
    for name, text in files.items():
        src = os.path.join(work, name)
        with open(src, "w", encoding="utf-8") as f:
            f.write(text.replace("HELPER", helper))
        obj = src + ".o"
        r = subprocess.run(["cc", "-std=gnu11", "-fPIC", "-O1", "-w", "-c", src, "-o", obj,
                            "-MD", "-MF", obj + ".d", "-I", os.path.join(src_root, "nn")],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"no_library_answer_test: cc {name}: {r.stderr}")
        listing.append(f"{src}\t{obj}\n")
    return "".join(listing)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: no_library_answer_test.py SOURCE_DIR [SCRIPT]")
    root = os.path.abspath(sys.argv[1])
    if not shutil.which("cc") or not shutil.which("nm"):
        print("SKIPPED: needs cc and nm")
        return 77
    script = sys.argv[2] if len(sys.argv) == 3 else \
        os.path.join(root, "lessons", "kit", "no_library_answer.py")
    failed = 0
    with tempfile.TemporaryDirectory(prefix="no_library_test_") as tmp:
        grader = os.path.join(tmp, "grader")  # any executable: the check lists its symbols
        with open(grader + ".c", "w", encoding="utf-8") as f:
            f.write("int main(void) { return 0; }\n")
        subprocess.run(["cc", grader + ".c", "-o", grader], check=True)
        # a split grader's subject beside it (kit/subject.h): what it defines is dtlab's too
        subject = os.path.join(tmp, "subject")
        with open(subject + ".c", "w", encoding="utf-8") as f:
            f.write("int dt_optim_config_default(void) { return 0; }\n"
                    "int main(void) { return dt_optim_config_default(); }\n")
        subprocess.run(["cc", subject + ".c", "-o", subject], check=True)
        for i, (name, lesson, files, want_rc, regexes, counts) in enumerate(CASES):
            work = os.path.join(tmp, f"case{i}")
            os.makedirs(work)
            listing = os.path.join(work, "student_files.txt")
            with open(listing, "w", encoding="utf-8") as f:
                f.write(compile_case(work, root, files))
            r = subprocess.run([sys.executable, script, os.path.join(root, "lessons", lesson),
                                grader, listing], capture_output=True, text=True)
            out = r.stdout + r.stderr
            why = []
            if r.returncode != want_rc:
                why.append(f"exit {r.returncode}, expected {want_rc}")
            why += [f"no line matches /{rx}/" for rx in regexes
                    if not re.search(rx, out, re.M)]
            why += [f"names {t} {out.count(t)} times, expected {n}"
                    for t, n in counts.items() if out.count(t) != n]
            if why:
                failed += 1
                print(f"FAILED: {name}: {'; '.join(why)}\n  | {out.strip()}")
            else:
                print(f"ok: {name}")
    print(f"no_library_answer_test: {len(CASES) - failed} of {len(CASES)} cases as expected")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
