// cuda_internal.h — private to the cuda device (real/cuda): the error checks that carry file
// and line, the device's own state, and the kernel launchers (kernels_*.cu) that
// device_cuda.c calls. Each launcher queues its kernel on `st` and checks the launch; none
// synchronises. Shapes and meanings are those of the primitive of nn/device.h it serves.
#ifndef DT_CUDA_INTERNAL_H
#define DT_CUDA_INTERNAL_H

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "device.h"

#ifdef __cplusplus
extern "C" {
#endif
#include "kernels.h"  // dt_moments

// Every CUDA runtime call and every launch goes through these: a failure prints the call,
// the file and line and CUDA's message, and exits 1 (a broken GPU is not bad input).
void dt_cuda_fail(const char *what, const char *msg, const char *file, int line);
#define cudaCheck(call)                                                                 \
    do {                                                                                \
        cudaError_t e_ = (call);                                                        \
        if (e_ != cudaSuccess) dt_cuda_fail(#call, cudaGetErrorString(e_), __FILE__, __LINE__); \
    } while (0)
#define cublasCheck(call)                                                               \
    do {                                                                                \
        cublasStatus_t s_ = (call);                                                     \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                \
            dt_cuda_fail(#call, cublasGetStatusString(s_), __FILE__, __LINE__);         \
    } while (0)
// after a <<<...>>> launch: configuration errors surface here, with the launch's line
#define DT_LAUNCH_CHECK() cudaCheck(cudaGetLastError())

#define DT_CUDA_TICKETS 256  // events in the ring behind mark()/done()

typedef struct {
    int ordinal;
    unsigned flags;
    int sms;                  // multiprocessors, for grid sizes
    cudaStream_t stream;      // every primitive
    cudaStream_t copy;        // asynchronous host copies (allreduce staging)
    cudaEvent_t ev_compute, ev_copy;
    cudaEvent_t tickets[DT_CUDA_TICKETS];
    uint64_t n_tickets, done_upto;
    cublasHandle_t blas;
    void *scratch;            // device scratch (reductions, batched-sum partials), grown
    size_t scratch_bytes;
    void *half_in;            // device, the half copies of a mixed-precision gemm's inputs
    size_t half_in_bytes;
    void *host_scratch;       // pinned, for reduction results
    size_t host_scratch_bytes;
} dt_cuda_ctx;

// ---- device_cuda.c: scratch kept by the device, grown on demand (growing waits for the
// stream); device_cuda_nn.c: the network primitives' table ----
void *dt_cuda_scratch(dt_device *d, size_t bytes);       // device memory
void *dt_cuda_host_scratch(dt_device *d, size_t bytes);  // pinned host memory
void dt_cuda_install_nn(dt_device *d);
void dt_cuda_install_half(dt_device *d);  // device_cuda_half.c: convolutions on half storage

// ---- kernels_elem.cu ----
void dt_cu_fill(cudaStream_t st, float *x, float v, size_t n);
void dt_cu_scale(cudaStream_t st, float *x, float a, size_t n);
void dt_cu_axpy(cudaStream_t st, float a, const float *x, float *y, size_t n);
void dt_cu_add(cudaStream_t st, float *y, const float *x, size_t n);
// y = sum_i w[i*n + j] for i < k, then (first) y = beta*y + that, else y += that
void dt_cu_sum_rows(cudaStream_t st, const float *w, int k, size_t n, float beta, int first,
                    float *y);
// part[b] (nb = dt_cu_reduce_blocks(n)) = sum of squares / nonfinite count of block b's slice
int dt_cu_reduce_blocks(size_t n);
void dt_cu_sumsq_part(cudaStream_t st, const float *x, size_t n, double *part);
void dt_cu_nonfinite_part(cudaStream_t st, const float *x, size_t n, unsigned long long *part);
void dt_cu_relu_forward(cudaStream_t st, const float *x, float *y, size_t n);
void dt_cu_relu_backward(cudaStream_t st, const float *y, const float *dy, float *dx, size_t n,
                         int inplace);
void dt_cu_relu_forward_h(cudaStream_t st, int fmt, const uint16_t *x, uint16_t *y, size_t n);
void dt_cu_relu_backward_h(cudaStream_t st, int fmt, const uint16_t *y, const uint16_t *dy,
                           uint16_t *dx, size_t n, int set);
void dt_cu_add_h(cudaStream_t st, int fmt, const uint16_t *a, const uint16_t *b, uint16_t *y,
                 size_t n);
void dt_cu_dropout_forward(cudaStream_t st, const float *x, float *y, float *mask, size_t n,
                           float p, uint64_t seed);
void dt_cu_dropout_backward(cudaStream_t st, const float *dy, const float *mask, float *dx,
                            size_t n);
void dt_cu_sgd(cudaStream_t st, float *w, const float *g, float *v, size_t n, float lr,
               float m, float wd, int nesterov);
void dt_cu_lars(cudaStream_t st, float *w, const float *g, float *v, size_t n, float slr,
                float m, float wd);
void dt_cu_f32_to_f16(cudaStream_t st, const float *x, uint16_t *y, size_t n);
void dt_cu_f16_to_f32(cudaStream_t st, const uint16_t *x, float *y, size_t n);
void dt_cu_add_f16(cudaStream_t st, float *y, const uint16_t *x, size_t n);
void dt_cu_f32_to_bf16(cudaStream_t st, const float *x, uint16_t *y, size_t n);
void dt_cu_bf16_to_f32(cudaStream_t st, const uint16_t *x, float *y, size_t n);

// ---- kernels_nn.cu ----
void dt_cu_im2col(cudaStream_t st, const float *x, int B, int C, int H, int W, int KH, int KW,
                  int stride, int pad, float *col);
void dt_cu_col2im(cudaStream_t st, const float *col, int B, int C, int H, int W, int KH,
                  int KW, int stride, int pad, float *x, int set);
void dt_cu_bias_add(cudaStream_t st, float *y, const float *bias, int B, int C, int HW);
// per-channel partial sums over slices of the B*HW elements of each channel (fixed order):
// mode 0: s0 += dy (bias); mode 1: s0 += x-k, s1 += (x-k)^2 with k = x[b=0,c,0] (bn stats);
// mode 2: s0 += dy, s1 += dy*(x-mean[c])*invstd[c] (bn backward). part is (C, S, 2) doubles.
// Only bias_backward calls it (mode 0); batch norm runs kernels_bn.cu's slices instead.
// fmt (here and in the bn kernels): the element type of the tensors a, x, y, dy, dx: 0 fp32,
// 1 fp16, 2 bf16 (half storage, nn/net_half.c); statistics and parameters are always fp32.
int dt_cu_channel_slices(int B, int HW);
void dt_cu_channel_part(cudaStream_t st, int mode, int fmt, const void *a, const void *x, int B,
                        int C, int HW, const float *mean, const float *invstd, double *part);
void dt_cu_bias_finish(cudaStream_t st, const double *part, int C, int S, float *db);
void dt_cu_bn_backward_finish(cudaStream_t st, const double *part, int C, int S, float *dgamma,
                              float *dbeta, float *sums);
void dt_cu_maxpool_forward(cudaStream_t st, const float *x, int B, int C, int H, int W, int K,
                           int stride, int pad, float *y, int32_t *argmax);
void dt_cu_maxpool_backward(cudaStream_t st, const float *dy, const int32_t *argmax, int B,
                            int C, int H, int W, int OH, int OW, float *dx);
void dt_cu_avgpool_forward(cudaStream_t st, const float *x, int B, int C, int H, int W, int OH,
                           int OW, float *y);
void dt_cu_avgpool_backward(cudaStream_t st, const float *dy, int B, int C, int H, int W,
                            int OH, int OW, float *dx);
void dt_cu_softmax_xent_forward(cudaStream_t st, const float *logits, const int32_t *labels,
                                int B, int K, float *probs, double *row_loss);
void dt_cu_softmax_xent_backward(cudaStream_t st, const float *probs, const int32_t *labels,
                                 int B, int K, float scale, float *dlogits);

// ---- kernels_bn.cu: batch norm (+ residual add + relu), fmt as above. Statistics: part is
// (C, S) triples, S = dt_cu_bn_slices(B, HW); backward: part is (C, S, 2) doubles, combined
// by dt_cu_bn_backward_finish into dgamma, dbeta and sums (2C floats). res, dres, y (relu 0)
// may be NULL. ----
int dt_cu_bn_slices(int B, int HW);
void dt_cu_bn_stats(cudaStream_t st, int fmt, const void *x, int B, int C, int HW,
                    dt_moments *part, float eps, float momentum, float *running_mean,
                    float *running_var, float *save_mean, float *save_invstd);
void dt_cu_bn_fused_apply(cudaStream_t st, int fmt, const void *x, const void *res, int B, int C,
                          int HW, const float *gamma, const float *beta, const float *mean,
                          const float *invstd, const float *running_var, float eps, void *y,
                          int relu);
void dt_cu_bn_fused_part(cudaStream_t st, int fmt, const void *y, const void *dy, const void *x,
                         int B, int C, int HW, const float *mean, const float *invstd, int relu,
                         double *part);
void dt_cu_bn_fused_dx(cudaStream_t st, int fmt, const void *y, const void *dy, const void *x,
                       int B, int C, int HW, const float *gamma, const float *mean,
                       const float *invstd, const float *sums, void *dx, int set, void *dres,
                       int set_res, int relu);

// ---- kernels_half.cu: convolutions on half storage ----
// im2col on 16-bit elements (bits copied: fp16 or bf16), padding +0
void dt_cu_im2col_h(cudaStream_t st, const uint16_t *x, int B, int C, int H, int W, int KH,
                    int KW, int stride, int pad, uint16_t *col);
// x = half((set ? 0 : float(x)) + col2im(col)), col fp32, fmt 1 or 2
void dt_cu_col2im_h(cudaStream_t st, int fmt, const float *col, int B, int C, int H, int W,
                    int KH, int KW, int stride, int pad, uint16_t *x, int set);
// C_i = beta*C_i for `batch` (M,N) blocks ldc and stride_c apart, C in fmt (0 fp32, 1, 2);
// beta 0 writes zeros whatever C held
void dt_cu_scale_blocks(cudaStream_t st, int fmt, void *C, int M, int N, int ldc,
                        size_t stride_c, int batch, float beta);

#ifdef __cplusplus
}
#endif
#endif
