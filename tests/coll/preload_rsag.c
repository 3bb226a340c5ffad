// preload_rsag.c — an MPI program that knows nothing of dtlab, for libdtcoll_mpi.so's
// reduce-scatter and allgather (real/dtcoll_mpi_rsag.c): MPI_Reduce_scatter_block,
// MPI_Reduce_scatter (uneven counts, a zero among them) and MPI_Allgather of MPI_FLOAT and
// MPI_DOUBLE, in place and not, at several counts, with fresh integer-valued random inputs
// (small enough that every sum is exact in any order, fp16 on the wire included), each
// result compared element for element with the sum or the values every rank computes on its
// own from the generator; and an MPI_INT reduce-scatter (passed through to the MPI library).
// These are the program's only collectives on its communicator, so the library's
// "dtcoll: ... via ALGO" line (DTCOLL_VERBOSE=1) proves it took them over (preload_run.sh).
// Prints "PASS preload_rsag" or the failures.
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// an integer in [-8, 8) from (seed, rank, i): P·8 stays exact in binary16
static int val(uint64_t seed, int r, size_t i) {
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + (uint64_t)r * 0xBF58476D1CE4E5B9ull + i;
    x ^= x >> 31, x *= 0x94D049BB133111EBull, x ^= x >> 29;
    return (int)(x % 16) - 8;
}

static long bad;

static double get(const void *b, int dbl, size_t i) {
    return dbl ? ((const double *)b)[i] : ((const float *)b)[i];
}
static void put(void *b, int dbl, size_t i, double v) {
    if (dbl) ((double *)b)[i] = v;
    else ((float *)b)[i] = (float)v;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int r, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    uint64_t seed = (uint64_t)time(NULL);
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);  // (not a collective of ours)
    int ms[] = {1, 3, 1000, 4099};
    for (int dbl = 0; dbl < 2; dbl++) {
        MPI_Datatype t = dbl ? MPI_DOUBLE : MPI_FLOAT;
        size_t es = dbl ? 8 : 4;
        for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++)
            for (int inplace = 0; inplace < 2; inplace++) {
                int m = ms[k];
                size_t n = (size_t)m * (size_t)p;
                uint64_t s = seed + 100 * k + 10 * (uint64_t)dbl + (uint64_t)inplace;
                char *in = malloc(n * es), *out = malloc(n * es);
                for (size_t i = 0; i < n; i++) put(in, dbl, i, val(s, r, i));
                // MPI_Reduce_scatter_block: shard r = sum over q of val(s, q, r*m + j)
                if (inplace) {
                    memcpy(out, in, n * es);
                    MPI_Reduce_scatter_block(MPI_IN_PLACE, out, m, t, MPI_SUM, MPI_COMM_WORLD);
                } else {
                    MPI_Reduce_scatter_block(in, out, m, t, MPI_SUM, MPI_COMM_WORLD);
                }
                for (int j = 0; j < m; j++) {
                    double want = 0;
                    for (int q = 0; q < p; q++) want += val(s, q, (size_t)r * m + j);
                    if (get(out, dbl, j) != want && bad++ < 10)
                        fprintf(stderr, "FAIL rank %d: Reduce_scatter_block m=%d [%d] = %g, "
                                "expected %g\n", r, m, j, get(out, dbl, j), want);
                }
                // MPI_Reduce_scatter, uneven: rank i gets (i*m) % 7 + m - ..., rank 1 none
                int *rc = malloc((size_t)p * sizeof(int)), off = 0, mine = 0;
                size_t total = 0;
                for (int i = 0; i < p; i++) {
                    rc[i] = i == 1 ? 0 : (m * (i + 1)) % 13 + m / (i + 1);
                    if (i < r) off += rc[i];
                    total += (size_t)rc[i];
                }
                mine = rc[r];
                char *in2 = malloc(total * es + 8), *out2 = malloc(total * es + 8);
                for (size_t i = 0; i < total; i++) put(in2, dbl, i, val(s + 5, r, i));
                if (inplace) {
                    memcpy(out2, in2, total * es);
                    MPI_Reduce_scatter(MPI_IN_PLACE, out2, rc, t, MPI_SUM, MPI_COMM_WORLD);
                } else {
                    MPI_Reduce_scatter(in2, out2, rc, t, MPI_SUM, MPI_COMM_WORLD);
                }
                for (int j = 0; j < mine; j++) {
                    double want = 0;
                    for (int q = 0; q < p; q++) want += val(s + 5, q, (size_t)(off + j));
                    if (get(out2, dbl, j) != want && bad++ < 10)
                        fprintf(stderr, "FAIL rank %d: Reduce_scatter m=%d [%d] = %g, expected "
                                "%g\n", r, m, j, get(out2, dbl, j), want);
                }
                // MPI_Allgather: block q = val(s + 9, q, j) on every rank
                for (int j = 0; j < m; j++) put(in, dbl, (size_t)j, val(s + 9, r, (size_t)j));
                memset(out, 0, n * es);
                if (inplace) {
                    for (int j = 0; j < m; j++)
                        put(out, dbl, (size_t)r * m + j, val(s + 9, r, (size_t)j));
                    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, m, t, MPI_COMM_WORLD);
                } else {
                    MPI_Allgather(in, m, t, out, m, t, MPI_COMM_WORLD);
                }
                for (int q = 0; q < p; q++)
                    for (int j = 0; j < m; j++)
                        if (get(out, dbl, (size_t)q * m + j) != val(s + 9, q, (size_t)j) &&
                            bad++ < 10)
                            fprintf(stderr, "FAIL rank %d: Allgather m=%d block %d [%d]\n", r, m,
                                    q, j);
                free(rc), free(in2), free(out2), free(in), free(out);
            }
    }
    // an MPI_INT reduce-scatter: not ours, the MPI library's own (still correct)
    int *ii = malloc((size_t)p * sizeof(int)), io = 0;
    for (int i = 0; i < p; i++) ii[i] = r + i;
    MPI_Reduce_scatter_block(ii, &io, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (io != p * (p - 1) / 2 + p * r && bad++ < 10)
        fprintf(stderr, "FAIL rank %d: MPI_INT passed through: %d\n", r, io);
    free(ii);
    long all = bad;
    PMPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (r == 0) printf("%s preload_rsag np=%d: %ld wrong\n", all ? "FAIL" : "PASS", p, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
