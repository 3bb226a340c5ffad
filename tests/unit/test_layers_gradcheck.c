// test_layers_gradcheck.c — every layer type, alone in a tiny network on the cpu device:
// its fp32 forward against an independent float64 forward (tests/unit/reflayers.h), and its
// backward for a random upstream gradient r against central finite differences of that
// float64 forward (L = sum r*y), for the input and for every trainable parameter.
// Inputs and parameters are fresh random numbers (seed printed). Tolerances: forward 1e-4,
// gradients 5e-4, each relative to max(|reference|, 1% of the largest reference element).
// The conv path-by-path comparison with direct loops is in test_layers_conv.c.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "layers.h"
#include "net.h"
#include "reflayers.h"
#include "testutil.h"

#define TOL_FWD 1e-4
#define TOL_GRAD 5e-4
#define FD_H 1e-6

typedef tu_fixture fixture;  // a cpu device (2 threads) and a freshly seeded rng

// A network with input (B,C,H,W), ready for one dt_net_add_* call.
static dt_net *net_for(fixture *f, int B, int C, int H, int W) {
    dt_model_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.batch = B, cfg.in_c = C, cfg.in_h = H, cfg.in_w = W;
    cfg.num_classes = 10;
    cfg.seed = (uint64_t)tu_int(&f->rng, 0, 1 << 30);
    return dt_net_new(f->dev, "test", &cfg);
}

static void finalize_ok(dt_net *net) {
    dt_error e;
    memset(&e, 0, sizeof e);
    if (dt_net_finalize(net, &e) != 0) fail_msg("dt_net_finalize failed: %s", e.msg);
}

// Random trainable parameters (gamma in [0.5,1.5], the rest in [-0.5,0.5]) and running
// statistics (mean in [-0.5,0.5], var in [0.5,2]), so bias and affine paths all matter.
static void randomize_params(fixture *f, dt_net *net) {
    float *p = calloc(net->n_total ? net->n_total : 1, sizeof(float));
    for (int t = 0; t < net->n_params; t++) {
        const dt_param *q = &net->params_table[t];
        double lo = -0.5, hi = 0.5;
        if (q->kind == DT_PARAM_BN_GAMMA) lo = 0.5, hi = 1.5;
        if (q->kind == DT_PARAM_RUNNING_VAR) lo = 0.5, hi = 2.0;
        tu_fill_uniform(&f->rng, p + q->offset, q->count, lo, hi);
    }
    if (net->n_total) f->dev->from_host(f->dev, net->params, p, net->n_total * sizeof(float));
    free(p);
}

typedef void (*ref_fn)(const dt_layer *l, const double *x, const double *p, double *y,
                       const void *ctx);

static double max_abs(const double *v, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        if (fabs(v[i]) > m) m = fabs(v[i]);
    return m;
}

static void assert_close(const char *what, const char *which, const float *a, const double *b,
                         size_t n, double tol) {
    char label[160];
    snprintf(label, sizeof label, "%s: %s", what, which);
    tu_assert_close(label, a, b, n, tol, 0.01 * max_abs(b, n) + 1e-30);
}

static double loss_of(const dt_layer *l, ref_fn ref, const void *ctx, const double *x,
                      const double *p, const double *r, double *y, size_t ny) {
    ref(l, x, p, y, ctx);
    double s = 0.0;
    for (size_t i = 0; i < ny; i++) s += r[i] * y[i];
    return s;
}

