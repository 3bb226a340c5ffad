// gpu_profiles.c — the GPU profiles of the model device (sim/gpu.h): datasheet peaks and
// bandwidths from docs/hardware.md, assumed launch overheads, and efficiencies calibrated so that
// simulated single-GPU ResNet-50 training matches NVIDIA DeepLearningExamples' published
// throughput. Not here: the roofline that uses them (sim/device_model.c).
//
// Figures. Peaks and bandwidths: docs/hardware.md (datasheets); H100 TF32 495 TFLOP/s dense is
// the H100 SXM5 datasheet's 989 (with sparsity) halved, as its fp16 990 is the dense figure;
// P40 fp16 = its fp32 rate: GP102's native fp16 math runs at 1/64 rate (0.18 TFLOP/s), so
// frameworks keep fp16 as storage and compute in fp32 (cuDNN's pseudo-half configuration),
// which is how Jia et al. 2018 trained on P40s in mixed precision.
// Assumed, not from docs/hardware.md: kernel launch overhead 5 us (P100, P40, V100), 4 us
// (A100), 3 us (H100), the usual few microseconds of a CUDA launch that a framework cannot
// hide (the host's: a calibration's factor leaves it alone); host link 12 GB/s (PCIe 3.0
// x16, docs/hardware.md) for P100/P40/V100, 24 GB/s (PCIe 4.0) for A100, 48 GB/s (PCIe 5.0)
// for H100; memory capacity 16/24/16/80/80 GiB.
//
// CALIBRATION (docs/formulas.md, the roofline and its calibration). The model device
// (sim/device_model.c) charges every kernel k
//     t_k = max(F_k / (P(p) * e_g(p) * w_k), B_k / (W * e_m)) + L
// (F FLOPs, B bytes, P(p) peak of precision p, W memory bandwidth, L launch; w_k the share
// of the SMs a gemm's tiles keep busy, 1 for other kernels). One training step of ResNet-50
// at batch 256 (224x224, forward + backward + SGD step; the test
// tests/unit/test_sim_calibration.c runs it as nn/train.c does) is 890 kernels,
// F = 6.34e12 FLOP (24.8 GFLOP per image: 3 x the 8.2 GFLOP forward of docs/hardware.md) and
// B = 2.75e11 bytes in fp32/tf32, 1.43e11 under fp16 (1.07 / 0.56 GB per image), so
//     images/s = 256 / sum_k t_k,
// which must equal NVIDIA DeepLearningExamples' figure (docs/hardware.md). Four figures, but per
// GPU three unknowns (e_m and e_g of two precisions): e_m is assumed, 0.90 on V100 and
// A100 (HBM2/HBM2e streaming kernels reach about 90% of peak bandwidth in STREAM-type
// measurements), and each e_g is solved for (monotone in e_g). Fitted values, rounded to
// two digits, and the throughput they give (this file's profiles):
//     GPU   precision  e_m   e_g    simulated  published  error
//     V100  fp32       0.90  0.87   366.2      367        -0.2 %
//     V100  fp16       0.90  0.65   1198.3     1200       -0.1 %
//     A100  tf32       0.90  0.25   932.2      938        -0.6 %
//     A100  fp16       0.90  0.50   2467.8     2470       -0.1 %
// At e_m = 0.85 the fits are 0.90 / 0.78 / 0.26 / 0.56, at 0.95 0.85 / 0.58 / 0.25 / 0.46:
// the assumption moves e_g, not the match. The A100 TF32 figure is low next to AMP
// (2470/938 = 2.6, while peak and activation bytes both change by 2x), so TF32 tensor cores
// reach only 25% of 156 TFLOP/s here: e_g absorbs whatever the roofline leaves out.
// Convolutions are costed as implicit GEMM (cuDNN: the im2col columns never reach memory,
// device_model_nn.c); with explicit column traffic V100 fp16 would need e_g > 1.
// Derived, not calibrated (docs/hardware.md has no figure): P100 and P40 take V100's fp32
// values (e_g 0.87, e_m 0.90; their fp16 runs on CUDA cores, so the same e_g); H100 takes
// A100's (tf32 0.25, fp16 0.50, e_m 0.90); A100 and H100 fp32 (CUDA cores) take V100's
// 0.87. They give P100 fp32 253 img/s, P40 fp32 199, H100 tf32 2139, fp16 4774 (1.9x
// A100). Sanity checks only: TensorFlow's tf_cnn_benchmarks reported about 220 img/s for
// ResNet-50 on a P100 in fp32, and Goyal et al. (29 h for 90 epochs on 8 P100) imply 138
// img/s per GPU, communication included.
// SMs (w_k, sim/device_model.c): P100 56, P40 30, V100 80, A100 108, H100 SXM5 and H200 132,
// H100 PCIe 114 (the datasheets and NVIDIA's architecture whitepapers).
#include <string.h>
#include <stddef.h>
#include <strings.h>

