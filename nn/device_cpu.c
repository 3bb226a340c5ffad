// device_cpu.c — the cpu device (nn/device.h) with OpenMP (the BLAS libraries' OpenMP builds,
// so their threads and ours share one pool): memory, elementwise ops, reductions, optimizer
// updates and fp16 casts. The network primitives (im2col, batchnorm, pooling, loss) are in
// device_cpu_nn.c, the gemms and their backends in device_cpu_gemm.c. Real math,
// synchronous: sync is a no-op.
// Not here: the per-element formulas (nn/kernels.h, shared with the cuda device) or any
// allocation policy beyond aligned, zeroed blocks.
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "device.h"
#include "device_cpu_internal.h"
#include "dt.h"
#include "kernels.h"

// ---- memory ----

// 64-byte aligned (a cache line, an AVX-512 vector), zero-filled; aborts on failure. Blocks
// of 2 MiB and more are aligned to 2 MiB and asked for transparent huge pages (Linux's
// default THP mode is madvise): an allreduce's scratch then costs MPI's copy and the add one
// TLB entry per 2 MiB (dtcoll-bench, np 2, 4-16 MiB: +2 % busbw; bench/COLL-RESULTS.md).
#define HUGE_PAGE_BYTES ((size_t)2 << 20)
static void *cpu_alloc(dt_device *d, size_t bytes) {
    (void)d;
    size_t rounded = (bytes + 63) / 64 * 64;
    if (rounded == 0) rounded = 64;
    void *p = NULL;
    size_t align = rounded >= HUGE_PAGE_BYTES ? HUGE_PAGE_BYTES : 64;
    if (posix_memalign(&p, align, rounded) != 0 || !p) {
        fprintf(stderr, "dtlab: cpu device: out of memory allocating %zu bytes at %s:%d\n",
                bytes, __FILE__, __LINE__);
        exit(DT_EXIT_RUNTIME);
    }
    if (align == HUGE_PAGE_BYTES)  // advice only: no huge pages is no error
        (void)madvise(p, rounded / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES, MADV_HUGEPAGE);
    memset(p, 0, rounded);
    return p;
}

static void cpu_free(dt_device *d, void *p) {
    (void)d;
    free(p);
}

static void cpu_copy(dt_device *d, void *dst, const void *src, size_t bytes) {
    (void)d;
    if (bytes && dst != src) memmove(dst, src, bytes);
}

static void cpu_sync(dt_device *d) { (void)d; }

static void cpu_destroy(dt_device *d) {
    if (!d) return;
    dt_cpu_ctx *ctx = d->ctx;
    if (ctx) free(ctx->scratch), free(ctx->bf16), free(ctx->r32), free(ctx->hbuf);
    free(ctx);
    free(d);
}

// ---- elementwise and reductions ----

static void cpu_fill(dt_device *d, float *x, float value, size_t n) {
    DT_CPU_FOR(n, x[i] = value);
}

static void cpu_scale(dt_device *d, float *x, float alpha, size_t n) {
    DT_CPU_FOR(n, x[i] *= alpha);
}

static void cpu_axpy(dt_device *d, float alpha, const float *x, float *y, size_t n) {
    DT_CPU_FOR(n, y[i] += alpha * x[i]);
}

static void cpu_add(dt_device *d, float *y, const float *x, size_t n) {
    DT_CPU_FOR(n, y[i] += x[i]);
}

// Sum of squares in double. Deterministic: the vector is cut into at most 256 blocks whose
// size depends on n only, each block is summed alone and the block sums are added in order,
// so every rank and every thread count gets the same bits (LARS norms must agree across
// ranks, or the replicas drift apart).
static double cpu_sumsq(dt_device *d, const float *x, size_t n) {
    enum { MAXBLK = 256 };
    double part[MAXBLK];
    size_t blk = n / MAXBLK + 1;
    if (blk < 65536) blk = 65536;
    int nblk = (int)((n + blk - 1) / blk);
#pragma omp parallel for num_threads(d->threads) schedule(static) if (nblk > 1)
    for (int b = 0; b < nblk; b++) {
        size_t lo = (size_t)b * blk, hi = lo + blk < n ? lo + blk : n;
        double s = 0.0;
#pragma omp simd reduction(+ : s)
        for (size_t i = lo; i < hi; i++) s += (double)x[i] * (double)x[i];
        part[b] = s;
    }
    double s = 0.0;
    for (int b = 0; b < nblk; b++) s += part[b];
    return s;
}

