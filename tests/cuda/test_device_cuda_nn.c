// test_device_cuda_nn.c — the cuda device's network primitives against the cpu device:
// im2col, col2im (adding and overwriting), per-channel bias, batch normalisation (train
// with running statistics, eval, backward adding and overwriting; and on fp16 and bf16
// storage against the same device's fp32 kernels, bit for bit), max pooling (winner and
// argmax exact, ties and NaN included), adaptive average pooling, dropout (mask exact) and
// softmax cross-entropy. Sums are checked against n*eps*sum|terms| bounds, where mag (the
// size of the terms) is the cpu device run on absolute values; one-rounding results exact.
// Every buffer holds at least 8 elements, so an empty case still has something to compare
// (it must come back untouched).
// Not here: elementwise ops (_elem.c), gemm and memory (test_device_cuda.c).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "dt.h"
#include "kernels.h"

static size_t at_least8(size_t n) { return n < 8 ? 8 : n; }

static double *to_double_abs(const float *x, size_t n) {
    double *d = mallocCheck(at_least8(n) * sizeof(double));
    for (size_t i = 0; i < n; i++) d[i] = fabs(x[i]);
    return d;
}

static float *abs_copy(const float *x, size_t n) {
    float *a = mallocCheck(at_least8(n) * sizeof(float));
    for (size_t i = 0; i < n; i++) a[i] = fabsf(x[i]);
    return a;
}

// ---- im2col, col2im, col2im_set ----

typedef struct { int B, C, H, W, KH, KW, s, p; } conv_shape;
static const conv_shape CONV[] = {
    {2, 3, 37, 41, 7, 7, 2, 3},   // ResNet's stem, odd sizes
    {3, 5, 17, 13, 3, 3, 1, 1},   // 3x3 "same"
    {2, 4, 9, 11, 1, 1, 2, 0},    // 1x1 stride 2 (the downsample path)
    {2, 3, 8, 10, 3, 3, 3, 0},    // stride = kernel: no overlap, cells nobody reads
    {2, 3, 5, 6, 3, 3, 1, 2},     // pad 2: corner windows mostly padding
    {1, 1, 1, 1, 1, 1, 1, 0},     // one pixel
    {1, 2, 3, 3, 5, 5, 1, 0},     // kernel larger than the image: no window
    {0, 3, 5, 5, 3, 3, 1, 1},     // empty batch
    {4, 32, 56, 56, 3, 3, 1, 1},  // 7.2 M column entries: more than one grid
};

static void conv_case(cc_ctx *t, const conv_shape *s) {
    dt_device *c = t->cpu, *g = t->gpu;
    int OH = (s->H + 2 * s->p - s->KH) / s->s + 1, OW = (s->W + 2 * s->p - s->KW) / s->s + 1;
    size_t nx = (size_t)s->B * s->C * s->H * s->W;
    size_t ncol = OH > 0 && OW > 0 ? (size_t)s->B * s->C * s->KH * s->KW * OH * OW : 0;
    size_t lx = at_least8(nx), lc = at_least8(ncol);
    float *hx = cc_rand(t, lx, -1, 1), *hcol = cc_rand(t, lc, -1, 1);
    char nm[200], shape[96];
    snprintf(shape, sizeof shape, "B=%d C=%d %dx%d k%dx%d s%d p%d", s->B, s->C, s->H, s->W,
             s->KH, s->KW, s->s, s->p);
#define CONV_ARGS s->B, s->C, s->H, s->W, s->KH, s->KW, s->s, s->p

    cc_buf x = cc_new(t, g, hx, lx * 4), col = cc_new(t, g, hcol, lc * 4);
    c->im2col(c, x.c, CONV_ARGS, col.c), g->im2col(g, x.g, CONV_ARGS, col.g);
    snprintf(nm, sizeof nm, "im2col %s (copies: exact)", shape);
    cc_exact(t, nm, &col);
    cc_free(t, &col);

    // col2im adds up to ceil(KH/s)*ceil(KW/s) entries into each cell: each order is within
    // (terms)*2^-24 of the exact sum of |terms| (+1: the cell's old value)
    double tol = ((s->KH + s->s - 1) / s->s * ((s->KW + s->s - 1) / s->s) + 1) * CC_EPS;
    float *acol = abs_copy(hcol, lc);
    for (int set = 0; set < 2; set++) {
        if (set) hx[0] = NAN, hx[lx - 1] = NAN;  // overwritten: the NaNs must go
        cc_buf xs = cc_new(t, g, hx, lx * 4);
        col = cc_new(t, g, hcol, lc * 4);
        float *ax = abs_copy(hx, lx);
        if (set) {
            c->col2im_set(c, col.c, CONV_ARGS, xs.c), g->col2im_set(g, col.g, CONV_ARGS, xs.g);
            if (nx) c->col2im_set(c, acol, CONV_ARGS, ax);  // mag: the same sum of |col|
        } else {
            c->col2im(c, col.c, CONV_ARGS, xs.c), g->col2im(g, col.g, CONV_ARGS, xs.g);
            c->col2im(c, acol, CONV_ARGS, ax);  // mag: |x| + the sum of |col|
        }
        double *mag = to_double_abs(ax, lx);
        snprintf(nm, sizeof nm, "%s %s", set ? "col2im_set" : "col2im", shape);
        cc_close(t, nm, &xs, mag, tol);
        cc_free(t, &xs), cc_free(t, &col);
        free(ax), free(mag);
    }
#undef CONV_ARGS
    cc_free(t, &x);
    free(hx), free(hcol), free(acol);
}