#include "gpu.h"

#define T 1e12
#define G 1e9
#define GIB (1024.0 * 1024.0 * 1024.0)

static const dt_gpu_profile profiles[] = {
    {.name = "p100", .full_name = "NVIDIA Tesla P100 SXM2 16GB",
     .peak_fp32 = 10.6 * T, .peak_tf32 = 0, .peak_fp16 = 21.2 * T, .mem_bw = 720 * G,
     .launch_s = 5e-6, .eff_gemm = 0.87, .eff_gemm_tf32 = 0.87, .eff_gemm_fp16 = 0.87,
     .eff_mem = 0.90, .mem_bytes = 16 * GIB, .host_bw = 12 * G, .sms = 56},
    {.name = "p40", .full_name = "NVIDIA Tesla P40 24GB",
     .peak_fp32 = 11.76 * T, .peak_tf32 = 0, .peak_fp16 = 11.76 * T, .mem_bw = 346 * G,
     .launch_s = 5e-6, .eff_gemm = 0.87, .eff_gemm_tf32 = 0.87, .eff_gemm_fp16 = 0.87,
     .eff_mem = 0.90, .mem_bytes = 24 * GIB, .host_bw = 12 * G, .sms = 30},
    {.name = "v100", .full_name = "NVIDIA Tesla V100 SXM2 16GB",
     .peak_fp32 = 15.7 * T, .peak_tf32 = 0, .peak_fp16 = 125 * T, .mem_bw = 900 * G,
     .launch_s = 5e-6, .eff_gemm = 0.87, .eff_gemm_tf32 = 0.87, .eff_gemm_fp16 = 0.65,
     .eff_mem = 0.90, .mem_bytes = 16 * GIB, .host_bw = 12 * G, .sms = 80},
    {.name = "a100", .full_name = "NVIDIA A100 SXM4 80GB",
     .peak_fp32 = 19.5 * T, .peak_tf32 = 156 * T, .peak_fp16 = 312 * T, .mem_bw = 2000 * G,
     .launch_s = 4e-6, .eff_gemm = 0.87, .eff_gemm_tf32 = 0.25, .eff_gemm_fp16 = 0.50,
     .eff_mem = 0.90, .mem_bytes = 80 * GIB, .host_bw = 24 * G, .bf16 = 1, .sms = 108},
    {.name = "h100", .full_name = "NVIDIA H100 SXM5 80GB",
     .peak_fp32 = 67 * T, .peak_tf32 = 495 * T, .peak_fp16 = 990 * T, .mem_bw = 3350 * G,
     .launch_s = 3e-6, .eff_gemm = 0.87, .eff_gemm_tf32 = 0.25, .eff_gemm_fp16 = 0.50,
     .eff_mem = 0.90, .mem_bytes = 80 * GIB, .host_bw = 48 * G, .bf16 = 1, .sms = 132},
    // The variants (docs/hardware.md, "GPU variants"): the same chip with other memory or
    // another board. A100 SXM4 40GB: HBM2 1555 GB/s; H100 PCIe 80GB: 114 SMs at a lower
    // clock, 51 / 378 / 756 TFLOP/s dense, HBM2e 2.0 TB/s; H200 SXM 141GB: H100 SXM5's chip
    // with HBM3e at 4.8 TB/s. Efficiencies as their chip's (A100's, H100's).
    {.name = "a100-40", .full_name = "NVIDIA A100 SXM4 40GB",
     .peak_fp32 = 19.5 * T, .peak_tf32 = 156 * T, .peak_fp16 = 312 * T, .mem_bw = 1555 * G,
     .launch_s = 4e-6, .eff_gemm = 0.87, .eff_gemm_tf32 = 0.25, .eff_gemm_fp16 = 0.50,
     .eff_mem = 0.90, .mem_bytes = 40 * GIB, .host_bw = 24 * G, .bf16 = 1, .sms = 108},
    {.name = "h100-pcie", .full_name = "NVIDIA H100 PCIe 80GB",
     .peak_fp32 = 51 * T, .peak_tf32 = 378 * T, .peak_fp16 = 756 * T, .mem_bw = 2000 * G,
     .launch_s = 3e-6, .eff_gemm = 0.87, .eff_gemm_tf32 = 0.25, .eff_gemm_fp16 = 0.50,
     .eff_mem = 0.90, .mem_bytes = 80 * GIB, .host_bw = 48 * G, .bf16 = 1, .sms = 114},
    {.name = "h200", .full_name = "NVIDIA H200 SXM 141GB",
     .peak_fp32 = 67 * T, .peak_tf32 = 495 * T, .peak_fp16 = 990 * T, .mem_bw = 4800 * G,
     .launch_s = 3e-6, .eff_gemm = 0.87, .eff_gemm_tf32 = 0.25, .eff_gemm_fp16 = 0.50,
     .eff_mem = 0.90, .mem_bytes = 141 * GIB, .host_bw = 48 * G, .bf16 = 1, .sms = 132},
};

