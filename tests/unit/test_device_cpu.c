// test_device_cpu.c — the cpu device's memory and gemm (plain, batched, batched sum), each
// against an independent float64 reference written here (naive loops); ctest runs it again on
// the reference gemm path (DT_CPU_GEMM=reference, tests/CMakeLists.txt). Elementwise ops,
// reductions, optimizer updates, fp16 casts and dropout are in test_device_cpu_elementwise.c,
// the network primitives in test_device_cpu_nn.c.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "testutil.h"

static uint64_t g_seed;

// ---- memory ----

static void test_alloc_is_zero_filled_aligned_and_copies_round_trip(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 1);
    dt_device *d = dt_device_cpu_create(2);
    assert_non_null(d);
    assert_null(dt_device_cpu_create(-1));
    const size_t sizes[] = {0, 1, 3, 64, 1000003};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        unsigned char *p = d->alloc(d, n);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 64, 0);
        for (size_t i = 0; i < n; i++) assert_int_equal(p[i], 0);
        d->free(d, p);
    }
    size_t n = 777;
    float *h = malloc(n * sizeof(float)), *back = malloc(n * sizeof(float));
    tu_fill_uniform(&r, h, n, -1, 1);
    float *a = d->alloc(d, n * sizeof(float)), *b = d->alloc(d, n * sizeof(float));
    d->from_host(d, a, h, n * sizeof(float));
    d->copy(d, b, a, n * sizeof(float));
    d->sync(d);
    d->to_host(d, back, b, n * sizeof(float));
    assert_memory_equal(back, h, n * sizeof(float));
    d->free(d, a);
    d->free(d, b);
    free(h);
    free(back);
    d->destroy(d);
}

// ---- gemm ----

// C(M,N) = alpha*op(A)op(B) + beta*C in double; beta == 0 ignores C (BLAS semantics)
static void ref_gemm(int ta, int tb, int M, int N, int K, double alpha, const float *A, int lda,
                     const float *B, int ldb, double beta, const float *C0, int ldc, double *C) {
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) {
                double a = ta ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k];
                double b = tb ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j];
                s += a * b;
            }
            C[(size_t)i * N + j] = alpha * s + (beta == 0 ? 0 : beta * C0[(size_t)i * ldc + j]);
        }
    }
}

// Picks leading dimensions with some slack, allocates and fills A, B, C on the host.
typedef struct {
    int M, N, K, ta, tb, lda, ldb, ldc;
    size_t na, nb, nc;  // elements of one matrix including the slack
} gemm_shape;

static gemm_shape random_shape(tu_rng *r, int ta, int tb, int maxdim) {
    gemm_shape s;
    s.M = tu_int(r, 1, maxdim);
    s.N = tu_int(r, 1, maxdim);
    s.K = tu_int(r, 1, maxdim);
    s.ta = ta;
    s.tb = tb;
    return s;
}

// Fills in the leading dimensions (with some slack) and the matrix sizes.
static gemm_shape with_lds(tu_rng *r, gemm_shape s) {
    int ta = s.ta, tb = s.tb;
    s.lda = (ta ? s.M : s.K) + tu_int(r, 0, 3);
    s.ldb = (tb ? s.K : s.N) + tu_int(r, 0, 3);
    s.ldc = s.N + tu_int(r, 0, 3);
    s.na = (size_t)(ta ? s.K : s.M) * s.lda;
    s.nb = (size_t)(tb ? s.N : s.K) * s.ldb;
    s.nc = (size_t)s.M * s.ldc;
    return s;
}

// Shapes big enough for the threaded paths (more than 2 MFLOP per call): batches split
// among threads, gemms cut into bands of rows (M > N) or columns, and narrow gemms
// (N < 128, shared A, plain B) packed side by side. Big trial idx (0..15) covers every
// combination of transposes, shared A and narrow N.
static gemm_shape big_shape(tu_rng *r, int idx, int batch) {
    gemm_shape s = {0};
    s.ta = idx & 1;
    s.tb = (idx >> 1) & 1;
    s.M = tu_int(r, 20, 160);
    s.N = (idx >> 3) & 1 ? tu_int(r, 1, 127) : tu_int(r, 128, 260);
    s.K = tu_int(r, 20, 160);
    while (2.0 * s.M * s.N * s.K * (batch > 0 ? batch : 1) < 2.5e6) s.K += 40;
    return s;
}

enum { SMALL_TRIALS = 28, BIG_TRIALS = 16 };

