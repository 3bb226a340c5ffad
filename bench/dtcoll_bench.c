// dtcoll_bench.c — dtcoll-bench: nccl-tests' all_reduce_perf for dtlab's allreduce library
// (nn/coll). For every size from --min-bytes to --max-bytes (× --factor) it times each
// algorithm asked for and, in the same run and interleaved with them, the MPI library's own
// MPI_Allreduce on the same buffer (float32, sum, in place), and prints per row
//   time  median over the iterations of the slowest rank's time (a barrier before each call)
//   algbw = S / t,  busbw = algbw · 2(P−1)/P  (nccl-tests doc/PERFORMANCE.md)
//   ratio = our busbw / MPI's busbw (= MPI's time / ours)
// Every size is also checked once per algorithm and for MPI: inputs from a seeded generator;
// the indices i ≡ rank (mod P) against the float64 sum, within P·2^-23·Σ|x| (fp16 wire:
// (P+2)·2^-11·Σ|x|); and a hash of the whole buffer equal on every rank (bit-identical).
// Before each timed call the buffer is refilled from a pristine copy (outside the timing),
// so sums never grow to infinity and ours and MPI's start from the same cache state. The
// buffer is allocated as the cpu device allocates gradients (gradient_buffer).
// Not a test: speed is measured here, never asserted in ctest (the smoke test only checks
// that the table and "correctness: OK" appear). Usage: mpirun -np P dtcoll-bench --help
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "coll/coll.h"
#include "coll/coll_cli.h"
#include "device.h"
#include "kernels.h"

#define MAX_CFG 16

typedef struct {
    char algos[256], csv[512];
    size_t min_b, max_b;
    int factor, iters, warmup, fp16, host_add;
    uint64_t seed;
    dt_coll_cli cli;  // --group --inner --hier-rs: the allreduce options' table
} args_t;

typedef struct {
    char name[24];
    dt_coll *c;  // NULL: the MPI library's MPI_Allreduce (or the floor ring, or shm)
    float *floor_tmp;  // the floor ring's receive buffer (NULL: not the floor)
    MPI_Win win;       // shm's window (MPI_WIN_NULL: not shm)
    float **slot;      // shm: every rank's part of the window, mapped here
} cfg_t;

static int rank_, nranks;

static void usage_exit(const char *fmt, const char *what) {
    if (rank_ == 0) {
        fprintf(stderr, "dtcoll-bench: ");
        fprintf(stderr, fmt, what);
        fprintf(stderr, "\n");
    }
    MPI_Finalize();
    exit(DT_EXIT_USAGE);
}

// A size in bytes: a number with an optional K, M or G (binary) suffix
static int size_opt(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err) {
    size_t n = strlen(s), mult = 1;
    char num[64], last = n ? s[n - 1] : 0;
    if (last == 'K' || last == 'k') mult = (size_t)1 << 10, n--;
    else if (last == 'M' || last == 'm') mult = (size_t)1 << 20, n--;
    else if (last == 'G' || last == 'g') mult = (size_t)1 << 30, n--;
    double x;
    if (n >= sizeof num) return dt_opt_bad(err, what, s, d->want);
    snprintf(num, sizeof num, "%.*s", (int)n, s);
    if (dt_parse_real(num, 0, 1e12 / (double)mult, &x)) return dt_opt_bad(err, what, s, d->want);
    *(size_t *)v = (size_t)(x * (double)mult);
    return 0;
}

#define AT(member) DT_OPT_AT(args_t, member)
#define SIZE_WANT "a size in bytes such as 8, 64K or 256M"