// The check described at the top, for the last layer of `net` (which reads the input).
// x_host: the input (B*C*H*W floats). Leaves the layer's forward state in place.
static void check_layer(fixture *f, dt_net *net, int training, ref_fn ref, const void *ctx,
                        const float *x_host, const char *what) {
    dt_device *d = f->dev;
    dt_layer *l = net->layers[dt_net_last(net)];
    assert_int_equal(l->in, -1);
    size_t nx = (size_t)l->B * dt_layer_in_size(l), ny = (size_t)l->B * dt_layer_out_size(l);
    size_t np = net->n_total, nt = net->n_trainable;
    double *x = malloc(nx * sizeof(double)), *p = malloc((np + 1) * sizeof(double));
    double *y = malloc(ny * sizeof(double)), *r = malloc(ny * sizeof(double));
    double *fdx = malloc(nx * sizeof(double)), *fdp = malloc((nt + 1) * sizeof(double));
    float *pf = malloc((np + 1) * sizeof(float)), *yf = malloc(ny * sizeof(float));
    float *rf = malloc(ny * sizeof(float)), *gx = malloc(nx * sizeof(float));
    float *gp = malloc((nt + 1) * sizeof(float));

    d->to_host(d, pf, net->params, np * sizeof(float));
    for (size_t i = 0; i < np; i++) p[i] = pf[i];
    for (size_t i = 0; i < nx; i++) x[i] = x_host[i];

    // forward
    dt_net_set_batch(net, x_host, NULL);
    l->forward(l, net, training);
    d->to_host(d, yf, l->out, ny * sizeof(float));
    ref(l, x, p, y, ctx);
    assert_close(what, "forward", yf, y, ny, TOL_FWD);

    // backward of L = sum r*y
    tu_fill_uniform(&f->rng, rf, ny, -1.0, 1.0);
    for (size_t i = 0; i < ny; i++) r[i] = rf[i];
    d->fill(d, net->grads, 0.0f, nt);
    d->fill(d, net->dinput, 0.0f, nx);
    d->from_host(d, l->dout, rf, ny * sizeof(float));
    l->backward(l, net);
    d->to_host(d, gx, net->dinput, nx * sizeof(float));
    d->to_host(d, gp, net->grads, nt * sizeof(float));

    // central differences of the float64 forward
    for (size_t i = 0; i < nx; i++) {
        double keep = x[i];
        x[i] = keep + FD_H;
        double lp = loss_of(l, ref, ctx, x, p, r, y, ny);
        x[i] = keep - FD_H;
        double lm = loss_of(l, ref, ctx, x, p, r, y, ny);
        x[i] = keep;
        fdx[i] = (lp - lm) / (2.0 * FD_H);
    }
    for (size_t j = 0; j < nt; j++) {
        double keep = p[j];
        p[j] = keep + FD_H;
        double lp = loss_of(l, ref, ctx, x, p, r, y, ny);
        p[j] = keep - FD_H;
        double lm = loss_of(l, ref, ctx, x, p, r, y, ny);
        p[j] = keep;
        fdp[j] = (lp - lm) / (2.0 * FD_H);
    }
    assert_close(what, "d input", gx, fdx, nx, TOL_GRAD);
    if (nt) assert_close(what, "d parameters", gp, fdp, nt, TOL_GRAD);

    free(x), free(p), free(y), free(r), free(fdx), free(fdp);
    free(pf), free(yf), free(rf), free(gx), free(gp);
}

static float *random_input(fixture *f, size_t n, double lo, double hi) {
    float *x = malloc(n * sizeof(float));
    tu_fill_uniform(&f->rng, x, n, lo, hi);
    return x;
}

// ---- conv2d ----

static void ref_conv_l(const dt_layer *l, const double *x, const double *p, double *y,
                       const void *ctx) {
    (void)ctx;
    ref_conv_forward(l->B, l->c, l->h, l->w, l->oc, l->kh, l->stride, l->pad, x, p + l->w_off,
                     l->has_bias ? p + l->b_off : NULL, y);
}

static void conv_case(fixture *f, int B, int C, int H, int W, int OC, int K, int S, int P,
                      int bias) {
    char what[128];
    snprintf(what, sizeof what, "conv %dx%dx%dx%d -> %d k%d s%d p%d bias %d", B, C, H, W, OC,
             K, S, P, bias);
    dt_net *net = net_for(f, B, C, H, W);
    int i = dt_net_add_conv(net, "conv", -1, OC, K, S, P, bias);
    assert_int_equal(i, 0);
    dt_layer *l = net->layers[0];
    assert_int_equal(l->oh, ref_out(H, K, S, P));
    assert_int_equal(l->ow, ref_out(W, K, S, P));
    finalize_ok(net);
    randomize_params(f, net);
    float *x = random_input(f, (size_t)B * C * H * W, -1.0, 1.0);
    check_layer(f, net, 1, ref_conv_l, NULL, x, what);
    free(x);
    dt_net_free(net);
}

