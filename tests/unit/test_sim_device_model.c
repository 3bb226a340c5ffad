// test_sim_device_model.c — the model device of sim/device_model.h against closed forms
// recomputed here in float64 from the profile's datasheet fields (not through dt_gpu_peak):
//  - a gemm, a batched gemm (shared weights read once), a BN training forward (3 passes,
//    7n FLOPs) and an add (3 passes, bandwidth-bound) each take
//    max(flops/(peak*eff), bytes/(bw*eff_mem)) + launch, on random shapes, GPUs, precisions;
//  - fp16 halves the activation bytes of add and BN but not the fp32 optimizer update;
//  - nothing reaches cfg.advance until the host waits: sync, softmax_xent_forward, sumsq,
//    sumsq_many (k kernels, one wait), nonfinite and to_host hand over exactly the pending time (once), and return ln K, n, 0
//    and zeros; every primitive of struct dt_device is installed and charges a kernel;
//  - alloc hands out 256-byte-aligned consecutive pieces of untouched address space (64 GiB
//    leave the resident set where it was), a caller's arena that runs out ends the process
//    with a message naming the arena, and bad configurations and unknown GPUs give NULL;
//  - a reused arena (the rank program's) starts again at its base when the next piece does
//    not fit, while arena_used counts every byte the modelled GPU holds;
//  - time_scale (the calibration) multiplies every kernel's closed-form time (not the host
//    transfers'), except through the unscaled handle, which shares the statistics and arena;
//  - a profile's per-kind factors multiply the kernels and transfers of the current kind and
//    count them under it; a network followed layer by layer puts every second of its step
//    under some kind, the kinds of its layer types and "rest" only.
// Tolerance: 1e-12 relative (the same float64 formula, summed in another order).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "device_model.h"
#include "gpu.h"
#include "net.h"
#include "testutil.h"

#define TOL 1e-12

static const char *gpus[] = {"p100", "p40", "v100", "a100", "h100"};

typedef struct {
    tu_rng rng;
} fixture;

static int setup(void **state) {
    fixture *f = calloc(1, sizeof *f);
    f->rng = tu_rng_new(tu_seed());
    *state = f;
    return 0;
}

static int teardown(void **state) {
    free(*state);
    return 0;
}

// The waves a gemm of `tiles` 128 x 128 output tiles runs in, each a k_total-long reduction:
// tiles dealt to the SMs one at a time, the busiest SM's count; under one wave the reduction
// is cut in pieces of at least 512 while the pieces fit on the SMs (split-K). The fraction
// of the waves' SM time that holds work.
static double ref_wave_eff(const dt_gpu_profile *g, double tiles, double k_total) {
    int split = 1;
    while (tiles < g->sms && tiles * (split + 1) <= g->sms && k_total / (split + 1) >= 512)
        split++;
    long n = (long)tiles * split, busiest = 0;
    long *per_sm = calloc((size_t)g->sms, sizeof *per_sm);
    for (long t = 0; t < n; t++)
        if (++per_sm[t % g->sms] > busiest) busiest = per_sm[t % g->sms];
    free(per_sm);
    return (double)n / ((double)busiest * g->sms);
}

static double tiles_of(double m, double n) { return ceil(m / 128) * ceil(n / 128); }

// The time a kernel's work must take, from the datasheet fields: gemm math on the
// precision's units (tensor cores where the GPU has them) at the fraction of its SMs its
// tiles keep busy (`tiles` <= 0: not a gemm), every other kernel on fp32 CUDA cores.
static double ref_work(const dt_gpu_profile *g, dt_precision p, double tiles, double k_total,
                       double flops, double bytes) {
    int gemm = tiles > 0;
    double peak = g->peak_fp32, eff = g->eff_gemm;
    if (gemm && p == DT_PREC_TF32 && g->peak_tf32 > 0) peak = g->peak_tf32, eff = g->eff_gemm_tf32;
    if (gemm && p == DT_PREC_FP16) peak = g->peak_fp16, eff = g->eff_gemm_fp16;
    if (gemm) eff *= ref_wave_eff(g, tiles, k_total);
    double tm = flops / (peak * eff), tb = bytes / (g->mem_bw * g->eff_mem);
    return tm > tb ? tm : tb;
}

// ... and the kernel's time: its work and the host's launch
static double ref_time(const dt_gpu_profile *g, dt_precision p, double tiles, double k_total,
                       double flops, double bytes) {
    return ref_work(g, p, tiles, k_total, flops, bytes) + g->launch_s;
}

