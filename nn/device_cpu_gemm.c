// device_cpu_gemm.c — the cpu device's dense linear algebra (nn/device.h gemm, gemm_batched,
// gemm_batched_sum): how a call is cut among the threads (whole gemms per thread, bands of C,
// narrow gemms packed side by side) and which library multiplies each piece. Two backends,
// chosen once when the device is created (docs/cpu-backends.md says which runs where, and
// why):
//  - reference: OpenBLAS's cblas_sgemm, the im2col + gemm path of lesson 01 that the tests
//    compare everything with;
//  - onednn (built where oneDNN is found, the default then): oneDNN's dnnl_sgemm, whose JIT
//    kernels pick the CPU's widest instructions at run time (AVX-512 where OpenBLAS 0.3.21
//    is held to its Haswell kernels), and under --precision bf16 on a CPU with AVX512_BF16 or
//    AMX dnnl_gemm_bf16bf16f32: bf16 inputs, fp32 accumulation and output, twice the
//    multiply rate of fp32 (vdpbf16ps does two products per fp32 lane).
// DT_CPU_GEMM=reference|onednn|auto in the environment overrides the choice.
// Not here: convolution as im2col + gemm (nn/layer_conv.c), the elementwise kernels.
#include <cblas.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "device_cpu_internal.h"
#include "dt.h"
#include "kernels.h"

#ifdef DT_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>  // dnnl_gemm_bf16bf16f32: device_cpu_internal.h
#endif

// What multiplies one piece, for the length of one device call. For bf16, A16 and B16 hold
// A0's and B0's spans rounded to bf16 with the same layout, so a piece at A (an image of the
// batch, a band) is at A16 + (A - A0).
typedef struct {
    int kind;  // DT_CPU_GEMM_REFERENCE, DT_CPU_GEMM_ONEDNN, GEMM_BF16 or GEMM_BF16_VALUES
    const float *A0, *B0;
    const uint16_t *A16, *B16;  // GEMM_BF16: the operands in bf16
    const float *A32, *B32;     // GEMM_BF16_VALUES: the operands' bf16 values, in fp32
} gemm_ops;
enum { GEMM_BF16 = 100, GEMM_BF16_VALUES = 101 };

// C = beta*C for an (M,N) block with row stride ldc; beta == 0 writes zeros (as BLAS does:
// NaN in C does not survive a zero beta).
static void scale_block(float *C, int M, int N, int ldc, float beta) {
    if (beta == 1.0f) return;
    for (int i = 0; i < M; i++) {
        float *c = C + (size_t)i * ldc;
        if (beta == 0.0f) {
            memset(c, 0, (size_t)N * sizeof(float));
        } else {
            for (int j = 0; j < N; j++) c[j] *= beta;
        }
    }
}

#ifdef DT_HAVE_DNNL
static void dnnl_failed(const char *fn, int status) {
    fprintf(stderr, "dtlab: cpu device: %s failed (oneDNN status %d)\n", fn, status);
    exit(DT_EXIT_RUNTIME);
}
#endif

// One gemm (row-major). Degenerate sizes are handled here (OpenBLAS rejects a zero leading
// dimension). Inside a parallel region OpenBLAS and oneDNN (both on the OpenMP runtime) run
// single-threaded.
static void sgemm1(const gemm_ops *g, int ta, int tb, int M, int N, int K, float alpha,
                   const float *A, int lda, const float *B, int ldb, float beta, float *C,
                   int ldc) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0 || alpha == 0.0f) {
        scale_block(C, M, N, ldc, beta);
        return;
    }
