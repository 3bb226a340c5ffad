// test_bn_fused_net.c — the network's use of a fused batch norm (nn/device.h
// bn_fused_forward_train, bn_fused_backward; nn/layers.h dt_bn_fused; nn/net_run.c), on the
// cpu device. The cpu device has no fused hooks of its own, so this test gives one the
// composition a fused device must equal — bn, the residual add, relu in place, each op of
// the cpu device in the unfused network's order (and its backward: relu's mask on a copy of
// dy, the residual's gradient, then bn's backward) — and runs resnet8 (bn -> relu and
// bn -> add -> relu, a projection shortcut) on it and on a plain cpu device: two training
// steps (the second on stale buffers) and an evaluation forward must give the same loss,
// gradients, input gradient, running statistics and logits, bit for bit, in fp32, fp16 and
// bf16; and the network must have called the fused hooks and skipped the fused layers. What
// fuses is checked against the rule (nn/layers.h dt_bn_fused).
// The fused kernels' own arithmetic is the cuda tests' (tests/cuda/test_device_cuda_half.c).
#include <stdlib.h>
#include <string.h>

#include "layers.h"
#include "net.h"
#include "testutil.h"

static int fused_calls[2], relu_calls;  // this test program's counters (one test at a time)
static void (*plain_relu_forward)(dt_device *, const float *, float *, size_t);
static void (*plain_relu_forward_h)(dt_device *, int, const uint16_t *, uint16_t *, size_t);

static void comp_forward(dt_device *d, int fmt, const void *x, const void *res, int B, int C,
                         int HW, const float *gamma, const float *beta, float eps, float mom,
                         float *rm, float *rv, float *sm, float *si, void *y, int relu) {
    size_t n = (size_t)B * C * HW;
    fused_calls[0]++;
    if (!fmt) {
        d->bn_forward_train(d, x, B, C, HW, gamma, beta, eps, mom, rm, rv, sm, si, y);
        if (res) d->add(d, y, res, n);
        if (relu) plain_relu_forward(d, y, y, n);
    } else {
        d->bn_forward_train_h(d, fmt, x, B, C, HW, gamma, beta, eps, mom, rm, rv, sm, si, y);
        if (res) d->add_h(d, fmt, y, res, y, n);
        if (relu) plain_relu_forward_h(d, fmt, y, y, n);
    }
}

static void comp_backward(dt_device *d, int fmt, const void *y, const void *dy, const void *x,
                          int B, int C, int HW, const float *gamma, const float *sm,
                          const float *si, void *dx, int set, void *dres, int set_res,
                          float *dgamma, float *dbeta, int relu) {
    size_t n = (size_t)B * C * HW, bytes = n * (fmt ? 2 : 4);
    fused_calls[1]++;
    void *g = malloc(bytes ? bytes : 4);  // cpu device memory is host memory
    memcpy(g, dy, bytes);
    if (relu && fmt) d->relu_backward_h(d, fmt, y, g, g, n, 1);
    if (relu && !fmt) d->relu_backward_inplace(d, y, g, n);
    if (dres && set_res) memcpy(dres, g, bytes);
    if (dres && !set_res && fmt) d->add_h(d, fmt, dres, g, dres, n);
    if (dres && !set_res && !fmt) d->add(d, dres, g, n);
    if (fmt)
        d->bn_backward_h(d, fmt, g, x, B, C, HW, gamma, sm, si, dx, dgamma, dbeta, set);
    else
        (set ? d->bn_backward_set : d->bn_backward)(d, g, x, B, C, HW, gamma, sm, si, dx,
                                                    dgamma, dbeta);
    free(g);
}

// relu forward calls on the fused device, so a skipped relu shows
static void count_relu(dt_device *d, const float *x, float *y, size_t n) {
    relu_calls++;
    plain_relu_forward(d, x, y, n);
}
static void count_relu_h(dt_device *d, int fmt, const uint16_t *x, uint16_t *y, size_t n) {
    relu_calls++;
    plain_relu_forward_h(d, fmt, x, y, n);
}

static dt_net *build(dt_device *d, dt_amp amp, uint64_t seed) {
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = 4, cfg.in_c = 1, cfg.in_h = cfg.in_w = 28, cfg.num_classes = 10;
    cfg.dropout = 0.0f, cfg.seed = seed, cfg.amp = amp;
    dt_error e;
    memset(&e, 0, sizeof e);
    dt_net *net = dt_model_create("resnet8", d, &cfg, &e);
    if (!net) fail_msg("resnet8 in %s: %s", dt_amp_name(amp), e.msg);
    return net;
}

