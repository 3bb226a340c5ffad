// coll_check.c — the allreduce library's correctness program, compiled for both worlds: an
// executable run by mpirun (P = 1..4), and an SMPI shared object run by smpirun (P up to
// 1000). For every algorithm and variant asked for, and every count (0, 1, P-1, P+1, a
// prime, a large one), each rank fills its buffer from a seeded counter-based generator,
// runs the allreduce (blocking, then nonblocking with several requests in flight), and
//  - checks the indices i ≡ rank (mod P) (so the ranks together check every element)
//    against the sum of all ranks' inputs recomputed in float64, within
//      fp32 wire: P · 2^-23 · Σ_r |x_r[i]|      (each partial sum rounds once per add)
//      fp16 wire: (P + 2) · 2^-11 · Σ_r |x_r[i]| (each message rounds once more)
//      float64:   P · 2^-52 · Σ_r |x_r[i]|
//  - checks that every rank holds the bit-identical result (a hash of the whole buffer).
// --timing compares the simulated time of one allreduce with the α-β cost model instead
// (--timing-csv FILE: rank 0 also appends algo,ranks,bytes,simulated_s,model_s rows to FILE,
// with that header when FILE is empty, and the run reports instead of checking: exit 0
// whatever the ratio. notebooks/dtlab.py's coll_timing reads them).
// --mismatch makes rank 0 pass one element more in checked mode: every rank must fail
// cleanly with exit code 2 (no hang). --cuda (real MPI, builds with the cuda device) puts
// the buffers in GPU memory: the library stages them through pinned host memory, or with
// --gpu-direct hands them to a CUDA-aware MPI; without a GPU it prints SKIPPED and exits
// 77. --sweep (SMPI) polls as dtsim does: MPI_Waitany with a tick instead of MPI_Test.
// Rank 0 prints "PASS ..." or the failures.
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll/coll.h"
#include "coll/coll_cli.h"
#include "coll/coll_cost.h"
#include "coll/coll_sched.h"
#include "device.h"
#include "kernels.h"
#if defined(DT_HAVE_CUDA) && !defined(DT_SMPI)
#include "device_cuda.h"
#endif

typedef struct {
    const char *algos, *counts, *timing_csv;
    size_t large;
    uint64_t seed;
    int fp16, f64, requests, mismatch, segments, tx, ty, blocking_only, coarsen;
    int coarsen_tree, sweep, list_algos;
    int cuda, gpu_direct, share_comm;
    double timing_bytes, alpha, beta, alpha_intra, beta_intra, share;
    dt_coll_cli cli;  // --group: the allreduce options' table (nn/coll/coll_cli.c)
} args_t;

#define AT(member) DT_OPT_AT(args_t, member)
#define COUNT(name_, member, help_) {.name = name_, .arg = "N", .type = DT_OPT_INT, \
    AT(member), .lo = 0, .hi = 1 << 30, .want = "a count >= 0", .help = help_}
#define SECONDS(name_, member, help_) {.name = name_, .arg = "X", .type = DT_OPT_REAL, \
    AT(member), .lo = 0, .hi = 1e30, .want = "a number >= 0", .help = help_}
#define SWITCH(name_, member, help_) {.name = name_, .type = DT_OPT_SWITCH, AT(member), \
    .help = help_}

