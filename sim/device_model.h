// device_model.h — the `model` device (docs/architecture.md): every primitive of struct
// dt_device touches no data and advances simulated time by a kernel-level roofline
// (docs/formulas.md, the GPU roofline of the model device)
//     t = max(flops / (peak(precision) × eff_gemm × w), bytes / (mem_bw × eff_mem)) × s
//         + launch_s
// from a GPU profile (sim/gpu.h); w is a gemm's wave quantization over the GPU's SMs, s the
// calibration's factor (time_scale), which leaves the host's launch alone. Time accumulates
// in the device and is handed to the `advance` callback (dtsim's rank program: a SimGrid
// sleep) when the host would wait for the GPU: at sync, and in every primitive that returns
// a value to the host. Natively (advance NULL) the device just counts, which is how the
// calibration test measures single-GPU throughput. Memory: alloc returns untouched address
// space from an arena (mmap MAP_NORESERVE, or under SMPI a folded SMPI_SHARED_MALLOC region
// given by the rank program), so ResNet-50 at batch 256 costs no RAM. Values returned to the
// host are fixed and finite (loss ln K, sumsq n: every element 1, nonfinite 0).
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
    // optional: where time goes (the rank program sleeps it); NULL = count only
    void (*advance)(void *ctx, double seconds);
    void *advance_ctx;
    // optional: the memory arena [base, base+bytes) every alloc is carved from (bump
    // pointer, never freed); NULL = the device reserves its own with mmap(MAP_NORESERVE)
    void *arena;
    size_t arena_bytes;
    // optional: when the arena is full, start again at its base (addresses alias: harmless,
    // the device never reads or writes them). The rank program's arena is then as large as
    // the largest buffer needs, not the sum of all (a model of 256 images/GPU on a laptop).
    int reuse_arena;
    // optional: every kernel's work × time_scale (0 = 1; launches and host transfers are the
    // host's and keep theirs): the calibration to a measured single-GPU throughput (dtsim
    // --gpu-img-s, docs/formulas.md)
    double time_scale;
    // optional: attention as a fused kernel (FlashAttention, Dao et al. 2022): the (B,H,T,T)
    // scores never reach memory, and backward recomputes them (sim/device_model_gpt.c)
    int flash;
} dt_modeldev_config;

// The device; NULL with err set (DT_EXIT_USAGE) if the profile is NULL, the arena too small
// to start or time_scale negative or not finite. Running out of arena later aborts with a
// message naming the size needed.
dt_device *dt_device_model_create(const dt_modeldev_config *cfg, dt_error *err);

// The kind of work the next kernels and transfers belong to, 0 .. DT_MODEL_MAX_KINDS-1 (0
// until told), and per-kind factors (n of them; NULL: none): with factors, a kernel takes
// its roofline time x factor[kind] (instead of x time_scale) and so does a host transfer,
// so that a measured profile of every kind, host work included, is reproduced.
void dt_device_model_set_kind(dt_device *d, int kind);
void dt_device_model_set_kind_scales(dt_device *d, const double *factor, int n);
// A straggler (sim/straggler.h): every kernel on d, through either handle, takes
// `factor` times as long from now on (1: as modelled).
void dt_device_model_set_slowdown(dt_device *d, double factor);
// Makes net tell d whose work follows (net->on_layer): each layer's kind (nn/net.h, 2 * type +
// phase) before its forward and backward, DT_KIND_REST outside them; the kind is REST now.
struct dt_net;
void dt_device_model_follow_layers(dt_device *d, struct dt_net *net);

// A second handle on d whose kernels and transfers are not scaled by time_scale: the
// communication library's (calibration models the framework, not NCCL). It shares d's
// pending time, memory and statistics; its destroy frees the handle only (before d's).
dt_device *dt_device_model_unscaled(dt_device *d);

// Simulated seconds spent so far (flushed and pending), the FLOPs and bytes charged, and the
// number of kernels. The rank program reads them for the report (compute time per iteration).
// Profiled kinds of work (dtsim --profile): the caller says which kind the next kernels are
// (dt_device_model_set_kind; nn's layer kinds, 2 * layer type + phase, and DT_KIND_REST),
// and may scale each kind's time by a measured factor.
#define DT_MODEL_MAX_KINDS 32

typedef struct {
    double seconds, flops, bytes;
    double host_s;  // of seconds, the host's: transfers and launches (time_scale leaves them)
    double kind_seconds[DT_MODEL_MAX_KINDS];  // of seconds, each kind's (not the unscaled
                                              // handle's: the allreduce's)
    long kernels;
    size_t arena_used;  // bytes handed out by alloc (the modelled GPU's memory in use)
    size_t max_alloc;   // the largest single allocation (bytes, rounded to 256)
} dt_model_stats;
dt_model_stats dt_device_model_stats(const dt_device *d);
void dt_device_model_reset_stats(dt_device *d);

#endif
