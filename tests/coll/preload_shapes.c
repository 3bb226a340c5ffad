// preload_shapes.c — the float and double sums libdtcoll_mpi.so takes over, at many counts
// and on communicators of many shapes, the way MPICH's allreduce tests drive an MPI library
// (coll/allred*.c: counts from 1 up, MPI_COMM_WORLD and its splits, in place or not), but
// only with the calls the library covers, so that every case runs through it (MPICH's own
// suite reaches it in 21 of its 70 runs: the others use MPI_INT, user operations or derived
// types, which pass through). Run under LD_PRELOAD for every algorithm by
// tests/coll/preload.cmake; knows nothing of dtlab.
// Communicators: MPI_COMM_WORLD; a duplicate; even and odd ranks (MPI_Comm_split); the ranks
// in reverse order (split, key -rank); the lower and upper halves; all ranks but the last
// (MPI_Comm_create of a group). Counts: 1 2 3 7 17 100 1000 4097 65539 300000. MPI_FLOAT and
// MPI_DOUBLE; out of place and MPI_IN_PLACE; MPI_Allreduce and MPI_Iallreduce + MPI_Wait.
// Inputs are fresh random small integers each run (seed printed), whose sums are exact in
// any order: every element must equal PMPI_Allreduce's on the same input (the MPI library's
// own, not intercepted), and the send buffer must be untouched.
// usage: preload_shapes   Prints "PASS preload_shapes: N cases" on rank 0.
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int wrank;

static void fail(const char *shape, int n, int f64, int inplace, int nb, const char *what) {
    fprintf(stderr, "FAIL: rank %d, %s, %d %s, %s, %s: %s\n", wrank, shape, n,
            f64 ? "doubles" : "floats", inplace ? "in place" : "out of place",
            nb ? "MPI_Iallreduce" : "MPI_Allreduce", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static int one_case(MPI_Comm c, const char *shape, int n, int f64, int inplace, int nb,
                    uint64_t *seed) {
    size_t es = f64 ? sizeof(double) : sizeof(float);
    char *in = malloc((size_t)n * es), *keep = malloc((size_t)n * es);
    char *out = malloc((size_t)n * es), *ref = malloc((size_t)n * es);
    for (int i = 0; i < n; i++) {
        *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
        int v = (int)(*seed >> 59) - 16;  // -16..15
        if (f64) ((double *)in)[i] = v;
        else ((float *)in)[i] = (float)v;
    }
    memcpy(keep, in, (size_t)n * es);
    MPI_Datatype t = f64 ? MPI_DOUBLE : MPI_FLOAT;
    PMPI_Allreduce(in, ref, n, t, MPI_SUM, c);
    const void *send = in;
    if (inplace) memcpy(out, in, (size_t)n * es), send = MPI_IN_PLACE;
    if (nb) {
        MPI_Request r;
        MPI_Iallreduce(send, out, n, t, MPI_SUM, c, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
        MPI_Allreduce(send, out, n, t, MPI_SUM, c);
    }
    if (memcmp(out, ref, (size_t)n * es)) fail(shape, n, f64, inplace, nb, "sum differs from PMPI_Allreduce's");
    if (memcmp(in, keep, (size_t)n * es)) fail(shape, n, f64, inplace, nb, "the send buffer changed");
    free(in), free(keep), free(out), free(ref);
    return 1;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int p;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    uint64_t seed = (uint64_t)time(NULL);
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (!wrank) printf("# seed %llu\n", (unsigned long long)seed);
    seed += (uint64_t)wrank * 0x9E3779B97F4A7C15ull;  // each rank its own inputs
    enum { SHAPES = 6 };
    MPI_Comm c[SHAPES];
    const char *name[SHAPES] = {"MPI_COMM_WORLD", "a duplicate", "even or odd ranks",
                                "reversed", "lower or upper half", "all but the last"};
    c[0] = MPI_COMM_WORLD;
    MPI_Comm_dup(MPI_COMM_WORLD, &c[1]);
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &c[2]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, -wrank, &c[3]);
    MPI_Comm_split(MPI_COMM_WORLD, wrank < p / 2, wrank, &c[4]);
    MPI_Group world, most;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int range[1][3] = {{0, p > 1 ? p - 2 : 0, 1}};
    MPI_Group_range_incl(world, 1, range, &most);
    MPI_Comm_create(MPI_COMM_WORLD, most, &c[5]);  // MPI_COMM_NULL on the last rank (p > 1)
    const int counts[] = {1, 2, 3, 7, 17, 100, 1000, 4097, 65539, 300000};
    int cases = 0;
    for (int s = 0; s < SHAPES; s++) {
        if (c[s] == MPI_COMM_NULL) continue;
        for (int k = 0; k < (int)(sizeof counts / sizeof *counts); k++)
            for (int f64 = 0; f64 < 2; f64++)
                for (int inplace = 0; inplace < 2; inplace++)
                    for (int nb = 0; nb < 2; nb++)
                        cases += one_case(c[s], name[s], counts[k], f64, inplace, nb, &seed);
    }
    for (int s = 1; s < SHAPES; s++)
        if (c[s] != MPI_COMM_NULL) MPI_Comm_free(&c[s]);
    MPI_Group_free(&most), MPI_Group_free(&world);
    int all = 0;
    MPI_Reduce(&cases, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (!wrank) printf("PASS preload_shapes: %d cases on %d ranks\n", all, p);
    MPI_Finalize();
    return 0;
}
