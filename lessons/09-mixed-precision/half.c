// half.c — lesson 09: write the bodies marked TODO(student) (contract: half.h, README.md).
// As handed out it builds, runs, and fails its grader cleanly.
#include <string.h>

#include "half.h"

uint16_t to_half(float x) {
    // TODO(student): the contract (half.h): the half nearest to x, ties to the even one,
    //   for every float: overflow to ±Inf, subnormal halves, signed zeros, Inf, NaN (quiet,
    //   sign kept). Integer operations on x's bits only (no _Float16, no library
    //   conversion: calls.txt). Stuck: HINTS.md.
    (void)x;
    return 0;
}

float from_half(uint16_t h) {
    // TODO(student): the contract: h's value as a float, exactly (every half is a float),
    //   subnormals, zeros, Inf and NaN included.
    (void)h;
    return 0.0f;
}

int scaler_step(scaler *s, int overflow) {
    // TODO(student): the contract (half.h): dynamic loss scaling's decision after a
    //   backward — skip and halve on overflow (never below 1), double after `interval`
    //   clean steps in a row.
    (void)s, (void)overflow;
    return 1;
}

void wire_pack(const float *g, uint16_t *wire, size_t n) {
    // TODO(student): the contract: wire[i] is g[i] rounded to half, for i < n.
    (void)g, (void)wire, (void)n;
}

void wire_accumulate(float *acc, const uint16_t *wire, size_t n) {
    // TODO(student): the contract: acc[i] += the value of wire[i], in fp32, for i < n.
    (void)acc, (void)wire, (void)n;
}