// ---- per-channel bias: y (B,C,HW) ----

typedef struct { int B, C, HW; } bch;
static const bch BIAS[] = {{2, 3, 5},     {1, 1, 1},     {0, 4, 4},      {33, 1000, 1},
                           {3, 7, 257},   {8, 256, 1569}};

static void bias_case(cc_ctx *t, bch s) {
    dt_device *c = t->cpu, *g = t->gpu;
    size_t n = (size_t)s.B * s.C * s.HW, ln = at_least8(n), lc = at_least8((size_t)s.C);
    float *hy = cc_rand(t, ln, -1, 1), *hb = cc_rand(t, lc, -1, 1);
    char nm[160];
    cc_buf y = cc_new(t, g, hy, ln * 4), b = cc_new(t, g, hb, lc * 4);
    c->bias_add(c, y.c, b.c, s.B, s.C, s.HW), g->bias_add(g, y.g, b.g, s.B, s.C, s.HW);
    snprintf(nm, sizeof nm, "bias_add B=%d C=%d HW=%d (one add: exact)", s.B, s.C, s.HW);
    cc_exact(t, nm, &y);
    // db += sum_{b,hw} dy, in double on both: the orders differ by <= n*2^-53*sum|dy|, then
    // two roundings to float (the sum, the add): 2 ulp of |db| + sum|dy|
    c->bias_backward(c, y.c, s.B, s.C, s.HW, b.c), g->bias_backward(g, y.g, s.B, s.C, s.HW, b.g);
    double *mag = to_double_abs(hb, lc);
    float *yy = y.c;  // the cpu device's memory is host memory
    for (int bi = 0; bi < s.B; bi++)
        for (int ci = 0; ci < s.C; ci++)
            for (int i = 0; i < s.HW; i++) mag[ci] += fabs(yy[((size_t)bi * s.C + ci) * s.HW + i]);
    snprintf(nm, sizeof nm, "bias_backward B=%d C=%d HW=%d", s.B, s.C, s.HW);
    cc_close(t, nm, &b, mag, 2 * CC_EPS);
    cc_free(t, &y), cc_free(t, &b);
    free(hy), free(hb), free(mag);
}

void cc_check_conv_bias(cc_ctx *t) {
    for (size_t i = 0; i < sizeof CONV / sizeof CONV[0]; i++) conv_case(t, &CONV[i]);
    for (size_t i = 0; i < sizeof BIAS / sizeof BIAS[0]; i++) bias_case(t, BIAS[i]);
}

// ---- batch normalisation (Ioffe & Szegedy 2015), x (B,C,HW) ----

static const bch BN[] = {{4, 3, 49}, {1, 5, 1}, {3, 7, 25}, {0, 3, 5}, {16, 64, 3136},
                         {32, 4, 28001}};

// One case's host data: x, and per channel (lc = at least 8 entries) the parameters and
// the sizes of the terms, mean|x| and the unbiased variance, in double.
typedef struct {
    int B, C, HW;
    size_t n, ln, lc, cnt;  // elements, buffer length, channel buffer length, B*HW
    float *x, *par;         // par: gamma, beta, running mean, running var, 2 spare (lc each)
    double *mabs, *uvar;
    char sh[64];
} bn_data;

// Channel c of x is offset + scale*U(-1,1), so the shift by the first element matters.
static bn_data bn_make(cc_ctx *t, bch s) {
    bn_data d = {s.B, s.C, s.HW, 0, 0, 0, 0, NULL, NULL, NULL, NULL, ""};
    d.n = (size_t)s.B * s.C * s.HW, d.ln = at_least8(d.n), d.lc = at_least8((size_t)s.C);
    d.cnt = (size_t)s.B * s.HW;
    d.x = callocCheck(d.ln, sizeof(float));
    d.par = cc_rand(t, 6 * d.lc, 0.5f, 1.5f);
    d.mabs = callocCheck(d.lc, sizeof(double)), d.uvar = callocCheck(d.lc, sizeof(double));
    for (int c = 0; c < s.C; c++) {
        float off = cc_unif(t, -3, 3), sc = cc_unif(t, 0.1f, 2);
        double s1 = 0, s2 = 0, sa = 0;
        for (int b = 0; b < s.B; b++)
            for (int i = 0; i < s.HW; i++) {
                float v = off + sc * cc_unif(t, -1, 1);
                d.x[((size_t)b * s.C + c) * s.HW + i] = v;
                s1 += v, sa += fabs(v);
            }
        for (int b = 0; b < s.B; b++)
            for (int i = 0; i < s.HW; i++)
                s2 += pow(d.x[((size_t)b * s.C + c) * s.HW + i] - s1 / d.cnt, 2);
        d.mabs[c] = d.cnt ? sa / d.cnt : 0;
        d.uvar[c] = d.cnt > 1 ? s2 / (d.cnt - 1) : s2;
    }
    snprintf(d.sh, sizeof d.sh, "B=%d C=%d HW=%d", s.B, s.C, s.HW);
    return d;
}