static void assert_rel(const char *what, double got, double want) {
    double err = fabs(got - want) / fabs(want);
    if (err > TOL) fail_msg("%s: got %.17g, expected %.17g (rel. error %.3g)", what, got, want, err);
}

typedef struct {
    int calls;
    double seconds;  // the sum of what advance was given
    double last;
} advance_log;

static void log_advance(void *ctx, double s) {
    advance_log *a = ctx;
    a->calls++;
    a->seconds += s;
    a->last = s;
}

static dt_device *make(const char *gpu, dt_precision p, advance_log *lg) {
    dt_modeldev_config c = {.gpu = dt_gpu_find(gpu), .precision = p};
    if (lg) c.advance = log_advance, c.advance_ctx = lg;
    dt_error err = {0};
    dt_device *d = dt_device_model_create(&c, &err);
    if (!d) fail_msg("dt_device_model_create(%s): %s", gpu, err.msg);
    return d;
}

static double elapsed(const dt_device *d) { return dt_device_model_stats(d).seconds; }

static void test_gemm_time_matches_roofline_closed_form(void **state) {
    fixture *f = *state;
    for (int it = 0; it < 40; it++) {
        const dt_gpu_profile *g = dt_gpu_find(gpus[tu_int(&f->rng, 0, 4)]);
        dt_precision p = (dt_precision)tu_int(&f->rng, 0, 2);
        double e = p == DT_PREC_FP16 ? 2.0 : 4.0;
        // from tiny (launch- or memory-bound) to large (compute-bound)
        int M = tu_int(&f->rng, 1, it % 2 ? 8 : 4096), N = tu_int(&f->rng, 1, 4096);
        int K = tu_int(&f->rng, 1, it % 3 ? 4608 : 16), B = tu_int(&f->rng, 1, 64);
        dt_device *d = make(g->name, p, NULL);
        float *x = d->alloc(d, 256);
        double m = M, n = N, k = K, b = B;

        double t0 = elapsed(d);
        d->gemm(d, 0, 1, M, N, K, 1.0f, x, K, x, K, 0.0f, x, N);
        assert_rel("gemm", elapsed(d) - t0,
                   ref_time(g, p, tiles_of(m, n), k, 2 * m * n * k,
                            e * (m * k + k * n + m * n)));

        // weights shared (stride 0): read once; B_i and C_i per item; one gemm B times wider
        t0 = elapsed(d);
        d->gemm_batched(d, 0, 0, M, N, K, 1.0f, x, K, 0, x, N, (size_t)K * N, 1.0f, x, N,
                        (size_t)M * N, B);
        assert_rel("gemm_batched", elapsed(d) - t0,
                   ref_time(g, p, tiles_of(m, b * n), k, 2 * m * n * k * b,
                            e * (m * k + b * k * n + b * m * n)));

        t0 = elapsed(d);  // B shared: one gemm B times taller
        d->gemm_batched(d, 0, 0, M, N, K, 1.0f, x, K, (size_t)M * K, x, N, 0, 1.0f, x, N,
                        (size_t)M * N, B);
        assert_rel("gemm_batched, B shared", elapsed(d) - t0,
                   ref_time(g, p, tiles_of(b * m, n), k, 2 * m * n * k * b,
                            e * (b * m * k + k * n + b * m * n)));

        t0 = elapsed(d);  // nothing shared (attention's): B gemms side by side
        d->gemm_batched(d, 0, 0, M, N, K, 1.0f, x, K, (size_t)M * K, x, N, (size_t)K * N, 1.0f,
                        x, N, (size_t)M * N, B);
        assert_rel("gemm_batched, none shared", elapsed(d) - t0,
                   ref_time(g, p, b * tiles_of(m, n), k, 2 * m * n * k * b,
                            e * (b * m * k + b * k * n + b * m * n)));

        t0 = elapsed(d);  // the sum over the batch: one C, a B x K-long reduction
        d->gemm_batched_sum(d, 0, 1, M, N, K, 1.0f, x, K, (size_t)M * K, x, K, (size_t)N * K,
                            1.0f, x, N, B);
        assert_rel("gemm_batched_sum", elapsed(d) - t0,
                   ref_time(g, p, tiles_of(m, n), b * k, 2 * m * n * k * b,
                            e * (b * m * k + b * k * n + m * n)));
        d->destroy(d);
    }
}

