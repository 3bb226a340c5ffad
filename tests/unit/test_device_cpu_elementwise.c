// test_device_cpu_elementwise.c — the cpu device's elementwise ops, reductions, optimizer
// updates, fp16 casts and dropout, each against an independent float64 reference written
// here (closed forms, a double-based fp16 rounding), at counts from 0 to past one thread's
// share. Memory and gemm are in test_device_cpu.c.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "testutil.h"

static uint64_t g_seed;

// ---- elementwise and reductions ----

static const size_t g_counts[] = {0, 1, 7, 40001, 100003};

static void test_fill_scale_axpy_add_match_double_formulas_any_count(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 5);
    dt_device *d = dt_device_cpu_create(2);
    for (size_t t = 0; t < sizeof g_counts / sizeof g_counts[0]; t++) {
        size_t n = g_counts[t];
        float *x = d->alloc(d, n * 4 + 4), *y = d->alloc(d, n * 4 + 4);
        double *ref = malloc((n + 1) * sizeof(double));
        tu_fill_uniform(&r, x, n + 1, -3, 3);
        tu_fill_uniform(&r, y, n + 1, -3, 3);
        float guard_x = x[n], guard_y = y[n];
        double a = tu_uniform(&r, -2, 2);
        for (size_t i = 0; i < n; i++) ref[i] = (double)y[i] + a * (double)x[i];
        d->axpy(d, (float)a, x, y, n);
        tu_assert_close("axpy", y, ref, n, 1e-6, 1.0);
        for (size_t i = 0; i < n; i++) ref[i] = (double)y[i] + (double)x[i];
        d->add(d, y, x, n);
        tu_assert_close("add", y, ref, n, 1e-6, 1.0);
        for (size_t i = 0; i < n; i++) ref[i] = (double)y[i] * a;
        d->scale(d, y, (float)a, n);
        tu_assert_close("scale", y, ref, n, 1e-6, 1.0);
        for (size_t i = 0; i < n; i++) ref[i] = -2.5;
        d->fill(d, y, -2.5f, n);
        tu_assert_close("fill", y, ref, n, 0.0, 1.0);
        assert_true(x[n] == guard_x && y[n] == guard_y);  // nothing past n
        d->free(d, x);
        d->free(d, y);
        free(ref);
    }
    d->destroy(d);
}

// ... and sumsq_many (LARS's one-wait norms) gives each tensor's sumsq bit for bit
static void test_sumsq_is_double_accurate_and_same_bits_for_any_thread_count(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 6);
    dt_device *d1 = dt_device_cpu_create(1), *d2 = dt_device_cpu_create(2);
    dt_device *d3 = dt_device_cpu_create(3);
    enum { K = 5 };
    const size_t counts[K] = {0, 1, 7, 65537, 3000001};
    const float *xs[K];
    double sums[K], many[K];
    for (size_t t = 0; t < K; t++) {
        size_t n = counts[t];
        float *x = d1->alloc(d1, n * 4);
        long double ref = 0;
        for (size_t i = 0; i < n; i++) {
            // values over 12 decades: a float accumulator would lose the small ones
            x[i] = (float)(tu_normal(&r) * pow(10.0, tu_uniform(&r, -6, 6)));
            ref += (long double)x[i] * x[i];
        }
        double s1 = d1->sumsq(d1, x, n), s2 = d2->sumsq(d2, x, n), s3 = d3->sumsq(d3, x, n);
        double rel = n ? fabs(s1 - (double)ref) / (double)ref : fabs(s1);
        if (!(rel < 1e-12)) fail_msg("sumsq n=%zu rel err %.3g vs long double", n, rel);
        assert_memory_equal(&s1, &s2, sizeof s1);
        assert_memory_equal(&s1, &s3, sizeof s1);
        xs[t] = x, sums[t] = s1;
    }
    d2->sumsq_many(d2, K, xs, counts, many);
    assert_memory_equal(sums, many, sizeof sums);
    for (size_t t = 0; t < K; t++) d1->free(d1, (void *)xs[t]);
    d1->destroy(d1);
    d2->destroy(d2);
    d3->destroy(d3);
}

static void test_nonfinite_counts_nan_and_both_infinities_only(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 7);
    dt_device *d = dt_device_cpu_create(2);
    for (size_t t = 0; t < sizeof g_counts / sizeof g_counts[0]; t++) {
        size_t n = g_counts[t], expect = 0;
        float *x = d->alloc(d, n * 4);
        for (size_t i = 0; i < n; i++) {
            int k = tu_int(&r, 0, 9);
            x[i] = k == 0 ? NAN : k == 1 ? INFINITY : k == 2 ? -INFINITY
                 : k == 3 ? 3.4e38f : k == 4 ? 1e-45f : (float)tu_normal(&r);
            expect += k <= 2;
        }
        assert_int_equal(d->nonfinite(d, x, n), expect);
        d->free(d, x);
    }
    d->destroy(d);
}