static void test_conv2d_gradients_match_finite_differences_odd_sizes_bias(void **state) {
    conv_case(*state, 2, 3, 7, 5, 4, 3, 1, 0, 1);
}
static void test_conv2d_gradients_match_finite_differences_stride2_pad1(void **state) {
    conv_case(*state, 3, 3, 9, 7, 5, 3, 2, 1, 0);
}
static void test_conv2d_gradients_match_finite_differences_1x1_stride1(void **state) {
    conv_case(*state, 2, 6, 5, 4, 7, 1, 1, 0, 1);
    conv_case(*state, 2, 6, 5, 4, 7, 1, 1, 0, 0);
}
static void test_conv2d_gradients_match_finite_differences_1x1_stride2(void **state) {
    conv_case(*state, 2, 4, 7, 6, 3, 1, 2, 0, 0);
}
static void test_conv2d_gradients_match_finite_differences_k5_stride3_pad2(void **state) {
    conv_case(*state, 2, 2, 11, 8, 3, 5, 3, 2, 1);
}
static void test_conv2d_gradients_match_finite_differences_k2_stride2_uneven(void **state) {
    conv_case(*state, 2, 3, 7, 7, 2, 2, 2, 0, 0);  // the last row and column are never read
}

// ---- batchnorm2d ----

static void ref_bn_l(const dt_layer *l, const double *x, const double *p, double *y,
                     const void *ctx) {
    int training = *(const int *)ctx;
    if (training) {
        ref_bn_train(l->B, l->c, l->h * l->w, x, p + l->w_off, p + l->b_off, 1e-5, y, NULL,
                     NULL);
    } else {
        ref_bn_eval(l->B, l->c, l->h * l->w, x, p + l->w_off, p + l->b_off, 1e-5,
                    p + l->rm_off, p + l->rv_off, y);
    }
}

static void test_batchnorm_training_gradients_match_finite_differences_and_running_stats(
    void **state) {
    fixture *f = *state;
    int B = 3, C = 4, H = 5, W = 3, HW = H * W;
    dt_net *net = net_for(f, B, C, H, W);
    assert_int_equal(dt_net_add_bn(net, "bn", -1), 0);
    finalize_ok(net);
    randomize_params(f, net);
    dt_layer *l = net->layers[0];
    float *x = random_input(f, (size_t)B * C * HW, -2.0, 3.0);
    float *before = malloc(net->n_total * sizeof(float));
    f->dev->to_host(f->dev, before, net->params, net->n_total * sizeof(float));
    int training = 1;
    check_layer(f, net, 1, ref_bn_l, &training, x, "batchnorm training");

    // running statistics (PyTorch): r = 0.9 r + 0.1 stat, running_var with n/(n-1)
    size_t nx = (size_t)B * C * HW;
    double *xd = malloc(nx * sizeof(double)), *y = malloc(nx * sizeof(double));
    double mean[4], var[4], want[8];
    for (size_t i = 0; i < nx; i++) xd[i] = x[i];
    double ones[4] = {1, 1, 1, 1}, zeros[4] = {0, 0, 0, 0};
    ref_bn_train(B, C, HW, xd, ones, zeros, 1e-5, y, mean, var);
    double n = (double)B * HW;
    for (int c = 0; c < C; c++) {
        want[c] = 0.9 * before[l->rm_off + c] + 0.1 * mean[c];
        want[C + c] = 0.9 * before[l->rv_off + c] + 0.1 * var[c] * n / (n - 1.0);
    }
    float got[8];
    f->dev->to_host(f->dev, got, net->params + l->rm_off, (size_t)C * sizeof(float));
    f->dev->to_host(f->dev, got + C, net->params + l->rv_off, (size_t)C * sizeof(float));
    tu_assert_close("batchnorm running mean and var after one training step", got, want,
                    2 * (size_t)C, 1e-5, 1e-3);
    free(xd), free(y), free(x), free(before);
    dt_net_free(net);
}

