// half.c — lesson 09: write the bodies marked TODO(student) (contract: half.h, README.md).
// As handed out it builds, runs, and fails its grader cleanly.
#include <string.h>

#include "half.h"

uint16_t to_half(float x) {
    // TODO(student): take x's bits (memcpy into a uint32_t), split sign, exponent and
    // mantissa, rebias the exponent (127 -> 15), and round the 23-bit mantissa to 10 bits,
    // ties to even; handle overflow, subnormal halves, zero, Inf and NaN.
    (void)x;
    return 0;
}

float from_half(uint16_t h) {
    // TODO(student): the inverse, exactly.
    (void)h;
    return 0.0f;
}

int scaler_step(scaler *s, int overflow) {
    // TODO(student): skip-and-halve on overflow, count clean steps and double after interval.
    (void)s, (void)overflow;
    return 1;
}

void wire_pack(const float *g, uint16_t *wire, size_t n) {
    // TODO(student)
    (void)g, (void)wire, (void)n;
}

void wire_accumulate(float *acc, const uint16_t *wire, size_t n) {
    // TODO(student)
    (void)acc, (void)wire, (void)n;
}