// ---- optimizer updates ----

static void test_sgd_update_matches_double_formula_plain_and_nesterov(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 8);
    dt_device *d = dt_device_cpu_create(2);
    for (int nesterov = 0; nesterov <= 1; nesterov++) {
        for (size_t t = 0; t < sizeof g_counts / sizeof g_counts[0]; t++) {
            size_t n = g_counts[t];
            float *w = d->alloc(d, n * 4), *g = d->alloc(d, n * 4), *v = d->alloc(d, n * 4);
            tu_fill_uniform(&r, w, n, -1, 1);
            tu_fill_uniform(&r, g, n, -1, 1);
            tu_fill_uniform(&r, v, n, -1, 1);
            double lr = tu_uniform(&r, 0.01, 1), m = 0.9, wd = 1e-4 * tu_uniform(&r, 0, 10);
            double *rw = malloc(n * 8 + 8), *rv = malloc(n * 8 + 8);
            for (size_t i = 0; i < n; i++) {  // torch.optim.SGD
                double gp = g[i] + wd * w[i];
                rv[i] = m * v[i] + gp;
                rw[i] = w[i] - lr * (nesterov ? gp + m * rv[i] : rv[i]);
            }
            d->sgd_update(d, w, g, v, n, (float)lr, (float)m, (float)wd, nesterov);
            tu_assert_close("sgd w", w, rw, n, 1e-6, 1.0);
            tu_assert_close("sgd v", v, rv, n, 1e-6, 1.0);
            d->free(d, w);
            d->free(d, g);
            d->free(d, v);
            free(rw);
            free(rv);
        }
    }
    d->destroy(d);
}

static void test_lars_update_matches_double_formula(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 9);
    dt_device *d = dt_device_cpu_create(2);
    for (size_t t = 0; t < sizeof g_counts / sizeof g_counts[0]; t++) {
        size_t n = g_counts[t];
        float *w = d->alloc(d, n * 4), *g = d->alloc(d, n * 4), *v = d->alloc(d, n * 4);
        tu_fill_uniform(&r, w, n, -1, 1);
        tu_fill_uniform(&r, g, n, -1, 1);
        tu_fill_uniform(&r, v, n, -1, 1);
        double slr = tu_uniform(&r, 1e-4, 1), m = 0.9, wd = 5e-5;
        double *rw = malloc(n * 8 + 8), *rv = malloc(n * 8 + 8);
        for (size_t i = 0; i < n; i++) {  // You et al. 2017, MLPerf form
            rv[i] = m * v[i] + slr * (g[i] + wd * w[i]);
            rw[i] = w[i] - rv[i];
        }
        d->lars_update(d, w, g, v, n, (float)slr, (float)m, (float)wd);
        tu_assert_close("lars w", w, rw, n, 1e-6, 1.0);
        tu_assert_close("lars v", v, rv, n, 1e-6, 1.0);
        d->free(d, w);
        d->free(d, g);
        d->free(d, v);
        free(rw);
        free(rv);
    }
    d->destroy(d);
}

// ---- fp16 casts ----

// IEEE binary16 of a finite or infinite double x, rounded to nearest even, computed with
// double arithmetic (rint rounds half to even in the default mode): the test's own reference.
static uint16_t ref_f16_bits(double x) {
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    double a = fabs(x);
    if (a >= 65520.0) return sign | 0x7C00;          // halfway to 2^16 and beyond: Inf
    if (a < ldexp(1.0, -14)) {                       // subnormal step 2^-24
        return sign | (uint16_t)rint(a * ldexp(1.0, 24));  // 1024 is the smallest normal
    }
    int e;
    frexp(a, &e);  // a = f*2^e, f in [0.5,1): the leading bit is 2^(e-1)
    int E = e - 1;
    double q = rint(a * ldexp(1.0, 10 - E));  // in [1024, 2048]
    return sign | (uint16_t)(((E + 15) << 10) + ((int)q - 1024));
}

// value of binary16 bits as a double, decoded from the definition
static double ref_f16_value(uint16_t h) {
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return s ? -v : v;
}

// NaN keeps its sign and the top bits of its payload and comes out quiet (IEEE 754-2008
// §6.2.3; what x86's F16C and Arm's FCVT do): the rule the cpu, cuda and model devices share
static uint16_t ref_f16_nan(uint32_t f32_bits) {
    return (uint16_t)(((f32_bits >> 16) & 0x8000u) | 0x7E00u | ((f32_bits & 0x7FFFFFu) >> 13));
}
static uint32_t ref_f32_nan(uint16_t h) {
    return ((uint32_t)(h & 0x8000u) << 16) | 0x7FC00000u | ((uint32_t)(h & 0x3FFu) << 13);
}

