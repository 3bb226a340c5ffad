// test_device_cuda_elem.c — the cuda device's elementwise primitives against the cpu
// device: fill, scale, axpy, add, relu (forward, in place, backward, backward in place),
// sumsq, nonfinite, the SGD and LARS updates, the fp16 casts, and relu and the residual add
// on fp16 and bf16 storage. Sizes 0, 1, not multiples of 32 or 256, and 3 M elements (more
// than one grid, so the grid-stride loops wrap).
// Tolerances: one rounding is exact on both (IEEE add, multiply); a multiply-add may be
// fused by nvcc and gcc alike (-ffp-contract=fast), which moves the result by at most
// 1/2 ulp of the product plus 1/2 ulp of the sum, so those are checked to a few 2^-23 of
// the size of the terms. The fp16 casts are software rounding (nn/kernels.h): exact bits.
// Not here: the shared comparisons (cuda_check.c), the network primitives (_nn.c).
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "dt.h"
#include "kernels.h"

static const size_t SIZES[] = {0, 1, 31, 257, 1000003, ((size_t)3 << 20) + 7};
#define NSIZES (sizeof SIZES / sizeof SIZES[0])

// Every op acts on the first n elements of len = max(n, 8): the tail (all of it for n = 0)
// must come back untouched, which the comparisons see since they cover len.
static void elementwise_n(cc_ctx *t, size_t n) {
    dt_device *c = t->cpu, *g = t->gpu;
    size_t len = n ? n : 8, fb = len * sizeof(float);
    float *hx = cc_rand(t, len, -4, 4), *hy = cc_rand(t, len, -4, 4);
    if (len >= 8) {  // NaN, infinities, signed zero and a subnormal travel through too
        hx[1] = -0.0f, hx[2] = NAN, hx[3] = INFINITY, hx[4] = -INFINITY, hx[5] = 1e-40f;
    }
    double *mag = mallocCheck(len * sizeof(double));
    char nm[160];
    float v = cc_unif(t, -3, 3), a = cc_unif(t, -3, 3);

    cc_buf y = cc_new(t, g, hy, fb), x = cc_new(t, g, hx, fb);
    c->fill(c, y.c, v, n), g->fill(g, y.g, v, n);
    snprintf(nm, sizeof nm, "fill n=%zu", n);
    cc_exact(t, nm, &y);
    cc_free(t, &y);

    y = cc_new(t, g, hx, fb);
    c->scale(c, y.c, a, n), g->scale(g, y.g, a, n);
    snprintf(nm, sizeof nm, "scale n=%zu (one multiply: exact)", n);
    cc_exact(t, nm, &y);
    cc_free(t, &y);

    y = cc_new(t, g, hy, fb);
    c->axpy(c, a, x.c, y.c, n), g->axpy(g, a, x.g, y.g, n);
    for (size_t i = 0; i < len; i++) mag[i] = (i < n ? fabs((double)a * hx[i]) : 0) + fabs(hy[i]);
    snprintf(nm, sizeof nm, "axpy n=%zu (fused or not: 2 ulp of |a*x|+|y|)", n);
    cc_close(t, nm, &y, mag, 2 * CC_EPS);
    cc_free(t, &y);

    y = cc_new(t, g, hy, fb);
    c->add(c, y.c, x.c, n), g->add(g, y.g, x.g, n);
    snprintf(nm, sizeof nm, "add n=%zu (one add: exact)", n);
    cc_exact(t, nm, &y);
    cc_free(t, &y);

    y = cc_new(t, g, hy, fb);
    c->relu_forward(c, x.c, y.c, n), g->relu_forward(g, x.g, y.g, n);
    snprintf(nm, sizeof nm, "relu_forward n=%zu (NaN stays NaN)", n);
    cc_exact(t, nm, &y);
    cc_free(t, &y);

    y = cc_new(t, g, hx, fb);
    c->relu_forward(c, y.c, y.c, n), g->relu_forward(g, y.g, y.g, n);
    snprintf(nm, sizeof nm, "relu_forward in place n=%zu", n);
    cc_exact(t, nm, &y);
    cc_free(t, &y);

    // backward: y = relu(x) on the host (zeros where x <= 0), dy random, dx += or in place
    float *hr = mallocCheck(fb), *hd = cc_rand(t, len, -2, 2);
    for (size_t i = 0; i < len; i++) hr[i] = hx[i] < 0.0f ? 0.0f : hx[i];
    cc_buf r = cc_new(t, g, hr, fb), dy = cc_new(t, g, hd, fb);
    y = cc_new(t, g, hy, fb);
    c->relu_backward(c, r.c, dy.c, y.c, n), g->relu_backward(g, r.g, dy.g, y.g, n);
    snprintf(nm, sizeof nm, "relu_backward n=%zu (dx += dy where y > 0: exact)", n);
    cc_exact(t, nm, &y);
    cc_free(t, &y);
    c->relu_backward_inplace(c, r.c, dy.c, n), g->relu_backward_inplace(g, r.g, dy.g, n);
    snprintf(nm, sizeof nm, "relu_backward_inplace n=%zu (exact)", n);
    cc_exact(t, nm, &dy);
    cc_free(t, &r);
    cc_free(t, &dy);
    cc_free(t, &x);
    free(hr);
    free(hd);

    // sumsq: every x^2 is exact in double; any summation order is within (n-1)*2^-53 of the
    // true sum (all terms >= 0), so two orders are within 2n*2^-53 of each other
    float *hf = cc_rand(t, len, -10, 10);
    cc_buf f = cc_new(t, g, hf, fb);
    double sc = c->sumsq(c, f.c, n), sg = g->sumsq(g, f.g, n);
    snprintf(nm, sizeof nm, "sumsq n=%zu (double sums in two orders)", n);
    cc_cmp_scalar(t, nm, sg, sc, sc, 2.0 * (double)(n + 1) * CC_EPS64);
    // sumsq_many: each tensor's sumsq, bit for bit, in one wait (LARS's norms)
    const float *fg = f.g;  // (cc_buf's pointers are void *: offsets in floats need a float *)
    const float *xs[3] = {fg, fg + n / 3, fg};
    size_t ns[3] = {n, n - n / 3, 0};
    double many[3], one[3] = {sg, g->sumsq(g, fg + n / 3, n - n / 3), 0.0};
    g->sumsq_many(g, 3, xs, ns, many);
    snprintf(nm, sizeof nm, "sumsq_many n=%zu, %zu, 0 (the bits of sumsq)", n, n - n / 3);
    cc_cmp_bytes(t, nm, many, one, sizeof many);
    cc_free(t, &f);

    // nonfinite: planted NaN (quiet, signalling, negative) and infinities among finite
    // extremes (FLT_MAX, subnormals, -0) that must not count; exact
    static const uint32_t bad_bits[] = {0x7fc00000u, 0x7f800001u, 0xffc00000u, 0x7f800000u,
                                        0xff800000u};
    size_t planted = n ? (size_t)cc_int(t, 0, n < 20 ? (int)n : 20) : 0;
    for (size_t k = 0; k < planted; k++) {
        uint32_t b = bad_bits[k % 5];
        memcpy(&hf[(size_t)(cc_next(t) % n)], &b, 4);
    }
    if (len >= 8) hf[len - 1] = FLT_MAX, hf[len - 2] = -FLT_MAX, hf[len - 3] = 1e-42f;
    f = cc_new(t, g, hf, fb);
    size_t kc = c->nonfinite(c, f.c, n), kg = g->nonfinite(g, f.g, n);
    snprintf(nm, sizeof nm, "nonfinite n=%zu (%zu planted, some may coincide: exact)", n,
             planted);
    cc_cmp_scalar(t, nm, (double)kg, (double)kc, 1, 0);
    cc_free(t, &f);
    free(hf);
    free(hx);
    free(hy);
    free(mag);
}