static const dt_opt bench_opts[] = {
    {.type = DT_OPT_SECTION, .help = "usage: mpirun -np P dtcoll-bench [options]"},
    {.name = "algos", .arg = "LIST", .type = DT_OPT_STRING, AT(algos),
     .help = "algorithms, comma-separated (default ring,rhd,dbtree,hier,torus2d,ps;\n"
             "valid: %s; and floor: the bare ring, ~20\n"
             "lines of MPI_Irecv/MPI_Isend/MPI_Waitall and a loop of adds, no\n"
             "runner: the fastest a ring over this MPI's messages can be;\n"
             "and shm: the one-node allreduce through an MPI-3 shared window,\n"
             "copies in user space instead of the kernel's CMA: what a\n"
             "shared-memory transport would give, not one of nn/coll's)",
     .help_arg = dt_algo_names},
    {.name = "min-bytes", .arg = "N", .type = DT_OPT_CUSTOM, AT(min_b), .parse = size_opt,
     .want = SIZE_WANT, .help = "smallest size (default 8; suffixes K, M, G = 2^10, 2^20, 2^30)"},
    {.name = "max-bytes", .arg = "N", .type = DT_OPT_CUSTOM, AT(max_b), .parse = size_opt,
     .want = SIZE_WANT, .help = "largest size (default 256M)"},
    {.name = "factor", .arg = "F", .type = DT_OPT_INT, AT(factor), .lo = 2, .hi = 1 << 30,
     .want = "an integer >= 2", .help = "size multiplier, an integer >= 2 (default 2)"},
    {.name = "iters", .arg = "N", .type = DT_OPT_INT, AT(iters), .lo = 1, .hi = 1 << 30,
     .want = "an integer >= 1",
     .help = "timed iterations per size (default: 100, fewer above 8 MB)"},
    {.name = "warmup", .arg = "N", .type = DT_OPT_INT, AT(warmup), .lo = 0, .hi = 1 << 30,
     .want = "an integer >= 0",
     .help = "untimed iterations per size (default: iters/10, at least 1)"},
    {.name = "fp16", .type = DT_OPT_SWITCH, AT(fp16),
     .help = "fp16 on the wire for our algorithms (MPI stays float32)"},
    {.name = "host-add", .type = DT_OPT_SWITCH, AT(host_add),
     .help = "local sums as plain host loops (dev = NULL), not the cpu device"},
    {.name = "seed", .arg = "N", .type = DT_OPT_U64, AT(seed), .lo = 0, .hi = 1.8e19,
     .want = "a seed >= 0", .help = "inputs' seed (default 1)"},
    {.name = "csv", .arg = "FILE", .type = DT_OPT_STRING, AT(csv),
     .help = "also write the table as CSV"},
    {.type = DT_OPT_SECTION, .help = "the allreduce options of dtsim and dtrain that it takes "
     "(--group: default 2, capped at P;\n--hier-rs needs P % group == 0):"},
};

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static float input(uint64_t seed, int r, size_t i) {
    return 2.0f * dt_uniform(dt_mix64(seed + (uint64_t)r), i) - 1.0f;
}

static uint64_t hash_words(const float *x, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    const uint32_t *w = (const uint32_t *)x;
    for (size_t i = 0; i < n; i++) h = (h ^ w[i]) * 0x100000001B3ull;
    return h;
}

// Part j of n elements split over the ranks, for the floor and shm: [j·n/P, (j+1)·n/P)
static size_t part_lo(size_t n, int j) { return (size_t)j * n / (size_t)nranks; }
static size_t part_len(size_t n, int j) { return part_lo(n, j + 1) - part_lo(n, j); }

// The floor: the ring of Patarasuk & Yuan (2009) written as plainly as it goes, for the
// rows that tell our runner's overhead apart from what the MPI's messages cost. Chunk j of
// the n elements is [j·n/P, (j+1)·n/P); reduce-scatter step s sends chunk r−s to the right
// and adds chunk r−s−1 from the left; rank r then holds chunk r+1, and the allgather passes
// chunks around the same way.
static void floor_ring(float *restrict buf, size_t n, float *restrict tmp) {
    int P = nranks, r = rank_, right = (r + 1) % P, left = (r + P - 1) % P;
    MPI_Request q[2];
    for (int s = 0; s < P - 1; s++) {
        int snd = (r - s + P) % P, rcv = (r - s - 1 + P) % P;
        size_t m = part_len(n, rcv);
        MPI_Irecv(tmp, (int)m, MPI_FLOAT, left, 7, MPI_COMM_WORLD, &q[0]);
        MPI_Isend(buf + part_lo(n, snd), (int)part_len(n, snd), MPI_FLOAT, right, 7,
                  MPI_COMM_WORLD, &q[1]);
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        float *y = buf + part_lo(n, rcv);
        for (size_t i = 0; i < m; i++) y[i] += tmp[i];
    }
    for (int s = 0; s < P - 1; s++) {
        int snd = (r + 1 - s + P) % P, rcv = (r - s + P) % P;
        MPI_Irecv(buf + part_lo(n, rcv), (int)part_len(n, rcv), MPI_FLOAT, left, 8,
                  MPI_COMM_WORLD, &q[0]);
        MPI_Isend(buf + part_lo(n, snd), (int)part_len(n, snd), MPI_FLOAT, right, 8,
                  MPI_COMM_WORLD, &q[1]);
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    }
}

