// test_device_cpu_nn.c — the cpu device's network primitives (im2col/col2im, bias, relu,
// max and adaptive average pooling, softmax cross-entropy), each against an independent
// float64 reference written here from the definition (naive loops, finite differences,
// log-sum-exp in double), on fresh random shapes including odd sizes, stride 2, padding and
// batch 1. Batch normalisation is in test_device_cpu_bn.c; memory and gemm in
// test_device_cpu.c, the elementwise ops in test_device_cpu_elementwise.c.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static uint64_t g_seed;

static int out_size(int in, int k, int stride, int pad) { return (in + 2 * pad - k) / stride + 1; }

// a random conv/pool geometry with at least one output cell
typedef struct { int B, C, H, W, KH, KW, stride, pad, OH, OW; } geom;

static geom random_geom(tu_rng *r, int square) {
    geom g;
    do {
        g.B = tu_int(r, 1, 3);
        g.C = tu_int(r, 1, 4);
        g.H = tu_int(r, 1, 11);
        g.W = tu_int(r, 1, 11);
        g.KH = tu_int(r, 1, 4);
        g.KW = square ? g.KH : tu_int(r, 1, 4);
        g.stride = tu_int(r, 1, 3);
        g.pad = tu_int(r, 0, 2);
        if (square && g.pad > g.KH / 2) g.pad = g.KH / 2;  // maxpool: PyTorch's limit
        g.OH = out_size(g.H, g.KH, g.stride, g.pad);
        g.OW = out_size(g.W, g.KW, g.stride, g.pad);
    } while (g.H + 2 * g.pad < g.KH || g.W + 2 * g.pad < g.KW || g.OH < 1 || g.OW < 1);
    return g;
}

// x value at (b,c,ih,iw), 0 outside the image
static double xat(const float *x, const geom *g, int b, int c, int ih, int iw) {
    if (ih < 0 || ih >= g->H || iw < 0 || iw >= g->W) return 0.0;
    return x[(((size_t)b * g->C + c) * g->H + ih) * g->W + iw];
}

// ---- im2col / col2im ----

static void test_im2col_matches_definition_random_shapes_stride_and_padding(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 21);
    dt_device *d = dt_device_cpu_create(2);
    for (int trial = 0; trial < 300; trial++) {
        geom g = random_geom(&r, 0);
        if (trial == 0) g = (geom){2, 3, 56, 56, 3, 3, 1, 1, 56, 56};  // resnet 3x3
        if (trial == 1) g = (geom){1, 2, 9, 7, 7, 7, 2, 3, 0, 0};      // resnet stem, odd
        g.OH = out_size(g.H, g.KH, g.stride, g.pad);
        g.OW = out_size(g.W, g.KW, g.stride, g.pad);
        size_t nx = (size_t)g.B * g.C * g.H * g.W;
        size_t rows = (size_t)g.C * g.KH * g.KW, ohw = (size_t)g.OH * g.OW;
        size_t ncol = (size_t)g.B * rows * ohw;
        float *x = d->alloc(d, nx * 4), *col = d->alloc(d, (ncol + 1) * 4);
        tu_fill_uniform(&r, x, nx, -1, 1);
        tu_fill_uniform(&r, col, ncol + 1, 5, 6);  // garbage that im2col must overwrite
        float guard = col[ncol];
        d->im2col(d, x, g.B, g.C, g.H, g.W, g.KH, g.KW, g.stride, g.pad, col);
        for (int b = 0; b < g.B; b++)
            for (int c = 0; c < g.C; c++)
                for (int kh = 0; kh < g.KH; kh++)
                    for (int kw = 0; kw < g.KW; kw++)
                        for (int oh = 0; oh < g.OH; oh++)
                            for (int ow = 0; ow < g.OW; ow++) {
                                size_t row = ((size_t)c * g.KH + kh) * g.KW + kw;
                                double want = xat(x, &g, b, c, oh * g.stride - g.pad + kh,
                                                  ow * g.stride - g.pad + kw);
                                float got = col[((size_t)b * rows + row) * ohw + oh * g.OW + ow];
                                if ((double)got != want) {
                                    fail_msg("im2col B%d C%d %dx%d k%dx%d s%d p%d: col[b%d r%zu "
                                             "%d,%d] = %g, expected %g", g.B, g.C, g.H, g.W,
                                             g.KH, g.KW, g.stride, g.pad, b, row, oh, ow, got,
                                             want);
                                }
                            }
        assert_true(col[ncol] == guard);
        d->free(d, x);
        d->free(d, col);
    }
    d->destroy(d);
}

