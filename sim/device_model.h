// device_model.h — the `model` device (docs/architecture.md): every primitive of struct
// dt_device touches no data and advances simulated time by a kernel-level roofline
// (docs/formulas.md, the GPU roofline of the model device)
//     t = max(flops / (peak(precision) × eff_gemm), bytes / (mem_bw × eff_mem)) + launch_s
// from a GPU profile (sim/gpu.h). Time accumulates in the device and is handed to the
// `advance` callback (dtsim's rank program: smpi_execute) when the host would wait for the
// GPU: at sync, and in every primitive that returns a value to the host. Natively (advance
// NULL) the device just counts, which is how the calibration test measures single-GPU
// throughput. Memory: alloc returns untouched address space from an arena (mmap
// MAP_NORESERVE, or under SMPI a folded SMPI_SHARED_MALLOC region given by the rank
// program), so ResNet-50 at batch 256 costs no RAM. Values returned to the host are fixed
// and finite (loss ln K, sumsq n: every element 1, nonfinite 0).
// Not here: links and MPI (SimGrid simulates those), the profiles (gpu_profiles.c).
#ifndef DT_SIM_DEVICE_MODEL_H
#define DT_SIM_DEVICE_MODEL_H

#include <stddef.h>

#include "device.h"
#include "dt.h"
#include "gpu.h"

typedef struct {
    const dt_gpu_profile *gpu;
    dt_precision precision;   // conv/gemm math; fp16 also halves activation bytes
    // optional: where time goes (the rank program passes smpi_execute); NULL = count only
    void (*advance)(void *ctx, double seconds);
    void *advance_ctx;
    // optional: the memory arena [base, base+bytes) every alloc is carved from (bump
    // pointer, never freed); NULL = the device reserves its own with mmap(MAP_NORESERVE)
    void *arena;
    size_t arena_bytes;
} dt_modeldev_config;

// The device; NULL with err set (DT_EXIT_USAGE) if the profile is NULL or the arena too small
// to start. Running out of arena later aborts with a message naming the size needed.
dt_device *dt_device_model_create(const dt_modeldev_config *cfg, dt_error *err);

// Simulated seconds spent so far (flushed and pending), the FLOPs and bytes charged, and the
// number of kernels. The rank program reads them for the report (compute time per iteration).
typedef struct {
    double seconds, flops, bytes;
    long kernels;
    size_t arena_used;  // bytes handed out by alloc
} dt_model_stats;
dt_model_stats dt_device_model_stats(const dt_device *d);
void dt_device_model_reset_stats(dt_device *d);

#endif
