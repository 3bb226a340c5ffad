// device_cpu_internal.h — private to the cpu device (nn/device_cpu*.c): the hook by which
// device_cpu_nn.c installs the network primitives, and a shared threshold. Not a public
// header: layers and tests use nn/device.h only.
#ifndef DT_DEVICE_CPU_INTERNAL_H
#define DT_DEVICE_CPU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"

// Below this many elements an elementwise loop runs on one thread: a parallel region costs
// a few microseconds, more than the loop.
#define DT_CPU_PAR_MIN 32768

// An elementwise loop `for i < n: body`, vectorised; on d->threads threads above
// DT_CPU_PAR_MIN elements, and below it (or with one thread) no OpenMP region at all:
// entering one costs ~0.7 µs even when it runs on one thread, which an allreduce of a few
// KB pays in every round (dtcoll-bench, bench/COLL-RESULTS.md). The device is `d`.
#define DT_CPU_FOR(n, body)                                                               \
    do {                                                                                  \
        if ((n) > DT_CPU_PAR_MIN && d->threads > 1) {                                     \
            _Pragma("omp parallel for simd num_threads(d->threads) schedule(static)")     \
            for (size_t i = 0; i < (n); i++) { body; }                                    \
        } else {                                                                          \
            _Pragma("omp simd")                                                           \
            for (size_t i = 0; i < (n); i++) { body; }                                    \
        }                                                                                 \
    } while (0)

// The cpu device's own state (d->ctx): scratch for packing narrow gemms side by side,
// grown on demand and kept, so a training step does not fault in fresh pages every call.
// The gemm backend (nn/device_cpu_gemm.c) and its bf16 state are kept here too.
enum { DT_CPU_GEMM_REFERENCE, DT_CPU_GEMM_ONEDNN };
typedef struct {
    float *scratch;
    size_t scratch_floats;
    int f16c;  // the CPU has F16C (x86 half <-> float conversion instructions)
    int gemm;       // DT_CPU_GEMM_*
    int bf16_gemm;  // bf16 layers multiply in bf16 (oneDNN, AVX512_BF16 or AMX)
    int bf16_said;  // the "no bf16 gemm" message was printed (once per device)
    const char *bf16_why;  // why not, when bf16_gemm is 0
    uint16_t *bf16;  // gemm operands rounded to bf16, grown on demand
    size_t bf16_n;
    // the network's fp32 views of bf16 tensors (nn/device.h half_view), read in place
    const float *view[3];
    const uint16_t *view_h[3];
    size_t view_n[3];
} dt_cpu_ctx;

// Exits 2 with a message where DT_CPU_GEMM names no backend of this build; then sets gemm,
// gemm_batched and gemm_batched_sum on the backend chosen for this CPU (device_cpu_gemm.c).
void dt_cpu_check_gemm_env(void);
void dt_cpu_install_gemm(dt_device *d);

// Sets im2col, col2im, bias, batchnorm, relu, pooling, dropout and loss (device_cpu_nn.c).
void dt_cpu_install_nn(dt_device *d);
// Sets the transformer primitives and the Adam-family updates (device_cpu_gpt.c).
void dt_cpu_install_gpt(dt_device *d);

#endif