// col2im adds into x every col entry that im2col read from x: checked against a double
// scatter loop, and <im2col(u), v> == <u, col2im(v)> (the adjoint identity) in double.
static void test_col2im_adds_the_adjoint_of_im2col_random_shapes(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 22);
    dt_device *d = dt_device_cpu_create(3);
    for (int trial = 0; trial < 300; trial++) {
        geom g = random_geom(&r, 0);
        size_t nx = (size_t)g.B * g.C * g.H * g.W;
        size_t rows = (size_t)g.C * g.KH * g.KW, ohw = (size_t)g.OH * g.OW;
        size_t ncol = (size_t)g.B * rows * ohw;
        float *x = d->alloc(d, nx * 4), *col = d->alloc(d, ncol * 4), *u = d->alloc(d, nx * 4);
        float *ucol = d->alloc(d, ncol * 4);
        double *ref = malloc(nx * 8);
        tu_fill_uniform(&r, x, nx, -1, 1);
        tu_fill_uniform(&r, col, ncol, -1, 1);
        for (size_t i = 0; i < nx; i++) ref[i] = x[i];
        for (int b = 0; b < g.B; b++)
            for (int c = 0; c < g.C; c++)
                for (int kh = 0; kh < g.KH; kh++)
                    for (int kw = 0; kw < g.KW; kw++)
                        for (int oh = 0; oh < g.OH; oh++)
                            for (int ow = 0; ow < g.OW; ow++) {
                                int ih = oh * g.stride - g.pad + kh;
                                int iw = ow * g.stride - g.pad + kw;
                                if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W) continue;
                                size_t row = ((size_t)c * g.KH + kh) * g.KW + kw;
                                ref[(((size_t)b * g.C + c) * g.H + ih) * g.W + iw] +=
                                    col[((size_t)b * rows + row) * ohw + oh * g.OW + ow];
                            }
        d->col2im(d, col, g.B, g.C, g.H, g.W, g.KH, g.KW, g.stride, g.pad, x);
        tu_assert_close("col2im", x, ref, nx, 1e-6, 1.0);
        // adjoint identity with a zero x
        tu_fill_uniform(&r, u, nx, -1, 1);
        d->im2col(d, u, g.B, g.C, g.H, g.W, g.KH, g.KW, g.stride, g.pad, ucol);
        d->fill(d, x, 0.0f, nx);
        d->col2im(d, col, g.B, g.C, g.H, g.W, g.KH, g.KW, g.stride, g.pad, x);
        double lhs = 0, rhs = 0;
        for (size_t i = 0; i < ncol; i++) lhs += (double)ucol[i] * col[i];
        for (size_t i = 0; i < nx; i++) rhs += (double)u[i] * x[i];
        if (!(fabs(lhs - rhs) <= 1e-5 * (1 + fabs(lhs)))) fail_msg("adjoint %g vs %g", lhs, rhs);
        d->free(d, x);
        d->free(d, col);
        d->free(d, u);
        d->free(d, ucol);
        free(ref);
    }
    d->destroy(d);
}

// ---- bias ----

