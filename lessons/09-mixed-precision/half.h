// half.h — lesson 09's contract: IEEE 754 binary16 ("fp16", "half") conversions, dynamic
// loss scaling, and fp16 gradients on the wire summed in fp32 (Micikevicius et al. 2018;
// Jia et al. 2018 §3). You write the bodies in half.c.
#ifndef LESSON09_HALF_H
#define LESSON09_HALF_H

#include <stddef.h>
#include <stdint.h>

// x rounded to the nearest half, ties to the one with an even last bit. Beyond the largest
// half (65504) rounding goes to ±Inf, below the smallest subnormal (2^-24) to ±0 (the sign
// kept); Inf stays Inf, and a NaN becomes a quiet NaN half (exponent 31, top mantissa bit
// set) with the same sign.
uint16_t to_half(float x);
// The half h as a float: exact (every half is a float); NaN for exponent 31 with a
// nonzero mantissa, ±Inf for exponent 31 and mantissa 0, subnormals m x 2^-24.
float from_half(uint16_t h);

// Dynamic loss scaling (the loss is multiplied by scale before backward, the gradients
// divided by it after): scaler_step decides, after backward, whether to apply the step.
typedef struct {
    float scale;   // the loss scale S (PyTorch's GradScaler starts at 65536)
    int interval;  // double S after this many clean steps in a row (2000)
    int good;      // clean steps since S last changed or overflowed
    long skipped;  // steps skipped so far
} scaler;
// overflow (some gradient is Inf or NaN): the step is skipped (return 0), S halves (but never
// below 1), good restarts at 0 and skipped counts it. Otherwise (return 1) good counts the
// clean step, and on reaching interval S doubles and good restarts at 0.
int scaler_step(scaler *s, int overflow);

// fp16 on the wire: a rank sends its n gradients rounded to half (to_half each) ...
void wire_pack(const float *g, uint16_t *wire, size_t n);
// ... and the receiver adds each received half to its fp32 sum: acc[i] += from_half(wire[i]).
void wire_accumulate(float *acc, const uint16_t *wire, size_t n);

#endif