static void test_bn_forward_and_add_follow_bandwidth_roofline(void **state) {
    fixture *f = *state;
    for (int it = 0; it < 40; it++) {
        const dt_gpu_profile *g = dt_gpu_find(gpus[tu_int(&f->rng, 0, 4)]);
        dt_precision p = (dt_precision)tu_int(&f->rng, 0, 2);
        double e = p == DT_PREC_FP16 ? 2.0 : 4.0;
        int B = tu_int(&f->rng, 1, 256), C = tu_int(&f->rng, 1, 2048);
        int HW = tu_int(&f->rng, 1, 3136);
        double n = (double)B * C * HW;
        dt_device *d = make(g->name, p, NULL);
        float *x = d->alloc(d, 256);

        double t0 = elapsed(d);
        d->bn_forward_train(d, x, B, C, HW, x, x, 1e-5f, 0.1f, x, x, x, x, x);
        assert_rel("bn_forward_train", elapsed(d) - t0, ref_time(g, p, 0, 0, 7 * n, e * 3 * n));

        t0 = elapsed(d);
        d->add(d, x, x, (size_t)n);
        double want = ref_time(g, p, 0, 0, n, e * 3 * n);
        assert_rel("add", elapsed(d) - t0, want);
        // elementwise: the bytes decide, never the FLOPs
        assert_true(want - g->launch_s >= n / (g->peak_fp32 * g->eff_gemm));
        d->destroy(d);
    }
}

static void test_fp16_halves_activation_bytes_not_optimizer_bytes(void **state) {
    fixture *f = *state;
    const char *gpu = gpus[tu_int(&f->rng, 0, 4)];
    size_t n = (size_t)tu_int(&f->rng, 1000, 1 << 24);
    double bytes[2][3];
    for (int h = 0; h < 2; h++) {
        dt_device *d = make(gpu, h ? DT_PREC_FP16 : DT_PREC_FP32, NULL);
        float *x = d->alloc(d, 256);
        d->add(d, x, x, n);
        bytes[h][0] = dt_device_model_stats(d).bytes;
        dt_device_model_reset_stats(d);
        d->bn_forward_train(d, x, 2, 3, (int)(n / 6) + 1, x, x, 1e-5f, 0.1f, x, x, x, x, x);
        bytes[h][1] = dt_device_model_stats(d).bytes;
        dt_device_model_reset_stats(d);
        d->sgd_update(d, x, x, x, n, 0.1f, 0.9f, 1e-4f, 0);
        bytes[h][2] = dt_device_model_stats(d).bytes;
        d->destroy(d);
    }
    assert_rel("add bytes fp16/fp32", bytes[1][0] / bytes[0][0], 0.5);
    assert_rel("bn bytes fp16/fp32", bytes[1][1] / bytes[0][1], 0.5);
    assert_rel("sgd bytes fp16/fp32 (fp32 master weights)", bytes[1][2] / bytes[0][2], 1.0);
    assert_rel("sgd bytes (w, v rmw; g read; 4 bytes)", bytes[0][2], 20.0 * (double)n);
}

// A few kernels; advance must not be called; then the waiting primitive.
static double queue_work(dt_device *d, float *x, advance_log *lg, tu_rng *r) {
    double t0 = elapsed(d);
    int calls = lg->calls;
    d->add(d, x, x, (size_t)tu_int(r, 1, 1 << 20));
    d->gemm(d, 0, 0, tu_int(r, 1, 512), tu_int(r, 1, 512), tu_int(r, 1, 512), 1.0f, x, 1, x,
            1, 0.0f, x, 1);
    d->relu_forward(d, x, x, (size_t)tu_int(r, 1, 1 << 20));
    d->copy(d, x + 64, x, 1024);
    assert_int_equal(lg->calls, calls);
    return elapsed(d) - t0;
}