static void test_batchnorm_eval_normalises_with_running_stats(void **state) {
    fixture *f = *state;
    dt_net *net = net_for(f, 2, 3, 4, 5);
    assert_int_equal(dt_net_add_bn(net, "bn", -1), 0);
    finalize_ok(net);
    randomize_params(f, net);
    float *x = random_input(f, 2 * 3 * 4 * 5, -2.0, 2.0);
    int training = 0;
    // forward only: bn's backward uses the batch statistics of a training forward
    dt_layer *l = net->layers[0];
    double p[64], xd[120], y[120];
    float pf[64], yf[120];
    f->dev->to_host(f->dev, pf, net->params, net->n_total * sizeof(float));
    for (size_t i = 0; i < net->n_total; i++) p[i] = pf[i];
    for (int i = 0; i < 120; i++) xd[i] = x[i];
    dt_net_set_batch(net, x, NULL);
    l->forward(l, net, 0);
    f->dev->to_host(f->dev, yf, l->out, sizeof yf);
    ref_bn_l(l, xd, p, y, &training);
    assert_close("batchnorm eval", "forward", yf, y, 120, TOL_FWD);
    free(x);
    dt_net_free(net);
}

// ---- relu ----

static void ref_relu_l(const dt_layer *l, const double *x, const double *p, double *y,
                       const void *ctx) {
    (void)p, (void)ctx;
    ref_relu((size_t)l->B * dt_layer_in_size(l), x, y);
}

static void test_relu_gradients_match_finite_differences(void **state) {
    fixture *f = *state;
    size_t n = 2 * 3 * 5 * 4;
    dt_net *net = net_for(f, 2, 3, 5, 4);
    assert_int_equal(dt_net_add_relu(net, -1), 0);
    finalize_ok(net);
    float *x = random_input(f, n, -1.0, 1.0);
    for (size_t i = 0; i < n; i++)  // keep finite differences away from the kink at 0
        if (fabsf(x[i]) < 0.05f) x[i] = x[i] < 0 ? -0.05f - x[i] : 0.05f + x[i];
    check_layer(f, net, 1, ref_relu_l, NULL, x, "relu");
    free(x);
    dt_net_free(net);
}

// ---- pooling ----

static void ref_maxpool_l(const dt_layer *l, const double *x, const double *p, double *y,
                          const void *ctx) {
    (void)p, (void)ctx;
    ref_maxpool(l->B, l->c, l->h, l->w, l->kh, l->stride, l->pad, x, y);
}

// Distinct values 0.01 apart in random order, so no window has a tie that a finite
// difference could flip.
static float *distinct_input(fixture *f, size_t n) {
    float *x = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) x[i] = (float)(0.01 * ((double)i - (double)n / 2));
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)tu_int(&f->rng, 0, (int)i);
        float t = x[i];
        x[i] = x[j], x[j] = t;
    }
    return x;
}

static void maxpool_case(fixture *f, int B, int C, int H, int W, int K, int S, int P) {
    char what[96];
    snprintf(what, sizeof what, "maxpool %dx%dx%dx%d k%d s%d p%d", B, C, H, W, K, S, P);
    dt_net *net = net_for(f, B, C, H, W);
    assert_int_equal(dt_net_add_maxpool(net, -1, K, S, P), 0);
    assert_int_equal(net->layers[0]->oh, ref_out(H, K, S, P));
    finalize_ok(net);
    float *x = distinct_input(f, (size_t)B * C * H * W);
    check_layer(f, net, 1, ref_maxpool_l, NULL, x, what);
    free(x);
    dt_net_free(net);
}

static void test_maxpool_k3_s2_p1_gradients_match_finite_differences(void **state) {
    maxpool_case(*state, 2, 3, 7, 6, 3, 2, 1);
    maxpool_case(*state, 2, 2, 6, 6, 2, 2, 0);
}

static void ref_avgpool_l(const dt_layer *l, const double *x, const double *p, double *y,
                          const void *ctx) {
    (void)p, (void)ctx;
    ref_avgpool(l->B, l->c, l->h, l->w, l->oh, l->ow, x, y);
}

static void avgpool_case(fixture *f, int H, int W, int OH, int OW) {
    char what[96];
    snprintf(what, sizeof what, "adaptive avgpool %dx%d -> %dx%d", H, W, OH, OW);
    dt_net *net = net_for(f, 2, 3, H, W);
    assert_int_equal(dt_net_add_avgpool(net, -1, OH, OW), 0);
    finalize_ok(net);
    float *x = random_input(f, (size_t)2 * 3 * H * W, -1.0, 1.0);
    check_layer(f, net, 1, ref_avgpool_l, NULL, x, what);
    free(x);
    dt_net_free(net);
}

