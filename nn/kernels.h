// kernels.h — the per-element arithmetic shared by the cpu device (nn/device_cpu.c) and the
// cuda device (real/cuda): each function here is compiled by gcc for the CPU and by nvcc as
// __host__ __device__, so the CPU unit tests check the very formulas the GPU runs. Only
// pure functions of their arguments: no memory layout, no loops over tensors, no state.
#ifndef DT_KERNELS_H
#define DT_KERNELS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

// (A student handout defines DT_HD empty once, to compile these with external linkage into
// its reference object, and declares the lessons' ones only: cmake/dtlab_reference.cmake.)
#ifndef DT_HD
#ifdef __CUDACC__
#define DT_HD __host__ __device__ static inline
#else
#define DT_HD static inline
#endif
#endif

// ---- counter-based random numbers (no state: every device draws the same stream) ----
// splitmix64 finaliser (Steele, Lea, Flood 2014), a bijective 64-bit mixer.
DT_HD uint64_t dt_mix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
// uniform in [0,1) with 24 random bits, for element i of the stream `seed`
DT_HD float dt_uniform(uint64_t seed, uint64_t i) {
    return (float)(dt_mix64(seed ^ dt_mix64(i)) >> 40) * (1.0f / 16777216.0f);
}
// inverted dropout (Srivastava et al. 2014): keep with probability 1-p, scale by 1/(1-p)
DT_HD float dt_dropout_mask(uint64_t seed, uint64_t i, float p) {
    return dt_uniform(seed, i) >= p ? 1.0f / (1.0f - p) : 0.0f;
}

// ---- optimizer updates, one element ----
// PyTorch torch.optim.SGD: g' = g + wd*w; v = m*v + g'; w -= lr*(nesterov ? g' + m*v : v)
DT_HD void dt_sgd_elem(float *w, float g, float *v, float lr, float m, float wd, int nesterov) {
    float gp = g + wd * *w;
    float vn = m * *v + gp;
    *v = vn;
    *w -= lr * (nesterov ? gp + m * vn : vn);
}
// LARS, You, Gitman, Ginsburg 2017, Alg. 1 in the MLPerf form (docs/formulas.md, "LARS"):
// v = m*v + scaled_lr*(g + wd*w); w -= v
DT_HD void dt_lars_elem(float *w, float g, float *v, float scaled_lr, float m, float wd) {
    float vn = m * *v + scaled_lr * (g + wd * *w);
    *v = vn;
    *w -= vn;
}
// LARS local learning rate (trust ratio): eta*|w| / (|g| + wd*|w| + eps); 1 when either norm
// is zero (a fresh zero tensor, or a zero gradient), as in the MLPerf reference.
DT_HD double dt_lars_local_lr(double wnorm, double gnorm, double eta, double wd, double eps) {
    if (wnorm <= 0.0 || gnorm <= 0.0) return 1.0;
    return eta * wnorm / (gnorm + wd * wnorm + eps);
}

// ---- batch normalisation, one element ----
DT_HD float dt_bn_normalize(float x, float mean, float invstd, float gamma, float beta) {
    return gamma * (x - mean) * invstd + beta;
}
// dx for one element, given the channel sums sum_dy and sum_dy_xhat over n = B*HW elements
DT_HD float dt_bn_dx(float dy, float xhat, float gamma, float invstd, float sum_dy,
                     float sum_dy_xhat, float n) {
    return gamma * invstd * (dy - sum_dy / n - xhat * sum_dy_xhat / n);
}

// ---- per-channel statistics: partial (count, mean, M2 = sum (x - mean)^2) triples combined
// in float64 by Chan, Golub & LeVeque 1979 (eq. 2.1b), order-independent up to rounding and
// free of the cancellation of sum x^2 - n mean^2. The cuda device's batch-norm statistics
// form one triple per slice of a channel, then combine the slices in order. ----
typedef struct { double n, mean, m2; } dt_moments;
DT_HD dt_moments dt_moments_combine(dt_moments a, dt_moments b) {
    if (a.n <= 0.0) return b;
    if (b.n <= 0.0) return a;
    double n = a.n + b.n, delta = b.mean - a.mean;
    dt_moments r;
    r.n = n;
    r.mean = a.mean + delta * (b.n / n);
    r.m2 = a.m2 + b.m2 + delta * delta * (a.n * b.n / n);
    return r;
}
// the triple of cnt values from their sums shifted by k: s = sum (x-k), ss = sum (x-k)^2
DT_HD dt_moments dt_moments_from_shifted(double cnt, double k, double s, double ss) {
    dt_moments r;
    r.n = cnt;
    r.mean = cnt > 0.0 ? k + s / cnt : 0.0;
    r.m2 = cnt > 0.0 ? ss - s * (s / cnt) : 0.0;
    if (r.m2 < 0.0) r.m2 = 0.0;
    return r;
}