void cc_check_elementwise(cc_ctx *t) {
    for (size_t s = 0; s < NSIZES; s++) elementwise_n(t, SIZES[s]);
}

// ---- optimizer updates (nn/kernels.h dt_sgd_elem, dt_lars_elem) ----

// w, v after one step on both devices. Each of g + wd*w, m*v + g', w - lr*(...) may be
// fused or not: a few roundings, each within 2^-24 of the size of its terms, which mag
// adds up; tol 8*2^-23 covers them with room.
static void optim_n(cc_ctx *t, size_t n, int lars, int nesterov) {
    dt_device *c = t->cpu, *g = t->gpu;
    size_t len = n ? n : 8, fb = len * sizeof(float);
    float *hw = cc_rand(t, len, -1, 1), *hg = cc_rand(t, len, -1, 1), *hv = cc_rand(t, len, -1, 1);
    float lr = cc_unif(t, 0.01f, 0.5f), m = cc_unif(t, 0.0f, 0.99f), wd = cc_unif(t, 0, 1e-3f);
    cc_buf w = cc_new(t, g, hw, fb), gr = cc_new(t, g, hg, fb), v = cc_new(t, g, hv, fb);
    if (lars) {
        c->lars_update(c, w.c, gr.c, v.c, n, lr, m, wd);
        g->lars_update(g, w.g, gr.g, v.g, n, lr, m, wd);
    } else {
        c->sgd_update(c, w.c, gr.c, v.c, n, lr, m, wd, nesterov);
        g->sgd_update(g, w.g, gr.g, v.g, n, lr, m, wd, nesterov);
    }
    double *mw = mallocCheck(len * sizeof(double)), *mv = mallocCheck(len * sizeof(double));
    for (size_t i = 0; i < len; i++) {
        double gp = fabs(hg[i]) + wd * fabs(hw[i]);  // |g| + |wd*w|
        if (i >= n) {
            mw[i] = fabs(hw[i]), mv[i] = fabs(hv[i]);
        } else if (lars) {  // v = m*v + slr*(g + wd*w); w -= v
            mv[i] = m * fabs(hv[i]) + lr * gp;
            mw[i] = fabs(hw[i]) + mv[i];
        } else {  // g' = g + wd*w; v = m*v + g'; w -= lr*(nesterov ? g' + m*v : v)
            mv[i] = m * fabs(hv[i]) + gp;
            mw[i] = fabs(hw[i]) + lr * (nesterov ? gp + m * mv[i] : mv[i]);
        }
    }
    char nm[160];
    const char *what = lars ? "lars_update" : nesterov ? "sgd_update nesterov" : "sgd_update";
    snprintf(nm, sizeof nm, "%s n=%zu w", what, n);
    cc_close(t, nm, &w, mw, 8 * CC_EPS);
    snprintf(nm, sizeof nm, "%s n=%zu v (momentum buffer)", what, n);
    cc_close(t, nm, &v, mv, 8 * CC_EPS);
    cc_free(t, &w), cc_free(t, &gr), cc_free(t, &v);
    free(hw), free(hg), free(hv), free(mw), free(mv);
}

