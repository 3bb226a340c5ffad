// device_model_internal.h — private to the model device (sim/device_model.c: state, memory,
// the roofline charge, gemm; sim/device_model_nn.c: every other primitive's cost). Not a
// public header: programs use sim/device_model.h.
#ifndef DT_SIM_DEVICE_MODEL_INTERNAL_H
#define DT_SIM_DEVICE_MODEL_INTERNAL_H

#include "device_model.h"

typedef struct {
    dt_modeldev_config cfg;
    const dt_gpu_profile *gpu;
    double act_bytes;      // bytes per activation element: 2 under fp16, else 4
    double gemm_flops_s;   // peak(precision) * eff_gemm(precision): gemm-class kernels
    double cuda_flops_s;   // peak_fp32 * eff_gemm: every other kernel (CUDA cores, fp32 math)
    double mem_bytes_s;    // mem_bw * eff_mem
    double time_scale;     // cfg.time_scale, 1 when not given
    double slowdown;       // a straggler's factor this step (1: none): every kernel
    const dt_device *unscaled;  // dt_device_model_unscaled's handle: charged at scale 1
    int kind;              // dt_device_model_set_kind
    int has_kind_scale;
    double kind_scale[DT_MODEL_MAX_KINDS];
    double pending;        // seconds charged and not yet handed to cfg.advance
    dt_model_stats stats;  // since the last reset (arena_used, max_alloc: since creation)
    // the arena: [base, base + cap), a bump pointer at used
    char *base;
    size_t cap, used;
    size_t mapped_bytes;   // > 0 when the device mmap'ed the arena itself (munmap at destroy)
} dt_model_ctx;

// t = max(flops / gemm_flops_s, bytes / mem_bytes_s) + launch_s, added to pending and stats
void dt_model_charge_gemm(dt_device *d, double flops, double bytes);
// the same at the fraction of gemm_flops_s that `tiles` output tiles, each a k_total-long
// reduction, keep busy in waves over the GPU's SMs (tile and wave quantization)
void dt_model_charge_gemm_tiled(dt_device *d, double flops, double bytes, double tiles,
                                double k_total);
// the same with cuda_flops_s: elementwise, batchnorm, pooling, loss, optimizer, casts
void dt_model_charge(dt_device *d, double flops, double bytes);
// the host waits for the GPU: hand pending to cfg.advance (if set) and zero it
void dt_model_flush(dt_device *d);
// bytes per activation element of this device (2 or 4)
double dt_model_act_bytes(const dt_device *d);
// 1 when attention is modelled fused (dt_modeldev_config.flash)
int dt_model_flash(const dt_device *d);
// installs the non-gemm primitives (sim/device_model_nn.c)
void dt_model_install_nn(dt_device *d);
// installs the transformer primitives (sim/device_model_gpt.c)
void dt_model_install_gpt(dt_device *d);

#endif
