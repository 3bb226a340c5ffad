// test_device_cpu_half.c — the cpu device's primitives on half storage (nn/device_cpu_half.c),
// on fresh random inputs, 1-3 threads:
//  - batch norm (bn_forward_train_h, bn_forward_eval_h, bn_backward_h in add and set form,
//    fp16 and bf16): bit for bit the fp32 ops of the same device on the widened inputs with
//    the result rounded once, which is what the network's fp32 views gave (nn/net_half.c);
//  - where the CPU multiplies bf16 (AVX512_BF16 or AMX, oneDNN): im2col_bf16 and col2im_bf16
//    (add and set) bit for bit the fp32 im2col/col2im on widened values; gemm_batched_bf16
//    and gemm_batched_sum_bf16 (shared and strided A, the packed narrow path, transposes)
//    within the bound of fp32 accumulation of exact products of a float64 reference,
//    |C - ref| <= K·2^-24·sum_k |a_k b_k| (Higham, "Accuracy and Stability of Numerical
//    Algorithms", 2nd ed., eq. 3.5: |s - fl(s)| <= gamma_{K-1}·sum|p_k|; the products of two
//    bf16 values are exact in fp32), and bit for bit the bf16 gemms of the views path (the
//    same calls on widened operands with gemm_half = 2, nn/device_cpu_gemm.c);
//    gemm_batched_bf16_h (bf16 C) bit for bit gemm_batched_bf16 into fp32 C, then rounded;
//    gemm_col2im_bf16 bit for bit gemm_batched_bf16 into fp32 columns, then col2im_bf16;
//  - where the CPU has no bf16 multiply, those four are absent (NULL): the network then
//    keeps the views.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "testutil.h"

static int cpu_has_bf16(void) {
#if defined(__x86_64__) && defined(__GNUC__) && defined(DT_HAVE_DNNL_BF16_GEMM)
    const char *e = getenv("DT_CPU_GEMM");
    if (e && strcmp(e, "reference") == 0) return 0;
    return __builtin_cpu_supports("avx512bf16") || __builtin_cpu_supports("amx-bf16");
#else
    return 0;
#endif
}

static uint16_t rand_half(tu_rng *r, int fmt, double lo, double hi) {
    float v = (float)tu_uniform(r, lo, hi);
    return fmt == 2 ? dt_f32_to_bf16(v) : dt_f32_to_f16(v);
}
static void widen(int fmt, const uint16_t *h, float *f, size_t n) {
    for (size_t i = 0; i < n; i++) f[i] = dt_half_load(fmt, h[i]);
}
static void narrow(int fmt, const float *f, uint16_t *h, size_t n) {
    for (size_t i = 0; i < n; i++) h[i] = fmt == 2 ? dt_f32_to_bf16(f[i]) : dt_f32_to_f16(f[i]);
}
static void same_bits(const char *what, const void *got, const void *want, size_t bytes) {
    if (memcmp(got, want, bytes) != 0) {
        const unsigned char *g = got, *w = want;
        size_t i = 0;
        while (g[i] == w[i]) i++;
        fail_msg("%s: differs from the fp32 path at byte %zu of %zu", what, i, bytes);
    }
}

// ---- batch norm ----