// ---- fp16 casts (IEEE binary16, round to nearest even, software: exact bits) ----

// Independent known answers (worked by hand from the binary16 format), so that a rounding
// bug shared by both devices' copy of nn/kernels.h would still show.
static const uint32_t KA_F32[] = {
    0x00000000u, 0x80000000u, 0x3f800000u, 0xc0000000u,
    0x3f801000u,  // 1 + 2^-11: halfway between 1 and 1+2^-10, even is 1
    0x3f803000u,  // 1 + 3*2^-11: halfway, even is 1 + 2^-9
    0x477fe000u,  // 65504, the largest half
    0x477fefffu,  // just below 65520: 65504
    0x477ff000u,  // 65520: halfway to 65536, even overflows to +Inf
    0x47800000u,  // 65536: +Inf
    0x38800000u,  // 2^-14, the smallest normal half
    0x33800000u,  // 2^-24, the smallest subnormal half
    0x33000000u,  // 2^-25: halfway between 0 and 2^-24, even is 0
    0x33000001u,  // just above 2^-25: 2^-24
    0x33c00000u,  // 1.5*2^-24: halfway, even is 2*2^-24
    0x387fe000u,  // 1023.5*2^-24: halfway, even carries into the normal 2^-14
    0x2edbe6ffu,  // 1e-10: below half of 2^-24, signed zero
    0x3dcccccdu,  // 0.1f: 0x2e66
    0x7f800000u, 0xff800000u, 0x7fc00000u,
    0x7f800001u,  // signalling NaN: a quiet NaN
    0x7f7fffffu,  // FLT_MAX: +Inf
};
static const uint16_t KA_F16[] = {0x0000, 0x8000, 0x3c00, 0xc000, 0x3c00, 0x3c02, 0x7bff, 0x7bff,
                                  0x7c00, 0x7c00, 0x0400, 0x0001, 0x0000, 0x0001, 0x0002, 0x0400,
                                  0x0000, 0x2e66, 0x7c00, 0xfc00, 0x7e00, 0x7e00, 0x7c00};