static void bn_free(bn_data *d) { free(d->x), free(d->par), free(d->mabs), free(d->uvar); }

// channel of element i (0 for an empty shape)
static size_t bn_ch(const bn_data *d, size_t i) {
    return d->HW && d->C ? (i / d->HW) % d->C : 0;
}

// training and evaluation forward; returns the cpu's save_mean, save_invstd (lc each)
static float *bn_forward(cc_ctx *t, const bn_data *d) {
    dt_device *c = t->cpu, *g = t->gpu;
    int B = d->B, C = d->C, HW = d->HW;
    size_t ln = d->ln, lc = d->lc;
    const float eps = 1e-5f, mom = 0.1f;
    const float *gam = d->par, *bet = d->par + lc, *rm0 = d->par + 2 * lc, *rv0 = d->par + 3 * lc;
    float *hy = cc_rand(t, ln, -1, 1), *saved = mallocCheck(2 * lc * sizeof(float));
    char nm[200];
    cc_buf x = cc_new(t, g, d->x, ln * 4), y = cc_new(t, g, hy, ln * 4), p[6];
    for (int k = 0; k < 6; k++) p[k] = cc_new(t, g, d->par + k * lc, lc * 4);
    c->bn_forward_train(c, x.c, B, C, HW, p[0].c, p[1].c, eps, mom, p[2].c, p[3].c, p[4].c,
                        p[5].c, y.c);
    g->bn_forward_train(g, x.g, B, C, HW, p[0].g, p[1].g, eps, mom, p[2].g, p[3].g, p[4].g,
                        p[5].g, y.g);
    memcpy(saved, p[4].c, lc * 4), memcpy(saved + lc, p[5].c, lc * 4);  // cpu memory: host
    const float *cinv = saved + lc;
    double *mag = mallocCheck(ln * sizeof(double));
    // mean and invstd: one rounding of a double (whose two orders differ by ~n*2^-53): 2 ulp
    for (size_t ci = 0; ci < lc; ci++)
        mag[ci] = d->cnt && ci < (size_t)C ? d->mabs[ci] : fabs(d->par[4 * lc + ci]);
    snprintf(nm, sizeof nm, "bn_forward_train %s save_mean (2 ulp of mean|x|)", d->sh);
    cc_close(t, nm, &p[4], mag, 2 * CC_EPS);
    snprintf(nm, sizeof nm, "bn_forward_train %s save_invstd (2 ulp)", d->sh);
    cc_close(t, nm, &p[5], NULL, 2 * CC_EPS);
    // running stats (1-m)*r + m*stat: a stat 1 ulp apart, then two roundings, maybe fused
    for (size_t ci = 0; ci < lc; ci++) mag[ci] = (1 - mom) * fabs(rm0[ci]) + mom * d->mabs[ci];
    snprintf(nm, sizeof nm, "bn_forward_train %s running_mean", d->sh);
    cc_close(t, nm, &p[2], mag, 8 * CC_EPS);
    for (size_t ci = 0; ci < lc; ci++) mag[ci] = (1 - mom) * fabs(rv0[ci]) + mom * d->uvar[ci];
    snprintf(nm, sizeof nm, "bn_forward_train %s running_var (unbiased)", d->sh);
    cc_close(t, nm, &p[3], mag, 8 * CC_EPS);
    // y = gamma*(x - mean)*invstd + beta with mean and invstd each maybe 1 ulp apart
    for (size_t i = 0; i < ln; i++) {
        size_t ci = bn_ch(d, i);
        mag[i] = i < d->n ? fabs(gam[ci]) * cinv[ci] * (fabs(d->x[i]) + d->mabs[ci]) + fabs(bet[ci])
                          : fabs(hy[i]);
    }
    snprintf(nm, sizeof nm, "bn_forward_train %s y", d->sh);
    cc_close(t, nm, &y, mag, 8 * CC_EPS);

    // eval from the original running statistics: the same invstd bits on both; only the
    // products and the add (maybe fused) round
    cc_buf rm = cc_new(t, g, rm0, lc * 4), rv = cc_new(t, g, rv0, lc * 4);
    cc_free(t, &y);
    y = cc_new(t, g, hy, ln * 4);
    c->bn_forward_eval(c, x.c, B, C, HW, p[0].c, p[1].c, eps, rm.c, rv.c, y.c);
    g->bn_forward_eval(g, x.g, B, C, HW, p[0].g, p[1].g, eps, rm.g, rv.g, y.g);
    for (size_t i = 0; i < ln; i++) {
        size_t ci = bn_ch(d, i);
        double inv = 1.0 / sqrt((double)rv0[ci] + eps);
        mag[i] = i < d->n ? fabs(gam[ci] * (d->x[i] - rm0[ci])) * inv + fabs(bet[ci]) : fabs(hy[i]);
    }
    snprintf(nm, sizeof nm, "bn_forward_eval %s y", d->sh);
    cc_close(t, nm, &y, mag, 4 * CC_EPS);
    for (int k = 0; k < 6; k++) cc_free(t, &p[k]);
    cc_free(t, &x), cc_free(t, &y), cc_free(t, &rm), cc_free(t, &rv);
    free(hy), free(mag);
    return saved;
}