static void check_bn(tu_fixture *f, int fmt) {
    for (int threads = 1; threads <= 3; threads++) {
        dt_device *d = dt_device_cpu_create(threads);
        assert_non_null(d->bn_forward_train_h);
        int B = tu_int(&f->rng, 1, 4), C = tu_int(&f->rng, 1, 40), HW = tu_int(&f->rng, 1, 300);
        if (threads == 3) C = 300, HW = 257;  // above the parallel threshold, odd planes
        size_t n = (size_t)B * C * HW;
        uint16_t *x = malloc(n * 2), *dy = malloc(n * 2), *y = malloc(n * 2), *yw = malloc(n * 2);
        uint16_t *dx = malloc(n * 2), *dxw = malloc(n * 2);
        float *xf = malloc(n * 4), *dyf = malloc(n * 4), *yf = malloc(n * 4), *dxf = malloc(n * 4);
        // gamma beta rm rv sm si dgamma dbeta, for the half and the fp32 runs
        float p[2][8][300] = {{{0}}};
        double shift = tu_uniform(&f->rng, -3, 3);
        for (size_t i = 0; i < n; i++) {
            x[i] = rand_half(&f->rng, fmt, shift - 2, shift + 2);
            dy[i] = rand_half(&f->rng, fmt, -1, 1);
            dx[i] = rand_half(&f->rng, fmt, -1, 1);
        }
        for (int c = 0; c < C; c++) {
            static const double lo[8] = {0.5, -1, -1, 0.5, 0, 0, -1, -1};
            static const double hi[8] = {2, 1, 1, 2, 0, 0, 1, 1};
            for (int k = 0; k < 8; k++)
                if (hi[k] > lo[k]) p[0][k][c] = (float)tu_uniform(&f->rng, lo[k], hi[k]);
        }
        memcpy(p[1], p[0], sizeof p[0]);
        widen(fmt, x, xf, n), widen(fmt, dy, dyf, n);
        for (int k = 0; k < 2; k++) {  // k 0: half storage; 1: the fp32 op on widened values
            float (*q)[300] = p[k];
            if (k == 0) {
                d->bn_forward_train_h(d, fmt, x, B, C, HW, q[0], q[1], 1e-5f, 0.1f, q[2], q[3],
                                      q[4], q[5], y);
            } else {
                d->bn_forward_train(d, xf, B, C, HW, q[0], q[1], 1e-5f, 0.1f, q[2], q[3], q[4],
                                    q[5], yf);
                narrow(fmt, yf, yw, n);
            }
        }
        same_bits("bn_forward_train_h y", y, yw, n * 2);
        same_bits("bn_forward_train_h statistics", p[0], p[1], sizeof p[0]);
        d->bn_forward_eval_h(d, fmt, x, B, C, HW, p[0][0], p[0][1], 1e-5f, p[0][2], p[0][3], y);
        d->bn_forward_eval(d, xf, B, C, HW, p[0][0], p[0][1], 1e-5f, p[0][2], p[0][3], yf);
        narrow(fmt, yf, yw, n);
        same_bits("bn_forward_eval_h", y, yw, n * 2);
        for (int set = 0; set <= 1; set++) {
            memcpy(dxw, dx, n * 2);
            widen(fmt, dx, dxf, n);
            uint16_t *got = malloc(n * 2);
            memcpy(got, dx, n * 2);
            d->bn_backward_h(d, fmt, dy, x, B, C, HW, p[0][0], p[0][4], p[0][5], got, p[0][6],
                             p[0][7], set);
            (set ? d->bn_backward_set : d->bn_backward)(d, dyf, xf, B, C, HW, p[1][0], p[1][4],
                                                        p[1][5], dxf, p[1][6], p[1][7]);
            narrow(fmt, dxf, dxw, n);
            same_bits(set ? "bn_backward_h (set) dx" : "bn_backward_h (add) dx", got, dxw, n * 2);
            same_bits("bn_backward_h dgamma, dbeta", p[0][6], p[1][6], 2 * sizeof p[0][6]);
            free(got);
        }
        free(x), free(dy), free(y), free(yw), free(dx), free(dxw), free(xf), free(dyf);
        free(yf), free(dxf);
        d->destroy(d);
    }
}
static void test_bn_h_fp16(void **s) { check_bn(*s, 1); }
static void test_bn_h_bf16(void **s) { check_bn(*s, 2); }

// ---- convolution on bf16 storage ----

static void test_conv_ops_present_exactly_where_the_cpu_multiplies_bf16(void **state) {
    (void)state;
    dt_device *d = dt_device_cpu_create(2);
    int want = cpu_has_bf16();
    printf("conv on bf16 storage: %s\n", want ? "yes" : "no (the views path)");
    assert_int_equal(d->im2col_bf16 != NULL, want);
    assert_int_equal(d->col2im_bf16 != NULL, want);
    assert_int_equal(d->gemm_batched_bf16 != NULL, want);
    assert_int_equal(d->gemm_batched_sum_bf16 != NULL, want);
    assert_int_equal(d->gemm_batched_bf16_h != NULL, want);
    assert_int_equal(d->gemm_col2im_bf16 != NULL, want);
    d->destroy(d);
}

