// gpu.h — GPU profiles for the modeled device (sim/device_model.c): the datasheet figures of
// docs/hardware.md plus the efficiencies that calibrate simulated single-GPU ResNet-50 training
// to the published throughput (NVIDIA DeepLearningExamples, batch 256: V100 fp32 367 img/s,
// AMP 1200; A100 tf32 938, AMP 2470). The calibration is written down in gpu_profiles.c.
// Not here: links between GPUs (sim/platform.h), the roofline itself (device_model.c).
#ifndef DT_SIM_GPU_H
#define DT_SIM_GPU_H

typedef enum { DT_PREC_FP32, DT_PREC_TF32, DT_PREC_FP16 } dt_precision;  // math of conv/gemm

typedef struct {
    char name[16];            // "v100"
    char full_name[48];       // "NVIDIA V100 SXM2 16GB"
    double peak_fp32;         // FLOP/s, CUDA cores
    double peak_tf32;         // FLOP/s with TF32 tensor cores (0: none -> fp32)
    double peak_fp16;         // FLOP/s fp16 math (tensor cores where present; P40: fp32 math
                              // on half storage, its native fp16 is 1/64 rate)
    double mem_bw;            // bytes/s, HBM/GDDR
    double launch_s;          // seconds per kernel launch (host overhead, not hidden)
    double eff_gemm;          // fraction of peak a large gemm/convolution reaches
    double eff_mem;           // fraction of mem_bw an elementwise/BN kernel reaches
    double mem_bytes;         // device memory capacity (bytes), for "does it fit" warnings
    // (added) tensor-core math reaches another fraction of its peak than CUDA-core fp32:
    double eff_gemm_tf32;     // fraction of peak_tf32 (unused where peak_tf32 is 0)
    double eff_gemm_fp16;     // fraction of peak_fp16
    double host_bw;           // bytes/s host <-> device (PCIe), to_host/from_host
    int bf16;                 // bf16 tensor-core math (A100 and later) at peak_fp16's rate
    int sms;                  // streaming multiprocessors: a gemm's tiles run in waves of sms
} dt_gpu_profile;

// Lookup by name (case-insensitive: p100, p40, v100, a100, a100-40, h100, h100-pcie, h200,
// and the aliases a100-80, h100-sxm); NULL if unknown. The profile's .name is canonical.
const dt_gpu_profile *dt_gpu_find(const char *name);
const char *dt_gpu_names(void);  // "p100, p40, v100, a100 (80GB; a100-80), ..."
// The precision a GPU is trained in by default: mixed precision where it has tensor cores
// (fp16 math; *bf16 = 1 where it has bf16, A100 and later), fp32 elsewhere (P100, P40).
dt_precision dt_gpu_default_precision(const dt_gpu_profile *g, int *bf16);

// Peak FLOP/s of conv/gemm math in precision p (falls back to fp32 where the GPU lacks it)
double dt_gpu_peak(const dt_gpu_profile *g, dt_precision p);
// (added) The fraction of dt_gpu_peak(g, p) a large gemm/convolution reaches: eff_gemm,
// eff_gemm_tf32 or eff_gemm_fp16, with the same fall-back as dt_gpu_peak
double dt_gpu_eff_gemm(const dt_gpu_profile *g, dt_precision p);
// (added) "fp32", "tf32", "fp16" ("?" for anything else)
const char *dt_precision_name(dt_precision p);

// The CIFAR ResNets (resnet8 .. resnet110, He et al. 2016 §4.2) take 32×32 images of 10
// classes; every other model ImageNet's 224×224 of 1000.
int dt_model_is_cifar(const char *model);
// The input side and classes dtsim models `model` on: `side` and `classes` where > 0 (a
// profile's measured shape, dtsim --profile), else the model's own (above).
void dt_model_shape(const char *model, int side, int classes, int *in_side, int *num_classes);

#endif