// backward (adding, then overwriting dx) from the cpu's saved statistics, uploaded to both:
// dgamma, dbeta as bias_backward; dx = gamma*invstd*(dy - sum(dy)/n - xhat*sum(dy*xhat)/n),
// whose two sums may be 1 ulp apart: 8 ulp of the size of its terms
static void bn_backward_checks(cc_ctx *t, const bn_data *d, const float *saved) {
    dt_device *c = t->cpu, *g = t->gpu;
    size_t n = d->n, ln = d->ln, lc = d->lc;
    const float *gam = d->par, *sm = saved, *si = saved + lc;
    float *hdy = cc_rand(t, ln, -1, 1);
    char nm[200];
    cc_buf dy = cc_new(t, g, hdy, ln * 4), x = cc_new(t, g, d->x, ln * 4);
    cc_buf ga = cc_new(t, g, gam, lc * 4), smb = cc_new(t, g, sm, lc * 4);
    cc_buf sib = cc_new(t, g, si, lc * 4);
    double *sdy = callocCheck(lc, sizeof(double)), *sdx = callocCheck(lc, sizeof(double));
    double *mag = mallocCheck(ln * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        size_t ci = bn_ch(d, i);
        sdy[ci] += fabs(hdy[i]), sdx[ci] += fabs(hdy[i] * ((d->x[i] - sm[ci]) * si[ci]));
    }
    for (int set = 0; set < 2; set++) {
        float *hdx = cc_rand(t, ln, -1, 1), *h2 = cc_rand(t, 2 * lc, -1, 1);
        if (set) hdx[0] = NAN;  // overwritten: must go
        cc_buf dx = cc_new(t, g, hdx, ln * 4), dga = cc_new(t, g, h2, lc * 4);
        cc_buf dbe = cc_new(t, g, h2 + lc, lc * 4);
        dt_device *dv[2] = {c, g};
        for (int k = 0; k < 2; k++) {
            void (*bw)(dt_device *, const float *, const float *, int, int, int, const float *,
                       const float *, const float *, float *, float *, float *) =
                set ? dv[k]->bn_backward_set : dv[k]->bn_backward;
            bw(dv[k], k ? dy.g : dy.c, k ? x.g : x.c, d->B, d->C, d->HW, k ? ga.g : ga.c,
               k ? smb.g : smb.c, k ? sib.g : sib.c, k ? dx.g : dx.c, k ? dga.g : dga.c,
               k ? dbe.g : dbe.c);
        }
        const char *what = set ? "bn_backward_set" : "bn_backward";
        for (size_t i = 0; i < ln; i++) {
            size_t ci = bn_ch(d, i);
            double xh = i < n ? fabs((d->x[i] - sm[ci]) * si[ci]) : 0;
            double terms =
                fabs(gam[ci]) * si[ci] * (fabs(hdy[i]) + (sdy[ci] + xh * sdx[ci]) / d->cnt);
            mag[i] = (set && i < n ? 0 : fabs(hdx[i])) + (i < n ? terms : 0);
        }
        snprintf(nm, sizeof nm, "%s %s dx", what, d->sh);
        cc_close(t, nm, &dx, mag, 8 * CC_EPS);
        for (size_t ci = 0; ci < lc; ci++) mag[ci] = fabs(h2[ci]) + sdx[ci];
        snprintf(nm, sizeof nm, "%s %s dgamma", what, d->sh);
        cc_close(t, nm, &dga, mag, 2 * CC_EPS);
        for (size_t ci = 0; ci < lc; ci++) mag[ci] = fabs(h2[lc + ci]) + sdy[ci];
        snprintf(nm, sizeof nm, "%s %s dbeta", what, d->sh);
        cc_close(t, nm, &dbe, mag, 2 * CC_EPS);
        cc_free(t, &dx), cc_free(t, &dga), cc_free(t, &dbe);
        free(hdx), free(h2);
    }
    cc_free(t, &dy), cc_free(t, &x), cc_free(t, &ga), cc_free(t, &smb), cc_free(t, &sib);
    free(hdy), free(sdy), free(sdx), free(mag);
}

// ---- batch norm on half storage (nn/device.h bn_*_h, fp16 and bf16): against the same
// device's fp32 batch norm on the widened values, then one rounding. Both are one kernel
// template (kernels_nn.cu), so the sums run in the same order on the same floats: the
// same bits, statistics included. ----

