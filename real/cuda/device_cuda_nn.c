// device_cuda_nn.c — the host side of the cuda device's network primitives (nn/device.h):
// scratch for the per-channel partial sums, the order of the kernel launches, and the loss
// brought back to the host. The kernels are in kernels_nn.cu; their formulas in
// nn/kernels.h. Not here: memory, gemm and elementwise ops (device_cuda.c).
#include <math.h>
#include <string.h>

#include "cuda_internal.h"
#include "device_cuda.h"


#define ST(d) (((dt_cuda_ctx *)(d)->ctx)->stream)

static void cu_im2col(dt_device *d, const float *x, int B, int C, int H, int W, int KH, int KW,
                      int stride, int pad, float *col) {
    dt_cu_im2col(ST(d), x, B, C, H, W, KH, KW, stride, pad, col);
}
static void cu_col2im(dt_device *d, const float *col, int B, int C, int H, int W, int KH,
                      int KW, int stride, int pad, float *x) {
    dt_cu_col2im(ST(d), col, B, C, H, W, KH, KW, stride, pad, x, 0);
}
static void cu_col2im_set(dt_device *d, const float *col, int B, int C, int H, int W, int KH,
                          int KW, int stride, int pad, float *x) {
    dt_cu_col2im(ST(d), col, B, C, H, W, KH, KW, stride, pad, x, 1);
}

static void cu_bias_add(dt_device *d, float *y, const float *bias, int B, int C, int HW) {
    dt_cu_bias_add(ST(d), y, bias, B, C, HW);
}

// (C, S, 2) doubles of per-slice sums, then 2C floats (the bn backward's channel sums)
static double *channel_scratch(dt_device *d, int B, int C, int HW, float **sums) {
    size_t parts = (size_t)C * dt_cu_channel_slices(B, HW) * 2;
    double *p = dt_cuda_scratch(d, parts * sizeof(double) + (size_t)2 * C * sizeof(float));
    if (sums) *sums = (float *)(p + parts);
    return p;
}

static void cu_bias_backward(dt_device *d, const float *dy, int B, int C, int HW, float *db) {
    if (C <= 0) return;
    double *part = channel_scratch(d, B, C, HW, NULL);
    dt_cu_channel_part(ST(d), 0, 0, dy, NULL, B, C, HW, NULL, NULL, part);
    dt_cu_bias_finish(ST(d), part, C, dt_cu_channel_slices(B, HW), db);
}

// Ioffe & Szegedy 2015, Alg. 1 (kernels_bn.cu): the statistics by slices and a combine,
// then one elementwise pass that also adds res and applies relu where the layer is fused.
// fmt: the storage of x, res and y (0 fp32; 1 fp16, 2 bf16 under --precision,
// nn/net_half.c).
static void bn_train(dt_device *d, int fmt, const void *x, const void *res, int B, int C,
                     int HW, const float *gamma, const float *beta, float eps, float momentum,
                     float *running_mean, float *running_var, float *save_mean,
                     float *save_invstd, void *y, int relu) {
    if ((size_t)B * HW == 0 || C <= 0) return;
    dt_moments *part = dt_cuda_scratch(d, (size_t)C * dt_cu_bn_slices(B, HW) * sizeof(*part));
    dt_cu_bn_stats(ST(d), fmt, x, B, C, HW, part, eps, momentum, running_mean, running_var,
                   save_mean, save_invstd);
    dt_cu_bn_fused_apply(ST(d), fmt, x, res, B, C, HW, gamma, beta, save_mean, save_invstd,
                         NULL, eps, y, relu);
}
static void cu_bn_forward_train(dt_device *d, const float *x, int B, int C, int HW,
                                const float *gamma, const float *beta, float eps,
                                float momentum, float *running_mean, float *running_var,
                                float *save_mean, float *save_invstd, float *y) {
    bn_train(d, 0, x, NULL, B, C, HW, gamma, beta, eps, momentum, running_mean, running_var,
             save_mean, save_invstd, y, 0);
}
static void cu_bn_forward_train_h(dt_device *d, int fmt, const uint16_t *x, int B, int C,
                                  int HW, const float *gamma, const float *beta, float eps,
                                  float momentum, float *running_mean, float *running_var,
                                  float *save_mean, float *save_invstd, uint16_t *y) {
    bn_train(d, fmt, x, NULL, B, C, HW, gamma, beta, eps, momentum, running_mean, running_var,
             save_mean, save_invstd, y, 0);
}

static void cu_bn_forward_eval(dt_device *d, const float *x, int B, int C, int HW,
                               const float *gamma, const float *beta, float eps,
                               const float *running_mean, const float *running_var, float *y) {
    dt_cu_bn_fused_apply(ST(d), 0, x, NULL, B, C, HW, gamma, beta, running_mean, NULL,
                         running_var, eps, y, 0);
}
static void cu_bn_forward_eval_h(dt_device *d, int fmt, const uint16_t *x, int B, int C,
                                 int HW, const float *gamma, const float *beta, float eps,
                                 const float *running_mean, const float *running_var,
                                 uint16_t *y) {
    dt_cu_bn_fused_apply(ST(d), fmt, x, NULL, B, C, HW, gamma, beta, running_mean, NULL,
                         running_var, eps, y, 0);
}