// shm: not an algorithm over point-to-point but the reference for a shared-memory
// transport (NCCL's intra-node path; MPI-3 MPI_Win_allocate_shared, MPI 3.1 §11.2.3).
// Rank r owns chunk r: (1) every rank copies the chunks others own into its own slot;
// (2) rank r adds the other ranks' copies of chunk r (in rank order) straight from their
// slots to its own values in its buffer, and copies the sum into its slot; (3) every rank
// copies the others' sums. Each chunk is summed by one rank only, so the bits are the same on all.
// Per rank: (P−1)/P·S copied in, S read for the sum, (P−1)/P·S copied out, all at user-space
// memcpy speed, where the ring's P−1 + P−1 messages are each a kernel copy (CMA).
static void shm_step_end(MPI_Win w) {  // MPI 3.1 §11.7 example 11.21: sync, barrier, sync
    MPI_Win_sync(w);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(w);
}

static void shm_allreduce(float *restrict buf, size_t n, float *const *slot, MPI_Win w) {
    int P = nranks, r = rank_;
    size_t lo = part_lo(n, r), m = part_len(n, r);
    for (int j = 0; j < P; j++)
        if (j != r)
            memcpy(slot[r] + part_lo(n, j), buf + part_lo(n, j), part_len(n, j) * sizeof *buf);
    shm_step_end(w);
    float *restrict y = buf + lo;
    for (int q = 0; q < P; q++) {
        if (q == r) continue;
        const float *restrict x = slot[q] + lo;
        for (size_t i = 0; i < m; i++) y[i] += x[i];
    }
    memcpy(slot[r] + lo, y, m * sizeof(float));
    shm_step_end(w);
    for (int j = 0; j < P; j++)
        if (j != r)
            memcpy(buf + part_lo(n, j), slot[j] + part_lo(n, j), part_len(n, j) * sizeof *buf);
    shm_step_end(w);  // nobody writes its slot again before everyone has read the sums
}

static void shm_create(cfg_t *cf, size_t max_bytes) {
    MPI_Comm node;
    int n_node = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &n_node);
    MPI_Comm_free(&node);
    if (n_node != nranks) usage_exit("--algos shm: needs every rank on one node (%s)",
                                     "MPI_COMM_TYPE_SHARED is smaller than the world");
    // Open MPI backs the window with a file in /dev/shm; when that cannot hold it, its
    // ranks do not fail together (one hangs), so the size is checked here, on every rank
    struct statvfs fs;
    double need = (double)max_bytes * nranks;
    if (statvfs("/dev/shm", &fs) == 0 && need > (double)fs.f_bavail * fs.f_frsize) {
        char m[200];
        double have = (double)fs.f_bavail * fs.f_frsize;
        snprintf(m, sizeof m, "--max-bytes: shm's window needs %.3g GB (P x max bytes) and "
                 "/dev/shm has %.3g GB free%%s", need / 1e9, have / 1e9);
        usage_exit(m, "");
    }
    float *mine = NULL;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Win_allocate_shared((MPI_Aint)max_bytes, sizeof(float), MPI_INFO_NULL,
                                     MPI_COMM_WORLD, &mine, &cf->win);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (rc != MPI_SUCCESS) {  // the ranks may not agree: no MPI_Finalize, which could hang
        fprintf(stderr, "dtcoll-bench: --max-bytes: cannot allocate shm's shared window\n");
        MPI_Abort(MPI_COMM_WORLD, DT_EXIT_USAGE);
    }
    cf->slot = malloc((size_t)nranks * sizeof *cf->slot);
    for (int q = 0; q < nranks; q++) {
        MPI_Aint size;
        int unit;
        MPI_Win_shared_query(cf->win, q, &size, &unit, &cf->slot[q]);
    }
    MPI_Win_lock_all(MPI_MODE_NOCHECK, cf->win);  // a passive epoch for MPI_Win_sync
    snprintf(cf->name, sizeof cf->name, "shm");
}

// The timed buffer stands for a trainer's gradients, which live in device memory: on the
// cpu device, 2 MiB-aligned blocks with transparent huge pages (nn/device_cpu.c). With 4 KiB
// pages the kernel's single-copy transfers between ranks (CMA) ran at half the speed on the
// project's VM (np 2, ring, 64-128 MB: 2.9-3.2 GB/s against dtrain's buckets at 6.5-6.9),
// and a link calibrated from them made dtsim predict dtrain's allreduce ~70 % too long.
// NULL when out of memory.
static float *gradient_buffer(size_t count) {
    size_t huge = (size_t)2 << 20, bytes = (count * sizeof(float) + huge - 1) / huge * huge;
    void *p = NULL;
    if (posix_memalign(&p, huge, bytes) != 0) return NULL;
    (void)madvise(p, bytes, MADV_HUGEPAGE);  // advice: no huge pages is no error
    return p;
}

