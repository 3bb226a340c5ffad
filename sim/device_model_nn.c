// device_model_nn.c — the cost of every primitive of the model device (sim/device_model.h)
// besides memory and gemm: convolution helpers, batchnorm, activations, pooling, dropout, the
// loss, elementwise ops and reductions, optimizer updates, casts, and the optional in-place
// variants (so a network plans the same buffers as on the cpu). Each one counts FLOPs and
// bytes moved from its arguments and charges the roofline (dt_model_charge: CUDA-core fp32
// math, so these kernels are bandwidth-bound). Not here: any data; the roofline itself.
//
// Bytes: a tensor read or written once counts its elements times the activation size e
// (2 under fp16, else 4); "rmw" (read-modify-write, the += of a backward) counts twice.
// Per-channel vectors (C elements: gamma, beta, statistics, bias) are left out (C << n).
// Fixed widths: argmax and labels are int32 (4 bytes); optimizer updates, sumsq and
// nonfinite run on fp32 master weights and gradients (4 bytes, Micikevicius et al. 2018);
// casts count both widths. Values returned to the host are fixed and finite, after a flush.
#include <math.h>

#include "device_model_internal.h"

static double e_of(dt_device *d) { return dt_model_act_bytes(d); }

// output size of a window of k with stride s and padding p over n
static double out_dim(int n, int k, int s, int p) {
    int o = s > 0 ? (n + 2 * p - k) / s + 1 : 0;
    return o > 0 ? o : 0;
}

// ---- convolution helpers: x (B,C,H,W), col (B, C*KH*KW, OH*OW) ----
// Costed as a GPU convolution runs them: cuDNN's implicit GEMM never writes the column
// matrix to memory (the gemm gathers it from x through L2 and shared memory), so im2col
// charges one read of x, col2im one read-modify-write of x (col2im_set one write), and the
// column elements are charged where the gemm reads or writes them (its operand bytes).
// Charging the columns' own traffic as well (what an explicit im2col moves: ~216 MB per
// image for ResNet-50 in fp32) leaves the published fp16 throughput out of reach at any
// efficiency <= 1 (sim/gpu_profiles.c, calibration).
static double col_elems(int B, int C, int H, int W, int KH, int KW, int s, int p) {
    return (double)B * C * KH * KW * out_dim(H, KH, s, p) * out_dim(W, KW, s, p);
}

// reads x (the columns stay on chip)
static void model_im2col(dt_device *d, const float *x, int B, int C, int H, int W, int KH,
                         int KW, int stride, int pad, float *col) {
    (void)x, (void)col, (void)KH, (void)KW, (void)stride, (void)pad;
    dt_model_charge(d, 0.0, e_of(d) * (double)B * C * H * W);
}

// x += (rmw); one addition per column element
static void model_col2im(dt_device *d, const float *col, int B, int C, int H, int W, int KH,
                         int KW, int stride, int pad, float *x) {
    (void)x, (void)col;
    double xe = (double)B * C * H * W, ce = col_elems(B, C, H, W, KH, KW, stride, pad);
    dt_model_charge(d, ce, e_of(d) * 2.0 * xe);
}

// x = (written once)
static void model_col2im_set(dt_device *d, const float *col, int B, int C, int H, int W,
                             int KH, int KW, int stride, int pad, float *x) {
    (void)x, (void)col;
    double xe = (double)B * C * H * W, ce = col_elems(B, C, H, W, KH, KW, stride, pad);
    dt_model_charge(d, ce, e_of(d) * xe);
}

// ---- per-channel bias: y (B,C,HW), n = B*C*HW ----
static void model_bias_add(dt_device *d, float *y, const float *bias, int B, int C, int HW) {
    (void)y, (void)bias;
    double n = (double)B * C * HW;
    dt_model_charge(d, n, e_of(d) * 2.0 * n);  // y rmw
}

static void model_bias_backward(dt_device *d, const float *dy, int B, int C, int HW,
                                float *db) {
    (void)dy, (void)db;
    double n = (double)B * C * HW;
    dt_model_charge(d, n, e_of(d) * n);  // dy read
}

