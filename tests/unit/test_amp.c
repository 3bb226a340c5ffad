// test_amp.c — mixed precision (nn/net_half.c, nn/kernels.h), cpu device:
//  - bf16 casts: every one of the 65,536 bf16 values widens exactly and narrows back to
//    itself (NaNs to a NaN); random floats, exact ties and values past bf16's largest
//    narrow to the nearest bf16 (ties to even), checked against a float64 search of the two
//    neighbours;
//  - the gradient of a whole network (smallcnn, resnet8, resnet50 on a small input, and
//    gpt2-tiny on 2 sequences of 32 tokens) stored
//    in fp16 or bf16 against the same network in fp32 (same weights, same batch): the
//    relative error of the full parameter gradient and of the loss within a bound derived
//    from the format's unit roundoff u (below), not tuned;
//  - the master weights are untouched by forward and backward (the half copy is separate),
//    the running statistics forward updates reach the master, and activation memory is
//    half of fp32's (plus the fp32 logits and their gradient);
//  - relu and the residual add on half storage (the device's *_h ops) against the fp32 ops
//    on widened views: bit for bit, op by op on every kind of bit pattern; and through a
//    whole resnet8 (loss, gradients, running statistics) with every half-storage op of the
//    cpu device (relu, add, batch norm, and in bf16 the convolutions on bf16 storage where
//    the CPU multiplies bf16, on 1 and 2 threads) against the same network on the views,
//    with the ops counted as used (tests/unit/test_device_cpu_half.c checks batch norm and
//    the bf16 convolution primitives one by one).
//
// The bound: a half network rounds the weights once (relative error <= u each), and each of
// its L layers rounds the tensor it writes in forward and the gradient it writes in
// backward, so a value of the gradient has passed at most R = 2L + 1 roundings, each
// perturbing by at most u relative. To first order the relative error of the result is at
// most R·u when each layer's map does not amplify relative perturbations (a product of
// roundings (1+u)^R ≈ 1 + R·u). First order does not see kinks: a rounding that moves an
// activation across a ReLU's zero or changes a max-pool's winner changes one gradient
// element by its whole size, so one draw's error has a tail: smallcnn in fp16 (whose 2x2
// max-pools tie often) measured over 182 draws a median of 0.98·R·u, 99th percentile 3.5·R·u,
// and one draw of another run 4.1·R·u; the other cases 0.3-0.9·R·u. The bound checked is
// 4·R·u on the median of three independent draws (fresh weights and batch each), which a
// tail of one in a hundred crosses about three times in 10^4 runs. Each draw's error is
// printed, and the median with the bound.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "layers.h"
#include "net.h"
#include "testutil.h"

// ---- bf16 casts against float64 ----

static double bf16_value(uint16_t h) { return (double)dt_bf16_to_f32(h); }

static void test_bf16_every_value_round_trips(void **state) {
    (void)state;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = dt_bf16_to_f32((uint16_t)h);
        uint32_t bits;
        memcpy(&bits, &f, 4);
        if (bits != h << 16) fail_msg("bf16 %04x widens to %08x, not %08x", h, bits, h << 16);
        uint16_t back = dt_f32_to_bf16(f);
        if (isnan(f)) {
            if (!isnan(dt_bf16_to_f32(back))) fail_msg("bf16 NaN %04x narrows to %04x", h, back);
        } else if (back != h) {
            fail_msg("bf16 %04x -> %g -> %04x", h, (double)f, back);
        }
    }
}

// The nearest bf16 to x by a float64 search: truncation t and its successor t+1 (toward
// larger magnitude); the nearer wins, a tie goes to the even one.
static uint16_t bf16_nearest_ref(float x) {
    uint32_t bits;
    memcpy(&bits, &x, 4);
    uint16_t t = (uint16_t)(bits >> 16);
    uint16_t u = (uint16_t)(t + 1);
    double dt = fabs((double)x - bf16_value(t));
    double du = isinf(bf16_value(u)) ? ldexp(1.0, 128) - fabs((double)x)  // to 2^128: Inf
                                     : fabs(bf16_value(u) - (double)x);
    if (dt < du) return t;
    if (du < dt) return u;
    return (t & 1u) ? u : t;
}