static void allreduce(const cfg_t *cf, float *buf, size_t count) {
    if (cf->slot) {
        shm_allreduce(buf, count, cf->slot, cf->win);
    } else if (cf->floor_tmp) {
        floor_ring(buf, count, cf->floor_tmp);
    } else if (cf->c) {
        dt_error err;
        if (dt_allreduce(cf->c, buf, count, DT_F32, &err)) {
            fprintf(stderr, "dtcoll-bench rank %d: %s\n", rank_, err.msg);
            MPI_Abort(MPI_COMM_WORLD, err.code);
        }
    } else {
        MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
}

// One checked allreduce of `count` elements; returns 1 when correct (on every rank).
static int check(const cfg_t *cf, float *buf, const float *pristine, size_t count,
                 uint64_t seed, int fp16) {
    memcpy(buf, pristine, count * sizeof(float));
    allreduce(cf, buf, count);
    double unit = fp16 ? ldexp(1.0, -11) : ldexp(1.0, -23), mult = fp16 ? nranks + 2 : nranks;
    long bad = 0;
    for (size_t i = (size_t)rank_; i < count; i += (size_t)nranks) {
        double sum = 0.0, mag = 0.0;
        for (int q = 0; q < nranks; q++) {
            double v = input(seed, q, i);
            sum += v, mag += fabs(v);
        }
        if (!(fabs(buf[i] - sum) <= mult * unit * mag)) {
            if (bad++ < 2)
                fprintf(stderr, "dtcoll-bench: %s, %zu elements, rank %d: element %zu is %.9g, "
                        "expected %.9g\n", cf->name, count, rank_, i, buf[i], sum);
        }
    }
    unsigned long long h = hash_words(buf, count), v[3] = {h, ~h, (unsigned long long)bad};
    MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    int mpi = !cf->c && !cf->floor_tmp && !cf->slot;
    int same = v[0] == ~v[1] || mpi;  // bit-identical: our invariant, not MPI's promise
    if (!same && rank_ == 0)
        fprintf(stderr, "dtcoll-bench: %s, %zu elements: the ranks' results differ\n", cf->name,
                count);
    return same && v[2] == 0;
}

static int make_configs(const args_t *a, dt_device *dev, cfg_t *cf) {
    int n = 1;
    memset(cf, 0, MAX_CFG * sizeof *cf);
    for (int k = 0; k < MAX_CFG; k++) cf[k].win = MPI_WIN_NULL;
    snprintf(cf[0].name, sizeof cf[0].name, "MPI");
    char list[256];
    snprintf(list, sizeof list, "%s", a->algos);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        if (n == MAX_CFG) usage_exit("--algos: more than %s algorithms", "15");
        if (strcasecmp(tok, "floor") == 0) {
            size_t most = a->max_b / sizeof(float) / (size_t)nranks + 1;
            if (most > INT_MAX) usage_exit("--max-bytes: the floor ring sends at most %s", "2^31 floats");
            cf[n].floor_tmp = malloc(most * sizeof(float));
            if (!cf[n].floor_tmp) usage_exit("--max-bytes: cannot allocate %s", "the floor's buffer");
            snprintf(cf[n++].name, sizeof cf[0].name, "floor");
            continue;
        }
        if (strcasecmp(tok, "shm") == 0) {
            shm_create(&cf[n++], a->max_b);
            continue;
        }
        dt_coll_opts o = dt_coll_opts_default();
        dt_error err;
        if (dt_algo_parse(tok, "--algos", &o.algo, &err))
            usage_exit("%s; dtcoll-bench also takes floor and shm", err.msg);
        o.wire_f16 = a->fp16 && o.algo != DT_ALGO_MPI;
        o.group = a->cli.coll.group < nranks ? a->cli.coll.group : nranks;
        o.inner = a->cli.coll.inner;
        o.hier_rs = a->cli.coll.hier_rs;
        cf[n].c = dt_coll_create(MPI_COMM_WORLD, dev, &o, &err);
        if (!cf[n].c) usage_exit("%s", err.msg);
        snprintf(cf[n].name, sizeof cf[n].name, "%s%s", dt_algo_name(o.algo),
                 o.algo == DT_ALGO_HIER && o.hier_rs ? "/rs" : "");
        n++;
    }
    return n;
}