static void test_im2col_col2im_bf16_give_the_fp32_bits(void **state) {
    tu_fixture *f = *state;
    if (!cpu_has_bf16()) skip();
    for (int rep = 0; rep < 12; rep++) {
        dt_device *d = dt_device_cpu_create(1 + rep % 3);
        int B = tu_int(&f->rng, 1, 3), C = tu_int(&f->rng, 1, 5), H = tu_int(&f->rng, 1, 20);
        int W = rep % 2 ? H : tu_int(&f->rng, 1, 20), KH = tu_int(&f->rng, 1, 4);
        int KW = rep % 2 ? KH : tu_int(&f->rng, 1, 4), stride = tu_int(&f->rng, 1, 3);
        int pad = tu_int(&f->rng, 0, 2);
        if (rep >= 10) B = 8, C = 64, H = W = 14, KH = KW = 3, stride = 1, pad = 1;  // parallel
        int OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1;
        if (OH <= 0 || OW <= 0) {  // no output for this draw (the device is not leaked)
            d->destroy(d);
            continue;
        }
        size_t nx = (size_t)B * C * H * W, nc = (size_t)B * C * KH * KW * OH * OW;
        uint16_t *x = malloc(nx * 2), *col = malloc(nc * 2), *colw = malloc(nc * 2);
        uint16_t *dx = malloc(nx * 2), *dxw = malloc(nx * 2);
        float *xf = malloc(nx * 4), *colf = malloc(nc * 4), *dxf = malloc(nx * 4);
        for (size_t i = 0; i < nx; i++) x[i] = rand_half(&f->rng, 2, -4, 4);
        widen(2, x, xf, nx);
        memset(col, 0xAB, nc * 2);  // every element must be written
        d->im2col_bf16(d, x, B, C, H, W, KH, KW, stride, pad, col);
        d->im2col(d, xf, B, C, H, W, KH, KW, stride, pad, colf);
        narrow(2, colf, colw, nc);
        same_bits("im2col_bf16", col, colw, nc * 2);
        for (size_t i = 0; i < nc; i++) colf[i] = (float)tu_uniform(&f->rng, -1, 1);
        for (int set = 0; set <= 1; set++) {
            for (size_t i = 0; i < nx; i++) dx[i] = rand_half(&f->rng, 2, -1, 1);
            widen(2, dx, dxf, nx);
            d->col2im_bf16(d, colf, B, C, H, W, KH, KW, stride, pad, dx, set);
            (set ? d->col2im_set : d->col2im)(d, colf, B, C, H, W, KH, KW, stride, pad, dxf);
            narrow(2, dxf, dxw, nx);
            same_bits(set ? "col2im_bf16 (set)" : "col2im_bf16 (add)", dx, dxw, nx * 2);
        }
        free(x), free(col), free(colw), free(dx), free(dxw), free(xf), free(colf), free(dxf);
        d->destroy(d);
    }
}

typedef struct {
    int sum, ta, tb, M, N, K, batch, lda, ldb, ldc;
    size_t sa, sb, sc, na, nb, nc;
} call;

static call make_call(tu_rng *r, int sum, int idx) {
    call c = {.sum = sum, .ta = idx & 1, .tb = (idx >> 1) & 1};
    int narrow_n = (idx >> 2) & 1, shared = (idx >> 3) & 1;
    c.batch = tu_int(r, 1, 5);
    c.M = tu_int(r, 1, 140), c.K = tu_int(r, 1, 300);
    c.N = narrow_n ? tu_int(r, 1, 127) : tu_int(r, 128, 300);
    c.lda = (c.ta ? c.M : c.K) + tu_int(r, 0, 3);
    c.ldb = (c.tb ? c.K : c.N) + tu_int(r, 0, 3);
    c.ldc = c.N + tu_int(r, 0, 3);
    size_t a1 = (size_t)(c.ta ? c.K : c.M) * c.lda, b1 = (size_t)(c.tb ? c.N : c.K) * c.ldb;
    c.sa = shared ? 0 : a1 + (size_t)tu_int(r, 0, 5);
    c.sb = b1 + (size_t)tu_int(r, 0, 5);
    c.sc = sum ? 0 : (size_t)c.M * c.ldc;
    c.na = c.sa * c.batch + a1, c.nb = c.sb * c.batch + b1;
    c.nc = sum ? (size_t)c.M * c.ldc : c.sc * c.batch;
    return c;
}