// The trial's shape, whether A is shared (stride 0), and its batch.
static gemm_shape trial_shape(tu_rng *r, int trial, const int *batches, int *shared,
                              int *batch) {
    if (trial < SMALL_TRIALS) {
        *batch = batches[trial % 7];
        *shared = trial % 3 == 0;
        return with_lds(r, random_shape(r, trial & 1, (trial >> 1) & 1, 29));
    }
    int idx = trial - SMALL_TRIALS;
    static const int big_batches[] = {2, 3, 5, 4};
    *batch = big_batches[idx % 4];
    *shared = (idx >> 2) & 1;
    return with_lds(r, big_shape(r, idx, *batch));
}

// Checks the (M,N) block of C (row stride ldc) against ref (row stride N), and that the
// slack columns of C were left alone (equal to C0).
static void check_block(const char *what, const float *C, const float *C0, const double *ref,
                        const gemm_shape *s, double tol) {
    for (int i = 0; i < s->M; i++) {
        tu_assert_close(what, C + (size_t)i * s->ldc, ref + (size_t)i * s->N, (size_t)s->N, tol,
                        1.0);
        for (int j = s->N; j < s->ldc; j++) {
            assert_true(C[(size_t)i * s->ldc + j] == C0[(size_t)i * s->ldc + j]);
        }
    }
}

static void test_gemm_matches_double_reference_all_transposes_odd_sizes_leading_dims(
    void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 2);
    dt_device *d = dt_device_cpu_create(2);
    for (int trial = 0; trial < 48; trial++) {
        int ta = trial & 1, tb = (trial >> 1) & 1;
        gemm_shape s = with_lds(&r, random_shape(&r, ta, tb, trial < 40 ? 37 : 300));
        if (trial % 8 == 7) s.M = 1;
        if (trial % 8 == 6) s.N = 1;
        float *A = d->alloc(d, s.na * 4), *B = d->alloc(d, s.nb * 4), *C = d->alloc(d, s.nc * 4);
        float *C0 = malloc(s.nc * 4);
        tu_fill_uniform(&r, A, s.na, -1, 1);
        tu_fill_uniform(&r, B, s.nb, -1, 1);
        tu_fill_uniform(&r, C0, s.nc, -1, 1);
        double beta = (trial % 3 == 0) ? 0.0 : tu_uniform(&r, -1, 1);
        double alpha = tu_uniform(&r, -2, 2);
        if (beta == 0) C0[0] = NAN;  // beta 0 must overwrite, not propagate NaN
        memcpy(C, C0, s.nc * 4);
        double *ref = malloc((size_t)s.M * s.N * sizeof(double));
        ref_gemm(ta, tb, s.M, s.N, s.K, alpha, A, s.lda, B, s.ldb, beta, C0, s.ldc, ref);
        d->gemm(d, ta, tb, s.M, s.N, s.K, (float)alpha, A, s.lda, B, s.ldb, (float)beta, C,
                s.ldc);
        check_block("gemm", C, C0, ref, &s, 1e-5 * sqrt(s.K) + 1e-6);
        d->free(d, A);
        d->free(d, B);
        d->free(d, C);
        free(C0);
        free(ref);
    }
    // K = 0: C = beta*C
    float c[4] = {1, 2, 3, 4}, one = 1;
    d->gemm(d, 0, 0, 2, 2, 0, 1.0f, &one, 1, &one, 2, 0.5f, c, 2);
    assert_true(c[0] == 0.5f && c[3] == 2.0f);
    d->destroy(d);
}