// ---- im2col's index arithmetic (the cuda device's half im2col, kernels_half.cu) ----
// Caffe's im2col: the entry of col (B, C*KH*KW, OH*OW) at row (pc*KH + kh)*KW + kw, column
// oh*OW + ow (pc = b*C + c) reads x[result] of x (B,C,H,W), or padding (-1)
DT_HD long long dt_im2col_src(size_t pc, int kh, int kw, int oh, int ow, int H, int W,
                              int stride, int pad) {
    int ih = oh * stride - pad + kh, iw = ow * stride - pad + kw;
    if (ih < 0 || ih >= H || iw < 0 || iw >= W) return -1;
    return (long long)((pc * (size_t)H + (size_t)ih) * (size_t)W + (size_t)iw);
}

// PyTorch's running statistics: r = (1-momentum)*r + momentum*stat; the variance enters
// unbiased, var*n/(n-1) (n = 1: var itself)
DT_HD float dt_bn_running(float r, float stat, float momentum) {
    return (1.0f - momentum) * r + momentum * stat;
}
// 1/sqrt(var + eps), computed in double and rounded once
DT_HD float dt_bn_invstd(double var, float eps) { return (float)(1.0 / sqrt(var + (double)eps)); }
DT_HD double dt_bn_unbiased(double var, double n) { return n > 1.0 ? var * n / (n - 1.0) : var; }

// ---- pooling windows ----
// The max pooling order: v beats the current best if it is larger, or a NaN over a number
// (a NaN wins, as in PyTorch); ties keep the earlier cell (the scan is row-major).
DT_HD int dt_pool_beats(float v, float best) { return v > best || (v != v && best == best); }
// PyTorch AdaptiveAvgPool2d windows: output cell i of `out` covers input cells
// [floor(i*in/out), ceil((i+1)*in/out)).
DT_HD int dt_ada_start(int i, int in, int out) { return (int)((long long)i * in / out); }
DT_HD int dt_ada_end(int i, int in, int out) {
    return (int)(((long long)(i + 1) * in + out - 1) / out);
}

// One max-pooling window [h0,h1) x [w0,w1) of a plane xp (width W), scanned row-major with
// dt_pool_beats: *y the winner, *a its index h*W + w (-inf and -1 for an empty window).
DT_HD void dt_maxpool_window(const float *xp, int W, int h0, int h1, int w0, int w1, float *y,
                             int32_t *a) {
    float best = -INFINITY;
    int32_t idx = -1;
    for (int ih = h0; ih < h1; ih++)
        for (int iw = w0; iw < w1; iw++) {
            float v = xp[ih * W + iw];
            if (idx < 0 || dt_pool_beats(v, best)) best = v, idx = ih * W + iw;
        }
    *y = best;
    *a = idx;
}
// The mean of adaptive-pooling output cell (r, j) of a plane xp (H, W) -> (OH, OW), summed
// row-major in fp32.
DT_HD float dt_avgpool_cell(const float *xp, int H, int W, int OH, int OW, int r, int j) {
    int h0 = dt_ada_start(r, H, OH), h1 = dt_ada_end(r, H, OH);
    int w0 = dt_ada_start(j, W, OW), w1 = dt_ada_end(j, W, OW);
    float s = 0.0f;
    for (int ih = h0; ih < h1; ih++)
        for (int iw = w0; iw < w1; iw++) s += xp[ih * W + iw];
    return s / (float)((h1 - h0) * (w1 - w0));
}

// ---- softmax cross-entropy, one row of K logits z: probabilities into p, and the row's loss
// logsumexp(z) - z[label] (the maximum subtracted before exp; the sum in double), or NaN for
// a label outside [0, K) ----
DT_HD double dt_softmax_xent_row(const float *z, float *p, int K, int32_t label) {
    float m = z[0];
    for (int k = 1; k < K; k++) m = z[k] > m ? z[k] : m;
    double s = 0.0;
    for (int k = 0; k < K; k++) {
        float e = expf(z[k] - m);
        p[k] = e;
        s += e;
    }
    float inv = (float)(1.0 / s);
    for (int k = 0; k < K; k++) p[k] *= inv;
    return (label >= 0 && label < K) ? log(s) + (double)m - (double)z[label] : (double)NAN;
}

