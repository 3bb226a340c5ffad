// kernels_elem.cu — the cuda device's elementwise kernels and flat reductions: fill, scale,
// axpy, add, relu, dropout, SGD and LARS updates, fp16 casts, sum of squares and the
// nonfinite count. Indexing and launch only: each element's arithmetic is the function of
// nn/kernels.h that the cpu device calls too; loops and launches from cuda_launch.cuh.
// Not here: the network primitives (kernels_nn.cu), memory and cuBLAS (device_cuda.c).
extern "C" {
#include "kernels.h"
}
#include "cuda_launch.cuh"

template <typename I>
__global__ static void k_fill(float *x, float v, size_t n) { FOR_EACH(i, n) x[i] = v; }
template <typename I>
__global__ static void k_scale(float *x, float a, size_t n) { FOR_EACH(i, n) x[i] *= a; }
template <typename I>
__global__ static void k_axpy(float a, const float *x, float *y, size_t n) {
    FOR_EACH(i, n) y[i] += a * x[i];
}
template <typename I>
__global__ static void k_add(float *y, const float *x, size_t n) { FOR_EACH(i, n) y[i] += x[i]; }

extern "C" void dt_cu_fill(cudaStream_t st, float *x, float v, size_t n) { LAUNCH(k_fill, n, x, v, n); }
extern "C" void dt_cu_scale(cudaStream_t st, float *x, float a, size_t n) { LAUNCH(k_scale, n, x, a, n); }
extern "C" void dt_cu_axpy(cudaStream_t st, float a, const float *x, float *y, size_t n) {
    LAUNCH(k_axpy, n, a, x, y, n);
}
extern "C" void dt_cu_add(cudaStream_t st, float *y, const float *x, size_t n) {
    LAUNCH(k_add, n, y, x, n);
}

// y[j] (= beta*y[j] when first) + sum_{i<k} w[i*n + j], summed in order of i: the batch
// items of gemm_batched_sum, added in the order the cpu device adds them
template <typename I>
__global__ static void k_sum_rows(const float *w, int k, size_t n, float beta, int first,
                                  float *y) {
    FOR_EACH(j, n) {
        float s = first ? (beta == 0.0f ? 0.0f : beta * y[j]) : y[j];
        for (int i = 0; i < k; i++) s += w[(size_t)i * n + j];
        y[j] = s;
    }
}
extern "C" void dt_cu_sum_rows(cudaStream_t st, const float *w, int k, size_t n, float beta,
                               int first, float *y) {
    LAUNCH(k_sum_rows, n, w, k, n, beta, first, y);
}

// ---- flat reductions: a fixed number of blocks that depends on n only, each summing a
// strided share in a fixed order and a fixed tree; the host adds the block sums in order,
// so every run (and every rank: LARS norms must agree) gets the same bits ----
extern "C" int dt_cu_reduce_blocks(size_t n) {
    size_t b = (n + 4095) / 4096;
    return (int)(b < 1 ? 1 : (b > 512 ? 512 : b));
}

template <typename T>
__device__ static T block_sum(T v) {
    __shared__ T buf[THREADS];
    buf[threadIdx.x] = v;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    return buf[0];
}

template <typename I>
__global__ static void k_sumsq_part(const float *x, size_t n, double *part) {
    double s = 0.0;
    FOR_EACH(i, n) s += (double)x[i] * (double)x[i];
    s = block_sum(s);
    if (threadIdx.x == 0) part[blockIdx.x] = s;
}
template <typename I>
__global__ static void k_nonfinite_part(const float *x, size_t n, unsigned long long *part) {
    unsigned long long c = 0;
    FOR_EACH(i, n) c += !isfinite(x[i]);
    c = block_sum(c);
    if (threadIdx.x == 0) part[blockIdx.x] = c;
}
extern "C" void dt_cu_sumsq_part(cudaStream_t st, const float *x, size_t n, double *part) {
    k_sumsq_part<size_t><<<dt_cu_reduce_blocks(n), THREADS, 0, st>>>(x, n, part);
    DT_LAUNCH_CHECK();
}
extern "C" void dt_cu_nonfinite_part(cudaStream_t st, const float *x, size_t n,
                                     unsigned long long *part) {
    k_nonfinite_part<size_t><<<dt_cu_reduce_blocks(n), THREADS, 0, st>>>(x, n, part);
    DT_LAUNCH_CHECK();
}

// ---- activations, dropout (Srivastava et al. 2014), optimizers, casts ----
template <typename I>
__global__ static void k_relu(const float *x, float *y, size_t n) {
    FOR_EACH(i, n) y[i] = dt_relu(x[i]);  // NaN stays NaN, as on the cpu
}
template <typename I>
__global__ static void k_relu_bw(const float *y, const float *dy, float *dx, size_t n) {
    FOR_EACH(i, n) dx[i] += dt_relu_grad(y[i], dy[i]);
}
template <typename I>
__global__ static void k_relu_bw_inplace(const float *y, float *dxy, size_t n) {
    FOR_EACH(i, n) dxy[i] = dt_relu_grad(y[i], dxy[i]);
}
extern "C" void dt_cu_relu_forward(cudaStream_t st, const float *x, float *y, size_t n) {
    LAUNCH(k_relu, n, x, y, n);
}
extern "C" void dt_cu_relu_backward(cudaStream_t st, const float *y, const float *dy, float *dx,
                                    size_t n, int inplace) {
    if (inplace) LAUNCH(k_relu_bw_inplace, n, y, dx, n);
    else LAUNCH(k_relu_bw, n, y, dy, dx, n);
}