// element (m, n) of item i: the float64 sum and the sum of |products|
static void ref_elem(const call *c, const float *A, const float *B, int i, int m, int n,
                     double *s, double *abs_s) {
    const float *a = A + i * c->sa, *b = B + i * c->sb;
    for (int k = 0; k < c->K; k++) {
        double p = (double)(c->ta ? a[(size_t)k * c->lda + m] : a[(size_t)m * c->lda + k]) *
                   (c->tb ? b[(size_t)n * c->ldb + k] : b[(size_t)k * c->ldb + n]);
        *s += p, *abs_s += fabs(p);
    }
}

static void test_bf16_gemms_within_fp32_accumulation_and_as_the_views_path(void **state) {
    tu_fixture *f = *state;
    if (!cpu_has_bf16()) skip();
    double most = 0;
    for (int idx = 0; idx < 32; idx++) {
        int sum = idx >= 16, threads = 1 + idx % 3;
        dt_device *d = dt_device_cpu_create(threads);
        call c = make_call(&f->rng, sum, idx % 16);
        float alpha = idx % 5 == 0 ? 0.5f : 1.0f, beta = idx % 2 ? 1.0f : 0.0f;
        uint16_t *A = malloc(c.na * 2), *B = malloc(c.nb * 2);
        float *Af = malloc(c.na * 4), *Bf = malloc(c.nb * 4), *C0 = malloc(c.nc * 4);
        float *C = malloc(c.nc * 4), *Cv = malloc(c.nc * 4);
        for (size_t i = 0; i < c.na; i++) A[i] = rand_half(&f->rng, 2, -1, 1);
        for (size_t i = 0; i < c.nb; i++) B[i] = rand_half(&f->rng, 2, -1, 1);
        tu_fill_uniform(&f->rng, C0, c.nc, -1, 1);
        widen(2, A, Af, c.na), widen(2, B, Bf, c.nb);
        memcpy(C, C0, c.nc * 4), memcpy(Cv, C0, c.nc * 4);
        if (sum) {
            d->gemm_batched_sum_bf16(d, c.ta, c.tb, c.M, c.N, c.K, alpha, A, c.lda, c.sa, B,
                                     c.ldb, c.sb, beta, C, c.ldc, c.batch);
            d->gemm_half = 2;
            d->gemm_batched_sum(d, c.ta, c.tb, c.M, c.N, c.K, alpha, Af, c.lda, c.sa, Bf,
                                c.ldb, c.sb, beta, Cv, c.ldc, c.batch);
        } else {
            d->gemm_batched_bf16(d, c.ta, c.tb, c.M, c.N, c.K, alpha, A, c.lda, c.sa, B, c.ldb,
                                 c.sb, beta, C, c.ldc, c.sc, c.batch);
            d->gemm_half = 2;
            d->gemm_batched(d, c.ta, c.tb, c.M, c.N, c.K, alpha, Af, c.lda, c.sa, Bf, c.ldb,
                            c.sb, beta, Cv, c.ldc, c.sc, c.batch);
        }
        d->gemm_half = 0;
        int items = sum ? 1 : c.batch;
        for (int i = 0; i < items; i++)
            for (int m = 0; m < c.M; m++)
                for (int n = 0; n < c.N; n++) {
                    double s = 0, abs_s = 0;
                    for (int j = sum ? 0 : i; j < (sum ? c.batch : i + 1); j++)
                        ref_elem(&c, Af, Bf, j, m, n, &s, &abs_s);
                    size_t e = i * c.sc + (size_t)m * c.ldc + n;
                    double want = alpha * s + beta * C0[e];
                    // K·u per item's sum (and the batch's sums, summed), the alpha*s and
                    // beta*C adds: one rounding each
                    double bound = ((double)c.K * c.batch + 2) * 0x1p-24 *
                                   (alpha * abs_s + fabs(beta * C0[e])) + 1e-30;
                    double err = fabs(C[e] - want);
                    if (err > bound)
                        fail_msg("%s %d: C[%d](%d,%d) = %.9g, float64 %.9g: error %.3g over the "
                                 "bound %.3g (M %d N %d K %d batch %d ta %d tb %d sa %zu)",
                                 sum ? "gemm_batched_sum_bf16" : "gemm_batched_bf16", idx, i, m,
                                 n, C[e], want, err, bound, c.M, c.N, c.K, c.batch, c.ta, c.tb,
                                 c.sa);
                    if (err / bound > most) most = err / bound;
                }
        for (int i = 0; i < items; i++)  // the views path, bit for bit
            for (int m = 0; m < c.M; m++)
                same_bits(sum ? "gemm_batched_sum_bf16 against the views"
                              : "gemm_batched_bf16 against the views",
                          C + i * c.sc + (size_t)m * c.ldc, Cv + i * c.sc + (size_t)m * c.ldc,
                          (size_t)c.N * 4);
        free(A), free(B), free(Af), free(Bf), free(C0), free(C), free(Cv);
        d->destroy(d);
    }
    printf("bf16 gemms: largest error %.3f of the bound\n", most);
}

