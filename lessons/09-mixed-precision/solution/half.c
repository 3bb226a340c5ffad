// half.c — lesson 09's reference solution (contract: half.h).
#include <math.h>
#include <string.h>

#include "half.h"

uint16_t to_half(float x) {
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    uint32_t sign = (b >> 16) & 0x8000u, exp = (b >> 23) & 0xffu, man = b & 0x7fffffu;
    if (exp == 0xffu) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0u));
    int e = (int)exp - 127 + 15;  // the half's biased exponent
    if (e >= 31) return (uint16_t)(sign | 0x7c00u);  // past 65504 (and its rounding): Inf
    if (e <= 0) {  // a subnormal half, or zero
        if (e < -10) return (uint16_t)sign;  // below half of 2^-24: +-0
        man |= 0x800000u;  // the implicit leading 1
        int shift = 14 - e;  // the 24-bit significand down to the subnormal's 10 bits
        uint32_t h = man >> shift, rem = man & ((1u << shift) - 1u), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1u))) h++;  // may become the smallest normal
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;  // a carry may reach Inf: right
    return (uint16_t)(sign | h);
}

float from_half(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, b;
    if (e == 0) {  // zero or subnormal: m x 2^-24
        float v = ldexpf((float)m, -24);
        return sign ? -v : v;
    }
    if (e == 31) b = sign | 0x7f800000u | (m << 13);  // Inf, NaN
    else b = sign | ((e + 112u) << 23) | (m << 13);   // rebias 15 -> 127
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

int scaler_step(scaler *s, int overflow) {
    if (overflow) {
        s->scale *= 0.5f;
        if (s->scale < 1.0f) s->scale = 1.0f;
        s->good = 0;
        s->skipped++;
        return 0;
    }
    if (++s->good == s->interval) {
        s->scale *= 2.0f;
        s->good = 0;
    }
    return 1;
}

void wire_pack(const float *g, uint16_t *wire, size_t n) {
    for (size_t i = 0; i < n; i++) wire[i] = to_half(g[i]);
}

void wire_accumulate(float *acc, const uint16_t *wire, size_t n) {
    for (size_t i = 0; i < n; i++) acc[i] += from_half(wire[i]);
}
