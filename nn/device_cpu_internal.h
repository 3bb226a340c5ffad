// device_cpu_internal.h — private to the cpu device (nn/device_cpu*.c): the hook by which
// device_cpu_nn.c installs the network primitives, and a shared threshold. Not a public
// header: layers and tests use nn/device.h only.
#ifndef DT_DEVICE_CPU_INTERNAL_H
#define DT_DEVICE_CPU_INTERNAL_H

#include <stddef.h>

#include "device.h"

// Below this many elements an elementwise loop runs on one thread: a parallel region costs
// a few microseconds, more than the loop.
#define DT_CPU_PAR_MIN 32768

// The cpu device's own state (d->ctx): scratch for packing narrow gemms side by side,
// grown on demand and kept, so a training step does not fault in fresh pages every call.
typedef struct {
    float *scratch;
    size_t scratch_floats;
} dt_cpu_ctx;

// Sets im2col, col2im, bias, batchnorm, relu, pooling, dropout and loss (device_cpu_nn.c).
void dt_cpu_install_nn(dt_device *d);

#endif