#define NKA (sizeof KA_F32 / sizeof KA_F32[0])

// Inputs for f32_to_f16: a quarter random bit patterns (every class of float), a quarter
// random values in and around the half range, a quarter exact halfway cases among normal
// halves (low 13 mantissa bits 0x1000), a quarter halfway cases among subnormals
// ((k + 1/2)*2^-24); the known answers first.
static void f16_inputs(cc_ctx *t, uint32_t *x, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint32_t r = (uint32_t)cc_next(t), sign = r & 0x80000000u, man = (r >> 4) & 0x7fffffu;
        uint32_t e = (uint32_t)(127 + cc_int(t, -27, 16));
        float f;
        switch (i % 4) {
        case 0: x[i] = (uint32_t)(cc_next(t) >> 32); break;
        case 1: x[i] = sign | e << 23 | man; break;
        case 2:
            x[i] = sign | (uint32_t)(127 + cc_int(t, -14, 15)) << 23 | (man & ~0x1fffu) | 0x1000u;
            break;
        default:
            f = ((float)cc_int(t, 0, 1023) + 0.5f) * (1.0f / 16777216.0f);
            memcpy(&x[i], &f, 4);
            x[i] |= sign;
        }
    }
    for (size_t i = 0; i < NKA && i < n; i++) x[i] = KA_F32[i];
}

// relu and the residual add on half storage (nn/device.h *_h), fp16 and bf16: finite
// random halfs, exact bits
static void half_ops_n(cc_ctx *t, int fmt, size_t n) {
    dt_device *c = t->cpu, *g = t->gpu;
    size_t len = n ? n : 8, hb = len * 2;
    uint16_t *h[3];
    for (int k = 0; k < 3; k++) {
        h[k] = mallocCheck(hb);
        for (size_t i = 0; i < len; i++) h[k][i] = dt_half_store(fmt, cc_unif(t, -8, 8));
    }
    const char *fn = fmt == 2 ? "bf16" : "fp16";
    char nm[160];
    for (int op = 0; op < 4; op++) {
        cc_buf a = cc_new(t, g, h[0], hb), b = cc_new(t, g, h[1], hb), y = cc_new(t, g, h[2], hb);
        if (op == 0) c->relu_forward_h(c, fmt, a.c, y.c, n), g->relu_forward_h(g, fmt, a.g, y.g, n);
        if (op == 1) c->add_h(c, fmt, a.c, b.c, y.c, n), g->add_h(g, fmt, a.g, b.g, y.g, n);
        if (op == 2)
            c->relu_backward_h(c, fmt, a.c, b.c, y.c, n, 0),
                g->relu_backward_h(g, fmt, a.g, b.g, y.g, n, 0);
        if (op == 3)  // in place
            c->relu_backward_h(c, fmt, a.c, y.c, y.c, n, 1),
                g->relu_backward_h(g, fmt, a.g, y.g, y.g, n, 1);
        static const char *what[4] = {"relu_forward_h", "add_h", "relu_backward_h",
                                      "relu_backward_h in place"};
        snprintf(nm, sizeof nm, "%s %s n=%zu (bits)", what[op], fn, n);
        cc_bytes(t, nm, &y);
        cc_free(t, &a), cc_free(t, &b), cc_free(t, &y);
    }
    for (int k = 0; k < 3; k++) free(h[k]);
}

