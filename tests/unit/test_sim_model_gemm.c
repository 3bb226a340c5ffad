// test_sim_model_gemm.c — the model device's gemms and its calibration factors against
// closed forms recomputed here (tests/unit/sim_model_ref.h):
//  - a gemm, a batched gemm (the weights shared: one gemm B times wider; B shared: B times
//    taller; nothing shared: B gemms side by side) and a gemm summed over a batch (a B x
//    K-long reduction) each take max(flops/(peak*eff*w), bytes/(bw*eff_mem)) + launch on
//    random shapes, GPUs and precisions, w the share of the SMs their 128 x 128 tiles keep
//    busy, counted by dealing the tiles to the SMs (split-K under one wave);
//  - time_scale (the calibration) multiplies every kernel's work, not its launch or the host
//    transfers' (both counted as the host's), except through the unscaled handle, which
//    shares the statistics and arena;
//  - a profile's per-kind factors multiply the kernels (launch included) and transfers of the
//    current kind and count them under it.
// Tolerance: 1e-12 relative (the same float64 formula, summed in another order).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_model_ref.h"

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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_time_matches_roofline_closed_form),
        cmocka_unit_test(test_time_scale_multiplies_every_kernel),
        cmocka_unit_test(test_kind_factors_scale_and_count_the_current_kind),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