static const dt_opt check_opts[] = {
    {.type = DT_OPT_SECTION, .help = "usage: mpirun -np P coll_check [options] (the file's "
     "header says what it checks)"},
    {.name = "algos", .arg = "LIST", .type = DT_OPT_TEXT, AT(algos),
     .help = "algorithms, comma-separated (default: every one with a schedule)"},
    {.name = "counts", .arg = "LIST", .type = DT_OPT_TEXT, AT(counts),
     .help = "element counts, comma-separated (default 0, 1, P-1, P+1, a prime, --large)"},
    {.name = "large", .arg = "N", .type = DT_OPT_U64, AT(large), .lo = 1, .hi = 1e12,
     .want = "a positive count", .help = "the large count (100003)"},
    {.name = "seed", .arg = "N", .type = DT_OPT_U64, AT(seed), .lo = 0, .hi = 1.8e19,
     .want = "a seed >= 0", .help = "inputs' seed (default DT_TEST_SEED, else the time)"},
    SWITCH("fp16", fp16, "fp16 on the wire"),
    SWITCH("f64", f64, "float64 buffers"),
    {.name = "requests", .arg = "N", .type = DT_OPT_INT, AT(requests), .lo = 1, .hi = 1 << 20,
     .want = "a positive count", .help = "nonblocking allreduces in flight (3)"},
    SWITCH("mismatch", mismatch, "rank 0 passes one element more (checked mode): exit 2"),
    COUNT("segments", segments, "dbtree's pipeline segments (0: the cost model's)"),
    COUNT("tx", tx, "torus2d's X (0: the squarest)"),
    COUNT("ty", ty, "torus2d's Y"),
    {.name = "timing", .arg = "BYTES", .type = DT_OPT_REAL, AT(timing_bytes), .lo = 0,
     .hi = 1e15, .want = "a size in bytes", .help = "simulated time of one allreduce "
     "against the cost model"},
    SECONDS("alpha", alpha, "the cost model's seconds per message"),
    SECONDS("beta", beta, "the cost model's seconds per byte"),
    SECONDS("alpha-intra", alpha_intra, "the same inside a group"),
    SECONDS("beta-intra", beta_intra, "the same inside a group"),
    SECONDS("share", share, "ranks of a group sharing its links"),
    SWITCH("blocking-only", blocking_only, "no nonblocking calls"),
    COUNT("coarsen", coarsen, "ring rounds merged per simulated message"),
    COUNT("coarsen-dbtree", coarsen_tree, "dbtree segments merged per simulated message"),
    SWITCH("cuda", cuda, "buffers in GPU memory (SKIPPED without a GPU)"),
    SWITCH("gpu-direct", gpu_direct, "--cuda, handed to a CUDA-aware MPI as they are"),
    SWITCH("sweep", sweep, "SMPI: polls sweep (coll.h), as dtsim's do"),
    {.name = "timing-csv", .arg = "FILE", .type = DT_OPT_TEXT, AT(timing_csv),
     .help = "rank 0 appends algo,ranks,bytes,simulated_s,model_s rows (and only reports)"},
    SWITCH("share-comm", share_comm, "the library on MPI_COMM_WORLD itself"),
    SWITCH("list-algos", list_algos, "the algorithms this program tests, and exit"),
};

static double input(uint64_t seed, int r, size_t i) {
    return 2.0 * dt_uniform(dt_mix64(seed + (uint64_t)r), i) - 1.0;
}

static uint64_t fnv(const void *p, size_t n) {
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

typedef struct {
    dt_algo algo;
    int hier_rs, inner_rhd;
    char label[40];
} config_t;

// The variants of each algorithm asked for in a comma-separated list.
static int configs_for(const char *list, int P, int group, config_t *out) {
    int n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        dt_algo a;
        dt_error err;
        if (dt_algo_parse(tok, "--algos", &a, &err)) {
            fprintf(stderr, "coll_check: %s\n", err.msg);
            exit(2);
        }
        // the shaped algorithms (their registry flags) in each inner allreduce, and those
        // with groups in both of hier's variants
        dt_algo_def d;
        dt_algo_get(a, &d);
        int groups = (d.flags & DT_ALGO_USES_GROUPS) != 0;
        int vars = (groups ? 2 : 1) * (d.flags & (DT_ALGO_USES_GROUPS | DT_ALGO_USES_GRID) ? 2 : 1);
        for (int v = 0; v < vars; v++) {
            config_t c = {a, groups ? v / 2 : 0, v % 2, ""};
            if (c.hier_rs && P % group) continue;
            snprintf(c.label, sizeof c.label, "%s%s%s", dt_algo_name(a),
                     groups ? (c.hier_rs ? "/rs" : "/reduce") : "",
                     vars > 1 ? (c.inner_rhd ? "/rhd" : "/ring") : "");
            out[n++] = c;
        }
    }
    return n;
}

