// test_kernels_bn.c — the shared formulas behind the cuda device's fused batch norm and half
// im2col (nn/kernels.h), run here on the CPU so CI checks the math the GPU kernels run:
//  - dt_moments_from_shifted + dt_moments_combine (Chan, Golub & LeVeque 1979) over random
//    slicings of random channels (large offsets, small spreads, empty slices), in slice
//    order and in the GPU block's tree order, against a two-pass float64 mean and variance;
//  - dt_bn_fused_y against bn, + res, relu evaluated in float64, and bit-identical to the
//    unfused formulas (dt_bn_normalize, an fp32 add, dt_relu) in their order;
//  - dt_bn_fused_dz against relu's gradient rule;
//  - dt_im2col_src against an explicitly padded image, and against the cpu device's im2col.
// Tolerances: u = 2^-24 (fp32's unit roundoff), 2^-53 for float64, as stated per check.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt.h"
#include "kernels.h"
#include "testutil.h"

#define U32 (1.0 / 16777216.0)

// The cuda kernel's way (kernels_bn.cu k_bn_moments): a slice's values summed shifted by the
// slice's first value in double, as one triple; here the whole slice is one "thread".
static dt_moments slice_moments(const double *x, size_t lo, size_t hi) {
    double k = lo < hi ? x[lo] : 0.0, s = 0.0, ss = 0.0;
    for (size_t i = lo; i < hi; i++) s += x[i] - k, ss += (x[i] - k) * (x[i] - k);
    return dt_moments_from_shifted((double)(hi - lo), k, s, ss);
}

static void test_moments_combine_matches_two_pass_float64(void **state) {
    tu_fixture *f = *state;
    for (int rep = 0; rep < 200; rep++) {
        size_t n = (size_t)tu_int(&f->rng, 1, 6000);
        double off = tu_uniform(&f->rng, -1e4, 1e4), sc = pow(10.0, tu_uniform(&f->rng, -3, 1));
        double *x = malloc(n * sizeof(double));
        double big = 0.0;  // the largest |x|: the size of the terms of every sum
        for (size_t i = 0; i < n; i++) {
            x[i] = (float)(off + sc * tu_normal(&f->rng));
            big = fmax(big, fabs(x[i]));
        }
        double mean = 0.0, m2 = 0.0;  // the reference: two passes in float64
        for (size_t i = 0; i < n; i++) mean += x[i];
        mean /= (double)n;
        for (size_t i = 0; i < n; i++) m2 += (x[i] - mean) * (x[i] - mean);
        // S random cut points (repeats give empty slices); combined in order, and pairwise
        // as the block's shared-memory tree does (stride halving over a power of two)
        int S = tu_int(&f->rng, 1, 64);
        size_t *cut = malloc((S + 1) * sizeof(size_t));
        cut[0] = 0, cut[S] = n;
        for (int s = 1; s < S; s++) cut[s] = (size_t)tu_int(&f->rng, 0, (int)n);
        for (int a = 1; a < S; a++)  // sort the inner cuts
            for (int b = a; b > 1 && cut[b] < cut[b - 1]; b--) {
                size_t t = cut[b];
                cut[b] = cut[b - 1], cut[b - 1] = t;
            }
        dt_moments seq = {0, 0, 0}, tree[64];
        for (int s = 0; s < 64; s++) tree[s] = (dt_moments){0, 0, 0};
        for (int s = 0; s < S; s++) {
            tree[s] = slice_moments(x, cut[s], cut[s + 1]);
            seq = dt_moments_combine(seq, tree[s]);
        }
        for (int h = 32; h > 0; h >>= 1)
            for (int i = 0; i < h; i++) tree[i] = dt_moments_combine(tree[i], tree[i + h]);
        dt_moments both[2] = {seq, tree[0]};
        for (int k = 0; k < 2; k++) {
            assert_true(both[k].n == (double)n);
            // mean: either side's n additions of terms <= big (n*2^-53*big each); M2 = sums
            // of squares of exact differences (Sterbenz), so relative: 1e-9
            double emean = fabs(both[k].mean - mean), tol_mean = 2.0 * (n + 64) * 0x1p-53 * big;
            double em2 = fabs(both[k].m2 - m2), tol_m2 = 1e-9 * m2 + 1e-300;
            if (emean > tol_mean || em2 > tol_m2)
                fail_msg("moments (%s) n=%zu S=%d off=%g sc=%g: mean %.17g vs %.17g, M2 %.17g "
                         "vs %.17g", k ? "tree" : "in order", n, S, off, sc, both[k].mean,
                         mean, both[k].m2, m2);
        }
        free(x), free(cut);
    }
    // an empty side is the identity
    dt_moments a = {3, 2.5, 7}, z = {0, 0, 0};
    dt_moments r1 = dt_moments_combine(a, z), r2 = dt_moments_combine(z, a);
    assert_true(r1.n == 3 && r1.mean == 2.5 && r1.m2 == 7 && r2.n == 3 && r2.mean == 2.5 &&
                r2.m2 == 7);
}

