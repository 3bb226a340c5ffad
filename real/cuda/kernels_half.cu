// kernels_half.cu — convolutions on half storage (fp16 or bf16, nn/net_half.c) on the cuda
// device: im2col that copies 16-bit elements into half columns, so the gemm reads them as
// they are (no fp32 column matrix, no packing pass before cuBLAS), col2im from the gemm's
// fp32 dcol into a half dx with one rounding, and the beta-scaling of gemm outputs in
// either storage. Index arithmetic from nn/kernels.h (dt_im2col_src), shared with the cpu
// tests; loops and launches from cuda_launch.cuh.
// Not here: the half gemms (cuBLAS, device_cuda_half.c), the fp32 im2col (kernels_nn.cu).
#include "cuda_launch.cuh"

// col (B, C*KH*KW, OH*OW) of 16-bit elements; padding is +0 (0x0000 in fp16 and bf16)
template <typename I>
__global__ static void k_im2col_h(const uint16_t *x, int H, int W, int KH, int KW, int s, int p,
                                  int OH, int OW, size_t n, uint16_t *col) {
    FOR_EACH(i, n) {
        int ow = (int)(i % OW);
        I t = i / OW;
        int oh = (int)(t % OH);
        t /= OH;
        int kw = (int)(t % KW);
        t /= KW;
        int kh = (int)(t % KH);
        long long src = dt_im2col_src((size_t)(t / KH), kh, kw, oh, ow, H, W, s, p);
        col[i] = src < 0 ? (uint16_t)0 : x[src];
    }
}
extern "C" void dt_cu_im2col_h(cudaStream_t st, const uint16_t *x, int B, int C, int H, int W,
                               int KH, int KW, int stride, int pad, uint16_t *col) {
    int OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1;
    if (B <= 0 || C <= 0 || OH <= 0 || OW <= 0) return;
    size_t n = (size_t)B * C * KH * KW * OH * OW;
    LAUNCH(k_im2col_h, n, x, H, W, KH, KW, stride, pad, OH, OW, n, col);
}

// One thread per input cell gathers the fp32 col entries im2col read from it (kh, then kw
// ascending, as kernels_nn.cu's k_col2im), adds them to the widened cell (0 when set) in
// fp32 and rounds once.
template <typename I, typename T>
__global__ static void k_col2im_h(const float *col, int H, int W, int KH, int KW, int s, int p,
                                  int OH, int OW, size_t n, T *x, int set) {
    FOR_EACH(i, n) {
        int iw = (int)(i % W);
        I t = i / W;
        int ih = (int)(t % H);
        size_t pc = t / H;
        const float *cp = col + pc * KH * KW * (size_t)OH * OW;
        float acc = set ? 0.0f : ld(x, i);
        for (int kh = 0; kh < KH; kh++) {
            int hh = ih + p - kh;  // = oh*s
            if (hh < 0 || hh % s) continue;
            int oh = hh / s;
            if (oh >= OH) continue;
            for (int kw = 0; kw < KW; kw++) {
                int ww = iw + p - kw;
                if (ww < 0 || ww % s) continue;
                int ow = ww / s;
                if (ow >= OW) continue;
                acc += cp[((size_t)(kh * KW + kw) * OH + oh) * OW + ow];
            }
        }
        st(x, i, acc);
    }
}
template <typename T>
static void col2im_h(cudaStream_t st, const float *col, int B, int C, int H, int W, int KH,
                     int KW, int stride, int pad, void *x, int set) {
    int OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1;
    size_t n = (size_t)B * C * H * W;
    if (OH <= 0 || OW <= 0) {  // no window reads x: set writes zeros, else x stays
        if (set) cudaCheck(cudaMemsetAsync(x, 0, n * sizeof(T), st));
        return;
    }
    LAUNCH(k_col2im_h, n, col, H, W, KH, KW, stride, pad, OH, OW, n, (T *)x, set);
}
extern "C" void dt_cu_col2im_h(cudaStream_t st, int fmt, const float *col, int B, int C, int H,
                               int W, int KH, int KW, int stride, int pad, uint16_t *x,
                               int set) {
    if (B <= 0 || C <= 0 || H <= 0 || W <= 0) return;
    if (fmt != 1 && fmt != 2) {
        char msg[80];
        snprintf(msg, sizeof msg, "half format %d is not fp16 (1) or bf16 (2)", fmt);
        dt_cuda_fail("col2im_h", msg, __FILE__, __LINE__);
    }
    BY_FORMAT(fmt, col2im_h, st, col, B, C, H, W, KH, KW, stride, pad, x, set);
}

// C_i = beta*C_i over `batch` (M,N) blocks: what a gemm with K = 0 or alpha = 0 computes
template <typename I, typename T>
__global__ static void k_scale_blocks(T *C, int M, int N, int ldc, size_t sc, size_t n,
                                      float beta) {
    FOR_EACH(i, n) {
        int j = (int)(i % N);
        I t = i / N;
        int r = (int)(t % M);
        size_t at = (size_t)(t / M) * sc + (size_t)r * ldc + j;
        st(C, at, beta == 0.0f ? 0.0f : beta * ld(C, at));
    }
}
template <typename T>
static void scale_blocks(cudaStream_t st, void *C, int M, int N, int ldc, size_t sc, int batch,
                         float beta) {
    size_t n = (size_t)batch * M * N;
    LAUNCH(k_scale_blocks, n, (T *)C, M, N, ldc, sc, n, beta);
}
extern "C" void dt_cu_scale_blocks(cudaStream_t st, int fmt, void *C, int M, int N, int ldc,
                                   size_t stride_c, int batch, float beta) {
    if (beta == 1.0f || M <= 0 || N <= 0 || batch <= 0) return;
    BY_FORMAT(fmt, scale_blocks, st, C, M, N, ldc, stride_c, batch, beta);
}