// ---- relu, one element: y = max(x, 0) (a NaN stays NaN, as PyTorch), and the gradient
// w.r.t. x given y and dy ----
DT_HD float dt_relu(float x) { return x < 0.0f ? 0.0f : x; }
DT_HD float dt_relu_grad(float y, float dy) { return y > 0.0f ? dy : 0.0f; }

// ---- fused batch norm + residual add + relu, one element (the cuda device's one-pass
// kernels, nn/device.h bn_fused_*; ResNet's bn -> relu and bn -> add -> relu, He et al. 2016)
// z = normalize(x) (+ res), y = relu(z): the unfused ops' formulas in their order, each
// rounded to fp32 as the unfused ops round into fp32 storage ----
DT_HD float dt_bn_fused_y(float x, float mean, float invstd, float gamma, float beta,
                          int has_res, float res, int relu) {
    float z = dt_bn_normalize(x, mean, invstd, gamma, beta);
    if (has_res) z = z + res;
    return relu ? dt_relu(z) : z;
}
// the gradient w.r.t. z from y and dy (relu's dt_relu_grad, or dy itself without relu): it
// is both the residual's gradient and the dy that batch norm's backward sums and uses
DT_HD float dt_bn_fused_dz(float y, float dy, int relu) { return relu ? dt_relu_grad(y, dy) : dy; }

// ---- softmax cross-entropy, one logit ----
DT_HD float dt_xent_grad(float prob, int is_label, float scale) {
    return scale * (prob - (is_label ? 1.0f : 0.0f));
}

// ---- IEEE binary16 <-> binary32, round to nearest even: the definition, in integer
// arithmetic, so the same bits come out on every device. On the GPU the hardware converts
// every non-NaN value (cvt.rn.f16.f32 and cvt.f32.f16: IEEE round to nearest even, the
// same bits, which tests/cuda checks on every half pattern) and the formula keeps the NaNs,
// whose payload the hardware does not keep. ----
DT_HD uint16_t dt_f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
#ifdef __CUDA_ARCH__
    if ((x & 0x7F800000u) != 0x7F800000u || !(x & 0x7FFFFFu)) {
        unsigned short r;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(f));
        return r;
    }