#ifdef DT_HAVE_DNNL
    char a = ta ? 'T' : 'N', b = tb ? 'T' : 'N';
    if (g->kind == DT_CPU_GEMM_ONEDNN) {
        dnnl_status_t s = dnnl_sgemm(a, b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        if (s != dnnl_success) dnnl_failed("dnnl_sgemm", (int)s);
        return;
    }
    if (g->kind == GEMM_BF16_VALUES) {  // bf16 values multiplied exactly by the fp32 gemm
        dnnl_status_t s = dnnl_sgemm(a, b, M, N, K, alpha, g->A32 + (A - g->A0), lda,
                                     g->B32 + (B - g->B0), ldb, beta, C, ldc);
        if (s != dnnl_success) dnnl_failed("dnnl_sgemm", (int)s);
        return;
    }
#ifdef DT_HAVE_DNNL_BF16_GEMM
    if (g->kind == GEMM_BF16) {
        dnnl_status_t s = dnnl_gemm_bf16bf16f32(a, b, M, N, K, alpha, g->A16 + (A - g->A0), lda,
                                                g->B16 + (B - g->B0), ldb, beta, C, ldc);
        if (s != dnnl_success) dnnl_failed("dnnl_gemm_bf16bf16f32", (int)s);
        return;
    }
#endif
#endif
    (void)g;
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

// One gemm on `threads` threads: OpenBLAS's and oneDNN's OpenMP builds follow
// omp_get_max_threads() of the calling thread, so we set it for the call and restore it after.
static void sgemm_threads(const gemm_ops *g, int threads, int ta, int tb, int M, int N, int K,
                          float alpha, const float *A, int lda, const float *B, int ldb,
                          float beta, float *C, int ldc) {
    int saved = omp_get_max_threads();
    if (saved != threads && !omp_in_parallel()) omp_set_num_threads(threads);
    sgemm1(g, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    if (saved != threads && !omp_in_parallel()) omp_set_num_threads(saved);
}

// ---- bf16 operands ----

// y = bf16(x), dt_f32_to_bf16's bits (round to nearest even, a NaN stays a quiet NaN; no
// flush of subnormals, unlike vcvtneps2bf16), 16 at a time with AVX-512F where the CPU has
// it: the bf16 path only runs on CPUs with AVX512_BF16 or AMX, which all have AVX-512F.
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
__attribute__((target("avx512f"))) static void narrow_bf16_avx512(const float *x, uint16_t *y,
                                                                  size_t n) {
    const __m512i one = _mm512_set1_epi32(1), round = _mm512_set1_epi32(0x7FFF);
    const __m512i abs = _mm512_set1_epi32(0x7FFFFFFF), inf = _mm512_set1_epi32(0x7F800000);
    const __m512i quiet = _mm512_set1_epi32(0x40);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i v = _mm512_loadu_si512((const void *)(x + i));
        __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(v, 16), one);
        __m512i r = _mm512_srli_epi32(_mm512_add_epi32(v, _mm512_add_epi32(round, lsb)), 16);
        __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(v, abs), inf);
        r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(v, 16), quiet);
        _mm256_storeu_si256((__m256i *)(y + i), _mm512_cvtepi32_epi16(r));
    }
    for (; i < n; i++) y[i] = dt_f32_to_bf16(x[i]);
}
#endif

static void narrow_bf16(const float *x, uint16_t *y, size_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx512f")) {
        narrow_bf16_avx512(x, y, n);
        return;
    }
#endif
    for (size_t i = 0; i < n; i++) y[i] = dt_f32_to_bf16(x[i]);
}

// Elements from a matrix's first to its last one: (rows-1)*ld + cols
static size_t extent(int rows, int cols, int ld) {
    return rows > 0 && cols > 0 ? (size_t)(rows - 1) * ld + cols : 0;
}

// fp32 scratch for operands rounded to bf16's values (plan), grown on demand
float *dt_cpu_r32_scratch(dt_cpu_ctx *ctx, size_t n) {
    if (ctx->r32_n < n) {
        free(ctx->r32);
        ctx->r32 = malloc((n ? n : 1) * sizeof(float));
        if (!ctx->r32) {
            fprintf(stderr, "dtlab: cpu device: out of memory allocating %zu bytes at %s:%d\n",
                    n * sizeof(float), __FILE__, __LINE__);
            exit(DT_EXIT_RUNTIME);
        }
        ctx->r32_n = n;
    }
    return ctx->r32;
}

// bf16 scratch owned by the device, grown on demand and kept between calls.
uint16_t *dt_cpu_bf16_scratch(dt_cpu_ctx *ctx, size_t n) {
    if (ctx->bf16_n < n) {
        free(ctx->bf16);
        ctx->bf16 = NULL;
        if (posix_memalign((void **)&ctx->bf16, 64, (n * 2 + 63) / 64 * 64) != 0 || !ctx->bf16) {
            fprintf(stderr, "dtlab: cpu device: out of memory allocating %zu bytes at %s:%d\n",
                    n * 2, __FILE__, __LINE__);
            exit(DT_EXIT_RUNTIME);
        }
        ctx->bf16_n = n;
    }
    return ctx->bf16;
}

