// device_cpu_internal.h — private to the cpu device (nn/device_cpu*.c): the hook by which
// device_cpu_nn.c installs the network primitives, and a shared threshold. Not a public
// header: layers and tests use nn/device.h only.
#ifndef DT_DEVICE_CPU_INTERNAL_H
#define DT_DEVICE_CPU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
    float *r32;      // small gemms' operands rounded to bf16's values, in fp32 (plan)
    size_t r32_n;
    float *hbuf;  // gemm_batched_bf16_h's fp32 results before rounding, grown on demand
    size_t hbuf_n;
    // the network's fp32 views of bf16 tensors (nn/device.h half_view), read in place
    const float *view[3];
    const uint16_t *view_h[3];
    size_t view_n[3];
} dt_cpu_ctx;

// ---- shared by the gemm files (device_cpu_gemm.c, device_cpu_half.c) ----
// Below this many FLOPs a gemm call runs on one thread: a parallel region would cost more.
#define DT_CPU_GEMM_PAR_MIN 2e6
// The smallest single gemm (M*N*K multiply-adds) that the bf16 backend runs when a bf16
// layer multiplies (nn/device_cpu_gemm.c cpu_gemm): below it the fp32 gemm, on the same
// bf16 values, is faster here (gpt2-tiny's linear layers, 1024 x 256 x 64: bench/RESULTS.md
// "bf16").
#define DT_CPU_BF16_GEMM_MIN 6.4e7
// Narrow gemms (fewer columns than DT_CPU_PACK_BELOW, e.g. the 7x7 = 49 pixels of ResNet's
// last stage) with a shared A are packed side by side, about DT_CPU_PACK_COLS wide.
#define DT_CPU_PACK_BELOW 128
#define DT_CPU_PACK_COLS 512

// [*lo, *hi): the part of 0..n-1 that thread t of nt takes, cut at multiples of 16 floats
// (a cache line), so no two threads write the same line of C.
static inline void dt_cpu_split16(int n, int t, int nt, int *lo, int *hi) {
    long units = (n + 15) / 16;
    long l = units * t / nt * 16, h = units * (t + 1) / nt * 16;
    *lo = (int)(l < n ? l : n);
    *hi = (int)(h < n ? h : n);
}

// The device's fp32 and bf16 scratch (ctx->scratch, ctx->bf16), grown on demand and kept.
float *dt_cpu_scratch(dt_device *d, size_t floats);
uint16_t *dt_cpu_bf16_scratch(dt_cpu_ctx *ctx, size_t n);
float *dt_cpu_r32_scratch(dt_cpu_ctx *ctx, size_t n);

#if defined(DT_HAVE_DNNL) && defined(DT_HAVE_DNNL_BF16_GEMM)
#include <oneapi/dnnl/dnnl.h>
// Exported by libdnnl (src/cpu/gemm/gemm.hpp, extern "C" DNNL_API) beside dnnl_sgemm but not
// declared in its public headers; row-major like dnnl_sgemm, bf16 is uint16_t's bits.
dnnl_status_t dnnl_gemm_bf16bf16f32(char transa, char transb, dnnl_dim_t M, dnnl_dim_t N,
                                    dnnl_dim_t K, float alpha, const uint16_t *A,
                                    dnnl_dim_t lda, const uint16_t *B, dnnl_dim_t ldb,
                                    float beta, float *C, dnnl_dim_t ldc);
#endif

// ---- shared by im2col/col2im and batch norm on fp32 (device_cpu_nn.c) and half storage
// (device_cpu_half.c): one loop body each, so both give the same bits on the same values ----

// Outputs o whose input index o*stride - pad + k lies in [0, n): [*lo, *hi) (o < out).
static inline void dt_cpu_valid_range(int n, int out, int k, int stride, int pad, int *lo,
                                      int *hi) {
    int off = pad - k;  // input = o*stride - off
    int l = off > 0 ? (off + stride - 1) / stride : 0;
    int h = n - 1 + off >= 0 ? (n - 1 + off) / stride + 1 : 0;
    if (h > out) h = out;
    if (l > h) l = h;
    *lo = l;
    *hi = h;
}