// Batched: X_i = X + i*stride_x, stride_a = 0 shares A; threads 1, 2, 3 take the sequential
// path, the parallel path, and uneven splits.
static void test_gemm_batched_matches_reference_all_transposes_shared_a_stride0(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 3);
    const int batches[] = {0, 1, 2, 3, 5, 8, 13};
    for (int threads = 1; threads <= 3; threads++) {
        dt_device *d = dt_device_cpu_create(threads);
        for (int trial = 0; trial < SMALL_TRIALS + BIG_TRIALS; trial++) {
            int shared, batch;
            gemm_shape s = trial_shape(&r, trial, batches, &shared, &batch);
            int ta = s.ta, tb = s.tb;
            size_t sa = shared ? 0 : s.na + (size_t)tu_int(&r, 0, 5);
            size_t sb = s.nb + (size_t)tu_int(&r, 0, 5), sc = s.nc;
            size_t ta_n = sa ? sa * batch + s.na : s.na, tb_n = sb * batch + 1;
            size_t tc_n = sc * batch + 1;
            float *A = d->alloc(d, ta_n * 4), *B = d->alloc(d, tb_n * 4);
            float *C = d->alloc(d, tc_n * 4), *C0 = malloc(tc_n * 4);
            tu_fill_uniform(&r, A, ta_n, -1, 1);
            tu_fill_uniform(&r, B, tb_n, -1, 1);
            tu_fill_uniform(&r, C0, tc_n, -1, 1);
            memcpy(C, C0, tc_n * 4);
            double alpha = tu_uniform(&r, -2, 2), beta = (trial % 3 == 1) ? 0 : 0.75;
            d->gemm_batched(d, ta, tb, s.M, s.N, s.K, (float)alpha, A, s.lda, sa, B, s.ldb, sb,
                            (float)beta, C, s.ldc, sc, batch);
            double *ref = malloc((size_t)s.M * s.N * sizeof(double));
            for (int i = 0; i < batch; i++) {
                ref_gemm(ta, tb, s.M, s.N, s.K, alpha, A + i * sa, s.lda, B + i * sb, s.ldb,
                         beta, C0 + i * sc, s.ldc, ref);
                check_block("gemm_batched", C + i * sc, C0 + i * sc, ref, &s, 1e-5 + 1e-7 * s.K);
            }
            assert_true(C[sc * batch] == C0[sc * batch]);  // nothing past the last matrix
            d->free(d, A);
            d->free(d, B);
            d->free(d, C);
            free(C0);
            free(ref);
        }
        d->destroy(d);
    }
}

// C = alpha*sum_i op(A_i)op(B_i) + beta*C (conv2d's weight gradient), any batch and threads.
static void test_gemm_batched_sum_matches_reference_all_transposes_shared_a_stride0(
    void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 4);
    const int batches[] = {0, 1, 2, 3, 4, 7, 16};
    for (int threads = 1; threads <= 3; threads++) {
        dt_device *d = dt_device_cpu_create(threads);
        for (int trial = 0; trial < SMALL_TRIALS + BIG_TRIALS; trial++) {
            int shared, batch;
            gemm_shape s = trial_shape(&r, trial, batches, &shared, &batch);
            int ta = s.ta, tb = s.tb;
            size_t sa = shared ? 0 : s.na + (size_t)tu_int(&r, 0, 5);
            size_t sb = s.nb + (size_t)tu_int(&r, 0, 5);
            size_t ta_n = sa * batch + s.na, tb_n = sb * batch + 1;
            float *A = d->alloc(d, ta_n * 4), *B = d->alloc(d, tb_n * 4);
            float *C = d->alloc(d, s.nc * 4), *C0 = malloc(s.nc * 4);
            tu_fill_uniform(&r, A, ta_n, -1, 1);
            tu_fill_uniform(&r, B, tb_n, -1, 1);
            tu_fill_uniform(&r, C0, s.nc, -1, 1);
            memcpy(C, C0, s.nc * 4);
            double alpha = tu_uniform(&r, -2, 2);
            double beta = (trial % 3 == 0) ? 0 : (trial % 3 == 1) ? 1 : 0.5;
            d->gemm_batched_sum(d, ta, tb, s.M, s.N, s.K, (float)alpha, A, s.lda, sa, B, s.ldb,
                                sb, (float)beta, C, s.ldc, batch);
            double *ref = calloc((size_t)s.M * s.N, sizeof(double));
            double *one = malloc((size_t)s.M * s.N * sizeof(double));
            for (int i = 0; i < batch; i++) {
                ref_gemm(ta, tb, s.M, s.N, s.K, alpha, A + i * sa, s.lda, B + i * sb, s.ldb, 0,
                         NULL, 0, one);
                for (size_t k = 0; k < (size_t)s.M * s.N; k++) ref[k] += one[k];
            }
            for (int i = 0; i < s.M; i++) {
                for (int j = 0; j < s.N; j++) {
                    ref[(size_t)i * s.N + j] += beta * C0[(size_t)i * s.ldc + j];
                }
            }
            check_block("gemm_batched_sum", C, C0, ref, &s, (1e-5 + 1e-7 * s.K) * sqrt(batch + 1));
            d->free(d, A);
            d->free(d, B);
            d->free(d, C);
            free(C0);
            free(ref);
            free(one);
        }
        d->destroy(d);
    }
}

int main(void) {
    g_seed = tu_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_is_zero_filled_aligned_and_copies_round_trip),
        cmocka_unit_test(test_gemm_matches_double_reference_all_transposes_odd_sizes_leading_dims),
        cmocka_unit_test(test_gemm_batched_matches_reference_all_transposes_shared_a_stride0),
        cmocka_unit_test(test_gemm_batched_sum_matches_reference_all_transposes_shared_a_stride0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
