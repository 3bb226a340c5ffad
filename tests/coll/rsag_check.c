// rsag_check.c — the library's reduce-scatter and allgather (nn/coll/coll_rsag.c) against
// the MPI library's own, compiled for both worlds (mpirun P = 1..5, smpirun). For every
// algorithm asked for, float32 and float64, the even split at counts 0, 1, P-1, P+1, a prime
// and a large one, and uneven shards (random sizes, zeros among them; then the same total
// split otherwise), with fresh random inputs (the seed is printed; DT_SEED=N repeats a run):
//  - reduce-scatter of integer-valued inputs (every sum exact, in any order) is bit for bit
//    MPI_Reduce_scatter_block's (even split, P | count) or MPI_Reduce_scatter's shard;
//  - reduce-scatter of inputs in [-1, 1) is within P · 2^-23 · Σ_r |x_r| (2^-52 for float64)
//    of MPI_Reduce_scatter's float64 sum of the same values;
//  - allgather of random shards is bit for bit MPI_Allgather's (MPI_Allgatherv's);
//  - reduce-scatter then allgather gives the bits of dt_allreduce with the same algorithm
//    (ring, and rhd at sizes its allreduce takes the halving path for), fp16 wire too;
//  - the nonblocking start / wait gives the blocking call's bits;
//  - shard sizes that do not sum to the count fail with DT_EXIT_USAGE.
// Rank 0 prints "PASS rsag_check P=N ..." or the failures.
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll/coll.h"
#include "coll/coll_cost.h"
#include "kernels.h"

// The run's state, passed around: no globals (under SMPI every rank shares them).
typedef struct {
    int R, P;
    long fails, checks;
} ctx;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        x->checks++;                                                           \
        if (!(cond)) {                                                         \
            x->fails++;                                                        \
            if (x->fails < 20) {                                               \
                fprintf(stderr, "FAIL rank %d: ", x->R);                       \
                fprintf(stderr, __VA_ARGS__);                                  \
                fputc('\n', stderr);                                           \
            }                                                                  \
        }                                                                      \
    } while (0)

static double uni(uint64_t seed, int r, size_t i) {
    return 2.0 * dt_uniform(dt_mix64(seed + 7919u * (uint64_t)r), i) - 1.0;
}

// count elements of type t from value(i)
static void fill(void *buf, dt_dtype t, size_t n, uint64_t seed, int r, int integer) {
    for (size_t i = 0; i < n; i++) {
        double v = uni(seed, r, i);
        if (integer) v = floor(v * 1024.0);
        if (t == DT_F64) ((double *)buf)[i] = v;
        else ((float *)buf)[i] = (float)v;
    }
}

static MPI_Datatype mt(dt_dtype t) { return t == DT_F64 ? MPI_DOUBLE : MPI_FLOAT; }

// The shard bounds of rank i: counts or the even split.
static size_t lo_of(const size_t *counts, size_t n, int P, int i) {
    if (!counts) return dt_shard_lo(n, P, i);
    size_t s = 0;
    for (int k = 0; k < i; k++) s += counts[k];
    return s;
}

