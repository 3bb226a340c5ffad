// cuda_launch.cuh — private to the cuda device's kernels (kernels_*.cu): block size, grid
// size, the grid-stride loop and the launch macro. Index arithmetic (the divisions that find
// a cell's channel, row and column) runs in 32 bits whenever the tensor allows it: 64-bit
// division is several times slower on the GPU. Each kernel is a template on the index type
// I; LAUNCH picks unsigned below 2^31 elements, size_t above.
#ifndef DT_CUDA_LAUNCH_CUH
#define DT_CUDA_LAUNCH_CUH

#include "cuda_internal.h"
extern "C" {
#include "kernels.h"
}

#define THREADS 256

static unsigned grid_for(size_t n) {
    size_t b = (n + THREADS - 1) / THREADS;
    return (unsigned)(b < 16384 ? (b > 0 ? b : 1) : 16384);
}
#define FOR_EACH(i, n) \
    for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < (I)(n); i += (I)gridDim.x * blockDim.x)
#define LAUNCH(kernel, n, ...)                                                   \
    do {                                                                          \
        if ((n) == 0) break;                                                      \
        if ((size_t)(n) < ((size_t)1 << 31))                                      \
            kernel<unsigned><<<grid_for(n), THREADS, 0, st>>>(__VA_ARGS__);       \
        else                                                                      \
            kernel<size_t><<<grid_for(n), THREADS, 0, st>>>(__VA_ARGS__);         \
        DT_LAUNCH_CHECK();                                                        \
    } while (0)

// Tensors in fp32, or in half storage under --precision fp16|bf16 (nn/net_half.c): kernels
// on either are templates on the element type T, and ld/st widen and round with the
// software casts of nn/kernels.h, so a half tensor gives the bits of the fp32 kernel on the
// widened values, rounded once (the sums run in the same order on the same floats).
struct st_f16 { uint16_t b; };
struct st_bf16 { uint16_t b; };
__device__ static inline float ld(const float *p, size_t i) { return p[i]; }
__device__ static inline float ld(const st_f16 *p, size_t i) { return dt_f16_to_f32(p[i].b); }
__device__ static inline float ld(const st_bf16 *p, size_t i) { return dt_bf16_to_f32(p[i].b); }
__device__ static inline void st(float *p, size_t i, float v) { p[i] = v; }
__device__ static inline void st(st_f16 *p, size_t i, float v) { p[i].b = dt_f32_to_f16(v); }
__device__ static inline void st(st_bf16 *p, size_t i, float v) { p[i].b = dt_f32_to_bf16(v); }
// call F<T>(args) with the tensors cast to fmt's element type (0 fp32, 1 fp16, 2 bf16)
#define BY_FORMAT(fmt, F, ...)                                          \
    do {                                                                \
        if ((fmt) == 1) F<st_f16>(__VA_ARGS__);                         \
        else if ((fmt) == 2) F<st_bf16>(__VA_ARGS__);                   \
        else F<float>(__VA_ARGS__);                                     \
    } while (0)

#endif