static void test_bf16_rounds_to_nearest_even(void **state) {
    tu_fixture *f = *state;
    for (int i = 0; i < 200000; i++) {
        uint32_t bits = (uint32_t)(tu_uniform(&f->rng, 0, 4294967296.0));
        if (i % 4 == 1) bits = (bits & 0xFFFF0000u) | 0x8000u;  // an exact tie
        if (i % 4 == 2) bits = (bits & 0x807F0000u) | 0x7F7F0000u | (bits & 0xFFFFu);  // top
        float x;
        memcpy(&x, &bits, 4);
        if (isnan(x) || isinf(x)) continue;
        uint16_t got = dt_f32_to_bf16(x), want = bf16_nearest_ref(x);
        if (got != want)
            fail_msg("bf16(%a) = %04x, nearest-even is %04x", (double)x, got, want);
    }
    // the device's bulk casts are the same function
    float x[5] = {1.0f, -3.5f, 65504.0f, 1e-40f, 3.4e38f};
    uint16_t h[5];
    float back[5];
    f->dev->f32_to_bf16(f->dev, x, h, 5);
    f->dev->bf16_to_f32(f->dev, h, back, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(h[i], dt_f32_to_bf16(x[i]));
        assert_true(back[i] == dt_bf16_to_f32(h[i]));
    }
    assert_true(isinf(dt_bf16_to_f32(dt_f32_to_bf16(3.4e38f))));  // past bf16's largest
}

// ---- one network in fp32 and in half ----

typedef struct {
    const char *model;
    int batch, c, hw, classes;
    int zero_init_residual;
    int seq;  // gpt models: tokens per sequence (their inputs are token ids, classes the vocab)
} net_case;

static dt_net *build(dt_device *d, const net_case *nc, dt_amp amp, uint64_t seed) {
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = nc->batch, cfg.in_c = nc->c, cfg.in_h = cfg.in_w = nc->hw;
    cfg.num_classes = nc->classes;
    cfg.dropout = 0.0f;
    cfg.zero_init_residual = nc->zero_init_residual;
    cfg.seed = seed;
    cfg.amp = amp;
    cfg.seq_len = nc->seq;
    dt_error e;
    memset(&e, 0, sizeof e);
    dt_net *net = dt_model_create(nc->model, d, &cfg, &e);
    if (!net) fail_msg("%s in %s: %s", nc->model, dt_amp_name(amp), e.msg);
    return net;
}