static void cpu_sumsq_many(dt_device *d, int k, const float *const *x, const size_t *n,
                           double *out_host) {
    for (int i = 0; i < k; i++) out_host[i] = cpu_sumsq(d, x[i], n[i]);
}

static size_t cpu_nonfinite(dt_device *d, const float *x, size_t n) {
    size_t bad = 0;
#pragma omp parallel for num_threads(d->threads) schedule(static) reduction(+ : bad) \
    if (n > DT_CPU_PAR_MIN)
    for (size_t i = 0; i < n; i++) bad += !isfinite(x[i]);
    return bad;
}

// ---- optimizer updates (formulas: nn/kernels.h) ----

static void cpu_sgd_update(dt_device *d, float *w, const float *g, float *v, size_t n,
                           float lr, float momentum, float wd, int nesterov) {
#pragma omp parallel for num_threads(d->threads) schedule(static) if (n > DT_CPU_PAR_MIN)
    for (size_t i = 0; i < n; i++) dt_sgd_elem(&w[i], g[i], &v[i], lr, momentum, wd, nesterov);
}

static void cpu_lars_update(dt_device *d, float *w, const float *g, float *v, size_t n,
                            float scaled_lr, float momentum, float wd) {
#pragma omp parallel for num_threads(d->threads) schedule(static) if (n > DT_CPU_PAR_MIN)
    for (size_t i = 0; i < n; i++) dt_lars_elem(&w[i], g[i], &v[i], scaled_lr, momentum, wd);
}

// ---- precision casts (bit-exact software rounding: nn/kernels.h) ----

// With F16C (x86: vcvtps2ph with round-to-nearest-even, vcvtph2ps) the casts run 8 at a
// time in hardware: the same bits as dt_f32_to_f16 / dt_f16_to_f32 for every value, NaN
// payloads included (both quiet the NaN and keep its payload's top bits). Mixed
// precision (nn/net_half.c) converts every activation twice a step, so this is its speed.
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DT_CPU_F16C 1
enum { F16C_BLOCK = 4096 };  // elements per parallel block

__attribute__((target("avx,f16c"))) static void f16c_narrow(const float *x, uint16_t *y,
                                                            size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(y + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) y[i] = dt_f32_to_f16(x[i]);
}

__attribute__((target("avx,f16c"))) static void f16c_widen(const uint16_t *x, float *y,
                                                           size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i))));
    for (; i < n; i++) y[i] = dt_f16_to_f32(x[i]);
}
#endif

#ifdef DT_CPU_F16C
// One cast, in parallel blocks: narrow (float -> half) or widen (half -> float).
static void f16c_cast(dt_device *d, const void *x, void *y, size_t n, int narrow) {
    size_t nb = (n + F16C_BLOCK - 1) / F16C_BLOCK;
#pragma omp parallel for num_threads(d->threads) schedule(static) if (n > DT_CPU_PAR_MIN)
    for (size_t b = 0; b < nb; b++) {
        size_t lo = b * F16C_BLOCK, m = n - lo < F16C_BLOCK ? n - lo : F16C_BLOCK;
        if (narrow) f16c_narrow((const float *)x + lo, (uint16_t *)y + lo, m);
        else f16c_widen((const uint16_t *)x + lo, (float *)y + lo, m);
    }
}
#endif

