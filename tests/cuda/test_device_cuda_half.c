// test_device_cuda_half.c — the cuda device's half-precision convolution primitives and its
// fused batch norm against the cpu device (nn/device.h im2col_bf16 on fp16 and bf16 bits,
// col2im_h, gemm_batched_h with fp32 and half C, gemm_batched_sum_h, bn_fused_forward_train,
// bn_fused_backward), on fresh random inputs and shapes from ResNet-50's layers scaled down.
// The reference is the cpu device's fp32 primitive on the widened half inputs (and, for the
// fusions, the unfused fp32 ops in order: bn, add, relu), so the only differences allowed
// are the fp32 sums' order (K*2^-23-type bounds, as test_device_cuda.c states them) and the
// one rounding to half of each output: u = 2^-8 (bf16) or 2^-11 (fp16) of the size of its
// terms, counted twice (both sides may round, the reference before narrowing does not).
// Bit copies (im2col) and single adds (the residual gradient) are exact.
// Not here: the bf16 storage ops checked bit for bit against the fp32 kernels
// (test_device_cuda_nn.c), the gemms on fp32 views (test_device_cuda.c).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "dt.h"
#include "kernels.h"

static size_t L8(size_t n) { return n < 8 ? 8 : n; }
static const char *FMT[] = {"fp32", "fp16", "bf16"};
// one rounding to the format, relative (bf16 keeps 8 significant bits, fp16 11)
static double unit(int fmt) { return fmt == 2 ? 1.0 / 256 : fmt == 1 ? 1.0 / 2048 : 0.0; }

static uint16_t *rand_half(cc_ctx *t, int fmt, size_t n, float lo, float hi) {
    uint16_t *h = mallocCheck(L8(n) * 2);
    for (size_t i = 0; i < L8(n); i++) h[i] = dt_half_store(fmt, cc_unif(t, lo, hi));
    return h;
}
static float *widen(int fmt, const uint16_t *h, size_t n) {
    float *f = mallocCheck(L8(n) * 4);
    for (size_t i = 0; i < L8(n); i++) f[i] = dt_half_load(fmt, h[i]);
    return f;
}
static void *gup(dt_device *g, const void *h, size_t bytes) {
    void *p = g->alloc(g, bytes ? bytes : 4);
    if (h && bytes) g->from_host(g, p, h, bytes);
    return p;
}
// a device tensor of fmt (0 float) back as floats
static float *gdown(dt_device *g, int fmt, const void *p, size_t n) {
    if (!fmt) return cc_host_copy(g, p, L8(n) * 4);
    uint16_t *h = cc_host_copy(g, p, L8(n) * 2);
    float *f = widen(fmt, h, n);
    free(h);
    return f;
}
// host floats as a device tensor of fmt (the values already representable)
static void *gup_fmt(dt_device *g, int fmt, const float *f, size_t n) {
    if (!fmt) return gup(g, f, L8(n) * 4);
    uint16_t *h = mallocCheck(L8(n) * 2);
    for (size_t i = 0; i < L8(n); i++) h[i] = dt_half_store(fmt, f[i]);
    void *p = gup(g, h, L8(n) * 2);
    free(h);
    return p;
}
static float *rand_fmt(cc_ctx *t, int fmt, size_t n, float lo, float hi) {
    float *f = cc_rand(t, L8(n), lo, hi);
    for (size_t i = 0; fmt && i < L8(n); i++) f[i] = dt_half_load(fmt, dt_half_store(fmt, f[i]));
    return f;
}

// ---- im2col on half bits, col2im_h ----

typedef struct { int B, C, H, W, KH, KW, s, p; } cshape;
static const cshape CONV[] = {
    {2, 3, 37, 41, 7, 7, 2, 3},  {3, 5, 17, 13, 3, 3, 1, 1}, {2, 4, 9, 11, 1, 1, 2, 0},
    {2, 3, 8, 10, 3, 3, 3, 0},   {1, 2, 3, 3, 5, 5, 1, 0},   {0, 3, 5, 5, 3, 3, 1, 1},
    {4, 32, 56, 56, 3, 3, 1, 1},
};

