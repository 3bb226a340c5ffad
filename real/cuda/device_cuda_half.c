// device_cuda_half.c — the cuda device's convolutions on half storage (nn/device.h
// im2col_bf16, col2im_h, gemm_batched_h, gemm_batched_sum_h and the bf16 hooks): the
// activations stay fp16 or bf16 from one layer to the next. im2col writes half columns,
// cuBLAS multiplies the half operands where they lie (cublasGemmStridedBatchedEx with
// CUBLAS_COMPUTE_32F: tensor cores, fp32 accumulation, Micikevicius et al. 2018 §3, as
// PyTorch AMP) and writes the output in half itself, rounded once. A 1x1 stride-1
// convolution needs no columns at all: its input is the gemm's B operand (nn/layer_conv.c).
// Layout: NCHW as the rest of dtlab; per image the 1x1 gemm is w (OC,C) x_b (C,HW), one
// strided-batched call over the batch, so channels-last would save no pass here.
// Not here: the kernels (kernels_half.cu), the fp32 gemms (device_cuda.c).
#include <string.h>

#include "cuda_internal.h"
#include "device_cuda.h"

static dt_cuda_ctx *ctx_of(dt_device *d) { return (dt_cuda_ctx *)d->ctx; }
static cublasOperation_t op(int t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; }

static cudaDataType half_type(const char *what, int fmt) {
    if (fmt != 1 && fmt != 2) {
        fprintf(stderr, "dtlab: cuda device: %s: half format %d is not fp16 (1) or bf16 (2)\n",
                what, fmt);
        exit(DT_EXIT_RUNTIME);
    }
    return fmt == 2 ? CUDA_R_16BF : CUDA_R_16F;
}

// Row-major C(M,N) = alpha*op(A)op(B) + beta*C as column-major C^T = op(B)^T op(A)^T, as
// device_cuda.c's gemms; C in half (c_half) or fp32.
static void cu_gemm_batched_h(dt_device *d, int fmt, int c_half, int ta, int tb, int M, int N,
                              int K, float alpha, const uint16_t *A, int lda, size_t sa,
                              const uint16_t *B, int ldb, size_t sb, float beta, void *C,
                              int ldc, size_t sc, int batch) {
    cudaDataType t = half_type("gemm_batched_h", fmt);
    if (batch <= 0 || M <= 0 || N <= 0) return;
    if (K <= 0 || alpha == 0.0f) {
        dt_cu_scale_blocks(ctx_of(d)->stream, c_half ? fmt : 0, C, M, N, ldc, sc, batch, beta);
        return;
    }
    cublasCheck(cublasGemmStridedBatchedEx(
        ctx_of(d)->blas, op(tb), op(ta), N, M, K, &alpha, B, t, ldb, (long long)sb, A, t, lda,
        (long long)sa, &beta, C, c_half ? t : CUDA_R_32F, ldc, (long long)sc, batch,
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// Most floats of products the batched sum keeps in scratch at once (128 MiB), as
// device_cuda.c's cu_gemm_batched_sum.
#define DT_CUDA_SUM_SCRATCH ((size_t)32 << 20)

// C = alpha*sum_i op(A_i)op(B_i) + beta*C, C fp32 (a convolution's dW): groups of products
// into fp32 scratch with one strided-batched gemm, added into C in item order (fixed
// order: the same bits every run).
static void cu_gemm_batched_sum_h(dt_device *d, int fmt, int ta, int tb, int M, int N, int K,
                                  float alpha, const uint16_t *A, int lda, size_t sa,
                                  const uint16_t *B, int ldb, size_t sb, float beta, float *C,
                                  int ldc, int batch) {
    half_type("gemm_batched_sum_h", fmt);
    if (M <= 0 || N <= 0) return;
    if (batch <= 0 || K <= 0 || alpha == 0.0f) {
        dt_cu_scale_blocks(ctx_of(d)->stream, 0, C, M, N, ldc, 0, 1, beta);
        return;
    }
    if (ldc != N || batch == 1) {  // C not packed: accumulate item by item
        for (int i = 0; i < batch; i++)
            cu_gemm_batched_h(d, fmt, 0, ta, tb, M, N, K, alpha, A + i * sa, lda, 0, B + i * sb,
                              ldb, 0, i == 0 ? beta : 1.0f, C, ldc, 0, 1);
        return;
    }
    size_t mn = (size_t)M * N;
    int g = (int)(DT_CUDA_SUM_SCRATCH / mn);
    if (g < 1) g = 1;
    if (g > batch) g = batch;
    float *w = dt_cuda_scratch(d, (size_t)g * mn * sizeof(float));
    for (int i0 = 0; i0 < batch; i0 += g) {
        int n = batch - i0 < g ? batch - i0 : g;
        cu_gemm_batched_h(d, fmt, 0, ta, tb, M, N, K, alpha, A + i0 * sa, lda, sa, B + i0 * sb,
                          ldb, sb, 0.0f, w, N, mn, n);
        dt_cu_sum_rows(ctx_of(d)->stream, w, n, mn, beta, i0 == 0, C);
    }
}

static void cu_im2col_h(dt_device *d, const uint16_t *x, int B, int C, int H, int W, int KH,
                        int KW, int stride, int pad, uint16_t *col) {
    dt_cu_im2col_h(ctx_of(d)->stream, x, B, C, H, W, KH, KW, stride, pad, col);
}
static void cu_col2im_h(dt_device *d, int fmt, const float *col, int B, int C, int H, int W,
                        int KH, int KW, int stride, int pad, uint16_t *x, int set) {
    dt_cu_col2im_h(ctx_of(d)->stream, fmt, col, B, C, H, W, KH, KW, stride, pad, x, set);
}

// the bf16 hooks (nn/device.h), the fmt = 2 case of the above
static void cu_col2im_bf16(dt_device *d, const float *col, int B, int C, int H, int W, int KH,
                           int KW, int stride, int pad, uint16_t *x, int set) {
    cu_col2im_h(d, 2, col, B, C, H, W, KH, KW, stride, pad, x, set);
}
static void cu_gemm_batched_bf16(dt_device *d, int ta, int tb, int M, int N, int K,
                                 float alpha, const uint16_t *A, int lda, size_t sa,
                                 const uint16_t *B, int ldb, size_t sb, float beta, float *C,
                                 int ldc, size_t sc, int batch) {
    cu_gemm_batched_h(d, 2, 0, ta, tb, M, N, K, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc,
                      batch);
}
static void cu_gemm_batched_sum_bf16(dt_device *d, int ta, int tb, int M, int N, int K,
                                     float alpha, const uint16_t *A, int lda, size_t sa,
                                     const uint16_t *B, int ldb, size_t sb, float beta,
                                     float *C, int ldc, int batch) {
    cu_gemm_batched_sum_h(d, 2, ta, tb, M, N, K, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc,
                          batch);
}

void dt_cuda_install_half(dt_device *d) {
    d->im2col_bf16 = cu_im2col_h;
    d->col2im_bf16 = cu_col2im_bf16;
    d->gemm_batched_bf16 = cu_gemm_batched_bf16;
    d->gemm_batched_sum_bf16 = cu_gemm_batched_sum_bf16;
    d->col2im_h = cu_col2im_h;
    d->gemm_batched_h = cu_gemm_batched_h;
    d->gemm_batched_sum_h = cu_gemm_batched_sum_h;
}