static void check_f16_bits(const float *x, const uint16_t *y, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i])) {
            uint32_t b;
            memcpy(&b, &x[i], 4);
            if (y[i] != ref_f16_nan(b))
                fail_msg("NaN 0x%08x became 0x%04x, expected 0x%04x", b, y[i], ref_f16_nan(b));
            continue;
        }
        uint16_t want = ref_f16_bits(x[i]);
        if (y[i] != want) fail_msg("f32_to_f16(%.9g) = 0x%04x, expected 0x%04x", x[i], y[i], want);
    }
}

// the device's cast (F16C where the CPU has it) and the shared formula that the cuda
// kernels run (nn/kernels.h), each against the reference
static void check_f32_to_f16(dt_device *d, const float *x, size_t n) {
    uint16_t *y = d->alloc(d, n * 2), *ys = d->alloc(d, n * 2);
    d->f32_to_f16(d, x, y, n);
    for (size_t i = 0; i < n; i++) ys[i] = dt_f32_to_f16(x[i]);
    check_f16_bits(x, y, n);
    check_f16_bits(x, ys, n);
    d->free(d, ys);
    d->free(d, y);
}

static void test_f32_to_f16_rounds_to_nearest_even_like_double_reference(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 10);
    dt_device *d = dt_device_cpu_create(2);
    // special values: exact, ties, overflow boundary, subnormals, zeros, NaN, Inf
    float sp[] = {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 65519.99f, 65520.0f, 70000.0f, 1e30f,
                  INFINITY, -INFINITY, NAN, -NAN, 0x1p-14f, 0x1p-24f, 0x1p-25f, 0x1.8p-25f,
                  0x1p-26f, 0x1.8p-24f, 0x1.4p-24f, 0x1.002p0f, 0x1.006p0f, 0x1.001p0f,
                  0x1.ffep-15f, 0x1.ffcp-15f, 0x1.fffp-15f, 1e-45f, 3.3e-8f};
    check_f32_to_f16(d, sp, sizeof sp / sizeof sp[0]);
    // ties: the midpoint between every pair of adjacent finite halves (exact in float)
    size_t n = 0;
    float *x = malloc(2 * 65536 * sizeof(float));
    for (uint32_t h = 0; h < 0x7BFF; h++) {
        float mid = (float)((ref_f16_value((uint16_t)h) + ref_f16_value((uint16_t)(h + 1))) / 2);
        x[n++] = mid;
        x[n++] = -mid;
    }
    check_f32_to_f16(d, x, n);
    // random bit patterns (all exponents, NaNs included) and random values in half range
    for (size_t i = 0; i < 2 * 65536; i++) {
        uint32_t bits = (uint32_t)(tu_uniform(&r, 0, 4294967296.0));
        memcpy(&x[i], &bits, 4);
        if (i & 1) x[i] = (float)(tu_normal(&r) * pow(2.0, tu_uniform(&r, -26, 17)));
    }
    check_f32_to_f16(d, x, 2 * 65536);
    free(x);
    d->destroy(d);
}

static void test_f16_to_f32_is_exact_for_all_65536_halves_and_add_f16_accumulates(
    void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 11);
    dt_device *d = dt_device_cpu_create(2);
    uint16_t *h = d->alloc(d, 65536 * 2), *back = d->alloc(d, 65536 * 2);
    float *y = d->alloc(d, 65536 * 4);
    for (uint32_t i = 0; i < 65536; i++) h[i] = (uint16_t)i;
    d->f16_to_f32(d, h, y, 65536);
    d->f32_to_f16(d, y, back, 65536);
    for (uint32_t i = 0; i < 65536; i++) {
        double want = ref_f16_value((uint16_t)i);
        if (isnan(want)) {
            uint32_t b;
            memcpy(&b, &y[i], 4);
            if (b != ref_f32_nan((uint16_t)i))
                fail_msg("f16_to_f32(0x%04x) = 0x%08x, expected 0x%08x", i, b,
                         ref_f32_nan((uint16_t)i));
            continue;
        }
        if (!((double)y[i] == want && !signbit(y[i]) == !signbit(want))) {
            fail_msg("f16_to_f32(0x%04x) = %.9g, expected %.9g", i, y[i], want);
        }
        assert_int_equal(back[i], i);  // every non-NaN half survives the round trip
    }
    for (uint32_t i = 0; i < 65536; i++) {  // the shared formula (cuda's) gives the same bits
        float v = dt_f16_to_f32((uint16_t)i);
        if (memcmp(&v, &y[i], 4)) fail_msg("dt_f16_to_f32(0x%04x) differs from the device", i);
    }
    // add_f16: y += float(x)
    size_t n = 100003;
    float *acc = d->alloc(d, n * 4);
    double *ref = malloc(n * 8);
    tu_fill_uniform(&r, acc, n, -10, 10);
    for (size_t i = 0; i < n; i++) {
        h[i % 65536] = (uint16_t)tu_int(&r, 0, 0x7BFF) | (tu_int(&r, 0, 1) ? 0x8000 : 0);
    }
    for (size_t i = 0; i < n; i++) ref[i] = (double)acc[i] + ref_f16_value(h[i % 65536]);
    for (size_t i = 0; i < n; i += 65536) {
        size_t m = n - i < 65536 ? n - i : 65536;
        d->add_f16(d, acc + i, h, m);
    }
    tu_assert_close("add_f16", acc, ref, n, 1e-6, 1.0);
    d->free(d, h);
    d->free(d, back);
    d->free(d, y);
    d->free(d, acc);
    free(ref);
    d->destroy(d);
}