static void conv_half_case(cc_ctx *t, const cshape *s, int fmt) {
    dt_device *c = t->cpu, *g = t->gpu;
    int OH = (s->H + 2 * s->p - s->KH) / s->s + 1, OW = (s->W + 2 * s->p - s->KW) / s->s + 1;
    size_t nx = (size_t)s->B * s->C * s->H * s->W;
    size_t ncol = OH > 0 && OW > 0 ? (size_t)s->B * s->C * s->KH * s->KW * OH * OW : 0;
    char nm[200], sh[96];
    snprintf(sh, sizeof sh, "%s B=%d C=%d %dx%d k%dx%d s%d p%d", FMT[fmt], s->B, s->C, s->H,
             s->W, s->KH, s->KW, s->s, s->p);
#define A_ s->B, s->C, s->H, s->W, s->KH, s->KW, s->s, s->p
    // im2col: the cpu's fp32 im2col of the widened x, narrowed, is the bits to copy; the
    // tail past ncol (all of it when no window fits) must stay as it was
    uint16_t *hx = rand_half(t, fmt, nx, -2, 2), *hc = rand_half(t, fmt, ncol, -2, 2);
    float *fx = widen(fmt, hx, nx), *fc = widen(fmt, hc, ncol);
    uint16_t *want = mallocCheck(L8(ncol) * 2);
    c->im2col(c, fx, A_, fc);
    for (size_t i = 0; i < L8(ncol); i++) want[i] = dt_half_store(fmt, fc[i]);
    void *gx = gup(g, hx, L8(nx) * 2), *gc = gup(g, hc, L8(ncol) * 2);
    g->im2col_bf16(g, gx, A_, gc);
    uint16_t *got = cc_host_copy(g, gc, L8(ncol) * 2);
    snprintf(nm, sizeof nm, "im2col (half bits) %s (copies: exact)", sh);
    cc_cmp_bytes(t, nm, got, want, L8(ncol) * 2);
    free(got), free(want), free(fc), free(hc);
    g->free(g, gc);

    // col2im_h: fp32 col, half x; each cell adds <= ceil(KH/s)*ceil(KW/s) entries (+1 its
    // old value) in fp32 on both sides, then the device rounds once
    double terms = (s->KH + s->s - 1) / s->s * ((s->KW + s->s - 1) / s->s) + 1;
    float *col = cc_rand(t, L8(ncol), -1, 1), *acol = mallocCheck(L8(ncol) * 4);
    for (size_t i = 0; i < L8(ncol); i++) acol[i] = fabsf(col[i]);
    gc = gup(g, col, L8(ncol) * 4);
    for (int set = 0; set < 2; set++) {
        float *wantf = widen(fmt, hx, nx), *mag32 = widen(fmt, hx, nx);
        double *mag = mallocCheck(L8(nx) * sizeof(double));
        for (size_t i = 0; i < L8(nx); i++) mag32[i] = fabsf(mag32[i]);
        (set ? c->col2im_set : c->col2im)(c, col, A_, wantf);
        (set ? c->col2im_set : c->col2im)(c, acol, A_, mag32);
        for (size_t i = 0; i < L8(nx); i++) mag[i] = mag32[i] + (fmt == 1 ? 1.0 / 16384 : 0.0);
        void *gx2 = gup(g, hx, L8(nx) * 2);
        g->col2im_h(g, fmt, gc, A_, gx2, set);
        float *gotf = gdown(g, fmt, gx2, nx);
        snprintf(nm, sizeof nm, "col2im_h%s %s (fp32 sums, one rounding)", set ? " set" : "", sh);
        cc_cmp_close(t, nm, gotf, wantf, mag, L8(nx), terms * CC_EPS + 2 * unit(fmt));
        free(wantf), free(mag32), free(mag), free(gotf);
        g->free(g, gx2);
    }
#undef A_
    g->free(g, gc), g->free(g, gx);
    free(hx), free(fx), free(col), free(acol);
}