// One reduction pass (sum g, sum g*xhat per slice, then the slices in order) and one
// elementwise pass; g = relu_grad(y, dy) where the layer is fused with relu, else dy.
static void bn_backward(dt_device *d, int fmt, const void *y, const void *dy, const void *x,
                        int B, int C, int HW, const float *gamma, const float *save_mean,
                        const float *save_invstd, void *dx, int set, void *dres, int set_res,
                        float *dgamma, float *dbeta, int relu) {
    if ((size_t)B * HW == 0 || C <= 0) return;
    int S = dt_cu_bn_slices(B, HW);
    size_t parts = (size_t)C * S * 2;
    double *part = dt_cuda_scratch(d, parts * sizeof(double) + (size_t)2 * C * sizeof(float));
    float *sums = (float *)(part + parts);
    dt_cu_bn_fused_part(ST(d), fmt, y, dy, x, B, C, HW, save_mean, save_invstd, relu, part);
    dt_cu_bn_backward_finish(ST(d), part, C, S, dgamma, dbeta, sums);
    if (dx)
        dt_cu_bn_fused_dx(ST(d), fmt, y, dy, x, B, C, HW, gamma, save_mean, save_invstd, sums,
                          dx, set, dres, set_res, relu);
}
static void cu_bn_backward(dt_device *d, const float *dy, const float *x, int B, int C, int HW,
                           const float *gamma, const float *save_mean,
                           const float *save_invstd, float *dx, float *dgamma, float *dbeta) {
    bn_backward(d, 0, NULL, dy, x, B, C, HW, gamma, save_mean, save_invstd, dx, 0, NULL, 0,
                dgamma, dbeta, 0);
}
static void cu_bn_backward_set(dt_device *d, const float *dy, const float *x, int B, int C,
                               int HW, const float *gamma, const float *save_mean,
                               const float *save_invstd, float *dx, float *dgamma,
                               float *dbeta) {
    bn_backward(d, 0, NULL, dy, x, B, C, HW, gamma, save_mean, save_invstd, dx, 1, NULL, 0,
                dgamma, dbeta, 0);
}
static void cu_bn_backward_h(dt_device *d, int fmt, const uint16_t *dy, const uint16_t *x,
                             int B, int C, int HW, const float *gamma, const float *save_mean,
                             const float *save_invstd, uint16_t *dx, float *dgamma,
                             float *dbeta, int set) {
    bn_backward(d, fmt, NULL, dy, x, B, C, HW, gamma, save_mean, save_invstd, dx, set, NULL, 0,
                dgamma, dbeta, 0);
}

// fused with the residual add and relu (nn/device.h bn_fused_*): fmt 0, 1 or 2
static void check_fmt(const char *what, int fmt) {
    if (fmt < 0 || fmt > 2) {
        fprintf(stderr, "dtlab: cuda device: %s: storage format %d is not fp32 (0), fp16 (1) "
                "or bf16 (2)\n", what, fmt);
        exit(DT_EXIT_RUNTIME);
    }
}
static void cu_bn_fused_forward_train(dt_device *d, int fmt, const void *x, const void *res,
                                      int B, int C, int HW, const float *gamma,
                                      const float *beta, float eps, float momentum,
                                      float *running_mean, float *running_var,
                                      float *save_mean, float *save_invstd, void *y, int relu) {
    check_fmt("bn_fused_forward_train", fmt);
    bn_train(d, fmt, x, res, B, C, HW, gamma, beta, eps, momentum, running_mean, running_var,
             save_mean, save_invstd, y, relu);
}
static void cu_bn_fused_backward(dt_device *d, int fmt, const void *y, const void *dy,
                                 const void *x, int B, int C, int HW, const float *gamma,
                                 const float *save_mean, const float *save_invstd, void *dx,
                                 int set, void *dres, int set_res, float *dgamma, float *dbeta,
                                 int relu) {
    check_fmt("bn_fused_backward", fmt);
    bn_backward(d, fmt, y, dy, x, B, C, HW, gamma, save_mean, save_invstd, dx, set, dres,
                set_res, dgamma, dbeta, relu);
}

static void cu_relu_forward(dt_device *d, const float *x, float *y, size_t n) {
    dt_cu_relu_forward(ST(d), x, y, n);
}
static void cu_relu_backward(dt_device *d, const float *y, const float *dy, float *dx,
                             size_t n) {
    dt_cu_relu_backward(ST(d), y, dy, dx, n, 0);
}
static void cu_relu_backward_inplace(dt_device *d, const float *y, float *dxy, size_t n) {
    dt_cu_relu_backward(ST(d), y, dxy, dxy, n, 1);
}