static void test_bias_add_and_bias_backward_match_double_sums(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 23);
    dt_device *d = dt_device_cpu_create(2);
    for (int trial = 0; trial < 20; trial++) {
        int B = tu_int(&r, 1, 5), C = tu_int(&r, 1, 70), HW = tu_int(&r, 1, 800);
        size_t n = (size_t)B * C * HW;
        float *y = d->alloc(d, n * 4), *bias = d->alloc(d, C * 4), *db = d->alloc(d, C * 4);
        double *ref = malloc(n * 8), *rdb = malloc(C * 8);
        tu_fill_uniform(&r, y, n, -1, 1);
        tu_fill_uniform(&r, bias, C, -1, 1);
        tu_fill_uniform(&r, db, C, -1, 1);
        for (int c = 0; c < C; c++) rdb[c] = db[c];
        for (size_t i = 0; i < n; i++) {
            int c = (int)(i / HW % C);
            ref[i] = (double)y[i] + bias[c];
            rdb[c] += y[i];  // the sum of the dy that bias_backward will read (y before add)
        }
        d->bias_backward(d, y, B, C, HW, db);
        tu_assert_close("bias_backward", db, rdb, C, 1e-5, 1.0);
        d->bias_add(d, y, bias, B, C, HW);
        tu_assert_close("bias_add", y, ref, n, 1e-6, 1.0);
        d->free(d, y);
        d->free(d, bias);
        d->free(d, db);
        free(ref);
        free(rdb);
    }
    d->destroy(d);
}

// ---- relu ----

static void test_relu_forward_and_backward_add_where_output_positive(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 26);
    dt_device *d = dt_device_cpu_create(2);
    const size_t counts[] = {0, 1, 17, 100003};
    for (size_t t = 0; t < 4; t++) {
        size_t n = counts[t];
        float *x = d->alloc(d, n * 4 + 4), *y = d->alloc(d, n * 4 + 4);
        float *dy = d->alloc(d, n * 4), *dx = d->alloc(d, n * 4);
        double *ry = malloc(n * 8 + 8), *rdx = malloc(n * 8 + 8);
        tu_fill_uniform(&r, x, n, -1, 1);
        tu_fill_uniform(&r, dy, n, -1, 1);
        tu_fill_uniform(&r, dx, n, -1, 1);
        if (n > 2) x[1] = 0.0f, x[2] = NAN;
        for (size_t i = 0; i < n; i++) {
            ry[i] = x[i] > 0 ? x[i] : 0.0;
            rdx[i] = dx[i] + (x[i] > 0 ? dy[i] : 0.0);
        }
        d->relu_forward(d, x, y, n);
        if (n > 2) {
            assert_true(isnan(y[2]));  // NaN propagates, as in PyTorch
            y[2] = 0.0f;
        }
        tu_assert_close("relu forward", y, ry, n, 0.0, 1.0);
        d->relu_backward(d, y, dy, dx, n);
        tu_assert_close("relu backward", dx, rdx, n, 1e-7, 1.0);
        float *ptr[] = {x, y, dy, dx};
        for (int i = 0; i < 4; i++) d->free(d, ptr[i]);
        free(ry);
        free(rdx);
    }
    d->destroy(d);
}

// In place (torchvision inplace=True): relu_forward with x == y clamps, and
// relu_backward_inplace turns dy into dx = y > 0 ? dy : 0 in its own buffer (NaN and 0 block).
static void test_relu_in_place_forward_and_backward_mask_the_buffer(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 31);
    dt_device *d = dt_device_cpu_create(2);
    const size_t counts[] = {0, 1, 17, 100003};
    for (size_t t = 0; t < 4; t++) {
        size_t n = counts[t];
        float *xy = d->alloc(d, n * 4 + 4), *g = d->alloc(d, n * 4 + 4);
        double *ry = malloc(n * 8 + 8), *rg = malloc(n * 8 + 8);
        tu_fill_uniform(&r, xy, n, -1, 1);
        tu_fill_uniform(&r, g, n, -1, 1);
        if (n > 2) xy[1] = 0.0f, xy[2] = NAN;
        for (size_t i = 0; i < n; i++) {
            ry[i] = xy[i] > 0 ? xy[i] : 0.0;
            rg[i] = xy[i] > 0 ? g[i] : 0.0;  // NaN > 0 is false
        }
        d->relu_forward(d, xy, xy, n);
        if (n > 2) assert_true(isnan(xy[2]));
        d->relu_backward_inplace(d, xy, g, n);
        if (n > 2) xy[2] = 0.0f;
        tu_assert_close("relu forward in place", xy, ry, n, 0.0, 1.0);
        tu_assert_close("relu backward in place", g, rg, n, 0.0, 1.0);
        d->free(d, xy), d->free(d, g);
        free(ry), free(rg);
    }
    d->destroy(d);
}