// One configuration: algo a, type t, count n, shard sizes counts (NULL: even).
static void run(ctx *x, dt_coll *c, const char *algo, dt_dtype t, size_t n, const size_t *counts,
                uint64_t seed) {
    int R = x->R, P = x->P;
    size_t es = t == DT_F64 ? 8 : 4, lo = lo_of(counts, n, P, R), hi = lo_of(counts, n, P, R + 1);
    size_t m = hi - lo;
    char *buf = malloc(n * es + 8), *ref = malloc(n * es + 8), *mine = malloc(m * es + 8);
    int *rc = malloc((size_t)P * sizeof(int)), *disp = malloc((size_t)P * sizeof(int));
    for (int i = 0; i < P; i++)
        rc[i] = (int)(lo_of(counts, n, P, i + 1) - lo_of(counts, n, P, i)), disp[i] = (int)lo_of(counts, n, P, i);
    int even = !counts && n % (size_t)P == 0;
    const char *how = counts ? "uneven" : "even";
    dt_error err;

    // (1) integer inputs: exact, so bit for bit the MPI library's
    fill(buf, t, n, seed, R, 1);
    memcpy(ref, buf, n * es);
    int rcode = dt_reduce_scatter(c, buf, n, counts, t, &err);
    CHECK(rcode == 0, "%s rs %s n=%zu: %s", algo, how, n, rcode ? err.msg : "");
    if (even) MPI_Reduce_scatter_block(ref, mine, (int)(n / (size_t)P), mt(t), MPI_SUM, MPI_COMM_WORLD);
    else MPI_Reduce_scatter(ref, mine, rc, mt(t), MPI_SUM, MPI_COMM_WORLD);
    CHECK(memcmp(buf + lo * es, mine, m * es) == 0,
          "%s %s rs %s n=%zu: shard [%zu,%zu) differs from MPI_Reduce_scatter%s's", algo,
          t == DT_F64 ? "f64" : "f32", how, n, lo, hi, even ? "_block" : "");

    // (2) real inputs: within the rounding of P - 1 additions of MPI's float64 sum
    fill(buf, t, n, seed + 1, R, 0);
    double *d = malloc(n * 8 + 8), *ds = malloc(m * 8 + 8), *da = malloc(n * 8 + 8), *das = malloc(m * 8 + 8);
    for (size_t i = 0; i < n; i++) {
        d[i] = t == DT_F64 ? ((double *)buf)[i] : ((float *)buf)[i];
        da[i] = fabs(d[i]);
    }
    char *copy = malloc(n * es + 8);
    memcpy(copy, buf, n * es);
    dt_reduce_scatter(c, buf, n, counts, t, &err);
    MPI_Reduce_scatter(d, ds, rc, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce_scatter(da, das, rc, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double eps = t == DT_F64 ? 0x1p-52 : 0x1p-23;
    long bad = 0;
    for (size_t i = 0; i < m; i++) {
        double v = t == DT_F64 ? ((double *)buf)[lo + i] : ((float *)buf)[lo + i];
        if (!(fabs(v - ds[i]) <= P * eps * das[i] + 1e-300)) bad++;
    }
    CHECK(bad == 0, "%s rs %s n=%zu: %ld elements off MPI's float64 sum", algo, how, n, bad);

    // (3) nonblocking: the blocking call's bits
    char *nb = malloc(n * es + 8);
    memcpy(nb, copy, n * es);
    dt_coll_req *q = dt_reduce_scatter_start(c, nb, n, counts, t, &err);
    CHECK(q != NULL, "%s rs start n=%zu: %s", algo, n, q ? "" : err.msg);
    if (q) {
        while (!dt_allreduce_progress(q)) {}
        dt_allreduce_wait(q);
        CHECK(memcmp(nb + lo * es, buf + lo * es, m * es) == 0,
              "%s rs nonblocking n=%zu: not the blocking call's bits", algo, n);
    }

    // (4) allgather of random shards: MPI_Allgather's bits (a copy in any algorithm)
    fill(buf, t, n, seed + 2, 1000 + R, 0);  // only this rank's shard is its contribution
    memcpy(mine, buf + lo * es, m * es);
    for (size_t i = 0; i < n * es; i++) if (i < lo * es || i >= hi * es) buf[i] = (char)0xA5;
    rcode = dt_allgather(c, buf, n, counts, t, &err);
    CHECK(rcode == 0, "%s ag %s n=%zu: %s", algo, how, n, rcode ? err.msg : "");
    if (even) MPI_Allgather(mine, (int)m, mt(t), ref, (int)m, mt(t), MPI_COMM_WORLD);
    else MPI_Allgatherv(mine, (int)m, mt(t), ref, rc, disp, mt(t), MPI_COMM_WORLD);
    CHECK(memcmp(buf, ref, n * es) == 0, "%s ag %s n=%zu: differs from MPI_Allgather%s's",
          algo, how, n, even ? "" : "v");
    memset(nb, 0x5A, n * es);
    memcpy(nb + lo * es, mine, m * es);
    q = dt_allgather_start(c, nb, n, counts, t, &err);
    if (q) dt_allreduce_wait(q);
    CHECK(q && memcmp(nb, ref, n * es) == 0, "%s ag nonblocking n=%zu differs", algo, n);
    free(nb), free(copy), free(d), free(ds), free(da), free(das);
    free(buf), free(ref), free(mine), free(rc), free(disp);
}

// reduce-scatter + allgather == dt_allreduce, bit for bit, on real inputs (ring; rhd where
// its allreduce takes the halving path: P a power of two, a size the cost model does not
// give to recursive doubling)
static void same_as_allreduce(ctx *x, dt_coll *c, const char *algo, size_t n, uint64_t seed) {
    int R = x->R, P = x->P;
    const dt_coll_opts *o = dt_coll_get_opts(c);
    if (o->algo == DT_ALGO_RHD &&
        ((P & (P - 1)) || dt_rhd_whole(o, DT_ALGO_RHD, P, (double)n * (o->wire_f16 ? 2 : 4))))
        return;
    float *a = malloc(n * 4 + 4), *b = malloc(n * 4 + 4);
    fill(a, DT_F32, n, seed + 3, R, 0);
    memcpy(b, a, n * 4);
    dt_error err;
    dt_allreduce(c, a, n, DT_F32, &err);
    dt_reduce_scatter(c, b, n, NULL, DT_F32, &err);
    dt_allgather(c, b, n, NULL, DT_F32, &err);
    CHECK(memcmp(a, b, n * 4) == 0, "%s%s n=%zu: reduce-scatter + allgather is not the "
          "allreduce's bits", algo, dt_coll_get_opts(c)->wire_f16 ? " fp16 wire" : "", n);
    free(a), free(b);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ctx xs = {0, 0, 0, 0}, *x = &xs;
    MPI_Comm_rank(MPI_COMM_WORLD, &x->R);
    MPI_Comm_size(MPI_COMM_WORLD, &x->P);
    int R = x->R, P = x->P;
    const char *algos = argc > 1 ? argv[1] : "ring,rhd,mpi,dbtree,hier,auto";
    size_t large = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 20011;
    const char *env = getenv("DT_SEED");
    unsigned long long seed = env ? strtoull(env, NULL, 10) : (unsigned long long)time(NULL);
    MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    char list[256];
    snprintf(list, sizeof list, "%s", algos);
    char *save = NULL;  // (strtok_r: strtok's state would be shared by the ranks under SMPI)
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        dt_coll_opts o = dt_coll_opts_default();
        dt_error err;
        if (dt_algo_parse(tok, "algos", &o.algo, &err)) {
            if (R == 0) fprintf(stderr, "%s\n", err.msg);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (o.algo == DT_ALGO_HIER) o.group = P > 1 ? 2 : 1;
        dt_coll *c = dt_coll_create(MPI_COMM_WORLD, NULL, &o, &err);
        if (!c) {
            fprintf(stderr, "FAIL %s: %s\n", tok, err.msg);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        size_t ns[] = {0, 1, (size_t)(P - 1), (size_t)(P + 1), 1009, (size_t)P * 101, large};
        for (int t = 0; t < 2; t++)
            for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
                run(x, c, tok, t ? DT_F64 : DT_F32, ns[k], NULL, seed + 31 * k + t);
        // uneven shards: random sizes 0..2·avg, a zero among them (rank 0's draw for all)
        size_t *counts = malloc((size_t)P * sizeof(size_t)), total = 0;
        for (int i = 0; i < P; i++) {
            counts[i] = i == P / 2 ? 0 : (size_t)(dt_uniform(dt_mix64(seed + 5), (size_t)i) * 2000);
            total += counts[i];
        }
        for (int t = 0; t < 2; t++) run(x, c, tok, t ? DT_F64 : DT_F32, total, counts, seed + 77 + t);
        // the same total split otherwise, on the same communicator: its own schedule, not
        // the one the library kept for that count (nn/coll/coll_cache.c)
        size_t *turned = malloc((size_t)P * sizeof(size_t));
        for (int i = 0; i < P; i++) turned[i] = counts[(i + 1) % P];
        for (int t = 0; t < 2; t++)
            run(x, c, tok, t ? DT_F64 : DT_F32, total, turned, seed + 79 + t);
        free(turned);
        // a wrong shard list: exit code 2's error, on every rank, nothing sent
        counts[0] += 1;
        float one[1];
        int rcode = dt_reduce_scatter(c, one, total, counts, DT_F32, &err);
        CHECK(rcode == -1 && err.code == DT_EXIT_USAGE && strstr(err.msg, "sum to"),
              "%s: shard sizes that do not sum to the count were accepted", tok);
        free(counts);
        if (o.algo == DT_ALGO_RING || o.algo == DT_ALGO_RHD)
            for (size_t k = 1; k < sizeof ns / sizeof ns[0]; k++)
                same_as_allreduce(x, c, tok, ns[k], seed + k);
        dt_coll_free(c);
        if (o.algo == DT_ALGO_RING || o.algo == DT_ALGO_RHD) {  // the same with fp16 on the wire
            o.wire_f16 = 1;
            c = dt_coll_create(MPI_COMM_WORLD, NULL, &o, &err);
            for (size_t k = 1; k < sizeof ns / sizeof ns[0]; k++)
                same_as_allreduce(x, c, tok, ns[k], seed + k);
            dt_coll_free(c);
        }
    }
    long v[2] = {x->fails, x->checks};
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (R == 0)
        printf("%s rsag_check P=%d seed=%llu algos=%s: %ld checks, %ld failures\n",
               v[0] ? "FAIL" : "PASS", P, seed, algos, v[1], v[0]);
    MPI_Finalize();
    return v[0] ? 1 : 0;
}
