"""preload_mpi4py.py — runs modules of mpi4py's own test suite (the test/ directory of its
source distribution) on every rank of an mpirun, through the suite's own runtests.py (its
option parser, package import and test loader), and writes each rank's outcome of every test
to OUTDIR/rank<R>: one "test-id outcome" line per test (ok, FAIL, ERROR, skip, xfail,
xpass), sorted. preload_mpi4py.sh compares those files between a run under libdtcoll_mpi.so
and one without. Failures' tracebacks go to stderr.

usage: python3 preload_mpi4py.py TESTDIR OUTDIR THREAD_LEVEL MODULE...
"""
import os
import sys
import unittest


class Recorder(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.outcomes = {}

    def addSuccess(self, test):
        self.outcomes[test.id()] = "ok"

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.outcomes[test.id()] = "FAIL"

    def addError(self, test, err):
        super().addError(test, err)
        self.outcomes[test.id()] = "ERROR"

    def addSkip(self, test, reason):
        self.outcomes[test.id()] = "skip"

    def addExpectedFailure(self, test, err):
        self.outcomes[test.id()] = "xfail"

    def addUnexpectedSuccess(self, test):
        self.outcomes[test.id()] = "xpass"


def main():
    testdir, outdir, level, modules = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    sys.path.insert(0, testdir)
    import runtests  # the suite's own runner
    options, _ = runtests.getoptionparser().parse_args(
        ["--no-builddir", "--thread-level", level, "-i", "^(%s)$" % "|".join(modules)])
    runtests.setup_python(options)
    runtests.setup_unittest(options)
    runtests.import_package(options, "mpi4py")
    from mpi4py import MPI
    rank = MPI.COMM_WORLD.Get_rank()
    suite = runtests.load_tests(options, [])
    result = Recorder()
    suite.run(result)
    for test, trace in result.failures + result.errors:
        sys.stderr.write("[rank %d] %s\n%s\n" % (rank, test.id(), trace))
    with open(os.path.join(outdir, "rank%d" % rank), "w") as f:
        for name in sorted(result.outcomes):
            f.write("%s %s\n" % (name, result.outcomes[name]))
    if rank == 0:
        print("mpi4py %s (thread level %s): %d tests on %d ranks" % (
            sys.modules["mpi4py"].__version__, level, len(result.outcomes),
            MPI.COMM_WORLD.Get_size()))


if __name__ == "__main__":
    main()