// dst[i] = src[i*stride] for i < n, es-byte elements (4: fp32, 2: bf16/fp16 bits); restrict:
// no overlap, so the compiler vectorises without run-time alias checks; the constant stride 2
// gets its own loop, stride 1 goes to memcpy.
static inline __attribute__((always_inline)) void dt_cpu_gather_seg(void *restrict dst,
                                                                    const void *restrict src,
                                                                    int n, int stride,
                                                                    size_t es) {
    if (stride == 1) {
        memcpy(dst, src, (size_t)n * es);
    } else if (es == 4) {
        float *restrict d = dst;
        const float *restrict s = src;
        if (stride == 2) {
            for (int i = 0; i < n; i++) d[i] = s[2 * i];
        } else {
            for (int i = 0; i < n; i++) d[i] = s[(size_t)i * stride];
        }
    } else {
        uint16_t *restrict d = dst;
        const uint16_t *restrict s = src;
        if (stride == 2) {
            for (int i = 0; i < n; i++) d[i] = s[2 * i];
        } else {
            for (int i = 0; i < n; i++) d[i] = s[(size_t)i * stride];
        }
    }
}

// p[i] = 0 for lo <= i < hi, es-byte elements (all-zero bits: +0 in fp32, bf16 and fp16)
static inline __attribute__((always_inline)) void dt_cpu_zero_seg(void *p, int lo, int hi,
                                                                  size_t es) {
    if (es == 4) {
        for (int i = lo; i < hi; i++) ((float *)p)[i] = 0.0f;
    } else {
        for (int i = lo; i < hi; i++) ((uint16_t *)p)[i] = 0;
    }
}

// One row of col for the kernel offset (kh,kw) of one (b,c) plane xp (H,W), es-byte elements:
// row[oh*OW + ow] = xp[oh*stride - pad + kh][ow*stride - pad + kw], 0 in the padding. One body
// for im2col on fp32 (device_cpu_nn.c, es 4) and on bf16 bits (device_cpu_half.c, es 2); es is
// a constant at both calls, so each inlines into the loops of its own element type.
static inline __attribute__((always_inline)) void dt_cpu_im2col_row(const void *xp, int H,
                                                                   int W, int OH, int OW,
                                                                   int kh, int kw, int stride,
                                                                   int pad, void *row,
                                                                   size_t es) {
    const char *x = xp;
    char *col = row;
    int hlo, hhi, lo, hi;
    dt_cpu_valid_range(H, OH, kh, stride, pad, &hlo, &hhi);
    dt_cpu_valid_range(W, OW, kw, stride, pad, &lo, &hi);
    memset(col, 0, (size_t)hlo * OW * es);
    if (stride == 1 && OW == W && hlo < hhi && lo < hi) {
        // "same" padding: the valid rows are one shifted run of x; copy it whole (only
        // in-plane elements), then zero the border columns that wrapped from the next row
        // (lo - pad + kw >= 0 by the definition of lo when some column is valid: every index
        // stays inside the plane; with none, lo is clamped to hi and may point before it)
        const char *src = x + ((size_t)(hlo - pad + kh) * W + (lo - pad + kw)) * es;
        size_t first = (size_t)hlo * OW + lo, last = (size_t)(hhi - 1) * OW + hi;
        if (last > first) memcpy(col + first * es, src, (last - first) * es);
        for (int oh = hlo; oh < hhi; oh++) {
            char *r = col + (size_t)oh * OW * es;
            dt_cpu_zero_seg(r, 0, lo, es);
            dt_cpu_zero_seg(r, hi, OW, es);
        }
        memset(col + (size_t)hhi * OW * es, 0, (size_t)(OH - hhi) * OW * es);
        return;
    }
    for (int oh = hlo; oh < hhi; oh++) {
        char *r = col + (size_t)oh * OW * es;
        const char *xr = x + (size_t)(oh * stride - pad + kh) * W * es;  // input row
        dt_cpu_zero_seg(r, 0, lo, es);
        dt_cpu_gather_seg(r + (size_t)lo * es, xr + (size_t)(lo * stride - pad + kw) * es,
                          hi - lo, stride, es);
        dt_cpu_zero_seg(r, hi, OW, es);
    }
    memset(col + (size_t)hhi * OW * es, 0, (size_t)(OH - hhi) * OW * es);
}

