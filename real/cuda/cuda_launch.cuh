// cuda_launch.cuh — private to the cuda device's kernels (kernels_*.cu): block size, grid
// size, the grid-stride loop and the launch macro. Index arithmetic (the divisions that find
// a cell's channel, row and column) runs in 32 bits whenever the tensor allows it: 64-bit
// division is several times slower on the GPU. Each kernel is a template on the index type
// I; LAUNCH picks unsigned below 2^31 elements, size_t above.
#ifndef DT_CUDA_LAUNCH_CUH
#define DT_CUDA_LAUNCH_CUH

#include "cuda_internal.h"

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

#endif