static void test_advance_gets_exactly_pending_time_when_host_waits(void **state) {
    fixture *f = *state;
    advance_log lg = {0};
    const char *gpu = gpus[tu_int(&f->rng, 0, 4)];
    dt_device *d = make(gpu, (dt_precision)tu_int(&f->rng, 0, 2), &lg);
    float *x = d->alloc(d, 1 << 20);

    double q = queue_work(d, x, &lg, &f->rng);
    d->sync(d);
    assert_int_equal(lg.calls, 1);
    assert_rel("sync", lg.last, q);
    d->sync(d);  // nothing pending: nothing to hand over
    assert_int_equal(lg.calls, 1);

    int K = tu_int(&f->rng, 2, 1000), B = tu_int(&f->rng, 1, 64);
    double t0 = elapsed(d);
    q = queue_work(d, x, &lg, &f->rng);
    float loss = d->softmax_xent_forward(d, x, (const int32_t *)x, B, K, x);
    assert_int_equal(lg.calls, 2);
    assert_rel("softmax_xent_forward", lg.last, elapsed(d) - t0);
    assert_true(lg.last > q);  // its own kernel included
    assert_true(fabs(loss - log((double)K)) < 1e-6 * log((double)K));  // a float

    size_t n = (size_t)tu_int(&f->rng, 1, 1 << 22);
    t0 = elapsed(d);
    queue_work(d, x, &lg, &f->rng);
    double s = d->sumsq(d, x, n);
    assert_int_equal(lg.calls, 3);
    assert_rel("sumsq", lg.last, elapsed(d) - t0);
    assert_true(s == (double)n);

    t0 = elapsed(d);
    queue_work(d, x, &lg, &f->rng);
    size_t bad = d->nonfinite(d, x, n);
    assert_int_equal(lg.calls, 4);
    assert_rel("nonfinite", lg.last, elapsed(d) - t0);
    assert_int_equal(bad, 0);

    // sumsq_many: one wait for k sumsq kernels (2n FLOPs, 4n bytes each; none for n = 0)
    enum { KN = 4 };
    const float *xs[KN] = {x, x, x, x};
    size_t ns[KN] = {(size_t)tu_int(&f->rng, 1, 1 << 22), 0, (size_t)tu_int(&f->rng, 1, 1000), 1};
    double sums[KN], want = 0;
    for (int i = 0; i < KN; i++)
        if (ns[i]) want += ref_time(dt_gpu_find(gpu), DT_PREC_FP32, 0, 0, 2.0 * ns[i], 4.0 * ns[i]);
    t0 = elapsed(d);
    q = queue_work(d, x, &lg, &f->rng);
    d->sumsq_many(d, KN, xs, ns, sums);
    assert_int_equal(lg.calls, 5);
    assert_rel("sumsq_many", lg.last, elapsed(d) - t0);
    assert_rel("sumsq_many: k kernels", lg.last - q, want);
    for (int i = 0; i < KN; i++) assert_true(sums[i] == (double)ns[i]);

    size_t hb = (size_t)tu_int(&f->rng, 1, 4096);
    unsigned char *host = malloc(hb);
    memset(host, 0xAB, hb);
    t0 = elapsed(d);
    queue_work(d, x, &lg, &f->rng);
    d->to_host(d, host, x, hb);
    assert_int_equal(lg.calls, 6);
    assert_rel("to_host", lg.last, elapsed(d) - t0);
    for (size_t i = 0; i < hb; i++) assert_int_equal(host[i], 0);
    free(host);

    assert_rel("everything charged was handed over", lg.seconds, elapsed(d));
    d->destroy(d);
}