static void check_fused_vs_plain(tu_fixture *f, dt_amp amp) {
    dt_device *fused = dt_device_cpu_create(1), *plain = dt_device_cpu_create(1);
    plain_relu_forward = fused->relu_forward, plain_relu_forward_h = fused->relu_forward_h;
    fused->bn_fused_forward_train = comp_forward, fused->bn_fused_backward = comp_backward;
    fused->relu_forward = count_relu, fused->relu_forward_h = count_relu_h;
    memset(fused_calls, 0, sizeof fused_calls), relu_calls = 0;
    uint64_t seed = (uint64_t)tu_int(&f->rng, 1, 1 << 30);
    dt_net *net[2] = {build(fused, amp, seed), build(plain, amp, seed)};
    // what fuses: exactly bn -> in-place relu, and bn -> in-place add -> in-place relu
    int pairs = 0, triples = 0, relus = 0, n = net[0]->n_layers;
    for (int k = 0; k < n; k++) {
        dt_layer *const *L = net[0]->layers;
        int bn = L[k]->type == DT_LAYER_BN;
        int one = bn && k + 1 < n && L[k + 1]->type == DT_LAYER_RELU && L[k + 1]->in == k &&
                  L[k + 1]->inplace;
        int two = bn && k + 2 < n && L[k + 1]->type == DT_LAYER_ADD && L[k + 1]->in == k &&
                  L[k + 1]->inplace && L[k + 1]->in2 != k && L[k + 2]->type == DT_LAYER_RELU &&
                  L[k + 2]->in == k + 1 && L[k + 2]->inplace;
        int res = -1, got = dt_bn_fused(net[0], L[k], &res);
        if (got != (two ? 2 : one))
            fail_msg("layer %d: dt_bn_fused says %d, want %d", k, got, two ? 2 : one);
        if (two && res != L[k + 1]->in2) fail_msg("layer %d: residual %d, want %d", k, res,
                                                  L[k + 1]->in2);
        if (dt_bn_fused(net[1], net[1]->layers[k], NULL))
            fail_msg("layer %d fused on a device without the fused hooks", k);
        pairs += one, triples += two, relus += L[k]->type == DT_LAYER_RELU;
    }
    if (!pairs || !triples) fail_msg("resnet8 has %d bn -> relu and %d bn -> add -> relu", pairs,
                                     triples);
    size_t nx = (size_t)4 * 28 * 28, nt = net[0]->n_total, ntr = net[0]->n_trainable, nz = 40;
    float *x = malloc(nx * sizeof(float)), loss[2][2], *g[2], *z[2];
    int32_t y[4];
    for (int k = 0; k < 2; k++) g[k] = malloc((ntr + nt + nx) * sizeof(float)), z[k] = malloc(nz * 4);
    for (int step = 0; step < 2; step++) {
        tu_fill_uniform(&f->rng, x, nx, -1.0, 1.0);
        for (int i = 0; i < 4; i++) y[i] = tu_int(&f->rng, 0, 9);
        for (int k = 0; k < 2; k++) {
            dt_net_set_batch(net[k], x, y);
            dt_net_forward(net[k], 1);
            loss[k][step] = dt_net_loss(net[k]);
            dt_net_backward(net[k], amp == DT_AMP_FP16 ? 1024.0f : 1.0f, NULL, NULL);
        }
    }
    for (int k = 0; k < 2; k++) {
        memcpy(g[k], net[k]->grads, ntr * sizeof(float));
        memcpy(g[k] + ntr, net[k]->params, nt * sizeof(float));  // incl. running statistics
        memcpy(g[k] + ntr + nt, net[k]->dinput, nx * sizeof(float));
        dt_net_forward(net[k], 0);
        memcpy(z[k], net[k]->layers[dt_net_last(net[k])]->out, nz * sizeof(float));
    }
    int groups = pairs + triples;
    print_message("resnet8 %s: %d bn -> relu, %d bn -> add -> relu; fused forward %d, backward "
                  "%d calls; relu forward %d calls (%d relus; two training steps, one "
                  "evaluation)\n", dt_amp_name(amp), pairs, triples, fused_calls[0],
                  fused_calls[1], relu_calls, relus);
    if (fused_calls[0] != 2 * groups || fused_calls[1] != 2 * groups)
        fail_msg("fused hooks called %d/%d times, want %d each", fused_calls[0], fused_calls[1],
                 2 * groups);
    // training skips the fused relus, evaluation runs every relu
    if (relu_calls != 2 * (relus - groups) + relus)
        fail_msg("relu forward ran %d times, want %d", relu_calls, 2 * (relus - groups) + relus);
    if (memcmp(loss[0], loss[1], sizeof loss[0]) != 0)
        fail_msg("losses %.9g %.9g fused, %.9g %.9g plain", loss[0][0], loss[0][1], loss[1][0],
                 loss[1][1]);
    for (size_t i = 0; i < ntr + nt + nx; i++)
        if (memcmp(&g[0][i], &g[1][i], sizeof(float)) != 0)
            fail_msg("%s %zu: %.9g fused, %.9g plain",
                     i < ntr ? "gradient" : i < ntr + nt ? "parameter/statistic" : "dinput",
                     i < ntr ? i : i < ntr + nt ? i - ntr : i - ntr - nt, g[0][i], g[1][i]);
    if (memcmp(z[0], z[1], nz * sizeof(float)) != 0) fail_msg("evaluation logits differ");
    free(x), free(g[0]), free(g[1]), free(z[0]), free(z[1]);
    dt_net_free(net[0]), dt_net_free(net[1]);
    fused->destroy(fused), plain->destroy(plain);
}

static void test_fused_fp32(void **s) { check_fused_vs_plain(*s, DT_AMP_FP32); }
static void test_fused_fp16(void **s) { check_fused_vs_plain(*s, DT_AMP_FP16); }
static void test_fused_bf16(void **s) { check_fused_vs_plain(*s, DT_AMP_BF16); }

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fused_fp32),
        cmocka_unit_test(test_fused_fp16),
        cmocka_unit_test(test_fused_bf16),
    };
    return cmocka_run_group_tests(tests, tu_fixture_setup, tu_fixture_teardown);
}
