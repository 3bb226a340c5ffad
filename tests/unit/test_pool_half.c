// test_pool_half.c — max pooling on half storage (nn/device.h maxpool_forward_h,
// maxpool_backward_h; the cpu device's in nn/device_cpu_nn.c) against a float64 reference
// written here from the definition (the window's first maximum in row-major order, a NaN
// winning; dx the float64 sum of the gradients routed to each cell), and bit for bit against
// the views path (widen, the fp32 primitive, narrow), on fresh random shapes and values with
// ties, in fp16 and bf16, on 1 and 2 threads; then a whole network (smallcnn, two 2x2 max
// pools) in bf16 with and without the half ops: the same loss and gradients bit for bit.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "layers.h"
#include "net.h"
#include "testutil.h"

static double hval(int fmt, uint16_t h) { return (double)dt_half_load(fmt, h); }

static int same_half(int fmt, uint16_t a, uint16_t b) {  // any NaN matches any NaN
    double x = hval(fmt, a), y = hval(fmt, b);
    return a == b || (x != x && y != y);
}

static void widen_all(dt_device *d, int fmt, const uint16_t *h, float *f, size_t n) {
    (fmt == DT_AMP_BF16 ? d->bf16_to_f32 : d->f16_to_f32)(d, h, f, n);
}
static void narrow_all(dt_device *d, int fmt, const float *f, uint16_t *h, size_t n) {
    (fmt == DT_AMP_BF16 ? d->f32_to_bf16 : d->f32_to_f16)(d, f, h, n);
}

typedef struct { int B, C, H, W, K, stride, pad, OH, OW; } geom;

static geom random_geom(tu_rng *r, int trial) {
    geom g;
    do {
        g.B = tu_int(r, 1, 3), g.C = tu_int(r, 1, 5);
        g.H = tu_int(r, 1, 13), g.W = tu_int(r, 1, 13);
        g.K = tu_int(r, 1, 4), g.stride = tu_int(r, 1, 3);
        g.pad = tu_int(r, 0, g.K / 2);  // PyTorch's limit
        if (trial == 0) g = (geom){2, 9, 38, 41, 3, 2, 1, 0, 0};  // ResNet's stem, threaded
        if (trial == 1) g = (geom){1, 3, 8, 8, 2, 2, 0, 0, 0};    // smallcnn's 2x2
        g.OH = (g.H + 2 * g.pad - g.K) / g.stride + 1;
        g.OW = (g.W + 2 * g.pad - g.K) / g.stride + 1;
    } while (g.H + 2 * g.pad < g.K || g.W + 2 * g.pad < g.K || g.OH < 1 || g.OW < 1);
    return g;
}

// The reference winner of one window: the first NaN, else the first strictly largest
// value in row-major order (padding cells are not candidates); its index h*W + w.
static int ref_winner(int fmt, const uint16_t *xp, const geom *g, int oh, int ow) {
    int best = -1;
    for (int ih = oh * g->stride - g->pad; ih < oh * g->stride - g->pad + g->K; ih++)
        for (int iw = ow * g->stride - g->pad; iw < ow * g->stride - g->pad + g->K; iw++) {
            if (ih < 0 || ih >= g->H || iw < 0 || iw >= g->W) continue;
            int i = ih * g->W + iw;
            double v = hval(fmt, xp[i]);
            if (best < 0) { best = i; continue; }
            double b = hval(fmt, xp[best]);
            if (b != b) continue;
            if (v != v || v > b) best = i;
        }
    return best;
}