static void test_every_primitive_is_installed_and_charges_a_kernel(void **state) {
    (void)state;
    dt_device *d = make("v100", DT_PREC_FP32, NULL);
    assert_string_equal(d->name, "model");
    float *x = d->alloc(d, 1 << 16);
    int32_t *ix = (int32_t *)x;
    uint16_t *hx = (uint16_t *)x;
    long k = 0;
#define CHARGED(call)                                                          \
    do {                                                                       \
        double t0 = elapsed(d);                                                \
        call;                                                                  \
        if (!(elapsed(d) > t0) || dt_device_model_stats(d).kernels != ++k)     \
            fail_msg("%s charged no kernel", #call);                           \
    } while (0)
    CHARGED(d->from_host(d, x, x, 64));
    CHARGED(d->copy(d, x + 16, x, 64));
    CHARGED(d->gemm(d, 0, 0, 4, 4, 4, 1, x, 4, x, 4, 0, x, 4));
    CHARGED(d->gemm_batched(d, 0, 0, 4, 4, 4, 1, x, 4, 0, x, 4, 16, 0, x, 4, 16, 2));
    CHARGED(d->gemm_batched_sum(d, 0, 1, 4, 4, 4, 1, x, 4, 16, x, 4, 16, 0, x, 4, 2));
    CHARGED(d->im2col(d, x, 1, 2, 5, 5, 3, 3, 1, 1, x));
    CHARGED(d->col2im(d, x, 1, 2, 5, 5, 3, 3, 1, 1, x));
    CHARGED(d->col2im_set(d, x, 1, 2, 5, 5, 3, 3, 1, 1, x));
    CHARGED(d->bias_add(d, x, x, 2, 3, 4));
    CHARGED(d->bias_backward(d, x, 2, 3, 4, x));
    CHARGED(d->bn_forward_train(d, x, 2, 3, 4, x, x, 1e-5f, 0.1f, x, x, x, x, x));
    CHARGED(d->bn_forward_eval(d, x, 2, 3, 4, x, x, 1e-5f, x, x, x));
    CHARGED(d->bn_backward(d, x, x, 2, 3, 4, x, x, x, x, x, x));
    CHARGED(d->bn_backward_set(d, x, x, 2, 3, 4, x, x, x, x, x, x));
    CHARGED(d->relu_forward(d, x, x, 100));
    CHARGED(d->relu_backward(d, x, x, x, 100));
    CHARGED(d->relu_backward_inplace(d, x, x, 100));
    CHARGED(d->maxpool_forward(d, x, 2, 3, 8, 8, 3, 2, 1, x, ix));
    CHARGED(d->maxpool_backward(d, x, ix, 2, 3, 8, 8, 4, 4, x));
    CHARGED(d->avgpool_forward(d, x, 2, 3, 7, 7, 1, 1, x));
    CHARGED(d->avgpool_backward(d, x, 2, 3, 7, 7, 1, 1, x));
    CHARGED(d->dropout_forward(d, x, x, x, 100, 0.5f, 7));
    CHARGED(d->dropout_backward(d, x, x, x, 100));
    CHARGED(d->softmax_xent_forward(d, x, ix, 4, 10, x));
    CHARGED(d->softmax_xent_backward(d, x, ix, 4, 10, 0.25f, x));
    CHARGED(d->fill(d, x, 0.0f, 100));
    CHARGED(d->scale(d, x, 2.0f, 100));
    CHARGED(d->axpy(d, 2.0f, x, x, 100));
    CHARGED(d->add(d, x, x, 100));
    CHARGED(d->sumsq(d, x, 100));
    {
        const float *xs[1] = {x};
        size_t ns[1] = {100};
        double s1;
        CHARGED(d->sumsq_many(d, 1, xs, ns, &s1));
    }
    CHARGED(d->nonfinite(d, x, 100));
    CHARGED(d->sgd_update(d, x, x, x, 100, 0.1f, 0.9f, 1e-4f, 1));
    CHARGED(d->lars_update(d, x, x, x, 100, 0.1f, 0.9f, 1e-4f));
    CHARGED(d->f32_to_f16(d, x, hx, 100));
    CHARGED(d->f16_to_f32(d, hx, x, 100));
    CHARGED(d->add_f16(d, x, hx, 100));
    float host[4];
    CHARGED(d->to_host(d, host, x, sizeof host));
#undef CHARGED
    d->free(d, x);
    d->sync(d);
    d->destroy(d);
}

// Resident set size in bytes (/proc/self/statm: pages, second field).
static double rss_bytes(void) {
    FILE *fp = fopen("/proc/self/statm", "r");
    long size = 0, resident = 0;
    if (!fp || fscanf(fp, "%ld %ld", &size, &resident) != 2) fail_msg("cannot read statm");
    fclose(fp);
    return (double)resident * (double)sysconf(_SC_PAGESIZE);
}

// what alloc hands out for a request: a multiple of 256 bytes, at least 256
static size_t rounded(size_t b) { return b ? (b + 255) / 256 * 256 : 256; }

static void test_alloc_of_64_gib_leaves_resident_memory_unchanged(void **state) {
    fixture *f = *state;
    dt_device *d = make("a100", DT_PREC_FP32, NULL);
    double before = rss_bytes();
    size_t total = 0;
    char *prev = NULL;
    size_t prev_bytes = 0;
    while (total < ((size_t)64 << 30)) {
        size_t bytes = (size_t)tu_int(&f->rng, 0, 1 << 30);
        char *p = d->alloc(d, bytes);
        assert_int_equal((uintptr_t)p % 256, 0);
        if (prev) assert_ptr_equal(p, prev + rounded(prev_bytes));  // consecutive
        prev = p, prev_bytes = bytes;
        total += rounded(bytes);
    }
    assert_int_equal(dt_device_model_stats(d).arena_used, total);
    double grown = rss_bytes() - before;
    printf("# %.1f GiB allocated, resident set grew by %.0f KiB\n", total / 1073741824.0,
           grown / 1024);
    assert_true(grown < 4.0 * 1024 * 1024);
    d->destroy(d);
}

// A caller's arena (the rank program's folded region) that runs out: exit 1 with a message.
static void test_arena_exhaustion_exits_with_message(void **state) {
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        static char arena[8192];
        dt_modeldev_config c = {.gpu = dt_gpu_find("v100"), .arena = arena,
                                .arena_bytes = sizeof arena};
        dt_device *d = dt_device_model_create(&c, NULL);
        if (!d) _exit(3);
        d->alloc(d, 4096);  // fits
        d->alloc(d, 8192);  // cannot
        _exit(0);
    }
    close(fds[1]);
    char msg[1024] = {0};
    size_t got = 0;
    ssize_t r;
    while (got < sizeof msg - 1 && (r = read(fds[0], msg + got, sizeof msg - 1 - got)) > 0)
        got += (size_t)r;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
    if (!strstr(msg, "arena exhausted") || !strstr(msg, "8192"))
        fail_msg("unexpected message: %s", msg);
}