// ---- gemm_batched_h (C fp32 or half), gemm_batched_sum_h ----

typedef struct {
    int sum, c_half, ta, tb, M, N, K, batch, shared_a, pad;
    float alpha, beta;
} hcase;

static void gemm_h_case(cc_ctx *t, dt_device *g, int fmt, const hcase *k) {
    int M = k->M, N = k->N, K = k->K, nb = k->batch > 0 ? k->batch : 1;
    int lda = (k->ta ? M : K) + k->pad, ldb = (k->tb ? K : N) + k->pad, ldc = N + k->pad;
    if (lda < 1) lda = 1;
    if (ldb < 1) ldb = 1;
    size_t one_a = (size_t)(k->ta ? K : M) * lda, one_b = (size_t)(k->tb ? N : K) * ldb;
    size_t one_c = (size_t)M * ldc, sa = k->shared_a ? 0 : one_a + 3, sb = one_b + 7;
    size_t sc = k->sum ? 0 : one_c + 9, items = k->sum ? 1 : (size_t)nb;
    size_t na = (nb - 1) * sa + one_a + 1, nbb = (nb - 1) * sb + one_b + 1;
    size_t nc = (items - 1) * sc + one_c + 16;
    int cf = k->c_half ? fmt : 0;
    float *A = rand_fmt(t, fmt, na, -1, 1), *B = rand_fmt(t, fmt, nbb, -1, 1);
    float *C0 = rand_fmt(t, cf, nc, -1, 1), *want = mallocCheck(L8(nc) * 4);
    memcpy(want, C0, L8(nc) * 4);
    if (k->sum)
        t->cpu->gemm_batched_sum(t->cpu, k->ta, k->tb, M, N, K, k->alpha, A, lda, sa, B, ldb, sb,
                                 k->beta, want, ldc, k->batch);
    else
        t->cpu->gemm_batched(t->cpu, k->ta, k->tb, M, N, K, k->alpha, A, lda, sa, B, ldb, sb,
                             k->beta, want, ldc, sc, k->batch);
    void *ga = gup_fmt(g, fmt, A, na), *gb = gup_fmt(g, fmt, B, nbb), *gc = gup_fmt(g, cf, C0, nc);
    if (k->sum)
        g->gemm_batched_sum_h(g, fmt, k->ta, k->tb, M, N, K, k->alpha, ga, lda, sa, gb, ldb, sb,
                              k->beta, gc, ldc, k->batch);
    else
        g->gemm_batched_h(g, fmt, k->c_half, k->ta, k->tb, M, N, K, k->alpha, ga, lda, sa, gb,
                          ldb, sb, k->beta, gc, ldc, sc, k->batch);
    float *got = gdown(g, cf, gc, nc);
    // mag: |alpha| sum |a b| (over the batch for the sum) + |beta c|; untouched cells exact
    double *mag = mallocCheck(L8(nc) * sizeof(double));
    for (size_t i = 0; i < L8(nc); i++) mag[i] = fabs(C0[i]);
    for (size_t it = 0; it < items && k->batch > 0; it++)
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) {
                double s = 0.0;
                int i0 = k->sum ? 0 : (int)it, i1 = k->sum ? k->batch : (int)it + 1;
                for (int i = i0; i < i1; i++)
                    for (int q = 0; q < K; q++) {
                        const float *Ai = A + i * sa, *Bi = B + i * sb;
                        float av = k->ta ? Ai[(size_t)q * lda + m] : Ai[(size_t)m * lda + q];
                        float bv = k->tb ? Bi[(size_t)n * ldb + q] : Bi[(size_t)q * ldb + n];
                        s += fabs((double)av * bv);
                    }
                size_t ci = it * sc + (size_t)m * ldc + n;
                mag[ci] = fabs(k->alpha) * s + (k->beta == 0.0f ? 0.0 : fabs(k->beta * C0[ci]));
                if (cf == 1) mag[ci] += 1.0 / 16384;  // fp16's subnormal spacing
            }
    if (k->batch <= 0 && k->sum)
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++)
                mag[(size_t)m * ldc + n] = fabs(k->beta * C0[(size_t)m * ldc + n]);
    char nm[220];
    snprintf(nm, sizeof nm, "%s %s%s %c%c M=%d N=%d K=%d batch=%d%s ld+%d alpha=%g beta=%g",
             k->sum ? "gemm_batched_sum_h" : "gemm_batched_h", FMT[fmt],
             k->sum ? "" : (k->c_half ? " C half" : " C fp32"), k->ta ? 'T' : 'N',
             k->tb ? 'T' : 'N', M, N, K, k->batch, k->shared_a ? " A shared" : "", k->pad,
             k->alpha, k->beta);
    double tol = (K + (k->sum ? k->batch : 0) + 2) * CC_EPS + 2 * unit(cf);
    cc_cmp_close(t, nm, got, want, mag, L8(nc), tol);
    g->free(g, ga), g->free(g, gb), g->free(g, gc);
    free(A), free(B), free(C0), free(want), free(got), free(mag);
}