// ---- dropout ----

static void test_dropout_mask_mean_is_one_and_same_seed_gives_same_mask(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 12);
    dt_device *d1 = dt_device_cpu_create(1), *d2 = dt_device_cpu_create(2);
    size_t n = 200003;
    float p = 0.3f;
    float *x = d2->alloc(d2, n * 4), *y = d2->alloc(d2, n * 4), *m = d2->alloc(d2, n * 4);
    float *m1 = d2->alloc(d2, n * 4), *y1 = d2->alloc(d2, n * 4), *m3 = d2->alloc(d2, n * 4);
    tu_fill_uniform(&r, x, n, -1, 1);
    uint64_t seed = g_seed * 31 + 7;
    d2->dropout_forward(d2, x, y, m, n, p, seed);
    d1->dropout_forward(d1, x, y1, m1, n, p, seed);
    assert_memory_equal(m, m1, n * 4);  // same seed: same mask, whatever the threads
    d2->dropout_forward(d2, x, y1, m3, n, p, seed + 1);
    double sum = 0, zeros = 0;
    float keep = 1.0f / (1.0f - p);
    size_t differ = 0;
    for (size_t i = 0; i < n; i++) {
        assert_true(m[i] == 0.0f || m[i] == keep);
        assert_true(y[i] == x[i] * m[i]);
        sum += m[i];
        zeros += m[i] == 0.0f;
        differ += m[i] != m3[i];
    }
    // mean of the mask is 1 (std of the mean: sqrt(p/(1-p)/n)); 5 sigma
    double sd = sqrt(p / (1.0 - p) / n);
    if (!(fabs(sum / n - 1.0) < 5 * sd)) fail_msg("dropout mask mean %.5f", sum / n);
    if (!(fabs(zeros / n - p) < 5 * sqrt(p * (1 - p) / n))) fail_msg("dropped %.5f", zeros / n);
    // another seed: a different mask (about 2p(1-p) of the entries differ)
    assert_true(differ > n / 4);
    // backward: dx += dy*mask
    float *dy = d2->alloc(d2, n * 4), *dx = d2->alloc(d2, n * 4);
    double *ref = malloc(n * 8);
    tu_fill_uniform(&r, dy, n, -1, 1);
    tu_fill_uniform(&r, dx, n, -1, 1);
    for (size_t i = 0; i < n; i++) ref[i] = (double)dx[i] + (double)dy[i] * m[i];
    d2->dropout_backward(d2, dy, m, dx, n);
    tu_assert_close("dropout backward", dx, ref, n, 1e-6, 1.0);
    float *ptr[] = {x, y, m, m1, y1, m3, dy, dx};
    for (int i = 0; i < 8; i++) d2->free(d2, ptr[i]);
    free(ref);
    d1->destroy(d1);
    d2->destroy(d2);
}

int main(void) {
    g_seed = tu_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_scale_axpy_add_match_double_formulas_any_count),
        cmocka_unit_test(test_sumsq_is_double_accurate_and_same_bits_for_any_thread_count),
        cmocka_unit_test(test_nonfinite_counts_nan_and_both_infinities_only),
        cmocka_unit_test(test_sgd_update_matches_double_formula_plain_and_nesterov),
        cmocka_unit_test(test_lars_update_matches_double_formula),
        cmocka_unit_test(test_f32_to_f16_rounds_to_nearest_even_like_double_reference),
        cmocka_unit_test(test_f16_to_f32_is_exact_for_all_65536_halves_and_add_f16_accumulates),
        cmocka_unit_test(test_dropout_mask_mean_is_one_and_same_seed_gives_same_mask),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