// Other names a buyer types for the same profile
static const struct { const char *alias, *name; } aliases[] = {
    {"a100-80", "a100"}, {"a100-80gb", "a100"}, {"a100-40gb", "a100-40"},
    {"h100-sxm", "h100"}, {"h100-sxm5", "h100"}, {"h200-sxm", "h200"},
};

const dt_gpu_profile *dt_gpu_find(const char *name) {
    if (!name) return NULL;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcasecmp(name, aliases[i].alias) == 0) name = aliases[i].name;
    for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++)
        if (strcasecmp(name, profiles[i].name) == 0) return &profiles[i];
    return NULL;
}

const char *dt_gpu_names(void) {
    return "p100, p40, v100, a100 (80GB; a100-80), a100-40, h100 (SXM; h100-sxm), h100-pcie, "
           "h200";
}

dt_precision dt_gpu_default_precision(const dt_gpu_profile *g, int *bf16) {
    *bf16 = 0;
    if (!g || !(g->peak_fp16 >= 4 * g->peak_fp32)) return DT_PREC_FP32;  // no tensor cores
    *bf16 = g->bf16;
    return DT_PREC_FP16;
}

// Tensor-core TF32 where the GPU has it, else CUDA-core fp32; fp16 as the datasheet gives it
// (tensor cores on V100/A100/H100, 2x fp32 on P100, 1/64 rate on P40).
double dt_gpu_peak(const dt_gpu_profile *g, dt_precision p) {
    if (!g) return 0.0;
    if (p == DT_PREC_TF32 && g->peak_tf32 > 0) return g->peak_tf32;
    if (p == DT_PREC_FP16 && g->peak_fp16 > 0) return g->peak_fp16;
    return g->peak_fp32;
}

double dt_gpu_eff_gemm(const dt_gpu_profile *g, dt_precision p) {
    if (!g) return 0.0;
    if (p == DT_PREC_TF32 && g->peak_tf32 > 0) return g->eff_gemm_tf32;
    if (p == DT_PREC_FP16 && g->peak_fp16 > 0) return g->eff_gemm_fp16;
    return g->eff_gemm;
}

const char *dt_precision_name(dt_precision p) {
    switch (p) {
    case DT_PREC_FP32: return "fp32";
    case DT_PREC_TF32: return "tf32";
    case DT_PREC_FP16: return "fp16";
    }
    return "?";
}

int dt_model_is_cifar(const char *model) {
    static const char names[][10] = {"resnet8", "resnet14", "resnet20", "resnet32",
                                     "resnet44", "resnet56", "resnet110"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(model, names[i])) return 1;
    return 0;
}

void dt_model_shape(const char *model, int side, int classes, int *in_side, int *num_classes) {
    int cifar = dt_model_is_cifar(model);
    *in_side = side > 0 ? side : cifar ? 32 : 224;
    *num_classes = classes > 0 ? classes : cifar ? 10 : 1000;
}
