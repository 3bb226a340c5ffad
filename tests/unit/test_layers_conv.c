// test_layers_conv.c — conv2d (im2col + gemm, and the 1x1 stride-1 path without im2col)
// against a direct 7-loop convolution in float64 (tests/unit/reflayers.h): the forward, and
// dW, dbias and dX for a random upstream gradient, on fresh random inputs; the batch split
// into workspace chunks (including a short last chunk); that backward ADDS into dX and dW;
// and the FLOP count against the multiply-adds the direct loops perform.
// Tolerance: 1e-4 relative to max(|reference|, 1% of the largest reference element).
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layers.h"
#include "net.h"
#include "reflayers.h"
#include "testutil.h"

#define TOL 1e-4

typedef tu_fixture fixture;  // a cpu device (2 threads) and a freshly seeded rng

static double max_abs(const double *v, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        if (fabs(v[i]) > m) m = fabs(v[i]);
    return m;
}

static void close_enough(const char *what, const char *which, const float *a, const double *b,
                         size_t n) {
    char label[200];
    snprintf(label, sizeof label, "%s: %s", what, which);
    tu_assert_close(label, a, b, n, TOL, 0.01 * max_abs(b, n) + 1e-30);
}

typedef struct {
    int B, C, H, W, OC, K, S, P, bias;
    int chunk;  // images per workspace chunk to force (0: the layer's own choice)
    int set;    // run backward as the first writer of dX (dsrc_set): dX starts as NaN
} conv_spec;

// Build the one-conv net, run forward and backward on the cpu device, compare everything
// with the direct loops. `pre` > 0 pre-loads dX and dW with that constant to check that
// backward adds rather than overwrites; with s.set, dX is NaN-filled instead and backward
// must overwrite it (every cell, including those no window reads), still adding into dW.
static void run_case(fixture *f, conv_spec s, float pre) {
    char what[160];
    snprintf(what, sizeof what, "conv B%d %dx%dx%d -> %d k%d s%d p%d bias %d chunk %d set %d",
             s.B, s.C, s.H, s.W, s.OC, s.K, s.S, s.P, s.bias, s.chunk, s.set);
    dt_device *d = f->dev;
    dt_model_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.batch = s.B, cfg.in_c = s.C, cfg.in_h = s.H, cfg.in_w = s.W, cfg.num_classes = 2;
    cfg.seed = 7;
    dt_net *net = dt_net_new(d, "conv", &cfg);
    assert_int_equal(dt_net_add_conv(net, "c", -1, s.OC, s.K, s.S, s.P, s.bias), 0);
    dt_layer *l = net->layers[0];
    int OH = ref_out(s.H, s.K, s.S, s.P), OW = ref_out(s.W, s.K, s.S, s.P);
    size_t per_image = (size_t)s.C * s.K * s.K * OH * OW;
    if (s.chunk) l->workspace_floats = (size_t)s.chunk * per_image;
    dt_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(dt_net_finalize(net, &e), 0);
    l->dsrc_set = s.set;

    size_t nx = (size_t)s.B * s.C * s.H * s.W, ny = (size_t)s.B * s.OC * OH * OW;
    size_t nw = (size_t)s.OC * s.C * s.K * s.K;
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *bias = malloc((size_t)s.OC * 4);
    float *dy = malloc(ny * 4), *y = malloc(ny * 4), *gx = malloc(nx * 4), *gw = malloc(nw * 4);
    float *gb = malloc((size_t)s.OC * 4);
    tu_fill_uniform(&f->rng, x, nx, -1, 1);
    tu_fill_uniform(&f->rng, w, nw, -1, 1);
    tu_fill_uniform(&f->rng, bias, (size_t)s.OC, -1, 1);
    tu_fill_uniform(&f->rng, dy, ny, -1, 1);
    d->from_host(d, net->params + l->w_off, w, nw * 4);
    if (s.bias) d->from_host(d, net->params + l->b_off, bias, (size_t)s.OC * 4);
    dt_net_set_batch(net, x, NULL);
    l->forward(l, net, 1);
    d->to_host(d, y, l->out, ny * 4);

    double *xd = malloc(nx * 8), *wd = malloc(nw * 8), *bd = malloc((size_t)s.OC * 8);
    double *dyd = malloc(ny * 8), *yd = malloc(ny * 8), *rgx = malloc(nx * 8);
    double *rgw = malloc(nw * 8), *rgb = malloc((size_t)s.OC * 8);
    for (size_t i = 0; i < nx; i++) xd[i] = x[i], rgx[i] = s.set ? 0.0 : pre;
    for (size_t i = 0; i < nw; i++) wd[i] = w[i], rgw[i] = pre;
    for (int i = 0; i < s.OC; i++) bd[i] = bias[i], rgb[i] = pre;
    for (size_t i = 0; i < ny; i++) dyd[i] = dy[i];
    ref_conv_forward(s.B, s.C, s.H, s.W, s.OC, s.K, s.S, s.P, xd, wd, s.bias ? bd : NULL, yd);
    close_enough(what, "forward vs direct loops", y, yd, ny);

    d->fill(d, net->dinput, s.set ? NAN : pre, nx);
    d->fill(d, net->grads, pre, net->n_trainable);
    d->from_host(d, l->dout, dy, ny * 4);
    l->backward(l, net);
    d->to_host(d, gx, net->dinput, nx * 4);
    d->to_host(d, gw, net->grads + l->w_off, nw * 4);
    ref_conv_backward(s.B, s.C, s.H, s.W, s.OC, s.K, s.S, s.P, xd, wd, dyd, rgx, rgw, rgb);
    close_enough(what, "dX vs direct loops", gx, rgx, nx);
    close_enough(what, "dW vs direct loops", gw, rgw, nw);
    if (s.bias) {
        d->to_host(d, gb, net->grads + l->b_off, (size_t)s.OC * 4);
        close_enough(what, "dbias vs direct loops", gb, rgb, (size_t)s.OC);
    }

    // FLOPs: 2 per multiply-add of the direct loops (padding included, as im2col does),
    // + one add per output for the bias; backward twice the multiply-adds.
    double macs = (double)s.B * s.OC * OH * OW * s.C * s.K * s.K;
    double bias_flops = s.bias ? (double)ny : 0.0;
    assert_true(fabs(l->fwd_flops - (2 * macs + bias_flops)) < 0.5);
    assert_true(fabs(l->bwd_flops - (4 * macs + bias_flops)) < 0.5);
    assert_true(l->fwd_bytes > 0 && l->bwd_bytes > l->fwd_bytes);

    free(x), free(w), free(bias), free(dy), free(y), free(gx), free(gw), free(gb);
    free(xd), free(wd), free(bd), free(dyd), free(yd), free(rgx), free(rgw), free(rgb);
    dt_net_free(net);
}

