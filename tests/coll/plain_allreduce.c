// plain_allreduce.c — an ordinary MPI program that knows nothing of dtlab: the test subject
// for libdtcoll_mpi.so (real/dtcoll_mpi.c). plain_check.sh runs it once as is (Open MPI's
// own allreduce) and once under LD_PRELOAD=libdtcoll_mpi.so, and compares the two outputs.
// It exercises what the interposer must handle: MPI_Allreduce of MPI_FLOAT and MPI_DOUBLE
// with MPI_SUM, in place and with separate buffers, counts 0, 1 and below the number of
// ranks; MPI_Iallreduce completed by MPI_Wait, MPI_Waitall (two in flight, one float, one
// double), an MPI_Test loop, MPI_Waitany + MPI_Waitsome, and while rank 0 waits on a plain
// receive whose sender waits for the allreduce (progress with no progress thread);
// sub-communicators from MPI_Comm_split (freed, then split again) and MPI_Comm_dup; and
// calls that must pass through untouched: MPI_INT with MPI_SUM, MPI_FLOAT with MPI_MAX,
// MPI_UNSIGNED_LONG_LONG with MPI_MAX.
// Rank 0 prints one line per checked value:
//   val CASE INDEX TYPE P MAG VALUE HEX
// TYPE f32, f64 or exact; P the communicator's size; MAG = sum over its ranks of |input|
// (the tolerance's scale, see plain_check.sh); VALUE in %.17g and HEX in %a. A line
// "identical CASE yes|no" says whether every rank holds the same bits; "done" ends it.
// Not here: the comparison (plain_check.sh), any knowledge of dtlab's algorithms.
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// splitmix64: input x_r[i] of rank r in [-1, 1)
static double input(int r, size_t i, int salt) {
    uint64_t z = ((uint64_t)r << 40) ^ ((uint64_t)salt << 56) ^ i;
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1p-52 - 1.0;  // 53 random bits: sums round in any order
}

static uint64_t hash(const void *p, size_t n) {
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

// Do all ranks of comm hold the same bytes? (MPI_UNSIGNED_LONG_LONG MAX: passes through.)
static int identical(const void *p, size_t n, MPI_Comm comm) {
    unsigned long long h = hash(p, n), v[2] = {h, ~h};
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm);
    return v[0] == ~v[1];
}

static double mag(const int *ranks, int P, size_t i, int salt) {
    double m = 0.0;
    for (int q = 0; q < P; q++) m += fabs(input(ranks ? ranks[q] : q, i, salt));
    return m;
}

static void print_val(const char *name, size_t i, const char *type, int P, double m, double v) {
    printf("val %s %zu %s %d %.17g %.17g %a\n", name, i, type, P, m, v, v);
}

// Print the values at a few fixed indices (all of them for short buffers).
static void print_buf(const char *name, const void *buf, size_t n, int f64, int P,
                      const int *ranks, int salt) {
    size_t pick[5] = {0, 1, n / 3, n / 2, n - 1};
    for (int k = 0; k < (n <= 5 ? (int)n : 5); k++) {
        size_t i = n <= 5 ? (size_t)k : pick[k];
        double v = f64 ? ((const double *)buf)[i] : ((const float *)buf)[i];
        print_val(name, i, f64 ? "f64" : "f32", P, mag(ranks, P, i, salt), v);
    }
}

static void *filled(int r, size_t n, int f64, int salt) {
    void *b = malloc(n * (f64 ? 8 : 4) + 8);
    for (size_t i = 0; i < n; i++) {
        if (f64) ((double *)b)[i] = input(r, i, salt);
        else ((float *)b)[i] = (float)input(r, i, salt);
    }
    return b;
}