// reuse_arena: pieces stay inside the caller's arena, a piece that does not fit in what is
// left starts at the base again, and the statistics count the modelled memory, not the arena.
static void test_reused_arena_starts_again_at_its_base(void **state) {
    fixture *f = *state;
    size_t bytes = (size_t)tu_int(&f->rng, 1 << 16, 1 << 20);
    char *arena = malloc(bytes);
    dt_modeldev_config c = {.gpu = dt_gpu_find("v100"), .arena = arena, .arena_bytes = bytes,
                            .reuse_arena = 1};
    dt_device *d = dt_device_model_create(&c, NULL);
    assert_non_null(d);
    char *base = (char *)(((uintptr_t)arena + 255) / 256 * 256);
    size_t cap = (bytes - (size_t)(base - arena)) / 256 * 256, used = 0, total = 0, largest = 0;
    int wraps = 0;
    for (int i = 0; i < 200; i++) {
        size_t n = (size_t)tu_int(&f->rng, 1, (int)(cap / 3));
        char *p = d->alloc(d, n);
        size_t r = rounded(n);
        if (r > cap - used) used = 0, wraps++;  // the expected piece: at the base again
        assert_ptr_equal(p, base + used);
        assert_true(p + r <= base + cap);
        used += r, total += r;
        if (r > largest) largest = r;
    }
    assert_true(wraps > 0);
    dt_model_stats st = dt_device_model_stats(d);
    assert_int_equal(st.arena_used, total);
    assert_int_equal(st.max_alloc, largest);
    d->destroy(d);
    free(arena);
}

