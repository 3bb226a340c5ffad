// test_device_cpu_paths.c — the cpu device's overwriting and specialised paths against
// independent references, on fresh random shapes (seed printed):
//  - col2im_set on a NaN-filled x gives exactly col2im on a zeroed x (every cell written,
//    those no window reads as 0), with gaps (stride > kernel), padding and odd sizes;
//  - max pooling with stride 2 (the row-wise path, ResNet's 3x3/s2 stem pool among them) on
//    inputs with many ties, NaNs and -inf: value and argmax as a double row-major scan that
//    keeps the first of equal maxima and lets the first NaN win.
// The plain col2im and the general maxpool are in test_device_cpu_nn.c.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static int out_size(int in, int k, int stride, int pad) { return (in + 2 * pad - k) / stride + 1; }

static void test_col2im_set_on_nan_filled_x_equals_col2im_on_zeros_random_shapes(void **state) {
    tu_fixture *f = *state;
    dt_device *d = f->dev;
    for (int trial = 0; trial < 300; trial++) {
        int B = tu_int(&f->rng, 1, 3), C = tu_int(&f->rng, 1, 4), H = tu_int(&f->rng, 1, 12);
        int W = tu_int(&f->rng, 1, 12), KH = tu_int(&f->rng, 1, 4), KW = tu_int(&f->rng, 1, 4);
        int stride = tu_int(&f->rng, 1, 5), pad = tu_int(&f->rng, 0, 2);
        if (trial == 0) B = 2, C = 3, H = W = 56, KH = KW = 3, stride = 1, pad = 1;  // resnet
        if (trial == 1) B = 2, C = 2, H = 9, W = 10, KH = KW = 2, stride = 3, pad = 0;  // gaps
        int OH = out_size(H, KH, stride, pad), OW = out_size(W, KW, stride, pad);
        if (H + 2 * pad < KH || W + 2 * pad < KW || OH < 1 || OW < 1) continue;
        size_t nx = (size_t)B * C * H * W, ncol = (size_t)B * C * KH * KW * OH * OW;
        float *col = d->alloc(d, ncol * 4), *x = d->alloc(d, (nx + 1) * 4);
        float *want = d->alloc(d, nx * 4);
        tu_fill_uniform(&f->rng, col, ncol, -1, 1);
        d->col2im(d, col, B, C, H, W, KH, KW, stride, pad, want);  // into zeros
        d->fill(d, x, NAN, nx + 1);
        d->col2im_set(d, col, B, C, H, W, KH, KW, stride, pad, x);
        for (size_t i = 0; i < nx; i++) {
            if (memcmp(&x[i], &want[i], sizeof(float)) != 0)
                fail_msg("col2im_set B%d C%d %dx%d k%dx%d s%d p%d: x[%zu] = %g, col2im into "
                         "zeros gives %g", B, C, H, W, KH, KW, stride, pad, i, x[i], want[i]);
        }
        assert_true(isnan(x[nx]));  // nothing written past the end
        d->free(d, col), d->free(d, x), d->free(d, want);
    }
}

// The reference: a row-major scan in double, keeping the first of equal maxima; a NaN beats
// any number, the first NaN stays. Padding never wins.
static void ref_maxpool_cell(const float *xp, int H, int W, int K, int stride, int pad, int oh,
                             int ow, double *best, int *idx) {
    *best = -INFINITY;
    *idx = -1;
    for (int kh = 0; kh < K; kh++) {
        for (int kw = 0; kw < K; kw++) {
            int ih = oh * stride - pad + kh, iw = ow * stride - pad + kw;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            double v = xp[ih * W + iw];
            int wins = *idx < 0 || v > *best || (isnan(v) && !isnan(*best));
            if (wins) *best = v, *idx = ih * W + iw;
        }
    }
}

static void test_maxpool_stride2_ties_nan_and_inf_match_row_major_scan(void **state) {
    tu_fixture *f = *state;
    dt_device *d = f->dev;
    for (int trial = 0; trial < 200; trial++) {
        int B = tu_int(&f->rng, 1, 2), C = tu_int(&f->rng, 1, 3), H = tu_int(&f->rng, 1, 13);
        int W = tu_int(&f->rng, 1, 13), K = tu_int(&f->rng, 1, 4);
        int pad = tu_int(&f->rng, 0, K / 2), stride = trial % 4 == 3 ? 3 : 2;
        if (trial == 0) B = 2, C = 3, H = W = 112, K = 3, pad = 1;  // resnet stem pool
        if (trial == 1) B = 1, C = 2, H = 7, W = 9, K = 3, pad = 1;  // odd sizes
        int OH = out_size(H, K, stride, pad), OW = out_size(W, K, stride, pad);
        if (H + 2 * pad < K || W + 2 * pad < K || OH < 1 || OW < 1) continue;
        size_t nx = (size_t)B * C * H * W, ny = (size_t)B * C * OH * OW;
        float *x = d->alloc(d, nx * 4), *y = d->alloc(d, ny * 4);
        int32_t *am = d->alloc(d, ny * 4);
        // few distinct values (ties everywhere), some NaN and -inf; all negative on odd
        // trials, so a padding 0 would win if padding were read
        for (size_t i = 0; i < nx; i++) {
            int r = tu_int(&f->rng, 0, 40);
            x[i] = r == 0 ? NAN : r == 1 ? -INFINITY : (float)(r % 4) - (trial & 1 ? 5.0f : 1.5f);
        }
        d->maxpool_forward(d, x, B, C, H, W, K, stride, pad, y, am);
        for (int pc = 0; pc < B * C; pc++) {
            for (int oh = 0; oh < OH; oh++) {
                for (int ow = 0; ow < OW; ow++) {
                    double best;
                    int idx;
                    ref_maxpool_cell(x + (size_t)pc * H * W, H, W, K, stride, pad, oh, ow, &best,
                                     &idx);
                    size_t k = ((size_t)pc * OH + oh) * OW + ow;
                    int same = isnan(best) ? isnan(y[k]) : (double)y[k] == best;
                    if (!same || am[k] != idx)
                        fail_msg("maxpool %dx%d k%d s%d p%d plane %d cell %d,%d: %g@%d, "
                                 "expected %g@%d", H, W, K, stride, pad, pc, oh, ow, y[k], am[k],
                                 best, idx);
                }
            }
        }
        d->free(d, x), d->free(d, y), d->free(d, am);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_col2im_set_on_nan_filled_x_equals_col2im_on_zeros_random_shapes),
        cmocka_unit_test(test_maxpool_stride2_ties_nan_and_inf_match_row_major_scan),
    };
    return cmocka_run_group_tests(tests, tu_fixture_setup, tu_fixture_teardown);
}