// gemm_batched_bf16_h (C in bf16): bit for bit gemm_batched_bf16 into an fp32 copy widened
// from C, then rounded (dt_f32_to_bf16), on fresh shapes: 1-3 threads, batches that do and
// do not divide by the threads (the last items cut into bands), small calls, the packed
// narrow path (N < 128 with a shared A), transposes, beta 0 and 1, padded leading dimensions
static void test_gemm_bf16_h_gives_the_bits_of_the_fp32_gemm_rounded(void **state) {
    tu_fixture *f = *state;
    if (!cpu_has_bf16()) skip();
    for (int idx = 0; idx < 24; idx++) {
        dt_device *d = dt_device_cpu_create(idx >= 16 && idx < 20 ? 2 + idx % 2 : 1 + idx % 3);
        assert_non_null(d->gemm_batched_bf16_h);
        call c = make_call(&f->rng, 0, idx % 16);
        if (idx >= 16 && idx < 20) {  // parallel, 5 items on 2-3 threads: the last cut in bands
            c.batch = 5, c.M = tu_int(&f->rng, 60, 140), c.K = tu_int(&f->rng, 30, 80);
            c.lda = (c.ta ? c.M : c.K) + 1, c.ldb = (c.tb ? c.K : c.N) + 2;
            size_t a1 = (size_t)(c.ta ? c.K : c.M) * c.lda;
            size_t b1 = (size_t)(c.tb ? c.N : c.K) * c.ldb;
            c.sa = c.sa ? a1 + 1 : 0, c.sb = b1 + 3;
            c.na = c.sa * c.batch + a1, c.nb = c.sb * c.batch + b1;
        }
        c.sc = (size_t)c.M * c.ldc + (size_t)tu_int(&f->rng, 0, 5);
        c.nc = c.sc * c.batch;
        float alpha = idx % 5 == 0 ? 0.5f : 1.0f, beta = idx % 2 ? 1.0f : 0.0f;
        uint16_t *A = malloc(c.na * 2), *B = malloc(c.nb * 2), *C = malloc(c.nc * 2);
        uint16_t *Cw = malloc(c.nc * 2);
        float *Cf = malloc(c.nc * 4);
        for (size_t i = 0; i < c.na; i++) A[i] = rand_half(&f->rng, 2, -1, 1);
        for (size_t i = 0; i < c.nb; i++) B[i] = rand_half(&f->rng, 2, -1, 1);
        for (size_t i = 0; i < c.nc; i++) C[i] = rand_half(&f->rng, 2, -1, 1);
        widen(2, C, Cf, c.nc);
        memcpy(Cw, C, c.nc * 2);
        d->gemm_batched_bf16_h(d, c.ta, c.tb, c.M, c.N, c.K, alpha, A, c.lda, c.sa, B, c.ldb,
                               c.sb, beta, C, c.ldc, c.sc, c.batch);
        d->gemm_batched_bf16(d, c.ta, c.tb, c.M, c.N, c.K, alpha, A, c.lda, c.sa, B, c.ldb,
                             c.sb, beta, Cf, c.ldc, c.sc, c.batch);
        for (int i = 0; i < c.batch; i++)  // C's rows; the gaps between them stay as they were
            for (int m = 0; m < c.M; m++) {
                size_t o = i * c.sc + (size_t)m * c.ldc;
                narrow(2, Cf + o, Cw + o, (size_t)c.N);
            }
        if (memcmp(C, Cw, c.nc * 2) != 0) {
            size_t e = 0;
            while (C[e] == Cw[e]) e++;
            fail_msg("gemm_batched_bf16_h %d: element %zu is 0x%04x, the fp32 gemm rounded "
                     "0x%04x (M %d N %d K %d batch %d ta %d tb %d sa %zu threads %d beta %g)",
                     idx, e, C[e], Cw[e], c.M, c.N, c.K, c.batch, c.ta, c.tb, c.sa, d->threads,
                     beta);
        }
        free(A), free(B), free(C), free(Cw), free(Cf);
        d->destroy(d);
    }
}