// relu and the residual add on half storage (nn/device.h): 2 bytes an element each way,
// the per-element formulas of nn/kernels.h, as the cpu device
template <typename I>
__global__ static void k_relu_h(int fmt, const uint16_t *x, uint16_t *y, size_t n) {
    FOR_EACH(i, n) y[i] = dt_half_store(fmt, dt_relu(dt_half_load(fmt, x[i])));
}
template <typename I>
__global__ static void k_relu_bw_h(int fmt, const uint16_t *y, const uint16_t *dy, uint16_t *dx,
                                   size_t n, int set) {
    FOR_EACH(i, n) dx[i] = dt_relu_grad_h(fmt, y[i], dy[i], dx[i], set);
}
template <typename I>
__global__ static void k_add_h(int fmt, const uint16_t *a, const uint16_t *b, uint16_t *y,
                               size_t n) {
    FOR_EACH(i, n) y[i] = dt_half_store(fmt, dt_half_load(fmt, a[i]) + dt_half_load(fmt, b[i]));
}
extern "C" void dt_cu_relu_forward_h(cudaStream_t st, int fmt, const uint16_t *x, uint16_t *y,
                                     size_t n) {
    LAUNCH(k_relu_h, n, fmt, x, y, n);
}
extern "C" void dt_cu_relu_backward_h(cudaStream_t st, int fmt, const uint16_t *y,
                                      const uint16_t *dy, uint16_t *dx, size_t n, int set) {
    LAUNCH(k_relu_bw_h, n, fmt, y, dy, dx, n, set);
}
extern "C" void dt_cu_add_h(cudaStream_t st, int fmt, const uint16_t *a, const uint16_t *b,
                            uint16_t *y, size_t n) {
    LAUNCH(k_add_h, n, fmt, a, b, y, n);
}

template <typename I>
__global__ static void k_dropout(const float *x, float *y, float *mask, size_t n, float p,
                                 uint64_t seed) {
    FOR_EACH(i, n) {
        float m = dt_dropout_mask(seed, i, p);
        mask[i] = m;
        y[i] = x[i] * m;
    }
}
template <typename I>
__global__ static void k_dropout_bw(const float *dy, const float *mask, float *dx, size_t n) {
    FOR_EACH(i, n) dx[i] += dy[i] * mask[i];
}
extern "C" void dt_cu_dropout_forward(cudaStream_t st, const float *x, float *y, float *mask,
                                      size_t n, float p, uint64_t seed) {
    LAUNCH(k_dropout, n, x, y, mask, n, p, seed);
}
extern "C" void dt_cu_dropout_backward(cudaStream_t st, const float *dy, const float *mask,
                                       float *dx, size_t n) {
    LAUNCH(k_dropout_bw, n, dy, mask, dx, n);
}

template <typename I>
__global__ static void k_sgd(float *w, const float *g, float *v, size_t n, float lr, float m,
                             float wd, int nesterov) {
    FOR_EACH(i, n) dt_sgd_elem(&w[i], g[i], &v[i], lr, m, wd, nesterov);
}
template <typename I>
__global__ static void k_lars(float *w, const float *g, float *v, size_t n, float slr, float m,
                              float wd) {
    FOR_EACH(i, n) dt_lars_elem(&w[i], g[i], &v[i], slr, m, wd);
}
extern "C" void dt_cu_sgd(cudaStream_t st, float *w, const float *g, float *v, size_t n,
                          float lr, float m, float wd, int nesterov) {
    LAUNCH(k_sgd, n, w, g, v, n, lr, m, wd, nesterov);
}
extern "C" void dt_cu_lars(cudaStream_t st, float *w, const float *g, float *v, size_t n,
                           float slr, float m, float wd) {
    LAUNCH(k_lars, n, w, g, v, n, slr, m, wd);
}

template <typename I>
__global__ static void k_to_f16(const float *x, uint16_t *y, size_t n) {
    FOR_EACH(i, n) y[i] = dt_f32_to_f16(x[i]);
}
template <typename I>
__global__ static void k_from_f16(const uint16_t *x, float *y, size_t n) {
    FOR_EACH(i, n) y[i] = dt_f16_to_f32(x[i]);
}
template <typename I>
__global__ static void k_add_f16(float *y, const uint16_t *x, size_t n) {
    FOR_EACH(i, n) y[i] += dt_f16_to_f32(x[i]);
}
extern "C" void dt_cu_f32_to_f16(cudaStream_t st, const float *x, uint16_t *y, size_t n) {
    LAUNCH(k_to_f16, n, x, y, n);
}
extern "C" void dt_cu_f16_to_f32(cudaStream_t st, const uint16_t *x, float *y, size_t n) {
    LAUNCH(k_from_f16, n, x, y, n);
}
extern "C" void dt_cu_add_f16(cudaStream_t st, float *y, const uint16_t *x, size_t n) {
    LAUNCH(k_add_f16, n, y, x, n);
}
template <typename I>
__global__ static void k_to_bf16(const float *x, uint16_t *y, size_t n) {
    FOR_EACH(i, n) y[i] = dt_f32_to_bf16(x[i]);
}
template <typename I>
__global__ static void k_from_bf16(const uint16_t *x, float *y, size_t n) {
    FOR_EACH(i, n) y[i] = dt_bf16_to_f32(x[i]);
}
extern "C" void dt_cu_f32_to_bf16(cudaStream_t st, const float *x, uint16_t *y, size_t n) {
    LAUNCH(k_to_bf16, n, x, y, n);
}
extern "C" void dt_cu_bf16_to_f32(cudaStream_t st, const uint16_t *x, float *y, size_t n) {
    LAUNCH(k_from_bf16, n, x, y, n);
}
