// test_sim_device_model.c — the model device of sim/device_model.h against closed forms
// recomputed here in float64 from the profile's datasheet fields (tests/unit/sim_model_ref.h;
// its gemms and calibration factors: test_sim_model_gemm.c):
//  - a BN training forward (3 passes, 7n FLOPs) and an add (3 passes, bandwidth-bound) each
//    take max(flops/(peak*eff), bytes/(bw*eff_mem)) + launch, on random shapes, GPUs,
//    precisions;
//  - fp16 halves the activation bytes of add and BN but not the fp32 optimizer update;
//  - nothing reaches cfg.advance until the host waits: sync, softmax_xent_forward, sumsq,
//    sumsq_many (k kernels, one wait), nonfinite and to_host hand over exactly the pending
//    time (once), and return ln K, n, 0 and zeros; every primitive of struct dt_device is
//    installed and charges a kernel;
//  - alloc hands out 256-byte-aligned consecutive pieces of untouched address space (64 GiB
//    leave the resident set where it was), a caller's arena that runs out ends the process
//    with a message naming the arena, and bad configurations and unknown GPUs give NULL;
//  - a reused arena (the rank program's) starts again at its base when the next piece does
//    not fit, while arena_used counts every byte the modelled GPU holds;
//  - a network followed layer by layer puts every second of its step under some kind, the
//    kinds of its layer types and "rest" only.
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
#include "sim_model_ref.h"
#include "testutil.h"

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
        cmocka_unit_test(test_bn_forward_and_add_follow_bandwidth_roofline),
        cmocka_unit_test(test_fp16_halves_activation_bytes_not_optimizer_bytes),
        cmocka_unit_test(test_advance_gets_exactly_pending_time_when_host_waits),
        cmocka_unit_test(test_every_primitive_is_installed_and_charges_a_kernel),
        cmocka_unit_test(test_alloc_of_64_gib_leaves_resident_memory_unchanged),
        cmocka_unit_test(test_arena_exhaustion_exits_with_message),
        cmocka_unit_test(test_reused_arena_starts_again_at_its_base),
        cmocka_unit_test(test_followed_network_puts_every_second_under_a_kind),
        cmocka_unit_test(test_unknown_gpu_and_bad_configs_give_null),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