// gemm_col2im_bf16 (a conv's backward-data pass): bit for bit gemm_batched_bf16 into fp32
// columns, then col2im_bf16, on fresh conv shapes (1x1 to 4x4 windows, strides 1-3, padding,
// narrow outputs that take the packed path), 1-3 threads, n that does and does not divide
// by the threads, set and add
static void test_gemm_col2im_bf16_gives_the_bits_of_gemm_then_col2im(void **state) {
    tu_fixture *f = *state;
    if (!cpu_has_bf16()) skip();
    for (int rep = 0; rep < 16; rep++) {
        dt_device *d = dt_device_cpu_create(1 + rep % 3);
        assert_non_null(d->gemm_col2im_bf16);
        int n = tu_int(&f->rng, 1, 5), C = tu_int(&f->rng, 1, 24), OC = tu_int(&f->rng, 1, 40);
        int H = tu_int(&f->rng, 3, 30), W = rep % 2 ? H : tu_int(&f->rng, 3, 30);
        int KH = tu_int(&f->rng, 1, 4), KW = rep % 2 ? KH : tu_int(&f->rng, 1, 4);
        int stride = tu_int(&f->rng, 1, 3), pad = tu_int(&f->rng, 0, 2), set = rep % 2;
        if (rep >= 12) n = 5, C = 32, OC = 48, H = W = 20, KH = KW = 3, stride = 1, pad = 1;
        int OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1;
        if (OH <= 0 || OW <= 0) {  // no output for this draw (the device is not leaked)
            d->destroy(d);
            continue;
        }
        int K = C * KH * KW, N = OH * OW;
        size_t nw = (size_t)OC * K, ndy = (size_t)n * OC * N, nx = (size_t)n * C * H * W;
        uint16_t *w = malloc(nw * 2), *dy = malloc(ndy * 2), *dx = malloc(nx * 2);
        uint16_t *dxw = malloc(nx * 2);
        float *col = malloc((size_t)n * K * N * 4);
        for (size_t i = 0; i < nw; i++) w[i] = rand_half(&f->rng, 2, -1, 1);
        for (size_t i = 0; i < ndy; i++) dy[i] = rand_half(&f->rng, 2, -1, 1);
        for (size_t i = 0; i < nx; i++) dx[i] = rand_half(&f->rng, 2, -1, 1);
        memcpy(dxw, dx, nx * 2);
        d->gemm_col2im_bf16(d, K, N, OC, w, dy, (size_t)OC * N, n, C, H, W, KH, KW, stride, pad,
                            dx, set);
        d->gemm_batched_bf16(d, 1, 0, K, N, OC, 1.0f, w, K, 0, dy, N, (size_t)OC * N, 0.0f, col,
                             N, (size_t)K * N, n);
        d->col2im_bf16(d, col, n, C, H, W, KH, KW, stride, pad, dxw, set);
        if (memcmp(dx, dxw, nx * 2) != 0) {
            size_t e = 0;
            while (dx[e] == dxw[e]) e++;
            fail_msg("gemm_col2im_bf16 %d: dx[%zu] is 0x%04x, gemm then col2im 0x%04x (n %d C %d "
                     "OC %d H %d W %d K %dx%d stride %d pad %d set %d threads %d)",
                     rep, e, dx[e], dxw[e], n, C, OC, H, W, KH, KW, stride, pad, set,
                     d->threads);
        }
        free(w), free(dy), free(dx), free(dxw), free(col);
        d->destroy(d);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bn_h_fp16),
        cmocka_unit_test(test_bn_h_bf16),
        cmocka_unit_test(test_conv_ops_present_exactly_where_the_cpu_multiplies_bf16),
        cmocka_unit_test(test_im2col_col2im_bf16_give_the_fp32_bits),
        cmocka_unit_test(test_bf16_gemms_within_fp32_accumulation_and_as_the_views_path),
        cmocka_unit_test(test_gemm_bf16_h_gives_the_bits_of_the_fp32_gemm_rounded),
        cmocka_unit_test(test_gemm_col2im_bf16_gives_the_bits_of_gemm_then_col2im),
    };
    return cmocka_run_group_tests(tests, tu_fixture_setup, tu_fixture_teardown);
}