static void test_adaptive_avgpool_gradients_match_finite_differences_7_to_3_and_global(
    void **state) {
    avgpool_case(*state, 7, 7, 3, 3);  // overlapping windows (rows 0-2, 2-4, 4-6)
    avgpool_case(*state, 7, 7, 1, 1);  // global
    avgpool_case(*state, 5, 7, 2, 3);  // unequal windows per axis
}

// ---- linear ----

static void ref_linear_l(const dt_layer *l, const double *x, const double *p, double *y,
                         const void *ctx) {
    (void)ctx;
    ref_linear(l->B, (int)dt_layer_in_size(l), l->oc, x, p + l->w_off,
               l->has_bias ? p + l->b_off : NULL, y);
}

static void test_linear_gradients_match_finite_differences_flattening_chw(void **state) {
    fixture *f = *state;
    for (int bias = 0; bias <= 1; bias++) {
        dt_net *net = net_for(f, 3, 3, 2, 2);
        assert_int_equal(dt_net_add_linear(net, "fc", -1, 5, bias), 0);
        assert_int_equal(net->layers[0]->oc, 5);
        finalize_ok(net);
        randomize_params(f, net);
        float *x = random_input(f, 3 * 12, -1.0, 1.0);
        check_layer(f, net, 1, ref_linear_l, NULL, x, bias ? "linear with bias" : "linear");
        free(x);
        dt_net_free(net);
    }
}

// ---- dropout ----

typedef struct {
    uint64_t seed;
    float p;
} dropout_ctx;

static void ref_dropout_l(const dt_layer *l, const double *x, const double *p, double *y,
                          const void *ctx) {
    (void)p;
    const dropout_ctx *c = ctx;
    size_t n = (size_t)l->B * dt_layer_in_size(l);
    for (size_t i = 0; i < n; i++) {
        double keep = dt_uniform(c->seed, i) >= c->p ? 1.0 / (1.0 - (double)c->p) : 0.0;
        y[i] = x[i] * keep;
    }
}