static void *up(dt_device *g, const void *h, size_t bytes) {
    void *p = g->alloc(g, bytes ? bytes : 4);
    if (h && bytes) g->from_host(g, p, h, bytes);  // NULL: alloc's zeros
    return p;
}
static void same_bits(cc_ctx *t, const char *what, const bn_data *d, int fmt, void *got,
                      void *want, size_t bytes) {
    char nm[200];
    void *a = cc_host_copy(t->gpu, got, bytes), *b = cc_host_copy(t->gpu, want, bytes);
    snprintf(nm, sizeof nm, "%s %s %s (bits of the fp32 kernel on widened values)", what,
             fmt == 2 ? "bf16" : "fp16", d->sh);
    cc_cmp_bytes(t, nm, a, b, bytes);
    free(a), free(b);
}

static void bn_half_checks(cc_ctx *t, const bn_data *d, int fmt) {
    dt_device *g = t->gpu;
    int B = d->B, C = d->C, HW = d->HW;
    size_t ln = d->ln, lc = d->lc, hb = ln * 2, fb = ln * 4;
    const float eps = 1e-5f, mom = 0.1f;
    uint16_t *h[3];  // x, dy, dx in half; f[]: the same values widened
    float *f[3];
    for (int k = 0; k < 3; k++) {
        h[k] = mallocCheck(hb), f[k] = mallocCheck(fb);
        for (size_t i = 0; i < ln; i++) {
            h[k][i] = dt_half_store(fmt, k ? cc_unif(t, -1, 1) : d->x[i]);
            f[k][i] = dt_half_load(fmt, h[k][i]);
        }
    }
    void (*narrow)(dt_device *, const float *, uint16_t *, size_t) =
        fmt == 2 ? g->f32_to_bf16 : g->f32_to_f16;
    void *xh = up(g, h[0], hb), *dyh = up(g, h[1], hb), *xf = up(g, f[0], fb);
    void *dyf = up(g, f[1], fb), *yh = up(g, NULL, hb), *yf = up(g, NULL, fb);
    void *yw = up(g, NULL, hb);  // the fp32 kernel's y, rounded
    float *p[2][6];  // gamma, beta, running mean, running var, save mean, save invstd
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 6; j++) p[k][j] = up(g, d->par + j * lc, lc * 4);
    g->bn_forward_train_h(g, fmt, xh, B, C, HW, p[0][0], p[0][1], eps, mom, p[0][2], p[0][3],
                          p[0][4], p[0][5], yh);
    g->bn_forward_train(g, xf, B, C, HW, p[1][0], p[1][1], eps, mom, p[1][2], p[1][3], p[1][4],
                        p[1][5], yf);
    narrow(g, yf, yw, ln);
    same_bits(t, "bn_forward_train_h y", d, fmt, yh, yw, hb);
    for (int j = 2; j < 6; j++)
        same_bits(t, "bn_forward_train_h statistics", d, fmt, p[0][j], p[1][j], lc * 4);
    g->bn_forward_eval_h(g, fmt, xh, B, C, HW, p[0][0], p[0][1], eps, p[0][2], p[0][3], yh);
    g->bn_forward_eval(g, xf, B, C, HW, p[1][0], p[1][1], eps, p[1][2], p[1][3], yf);
    narrow(g, yf, yw, ln);
    same_bits(t, "bn_forward_eval_h y", d, fmt, yh, yw, hb);
    for (int set = 0; set < 2; set++) {  // from the saved statistics of the training forward
        void *dxh = up(g, h[2], hb), *dxf = up(g, f[2], fb), *dxw = up(g, NULL, hb);
        float *dp[2][2];
        for (int k = 0; k < 2; k++)
            for (int j = 0; j < 2; j++) dp[k][j] = up(g, d->par + (j + 4) * lc, lc * 4);
        g->bn_backward_h(g, fmt, dyh, xh, B, C, HW, p[0][0], p[0][4], p[0][5], dxh, dp[0][0],
                         dp[0][1], set);
        (set ? g->bn_backward_set : g->bn_backward)(g, dyf, xf, B, C, HW, p[0][0], p[0][4],
                                                    p[0][5], dxf, dp[1][0], dp[1][1]);
        narrow(g, dxf, dxw, ln);
        same_bits(t, set ? "bn_backward_h (set) dx" : "bn_backward_h dx", d, fmt, dxh, dxw, hb);
        same_bits(t, "bn_backward_h dgamma", d, fmt, dp[0][0], dp[1][0], lc * 4);
        same_bits(t, "bn_backward_h dbeta", d, fmt, dp[0][1], dp[1][1], lc * 4);
        g->free(g, dxh), g->free(g, dxf), g->free(g, dxw);
        for (int k = 0; k < 2; k++) g->free(g, dp[k][0]), g->free(g, dp[k][1]);
    }
    void *bufs[7] = {xh, dyh, xf, dyf, yh, yf, yw};
    for (int k = 0; k < 7; k++) g->free(g, bufs[k]);
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 6; j++) g->free(g, p[k][j]);
    for (int k = 0; k < 3; k++) free(h[k]), free(f[k]);
}