// One blocking allreduce on comm (world ranks of its members in `ranks`); rank 0 of comm
// prints when it is world rank 0.
static void blocking(const char *name, MPI_Comm comm, size_t n, int f64, int in_place,
                     int salt, int wr) {
    int r, P;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &P);
    void *send = filled(r, n, f64, salt), *recv = in_place ? send : malloc(n * 8 + 8);
    MPI_Allreduce(in_place ? MPI_IN_PLACE : send, recv, (int)n, f64 ? MPI_DOUBLE : MPI_FLOAT,
                  MPI_SUM, comm);
    int same = identical(recv, n * (f64 ? 8 : 4), comm);
    if (wr == 0 && n > 0) {
        print_buf(name, recv, n, f64, P, NULL, salt);
        printf("identical %s %s\n", name, same ? "yes" : "no");
    }
    if (!in_place) free(recv);
    free(send);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int wr, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm w = MPI_COMM_WORLD;

    blocking("f32_inplace", w, 1000003, 0, 1, 1, wr);
    blocking("f32_separate", w, 4099, 0, 0, 2, wr);
    blocking("f64_inplace", w, 300007, 1, 1, 3, wr);
    blocking("f64_separate", w, 17, 1, 0, 4, wr);
    blocking("f32_count1", w, 1, 0, 1, 5, wr);
    blocking("f32_count_below_P", w, P > 1 ? (size_t)P - 1 : 1, 0, 0, 6, wr);
    float zero[1] = {42.0f};
    MPI_Allreduce(MPI_IN_PLACE, zero, 0, MPI_FLOAT, MPI_SUM, w);  // count 0: nothing changes
    if (wr == 0) print_val("f32_count0_untouched", 0, "exact", P, 0.0, zero[0]);

    {   // MPI_Iallreduce + MPI_Wait
        size_t n = 262147;
        float *x = filled(wr, n, 0, 7);
        MPI_Request q;
        MPI_Iallreduce(MPI_IN_PLACE, x, (int)n, MPI_FLOAT, MPI_SUM, w, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        int same = identical(x, n * 4, w);
        if (wr == 0) print_buf("iallreduce_wait", x, n, 0, P, NULL, 7), printf("identical iallreduce_wait %s\n", same ? "yes" : "no");
        free(x);
    }
    {   // two in flight (float in place, double from a separate buffer) + MPI_Waitall
        size_t n = 50021, m = 7001;
        float *x = filled(wr, n, 0, 8);
        double *y = filled(wr, m, 1, 9), *yr = malloc(m * 8);
        MPI_Request q[2];
        MPI_Iallreduce(MPI_IN_PLACE, x, (int)n, MPI_FLOAT, MPI_SUM, w, &q[0]);
        MPI_Iallreduce(y, yr, (int)m, MPI_DOUBLE, MPI_SUM, w, &q[1]);
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        int s1 = identical(x, n * 4, w), s2 = identical(yr, m * 8, w);
        if (wr == 0) {
            print_buf("iallreduce_waitall_f32", x, n, 0, P, NULL, 8);
            print_buf("iallreduce_waitall_f64", yr, m, 1, P, NULL, 9);
            printf("identical iallreduce_waitall %s\n", s1 && s2 ? "yes" : "no");
        }
        free(x), free(y), free(yr);
    }
    {   // MPI_Iallreduce + an MPI_Test loop
        size_t n = 9973;
        float *x = filled(wr, n, 0, 10);
        MPI_Request q;
        int flag = 0;
        MPI_Iallreduce(MPI_IN_PLACE, x, (int)n, MPI_FLOAT, MPI_SUM, w, &q);
        while (!flag) MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
        if (wr == 0) print_buf("iallreduce_test", x, n, 0, P, NULL, 10);
        free(x);
    }
    {   // two in flight, completed by MPI_Waitany then MPI_Waitsome
        size_t n = 3001;
        float *x = filled(wr, n, 0, 15), *y = filled(wr, n, 0, 16);
        MPI_Request q[2];
        MPI_Iallreduce(MPI_IN_PLACE, x, (int)n, MPI_FLOAT, MPI_SUM, w, &q[0]);
        MPI_Iallreduce(MPI_IN_PLACE, y, (int)n, MPI_FLOAT, MPI_SUM, w, &q[1]);
        int idx, n_out, ids[2];
        MPI_Waitany(2, q, &idx, MPI_STATUS_IGNORE);
        do MPI_Waitsome(2, q, &n_out, ids, MPI_STATUSES_IGNORE); while (n_out != MPI_UNDEFINED);
        if (wr == 0) print_buf("iallreduce_waitany", x, n, 0, P, NULL, 15),
                     print_buf("iallreduce_waitsome", y, n, 0, P, NULL, 16);
        free(x), free(y);
    }
    if (P > 1) {  // progress: rank 0 waits on a plain receive whose sender (rank 1) first
                  // waits for the allreduce, which needs rank 0's part (a valid MPI program)
        size_t n = 65537;
        float *x = filled(wr, n, 0, 17);
        int token = 0;
        MPI_Request q, rq = MPI_REQUEST_NULL;
        if (wr == 0) MPI_Irecv(&token, 1, MPI_INT, 1, 99, w, &rq);
        MPI_Iallreduce(MPI_IN_PLACE, x, (int)n, MPI_FLOAT, MPI_SUM, w, &q);
        if (wr == 0) {
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        } else {
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            if (wr == 1) token = 7, MPI_Send(&token, 1, MPI_INT, 0, 99, w);
        }
        if (wr == 0) print_buf("iallreduce_progress", x, n, 0, P, NULL, 17),
                     print_val("progress_token", 0, "exact", P, 0.0, token);
        free(x);
    }
    for (int round = 0; round < 2; round++) {  // sub-communicators: odd and even ranks
        MPI_Comm sub;
        MPI_Comm_split(w, wr % 2, wr, &sub);
        int sr, sp;
        MPI_Comm_rank(sub, &sr);
        MPI_Comm_size(sub, &sp);
        size_t n = 100003;
        float *x = filled(wr, n, 0, 11 + round);
        MPI_Allreduce(MPI_IN_PLACE, x, (int)n, MPI_FLOAT, MPI_SUM, sub);
        int same = identical(x, n * 4, sub);
        // each half's values at index 5 and n-1 travel to world rank 0 (MPI_DOUBLE MAX:
        // passes through); slots of the other half hold -inf
        double v[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
        v[2 * (wr % 2)] = x[5], v[2 * (wr % 2) + 1] = x[n - 1];
        MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_DOUBLE, MPI_MAX, w);
        MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, w);
        if (wr == 0) {
            for (int c = 0; c < 2 && c < P; c++) {
                int members[64], k = 0;
                for (int q = c; q < P && k < 64; q += 2) members[k++] = q;
                char name[64];
                snprintf(name, sizeof name, "split%d_color%d", round, c);
                print_val(name, 5, "f32", k, mag(members, k, 5, 11 + round), v[2 * c]);
                print_val(name, n - 1, "f32", k, mag(members, k, n - 1, 11 + round), v[2 * c + 1]);
            }
            printf("identical split%d %s\n", round, same ? "yes" : "no");
        }
        free(x);
        MPI_Comm_free(&sub);  // the interposer's delete callback frees its context here
    }
    {   // a duplicate of the world
        MPI_Comm dup;
        MPI_Comm_dup(w, &dup);
        blocking("f64_dup", dup, 2053, 1, 1, 13, wr);
        MPI_Comm_free(&dup);
    }
    {   // must pass through: MPI_INT sum, MPI_FLOAT max (exact results)
        int iv[3] = {wr + 1, 1000 * wr, -wr};
        MPI_Allreduce(MPI_IN_PLACE, iv, 3, MPI_INT, MPI_SUM, w);
        float fm[2] = {(float)input(wr, 0, 14), (float)input(wr, 1, 14)};
        MPI_Allreduce(MPI_IN_PLACE, fm, 2, MPI_FLOAT, MPI_MAX, w);
        if (wr == 0) {
            for (int i = 0; i < 3; i++) print_val("int_sum", (size_t)i, "exact", P, 0.0, iv[i]);
            for (int i = 0; i < 2; i++) print_val("f32_max", (size_t)i, "exact", P, 0.0, fm[i]);
        }
    }
    if (wr == 0) printf("done P=%d\n", P);
    MPI_Finalize();
    return 0;
}