static void check_pool(tu_fixture *fx, int fmt, int threads) {
    dt_device *d = dt_device_cpu_create(threads);
    assert_non_null(d->maxpool_forward_h);
    assert_non_null(d->maxpool_backward_h);
    tu_rng *r = &fx->rng;
    for (int trial = 0; trial < 60; trial++) {
        geom g = random_geom(r, trial);
        size_t nx = (size_t)g.B * g.C * g.H * g.W, ny = (size_t)g.B * g.C * g.OH * g.OW;
        uint16_t *x = malloc(nx * 2), *y = malloc(ny * 2), *yv = malloc(ny * 2);
        uint16_t *dy = malloc(ny * 2), *dx = malloc(nx * 2), *dxv = malloc(nx * 2);
        int32_t *a = malloc(ny * 4), *av = malloc(ny * 4);
        float *fx32 = malloc(nx * 4), *fy32 = malloc(ny * 4), *fdy = malloc(ny * 4);
        double *rdx = malloc(nx * sizeof(double));
        // few distinct values (ties, +0 and -0), sometimes -Inf or NaN
        for (size_t i = 0; i < nx; i++) {
            float v = (float)tu_int(r, -4, 4) * 0.375f;
            int k = tu_int(r, 0, 40);
            if (k == 0) v = -INFINITY;
            if (k == 1 && trial % 3 == 2) v = NAN;
            if (k == 2) v = -0.0f;
            x[i] = dt_half_store(fmt, v);
            dx[i] = dt_half_store(fmt, (float)tu_uniform(r, -1.0, 1.0));
            rdx[i] = hval(fmt, dx[i]);
        }
        for (size_t i = 0; i < ny; i++) dy[i] = dt_half_store(fmt, (float)tu_uniform(r, -2.0, 2.0));
        memcpy(dxv, dx, nx * 2);

        d->maxpool_forward_h(d, fmt, x, g.B, g.C, g.H, g.W, g.K, g.stride, g.pad, y, a);
        widen_all(d, fmt, x, fx32, nx);  // the views path
        d->maxpool_forward(d, fx32, g.B, g.C, g.H, g.W, g.K, g.stride, g.pad, fy32, av);
        narrow_all(d, fmt, fy32, yv, ny);
        for (int p = 0; p < g.B * g.C; p++)
            for (int oh = 0; oh < g.OH; oh++)
                for (int ow = 0; ow < g.OW; ow++) {
                    size_t o = ((size_t)p * g.OH + oh) * g.OW + ow;
                    int w = ref_winner(fmt, x + (size_t)p * g.H * g.W, &g, oh, ow);
                    if (a[o] != w || !same_half(fmt, y[o], x[(size_t)p * g.H * g.W + w]))
                        fail_msg("%s maxpool_forward_h %dx%d k%d s%d p%d plane %d cell "
                                 "%d,%d: 0x%04x at %d, the reference 0x%04x at %d",
                                 dt_amp_name((dt_amp)fmt), g.H, g.W, g.K, g.stride, g.pad, p,
                                 oh, ow, y[o], a[o], x[(size_t)p * g.H * g.W + w], w);
                    if (av[o] != a[o] || !same_half(fmt, yv[o], y[o]))
                        fail_msg("maxpool_forward_h cell %zu differs from the views", o);
                    rdx[(size_t)p * g.H * g.W + w] += hval(fmt, dy[o]);
                }

        d->maxpool_backward_h(d, fmt, dy, a, g.B, g.C, g.H, g.W, g.OH, g.OW, dx);
        widen_all(d, fmt, dy, fdy, ny), widen_all(d, fmt, dxv, fx32, nx);
        d->maxpool_backward(d, fdy, a, g.B, g.C, g.H, g.W, g.OH, g.OW, fx32);
        narrow_all(d, fmt, fx32, dxv, nx);
        // fp32 sums of at most K*K + 1 terms, then one rounding to half: within u of the
        // float64 sum, plus the fp32 sum's error relative to the terms' magnitudes
        double u = dt_amp_unit_roundoff((dt_amp)fmt);
        for (size_t i = 0; i < nx; i++) {
            double got = hval(fmt, dx[i]), tol = u * fabs(rdx[i]) + 0x1p-20 * (1 + g.K * g.K);
            if (!(fabs(got - rdx[i]) <= tol))
                fail_msg("%s maxpool_backward_h dx[%zu] %.9g, float64 %.9g", dt_amp_name((dt_amp)fmt),
                         i, got, rdx[i]);
            if (dx[i] != dxv[i]) fail_msg("maxpool_backward_h dx[%zu] differs from the views", i);
        }
        free(x), free(y), free(yv), free(dy), free(dx), free(dxv), free(a), free(av);
        free(fx32), free(fy32), free(fdy), free(rdx);
    }
    d->destroy(d);
}
static void test_pool_bf16_1_thread(void **s) { check_pool(*s, DT_AMP_BF16, 1); }
static void test_pool_bf16_2_threads(void **s) { check_pool(*s, DT_AMP_BF16, 2); }
static void test_pool_fp16_2_threads(void **s) { check_pool(*s, DT_AMP_FP16, 2); }