#endif
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t exp = (x >> 23) & 0xFFu;
    uint32_t man = x & 0x7FFFFFu;
    // Inf, or NaN made quiet with its payload's top bits (IEEE 754 §6.2.3; x86 F16C's bits)
    if (exp == 0xFFu) return (uint16_t)(sign | 0x7C00u | (man ? 0x200u | (man >> 13) : 0u));
    int e = (int)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7C00u);                               // overflow
    if (e <= 0) {                                                                 // subnormal
        if (e < -10) return (uint16_t)sign;
        man |= 0x800000u;
        int shift = 14 - e;
        uint32_t half = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1u);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1u))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = sign | ((uint32_t)e << 10) | (man >> 13);
    uint32_t rem = man & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) half++;  // may carry into exp: ok
    return (uint16_t)half;
}
DT_HD float dt_f16_to_f32(uint16_t h) {
#ifdef __CUDA_ARCH__
    if ((h & 0x7C00u) != 0x7C00u || !(h & 0x3FFu)) {
        float r;
        asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"((unsigned short)h));
        return r;
    }
#endif
    uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t man = h & 0x3FFu;
    uint32_t x;
    if (exp == 0) {
        if (man == 0) {
            x = sign;
        } else {  // subnormal: normalise
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while (!(man & 0x400u));
            x = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3FFu) << 13);
        }
    } else if (exp == 31) {
        x = sign | 0x7F800000u | (man ? 0x400000u | (man << 13) : 0u);  // NaN made quiet
    } else {
        x = sign | ((exp - 15 + 127) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

// ---- bfloat16 (the top 16 bits of a binary32: 8 exponent bits, 7 stored mantissa bits) <->
// binary32, round to nearest even on the 16 dropped bits; a NaN stays a (quiet) NaN, and a
// finite value past bf16's largest rounds to Inf like any other carry into the exponent ----
DT_HD uint16_t dt_f32_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7F800000u) == 0x7F800000u && (x & 0x7FFFFFu))
        return (uint16_t)((x >> 16) | 0x40u);  // NaN: keep the sign, force a quiet payload
    uint32_t lsb = (x >> 16) & 1u;
    x += 0x7FFFu + lsb;  // ties to even
    return (uint16_t)(x >> 16);
}
DT_HD float dt_bf16_to_f32(uint16_t h) {
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

// ---- one element of a half-stored tensor (nn/net_half.c): fmt 1 binary16, 2 bfloat16 (the
// values of dt_amp, nn/net.h). An op on half storage widens each input, applies the fp32
// op's formula and rounds once: the bits of widen -> fp32 op -> narrow. ----
DT_HD float dt_half_load(int fmt, uint16_t h) {
    return fmt == 2 ? dt_bf16_to_f32(h) : dt_f16_to_f32(h);
}
DT_HD uint16_t dt_half_store(int fmt, float v) {
    return fmt == 2 ? dt_f32_to_bf16(v) : dt_f32_to_f16(v);
}
// relu's backward on half storage: dx = (set ? 0 : dx) + relu_grad(y, dy); set writes dx
// without reading it (in place, or the first gradient into it)
DT_HD uint16_t dt_relu_grad_h(int fmt, uint16_t y, uint16_t dy, uint16_t dx, int set) {
    float g = dt_relu_grad(dt_half_load(fmt, y), dt_half_load(fmt, dy));
    return dt_half_store(fmt, set ? g : dt_half_load(fmt, dx) + g);
}


// ---- transformer elementwise math (GPT-2, Radford et al. 2019, as llm.c) ----
// GELU, tanh approximation (Hendrycks & Gimpel 2016, eq. in sec. 2; GPT-2's gelu and
// torch.nn.GELU(approximate="tanh")): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
#define DT_GELU_K 0.7978845608028654f  // sqrt(2/pi)
// tanh through one exponential, tanh |u| = (1 - e) / (1 + e) with e = exp(-2|u|) (never
// overflows), the sign restored: within 9e-8 of tanh (absolute, float64 reference over
// [-4, 4]), and 4x faster than glibc's tanhf on the cpu device (26 ns against 6 per element
// here: GELU was 30 % of gpt2-tiny's step, bench/RESULTS.md)
DT_HD float dt_tanh(float u) {
    float e = expf(-2.0f * fabsf(u));
    return copysignf((1.0f - e) / (1.0f + e), u);
}
DT_HD float dt_gelu(float x) {
    float u = DT_GELU_K * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.0f + dt_tanh(u));
}
// d gelu / dx = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) sqrt(2/pi) (1 + 3*0.044715 x^2)
DT_HD float dt_gelu_grad(float x) {
    float u = DT_GELU_K * (x + 0.044715f * x * x * x);
    float th = dt_tanh(u);
    return 0.5f * (1.0f + th) +
           0.5f * x * (1.0f - th * th) * DT_GELU_K * (1.0f + 3.0f * 0.044715f * x * x);
}

// ---- Adam-family updates, one element (docs/formulas.md, "AdamW and LAMB") ----
// AdamW (Loshchilov & Hutter 2019, Alg. 2) in torch.optim.AdamW's order of operations:
// w *= 1 - lr*wd; m = lerp(m, g, 1-b1); v = b2 v + (1-b2) g^2;
// w -= step * m / (sqrt(v)/bc2_sqrt + eps), with step = lr/(1-b1^t), bc2_sqrt = sqrt(1-b2^t)
DT_HD void dt_adamw_elem(float *w, float g, float *m, float *v, float lr, float b1, float b2,
                         float eps, float wd, float step, float bc2_sqrt) {
    float wn = *w * (1.0f - lr * wd);
    float mn = *m + (g - *m) * (1.0f - b1);
    float vn = *v * b2 + (1.0f - b2) * g * g;
    *m = mn;
    *v = vn;
    *w = wn - step * (mn / (sqrtf(vn) / bc2_sqrt + eps));
}
// LAMB's per-element direction (You et al. 2019, Alg. 2): Adam's moments, then
// r = m_hat / (sqrt(v_hat) + eps) + wd*w with m_hat = m/bc1, v_hat = v/bc2; the layer-wise
// trust ratio |w| / |r| is applied on the host (nn/optim.c)
DT_HD float dt_lamb_dir_elem(float w, float g, float *m, float *v, float b1, float b2,
                             float eps, float wd, float bc1, float bc2) {
    float mn = b1 * *m + (1.0f - b1) * g;
    float vn = b2 * *v + (1.0f - b2) * g * g;
    *m = mn;
    *v = vn;
    return (mn / bc1) / (sqrtf(vn / bc2) + eps) + wd * w;
}

#endif