// The bf16 bits of x[0, n) where x lies in a view the network named (nn/device.h
// half_view), else NULL.
static const uint16_t *viewed(const dt_cpu_ctx *ctx, const float *x, size_t n) {
    uintptr_t p = (uintptr_t)x;
    for (int s = 0; s < 3; s++) {
        uintptr_t v = (uintptr_t)ctx->view[s];
        if (ctx->view_h[s] && p >= v && p + n * sizeof(float) <= v + ctx->view_n[s] * sizeof(float))
            return ctx->view_h[s] + (x - ctx->view[s]);
    }
    return NULL;
}

static void cpu_half_view(dt_device *d, int slot, const float *view, const uint16_t *h,
                          size_t n) {
    dt_cpu_ctx *ctx = d->ctx;
    ctx->view[slot] = h ? view : NULL;
    ctx->view_h[slot] = h;
    ctx->view_n[slot] = h ? n : 0;
}

// The backend for this call: bf16 when the network runs a half layer in bf16 (d->gemm_half
// == 2, whose gemm inputs are bf16 values held in fp32, nn/net_half.c) and the CPU
// multiplies bf16. An operand in a view of a bf16 tensor is read from that tensor; another
// (the weights' half-rounded copy, the im2col columns, the logits' fp32 gradient) is rounded
// to bf16 into scratch, in parallel: exact for bf16 values, and the fp32 gradient of the
// logits is rounded as a tensor-core gemm on the cuda device rounds it. na and nb are the
// operands' spans in elements (0: B is rounded elsewhere, gemm_batched_packed). Where the
// CPU has no bf16 multiply, it says so once and the gemm stays fp32: the same numbers.
// A small product (small: under DT_CPU_BF16_GEMM_MIN) multiplies the same bf16 values on the
// fp32 gemm, faster there: each operand not read from a bf16 tensor is rounded to bf16's
// values in fp32 scratch (a product of two bf16 values is exact in fp32).
static gemm_ops plan(dt_device *d, const float *A, size_t na, const float *B, size_t nb,
                     int small) {
    dt_cpu_ctx *ctx = d->ctx;
    gemm_ops g = {ctx->gemm, A, B, NULL, NULL, NULL, NULL};
    if (d->gemm_half != 2) return g;
    if (!ctx->bf16_gemm) {
        if (!ctx->bf16_said) {
            fprintf(stderr, "dtlab: cpu device: %s; bf16 layers multiply in fp32 (the same "
                            "numbers, no bf16 speed-up)\n", ctx->bf16_why);
            ctx->bf16_said = 1;
        }
        return g;
    }
    const uint16_t *a16 = viewed(ctx, A, na), *b16 = nb ? viewed(ctx, B, nb) : NULL;
    size_t ca = a16 ? 0 : na, cb = b16 ? 0 : nb;  // elements to round
    if (small && nb) {
        float *r = dt_cpu_r32_scratch(ctx, ca + cb);
        for (size_t i = 0; i < ca; i++) r[i] = dt_bf16_to_f32(dt_f32_to_bf16(A[i]));
        for (size_t i = 0; i < cb; i++) r[ca + i] = dt_bf16_to_f32(dt_f32_to_bf16(B[i]));
        g.kind = GEMM_BF16_VALUES;
        g.A32 = ca ? r : A;
        g.B32 = cb ? r + ca : B;
        return g;
    }
    uint16_t *s = dt_cpu_bf16_scratch(ctx, ca + cb);
    size_t n = ca + cb;
    enum { BLK = 1 << 16 };
    long nblk = (long)((n + BLK - 1) / BLK);
#pragma omp parallel for num_threads(d->threads) schedule(static) if (n > DT_CPU_PAR_MIN)
    for (long k = 0; k < nblk; k++) {
        size_t lo = (size_t)k * BLK, hi = lo + BLK < n ? lo + BLK : n;
        if (hi <= ca) {
            narrow_bf16(A + lo, s + lo, hi - lo);
        } else if (lo >= ca) {
            narrow_bf16(B + (lo - ca), s + lo, hi - lo);
        } else {
            narrow_bf16(A + lo, s + lo, ca - lo);
            narrow_bf16(B, s + ca, hi - ca);
        }
    }
    g.kind = GEMM_BF16;
    g.A16 = a16 ? a16 : s;
    g.B16 = b16 ? b16 : s + ca;
    return g;
}