// ---- batch normalisation, x and y (B,C,HW), n = B*C*HW ----
// training forward: 3 passes (x read for the statistics, x read again, y written), 7n FLOPs
// (nn/layer_bn.c's counts)
static void model_bn_forward_train(dt_device *d, const float *x, int B, int C, int HW,
                                   const float *gamma, const float *beta, float eps,
                                   float momentum, float *running_mean, float *running_var,
                                   float *save_mean, float *save_invstd, float *y) {
    (void)x, (void)gamma, (void)beta, (void)eps, (void)momentum, (void)running_mean;
    (void)running_var, (void)save_mean, (void)save_invstd, (void)y;
    double n = (double)B * C * HW;
    dt_model_charge(d, 7.0 * n, e_of(d) * 3.0 * n);
}

// evaluation: x read, y written; 2n FLOPs (scale and shift)
static void model_bn_forward_eval(dt_device *d, const float *x, int B, int C, int HW,
                                  const float *gamma, const float *beta, float eps,
                                  const float *running_mean, const float *running_var,
                                  float *y) {
    (void)x, (void)gamma, (void)beta, (void)eps, (void)running_mean, (void)running_var;
    (void)y;
    double n = (double)B * C * HW;
    dt_model_charge(d, 2.0 * n, e_of(d) * 2.0 * n);
}

// backward, dx overwritten: ~4 passes, an estimate for a fused kernel (the sums read dy and
// x, the elementwise pass reads them again and writes dx: 5, part of it served from L2);
// 11n FLOPs (nn/layer_bn.c's counts)
static void model_bn_backward_set(dt_device *d, const float *dy, const float *x, int B, int C,
                                  int HW, const float *gamma, const float *save_mean,
                                  const float *save_invstd, float *dx, float *dgamma,
                                  float *dbeta) {
    (void)dy, (void)x, (void)gamma, (void)save_mean, (void)save_invstd, (void)dx;
    (void)dgamma, (void)dbeta;
    double n = (double)B * C * HW;
    dt_model_charge(d, 11.0 * n, e_of(d) * 4.0 * n);
}

// backward, dx += : one pass more than bn_backward_set (dx read)
static void model_bn_backward(dt_device *d, const float *dy, const float *x, int B, int C,
                              int HW, const float *gamma, const float *save_mean,
                              const float *save_invstd, float *dx, float *dgamma,
                              float *dbeta) {
    (void)dy, (void)x, (void)gamma, (void)save_mean, (void)save_invstd, (void)dx;
    (void)dgamma, (void)dbeta;
    double n = (double)B * C * HW;
    dt_model_charge(d, 11.0 * n, e_of(d) * 5.0 * n);
}

// ---- activations: n elements ----
static void model_relu_forward(dt_device *d, const float *x, float *y, size_t n) {
    (void)x, (void)y;
    if (n) dt_model_charge(d, (double)n, e_of(d) * 2.0 * (double)n);  // x read, y written
}

static void model_relu_backward(dt_device *d, const float *y, const float *dy, float *dx,
                                size_t n) {
    (void)y, (void)dy, (void)dx;
    if (n) dt_model_charge(d, (double)n, e_of(d) * 4.0 * (double)n);  // y, dy, dx rmw
}

static void model_relu_backward_inplace(dt_device *d, const float *y, float *dxy, size_t n) {
    (void)y, (void)dxy;
    if (n) dt_model_charge(d, (double)n, e_of(d) * 3.0 * (double)n);  // y, dxy rmw
}

// ---- pooling: x (B,C,H,W), y (B,C,OH,OW) ----
// reads x, writes y and argmax (int32); K*K comparisons per output
static void model_maxpool_forward(dt_device *d, const float *x, int B, int C, int H, int W,
                                  int K, int stride, int pad, float *y, int32_t *argmax) {
    (void)x, (void)y, (void)argmax;
    double in = (double)B * C * H * W;
    double out = (double)B * C * out_dim(H, K, stride, pad) * out_dim(W, K, stride, pad);
    dt_model_charge(d, out * K * K, e_of(d) * (in + out) + 4.0 * out);
}