static int parse_counts(const char *list, int P, size_t large, size_t *out) {
    int n = 0;
    if (!list) {
        size_t def[] = {0, 1, P > 1 ? (size_t)P - 1 : 2, (size_t)P + 1, 1009, large};
        memcpy(out, def, sizeof def);
        return 6;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *tok = strtok(buf, ","); tok && n < 32; tok = strtok(NULL, ","))
        out[n++] = strtoull(tok, NULL, 10);
    return n;
}

// Run one allreduce of `count` elements the way `mode` says (0 blocking, else `requests`
// requests over consecutive slices, progressed by polling). Returns the failures found.
static long check_one(dt_coll *c, dt_device *dev, const args_t *a, size_t count, int mode,
                      uint64_t seed, const char *label) {
    int P = dt_coll_size(c), r = dt_coll_rank(c);
    size_t es = a->f64 ? sizeof(double) : sizeof(float);
    dt_dtype dt = a->f64 ? DT_F64 : DT_F32;
    char *host = malloc(count * es + 1), *buf = host;
    for (size_t i = 0; i < count; i++) {
        double v = input(seed, r, i);
        if (a->f64) ((double *)buf)[i] = v;
        else ((float *)buf)[i] = (float)v;
    }
    if (dev && dev->device_memory) {  // the allreduce runs on GPU memory
        buf = dev->alloc(dev, count * es + 1);
        dev->from_host(dev, buf, host, count * es);
    }
    dt_error err;
    if (mode == 0) {
        if (dt_allreduce(c, buf, count, dt, &err)) {
            fprintf(stderr, "coll_check rank %d: %s\n", r, err.msg);
            exit(err.code);
        }
    } else {
        int k = a->requests;
        dt_coll_req **req = calloc((size_t)k, sizeof *req);
        for (int j = 0; j < k; j++) {  // buckets: top of the buffer first, as backward
            size_t lo = count * (size_t)(k - 1 - j) / k, hi = count * (size_t)(k - j) / k;
            req[j] = dt_allreduce_start(c, buf + lo * es, hi - lo, dt, &err);
            if (!req[j]) {
                fprintf(stderr, "coll_check rank %d: %s\n", r, err.msg);
                exit(err.code);
            }
            dt_coll_progress_all(c);
        }
        for (int spin = 0, left = k; left > 0 && spin < 1000000; spin++) {
            left = 0;
            for (int j = 0; j < k; j++) left += !dt_allreduce_progress(req[j]);
        }
        for (int j = 0; j < k; j++) dt_allreduce_wait(req[j]);
        free(req);
    }
    if (buf != host) {
        dev->to_host(dev, host, buf, count * es);
        dev->free(dev, buf);
        buf = host;
    }
    long fails = 0;
    double unit = a->f64 ? ldexp(1.0, -52) : a->fp16 ? ldexp(1.0, -11) : ldexp(1.0, -23);
    double mult = a->fp16 ? P + 2 : P;
    for (size_t i = (size_t)r; i < count; i += (size_t)P) {
        double sum = 0.0, mag = 0.0;
        for (int q = 0; q < P; q++) {
            double v = input(seed, q, i);
            if (!a->f64) v = (float)v;
            sum += v, mag += fabs(v);
        }
        double got = a->f64 ? ((double *)buf)[i] : ((float *)buf)[i];
        if (!(fabs(got - sum) <= mult * unit * mag + 1e-300)) {
            if (fails++ < 3)
                fprintf(stderr, "FAIL %s count %zu %s rank %d: element %zu is %.9g, expected "
                        "%.9g (tolerance %.3g)\n", label, count, mode ? "nonblocking" :
                        "blocking", r, i, got, sum, mult * unit * mag);
        }
    }
    unsigned long long h = fnv(buf, count * es), hv[2] = {h, ~h};
    MPI_Allreduce(MPI_IN_PLACE, hv, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (hv[0] != ~hv[1]) {
        if (r == 0) fprintf(stderr, "FAIL %s count %zu %s: the ranks' results differ "
                            "(not bit-identical)\n", label, count, mode ? "nonblocking" : "blocking");
        fails++;
    }
    free(buf);
    return fails;
}

static dt_coll_opts opts_for(const args_t *a, const config_t *cf) {
    dt_coll_opts o = dt_coll_opts_default();
    o.algo = cf->algo;
    o.hier_rs = cf->hier_rs;
    o.inner = cf->inner_rhd ? DT_ALGO_RHD : DT_ALGO_RING;
    o.wire_f16 = a->fp16;
    o.group = a->cli.coll.group;
    o.segments = a->segments;
    o.tx = a->tx, o.ty = a->ty;
    o.coarsen = a->coarsen;
    o.coarsen_tree = a->coarsen_tree;
    o.sweep = a->sweep;
    if (a->alpha > 0) {
        o.cost.alpha = o.cost.alpha_intra = a->alpha;
        o.cost.beta = o.cost.beta_intra = a->beta;
        o.cost.gamma = 0.0;
    }
    if (a->alpha_intra > 0) o.cost.alpha_intra = a->alpha_intra;
    if (a->beta_intra > 0) o.cost.beta_intra = a->beta_intra;
    if (a->share > 0) o.cost.share = a->share;  // ranks of a host sharing its link
    return o;
}

#ifdef DT_SMPI
#include <simgrid/actor.h>
// --coarsen needs a device that can let simulated time pass (dev->delay): a minimal timing
// device whose clock is SMPI's (data untouched, additions free: γ = 0 in this test). The
// delay is a sleep, not a computation: the ranks of one host (8 per host on flat1024.xml's
// one-core hosts) would share its CPU, and each would wait 8 times too long.
typedef struct { double pending; } clock_ctx;
static void clk_delay(dt_device *d, double s) { ((clock_ctx *)d->ctx)->pending += s; }
static void clk_sync(dt_device *d) {
    clock_ctx *c = d->ctx;
    if (c->pending > 0) sg_actor_sleep_for(c->pending);
    c->pending = 0;
}
static void *clk_alloc(dt_device *d, size_t n) { (void)d; return calloc(1, n ? n : 1); }
static void clk_free(dt_device *d, void *p) { (void)d; free(p); }
static void clk_add(dt_device *d, float *y, const float *x, size_t n) { (void)d, (void)y, (void)x, (void)n; }
static dt_device *clock_device(void) {
    dt_device *d = calloc(1, sizeof *d);
    d->name = "clock";
    d->ctx = calloc(1, sizeof(clock_ctx));
    d->delay = clk_delay, d->sync = clk_sync, d->alloc = clk_alloc, d->free = clk_free;
    d->add = clk_add;
    return d;
}
#else
static dt_device *clock_device(void) { return NULL; }
#endif

// Simulated (or real) time of one allreduce against the cost model; returns failures.
static long timing(const args_t *a, const config_t *cf, int n_cf) {
    long fails = 0;
    int r, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    size_t count = (size_t)(a->timing_bytes / (a->fp16 ? 2 : 4));
#ifdef DT_SMPI
    // timing only: every rank's buffer folded onto one block (SimGrid's shared malloc), so
    // hundreds of ranks of a 100 MB gradient cost no memory (the data is not checked here)
    float *buf = SMPI_SHARED_MALLOC((count + 1) * sizeof(float));
#else
    float *buf = calloc(count + 1, sizeof(float));
#endif
    for (int k = 0; k < n_cf; k++) {
        dt_coll_opts o = opts_for(a, &cf[k]);
        dt_error err;
        dt_device *clk = a->coarsen > 1 || a->coarsen_tree > 1 ? clock_device() : NULL;
        dt_coll *c = dt_coll_create(MPI_COMM_WORLD, clk, &o, &err);
        if (!c) { if (r == 0) fprintf(stderr, "coll_check: %s\n", err.msg); exit(2); }
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        dt_allreduce(c, buf, count, DT_F32, &err);
        // The barrier releases ranks a few latencies apart, and the allreduce cannot finish
        // before its last rank starts: time it from the last start to the last finish (from
        // each rank's own start, rhd at 8 KB read 2.2 µs = one extra latency long).
        double se[2] = {t0, MPI_Wtime()};
        MPI_Allreduce(MPI_IN_PLACE, se, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        double t = se[1] - se[0];
        double model = dt_coll_cost(cf[k].algo, dt_coll_get_opts(c), P, (double)count * (a->fp16 ? 2 : 4));
        int ok = fabs(t / model - 1.0) <= 0.05 || isnan(model);  // mpi: no model to check
        if (r == 0)
            printf("timing %-16s P %4d bytes %10.0f simulated %.6e s model %.6e s ratio %.4f %s\n",
                   cf[k].label, P, (double)count * (a->fp16 ? 2 : 4), t, model, t / model,
                   isnan(model) ? "(the library's own: no model)"
                                : ok ? "ok" : "FAIL (more than 5% apart)");
        fails += !ok && !a->timing_csv;
        if (r == 0 && a->timing_csv) {
            FILE *f = fopen(a->timing_csv, "a");
            if (!f) {
                fprintf(stderr, "coll_check: --timing-csv %s: cannot open it for appending\n",
                        a->timing_csv);
                exit(2);
            }
            if (ftell(f) == 0) fprintf(f, "algo,ranks,bytes,simulated_s,model_s\n");
            fprintf(f, "%s,%d,%.0f,%.9e,%.9e\n", cf[k].label, P,
                    (double)count * (a->fp16 ? 2 : 4), t, model);
            fclose(f);
        }
        dt_coll_free(c);
        if (clk) free(clk->ctx), free(clk);
    }
#ifdef DT_SMPI
    SMPI_SHARED_FREE(buf);
#else
    free(buf);
#endif
    return fails;
}

// --list-algos: the registry as this program has it, one entry a line, "name flag...": the
// test coll.registry_lists_match_cmake compares it with the lists cmake/dtlab_algos.cmake
// reads from the table's source (tests/coll/CMakeLists.txt)
static void list_algos(void) {
    static const struct { unsigned bit; const char *name; } flags[] = {
        {DT_ALGO_SUMS_IN_WIRE_TYPE, "DT_ALGO_SUMS_IN_WIRE_TYPE"},
        {DT_ALGO_USES_GROUPS, "DT_ALGO_USES_GROUPS"}, {DT_ALGO_USES_GRID, "DT_ALGO_USES_GRID"},
        {DT_ALGO_EXTERNAL, "DT_ALGO_EXTERNAL"}, {DT_ALGO_CHOOSES, "DT_ALGO_CHOOSES"}};
    for (int i = 0; i < dt_algo_count(); i++) {
        dt_algo_def d;
        if (dt_algo_get((dt_algo)i, &d)) continue;
        printf("%s", d.name);
        for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
            if (d.flags & flags[k].bit) printf(" %s", flags[k].name);
        printf("\n");
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int r, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    // by default every algorithm of the registry that has a schedule (not auto, not nccl)
    char every[DT_ALGO_NAMES_MAX] = "";
    for (int i = 0, len = 0; i < dt_algo_count(); i++) {
        dt_algo_def d;
        if (!dt_algo_get((dt_algo)i, &d) && d.build && len < (int)sizeof every)
            len += snprintf(every + len, sizeof every - (size_t)len, "%s%s", len ? "," : "", d.name);
    }
    args_t a = {.algos = every, .large = 100003, .requests = 3};
    a.cli.coll = dt_coll_opts_default();
    a.cli.coll.group = 0;  // 0: 2 from 3 ranks on, else 1
    const char *env = getenv("DT_TEST_SEED");
    a.seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    dt_opt_table t[2] = {{.opts = check_opts, .n = (int)(sizeof check_opts / sizeof *check_opts),
                          .base = &a}, dt_coll_cli_table(&a.cli, NULL)};
    t[1].only = "group";
    int rc = dt_opts_parse(argc, argv, t, 2, "coll_check", r != 0);
    if (rc == 1 && r == 0) dt_opts_usage(stdout, &t[0]), dt_opts_usage(stdout, &t[1]);
    if (!rc && a.list_algos) list_algos();
    if (rc || a.list_algos) {
        MPI_Finalize();
        return rc == 1 ? 0 : rc;
    }
    if (a.gpu_direct) a.cuda = 1;
    MPI_Bcast(&a.seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (a.cli.coll.group <= 0) a.cli.coll.group = P >= 3 ? 2 : 1;
    if (a.requests < 1) a.requests = 1;
    config_t cf[64];
    int n_cf = configs_for(a.algos, P, a.cli.coll.group, cf);
    if (a.timing_bytes > 0) {
        long f = timing(&a, cf, n_cf);
        MPI_Finalize();
        return f ? 1 : 0;
    }
    dt_device *dev = a.f64 ? NULL : dt_device_cpu_create(1);
    if (a.cuda) {
#if defined(DT_HAVE_CUDA) && !defined(DT_SMPI)
        if (dev) dev->destroy(dev);
        dt_error err;
        int ranks_node = dt_coll_local_size() > 0 ? dt_coll_local_size() : P;
        int gpus = dt_cuda_device_count();
        dev = gpus ? dt_device_cuda_create(r % ranks_node % gpus, 0, &err) : NULL;
        if (!dev) {
            if (r == 0) printf("SKIPPED: coll_check --cuda: no CUDA GPU on this machine\n");
            MPI_Finalize();
            return 77;
        }
#else
        if (r == 0) printf("SKIPPED: coll_check --cuda: this build has no cuda device\n");
        MPI_Finalize();
        return 77;
#endif
    }
    if (a.mismatch) {
        dt_coll_opts o = dt_coll_opts_default();
        o.algo = cf[0].algo;
        o.checked = 1;
        dt_error err;
        dt_coll *c = dt_coll_create(MPI_COMM_WORLD, dev, &o, &err);
        float x[8] = {0};
        int rc = dt_allreduce(c, x, r == 0 ? 5 : 4, DT_F32, &err) ? err.code : 0;
        if (rc) fprintf(stderr, "coll_check rank %d: %s\n", r, err.msg);
        dt_coll_free(c);
        if (dev) dev->destroy(dev);
        MPI_Finalize();
        return rc;
    }
    size_t counts[32];
    int n_counts = parse_counts(a.counts, P, a.large, counts);
    long fails = 0, runs = 0;
    for (int k = 0; k < n_cf; k++) {
        dt_coll_opts o = opts_for(&a, &cf[k]);
        o.gpu_direct = a.gpu_direct;
        o.share_comm = a.share_comm;  // the checks' own collectives then share its comm
        if (a.fp16 && o.algo == DT_ALGO_MPI) continue;
        dt_error err;
        dt_coll *c = dt_coll_create(MPI_COMM_WORLD, dev, &o, &err);
        if (!c) {
            if (r == 0) fprintf(stderr, "coll_check: %s: %s\n", cf[k].label, err.msg);
            if (dev) dev->destroy(dev);
            MPI_Finalize();
            return err.code;
        }
        for (int j = 0; j < n_counts; j++)
            for (int mode = 0; mode < (a.blocking_only ? 1 : 2); mode++, runs++)
                fails += check_one(c, dev, &a, counts[j], mode,
                                   dt_mix64(a.seed + 1000003u * (uint64_t)(k * 64 + j)), cf[k].label);
        dt_coll_free(c);
    }
    MPI_Allreduce(MPI_IN_PLACE, &fails, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (r == 0)
        printf("%s coll_check P=%d seed=%llu %s%s%s: %ld allreduces of %d configurations, "
               "%ld failures\n", fails ? "FAIL" : "PASS", P, (unsigned long long)a.seed,
               a.fp16 ? "fp16-wire" : a.f64 ? "float64" : "fp32",
               a.gpu_direct ? " gpu-direct" : a.cuda ? " cuda-staged" : "",
               a.share_comm ? " shared-comm" : "", runs, n_cf, fails);
    if (dev) dev->destroy(dev);
    MPI_Finalize();
    return fails ? 1 : 0;
}
