// sim_model_ref.h — what the model device's tests (test_sim_device_model.c,
// test_sim_model_gemm.c) recompute its charges from: the closed forms in float64 from a
// profile's datasheet fields (not through dt_gpu_peak), the wave quantization of a gemm by
// dealing its tiles to the SMs, and the devices and fixtures both use. Static: each test
// program includes its own copy.
#ifndef DT_TESTS_SIM_MODEL_REF_H
#define DT_TESTS_SIM_MODEL_REF_H

#include <math.h>
#include <stdlib.h>

#include "device_model.h"
#include "gpu.h"
#include "testutil.h"

#define TOL 1e-12

static const char *gpus[] = {"p100", "p40", "v100", "a100", "h100"};

typedef struct {
    tu_rng rng;
} fixture;

static inline int setup(void **state) {
    fixture *f = calloc(1, sizeof *f);
    f->rng = tu_rng_new(tu_seed());
    *state = f;
    return 0;
}

static inline int teardown(void **state) {
    free(*state);
    return 0;
}

// The waves a gemm of `tiles` 128 x 128 output tiles runs in, each a k_total-long reduction:
// tiles dealt to the SMs one at a time, the busiest SM's count; under one wave the reduction
// is cut in pieces of at least 512 while the pieces fit on the SMs (split-K). The fraction
// of the waves' SM time that holds work.
static inline double ref_wave_eff(const dt_gpu_profile *g, double tiles, double k_total) {
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

static inline double tiles_of(double m, double n) { return ceil(m / 128) * ceil(n / 128); }

// The time a kernel's work must take, from the datasheet fields: gemm math on the
// precision's units (tensor cores where the GPU has them) at the fraction of its SMs its
// tiles keep busy (`tiles` <= 0: not a gemm), every other kernel on fp32 CUDA cores.
static inline double ref_work(const dt_gpu_profile *g, dt_precision p, double tiles,
                              double k_total, double flops, double bytes) {
    int gemm = tiles > 0;
    double peak = g->peak_fp32, eff = g->eff_gemm;
    if (gemm && p == DT_PREC_TF32 && g->peak_tf32 > 0) peak = g->peak_tf32, eff = g->eff_gemm_tf32;
    if (gemm && p == DT_PREC_FP16) peak = g->peak_fp16, eff = g->eff_gemm_fp16;
    if (gemm) eff *= ref_wave_eff(g, tiles, k_total);
    double tm = flops / (peak * eff), tb = bytes / (g->mem_bw * g->eff_mem);
    return tm > tb ? tm : tb;
}

// ... and the kernel's time: its work and the host's launch
static inline double ref_time(const dt_gpu_profile *g, dt_precision p, double tiles,
                              double k_total, double flops, double bytes) {
    return ref_work(g, p, tiles, k_total, flops, bytes) + g->launch_s;
}

static inline void assert_rel(const char *what, double got, double want) {
    double err = fabs(got - want) / fabs(want);
    if (err > TOL)
        fail_msg("%s: got %.17g, expected %.17g (rel. error %.3g)", what, got, want, err);
}

typedef struct {
    int calls;
    double seconds;  // the sum of what advance was given
    double last;
} advance_log;

static inline void log_advance(void *ctx, double s) {
    advance_log *a = ctx;
    a->calls++;
    a->seconds += s;
    a->last = s;
}

static inline dt_device *make(const char *gpu, dt_precision p, advance_log *lg) {
    dt_modeldev_config c = {.gpu = dt_gpu_find(gpu), .precision = p};
    if (lg) c.advance = log_advance, c.advance_ctx = lg;
    dt_error err = {0};
    dt_device *d = dt_device_model_create(&c, &err);
    if (!d) fail_msg("dt_device_model_create(%s): %s", gpu, err.msg);
    return d;
}

static inline double elapsed(const dt_device *d) { return dt_device_model_stats(d).seconds; }

#endif