// A's and B's spans over a batch: stride*(batch-1) plus one matrix
static size_t span(size_t stride, int batch, int rows, int cols, int ld) {
    size_t e = extent(rows, cols, ld);
    return e && batch > 0 ? stride * (size_t)(batch - 1) + e : 0;
}

// C(M,N) = alpha*op(A)*op(B) + beta*C
static void cpu_gemm(dt_device *d, int ta, int tb, int M, int N, int K, float alpha,
                     const float *A, int lda, const float *B, int ldb, float beta, float *C,
                     int ldc) {
    gemm_ops g = {((dt_cpu_ctx *)d->ctx)->gemm, A, B, NULL, NULL, NULL, NULL};
    if (M > 0 && N > 0 && K > 0 && alpha != 0.0f)
        g = plan(d, A, extent(ta ? K : M, ta ? M : K, lda), B, extent(tb ? N : K, tb ? K : N, ldb),
                 (double)M * N * K < DT_CPU_BF16_GEMM_MIN);
    sgemm_threads(&g, d->threads, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

// Thread t's share of C = alpha*op(A)op(B) + beta*C: a band of columns of C when N >= M
// (op(B) is cut the same way), else a band of rows (op(A) is cut). Single-threaded gemm.
static void sgemm_slice(const gemm_ops *g, int t, int nt, int ta, int tb, int M, int N, int K,
                        float alpha, const float *A, int lda, const float *B, int ldb,
                        float beta, float *C, int ldc) {
    int lo, hi;
    if (N >= M) {
        dt_cpu_split16(N, t, nt, &lo, &hi);
        sgemm1(g, ta, tb, M, hi - lo, K, alpha, A, lda, tb ? B + (size_t)lo * ldb : B + lo,
               ldb, beta, C + lo, ldc);
    } else {
        dt_cpu_split16(M, t, nt, &lo, &hi);
        sgemm1(g, ta, tb, hi - lo, N, K, alpha, ta ? A + lo : A + (size_t)lo * lda, lda, B,
               ldb, beta, C + (size_t)lo * ldc, ldc);
    }
}

// Scratch owned by the device (d->ctx), grown on demand and kept between calls.
float *dt_cpu_scratch(dt_device *d, size_t floats) {
    dt_cpu_ctx *ctx = d->ctx;
    if (ctx->scratch_floats < floats) {
        free(ctx->scratch);
        ctx->scratch = d->alloc(d, floats * sizeof(float));
        ctx->scratch_floats = floats;
    }
    return ctx->scratch;
}

// Narrow gemms (N columns, e.g. the 7x7 = 49 pixels of ResNet's last stage) run far below
// peak. With a shared A and plain B_i, the B_i are copied side by side into P (K, g*N), one
// wide gemm Q = alpha*op(A)*P runs (its rows cut among the threads), and Q is copied back
// into the C_i (C_i = Q_i + beta*C_i). g items per group make P about DT_CPU_PACK_COLS wide.
// In bf16 (g0 of kind GEMM_BF16, A already rounded) the copies into P round to bf16.
static void gemm_batched_packed(dt_device *d, const gemm_ops *g0, int ta, int M, int N, int K,
                                float alpha, const float *A, int lda, const float *B, int ldb,
                                size_t sb, float beta, float *C, int ldc, size_t sc,
                                int batch) {
    int grp = (DT_CPU_PACK_COLS + N - 1) / N;
    if (grp > batch) grp = batch;
    size_t wide = (size_t)grp * N;
    float *P = dt_cpu_scratch(d, ((size_t)K + M) * wide), *Q = P + (size_t)K * wide;
    gemm_ops g = *g0;
    g.B0 = P;
    int bf16 = g.kind == GEMM_BF16;
    uint16_t *P16 = (uint16_t *)g.B16;  // bf16: after A's copy (room made by the caller)
    for (int i0 = 0; i0 < batch; i0 += grp) {
        int n = batch - i0 < grp ? batch - i0 : grp, NW = n * N;
        const float *Bg = B + i0 * sb;
        float *Cg = C + i0 * sc;
#pragma omp parallel num_threads(d->threads)
        {
            int nt = omp_get_num_threads(), t = omp_get_thread_num();
#pragma omp for schedule(static)
            for (long r = 0; r < (long)n * K; r++) {
                long j = r / K, k = r % K;
                const float *src = Bg + j * sb + k * ldb;
                if (bf16) narrow_bf16(src, P16 + k * NW + j * N, (size_t)N);
                else memcpy(P + k * NW + j * N, src, (size_t)N * sizeof(float));
            }
            sgemm_slice(&g, t, nt, ta, 0, M, NW, K, alpha, A, lda, P, NW, 0.0f, Q, NW);
#pragma omp barrier
#pragma omp for schedule(static)
            for (long r = 0; r < (long)n * M; r++) {
                long j = r / M, m = r % M;
                float *c = Cg + j * sc + m * ldc;
                const float *q = Q + m * NW + j * N;
                if (beta == 0.0f) {
                    memcpy(c, q, (size_t)N * sizeof(float));
                } else {
                    for (int x = 0; x < N; x++) c[x] = q[x] + beta * c[x];
                }
            }
        }
    }
}

// C_i = alpha*op(A_i)*op(B_i) + beta*C_i, X_i = X + i*stride_x, in one parallel region:
// whole gemms are dealt out (each single-threaded; OpenBLAS's OpenMP build runs one thread
// inside a parallel region) as far as the batch divides by the threads, and each of the
// remaining gemms is cut into bands of C, one per thread. No barrier between gemms.
static void cpu_gemm_batched(dt_device *d, int ta, int tb, int M, int N, int K, float alpha,
                             const float *A, int lda, size_t sa, const float *B, int ldb,
                             size_t sb, float beta, float *C, int ldc, size_t sc, int batch) {
    if (batch <= 0 || M <= 0 || N <= 0) return;
    int T = d->threads, small = 2.0 * M * N * K * batch < DT_CPU_GEMM_PAR_MIN;
    int packed = !small && sa == 0 && !tb && batch > 1 && N < DT_CPU_PACK_BELOW;
    gemm_ops g = {((dt_cpu_ctx *)d->ctx)->gemm, A, B, NULL, NULL, NULL, NULL};
    size_t na = span(sa, batch, ta ? K : M, ta ? M : K, lda);
    if (packed && d->gemm_half == 2) {  // room for P's bf16 copy after A's, grown first
        int grp = (DT_CPU_PACK_COLS + N - 1) / N;
        dt_cpu_bf16_scratch(d->ctx, na + (size_t)K * N * (grp < batch ? grp : batch));
    }
    if (K > 0 && alpha != 0.0f)  // packed: B is rounded into P
        g = plan(d, A, na, B, packed ? 0 : span(sb, batch, tb ? N : K, tb ? K : N, ldb), 0);
    if (packed) {
        gemm_batched_packed(d, &g, ta, M, N, K, alpha, A, lda, B, ldb, sb, beta, C, ldc, sc,
                            batch);
        return;
    }
    if (T <= 1 || small) {
        for (int i = 0; i < batch; i++) {
            sgemm_threads(&g, 1, ta, tb, M, N, K, alpha, A + i * sa, lda, B + i * sb, ldb, beta,
                          C + i * sc, ldc);
        }
        return;
    }
#pragma omp parallel num_threads(T)
    {
        int nt = omp_get_num_threads(), t = omp_get_thread_num();
        int whole = batch - batch % nt;
        int lo = (int)((long)whole * t / nt), hi = (int)((long)whole * (t + 1) / nt);
        for (int i = lo; i < hi; i++) {
            sgemm1(&g, ta, tb, M, N, K, alpha, A + i * sa, lda, B + i * sb, ldb, beta,
                   C + i * sc, ldc);
        }
        for (int i = whole; i < batch; i++) {
            sgemm_slice(&g, t, nt, ta, tb, M, N, K, alpha, A + i * sa, lda, B + i * sb, ldb,
                        beta, C + i * sc, ldc);
        }
    }
}

// C = alpha * sum_i op(A_i)*op(B_i) + beta*C (conv2d's dW += sum_b dY_b col_b^T). Each
// thread owns a band of C (columns, or rows when C is tall) and runs the whole batch into
// it: no partial sums, no reduction, one parallel region, the same bits on every run.
static void cpu_gemm_batched_sum(dt_device *d, int ta, int tb, int M, int N, int K,
                                 float alpha, const float *A, int lda, size_t sa,
                                 const float *B, int ldb, size_t sb, float beta, float *C,
                                 int ldc, int batch) {
    if (M <= 0 || N <= 0) return;
    if (batch <= 0) {
        scale_block(C, M, N, ldc, beta);
        return;
    }
    gemm_ops g = {((dt_cpu_ctx *)d->ctx)->gemm, A, B, NULL, NULL, NULL, NULL};
    if (K > 0 && alpha != 0.0f)
        g = plan(d, A, span(sa, batch, ta ? K : M, ta ? M : K, lda), B,
                 span(sb, batch, tb ? N : K, tb ? K : N, ldb), 0);
    int T = d->threads;
    if (T <= 1 || 2.0 * M * N * K * batch < DT_CPU_GEMM_PAR_MIN) {
        for (int i = 0; i < batch; i++) {
            sgemm_threads(&g, 1, ta, tb, M, N, K, alpha, A + i * sa, lda, B + i * sb, ldb,
                          i == 0 ? beta : 1.0f, C, ldc);
        }
        return;
    }
#pragma omp parallel num_threads(T)
    {
        int nt = omp_get_num_threads(), t = omp_get_thread_num();
        for (int i = 0; i < batch; i++) {
            sgemm_slice(&g, t, nt, ta, tb, M, N, K, alpha, A + i * sa, lda, B + i * sb, ldb,
                        i == 0 ? beta : 1.0f, C, ldc);
        }
    }
}

// ---- the backend ----

const char *dt_device_cpu_gemm_name(const dt_device *d) {
    const dt_cpu_ctx *ctx = d && d->name && strcmp(d->name, "cpu") == 0 ? d->ctx : NULL;
    if (!ctx) return "";
    if (ctx->gemm == DT_CPU_GEMM_REFERENCE) return "reference (OpenBLAS)";
    return ctx->bf16_gemm ? "onednn (oneDNN; bf16 gemms)" : "onednn (oneDNN; no bf16 gemms)";
}

// DT_CPU_GEMM: auto (onednn where built with it), reference, onednn; another value, or
// onednn in a build without it, exits 2 with a message (before the device allocates).
void dt_cpu_check_gemm_env(void) {
    const char *want = getenv("DT_CPU_GEMM");
    if (want && *want && strcmp(want, "auto") && strcmp(want, "reference") &&
        strcmp(want, "onednn")) {
        fprintf(stderr, "dtlab: DT_CPU_GEMM=%s: expected auto, reference or onednn\n", want);
        exit(DT_EXIT_USAGE);
    }
#ifndef DT_HAVE_DNNL
    if (want && strcmp(want, "onednn") == 0) {
        fprintf(stderr, "dtlab: DT_CPU_GEMM=onednn: this build has no oneDNN "
                        "(apt-get install libdnnl-dev, then configure again)\n");
        exit(DT_EXIT_USAGE);
    }
#endif
}

// The backend DT_CPU_GEMM asks for (checked by dt_cpu_check_gemm_env). Which CPUs multiply
// bf16: oneDNN's own CPUID dispatch (dnnl_get_effective_cpu_isa) reaching avx512_core_bf16
// (AVX512_BF16) or avx512_core_amx (AMX), which are supersets of it in its ISA bit masks.
void dt_cpu_install_gemm(dt_device *d) {
    dt_cpu_ctx *ctx = d->ctx;
    const char *want = getenv("DT_CPU_GEMM");
    ctx->gemm = DT_CPU_GEMM_REFERENCE;
    ctx->bf16_why = "no bf16 gemm: this build has no oneDNN (libdnnl-dev)";
#ifdef DT_HAVE_DNNL
    if (!want || strcmp(want, "reference") != 0) ctx->gemm = DT_CPU_GEMM_ONEDNN;
    if (ctx->gemm == DT_CPU_GEMM_REFERENCE) {
        ctx->bf16_why = "no bf16 gemm on the reference gemm path (DT_CPU_GEMM=reference)";
    } else {
#ifdef DT_HAVE_DNNL_BF16_GEMM
        unsigned isa = (unsigned)dnnl_get_effective_cpu_isa();
        ctx->bf16_gemm = (isa & (unsigned)dnnl_cpu_isa_avx512_core_bf16) ==
                         (unsigned)dnnl_cpu_isa_avx512_core_bf16;
        ctx->bf16_why = "this CPU has neither AVX512_BF16 nor AMX";
#else
        ctx->bf16_why = "no bf16 gemm: this oneDNN has no dnnl_gemm_bf16bf16f32";
#endif
    }
#else
    (void)want;
#endif
    d->gemm = cpu_gemm;
    d->gemm_batched = cpu_gemm_batched;
    d->gemm_batched_sum = cpu_gemm_batched_sum;
    d->half_view = ctx->bf16_gemm ? cpu_half_view : NULL;
}