void cc_check_bn(cc_ctx *t) {
    for (size_t i = 0; i < sizeof BN / sizeof BN[0]; i++) {
        bn_data d = bn_make(t, BN[i]);
        float *saved = bn_forward(t, &d);
        bn_backward_checks(t, &d, saved);
        bn_half_checks(t, &d, 1);
        bn_half_checks(t, &d, 2);
        free(saved);
        bn_free(&d);
    }
}

// ---- max pooling: winner and argmax exact (the same row-major scan with dt_pool_beats) ----

typedef struct { int B, C, H, W, K, s, p; } pool_shape;
static const pool_shape MAXP[] = {
    {2, 8, 112, 112, 3, 2, 1},   // ResNet's stem pool
    {3, 5, 17, 19, 3, 2, 1},     // odd
    {2, 4, 8, 8, 2, 2, 0},       // 2x2/s2 (AlexNet-style, VGG)
    {2, 3, 15, 13, 2, 2, 0},     // odd: the last row and column are dropped
    {2, 3, 7, 9, 3, 1, 1},       // stride 1: every cell in up to 9 windows
    {1, 1, 1, 1, 1, 1, 0},       // one pixel
    {0, 3, 4, 4, 2, 2, 0},       // empty batch
    {8, 64, 112, 112, 3, 2, 1},  // 1.6 M windows: more than one grid
};

// ties: inputs drawn from {-1, 0, 1, 2}, so most windows hold equal maxima and the first
// (row-major) must win on both; otherwise continuous values with a NaN (it wins) and -Inf
static void maxpool_case(cc_ctx *t, const pool_shape *s, int ties) {
    dt_device *c = t->cpu, *g = t->gpu;
    int OH = (s->H + 2 * s->p - s->K) / s->s + 1, OW = (s->W + 2 * s->p - s->K) / s->s + 1;
    size_t nx = (size_t)s->B * s->C * s->H * s->W, ny = (size_t)s->B * s->C * OH * OW;
    size_t lx = at_least8(nx), ly = at_least8(ny);
    float *hx = cc_rand(t, lx, -1, 1), *hy = cc_rand(t, ly, -1, 1), *hdy = cc_rand(t, ly, -1, 1);
    if (ties) {
        for (size_t i = 0; i < lx; i++) hx[i] = (float)cc_int(t, -1, 2);
    } else if (nx > 8) {
        hx[nx / 3] = NAN, hx[nx / 2] = -INFINITY;
    }
    int32_t *ha = mallocCheck(ly * 4);
    for (size_t i = 0; i < ly; i++) ha[i] = (int32_t)cc_int(t, -5, 5);  // garbage to overwrite
    char nm[200], sh[96];
    snprintf(sh, sizeof sh, "B=%d C=%d %dx%d k%d s%d p%d%s", s->B, s->C, s->H, s->W, s->K, s->s,
             s->p, ties ? " ties" : "");
    cc_buf x = cc_new(t, g, hx, lx * 4), y = cc_new(t, g, hy, ly * 4), a = cc_new(t, g, ha, ly * 4);
    c->maxpool_forward(c, x.c, s->B, s->C, s->H, s->W, s->K, s->s, s->p, y.c, a.c);
    g->maxpool_forward(g, x.g, s->B, s->C, s->H, s->W, s->K, s->s, s->p, y.g, a.g);
    snprintf(nm, sizeof nm, "maxpool_forward %s y (exact)", sh);
    cc_exact(t, nm, &y);
    snprintf(nm, sizeof nm, "maxpool_forward %s argmax (exact)", sh);
    cc_bytes(t, nm, &a);
    // backward from the cpu's argmax (on both): a cell wins at most ceil(K/s)^2 windows
    int32_t *argmax = a.c;  // host memory on the cpu device
    cc_buf ag = cc_new(t, g, argmax, ly * 4), dy = cc_new(t, g, hdy, ly * 4);
    float *hdx = cc_rand(t, lx, -1, 1);
    cc_buf dx = cc_new(t, g, hdx, lx * 4);
    c->maxpool_backward(c, dy.c, ag.c, s->B, s->C, s->H, s->W, OH, OW, dx.c);
    g->maxpool_backward(g, dy.g, ag.g, s->B, s->C, s->H, s->W, OH, OW, dx.g);
    float *ady = abs_copy(hdy, ly), *adx = abs_copy(hdx, lx);
    c->maxpool_backward(c, ady, argmax, s->B, s->C, s->H, s->W, OH, OW, adx);
    double *mag = to_double_abs(adx, lx);
    int w = (s->K + s->s - 1) / s->s;
    snprintf(nm, sizeof nm, "maxpool_backward %s", sh);
    cc_close(t, nm, &dx, mag, (w * w + 1) * CC_EPS);
    cc_free(t, &x), cc_free(t, &y), cc_free(t, &a), cc_free(t, &ag), cc_free(t, &dy);
    cc_free(t, &dx);
    free(hx), free(hy), free(hdy), free(hdx), free(ha), free(ady), free(adx), free(mag);
}