typedef struct {
    FILE *csv;
    char tmp[4096];
    int n_big;                              // sizes >= 1 MiB so far
    double log_ratio[MAX_CFG], min_ratio[MAX_CFG];  // over those sizes, per configuration
} out_t;

static void print_header(const args_t *a, const cfg_t *cf, int n_cf, out_t *out) {
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(ver, &len);
    char *nl = strpbrk(ver, ",\n");
    if (nl) *nl = 0;
    printf("# dtcoll-bench: allreduce of float32, sum, in place; P=%d ranks; group %d%s, inner "
           "%s; wire %s\n", nranks, a->cli.coll.group < nranks ? a->cli.coll.group : nranks,
           a->cli.coll.hier_rs ? " (hier rs)" : "", dt_algo_name(a->cli.coll.inner), a->fp16 ? "fp16" : "fp32");
    printf("# peer: %s, MPI_Allreduce(MPI_IN_PLACE) on the same buffer, interleaved\n", ver);
    printf("# buffer: 2 MiB-aligned, transparent huge pages asked for (as the cpu device "
           "holds a trainer's gradients)\n");
    printf("# time: median over iterations of the slowest rank (barrier before each call); "
           "algbw = S/t; busbw = algbw*2(P-1)/P; ratio = busbw / MPI busbw\n");
    printf("# algorithms:");
    for (int k = 1; k < n_cf; k++) printf(" %s", cf[k].name);
    printf("\n#\n# %10s %10s %-8s %10s %10s %10s %10s %10s %6s %6s\n", "size(B)", "count",
           "algo", "time(us)", "algbw", "busbw", "MPI(us)", "MPI busbw", "ratio", "check");
    printf("# %10s %10s %-8s %10s %10s %10s %10s %10s %6s %6s\n", "", "(float)", "", "",
           "(GB/s)", "(GB/s)", "", "(GB/s)", "", "");
    if (a->csv[0]) {
        snprintf(out->tmp, sizeof out->tmp, "%s.tmp", a->csv);
        out->csv = fopen(out->tmp, "w");
        if (!out->csv) usage_exit("--csv: cannot write '%s'", out->tmp);
        fprintf(out->csv, "ranks,bytes,count,algo,time_us,algbw_gbs,busbw_gbs,mpi_time_us,"
                "mpi_busbw_gbs,ratio,check\n");
    }
}