// dst[i*stride] += src[i] for i < n (restrict: no overlap, so the compiler vectorises
// without run-time alias checks; the strides 1 and 2 get loops of their own)
static inline void dt_cpu_scatter_add_seg(float *restrict dst, const float *restrict src,
                                          int n, int stride) {
    if (stride == 1) {
        for (int i = 0; i < n; i++) dst[i] += src[i];
    } else if (stride == 2) {
        for (int i = 0; i < n; i++) dst[2 * i] += src[i];
    } else {
        for (int i = 0; i < n; i++) dst[(size_t)i * stride] += src[i];
    }
}

// x plane xp (H,W) += the col rows (KH*KW of OH*OW) im2col read from it (col2im, one plane)
static inline void dt_cpu_col2im_plane(const float *cp, int H, int W, int KH, int KW,
                                       int stride, int pad, int OH, int OW, float *xp) {
    size_t ohw = (size_t)OH * OW;
    for (int kh = 0; kh < KH; kh++) {
        int hlo, hhi;
        dt_cpu_valid_range(H, OH, kh, stride, pad, &hlo, &hhi);
        for (int kw = 0; kw < KW; kw++) {
            const float *row = cp + (size_t)(kh * KW + kw) * ohw;
            int lo, hi;
            dt_cpu_valid_range(W, OW, kw, stride, pad, &lo, &hi);
            for (int oh = hlo; oh < hhi; oh++) {
                float *xr = xp + (size_t)(oh * stride - pad + kh) * W;  // input row
                dt_cpu_scatter_add_seg(xr + (lo * stride - pad + kw),
                                       row + (size_t)oh * OW + lo, hi - lo, stride);
            }
        }
    }
}

// Batch norm's per-plane loops (Ioffe & Szegedy 2015, Alg. 1; per-element formulas from
// nn/kernels.h). Sums over one plane p of HW elements, shifted by k, in double:
// *s += sum(p - k), *ss += sum((p - k)^2).
static inline void dt_cpu_bn_sums(const float *p, int HW, double k, double *s, double *ss) {
    double a = *s, b = *ss;
#pragma omp simd reduction(+ : a, b)
    for (int i = 0; i < HW; i++) {
        double t = (double)p[i] - k;
        a += t;
        b += t * t;
    }
    *s = a, *ss = b;
}
// *sdy += sum(dy), *sdyx += sum(dy*xhat), xhat = (x - m)*is
static inline void dt_cpu_bn_grad_sums(const float *g, const float *p, int HW, float m,
                                       float is, double *sdy, double *sdyx) {
    double a = *sdy, b = *sdyx;
#pragma omp simd reduction(+ : a, b)
    for (int i = 0; i < HW; i++) {
        a += g[i];
        b += (double)g[i] * (double)((p[i] - m) * is);
    }
    *sdy = a, *sdyx = b;
}

// Exits 2 with a message where DT_CPU_GEMM names no backend of this build; then sets gemm,
// gemm_batched and gemm_batched_sum on the backend chosen for this CPU (device_cpu_gemm.c).
void dt_cpu_check_gemm_env(void);
void dt_cpu_install_gemm(dt_device *d);

// Sets im2col, col2im, bias, batchnorm, relu, pooling, dropout and loss (device_cpu_nn.c).
void dt_cpu_install_nn(dt_device *d);
// m elements of half storage (fmt 1 fp16, 2 bf16) to fp32 and back, one thread: the bits of
// the device's f16_to_f32/bf16_to_f32 and f32_to_f16/f32_to_bf16 (device_cpu.c).
void dt_cpu_widen(const dt_device *d, int fmt, const uint16_t *h, float *f, size_t m);
void dt_cpu_narrow(const dt_device *d, int fmt, const float *f, uint16_t *h, size_t m);

// Sets batch norm on half storage, and where the CPU multiplies bf16 (ctx->bf16_gemm) the
// convolution primitives on bf16 storage (device_cpu_half.c).
void dt_cpu_install_half(dt_device *d);
// Sets the transformer primitives and the Adam-family updates (device_cpu_gpt.c).
void dt_cpu_install_gpt(dt_device *d);
// Sets the primitives of a vocabulary split over a tensor-parallel group (device_cpu_vocab.c).
void dt_cpu_install_vocab(dt_device *d);

#endif