// reads dy and argmax, dx rmw
static void model_maxpool_backward(dt_device *d, const float *dy, const int32_t *argmax,
                                   int B, int C, int H, int W, int OH, int OW, float *dx) {
    (void)dy, (void)argmax, (void)dx;
    double in = (double)B * C * H * W, out = (double)B * C * OH * OW;
    dt_model_charge(d, out, e_of(d) * (out + 2.0 * in) + 4.0 * out);
}

static void model_avgpool_forward(dt_device *d, const float *x, int B, int C, int H, int W,
                                  int OH, int OW, float *y) {
    (void)x, (void)y;
    double in = (double)B * C * H * W, out = (double)B * C * OH * OW;
    dt_model_charge(d, in, e_of(d) * (in + out));
}

static void model_avgpool_backward(dt_device *d, const float *dy, int B, int C, int H, int W,
                                   int OH, int OW, float *dx) {
    (void)dy, (void)dx;
    double in = (double)B * C * H * W, out = (double)B * C * OH * OW;
    dt_model_charge(d, in, e_of(d) * (out + 2.0 * in));
}

// ---- dropout: x read, y and mask written; backward dy, mask read, dx rmw ----
static void model_dropout_forward(dt_device *d, const float *x, float *y, float *mask,
                                  size_t n, float p, uint64_t seed) {
    (void)x, (void)y, (void)mask, (void)p, (void)seed;
    if (n) dt_model_charge(d, 2.0 * (double)n, e_of(d) * 3.0 * (double)n);
}

static void model_dropout_backward(dt_device *d, const float *dy, const float *mask,
                                   float *dx, size_t n) {
    (void)dy, (void)mask, (void)dx;
    if (n) dt_model_charge(d, (double)n, e_of(d) * 4.0 * (double)n);
}

// ---- loss: logits, probs (B,K), labels (B) int32 ----
// max, subtract, exp, sum, divide: 5 FLOPs per logit; logits read, probs written. The host
// gets the loss of uniform probabilities, ln K (finite), after waiting for the GPU.
static float model_softmax_xent_forward(dt_device *d, const float *logits,
                                        const int32_t *labels, int B, int K, float *probs) {
    (void)logits, (void)labels, (void)probs;
    double bk = (double)B * K;
    if (B > 0 && K > 0) dt_model_charge(d, 5.0 * bk, e_of(d) * 2.0 * bk + 4.0 * B);
    dt_model_flush(d);
    return K > 0 ? logf((float)K) : 0.0f;
}

// probs read, dlogits rmw
static void model_softmax_xent_backward(dt_device *d, const float *probs,
                                        const int32_t *labels, int B, int K, float scale,
                                        float *dlogits) {
    (void)probs, (void)labels, (void)scale, (void)dlogits;
    double bk = (double)B * K;
    if (B > 0 && K > 0) dt_model_charge(d, 2.0 * bk, e_of(d) * 3.0 * bk + 4.0 * B);
}

// ---- elementwise and reductions: n elements ----
static void model_fill(dt_device *d, float *x, float value, size_t n) {
    (void)x, (void)value;
    if (n) dt_model_charge(d, 0.0, e_of(d) * (double)n);  // written
}

static void model_scale(dt_device *d, float *x, float alpha, size_t n) {
    (void)x, (void)alpha;
    if (n) dt_model_charge(d, (double)n, e_of(d) * 2.0 * (double)n);  // x rmw
}

static void model_axpy(dt_device *d, float alpha, const float *x, float *y, size_t n) {
    (void)alpha, (void)x, (void)y;
    if (n) dt_model_charge(d, 2.0 * (double)n, e_of(d) * 3.0 * (double)n);  // x, y rmw
}

static void model_add(dt_device *d, float *y, const float *x, size_t n) {
    (void)y, (void)x;
    if (n) dt_model_charge(d, (double)n, e_of(d) * 3.0 * (double)n);  // x, y rmw
}

// k kernels (fp32 reads), then one wait; each returns n to the host (as if every element
// were 1: norms finite, non-zero)
static void model_sumsq_many(dt_device *d, int k, const float *const *x, const size_t *n,
                             double *out_host) {
    (void)x;
    for (int i = 0; i < k; i++) {
        if (n[i]) dt_model_charge(d, 2.0 * (double)n[i], 4.0 * (double)n[i]);
        out_host[i] = (double)n[i];
    }
    dt_model_flush(d);
}