static void test_conv2d_matches_direct_loops_3x3_stride1_pad1(void **state) {
    run_case(*state, (conv_spec){3, 4, 9, 11, 6, 3, 1, 1, 1, 0, 0}, 0.0f);
}

static void test_conv2d_matches_direct_loops_7x7_stride2_pad3_stem(void **state) {
    run_case(*state, (conv_spec){2, 3, 21, 19, 8, 7, 2, 3, 0, 0, 0}, 0.0f);
}

static void test_conv2d_matches_direct_loops_1x1_stride1_without_im2col(void **state) {
    fixture *f = *state;
    run_case(f, (conv_spec){4, 16, 5, 7, 8, 1, 1, 0, 0, 0, 0}, 0.0f);
    run_case(f, (conv_spec){4, 5, 6, 6, 9, 1, 1, 0, 1, 0, 0}, 0.0f);
}

static void test_conv2d_matches_direct_loops_1x1_stride2_and_1x1_padded(void **state) {
    fixture *f = *state;
    run_case(f, (conv_spec){3, 6, 7, 8, 4, 1, 2, 0, 0, 0, 0}, 0.0f);
    run_case(f, (conv_spec){2, 3, 4, 5, 2, 1, 1, 1, 1, 0, 0}, 0.0f);  // 1x1 but padded: im2col
}

static void test_conv2d_batch_split_into_workspace_chunks_with_short_last_chunk(void **state) {
    fixture *f = *state;
    run_case(f, (conv_spec){5, 3, 8, 7, 4, 3, 2, 1, 1, 2, 0}, 0.0f);  // chunks 2, 2, 1
    run_case(f, (conv_spec){3, 2, 6, 6, 3, 3, 1, 0, 0, 1, 0}, 0.0f);  // one image at a time
}

static void test_conv2d_backward_adds_into_existing_gradients(void **state) {
    fixture *f = *state;
    run_case(f, (conv_spec){2, 3, 6, 5, 4, 3, 1, 1, 1, 0, 0}, 0.75f);
    run_case(f, (conv_spec){2, 4, 5, 5, 3, 1, 1, 0, 1, 0, 0}, 0.75f);  // pointwise path
}

// As the first writer of dX (nn/net_plan.c), backward overwrites a NaN-filled dX: the 1x1
// stride-1 gemm with beta 0, col2im_set chunk by chunk (a short last chunk), stride 2, and
// k2 stride 3 (input cells that no window reads must come out 0); dW still adds.
static void test_conv2d_backward_as_first_writer_overwrites_nan_filled_dx(void **state) {
    fixture *f = *state;
    run_case(f, (conv_spec){2, 4, 5, 5, 3, 1, 1, 0, 1, 0, 1}, 0.75f);  // pointwise path
    run_case(f, (conv_spec){3, 3, 6, 5, 4, 3, 1, 1, 1, 2, 1}, 0.75f);  // chunks of 2, 1
    run_case(f, (conv_spec){2, 3, 7, 7, 4, 3, 2, 1, 0, 1, 1}, 0.75f);
    run_case(f, (conv_spec){2, 2, 8, 7, 3, 2, 3, 0, 0, 0, 1}, 0.75f);  // gaps
    run_case(f, (conv_spec){2, 3, 6, 6, 5, 1, 2, 0, 0, 0, 1}, 0.75f);  // 1x1 stride 2
}