// ---- pooling ----

static void test_maxpool_argmax_padding_never_wins_and_backward_scatters(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 27);
    dt_device *d = dt_device_cpu_create(2);
    for (int trial = 0; trial < 200; trial++) {
        geom g = random_geom(&r, 1);
        if (trial == 0) g = (geom){2, 3, 112, 112, 3, 3, 2, 1, 56, 56};  // resnet stem pool
        size_t nx = (size_t)g.B * g.C * g.H * g.W, ny = (size_t)g.B * g.C * g.OH * g.OW;
        float *x = d->alloc(d, nx * 4), *y = d->alloc(d, ny * 4), *dy = d->alloc(d, ny * 4);
        float *dx = d->alloc(d, nx * 4);
        int32_t *am = d->alloc(d, ny * 4);
        double *rdx = malloc(nx * 8);
        // all negative on odd trials: a padding 0 would win if padding were read
        if (trial & 1) tu_fill_uniform(&r, x, nx, -3, -1); else tu_fill_uniform(&r, x, nx, -1, 1);
        tu_fill_uniform(&r, dy, ny, -1, 1);
        tu_fill_uniform(&r, dx, nx, -1, 1);
        for (size_t i = 0; i < nx; i++) rdx[i] = dx[i];
        d->maxpool_forward(d, x, g.B, g.C, g.H, g.W, g.KH, g.stride, g.pad, y, am);
        for (int b = 0; b < g.B; b++)
            for (int c = 0; c < g.C; c++)
                for (int oh = 0; oh < g.OH; oh++)
                    for (int ow = 0; ow < g.OW; ow++) {
                        double best = -INFINITY;
                        int bi = -1;
                        for (int kh = 0; kh < g.KH; kh++)
                            for (int kw = 0; kw < g.KW; kw++) {
                                int ih = oh * g.stride - g.pad + kh;
                                int iw = ow * g.stride - g.pad + kw;
                                if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W) continue;
                                double v = xat(x, &g, b, c, ih, iw);
                                if (v > best) best = v, bi = ih * g.W + iw;
                            }
                        size_t k = (((size_t)b * g.C + c) * g.OH + oh) * g.OW + ow;
                        if ((double)y[k] != best || am[k] != bi) {
                            fail_msg("maxpool %dx%d k%d s%d p%d cell %d,%d: %g@%d, expected "
                                     "%g@%d", g.H, g.W, g.KH, g.stride, g.pad, oh, ow, y[k],
                                     am[k], best, bi);
                        }
                        rdx[((size_t)b * g.C + c) * g.H * g.W + bi] += dy[k];
                    }
        d->maxpool_backward(d, dy, am, g.B, g.C, g.H, g.W, g.OH, g.OW, dx);
        tu_assert_close("maxpool backward", dx, rdx, nx, 1e-6, 1.0);
        d->free(d, x);
        d->free(d, y);
        d->free(d, dy);
        d->free(d, dx);
        d->free(d, am);
        free(rdx);
    }
    d->destroy(d);
}

// A window of -inf still points at a real cell (its gradient must land somewhere), and a
// NaN wins its window, as in PyTorch (the loss then turns NaN instead of hiding it).
static void test_maxpool_nan_wins_and_all_minus_inf_window_has_valid_argmax(void **state) {
    (void)state;
    dt_device *d = dt_device_cpu_create(2);
    // one 3x3 plane, K=2, stride 1, pad 1: 4x4 outputs, corners see one real cell
    float x[9] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY,
                  -INFINITY, -INFINITY, -INFINITY};
    float y[16], dy[16], dx[9] = {0};
    int32_t am[16];
    d->maxpool_forward(d, x, 1, 1, 3, 3, 2, 1, 1, y, am);
    for (int i = 0; i < 16; i++) {
        int oh = i / 4, ow = i % 4, h = am[i] / 3, w = am[i] % 3;
        assert_true(y[i] == -INFINITY);
        assert_true(am[i] >= 0 && am[i] < 9);
        assert_true(h >= oh - 1 && h <= oh && w >= ow - 1 && w <= ow);  // inside the window
        dy[i] = 1.0f;
    }
    d->maxpool_backward(d, dy, am, 1, 1, 3, 3, 4, 4, dx);
    double total = 0;
    for (int i = 0; i < 9; i++) total += dx[i];
    assert_true(total == 16.0);  // every output's gradient landed in the plane
    x[4] = NAN;  // the centre cell (1,1) lies in the windows of outputs (1..2, 1..2)
    x[0] = 5.0f;
    d->maxpool_forward(d, x, 1, 1, 3, 3, 2, 1, 1, y, am);
    for (int i = 0; i < 16; i++) {
        int oh = i / 4, ow = i % 4;
        int sees_centre = oh >= 1 && oh <= 2 && ow >= 1 && ow <= 2;
        if (sees_centre) {
            assert_true(isnan(y[i]) && am[i] == 4);
        } else {
            assert_false(isnan(y[i]));
        }
    }
    assert_true(y[0] == 5.0f && am[0] == 0);
    d->destroy(d);
}