static void test_dropout_fixed_seed_gradients_match_mask_has_rate_p_and_layers_differ(
    void **state) {
    fixture *f = *state;
    int B = 4, C = 8, H = 16, W = 16;
    size_t n = (size_t)B * C * H * W;
    dt_net *net = net_for(f, B, C, H, W);
    assert_int_equal(dt_net_add_dropout(net, -1, 0.3f), 0);
    finalize_ok(net);
    dt_layer *l = net->layers[0];
    dropout_ctx c = {dt_dropout_layer_seed(net, l), 0.3f};
    float *x = random_input(f, n, -1.0, 1.0);
    check_layer(f, net, 1, ref_dropout_l, &c, x, "dropout p=0.3");

    // the rate: dropped fraction within 5 standard deviations of p
    float *mask = malloc(n * sizeof(float));
    f->dev->to_host(f->dev, mask, l->aux, n * sizeof(float));
    size_t dropped = 0;
    for (size_t i = 0; i < n; i++) dropped += mask[i] == 0.0f;
    double frac = (double)dropped / (double)n, sd = sqrt(0.3 * 0.7 / (double)n);
    if (fabs(frac - 0.3) > 5 * sd)
        fail_msg("dropped fraction %.4f, expected 0.3 +- %.4f", frac, 5 * sd);

    // evaluation is the identity
    float *y = malloc(n * sizeof(float));
    l->forward(l, net, 0);
    f->dev->to_host(f->dev, y, l->out, n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        if (y[i] != x[i]) fail_msg("dropout eval changed element %zu: %g -> %g", i, x[i], y[i]);
    free(mask), free(y), free(x);
    dt_net_free(net);

    // two dropout layers of one step draw different masks
    net = net_for(f, B, C, H, W);
    assert_int_equal(dt_net_add_dropout(net, -1, 0.5f), 0);
    assert_int_equal(dt_net_add_dropout(net, -1, 0.5f), 1);
    finalize_ok(net);
    float *m0 = malloc(n * sizeof(float)), *m1 = malloc(n * sizeof(float));
    dt_net_forward(net, 1);
    f->dev->to_host(f->dev, m0, net->layers[0]->aux, n * sizeof(float));
    f->dev->to_host(f->dev, m1, net->layers[1]->aux, n * sizeof(float));
    assert_true(memcmp(m0, m1, n * sizeof(float)) != 0);
    free(m0), free(m1);
    dt_net_free(net);
}

// ---- residual add ----

// net: 0 = relu(input), 1 = add(0, input). The add's backward must add r into both the
// relu's dout and dinput; add(input, input) must add 2r.
static void test_residual_add_forward_and_backward_into_both_inputs(void **state) {
    fixture *f = *state;
    int B = 2, C = 3, H = 4, W = 5;
    size_t n = (size_t)B * C * H * W;
    dt_device *d = f->dev;
    for (int same = 0; same <= 1; same++) {
        dt_net *net = net_for(f, B, C, H, W);
        assert_int_equal(dt_net_add_relu(net, -1), 0);
        assert_int_equal(dt_net_add_add(net, same ? -1 : 0, -1), 1);
        finalize_ok(net);
        float *x = random_input(f, n, -1.0, 1.0), *r = random_input(f, n, -1.0, 1.0);
        float *got = malloc(n * sizeof(float));
        double *want = malloc(n * sizeof(double));
        dt_net_set_batch(net, x, NULL);
        for (int i = 0; i < net->n_layers; i++) net->layers[i]->forward(net->layers[i], net, 1);
        d->to_host(d, got, net->layers[1]->out, n * sizeof(float));
        for (size_t i = 0; i < n; i++) want[i] = same ? 2.0 * x[i] : (x[i] > 0 ? x[i] : 0) + x[i];
        tu_assert_close("residual add forward", got, want, n, 1e-6, 1e-3);
        d->fill(d, net->dinput, 0.0f, n);
        d->fill(d, net->layers[0]->dout, 0.0f, n);
        d->from_host(d, net->layers[1]->dout, r, n * sizeof(float));
        net->layers[1]->backward(net->layers[1], net);
        d->to_host(d, got, net->dinput, n * sizeof(float));
        for (size_t i = 0; i < n; i++) want[i] = same ? 2.0 * r[i] : r[i];
        tu_assert_close("residual add d input", got, want, n, 1e-6, 1e-3);
        if (!same) {
            d->to_host(d, got, net->layers[0]->dout, n * sizeof(float));
            for (size_t i = 0; i < n; i++) want[i] = r[i];
            tu_assert_close("residual add d first operand", got, want, n, 1e-6, 1e-3);
        }
        free(x), free(r), free(got), free(want);
        dt_net_free(net);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv2d_gradients_match_finite_differences_odd_sizes_bias),
        cmocka_unit_test(test_conv2d_gradients_match_finite_differences_stride2_pad1),
        cmocka_unit_test(test_conv2d_gradients_match_finite_differences_1x1_stride1),
        cmocka_unit_test(test_conv2d_gradients_match_finite_differences_1x1_stride2),
        cmocka_unit_test(test_conv2d_gradients_match_finite_differences_k5_stride3_pad2),
        cmocka_unit_test(test_conv2d_gradients_match_finite_differences_k2_stride2_uneven),
        cmocka_unit_test(
            test_batchnorm_training_gradients_match_finite_differences_and_running_stats),
        cmocka_unit_test(test_batchnorm_eval_normalises_with_running_stats),
        cmocka_unit_test(test_relu_gradients_match_finite_differences),
        cmocka_unit_test(test_maxpool_k3_s2_p1_gradients_match_finite_differences),
        cmocka_unit_test(
            test_adaptive_avgpool_gradients_match_finite_differences_7_to_3_and_global),
        cmocka_unit_test(test_linear_gradients_match_finite_differences_flattening_chw),
        cmocka_unit_test(test_dropout_fixed_seed_gradients_match_mask_has_rate_p_and_layers_differ),
        cmocka_unit_test(test_residual_add_forward_and_backward_into_both_inputs),
    };
    return cmocka_run_group_tests(tests, tu_fixture_setup, tu_fixture_teardown);
}