// ---- adaptive average pooling (PyTorch AdaptiveAvgPool2d windows, nn/kernels.h) ----

typedef struct { int B, C, H, W, OH, OW; } ada_shape;
static const ada_shape AVGP[] = {
    {2, 64, 7, 7, 1, 1},      // ResNet's global pool
    {3, 5, 13, 11, 1, 1},     // global, odd
    {2, 3, 13, 11, 5, 4},     // adaptive, sizes that do not divide
    {2, 3, 10, 10, 3, 3},     // adaptive, overlapping windows
    {2, 3, 50, 50, 6, 6},     // AlexNet's 6x6, overlapping
    {1, 2, 3, 5, 7, 6},       // more outputs than inputs
    {1, 1, 1, 1, 1, 1},       // one pixel
    {0, 3, 4, 4, 2, 2},       // empty batch
    {64, 1024, 7, 7, 1, 1},   // 3.2 M inputs
};

static void avgpool_case(cc_ctx *t, const ada_shape *s) {
    dt_device *c = t->cpu, *g = t->gpu;
    size_t nx = (size_t)s->B * s->C * s->H * s->W, ny = (size_t)s->B * s->C * s->OH * s->OW;
    size_t lx = at_least8(nx), ly = at_least8(ny);
    float *hx = cc_rand(t, lx, -1, 1), *hy = cc_rand(t, ly, -1, 1), *hdy = cc_rand(t, ly, -1, 1);
    char nm[200], sh[96];
    snprintf(sh, sizeof sh, "B=%d C=%d %dx%d -> %dx%d", s->B, s->C, s->H, s->W, s->OH, s->OW);
#define AVG_ARGS s->B, s->C, s->H, s->W, s->OH, s->OW
    // forward: a float sum of at most win terms, then a divide: win*2^-23 of mean|x|
    int win = ((s->H + s->OH - 1) / s->OH + 1) * ((s->W + s->OW - 1) / s->OW + 1);
    cc_buf x = cc_new(t, g, hx, lx * 4), y = cc_new(t, g, hy, ly * 4);
    c->avgpool_forward(c, x.c, AVG_ARGS, y.c), g->avgpool_forward(g, x.g, AVG_ARGS, y.g);
    float *ax = abs_copy(hx, lx), *ay = abs_copy(hy, ly);
    c->avgpool_forward(c, ax, AVG_ARGS, ay);
    double *mag = to_double_abs(ay, ly);
    snprintf(nm, sizeof nm, "avgpool_forward %s", sh);
    cc_close(t, nm, &y, mag, (win + 1) * CC_EPS);
    free(mag);
    // backward: dx += dy/count of every window holding the cell (at most `cover` windows)
    int cover = ((s->OH + s->H - 1) / s->H + 1) * ((s->OW + s->W - 1) / s->W + 1);
    cc_buf dy = cc_new(t, g, hdy, ly * 4), dx = cc_new(t, g, hx, lx * 4);
    c->avgpool_backward(c, dy.c, AVG_ARGS, dx.c), g->avgpool_backward(g, dy.g, AVG_ARGS, dx.g);
    float *ady = abs_copy(hdy, ly);
    c->avgpool_backward(c, ady, AVG_ARGS, ax);  // onto |x|: |dx0| + the sum of |terms|
    mag = to_double_abs(ax, lx);
    snprintf(nm, sizeof nm, "avgpool_backward %s", sh);
    cc_close(t, nm, &dx, mag, (cover + 1) * CC_EPS);
#undef AVG_ARGS
    cc_free(t, &x), cc_free(t, &y), cc_free(t, &dy), cc_free(t, &dx);
    free(hx), free(hy), free(hdy), free(ax), free(ay), free(ady), free(mag);
}

// ---- dropout (Srivastava et al. 2014, inverted; counter-based mask, nn/kernels.h) ----

static void dropout_case(cc_ctx *t, size_t n, float p) {
    dt_device *c = t->cpu, *g = t->gpu;
    size_t ln = at_least8(n);
    uint64_t seed = cc_next(t);
    float *hx = cc_rand(t, ln, -2, 2), *hy = cc_rand(t, ln, -2, 2), *hm = cc_rand(t, ln, -2, 2);
    char nm[160];
    cc_buf x = cc_new(t, g, hx, ln * 4), y = cc_new(t, g, hy, ln * 4), m = cc_new(t, g, hm, ln * 4);
    c->dropout_forward(c, x.c, y.c, m.c, n, p, seed);
    g->dropout_forward(g, x.g, y.g, m.g, n, p, seed);
    snprintf(nm, sizeof nm, "dropout_forward n=%zu p=%g mask (exact)", n, p);
    cc_exact(t, nm, &m);
    snprintf(nm, sizeof nm, "dropout_forward n=%zu p=%g y (one multiply: exact)", n, p);
    cc_exact(t, nm, &y);
    // dx += dy*mask, maybe fused: 2 ulp of |dy*mask| + |dx|
    const float *mask = m.c;
    double *mag = mallocCheck(ln * sizeof(double));
    for (size_t i = 0; i < ln; i++) mag[i] = fabs(hy[i]) + (i < n ? fabs(hx[i] * mask[i]) : 0);
    cc_free(t, &y);
    y = cc_new(t, g, hy, ln * 4);  // dx = the original y; dy = x
    c->dropout_backward(c, x.c, m.c, y.c, n), g->dropout_backward(g, x.g, m.g, y.g, n);
    snprintf(nm, sizeof nm, "dropout_backward n=%zu p=%g", n, p);
    cc_close(t, nm, &y, mag, 2 * CC_EPS);
    cc_free(t, &x), cc_free(t, &y), cc_free(t, &m);
    free(hx), free(hy), free(hm), free(mag);
}