// PyTorch AdaptiveAvgPool2d: cell i averages [floor(i*H/OH), ceil((i+1)*H/OH)), written here
// with floating floor/ceil (the device uses integer division).
static void ref_window(int i, int in, int out, int *lo, int *hi) {
    *lo = (int)floor((double)i * in / out);
    *hi = (int)ceil((double)(i + 1) * in / out);
}

static void test_adaptive_avgpool_non_divisible_7to3_5to2_and_global_with_backward(
    void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 28);
    dt_device *d = dt_device_cpu_create(2);
    const int shapes[][4] = {{7, 7, 3, 3}, {5, 5, 2, 2}, {7, 5, 3, 2}, {7, 7, 1, 1},
                             {6, 6, 6, 6}, {3, 3, 5, 4}, {1, 1, 1, 1}, {13, 11, 4, 7}};
    for (int trial = 0; trial < 8 + 20; trial++) {
        int H, W, OH, OW;
        if (trial < 8) {
            H = shapes[trial][0], W = shapes[trial][1], OH = shapes[trial][2], OW = shapes[trial][3];
        } else {
            H = tu_int(&r, 1, 12), W = tu_int(&r, 1, 12), OH = tu_int(&r, 1, 8), OW = tu_int(&r, 1, 8);
        }
        int B = tu_int(&r, 1, 3), C = tu_int(&r, 1, 5);
        if (trial == 3) B = 8, C = 2048;  // resnet-50 global pool, parallel path
        size_t nx = (size_t)B * C * H * W, ny = (size_t)B * C * OH * OW;
        float *x = d->alloc(d, nx * 4), *y = d->alloc(d, ny * 4), *dy = d->alloc(d, ny * 4);
        float *dx = d->alloc(d, nx * 4);
        double *ry = malloc(ny * 8), *rdx = malloc(nx * 8);
        tu_fill_uniform(&r, x, nx, -1, 1);
        tu_fill_uniform(&r, dy, ny, -1, 1);
        tu_fill_uniform(&r, dx, nx, -1, 1);
        for (size_t i = 0; i < nx; i++) rdx[i] = dx[i];
        for (int p = 0; p < B * C; p++)
            for (int i = 0; i < OH; i++)
                for (int j = 0; j < OW; j++) {
                    int h0, h1, w0, w1;
                    ref_window(i, H, OH, &h0, &h1);
                    ref_window(j, W, OW, &w0, &w1);
                    double s = 0, cnt = (double)(h1 - h0) * (w1 - w0);
                    for (int a = h0; a < h1; a++)
                        for (int b = w0; b < w1; b++) s += x[((size_t)p * H + a) * W + b];
                    size_t k = ((size_t)p * OH + i) * OW + j;
                    ry[k] = s / cnt;
                    for (int a = h0; a < h1; a++)
                        for (int b = w0; b < w1; b++) rdx[((size_t)p * H + a) * W + b] += dy[k] / cnt;
                }
        d->avgpool_forward(d, x, B, C, H, W, OH, OW, y);
        tu_assert_close("avgpool forward", y, ry, ny, 1e-5, 1.0);
        d->avgpool_backward(d, dy, B, C, H, W, OH, OW, dx);
        tu_assert_close("avgpool backward", dx, rdx, nx, 1e-5, 1.0);
        float *ptr[] = {x, y, dy, dx};
        for (int i = 0; i < 4; i++) d->free(d, ptr[i]);
        free(ry);
        free(rdx);
    }
    d->destroy(d);
}