static void cpu_f32_to_f16(dt_device *d, const float *x, uint16_t *y, size_t n) {
#ifdef DT_CPU_F16C
    if (((dt_cpu_ctx *)d->ctx)->f16c) {
        f16c_cast(d, x, y, n, 1);
        return;
    }
#endif
    DT_CPU_FOR(n, y[i] = dt_f32_to_f16(x[i]));
}

static void cpu_f16_to_f32(dt_device *d, const uint16_t *x, float *y, size_t n) {
#ifdef DT_CPU_F16C
    if (((dt_cpu_ctx *)d->ctx)->f16c) {
        f16c_cast(d, x, y, n, 0);
        return;
    }
#endif
    DT_CPU_FOR(n, y[i] = dt_f16_to_f32(x[i]));
}

static void cpu_add_f16(dt_device *d, float *y, const uint16_t *x, size_t n) {
    DT_CPU_FOR(n, y[i] += dt_f16_to_f32(x[i]));
}

static void cpu_f32_to_bf16(dt_device *d, const float *x, uint16_t *y, size_t n) {
    DT_CPU_FOR(n, y[i] = dt_f32_to_bf16(x[i]));
}

static void cpu_bf16_to_f32(dt_device *d, const uint16_t *x, float *y, size_t n) {
    DT_CPU_FOR(n, y[i] = dt_bf16_to_f32(x[i]));
}

// ---- relu and the residual add on half storage (nn/device.h relu_forward_h, relu_backward_h,
// add_h) ----
// Chunk by chunk: each input chunk widened with the casts above (F16C for fp16 where the CPU
// has it), the fp32 op, one rounding back. The bits of the fp32 ops on widened views, with
// the fp32 copies in L1 instead of in scratch the size of the tensor; one loop per step so
// that each vectorises (a fused widen-op-round loop does not, and ran 4x slower).
#define HALF_CHUNK 2048
enum { HOP_RELU, HOP_RELU_BW, HOP_ADD };

void dt_cpu_widen(const dt_device *d, int fmt, const uint16_t *h, float *f, size_t m) {
    (void)d;
    if (fmt == 2) {
#pragma omp simd
        for (size_t i = 0; i < m; i++) f[i] = dt_bf16_to_f32(h[i]);
        return;
    }
#ifdef DT_CPU_F16C
    if (((dt_cpu_ctx *)d->ctx)->f16c) {
        f16c_widen(h, f, m);
        return;
    }
#endif
    for (size_t i = 0; i < m; i++) f[i] = dt_f16_to_f32(h[i]);
}

void dt_cpu_narrow(const dt_device *d, int fmt, const float *f, uint16_t *h, size_t m) {
    (void)d;
    if (fmt == 2) {
#pragma omp simd
        for (size_t i = 0; i < m; i++) h[i] = dt_f32_to_bf16(f[i]);
        return;
    }
#ifdef DT_CPU_F16C
    if (((dt_cpu_ctx *)d->ctx)->f16c) {
        f16c_narrow(f, h, m);
        return;
    }
#endif
    for (size_t i = 0; i < m; i++) h[i] = dt_f32_to_f16(f[i]);
}

// y = op(a, b): relu(a); (set ? 0 : y) + relu_grad(a, b) with a = y, b = dy; a + b
static void half_op(dt_device *d, int op, int fmt, const uint16_t *a, const uint16_t *b,
                    uint16_t *y, size_t n, int set) {
    size_t nb = (n + HALF_CHUNK - 1) / HALF_CHUNK;
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if (n > DT_CPU_PAR_MIN && d->threads > 1)
    for (size_t k = 0; k < nb; k++) {
        float fa[HALF_CHUNK], fb[HALF_CHUNK], fy[HALF_CHUNK];
        size_t lo = k * HALF_CHUNK, m = n - lo < HALF_CHUNK ? n - lo : HALF_CHUNK;
        dt_cpu_widen(d, fmt, a + lo, fa, m);
        if (op != HOP_RELU) dt_cpu_widen(d, fmt, b + lo, fb, m);
        if (op == HOP_RELU) {
#pragma omp simd
            for (size_t i = 0; i < m; i++) fy[i] = dt_relu(fa[i]);
        } else if (op == HOP_ADD) {
#pragma omp simd
            for (size_t i = 0; i < m; i++) fy[i] = fa[i] + fb[i];
        } else if (set) {  // in place dy is y's buffer: read above, before the write below
#pragma omp simd
            for (size_t i = 0; i < m; i++) fy[i] = dt_relu_grad(fa[i], fb[i]);
        } else {
            dt_cpu_widen(d, fmt, y + lo, fy, m);
#pragma omp simd
            for (size_t i = 0; i < m; i++) fy[i] += dt_relu_grad(fa[i], fb[i]);
        }
        dt_cpu_narrow(d, fmt, fy, y + lo, m);
    }
}