// The calibration factor s: a gemm's work takes s x its closed form and its launch just the
// launch, a host transfer (PCIe) just its closed form, both counted in host_s; a negative or
// non-finite s is refused.
static void test_time_scale_multiplies_every_kernel(void **state) {
    fixture *f = *state;
    const dt_gpu_profile *g = dt_gpu_find(gpus[tu_int(&f->rng, 0, 4)]);
    double s = exp(tu_uniform(&f->rng, log(0.1), log(10.0)));
    dt_modeldev_config c = {.gpu = g, .precision = DT_PREC_FP32, .time_scale = s};
    dt_device *d = dt_device_model_create(&c, NULL);
    assert_non_null(d);
    int M = tu_int(&f->rng, 1, 2000), N = tu_int(&f->rng, 1, 2000), K = tu_int(&f->rng, 1, 2000);
    d->gemm(d, 0, 0, M, N, K, 1.0f, NULL, K, NULL, N, 0.0f, NULL, N);
    double flops = 2.0 * M * N * K, bytes = 4.0 * ((double)M * K + (double)K * N + (double)M * N);
    double work = ref_work(g, DT_PREC_FP32, tiles_of(M, N), K, flops, bytes);
    double want = work + g->launch_s;
    // the GPU's work scales; the host's launch does not, and counts as the host's
    assert_rel("scaled gemm", dt_device_model_stats(d).seconds, s * work + g->launch_s);
    assert_rel("its launch", dt_device_model_stats(d).host_s, g->launch_s);
    dt_device_model_reset_stats(d);
    size_t n = (size_t)tu_int(&f->rng, 1, 1 << 20);
    float *host = malloc(n * sizeof(float));
    d->to_host(d, host, NULL, n * sizeof(float));
    double pcie = (double)n * sizeof(float) / g->host_bw + g->launch_s;  // never scaled
    assert_rel("transfer", dt_device_model_stats(d).seconds, pcie);
    assert_rel("transfer's share", dt_device_model_stats(d).host_s, pcie);
    free(host);
    // the unscaled handle (the allreduce's kernels): the closed form itself, into the same
    // statistics and the same arena
    dt_device *u = dt_device_model_unscaled(d);
    dt_device_model_reset_stats(d);
    u->gemm(u, 0, 0, M, N, K, 1.0f, NULL, K, NULL, N, 0.0f, NULL, N);
    assert_rel("unscaled gemm", dt_device_model_stats(d).seconds, want);
    d->gemm(d, 0, 0, M, N, K, 1.0f, NULL, K, NULL, N, 0.0f, NULL, N);
    assert_rel("both", dt_device_model_stats(u).seconds, want + s * work + g->launch_s);
    char *p1 = d->alloc(d, 1000), *p2 = u->alloc(u, 1000);
    assert_ptr_equal(p2, p1 + 1024);
    u->destroy(u);
    d->destroy(d);
    double bad[] = {-s, NAN, INFINITY};
    for (int i = 0; i < 3; i++) {
        dt_error err = {0};
        dt_modeldev_config b = {.gpu = g, .time_scale = bad[i]};
        assert_null(dt_device_model_create(&b, &err));
        assert_int_equal(err.code, DT_EXIT_USAGE);
        assert_non_null(strstr(err.msg, "time_scale"));
    }
}

// Per-kind factors (a profile, which measured kernels launch and all): a gemm of kind k takes
// factor[k] x its closed form, launch included, a transfer too, both
// counted under k; the unscaled handle's gemm keeps its time and no kind.
static void test_kind_factors_scale_and_count_the_current_kind(void **state) {
    fixture *f = *state;
    const dt_gpu_profile *g = dt_gpu_find(gpus[tu_int(&f->rng, 0, 4)]);
    dt_modeldev_config c = {.gpu = g, .precision = DT_PREC_FP32, .time_scale = 3.0};
    dt_device *d = dt_device_model_create(&c, NULL);
    dt_device *u = dt_device_model_unscaled(d);
    double fac[DT_MODEL_MAX_KINDS];
    for (int k = 0; k < DT_MODEL_MAX_KINDS; k++) fac[k] = exp(tu_uniform(&f->rng, -3, 3));
    dt_device_model_set_kind_scales(d, fac, DT_MODEL_MAX_KINDS);
    int k1 = tu_int(&f->rng, 0, DT_MODEL_MAX_KINDS - 1), k2 = (k1 + 1) % DT_MODEL_MAX_KINDS;
    int M = tu_int(&f->rng, 1, 1000), N = tu_int(&f->rng, 1, 1000), K = tu_int(&f->rng, 1, 1000);
    double want = ref_time(g, DT_PREC_FP32, tiles_of(M, N), K, 2.0 * M * N * K,
                           4.0 * ((double)M * K + (double)K * N + (double)M * N));
    dt_device_model_set_kind(d, k1);
    d->gemm(d, 0, 0, M, N, K, 1.0f, NULL, K, NULL, N, 0.0f, NULL, N);
    u->gemm(u, 0, 0, M, N, K, 1.0f, NULL, K, NULL, N, 0.0f, NULL, N);
    dt_device_model_set_kind(d, k2);
    size_t n = (size_t)tu_int(&f->rng, 1, 1 << 16);
    float *host = calloc(n, sizeof(float));
    d->from_host(d, NULL, host, n * sizeof(float));
    free(host);
    double pcie = (double)n * sizeof(float) / g->host_bw + g->launch_s;
    dt_model_stats st = dt_device_model_stats(d);
    assert_rel("kind k1", st.kind_seconds[k1], fac[k1] * want);
    assert_rel("kind k2", st.kind_seconds[k2], fac[k2] * pcie);
    assert_rel("all", st.seconds, fac[k1] * want + want + fac[k2] * pcie);
    u->destroy(u);
    d->destroy(d);
}