// ---- softmax cross-entropy ----

static void test_softmax_xent_matches_double_logsumexp_large_logits_stay_finite(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 29);
    dt_device *d = dt_device_cpu_create(2);
    for (int trial = 0; trial < 12; trial++) {
        int B = tu_int(&r, 1, 9), K = tu_int(&r, 1, 40);
        if (trial == 1) B = 64, K = 1000;  // parallel path
        double spread = trial % 3 == 2 ? 1e4 : 5;  // 1e4: exp would overflow without the max
        size_t n = (size_t)B * K;
        float *z = d->alloc(d, n * 4), *p = d->alloc(d, n * 4), *g = d->alloc(d, n * 4);
        int32_t *lab = d->alloc(d, B * 4);
        double *rp = malloc(n * 8), *rg = malloc(n * 8);
        tu_fill_uniform(&r, z, n, -spread, spread);
        tu_fill_uniform(&r, g, n, -1, 1);
        for (int b = 0; b < B; b++) lab[b] = tu_int(&r, 0, K - 1);
        double loss = 0, scale = tu_uniform(&r, 0.1, 2);
        for (int b = 0; b < B; b++) {
            const float *zb = z + (size_t)b * K;
            double m = zb[0], s = 0;
            for (int k = 1; k < K; k++) m = fmax(m, zb[k]);
            for (int k = 0; k < K; k++) s += exp((double)zb[k] - m);
            double lse = m + log(s);
            loss += lse - zb[lab[b]];
            for (int k = 0; k < K; k++) {
                size_t i = (size_t)b * K + k;
                rp[i] = exp((double)zb[k] - lse);
                rg[i] = g[i] + scale * (rp[i] - (k == lab[b]));
            }
        }
        loss /= B;
        float got = d->softmax_xent_forward(d, z, lab, B, K, p);
        assert_true(isfinite(got));
        if (!(fabs(got - loss) <= 1e-5 * fmax(1.0, fabs(loss)))) {
            fail_msg("loss %.9g, expected %.9g (B=%d K=%d spread %g)", got, loss, B, K, spread);
        }
        tu_assert_close("softmax probs", p, rp, n, 1e-5, 1e-3);
        d->softmax_xent_backward(d, p, lab, B, K, (float)scale, g);
        tu_assert_close("softmax_xent backward", g, rg, n, 1e-5, 1.0);
        // a label out of range gives NaN, not a number that looks right
        if (trial == 0) {
            lab[0] = K;
            assert_true(isnan(d->softmax_xent_forward(d, z, lab, B, K, p)));
            lab[0] = -1;
            assert_true(isnan(d->softmax_xent_forward(d, z, lab, B, K, p)));
        }
        d->free(d, z);
        d->free(d, p);
        d->free(d, g);
        d->free(d, lab);
        free(rp);
        free(rg);
    }
    d->destroy(d);
}
int main(void) {
    g_seed = tu_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_im2col_matches_definition_random_shapes_stride_and_padding),
        cmocka_unit_test(test_col2im_adds_the_adjoint_of_im2col_random_shapes),
        cmocka_unit_test(test_bias_add_and_bias_backward_match_double_sums),
        cmocka_unit_test(test_relu_forward_and_backward_add_where_output_positive),
        cmocka_unit_test(test_relu_in_place_forward_and_backward_mask_the_buffer),
        cmocka_unit_test(test_maxpool_argmax_padding_never_wins_and_backward_scatters),
        cmocka_unit_test(test_maxpool_nan_wins_and_all_minus_inf_window_has_valid_argmax),
        cmocka_unit_test(test_adaptive_avgpool_non_divisible_7to3_5to2_and_global_with_backward),
        cmocka_unit_test(test_softmax_xent_matches_double_logsumexp_large_logits_stay_finite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
