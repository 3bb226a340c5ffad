// device_cuda.h — the cuda device (nn/device.h on an NVIDIA GPU): cuBLAS for the gemms, our
// own kernels for everything else, every per-element formula taken from nn/kernels.h so the
// cpu tests check the arithmetic the GPU runs. One device = one GPU and one stream (plus a
// copy stream for the allreduce's host staging). Built only where nvcc is found; without a
// GPU at run time dt_cuda_device_count() is 0 and create fails with a message.
// Not here: MPI (nn/coll stages device buffers through pinned host memory), NCCL
// (coll_nccl.h).
#ifndef DT_DEVICE_CUDA_H
#define DT_DEVICE_CUDA_H

#include "device.h"
#include "dt.h"

#ifdef __cplusplus
extern "C" {
#endif

// Bit-reproducible: plain fp32 cuBLAS math (no TF32) and only fixed-order reductions, so two
// runs with the same inputs give the same bits. Without it, cuBLAS may use TF32 tensor cores
// (Ampere and newer; 10 mantissa bits in the products, fp32 sums), as PyTorch does for convs.
#define DT_CUDA_DETERMINISTIC 1u

// Number of usable GPUs: 0 when there is no driver, no device, or the driver is older than
// the runtime (never fails, never exits).
int dt_cuda_device_count(void);

// The device on GPU `ordinal` (0-based). NULL with err set (DT_EXIT_USAGE) when there is no
// such GPU, with the CUDA error text.
dt_device *dt_device_cuda_create(int ordinal, unsigned flags, dt_error *err);

// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.1 GiB)" into buf; "" if none.
void dt_cuda_describe(int ordinal, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