static void cpu_relu_forward_h(dt_device *d, int fmt, const uint16_t *x, uint16_t *y, size_t n) {
    half_op(d, HOP_RELU, fmt, x, NULL, y, n, 1);
}
static void cpu_relu_backward_h(dt_device *d, int fmt, const uint16_t *y, const uint16_t *dy,
                                uint16_t *dx, size_t n, int set) {
    half_op(d, HOP_RELU_BW, fmt, y, dy, dx, n, set);
}
static void cpu_add_h(dt_device *d, int fmt, const uint16_t *a, const uint16_t *b, uint16_t *y,
                      size_t n) {
    half_op(d, HOP_ADD, fmt, a, b, y, n, 1);
}

// ---- the device ----

dt_device *dt_device_cpu_create(int threads) {
    if (threads < 0) return NULL;
    dt_cpu_check_gemm_env();
    if (threads == 0) threads = omp_get_max_threads();
    if (threads < 1) threads = 1;
    dt_device *d = callocCheck(1, sizeof *d);
    d->name = "cpu";
    d->ctx = callocCheck(1, sizeof(dt_cpu_ctx));
#ifdef DT_CPU_F16C
#ifdef __clang__  // clang 14 knows no "f16c" here; AVX2 machines all have F16C
    ((dt_cpu_ctx *)d->ctx)->f16c = __builtin_cpu_supports("avx2");
#else
    ((dt_cpu_ctx *)d->ctx)->f16c = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
#endif
#endif
    d->threads = threads;
    // 4 MiB of columns per thread: measured on ResNet-50's 56x56 3x3 convs (7.2 MB of columns
    // per image), one image per chunk runs the conv 1.4x faster than a 16-image chunk.
    d->im2col_chunk_bytes = (size_t)4 * 1024 * 1024 * (size_t)threads;

    d->alloc = cpu_alloc;
    d->free = cpu_free;
    d->to_host = cpu_copy;
    d->from_host = cpu_copy;
    d->copy = cpu_copy;
    d->sync = cpu_sync;
    d->destroy = cpu_destroy;

    dt_cpu_install_gemm(d);

    d->fill = cpu_fill;
    d->scale = cpu_scale;
    d->axpy = cpu_axpy;
    d->add = cpu_add;
    d->sumsq = cpu_sumsq;
    d->sumsq_many = cpu_sumsq_many;
    d->nonfinite = cpu_nonfinite;

    d->sgd_update = cpu_sgd_update;
    d->lars_update = cpu_lars_update;

    d->f32_to_f16 = cpu_f32_to_f16;
    d->f16_to_f32 = cpu_f16_to_f32;
    d->add_f16 = cpu_add_f16;
    d->f32_to_bf16 = cpu_f32_to_bf16;
    d->bf16_to_f32 = cpu_bf16_to_f32;
    d->relu_forward_h = cpu_relu_forward_h;
    d->relu_backward_h = cpu_relu_backward_h;
    d->add_h = cpu_add_h;

    dt_cpu_install_nn(d);
    dt_cpu_install_half(d);
    dt_cpu_install_gpt(d);
    dt_cpu_install_vocab(d);
    return d;
}
