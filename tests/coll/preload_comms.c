// preload_comms.c — a program that makes communicators until the MPI library has none left,
// using each for a float allreduce (which libdtcoll_mpi.so takes over, making its own
// communicators for it), run under LD_PRELOAD for every algorithm by tests/coll/preload.cmake.
// Knows nothing of dtlab. MPI_COMM_WORLD returns errors (MPI_ERRORS_RETURN, inherited by the
// duplicates). Checked: every sum (small integers: exact); that when MPI_Comm_dup fails it
// fails on every rank at the same duplicate (a rank that still got one would wait in the
// next collective for ranks that did not: the hang this test exists for, which
// preload_run.sh's timeout catches); that at least MIN duplicates were made; and that every
// communicator frees and MPI_Finalize returns. Prints "PASS preload_comms: N communicators".
// usage: preload_comms [MIN]   (default 8000)
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { MOST = 70000 };  // Open MPI 4.1 keeps 65,532 of its own

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, nprocs, least = argc > 1 ? atoi(argv[1]) : 8000;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm *c = malloc(MOST * sizeof *c);
    int n = 0;
    for (; n < MOST; n++) {
        int failed = MPI_Comm_dup(MPI_COMM_WORLD, &c[n]) != MPI_SUCCESS, how_many = 0;
        MPI_Allreduce(&failed, &how_many, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (how_many && how_many != nprocs) {
            fprintf(stderr, "FAIL: rank %d: MPI_Comm_dup number %d failed on %d of %d ranks\n",
                    rank, n + 1, how_many, nprocs);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (how_many) break;
        float x = (float)(rank + n % 5), sum = 0, want = 0;
        for (int r = 0; r < nprocs; r++) want += (float)(r + n % 5);
        if (MPI_Allreduce(&x, &sum, 1, MPI_FLOAT, MPI_SUM, c[n]) != MPI_SUCCESS || sum != want) {
            fprintf(stderr, "FAIL: rank %d: the allreduce on communicator %d: %g, expected %g\n",
                    rank, n + 1, sum, want);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (n < least) {
        fprintf(stderr, "FAIL: rank %d: only %d communicators before the MPI library ran out "
                "(expected at least %d)\n", rank, n, least);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = n - 1; i >= 0; i--) MPI_Comm_free(&c[i]);
    free(c);
    if (!rank) printf("PASS preload_comms: %d communicators, then every rank's MPI_Comm_dup "
                      "failed\n", n);
    MPI_Finalize();
    return 0;
}