static void test_bn_fused_y_is_bn_then_add_then_relu(void **state) {
    tu_fixture *f = *state;
    for (int i = 0; i < 100000; i++) {
        float x = (float)tu_uniform(&f->rng, -5, 5), m = (float)tu_uniform(&f->rng, -2, 2);
        float is = (float)tu_uniform(&f->rng, 0.1, 10), g = (float)tu_uniform(&f->rng, -2, 2);
        float b = (float)tu_uniform(&f->rng, -2, 2), r = (float)tu_uniform(&f->rng, -3, 3);
        int has_res = i & 1, relu = (i >> 1) & 1;
        float got = dt_bn_fused_y(x, m, is, g, b, has_res, r, relu);
        // the unfused ops, in order, each into fp32: the same bits
        float z = dt_bn_normalize(x, m, is, g, b);
        if (has_res) z = z + r;
        float unf = relu ? dt_relu(z) : z;
        if (memcmp(&got, &unf, sizeof got) != 0)
            fail_msg("dt_bn_fused_y(%a ...) = %a, the unfused ops give %a", x, got, unf);
        // float64: five roundings at most (sub, two multiplies, two adds), each <= u of the
        // size of the terms so far
        double zr = (double)g * ((double)x - m) * is + b + (has_res ? r : 0.0);
        double ref = relu && zr < 0 ? 0.0 : zr;
        double mag = fabs((double)g * is) * (fabs(x) + fabs(m)) + fabs(b) + fabs(r);
        if (fabs(got - ref) > 6 * U32 * mag)
            fail_msg("dt_bn_fused_y: %.9g vs float64 %.17g (mag %g)", got, ref, mag);
    }
    // NaN stays NaN through relu, as dt_relu
    assert_true(isnan(dt_bn_fused_y(NAN, 0, 1, 1, 0, 0, 0, 1)));
    assert_true(isnan(dt_bn_fused_y(1, 0, 1, 1, 0, 1, NAN, 1)));
}

static void test_bn_fused_dz_is_relu_gradient(void **state) {
    tu_fixture *f = *state;
    for (int i = 0; i < 10000; i++) {
        float y = i % 3 == 0 ? 0.0f : (float)tu_uniform(&f->rng, -1, 1);
        float dy = (float)tu_uniform(&f->rng, -1, 1);
        assert_true(dt_bn_fused_dz(y, dy, 0) == dy);
        assert_true(dt_bn_fused_dz(y, dy, 1) == (y > 0.0f ? dy : 0.0f));
    }
    assert_true(dt_bn_fused_dz(-0.0f, 1.0f, 1) == 0.0f);  // relu's output 0: no gradient
}

// im2col's index arithmetic against an explicitly padded copy of x holding each cell's
// index (padding -1), and the cpu device's im2col on x[i] = i + 1 (padding reads 0)
static void test_im2col_src_matches_padded_image_and_cpu_device(void **state) {
    tu_fixture *f = *state;
    for (int rep = 0; rep < 40; rep++) {
        int B = tu_int(&f->rng, 1, 3), C = tu_int(&f->rng, 1, 4), H = tu_int(&f->rng, 1, 12);
        int W = tu_int(&f->rng, 1, 12), KH = tu_int(&f->rng, 1, 5), KW = tu_int(&f->rng, 1, 5);
        int s = tu_int(&f->rng, 1, 3), p = tu_int(&f->rng, 0, 2);
        if (rep == 0) {  // "same" width (KW = 2p+1, stride 1) on one column: the outer kw
            B = 1, C = 1, H = 3, W = 1, KH = 1, KW = 5, s = 1, p = 2;  // have no valid column
        }
        int OH = (H + 2 * p - KH) / s + 1, OW = (W + 2 * p - KW) / s + 1;
        if (OH <= 0 || OW <= 0) continue;
        int PH = H + 2 * p, PW = W + 2 * p;
        long long *pad = malloc((size_t)B * C * PH * PW * sizeof(long long));
        for (int pc = 0; pc < B * C; pc++)
            for (int h = 0; h < PH; h++)
                for (int w = 0; w < PW; w++) {
                    int ih = h - p, iw = w - p;
                    pad[((size_t)pc * PH + h) * PW + w] =
                        ih < 0 || ih >= H || iw < 0 || iw >= W ? -1
                                                               : ((long long)pc * H + ih) * W + iw;
                }
        size_t nx = (size_t)B * C * H * W, ncol = (size_t)B * C * KH * KW * OH * OW;
        float *x = malloc(nx * sizeof(float)), *col = malloc(ncol * sizeof(float));
        for (size_t i = 0; i < nx; i++) x[i] = (float)(i + 1);
        f->dev->im2col(f->dev, x, B, C, H, W, KH, KW, s, p, col);
        size_t at = 0;
        for (int pc = 0; pc < B * C; pc++)
            for (int kh = 0; kh < KH; kh++)
                for (int kw = 0; kw < KW; kw++)
                    for (int oh = 0; oh < OH; oh++)
                        for (int ow = 0; ow < OW; ow++, at++) {
                            long long got = dt_im2col_src((size_t)pc, kh, kw, oh, ow, H, W, s, p);
                            // a kernel larger than the padded image still gets one window
                            // (the size formula truncates toward 0): past the image is padding
                            int ph = oh * s + kh, pw = ow * s + kw;
                            long long want = ph >= PH || pw >= PW
                                                 ? -1
                                                 : pad[((size_t)pc * PH + ph) * PW + pw];
                            if (got != want || (float)(got + 1) != col[at])
                                fail_msg("dt_im2col_src pc=%d k=(%d,%d) o=(%d,%d) H=%d W=%d s=%d "
                                         "p=%d: %lld, padded image %lld, cpu im2col %g",
                                         pc, kh, kw, oh, ow, H, W, s, p, got, want, col[at]);
                        }
        free(pad), free(x), free(col);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_moments_combine_matches_two_pass_float64),
        cmocka_unit_test(test_bn_fused_y_is_bn_then_add_then_relu),
        cmocka_unit_test(test_bn_fused_dz_is_relu_gradient),
        cmocka_unit_test(test_im2col_src_matches_padded_image_and_cpu_device),
    };
    return cmocka_run_group_tests(tests, tu_fixture_setup, tu_fixture_teardown);
}