void cc_check_half_conv(cc_ctx *t) {
    for (int fmt = 1; fmt <= 2; fmt++) {
        for (size_t i = 0; i < sizeof CONV / sizeof CONV[0]; i++) conv_half_case(t, &CONV[i], fmt);
        // a random shape too, so every run sees a new one
        cshape r = {cc_int(t, 1, 4), cc_int(t, 1, 9), cc_int(t, 5, 30), cc_int(t, 5, 30), 3, 3,
                    cc_int(t, 1, 2), cc_int(t, 0, 1)};
        conv_half_case(t, &r, fmt);
        const hcase G[] = {
            // conv forward, y = w col_b straight into half (A shared, beta 0)
            {0, 1, 0, 0, 64, 196, 288, 8, 1, 0, 1.0f, 0.0f},
            // 1x1 dx = w^T dy into half, adding (beta 1) and overwriting
            {0, 1, 1, 0, 96, 49, 64, 6, 1, 0, 1.0f, 1.0f},
            {0, 1, 1, 0, 96, 49, 64, 6, 1, 0, 1.0f, 0.0f},
            // dcol = w^T dy in fp32; every transpose, gaps between the C_i
            {0, 0, 1, 0, 72, 100, 32, 3, 1, 2, 1.0f, 0.0f},
            {0, 0, 0, 1, 19, 45, 33, 5, 0, 1, -0.5f, 1.0f},
            {0, 1, 1, 1, 19, 45, 33, 5, 0, 3, 0.7f, -1.3f},
            // K = 0 and alpha = 0: C = beta*C, in half too
            {0, 1, 0, 0, 5, 7, 0, 2, 0, 1, 1.0f, 0.5f},
            {0, 1, 1, 1, 9, 10, 11, 2, 0, 0, 0.0f, 2.0f},
            // dW = sum_b dy_b col_b^T: packed C (scratch groups) and padded C (item by item)
            {1, 0, 0, 1, 64, 576, 196, 8, 0, 0, 1.0f, 1.0f},
            {1, 0, 0, 1, 13, 17, 29, 4, 0, 3, 0.5f, 0.0f},
            {1, 0, 0, 0, 9, 10, 11, 0, 0, 0, 1.0f, 0.5f},
            // a random shape
            {0, 1, 0, 0, cc_int(t, 1, 80), cc_int(t, 1, 300), cc_int(t, 1, 300), cc_int(t, 1, 6),
             1, 0, 1.0f, 0.0f},
        };
        for (size_t i = 0; i < sizeof G / sizeof G[0]; i++) {
            gemm_h_case(t, t->gpu, fmt, &G[i]);
            if (i < 2) gemm_h_case(t, t->det, fmt, &G[i]);  // pedantic math mode too
        }
    }
}

// ---- fused batch norm (+ residual add + relu) against bn, add, relu on the cpu ----

typedef struct { int B, C, HW; } bshape;
static const bshape BN[] = {{4, 3, 49}, {1, 5, 1}, {3, 7, 25}, {0, 3, 5}, {16, 64, 3136},
                            {2, 4, 9001}, {128, 8, 49}};