// ---- a network: smallcnn in bf16 with and without the half max pool ----

static int pool_calls[2];
static void (*real_fwd)(dt_device *, int, const uint16_t *, int, int, int, int, int, int, int,
                        uint16_t *, int32_t *);
static void (*real_bwd)(dt_device *, int, const uint16_t *, const int32_t *, int, int, int,
                        int, int, int, uint16_t *);
static void count_fwd(dt_device *d, int fmt, const uint16_t *x, int B, int C, int H, int W,
                      int K, int s, int p, uint16_t *y, int32_t *a) {
    pool_calls[0]++, real_fwd(d, fmt, x, B, C, H, W, K, s, p, y, a);
}
static void count_bwd(dt_device *d, int fmt, const uint16_t *dy, const int32_t *a, int B, int C,
                      int H, int W, int OH, int OW, uint16_t *dx) {
    pool_calls[1]++, real_bwd(d, fmt, dy, a, B, C, H, W, OH, OW, dx);
}

static void test_smallcnn_bf16_same_bits_as_views(void **state) {
    tu_fixture *fx = *state;
    dt_device *dev[2] = {dt_device_cpu_create(2), dt_device_cpu_create(2)};
    real_fwd = dev[0]->maxpool_forward_h, real_bwd = dev[0]->maxpool_backward_h;
    dev[0]->maxpool_forward_h = count_fwd, dev[0]->maxpool_backward_h = count_bwd;
    dev[1]->maxpool_forward_h = NULL, dev[1]->maxpool_backward_h = NULL;
    memset(pool_calls, 0, sizeof pool_calls);
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = 4, cfg.in_c = 1, cfg.in_h = cfg.in_w = 28, cfg.num_classes = 10;
    cfg.dropout = 0.0f, cfg.amp = DT_AMP_BF16;
    cfg.seed = (uint64_t)tu_int(&fx->rng, 1, 1 << 30);
    size_t nx = (size_t)4 * 28 * 28;
    float *x = malloc(nx * sizeof(float)), loss[2], *g[2];
    int32_t y[4];
    tu_fill_uniform(&fx->rng, x, nx, -1.0, 1.0);
    for (int i = 0; i < 4; i++) y[i] = tu_int(&fx->rng, 0, 9);
    dt_net *net[2];
    for (int k = 0; k < 2; k++) {
        dt_error e;
        memset(&e, 0, sizeof e);
        net[k] = dt_model_create("smallcnn", dev[k], &cfg, &e);
        if (!net[k]) fail_msg("smallcnn: %s", e.msg);
        dt_net_set_batch(net[k], x, y);
        dt_net_forward(net[k], 1);
        loss[k] = dt_net_loss(net[k]);
        dt_net_backward(net[k], 1.0f, NULL, NULL);
        g[k] = net[k]->grads;
    }
    print_message("smallcnn bf16: maxpool_forward_h %d, maxpool_backward_h %d calls\n",
                  pool_calls[0], pool_calls[1]);
    if (pool_calls[0] == 0 || pool_calls[1] == 0) fail_msg("the half max pool never ran");
    if (memcmp(&loss[0], &loss[1], sizeof(float)) != 0)
        fail_msg("loss %.9g with the half max pool, %.9g with the views", loss[0], loss[1]);
    for (size_t i = 0; i < net[0]->n_trainable; i++)
        if (memcmp(&g[0][i], &g[1][i], sizeof(float)) != 0)
            fail_msg("gradient %zu: %.9g with the half max pool, %.9g with the views", i,
                     g[0][i], g[1][i]);
    free(x);
    for (int k = 0; k < 2; k++) dt_net_free(net[k]), dev[k]->destroy(dev[k]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_bf16_1_thread),
        cmocka_unit_test(test_pool_bf16_2_threads),
        cmocka_unit_test(test_pool_fp16_2_threads),
        cmocka_unit_test(test_smallcnn_bf16_same_bits_as_views),
    };
    return cmocka_run_group_tests(tests, tu_fixture_setup, tu_fixture_teardown);
}