static double rel_l2(const float *a, const float *b, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double dd = (double)a[i] - (double)b[i];
        num += dd * dd;
        den += (double)b[i] * (double)b[i];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

// One draw (fresh weights and batch): every check but the bound's, which is the caller's;
// the gradient's and the loss's relative errors in *eg_out, *el_out, the bound in *bound_out.
static void one_draw(tu_fixture *f, const net_case *nc, dt_amp amp, double *eg_out,
                     double *el_out, double *bound_out) {
    dt_device *d = f->dev;
    uint64_t seed = (uint64_t)tu_int(&f->rng, 1, 1 << 30);
    dt_net *ref = build(d, nc, DT_AMP_FP32, seed), *half = build(d, nc, amp, seed);
    size_t nx = (size_t)nc->batch * nc->c * nc->hw * nc->hw;
    size_t rows = (size_t)nc->batch * (nc->seq ? nc->seq : 1);  // rows of logits
    float *x = malloc(nx * sizeof(float));
    int32_t *y = malloc(rows * sizeof(int32_t)), *tok = malloc(rows * sizeof(int32_t));
    tu_fill_uniform(&f->rng, x, nx, -1.0, 1.0);
    for (size_t i = 0; i < rows; i++) {
        y[i] = tu_int(&f->rng, 0, nc->classes - 1);
        tok[i] = tu_int(&f->rng, 0, nc->classes - 1);
    }
    size_t nt = ref->n_trainable, ntot = ref->n_total;
    assert_int_equal(half->n_trainable, nt);
    float *g32 = malloc(nt * sizeof(float)), *gh = malloc(nt * sizeof(float));
    float *m_before = malloc(ntot * sizeof(float)), *m_after = malloc(ntot * sizeof(float));
    float *r_stats = malloc(ntot * sizeof(float));
    d->to_host(d, m_before, half->params, ntot * sizeof(float));

    // fp16 needs its loss scaled (Micikevicius et al. 2018 §3.2): without it, gradients
    // below 2^-24 flush to zero and those below 2^-14 lose bits, which is underflow, not
    // rounding. 2^12 keeps the largest seed gradient, S/B <= 2^12, far below 65504; the
    // gradients are divided by S afterwards (exact: a power of two).
    float S = amp == DT_AMP_FP16 ? 4096.0f : 1.0f, loss[2];
    dt_net *nets[2] = {ref, half};
    for (int k = 0; k < 2; k++) {
        if (nc->seq) dt_net_set_tokens(nets[k], tok, y);
        else dt_net_set_batch(nets[k], x, y);
        dt_net_forward(nets[k], 1);
        loss[k] = dt_net_loss(nets[k]);
        dt_net_backward(nets[k], k ? S : 1.0f, NULL, NULL);
    }
    assert_int_equal(d->nonfinite(d, half->grads, nt), 0);
    d->scale(d, half->grads, 1.0f / S, nt);
    d->to_host(d, g32, ref->grads, nt * sizeof(float));
    d->to_host(d, gh, half->grads, nt * sizeof(float));
    d->to_host(d, m_after, half->params, ntot * sizeof(float));
    d->to_host(d, r_stats, ref->params, ntot * sizeof(float));

    int layers = half->n_layers;
    double u = dt_amp_unit_roundoff(amp), bound = 4.0 * (2.0 * layers + 1.0) * u;
    double eg = rel_l2(gh, g32, nt), el = fabs((double)loss[1] - loss[0]) / fabs(loss[0]);
    print_message("%s %s: %d layers, gradient rel. error %.3g, loss rel. error %.3g, bound "
                  "4(2L+1)u = %.3g\n", nc->model, dt_amp_name(amp), layers, eg, el, bound);
    *eg_out = eg, *el_out = el, *bound_out = bound;
    // The error is the format's: a half run that were fp32 underneath would show ~0, and
    // the rounding must show at least somewhere (u/1000 is far below one rounding).
    if (!(eg > u * 1e-3)) fail_msg("%s %s: no rounding error at all (%g)", nc->model,
                                   dt_amp_name(amp), eg);

    // master weights untouched by forward/backward; running statistics as fp32's within the
    // bound (they come from the same batch, from half-rounded activations)
    for (size_t i = 0; i < ref->n_trainable; i++)
        if (m_after[i] != m_before[i]) fail_msg("master weight %zu changed by forward", i);
    if (ntot > nt) {
        double es = rel_l2(m_after + nt, r_stats + nt, ntot - nt);
        if (!(es <= bound) || rel_l2(m_after + nt, m_before + nt, ntot - nt) == 0.0)
            fail_msg("running statistics: rel. error %g vs fp32 (bound %g), or not updated",
                     es, bound);
    }

    // activation memory: every half-stored buffer is half of fp32's; the logits and their
    // gradient stay fp32 (2 * B * K floats)
    size_t s32, sh, b32 = dt_net_activation_bytes(ref, &s32), bh = dt_net_activation_bytes(half, &sh);
    size_t logits = 2 * rows * nc->classes * sizeof(float);
    print_message("%s %s: activations %zu bytes (fp32 %zu), + %zu bytes of fp32 scratch\n",
                  nc->model, dt_amp_name(amp), bh, b32, sh);
    if (!(bh <= b32 / 2 + logits)) fail_msg("activations not halved: %zu vs %zu", bh, b32);
    assert_int_equal(s32, 0);
    free(x), free(y), free(tok), free(g32), free(gh), free(m_before), free(m_after), free(r_stats);
    dt_net_free(ref), dt_net_free(half);
}

static double median3(const double v[3]) {
    double a = v[0], b = v[1], c = v[2];
    return a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
}

// The bound holds for the median of three independent draws (the header: a single draw's
// error has a tail of kinks).
static void check_against_fp32(tu_fixture *f, const net_case *nc, dt_amp amp) {
    double eg[3], el[3], bound = 0;
    for (int k = 0; k < 3; k++) one_draw(f, nc, amp, &eg[k], &el[k], &bound);
    double mg = median3(eg), ml = median3(el);
    print_message("%s %s: median of 3 draws: gradient %.3g, loss %.3g, bound %.3g\n",
                  nc->model, dt_amp_name(amp), mg, ml, bound);
    if (!(mg <= bound)) fail_msg("%s %s: gradient rel. error %g (median of %g %g %g) > %g",
                                 nc->model, dt_amp_name(amp), mg, eg[0], eg[1], eg[2], bound);
    if (!(ml <= bound)) fail_msg("%s %s: loss rel. error %g (median of %g %g %g) > %g",
                                 nc->model, dt_amp_name(amp), ml, el[0], el[1], el[2], bound);
}

// ResNet-8 with every residual branch live (zero_init_residual off: a zero last gamma would
// hide the branch's errors). ResNet-50 as it is trained (Goyal et al. 2017 §5.1: the last
// gamma of each block zero): at random initialisation with every branch live, its fp32
// gradient is chaotic: a relative perturbation of 2^-11 of the weights alone, in fp32,
// changes it by 60 % (measured with PyTorch, torchvision's resnet50, batch 8 at 96x96), so
// no bound from the format's precision can hold there.
static const net_case SMALLCNN = {"smallcnn", 8, 1, 28, 10, 0, 0};
static const net_case RESNET8 = {"resnet8", 4, 1, 28, 10, 0, 0};
static const net_case RESNET50 = {"resnet50", 4, 3, 96, 10, 1, 0};
// gpt2-tiny on bytes: 2 sequences of 32 tokens (embedding, layer norms, attention, GELU,
// linear layers and residual adds, all stored in half)
static const net_case GPT2_TINY = {"gpt2-tiny", 2, 1, 1, 256, 0, 32};

static void test_smallcnn_fp16(void **s) { check_against_fp32(*s, &SMALLCNN, DT_AMP_FP16); }
static void test_smallcnn_bf16(void **s) { check_against_fp32(*s, &SMALLCNN, DT_AMP_BF16); }
static void test_resnet8_fp16(void **s) { check_against_fp32(*s, &RESNET8, DT_AMP_FP16); }
static void test_resnet8_bf16(void **s) { check_against_fp32(*s, &RESNET8, DT_AMP_BF16); }
static void test_resnet50_fp16(void **s) { check_against_fp32(*s, &RESNET50, DT_AMP_FP16); }
static void test_resnet50_bf16(void **s) { check_against_fp32(*s, &RESNET50, DT_AMP_BF16); }
static void test_gpt2_tiny_fp16(void **s) { check_against_fp32(*s, &GPT2_TINY, DT_AMP_FP16); }
static void test_gpt2_tiny_bf16(void **s) { check_against_fp32(*s, &GPT2_TINY, DT_AMP_BF16); }

// ---- relu and the residual add on half storage (nn/device.h relu_forward_h, relu_backward_h,
// add_h): bit for bit the fp32 op on widened views, op by op and through a whole network ----

static int same_half(int fmt, uint16_t a, uint16_t b) {  // any NaN matches any NaN
    float x = dt_half_load(fmt, a), y = dt_half_load(fmt, b);
    return a == b || (x != x && y != y);
}

// the view path of one op, from the device's own casts and fp32 ops: widen, op, narrow
static void widen_all(dt_device *d, int fmt, const uint16_t *h, float *f, size_t n) {
    (fmt == DT_AMP_BF16 ? d->bf16_to_f32 : d->f16_to_f32)(d, h, f, n);
}
static void narrow_all(dt_device *d, int fmt, const float *f, uint16_t *h, size_t n) {
    (fmt == DT_AMP_BF16 ? d->f32_to_bf16 : d->f32_to_f16)(d, f, h, n);
}

static void check_ops_h(tu_fixture *f, int fmt) {
    dt_device *d = f->dev;
    size_t n = (size_t)tu_int(&f->rng, 1000, 5000) | 1;  // odd: no vector tail is special
    uint16_t *a = malloc(n * 2), *b = malloc(n * 2), *c = malloc(n * 2), *got = malloc(n * 2),
             *want = malloc(n * 2);
    float *fa = malloc(n * 4), *fb = malloc(n * 4), *fc = malloc(n * 4);
    for (size_t i = 0; i < n; i++) {  // every bit pattern may come: NaN, Inf, subnormals
        a[i] = (uint16_t)tu_int(&f->rng, 0, 65535), b[i] = (uint16_t)tu_int(&f->rng, 0, 65535);
        c[i] = (uint16_t)tu_int(&f->rng, 0, 65535);
    }
    widen_all(d, fmt, a, fa, n), widen_all(d, fmt, b, fb, n), widen_all(d, fmt, c, fc, n);
    const char *what[4] = {"relu_forward_h", "add_h", "relu_backward_h (add)",
                           "relu_backward_h (set)"};
    for (int op = 0; op < 4; op++) {
        float *t = malloc(n * 4);
        memcpy(t, fc, n * 4);
        memcpy(got, c, n * 2);
        if (op == 0) d->relu_forward(d, fa, t, n), d->relu_forward_h(d, fmt, a, got, n);
        if (op == 1) memcpy(t, fa, n * 4), d->add(d, t, fb, n), d->add_h(d, fmt, a, b, got, n);
        if (op == 2) d->relu_backward(d, fa, fb, t, n), d->relu_backward_h(d, fmt, a, b, got, n, 0);
        if (op == 3) {  // in place: dy is dx's buffer
            memcpy(t, fb, n * 4), memcpy(got, b, n * 2);
            d->relu_backward_inplace(d, fa, t, n), d->relu_backward_h(d, fmt, a, got, got, n, 1);
        }
        narrow_all(d, fmt, t, want, n);
        for (size_t i = 0; i < n; i++)
            if (!same_half(fmt, got[i], want[i]))
                fail_msg("%s %s element %zu: 0x%04x, the views give 0x%04x", what[op],
                         dt_amp_name((dt_amp)fmt), i, got[i], want[i]);
        free(t);
    }
    free(a), free(b), free(c), free(got), free(want), free(fa), free(fb), free(fc);
}
static void test_half_ops_fp16(void **s) { check_ops_h(*s, DT_AMP_FP16); }
static void test_half_ops_bf16(void **s) { check_ops_h(*s, DT_AMP_BF16); }

// Counting wrappers, so that the network test knows the direct path ran (a test that passed
// because nothing used the ops would prove nothing).
static struct {
    void (*relu_f)(dt_device *, int, const uint16_t *, uint16_t *, size_t);
    void (*relu_b)(dt_device *, int, const uint16_t *, const uint16_t *, uint16_t *, size_t, int);
    void (*add)(dt_device *, int, const uint16_t *, const uint16_t *, uint16_t *, size_t);
    int calls[6];
} real_h;
static void count_relu_f(dt_device *d, int fmt, const uint16_t *x, uint16_t *y, size_t n) {
    real_h.calls[0]++, real_h.relu_f(d, fmt, x, y, n);
}
static void count_relu_b(dt_device *d, int fmt, const uint16_t *y, const uint16_t *dy,
                         uint16_t *dx, size_t n, int set) {
    real_h.calls[1]++, real_h.relu_b(d, fmt, y, dy, dx, n, set);
}
static void count_add(dt_device *d, int fmt, const uint16_t *a, const uint16_t *b, uint16_t *y,
                      size_t n) {
    real_h.calls[2]++, real_h.add(d, fmt, a, b, y, n);
}

static void (*real_bn_train)(dt_device *, int, const uint16_t *, int, int, int, const float *,
                              const float *, float, float, float *, float *, float *, float *,
                              uint16_t *);
static void (*real_bn_eval)(dt_device *, int, const uint16_t *, int, int, int, const float *,
                             const float *, float, const float *, const float *, uint16_t *);
static void (*real_bn_backward)(dt_device *, int, const uint16_t *, const uint16_t *, int, int,
                                int, const float *, const float *, const float *, uint16_t *,
                                float *, float *, int);
static void (*real_im2col_bf16)(dt_device *, const uint16_t *, int, int, int, int, int, int,
                                int, int, uint16_t *);
static void (*real_gemm_bf16)(dt_device *, int, int, int, int, int, float, const uint16_t *,
                              int, size_t, const uint16_t *, int, size_t, float, float *, int,
                              size_t, int);
static int conv_calls[2];
static void bn_train_h(dt_device *d, int fmt, const uint16_t *x, int B, int C, int HW,
                       const float *gamma, const float *beta, float eps, float momentum,
                       float *rm, float *rv, float *sm, float *si, uint16_t *y) {
    real_bn_train(d, fmt, x, B, C, HW, gamma, beta, eps, momentum, rm, rv, sm, si, y);
    real_h.calls[3]++;
}
static void bn_eval_h(dt_device *d, int fmt, const uint16_t *x, int B, int C, int HW,
                      const float *gamma, const float *beta, float eps, const float *rm,
                      const float *rv, uint16_t *y) {
    real_bn_eval(d, fmt, x, B, C, HW, gamma, beta, eps, rm, rv, y);
    real_h.calls[4]++;
}
static void bn_backward_h(dt_device *d, int fmt, const uint16_t *dy, const uint16_t *x, int B,
                          int C, int HW, const float *gamma, const float *sm, const float *si,
                          uint16_t *dx, float *dgamma, float *dbeta, int set) {
    real_bn_backward(d, fmt, dy, x, B, C, HW, gamma, sm, si, dx, dgamma, dbeta, set);
    real_h.calls[5]++;
}
static void count_im2col_bf16(dt_device *d, const uint16_t *x, int B, int C, int H, int W,
                              int KH, int KW, int stride, int pad, uint16_t *col) {
    conv_calls[0]++, real_im2col_bf16(d, x, B, C, H, W, KH, KW, stride, pad, col);
}
static void count_gemm_bf16(dt_device *d, int ta, int tb, int M, int N, int K, float alpha,
                            const uint16_t *A, int lda, size_t sa, const uint16_t *B, int ldb,
                            size_t sb, float beta, float *C, int ldc, size_t sc, int batch) {
    conv_calls[1]++;
    real_gemm_bf16(d, ta, tb, M, N, K, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
}
static void (*real_gemm_bf16_h)(dt_device *, int, int, int, int, int, float, const uint16_t *,
                                int, size_t, const uint16_t *, int, size_t, float, uint16_t *,
                                int, size_t, int);
static void count_gemm_bf16_h(dt_device *d, int ta, int tb, int M, int N, int K, float alpha,
                              const uint16_t *A, int lda, size_t sa, const uint16_t *B, int ldb,
                              size_t sb, float beta, uint16_t *C, int ldc, size_t sc,
                              int batch) {
    conv_calls[1]++;
    real_gemm_bf16_h(d, ta, tb, M, N, K, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
}
static void (*real_gemm_col2im)(dt_device *, int, int, int, const uint16_t *, const uint16_t *,
                                size_t, int, int, int, int, int, int, int, int, uint16_t *, int);
static void count_gemm_col2im(dt_device *d, int K, int N, int OC, const uint16_t *w,
                              const uint16_t *dy, size_t sdy, int n, int C, int H, int W, int KH,
                              int KW, int stride, int pad, uint16_t *dx, int set) {
    conv_calls[1]++;
    real_gemm_col2im(d, K, N, OC, w, dy, sdy, n, C, H, W, KH, KW, stride, pad, dx, set);
}

// resnet8 (relus in and out of place, residual adds, a projection shortcut, batch norms)
// forward in training and evaluation and backward on the same weights and batch, once with
// the half ops and once on a device without them (the views): the loss, the evaluation
// logits, every gradient and the running statistics bit for bit.
static void check_direct_vs_views(tu_fixture *f, dt_amp amp, int threads) {
    dt_device *with = dt_device_cpu_create(threads), *without = dt_device_cpu_create(threads);
    real_h.relu_f = with->relu_forward_h, real_h.relu_b = with->relu_backward_h;
    real_h.add = with->add_h;
    memset(real_h.calls, 0, sizeof real_h.calls);
    real_bn_train = with->bn_forward_train_h, real_bn_eval = with->bn_forward_eval_h;
    real_bn_backward = with->bn_backward_h;
    real_im2col_bf16 = with->im2col_bf16, real_gemm_bf16 = with->gemm_batched_bf16;
    memset(conv_calls, 0, sizeof conv_calls);
    with->relu_forward_h = count_relu_f, with->relu_backward_h = count_relu_b;
    with->add_h = count_add;
    with->bn_forward_train_h = bn_train_h, with->bn_forward_eval_h = bn_eval_h;
    with->bn_backward_h = bn_backward_h;
    if (with->im2col_bf16) with->im2col_bf16 = count_im2col_bf16;
    if (with->gemm_batched_bf16) with->gemm_batched_bf16 = count_gemm_bf16;
    real_gemm_bf16_h = with->gemm_batched_bf16_h, real_gemm_col2im = with->gemm_col2im_bf16;
    if (with->gemm_batched_bf16_h) with->gemm_batched_bf16_h = count_gemm_bf16_h;
    if (with->gemm_col2im_bf16) with->gemm_col2im_bf16 = count_gemm_col2im;
    without->relu_forward_h = NULL, without->relu_backward_h = NULL, without->add_h = NULL;
    without->bn_forward_train_h = NULL, without->bn_forward_eval_h = NULL;
    without->bn_backward_h = NULL, without->im2col_bf16 = NULL, without->col2im_bf16 = NULL;
    without->gemm_batched_bf16 = NULL, without->gemm_batched_sum_bf16 = NULL;
    without->gemm_batched_bf16_h = NULL, without->gemm_col2im_bf16 = NULL;
    uint64_t seed = (uint64_t)tu_int(&f->rng, 1, 1 << 30);
    const net_case *nc = &RESNET8;
    dt_net *net[2] = {build(with, nc, amp, seed), build(without, nc, amp, seed)};
    size_t nx = (size_t)nc->batch * nc->c * nc->hw * nc->hw, nt = net[0]->n_total;
    size_t nz = (size_t)nc->batch * nc->classes;
    float *x = malloc(nx * sizeof(float)), *g[2], loss[2], *z[2];
    int32_t *y = malloc((size_t)nc->batch * sizeof(int32_t));
    tu_fill_uniform(&f->rng, x, nx, -1.0, 1.0);
    for (int i = 0; i < nc->batch; i++) y[i] = tu_int(&f->rng, 0, nc->classes - 1);
    for (int k = 0; k < 2; k++) {
        dt_net_set_batch(net[k], x, y);
        dt_net_forward(net[k], 1);
        loss[k] = dt_net_loss(net[k]);
        dt_net_backward(net[k], amp == DT_AMP_FP16 ? 1024.0f : 1.0f, NULL, NULL);
        g[k] = malloc(2 * nt * sizeof(float));
        memcpy(g[k], net[k]->grads, net[k]->n_trainable * sizeof(float));
        memcpy(g[k] + nt, net[k]->params, nt * sizeof(float));  // the running statistics
        dt_net_forward(net[k], 0);  // evaluation: the running statistics
        z[k] = malloc(nz * sizeof(float));
        memcpy(z[k], net[k]->layers[dt_net_last(net[k])]->out, nz * sizeof(float));
    }
    print_message("resnet8 %s: relu_forward_h %d, relu_backward_h %d, add_h %d, "
                  "bn_forward_train_h %d, bn_forward_eval_h %d, bn_backward_h %d calls\n",
                  dt_amp_name(amp), real_h.calls[0], real_h.calls[1], real_h.calls[2],
                  real_h.calls[3], real_h.calls[4], real_h.calls[5]);
    for (int o = 0; o < 6; o++)
        if (real_h.calls[o] == 0) fail_msg("the network never called half op %d", o);
    // convolution on bf16 storage: where the device has it (a CPU that multiplies bf16,
    // tests/unit/test_device_cpu_half.c checks which), bf16 networks must use it
    int conv_direct = amp == DT_AMP_BF16 && real_im2col_bf16;
    print_message("resnet8 %s: conv on bf16 storage %s: im2col_bf16 %d, bf16 gemms %d "
                  "calls\n", dt_amp_name(amp), conv_direct ? "on" : "off", conv_calls[0],
                  conv_calls[1]);
    if (conv_direct && (conv_calls[0] == 0 || conv_calls[1] == 0))
        fail_msg("the network never ran a convolution on bf16 storage");
    if (!conv_direct && (conv_calls[0] || conv_calls[1]))
        fail_msg("a convolution ran on bf16 storage in %s", dt_amp_name(amp));
    if (memcmp(&loss[0], &loss[1], sizeof(float)) != 0)
        fail_msg("loss %.9g with the half ops, %.9g with the views", loss[0], loss[1]);
    for (size_t i = 0; i < net[0]->n_trainable; i++)
        if (memcmp(&g[0][i], &g[1][i], sizeof(float)) != 0)
            fail_msg("gradient %zu: %.9g with the half ops, %.9g with the views", i, g[0][i],
                     g[1][i]);
    if (memcmp(g[0] + nt, g[1] + nt, nt * sizeof(float)) != 0)
        fail_msg("weights or running statistics differ");
    if (memcmp(z[0], z[1], nz * sizeof(float)) != 0) fail_msg("evaluation logits differ");
    free(x), free(y), free(g[0]), free(g[1]), free(z[0]), free(z[1]);
    dt_net_free(net[0]), dt_net_free(net[1]);
    with->destroy(with), without->destroy(without);
}
static void test_direct_fp16(void **s) { check_direct_vs_views(*s, DT_AMP_FP16, 1); }
static void test_direct_bf16(void **s) { check_direct_vs_views(*s, DT_AMP_BF16, 1); }
// 2 threads: the bf16 convs' gemms dealt out whole and cut into bands (device_cpu_half.c)
static void test_direct_bf16_2_threads(void **s) { check_direct_vs_views(*s, DT_AMP_BF16, 2); }

static void test_amp_names(void **state) {
    (void)state;
    for (int a = DT_AMP_FP32; a <= DT_AMP_BF16; a++) {
        dt_amp got;
        assert_int_equal(dt_amp_parse(dt_amp_name((dt_amp)a), &got), 0);
        assert_int_equal(got, a);
    }
    dt_amp got;
    assert_int_equal(dt_amp_parse("fp8", &got), -1);
    assert_int_equal(dt_amp_parse(NULL, &got), -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_amp_names),
        cmocka_unit_test(test_bf16_every_value_round_trips),
        cmocka_unit_test(test_bf16_rounds_to_nearest_even),
        cmocka_unit_test(test_smallcnn_fp16),
        cmocka_unit_test(test_gpt2_tiny_fp16),
        cmocka_unit_test(test_gpt2_tiny_bf16),
        cmocka_unit_test(test_smallcnn_bf16),
        cmocka_unit_test(test_resnet8_fp16),
        cmocka_unit_test(test_resnet8_bf16),
        cmocka_unit_test(test_resnet50_fp16),
        cmocka_unit_test(test_resnet50_bf16),
        cmocka_unit_test(test_half_ops_fp16),
        cmocka_unit_test(test_half_ops_bf16),
        cmocka_unit_test(test_direct_fp16),
        cmocka_unit_test(test_direct_bf16),
        cmocka_unit_test(test_direct_bf16_2_threads),
    };
    return cmocka_run_group_tests(tests, tu_fixture_setup, tu_fixture_teardown);
}