static void bn_fused_case(cc_ctx *t, bshape s, int fmt, int relu, int res, int inplace) {
    dt_device *c = t->cpu, *g = t->gpu;
    int B = s.B, C = s.C, HW = s.HW;
    size_t n = (size_t)B * C * HW, ln = L8(n), lc = L8((size_t)C), cnt = (size_t)B * HW;
    const float eps = 1e-5f, mom = 0.1f;
    char nm[220], sh[120];
    snprintf(sh, sizeof sh, "%s B=%d C=%d HW=%d%s%s%s", FMT[fmt], B, C, HW, res ? " +res" : "",
             relu ? " relu" : "", inplace ? " in place" : "");
    // channel c: offset + scale*U(-1,1), so the statistics' shift matters
    float *x = mallocCheck(ln * 4);
    for (size_t i = 0; i < ln; i++) x[i] = 0.0f;
    for (int ch = 0; ch < C; ch++) {
        float off = cc_unif(t, -3, 3), sc = cc_unif(t, 0.1f, 2);
        for (size_t b = 0; b < (size_t)B; b++)
            for (int i = 0; i < HW; i++) {
                float v = off + sc * cc_unif(t, -1, 1);
                x[(b * C + ch) * HW + i] = fmt ? dt_half_load(fmt, dt_half_store(fmt, v)) : v;
            }
    }
    float *r = rand_fmt(t, fmt, n, -1, 1), *par = cc_rand(t, 6 * lc, 0.5f, 1.5f);
    float *par_c = mallocCheck(6 * lc * 4), *y0 = rand_fmt(t, fmt, n, -1, 1);
    memcpy(par_c, par, 6 * lc * 4);
    // reference: bn on the cpu, then + res, then relu, in fp32
    float *want = mallocCheck(ln * 4);
    memcpy(want, y0, ln * 4);
    c->bn_forward_train(c, x, B, C, HW, par_c, par_c + lc, eps, mom, par_c + 2 * lc,
                        par_c + 3 * lc, par_c + 4 * lc, par_c + 5 * lc, want);
    for (size_t i = 0; i < n; i++) {
        if (res) want[i] = want[i] + r[i];
        if (relu) want[i] = dt_relu(want[i]);
    }
    void *gx = gup_fmt(g, fmt, x, n), *gr = gup_fmt(g, fmt, r, n);
    void *gy = inplace ? gx : gup_fmt(g, fmt, y0, n);
    float *gp = gup(g, par, 6 * lc * 4);
    g->bn_fused_forward_train(g, fmt, gx, res ? gr : NULL, B, C, HW, gp, gp + lc, eps, mom,
                              gp + 2 * lc, gp + 3 * lc, gp + 4 * lc, gp + 5 * lc, gy, relu);
    float *got = gdown(g, fmt, gy, n), *gotp = cc_host_copy(g, gp, 6 * lc * 4);
    // sizes of the terms: mean|x| and the unbiased variance per channel
    double *mabs = callocCheck(lc, sizeof(double)), *uvar = callocCheck(lc, sizeof(double));
    for (size_t i = 0; i < n; i++) mabs[(i / HW) % C] += fabs(x[i]) / cnt;
    for (size_t i = 0; i < n; i++) {
        size_t ch = (i / HW) % C;
        uvar[ch] += pow(x[i] - par_c[4 * lc + ch], 2) / (cnt > 1 ? cnt - 1 : 1);
    }
    double *mag = mallocCheck(ln * sizeof(double));
    for (size_t ci = 0; ci < lc; ci++) mag[ci] = cnt && ci < (size_t)C ? mabs[ci] : fabs(par[4 * lc + ci]);
    snprintf(nm, sizeof nm, "bn_fused_forward_train %s save_mean (2 ulp of mean|x|)", sh);
    cc_cmp_close(t, nm, gotp + 4 * lc, par_c + 4 * lc, mag, lc, 2 * CC_EPS);
    snprintf(nm, sizeof nm, "bn_fused_forward_train %s save_invstd (2 ulp)", sh);
    cc_cmp_close(t, nm, gotp + 5 * lc, par_c + 5 * lc, NULL, lc, 2 * CC_EPS);
    for (size_t ci = 0; ci < lc; ci++)
        mag[ci] = (1 - mom) * fabs(par[3 * lc + ci]) + mom * (ci < (size_t)C ? uvar[ci] : 0);
    snprintf(nm, sizeof nm, "bn_fused_forward_train %s running_var (unbiased)", sh);
    cc_cmp_close(t, nm, gotp + 3 * lc, par_c + 3 * lc, mag, lc, 8 * CC_EPS);
    // y: the cpu's 8-ulp bn bound (test_device_cuda_nn.c) + the add's rounding + the
    // device's one rounding to half
    for (size_t i = 0; i < ln; i++) {
        size_t ch = (i / (HW ? HW : 1)) % (C ? C : 1);
        mag[i] = i < n ? fabs(par[ch]) * par_c[5 * lc + ch] * (fabs(x[i]) + mabs[ch]) +
                             fabs(par[lc + ch]) + (res ? fabs(r[i]) : 0)
                       : fabs(want[i]);
        if (fmt == 1) mag[i] += 1.0 / 16384;
    }
    snprintf(nm, sizeof nm, "bn_fused_forward_train %s y", sh);
    cc_cmp_close(t, nm, got, want, mag, ln, 10 * CC_EPS + 2 * unit(fmt));
    free(got), free(gotp), free(want);

    // backward from the cpu's saved statistics: y with zeros (relu's mask), dy, old dx, dres
    float *yb = rand_fmt(t, fmt, n, -1, 1), *dy = rand_fmt(t, fmt, n, -1, 1);
    for (size_t i = 0; i < ln; i++) yb[i] = dt_relu(yb[i]);
    for (int set = 0; set < 2; set++) {
        int dx_is_dy = inplace && set;  // dx overwrites dy in place
        float *dx0 = rand_fmt(t, fmt, n, -1, 1), *dr0 = rand_fmt(t, fmt, n, -1, 1);
        float *gz = mallocCheck(ln * 4), *wdx = mallocCheck(ln * 4), *wp = mallocCheck(2 * lc * 4);
        memcpy(wdx, dx_is_dy ? dy : dx0, ln * 4);
        memcpy(wp, par + 4 * lc, 2 * lc * 4);  // dgamma, dbeta start from random values
        for (size_t i = 0; i < ln; i++) gz[i] = i < n ? dt_bn_fused_dz(yb[i], dy[i], relu) : 0;
        (set ? c->bn_backward_set : c->bn_backward)(c, gz, x, B, C, HW, par_c, par_c + 4 * lc,
                                                    par_c + 5 * lc, wdx, wp, wp + lc);
        float *stats = gup(g, par_c + 4 * lc, 2 * lc * 4), *gdp = gup(g, par + 4 * lc, 2 * lc * 4);
        void *gyb = gup_fmt(g, fmt, yb, n), *gdy = gup_fmt(g, fmt, dy, n);
        void *gdx = dx_is_dy ? gdy : gup_fmt(g, fmt, dx0, n), *gdr = gup_fmt(g, fmt, dr0, n);
        void *gxb = gup_fmt(g, fmt, x, n);  // x again: the in-place forward overwrote gx
        g->bn_fused_backward(g, fmt, gyb, gdy, gxb, B, C, HW, gp, stats,
                             stats + lc, gdx, set, res ? gdr : NULL, set, gdp, gdp + lc, relu);
        float *gotdx = gdown(g, fmt, gdx, n), *gotp2 = cc_host_copy(g, gdp, 2 * lc * 4);
        double *sg = callocCheck(lc, sizeof(double)), *sgx = callocCheck(lc, sizeof(double));
        const float *sm = par_c + 4 * lc, *si = par_c + 5 * lc;
        for (size_t i = 0; i < n; i++) {
            size_t ch = (i / HW) % C;
            sg[ch] += fabs(gz[i]), sgx[ch] += fabs(gz[i] * (x[i] - sm[ch]) * si[ch]);
        }
        for (size_t i = 0; i < ln; i++) {
            size_t ch = (i / (HW ? HW : 1)) % (C ? C : 1);
            double xh = i < n ? fabs((x[i] - sm[ch]) * si[ch]) : 0;
            double terms = i < n ? fabs(par[ch]) * si[ch] *
                                       (fabs(gz[i]) + (sg[ch] + xh * sgx[ch]) / (cnt ? cnt : 1))
                                 : 0;
            mag[i] = (set && i < n ? 0 : fabs(dx_is_dy ? dy[i] : dx0[i])) + terms;
            if (fmt == 1) mag[i] += 1.0 / 16384;
        }
        snprintf(nm, sizeof nm, "bn_fused_backward%s %s dx", set ? " set" : "", sh);
        cc_cmp_close(t, nm, gotdx, wdx, mag, ln, 8 * CC_EPS + 2 * unit(fmt));
        for (size_t ci = 0; ci < lc; ci++) mag[ci] = fabs(par[4 * lc + ci]) + sgx[ci];
        snprintf(nm, sizeof nm, "bn_fused_backward%s %s dgamma", set ? " set" : "", sh);
        cc_cmp_close(t, nm, gotp2, wp, mag, lc, 2 * CC_EPS);
        for (size_t ci = 0; ci < lc; ci++) mag[ci] = fabs(par[5 * lc + ci]) + sg[ci];
        snprintf(nm, sizeof nm, "bn_fused_backward%s %s dbeta", set ? " set" : "", sh);
        cc_cmp_close(t, nm, gotp2 + lc, wp + lc, mag, lc, 2 * CC_EPS);
        if (res) {  // dres = (set ? 0 : dres) + g: one add, rounded once: exact bits
            float *gotr = gdown(g, fmt, gdr, n), *wr = mallocCheck(ln * 4);
            for (size_t i = 0; i < ln; i++) {
                float v = i >= n ? dr0[i] : set ? gz[i] : dr0[i] + gz[i];
                wr[i] = fmt ? dt_half_load(fmt, dt_half_store(fmt, v)) : v;
            }
            snprintf(nm, sizeof nm, "bn_fused_backward%s %s dres (one add: exact)",
                     set ? " set" : "", sh);
            cc_cmp_exact(t, nm, gotr, wr, ln);
            free(gotr), free(wr);
        }
        g->free(g, stats), g->free(g, gdp), g->free(g, gyb), g->free(g, gdy), g->free(g, gdr);
        g->free(g, gxb);
        if (!dx_is_dy) g->free(g, gdx);
        free(dx0), free(dr0), free(gz), free(wdx), free(wp), free(gotdx), free(gotp2), free(sg),
            free(sgx);
    }
    g->free(g, gx), g->free(g, gr), g->free(g, gp);
    if (!inplace) g->free(g, gy);
    free(x), free(r), free(par), free(par_c), free(y0), free(yb), free(dy), free(mabs),
        free(uvar), free(mag);
}

void cc_check_bn_fused(cc_ctx *t) {
    const int variants[][2] = {{1, 0}, {1, 1}, {0, 1}, {0, 0}};  // relu, res
    for (size_t i = 0; i < sizeof BN / sizeof BN[0]; i++)
        for (int fmt = 0; fmt <= 2; fmt++)
            for (int v = 0; v < 4; v++) {
                if (BN[i].B * BN[i].HW > 100000 && v > 1) continue;  // the big shape twice
                bn_fused_case(t, BN[i], fmt, variants[v][0], variants[v][1], 0);
            }
    bshape r = {cc_int(t, 1, 8), cc_int(t, 1, 20), cc_int(t, 1, 400)};
    for (int fmt = 0; fmt <= 2; fmt++) bn_fused_case(t, r, fmt, 1, 1, 1);  // y == x, dx == dy
}