// resnet8 followed layer by layer: forward, loss, backward; every second is some kind's,
// each of its layer types has time in both phases, the others (maxpool, dropout) none.
static void test_followed_network_puts_every_second_under_a_kind(void **state) {
    (void)state;
    dt_device *d = make("v100", DT_PREC_FP32, NULL);
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = 8, cfg.in_h = cfg.in_w = 32, cfg.num_classes = 10;
    dt_error err = {0};
    dt_net *net = dt_model_create("resnet8", d, &cfg, &err);
    if (!net) fail_msg("resnet8: %s", err.msg);
    dt_device_model_follow_layers(d, net);
    dt_device_model_reset_stats(d);
    dt_net_forward(net, 1);
    dt_net_loss(net);
    dt_net_backward(net, 1.0f, NULL, NULL);
    d->sync(d);
    dt_model_stats st = dt_device_model_stats(d);
    double sum = 0;
    for (int k = 0; k < DT_MODEL_MAX_KINDS; k++) sum += st.kind_seconds[k];
    assert_rel("kinds' sum", sum, st.seconds);
    assert_true(st.kind_seconds[DT_KIND_REST] > 0);  // the loss
    int present[DT_N_LAYER_TYPES] = {0};
    for (int i = 0; i < net->n_layers; i++) present[net->layers[i]->type] = 1;
    for (int t = 0; t < DT_N_LAYER_TYPES; t++)
        for (int ph = 0; ph < 2; ph++) {
            double s = st.kind_seconds[2 * t + ph];
            if (present[t] ? !(s > 0) : s != 0)
                fail_msg("%s %s: %g s", dt_layer_type_name(t), ph ? "backward" : "forward", s);
        }
    assert_false(present[DT_LAYER_MAXPOOL]);
    dt_net_free(net);
    d->destroy(d);
}

static void test_unknown_gpu_and_bad_configs_give_null(void **state) {
    (void)state;
    assert_null(dt_gpu_find("k80"));
    assert_null(dt_gpu_find(NULL));
    assert_non_null(dt_gpu_find("V100"));  // case-insensitive
    for (int i = 0; i < 5; i++) {
        const dt_gpu_profile *g = dt_gpu_find(gpus[i]);
        assert_non_null(g);
        assert_string_equal(g->name, gpus[i]);
        assert_non_null(strstr(dt_gpu_names(), gpus[i]));
    }
    dt_error err = {0};
    dt_modeldev_config c = {.gpu = dt_gpu_find("k80")};
    assert_null(dt_device_model_create(&c, &err));
    assert_int_equal(err.code, DT_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "v100"));  // the message lists the valid ones
    char small[300];
    dt_error err2 = {0};
    dt_modeldev_config c2 = {.gpu = dt_gpu_find("p40"), .arena = small, .arena_bytes = 10};
    assert_null(dt_device_model_create(&c2, &err2));
    assert_int_equal(err2.code, DT_EXIT_USAGE);
    dt_error err3 = {0};
    dt_modeldev_config c3 = {.gpu = dt_gpu_find("p40"), .precision = (dt_precision)7};
    assert_null(dt_device_model_create(&c3, &err3));
    assert_int_equal(err3.code, DT_EXIT_USAGE);
    assert_null(dt_device_model_create(NULL, NULL));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_time_matches_roofline_closed_form),
        cmocka_unit_test(test_bn_forward_and_add_follow_bandwidth_roofline),
        cmocka_unit_test(test_fp16_halves_activation_bytes_not_optimizer_bytes),
        cmocka_unit_test(test_advance_gets_exactly_pending_time_when_host_waits),
        cmocka_unit_test(test_every_primitive_is_installed_and_charges_a_kernel),
        cmocka_unit_test(test_alloc_of_64_gib_leaves_resident_memory_unchanged),
        cmocka_unit_test(test_arena_exhaustion_exits_with_message),
        cmocka_unit_test(test_reused_arena_starts_again_at_its_base),
        cmocka_unit_test(test_time_scale_multiplies_every_kernel),
        cmocka_unit_test(test_kind_factors_scale_and_count_the_current_kind),
        cmocka_unit_test(test_followed_network_puts_every_second_under_a_kind),
        cmocka_unit_test(test_unknown_gpu_and_bad_configs_give_null),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