// ---- softmax cross-entropy ----

// probs: expf is within 2 ulp on CUDA (CUDA C++ Programming Guide, mathematical functions;
// __expf under fast math within 2 + 1.16|x| ulp, |x| <= 8 here) and within 1 ulp in glibc;
// the row's normalising sum moves by as much: 32 ulp of the probability. loss: a log of a
// sum that close, 32 ulp of 1 + |loss|. backward: one (maybe fused) multiply-add, 2 ulp.
static void xent_case(cc_ctx *t, int B, int K, int bad_label) {
    dt_device *c = t->cpu, *g = t->gpu;
    size_t n = (size_t)B * K, ln = at_least8(n), lb = at_least8((size_t)B);
    float *hz = cc_rand(t, ln, -4, 4), *hp = cc_rand(t, ln, -1, 1), *hd = cc_rand(t, ln, -1, 1);
    int32_t *hl = mallocCheck(lb * 4);
    for (size_t b = 0; b < lb; b++) hl[b] = cc_int(t, 0, K - 1);
    if (bad_label && B > 2) hl[2] = K;  // out of range: the loss is NaN on both
    char nm[160];
    cc_buf z = cc_new(t, g, hz, ln * 4), pr = cc_new(t, g, hp, ln * 4);
    cc_buf l = cc_new(t, g, hl, lb * 4);
    float lc = c->softmax_xent_forward(c, z.c, l.c, B, K, pr.c);
    float lg = g->softmax_xent_forward(g, z.g, l.g, B, K, pr.g);
    snprintf(nm, sizeof nm, "softmax_xent_forward B=%d K=%d%s probs", B, K,
             bad_label ? " bad label" : "");
    cc_close(t, nm, &pr, NULL, 32 * CC_EPS);
    snprintf(nm, sizeof nm, "softmax_xent_forward B=%d K=%d%s loss%s", B, K,
             bad_label ? " bad label" : "", bad_label ? " (NaN)" : "");
    cc_cmp_scalar(t, nm, lg, lc, 1.0 + fabs(lc), 32 * CC_EPS);
    // backward from the cpu's probabilities on both
    const float *cp = pr.c;
    cc_buf p2 = cc_new(t, g, cp, ln * 4), dl = cc_new(t, g, hd, ln * 4);
    float scale = 1.0f / (float)B;
    c->softmax_xent_backward(c, p2.c, l.c, B, K, scale, dl.c);
    g->softmax_xent_backward(g, p2.g, l.g, B, K, scale, dl.g);
    double *mag = mallocCheck(ln * sizeof(double));
    for (size_t i = 0; i < ln; i++)
        mag[i] = fabs(hd[i]) + (i < n ? scale * fabs(cp[i] - (hl[i / K] == (int32_t)(i % K))) : 0);
    snprintf(nm, sizeof nm, "softmax_xent_backward B=%d K=%d%s", B, K,
             bad_label ? " bad label" : "");
    cc_close(t, nm, &dl, mag, 2 * CC_EPS);
    cc_free(t, &z), cc_free(t, &pr), cc_free(t, &l), cc_free(t, &p2), cc_free(t, &dl);
    free(hz), free(hp), free(hd), free(hl), free(mag);
}

void cc_check_pool_loss(cc_ctx *t) {
    for (size_t i = 0; i < sizeof MAXP / sizeof MAXP[0]; i++) {
        maxpool_case(t, &MAXP[i], 0);
        if (i < 6) maxpool_case(t, &MAXP[i], 1);
    }
    for (size_t i = 0; i < sizeof AVGP / sizeof AVGP[0]; i++) avgpool_case(t, &AVGP[i]);
    const size_t dn[] = {1, 1001, ((size_t)3 << 20) + 7};
    const float dp[] = {0.0f, 0.3f, 0.9f};
    dropout_case(t, 0, 0.5f);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) dropout_case(t, dn[i], dp[j]);
    xent_case(t, 1, 1, 0);
    xent_case(t, 3, 10, 0);
    xent_case(t, 7, 1001, 0);
    xent_case(t, 32, 1000, 0);
    xent_case(t, 4, 10, 1);
    xent_case(t, 1024, 1000, 0);
}