static void cu_relu_forward_h(dt_device *d, int fmt, const uint16_t *x, uint16_t *y, size_t n) {
    dt_cu_relu_forward_h(ST(d), fmt, x, y, n);
}
static void cu_relu_backward_h(dt_device *d, int fmt, const uint16_t *y, const uint16_t *dy,
                               uint16_t *dx, size_t n, int set) {
    dt_cu_relu_backward_h(ST(d), fmt, y, dy, dx, n, set);
}
static void cu_add_h(dt_device *d, int fmt, const uint16_t *a, const uint16_t *b, uint16_t *y,
                     size_t n) {
    dt_cu_add_h(ST(d), fmt, a, b, y, n);
}

static void cu_maxpool_forward(dt_device *d, const float *x, int B, int C, int H, int W, int K,
                               int stride, int pad, float *y, int32_t *argmax) {
    dt_cu_maxpool_forward(ST(d), x, B, C, H, W, K, stride, pad, y, argmax);
}
static void cu_maxpool_backward(dt_device *d, const float *dy, const int32_t *argmax, int B,
                                int C, int H, int W, int OH, int OW, float *dx) {
    dt_cu_maxpool_backward(ST(d), dy, argmax, B, C, H, W, OH, OW, dx);
}
static void cu_avgpool_forward(dt_device *d, const float *x, int B, int C, int H, int W,
                               int OH, int OW, float *y) {
    dt_cu_avgpool_forward(ST(d), x, B, C, H, W, OH, OW, y);
}
static void cu_avgpool_backward(dt_device *d, const float *dy, int B, int C, int H, int W,
                                int OH, int OW, float *dx) {
    dt_cu_avgpool_backward(ST(d), dy, B, C, H, W, OH, OW, dx);
}

static void cu_dropout_forward(dt_device *d, const float *x, float *y, float *mask, size_t n,
                               float p, uint64_t seed) {
    dt_cu_dropout_forward(ST(d), x, y, mask, n, p, seed);
}
static void cu_dropout_backward(dt_device *d, const float *dy, const float *mask, float *dx,
                                size_t n) {
    dt_cu_dropout_backward(ST(d), dy, mask, dx, n);
}

// rows' losses in double on the device, their mean on the host in row order (the cpu
// device's order); a label outside [0,K) makes the loss NaN
static float cu_softmax_xent_forward(dt_device *d, const float *logits, const int32_t *labels,
                                     int B, int K, float *probs) {
    if (B <= 0 || K <= 0) return B <= 0 ? 0.0f : NAN;
    double *rows = dt_cuda_scratch(d, (size_t)B * sizeof(double));
    double *h = dt_cuda_host_scratch(d, (size_t)B * sizeof(double));
    dt_cu_softmax_xent_forward(ST(d), logits, labels, B, K, probs, rows);
    d->to_host(d, h, rows, (size_t)B * sizeof(double));
    double total = 0.0;
    for (int b = 0; b < B; b++) total += h[b];
    return (float)(total / B);
}
static void cu_softmax_xent_backward(dt_device *d, const float *probs, const int32_t *labels,
                                     int B, int K, float scale, float *dlogits) {
    dt_cu_softmax_xent_backward(ST(d), probs, labels, B, K, scale, dlogits);
}

void dt_cuda_install_nn(dt_device *d) {
    d->im2col = cu_im2col;
    d->col2im = cu_col2im;
    d->col2im_set = cu_col2im_set;
    d->bias_add = cu_bias_add;
    d->bias_backward = cu_bias_backward;
    d->bn_forward_train = cu_bn_forward_train;
    d->bn_forward_eval = cu_bn_forward_eval;
    d->bn_backward = cu_bn_backward;
    d->bn_backward_set = cu_bn_backward_set;
    d->bn_forward_train_h = cu_bn_forward_train_h;
    d->bn_forward_eval_h = cu_bn_forward_eval_h;
    d->bn_backward_h = cu_bn_backward_h;
    d->bn_fused_forward_train = cu_bn_fused_forward_train;
    d->bn_fused_backward = cu_bn_fused_backward;
    d->relu_forward = cu_relu_forward;
    d->relu_backward = cu_relu_backward;
    d->relu_backward_inplace = cu_relu_backward_inplace;
    d->relu_forward_h = cu_relu_forward_h;
    d->relu_backward_h = cu_relu_backward_h;
    d->add_h = cu_add_h;
    d->maxpool_forward = cu_maxpool_forward;
    d->maxpool_backward = cu_maxpool_backward;
    d->avgpool_forward = cu_avgpool_forward;
    d->avgpool_backward = cu_avgpool_backward;
    d->dropout_forward = cu_dropout_forward;
    d->dropout_backward = cu_dropout_backward;
    d->softmax_xent_forward = cu_softmax_xent_forward;
    d->softmax_xent_backward = cu_softmax_xent_backward;
}