// A random shape, kernel, stride and padding each run.
static void test_conv2d_matches_direct_loops_random_shapes(void **state) {
    fixture *f = *state;
    for (int t = 0; t < 6; t++) {
        conv_spec s;
        s.K = tu_int(&f->rng, 1, 5);
        s.S = tu_int(&f->rng, 1, 3);
        s.P = tu_int(&f->rng, 0, s.K / 2 + 1);
        s.B = tu_int(&f->rng, 1, 3);
        s.C = tu_int(&f->rng, 1, 5);
        s.OC = tu_int(&f->rng, 1, 6);
        s.H = tu_int(&f->rng, s.K, 12);
        s.W = tu_int(&f->rng, s.K, 12);
        s.bias = tu_int(&f->rng, 0, 1);
        s.chunk = tu_int(&f->rng, 0, s.B);
        s.set = 0;
        run_case(f, s, 0.0f);
    }
}

// The device's preferred chunk (im2col_chunk_bytes) sets the layer's chunk: 2.5 images'
// columns give chunks of 2; 0 (no preference) the whole batch; less than one image, one.
static void test_conv2d_chunk_follows_device_im2col_chunk_bytes(void **state) {
    fixture *f = *state;
    size_t keep = f->dev->im2col_chunk_bytes;
    dt_model_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.batch = 5, cfg.in_c = 3, cfg.in_h = 8, cfg.in_w = 8, cfg.num_classes = 2;
    size_t per_image = (size_t)3 * 9 * 64;  // 3x3 pad 1: 27 rows x 64 columns
    size_t bytes[3] = {per_image * 4 * 5 / 2, 0, 100};
    int want[3] = {2, 5, 1};
    for (int k = 0; k < 3; k++) {
        f->dev->im2col_chunk_bytes = bytes[k];
        dt_net *net = dt_net_new(f->dev, "chunk", &cfg);
        assert_int_equal(dt_net_add_conv(net, "c", -1, 4, 3, 1, 1, 0), 0);
        assert_int_equal(dt_conv_chunk(net->layers[0], f->dev), want[k]);
        assert_int_equal(net->layers[0]->workspace_floats, (size_t)want[k] * per_image);
        dt_net_free(net);
    }
    f->dev->im2col_chunk_bytes = keep;
}

// finalize sizes the shared workspace as the largest layer's need; 1x1 stride 1 needs none.
static void test_net_workspace_is_the_largest_conv_columns(void **state) {
    fixture *f = *state;
    dt_model_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.batch = 3, cfg.in_c = 2, cfg.in_h = 10, cfg.in_w = 10, cfg.num_classes = 2;
    dt_net *net = dt_net_new(f->dev, "ws", &cfg);
    int a = dt_net_add_conv(net, "a", -1, 4, 3, 1, 1, 0);  // cols 2*9 x 100 per image
    int b = dt_net_add_conv(net, "b", a, 8, 1, 1, 0, 0);   // pointwise: none
    int c = dt_net_add_conv(net, "c", b, 2, 5, 2, 0, 0);   // cols 8*25 x 9 per image
    assert_true(a == 0 && b == 1 && c == 2);
    assert_int_equal(net->layers[1]->workspace_floats, 0);
    dt_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(dt_net_finalize(net, &e), 0);
    size_t wa = (size_t)3 * 18 * 100, wc = (size_t)3 * 200 * 9;
    assert_int_equal(net->workspace_floats, wa > wc ? wa : wc);
    dt_net_free(net);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv2d_matches_direct_loops_3x3_stride1_pad1),
        cmocka_unit_test(test_conv2d_matches_direct_loops_7x7_stride2_pad3_stem),
        cmocka_unit_test(test_conv2d_matches_direct_loops_1x1_stride1_without_im2col),
        cmocka_unit_test(test_conv2d_matches_direct_loops_1x1_stride2_and_1x1_padded),
        cmocka_unit_test(test_conv2d_batch_split_into_workspace_chunks_with_short_last_chunk),
        cmocka_unit_test(test_conv2d_backward_adds_into_existing_gradients),
        cmocka_unit_test(test_conv2d_backward_as_first_writer_overwrites_nan_filled_dx),
        cmocka_unit_test(test_conv2d_matches_direct_loops_random_shapes),
        cmocka_unit_test(test_conv2d_chunk_follows_device_im2col_chunk_bytes),
        cmocka_unit_test(test_net_workspace_is_the_largest_conv_columns),
    };
    return cmocka_run_group_tests(tests, tu_fixture_setup, tu_fixture_teardown);
}