void cc_check_optim_f16(cc_ctx *t) {
    for (int fmt = 1; fmt <= 2; fmt++)
        for (size_t s = 0; s < NSIZES; s++) half_ops_n(t, fmt, SIZES[s]);
    for (size_t s = 0; s < NSIZES; s++) {
        if (SIZES[s] == 31 || SIZES[s] == 257) continue;  // 0, 1, 1000003 and 3 M suffice
        optim_n(t, SIZES[s], 0, 0);
        optim_n(t, SIZES[s], 0, 1);
        optim_n(t, SIZES[s], 1, 0);
    }
    dt_device *c = t->cpu, *g = t->gpu;
    char nm[160];
    const size_t ns[] = {0, 1, 1000, ((size_t)3 << 20) + 7};
    for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++) {
        size_t n = ns[s], len = n ? n : 8;
        uint32_t *hx = mallocCheck(len * 4);
        f16_inputs(t, hx, len);
        uint16_t *h0 = mallocCheck(len * 2);
        for (size_t i = 0; i < len; i++) h0[i] = (uint16_t)cc_next(t);  // the untouched tail
        cc_buf x = cc_new(t, g, hx, len * 4), h = cc_new(t, g, h0, len * 2);
        c->f32_to_f16(c, x.c, h.c, n), g->f32_to_f16(g, x.g, h.g, n);
        snprintf(nm, sizeof nm, "f32_to_f16 n=%zu (halfway, subnormal, overflow, NaN: bits)", n);
        cc_bytes(t, nm, &h);
        if (n >= NKA) {  // the known answers, straight from the GPU
            uint16_t *got = cc_host_copy(g, h.g, NKA * 2), want[NKA];
            memcpy(want, KA_F16, sizeof want);
            cc_cmp_bytes(t, "f32_to_f16 known answers (hand-worked binary16 bits)", got, want,
                         sizeof want);
            free(got);
        }
        cc_free(t, &x), cc_free(t, &h);
        free(hx), free(h0);
    }
    // f16_to_f32 and add_f16 on all 65536 half patterns, then 3 M random ones
    const size_t nh[] = {65536, ((size_t)3 << 20) + 7};
    for (size_t s = 0; s < 2; s++) {
        size_t n = nh[s];
        uint16_t *hh = mallocCheck(n * 2);
        for (size_t i = 0; i < n; i++) hh[i] = n == 65536 ? (uint16_t)i : (uint16_t)cc_next(t);
        float *hy = cc_rand(t, n, -70000, 70000);
        cc_buf h = cc_new(t, g, hh, n * 2), y = cc_new(t, g, hy, n * 4);
        c->f16_to_f32(c, h.c, y.c, n), g->f16_to_f32(g, h.g, y.g, n);
        snprintf(nm, sizeof nm, "f16_to_f32 n=%zu%s (bits, NaN payloads too)", n,
                 n == 65536 ? " every pattern" : "");
        cc_bytes(t, nm, &y);
        cc_free(t, &y);
        y = cc_new(t, g, hy, n * 4);
        c->add_f16(c, y.c, h.c, n), g->add_f16(g, y.g, h.g, n);
        snprintf(nm, sizeof nm, "add_f16 n=%zu%s (one add: exact)", n,
                 n == 65536 ? " every pattern" : "");
        cc_exact(t, nm, &y);
        cc_free(t, &h), cc_free(t, &y);
        free(hh), free(hy);
    }
}