// Time every configuration at one size; returns the failures of the correctness checks.
static int one_size(const args_t *a, const cfg_t *cf, int n_cf, size_t count, float *buf,
                    float *pristine, out_t *out) {
    size_t bytes = count * sizeof(float);
    uint64_t seed = dt_mix64(a->seed ^ (uint64_t)count);
    for (size_t i = 0; i < count; i++) pristine[i] = input(seed, rank_, i);
    int ok[MAX_CFG], fails = 0;
    for (int k = 0; k < n_cf; k++) fails += !(ok[k] = check(&cf[k], buf, pristine, count, seed,
                                                           a->fp16 && cf[k].c));
    int iters = a->iters, warm = a->warmup;
    if (iters <= 0) {
        size_t per = bytes ? ((size_t)1 << 30) / bytes : 100;
        iters = per > 100 ? 100 : per < 3 ? 3 : (int)per;
    }
    if (warm < 0) warm = iters / 10 > 1 ? iters / 10 : 1;
    double *t = calloc((size_t)n_cf * (size_t)iters, sizeof *t);
    for (int it = -warm; it < iters; it++) {
        for (int j = 0; j < n_cf; j++) {  // rotate the order: no one always goes first
            int k = (j + (it + warm)) % n_cf;
            memcpy(buf, pristine, bytes);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            allreduce(&cf[k], buf, count);
            double dt = MPI_Wtime() - t0;
            if (it >= 0) t[(size_t)k * iters + it] = dt;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, t, n_cf * iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double med[MAX_CFG], bus = 2.0 * (nranks - 1) / nranks;
    for (int k = 0; k < n_cf; k++) med[k] = median(t + (size_t)k * iters, iters);
    free(t);
    if (rank_ == 0) {
        double mpi_alg = bytes / med[0] / 1e9;
        for (int k = 1; k < n_cf; k++) {
            double alg = bytes / med[k] / 1e9, ratio = med[0] / med[k];
            if (bytes >= (1u << 20)) {
                out->log_ratio[k] += log(ratio);
                if (out->n_big == 0 || ratio < out->min_ratio[k]) out->min_ratio[k] = ratio;
            }
            const char *chk = ok[k] && ok[0] ? "OK" : !ok[k] ? "FAIL" : "MPI?";
            printf("  %10zu %10zu %-8s %10.1f %10.3f %10.3f %10.1f %10.3f %6.2f %6s\n", bytes,
                   count, cf[k].name, med[k] * 1e6, alg, alg * bus, med[0] * 1e6, mpi_alg * bus,
                   ratio, chk);
            if (out->csv)
                fprintf(out->csv, "%d,%zu,%zu,%s,%.3f,%.6f,%.6f,%.3f,%.6f,%.4f,%s\n", nranks,
                        bytes, count, cf[k].name, med[k] * 1e6, alg, alg * bus, med[0] * 1e6,
                        mpi_alg * bus, ratio, chk);
        }
        out->n_big += bytes >= (1u << 20);
        fflush(stdout);
    }
    return fails;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    args_t a = {.algos = "ring,rhd,dbtree,hier,torus2d,ps", .min_b = 8,
                .max_b = (size_t)256 << 20, .factor = 2, .warmup = -1, .seed = 1};
    a.cli.coll = dt_coll_opts_default();
    a.cli.coll.group = 2;
    dt_opt_table t[2] = {
        {.opts = bench_opts, .n = (int)(sizeof bench_opts / sizeof *bench_opts), .base = &a},
        dt_coll_cli_table(&a.cli, NULL)};
    t[1].only = "group,inner,hier-rs";
    int rc = dt_opts_parse(argc, argv, t, 2, "dtcoll-bench", rank_ != 0);
    if (rc == 1 && rank_ == 0) dt_opts_usage(stdout, &t[0]), dt_opts_usage(stdout, &t[1]);
    if (rc) {
        MPI_Finalize();
        return rc == 1 ? 0 : rc;
    }
    if (a.min_b < sizeof(float)) a.min_b = sizeof(float);
    if (a.max_b < a.min_b) usage_exit("--max-bytes is smaller than --min-bytes%s", "");
    dt_device *dev = a.host_add ? NULL : dt_device_cpu_create(1);  // 1 thread: ranks share cores
    cfg_t cf[MAX_CFG];
    int n_cf = make_configs(&a, dev, cf);
    size_t max_count = a.max_b / sizeof(float);
    float *buf = gradient_buffer(max_count), *pristine = gradient_buffer(max_count);
    if (!buf || !pristine) usage_exit("--max-bytes: cannot allocate %s twice", "the buffer");
    out_t out;
    memset(&out, 0, sizeof out);
    if (rank_ == 0) print_header(&a, cf, n_cf, &out);
    int fails = 0, sizes = 0;
    for (size_t b = a.min_b;; b *= a.factor) {
        fails += one_size(&a, cf, n_cf, b / sizeof(float), buf, pristine, &out);
        sizes++;
        if (b > a.max_b / a.factor) break;  // the next size would pass --max-bytes
    }
    if (rank_ == 0) {
        for (int k = 1; k < n_cf && out.n_big; k++)
            printf("# %-8s sizes >= 1 MiB: ratio to MPI geometric mean %.2f, lowest %.2f\n",
                   cf[k].name, exp(out.log_ratio[k] / out.n_big), out.min_ratio[k]);
        printf("# correctness: %s (%d sizes x %d configurations incl. MPI: float64 sums within "
               "tolerance, ours bit-identical on every rank)\n", fails ? "FAILED" : "OK", sizes,
               n_cf);
        if (out.csv) {
            fflush(out.csv);
            fsync(fileno(out.csv));
            fclose(out.csv);
            if (rename(out.tmp, a.csv)) fprintf(stderr, "dtcoll-bench: cannot write %s\n", a.csv);
        }
    }
    for (int k = 1; k < n_cf; k++) {
        if (cf[k].c) dt_coll_free(cf[k].c);
        free(cf[k].floor_tmp);
        if (cf[k].slot) {
            MPI_Win_unlock_all(cf[k].win);
            MPI_Win_free(&cf[k].win);
            free(cf[k].slot);
        }
    }
    free(buf), free(pristine);
    if (dev) dev->destroy(dev);
    MPI_Finalize();
    return fails ? DT_EXIT_RUNTIME : 0;
}