static double model_sumsq(dt_device *d, const float *x, size_t n) {
    double s;
    model_sumsq_many(d, 1, &x, &n, &s);
    return s;
}

// fp32 read; returns 0 (all finite) to the host
static size_t model_nonfinite(dt_device *d, const float *x, size_t n) {
    (void)x;
    if (n) dt_model_charge(d, (double)n, 4.0 * (double)n);
    dt_model_flush(d);
    return 0;
}

// ---- optimizer updates, fp32 master weights: w, v rmw, g read (5 x 4 bytes) ----
static void model_sgd_update(dt_device *d, float *w, const float *g, float *v, size_t n,
                             float lr, float momentum, float wd, int nesterov) {
    (void)w, (void)g, (void)v, (void)lr, (void)momentum, (void)wd;
    double fl = nesterov ? 8.0 : 6.0;
    if (n) dt_model_charge(d, fl * (double)n, 20.0 * (double)n);
}

static void model_lars_update(dt_device *d, float *w, const float *g, float *v, size_t n,
                              float scaled_lr, float momentum, float wd) {
    (void)w, (void)g, (void)v, (void)scaled_lr, (void)momentum, (void)wd;
    if (n) dt_model_charge(d, 6.0 * (double)n, 20.0 * (double)n);
}

// ---- casts: both widths ----
static void model_f32_to_f16(dt_device *d, const float *x, uint16_t *y, size_t n) {
    (void)x, (void)y;
    if (n) dt_model_charge(d, (double)n, 6.0 * (double)n);  // 4 read + 2 written
}

static void model_f16_to_f32(dt_device *d, const uint16_t *x, float *y, size_t n) {
    (void)x, (void)y;
    if (n) dt_model_charge(d, (double)n, 6.0 * (double)n);  // 2 read + 4 written
}

static void model_add_f16(dt_device *d, float *y, const uint16_t *x, size_t n) {
    (void)x, (void)y;
    if (n) dt_model_charge(d, (double)n, 10.0 * (double)n);  // 2 read + y rmw (4 + 4)
}

// bf16 casts move the same bytes as fp16's
static void model_f32_to_bf16(dt_device *d, const float *x, uint16_t *y, size_t n) {
    model_f32_to_f16(d, x, y, n);
}

static void model_bf16_to_f32(dt_device *d, const uint16_t *x, float *y, size_t n) {
    model_f16_to_f32(d, x, y, n);
}

void dt_model_install_nn(dt_device *d) {
    d->im2col = model_im2col;
    d->col2im = model_col2im;
    d->bias_add = model_bias_add;
    d->bias_backward = model_bias_backward;
    d->bn_forward_train = model_bn_forward_train;
    d->bn_forward_eval = model_bn_forward_eval;
    d->bn_backward = model_bn_backward;
    d->relu_forward = model_relu_forward;
    d->relu_backward = model_relu_backward;
    d->maxpool_forward = model_maxpool_forward;
    d->maxpool_backward = model_maxpool_backward;
    d->avgpool_forward = model_avgpool_forward;
    d->avgpool_backward = model_avgpool_backward;
    d->dropout_forward = model_dropout_forward;
    d->dropout_backward = model_dropout_backward;
    d->softmax_xent_forward = model_softmax_xent_forward;
    d->softmax_xent_backward = model_softmax_xent_backward;
    d->fill = model_fill;
    d->scale = model_scale;
    d->axpy = model_axpy;
    d->add = model_add;
    d->sumsq = model_sumsq;
    d->sumsq_many = model_sumsq_many;
    d->nonfinite = model_nonfinite;
    d->sgd_update = model_sgd_update;
    d->lars_update = model_lars_update;
    d->f32_to_f16 = model_f32_to_f16;
    d->f16_to_f32 = model_f16_to_f32;
    d->add_f16 = model_add_f16;
    d->f32_to_bf16 = model_f32_to_bf16;
    d->bf16_to_f32 = model_bf16_to_f32;
    d->relu_backward_inplace = model_relu_backward_inplace;
    d->bn_backward_set = model_bn_backward_set;
    d->col2im_set = model_col2im_set;
}
