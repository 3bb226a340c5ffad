// device_cpu_half.c — the cpu device's primitives on half storage (nn/device.h): batch norm
// (Ioffe & Szegedy 2015) with x, y, dy, dx in fp16 or bf16, and, where the CPU multiplies
// bf16 (AVX512_BF16 or AMX through oneDNN, nn/device_cpu_gemm.c), convolution as im2col +
// gemm on bf16 storage: im2col copying bf16 bits, gemms on bf16 operands with fp32
// accumulation (dnnl_gemm_bf16bf16f32), col2im summing in fp32 and rounding once; the
// convs' bf16 outputs and their backward-data pass image by image per thread, so no fp32
// buffer of the whole batch makes a round trip through memory (gemm_batched_bf16_h,
// gemm_col2im_bf16).
//
// Why: under --precision bf16 the network otherwise runs these layers on fp32 views of its
// bf16 tensors (nn/net_half.c): each input widened into fp32 scratch, im2col writing fp32
// columns that are rounded to bf16 again before the gemm, each output narrowed back. Those
// passes moved several times the bytes of the layer's own loops (batch norm ran at twice
// its fp32 time, the bf16 convolutions at 65-70 % of the bare bf16 gemm; bench/RESULTS.md).
//
// Same bits as the views: each primitive widens a plane into thread-local fp32 and runs the
// fp32 primitive's own loop on it (device_cpu_internal.h: dt_cpu_bn_sums, dt_cpu_col2im_plane),
// and the bf16 gemms are cut among the threads exactly as device_cpu_gemm.c cuts the bf16
// gemms of the views path, on the same bf16 values (tests/unit/test_amp.c checks the bits).
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "device_cpu_internal.h"
#include "dt.h"
#include "kernels.h"

// ---- batch norm on half storage (nn/device.h bn_forward_train_h, bn_forward_eval_h,
// bn_backward_h): the loops of device_cpu_nn.c on one widened plane at a time ----

static void bn_forward_train_h(dt_device *d, int fmt, const uint16_t *x, int B, int C, int HW,
                               const float *gamma, const float *beta, float eps,
                               float momentum, float *running_mean, float *running_var,
                               float *save_mean, float *save_invstd, uint16_t *y) {
    size_t n = (size_t)B * HW;
    if (n == 0) return;
#pragma omp parallel num_threads(d->threads) if (n * C > DT_CPU_PAR_MIN)
    {
        float *f = mallocCheck((size_t)HW * sizeof(float));
#pragma omp for schedule(static)
        for (int c = 0; c < C; c++) {
            double k = dt_half_load(fmt, x[(size_t)c * HW]), s = 0.0, ss = 0.0;
            for (int b = 0; b < B; b++) {
                dt_cpu_widen(d, fmt, x + ((size_t)b * C + c) * HW, f, (size_t)HW);
                dt_cpu_bn_sums(f, HW, k, &s, &ss);
            }
            double ms = s / (double)n, mean = k + ms, var = ss / (double)n - ms * ms;
            if (var < 0.0) var = 0.0;
            float fmean = (float)mean, finvstd = dt_bn_invstd(var, eps);
            save_mean[c] = fmean;
            save_invstd[c] = finvstd;
            if (running_mean) running_mean[c] = dt_bn_running(running_mean[c], fmean, momentum);
            if (running_var)
                running_var[c] = dt_bn_running(running_var[c],
                                               (float)dt_bn_unbiased(var, (double)n), momentum);
            float g = gamma[c], bt = beta[c];
            for (int b = 0; b < B; b++) {
                size_t o = ((size_t)b * C + c) * HW;
                dt_cpu_widen(d, fmt, x + o, f, (size_t)HW);
                for (int i = 0; i < HW; i++) f[i] = dt_bn_normalize(f[i], fmean, finvstd, g, bt);
                dt_cpu_narrow(d, fmt, f, y + o, (size_t)HW);
            }
        }
        free(f);
    }
}

static void bn_forward_eval_h(dt_device *d, int fmt, const uint16_t *x, int B, int C, int HW,
                              const float *gamma, const float *beta, float eps,
                              const float *running_mean, const float *running_var,
                              uint16_t *y) {
    long planes = (long)B * C;
#pragma omp parallel num_threads(d->threads) if ((size_t)planes * HW > DT_CPU_PAR_MIN)
    {
        float *f = mallocCheck((size_t)(HW > 0 ? HW : 1) * sizeof(float));
#pragma omp for schedule(static)
        for (long pc = 0; pc < planes; pc++) {
            int c = (int)(pc % C);
            float invstd = dt_bn_invstd((double)running_var[c], eps);
            float m = running_mean[c], g = gamma[c], bt = beta[c];
            dt_cpu_widen(d, fmt, x + (size_t)pc * HW, f, (size_t)HW);
            for (int i = 0; i < HW; i++) f[i] = dt_bn_normalize(f[i], m, invstd, g, bt);
            dt_cpu_narrow(d, fmt, f, y + (size_t)pc * HW, (size_t)HW);
        }
        free(f);
    }
}

static void bn_backward_h(dt_device *d, int fmt, const uint16_t *dy, const uint16_t *x, int B,
                          int C, int HW, const float *gamma, const float *save_mean,
                          const float *save_invstd, uint16_t *dx, float *dgamma, float *dbeta,
                          int set) {
    size_t n = (size_t)B * HW;
    if (n == 0) return;
#pragma omp parallel num_threads(d->threads) if (n * C > DT_CPU_PAR_MIN)
    {
        float *g = mallocCheck(3 * (size_t)HW * sizeof(float)), *p = g + HW, *q = p + HW;
#pragma omp for schedule(static)
        for (int c = 0; c < C; c++) {
            float m = save_mean[c], is = save_invstd[c];
            double sdy = 0.0, sdyx = 0.0;
            for (int b = 0; b < B; b++) {
                size_t o = ((size_t)b * C + c) * HW;
                dt_cpu_widen(d, fmt, dy + o, g, (size_t)HW);
                dt_cpu_widen(d, fmt, x + o, p, (size_t)HW);
                dt_cpu_bn_grad_sums(g, p, HW, m, is, &sdy, &sdyx);
            }
            if (dgamma) dgamma[c] += (float)sdyx;
            if (dbeta) dbeta[c] += (float)sdy;
            if (!dx) continue;
            float gm = gamma[c], fs = (float)sdy, fsx = (float)sdyx, fn = (float)n;
            for (int b = 0; b < B; b++) {
                size_t o = ((size_t)b * C + c) * HW;
                dt_cpu_widen(d, fmt, dy + o, g, (size_t)HW);
                dt_cpu_widen(d, fmt, x + o, p, (size_t)HW);
                if (set) {
                    for (int i = 0; i < HW; i++)
                        q[i] = dt_bn_dx(g[i], (p[i] - m) * is, gm, is, fs, fsx, fn);
                } else {
                    dt_cpu_widen(d, fmt, dx + o, q, (size_t)HW);
                    for (int i = 0; i < HW; i++)
                        q[i] += dt_bn_dx(g[i], (p[i] - m) * is, gm, is, fs, fsx, fn);
                }
                dt_cpu_narrow(d, fmt, q, dx + o, (size_t)HW);
            }
        }
        free(g);
    }
}

// ---- convolution on bf16 storage ----

#if defined(DT_HAVE_DNNL) && defined(DT_HAVE_DNNL_BF16_GEMM)

static void cpu_im2col_bf16(dt_device *d, const uint16_t *x, int B, int C, int H, int W,
                            int KH, int KW, int stride, int pad, uint16_t *col) {
    int OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1;
    if (B <= 0 || C <= 0 || OH <= 0 || OW <= 0) return;
    size_t ohw = (size_t)OH * OW;
    long kk = (long)KH * KW, rows = (long)B * C * kk;
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if ((size_t)rows * ohw > DT_CPU_PAR_MIN)
    for (long r = 0; r < rows; r++) {
        long pc = r / kk;
        int kh = (int)(r % kk) / KW, kw = (int)(r % kk) % KW;
        dt_cpu_im2col_row(x + (size_t)pc * H * W, H, W, OH, OW, kh, kw, stride, pad,
                          col + r * ohw, sizeof(uint16_t));
    }
}

// Planes [p0, p1) of x (hw = H*W each) from their columns col (kk*ohw each): widened (or
// zero when set), col2im's own loop in fp32, one rounding; f holds one fp32 plane.
static void col2im_planes_bf16(dt_device *d, const float *col, long p0, long p1, int H, int W,
                               int KH, int KW, int stride, int pad, uint16_t *x, int set,
                               float *f) {
    int OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1;
    size_t hw = (size_t)H * W, kk = (size_t)KH * KW;
    size_t ohw = OH > 0 && OW > 0 ? (size_t)OH * OW : 0;
    for (long pc = p0; pc < p1; pc++) {
        uint16_t *xp = x + (size_t)pc * hw;
        if (set) memset(f, 0, hw * sizeof(float));
        else dt_cpu_widen(d, 2, xp, f, hw);
        if (ohw)
            dt_cpu_col2im_plane(col + (size_t)pc * kk * ohw, H, W, KH, KW, stride, pad, OH, OW,
                                f);
        dt_cpu_narrow(d, 2, f, xp, hw);
    }
}

// Per (b,c) plane, in parallel: col2im_planes_bf16.
static void cpu_col2im_bf16(dt_device *d, const float *col, int B, int C, int H, int W, int KH,
                            int KW, int stride, int pad, uint16_t *x, int set) {
    int OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1;
    if (B <= 0 || C <= 0 || H <= 0 || W <= 0) return;
    size_t hw = (size_t)H * W, kk = (size_t)KH * KW;
    size_t ohw = OH > 0 && OW > 0 ? (size_t)OH * OW : 0;
    long planes = (long)B * C;
#pragma omp parallel num_threads(d->threads) if ((size_t)planes * (kk * ohw + hw) > DT_CPU_PAR_MIN)
    {
        float *f = mallocCheck(hw * sizeof(float));
        int nt = omp_get_num_threads(), t = omp_get_thread_num();
        col2im_planes_bf16(d, col, planes * t / nt, planes * (t + 1) / nt, H, W, KH, KW, stride,
                           pad, x, set, f);
        free(f);
    }
}

// C = beta*C for an (M,N) block (beta == 0 writes zeros, as BLAS)
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

// One bf16 gemm (row-major), single-threaded inside a parallel region; `one`: outside one,
// held to one thread (oneDNN follows omp_get_max_threads() of the calling thread).
static void bgemm1(int one, int ta, int tb, int M, int N, int K, float alpha, const uint16_t *A,
                   int lda, const uint16_t *B, int ldb, float beta, float *C, int ldc) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0 || alpha == 0.0f) {
        scale_block(C, M, N, ldc, beta);
        return;
    }
    int saved = omp_get_max_threads(), hold = one && saved != 1 && !omp_in_parallel();
    if (hold) omp_set_num_threads(1);
    dnnl_status_t s = dnnl_gemm_bf16bf16f32(ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K, alpha, A,
                                            lda, B, ldb, beta, C, ldc);
    if (hold) omp_set_num_threads(saved);
    if (s != dnnl_success) {
        fprintf(stderr, "dtlab: cpu device: dnnl_gemm_bf16bf16f32 failed (oneDNN status %d)\n",
                (int)s);
        exit(DT_EXIT_RUNTIME);
    }
}

// Thread t's band of C, as device_cpu_gemm.c's sgemm_slice: columns when N >= M, else rows.
static void bgemm_slice(int t, int nt, int ta, int tb, int M, int N, int K, float alpha,
                        const uint16_t *A, int lda, const uint16_t *B, int ldb, float beta,
                        float *C, int ldc) {
    int lo, hi;
    if (N >= M) {
        dt_cpu_split16(N, t, nt, &lo, &hi);
        bgemm1(0, ta, tb, M, hi - lo, K, alpha, A, lda, tb ? B + (size_t)lo * ldb : B + lo,
               ldb, beta, C + lo, ldc);
    } else {
        dt_cpu_split16(M, t, nt, &lo, &hi);
        bgemm1(0, ta, tb, hi - lo, N, K, alpha, ta ? A + lo : A + (size_t)lo * lda, lda, B,
               ldb, beta, C + (size_t)lo * ldc, ldc);
    }
}

// Narrow gemms with a shared A, as device_cpu_gemm.c's gemm_batched_packed: the B_i side by
// side in P (K, g*N), one wide gemm Q = alpha*op(A)*P cut among the threads, Q back into C_i.
static void bgemm_packed(dt_device *d, int ta, int M, int N, int K, float alpha,
                         const uint16_t *A, int lda, const uint16_t *B, int ldb, size_t sb,
                         float beta, float *C, int ldc, size_t sc, int batch) {
    int grp = (DT_CPU_PACK_COLS + N - 1) / N;
    if (grp > batch) grp = batch;
    size_t wide = (size_t)grp * N;
    float *Q = dt_cpu_scratch(d, (size_t)M * wide);
    uint16_t *P = dt_cpu_bf16_scratch(d->ctx, (size_t)K * wide);
    for (int i0 = 0; i0 < batch; i0 += grp) {
        int n = batch - i0 < grp ? batch - i0 : grp, NW = n * N;
        const uint16_t *Bg = B + i0 * sb;
        float *Cg = C + i0 * sc;
#pragma omp parallel num_threads(d->threads)
        {
            int nt = omp_get_num_threads(), t = omp_get_thread_num();
#pragma omp for schedule(static)
            for (long r = 0; r < (long)n * K; r++) {
                long j = r / K, k = r % K;
                memcpy(P + k * NW + j * N, Bg + j * sb + k * ldb, (size_t)N * sizeof(uint16_t));
            }
            bgemm_slice(t, nt, ta, 0, M, NW, K, alpha, A, lda, P, NW, 0.0f, Q, NW);
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

// As device_cpu_gemm.c's cpu_gemm_batched: whole gemms dealt out as far as the batch
// divides by the threads, the rest cut into bands; small calls on one thread.
static void cpu_gemm_batched_bf16(dt_device *d, int ta, int tb, int M, int N, int K,
                                  float alpha, const uint16_t *A, int lda, size_t sa,
                                  const uint16_t *B, int ldb, size_t sb, float beta, float *C,
                                  int ldc, size_t sc, int batch) {
    if (batch <= 0 || M <= 0 || N <= 0) return;
    int T = d->threads, small = 2.0 * M * N * K * batch < DT_CPU_GEMM_PAR_MIN;
    if (!small && sa == 0 && !tb && batch > 1 && N < DT_CPU_PACK_BELOW && K > 0 &&
        alpha != 0.0f) {
        bgemm_packed(d, ta, M, N, K, alpha, A, lda, B, ldb, sb, beta, C, ldc, sc, batch);
        return;
    }
    if (T <= 1 || small) {
        for (int i = 0; i < batch; i++)
            bgemm1(1, ta, tb, M, N, K, alpha, A + i * sa, lda, B + i * sb, ldb, beta,
                   C + i * sc, ldc);
        return;
    }
#pragma omp parallel num_threads(T)
    {
        int nt = omp_get_num_threads(), t = omp_get_thread_num();
        int whole = batch - batch % nt;
        int lo = (int)((long)whole * t / nt), hi = (int)((long)whole * (t + 1) / nt);
        for (int i = lo; i < hi; i++)
            bgemm1(0, ta, tb, M, N, K, alpha, A + i * sa, lda, B + i * sb, ldb, beta,
                   C + i * sc, ldc);
        for (int i = whole; i < batch; i++)
            bgemm_slice(t, nt, ta, tb, M, N, K, alpha, A + i * sa, lda, B + i * sb, ldb, beta,
                        C + i * sc, ldc);
    }
}

// fp32 room for gemm_batched_bf16_h (ctx->hbuf), grown on demand and kept
static float *hbuf(dt_device *d, size_t floats) {
    dt_cpu_ctx *ctx = d->ctx;
    if (ctx->hbuf_n < floats) {
        free(ctx->hbuf);
        ctx->hbuf = d->alloc(d, floats * sizeof(float));
        ctx->hbuf_n = floats;
    }
    return ctx->hbuf;
}

// Rows [lo, hi) of an (M,N) item: f (row stride N) = float(c) (row stride ldc) when widen,
// else c = bf16(f)
static void rows_h(dt_device *d, int widen, float *f, uint16_t *c, int ldc, int N, int lo,
                   int hi) {
    for (int m = lo; m < hi; m++) {
        if (widen) dt_cpu_widen(d, 2, c + (size_t)m * ldc, f + (size_t)m * N, (size_t)N);
        else dt_cpu_narrow(d, 2, f + (size_t)m * N, c + (size_t)m * ldc, (size_t)N);
    }
}

// gemm_batched_bf16 with bf16 C (nn/device.h gemm_batched_bf16_h): the bf16 convolutions'
// outputs (y, and the 1x1 convs' dx) without an fp32 copy of the whole batch. Each thread
// runs its whole items one at a time into an fp32 block of its own (M*N floats, widened from
// C first where beta != 0) and rounds it into C at once, while the block is still in cache;
// the fp32 result never makes the round trip through memory that an fp32 buffer of the
// batch and a separate rounding pass cost. Bits: the items are multiplied by the calls
// cpu_gemm_batched_bf16 makes (whole items single-threaded, the last batch % threads items
// cut into bands of C), so each fp32 element is the same sum; the small and packed cases go
// through cpu_gemm_batched_bf16 itself into a buffer of the batch.
static void cpu_gemm_batched_bf16_h(dt_device *d, int ta, int tb, int M, int N, int K,
                                    float alpha, const uint16_t *A, int lda, size_t sa,
                                    const uint16_t *B, int ldb, size_t sb, float beta,
                                    uint16_t *C, int ldc, size_t sc, int batch) {
    if (batch <= 0 || M <= 0 || N <= 0) return;
    int T = d->threads, small = 2.0 * M * N * K * batch < DT_CPU_GEMM_PAR_MIN;
    int packed = !small && sa == 0 && !tb && batch > 1 && N < DT_CPU_PACK_BELOW && K > 0 &&
                 alpha != 0.0f;
    size_t mn = (size_t)M * N;
    if (packed || T <= 1 || small) {
        float *f = hbuf(d, mn * batch);
        if (beta != 0.0f)
            for (int i = 0; i < batch; i++) rows_h(d, 1, f + i * mn, C + i * sc, ldc, N, 0, M);
        cpu_gemm_batched_bf16(d, ta, tb, M, N, K, alpha, A, lda, sa, B, ldb, sb, beta, f, N, mn,
                              batch);
        for (int i = 0; i < batch; i++) rows_h(d, 0, f + i * mn, C + i * sc, ldc, N, 0, M);
        return;
    }
    float *f = hbuf(d, mn * (size_t)(T + 1));
#pragma omp parallel num_threads(T)
    {
        int nt = omp_get_num_threads(), t = omp_get_thread_num();
        int whole = batch - batch % nt;
        int lo = (int)((long)whole * t / nt), hi = (int)((long)whole * (t + 1) / nt);
        float *mine = f + (size_t)t * mn, *band = f + (size_t)T * mn;
        for (int i = lo; i < hi; i++) {
            if (beta != 0.0f) rows_h(d, 1, mine, C + i * sc, ldc, N, 0, M);
            bgemm1(0, ta, tb, M, N, K, alpha, A + i * sa, lda, B + i * sb, ldb, beta, mine, N);
            rows_h(d, 0, mine, C + i * sc, ldc, N, 0, M);
        }
        for (int i = whole; i < batch; i++) {  // cut into bands, as cpu_gemm_batched_bf16
            int r0 = (int)((long)M * t / nt), r1 = (int)((long)M * (t + 1) / nt);
            if (beta != 0.0f) rows_h(d, 1, band, C + i * sc, ldc, N, r0, r1);
#pragma omp barrier
            bgemm_slice(t, nt, ta, tb, M, N, K, alpha, A + i * sa, lda, B + i * sb, ldb, beta,
                        band, N);
#pragma omp barrier
            rows_h(d, 0, band, C + i * sc, ldc, N, r0, r1);
#pragma omp barrier
        }
    }
}

// The backward-data pass of a bf16 conv on n images (nn/device.h gemm_col2im_bf16): the
// columns' gradient dcol_i = w^T dy_i (K, N) in fp32, then dx_i = bf16((set ? 0 : dx_i) +
// col2im(dcol_i)). As gemm_batched_bf16_h: each thread multiplies its whole images one at a
// time into an fp32 block of its own and runs col2im on the image's planes at once, while
// the block is in cache, instead of writing the chunk's columns to memory for a col2im pass
// to read back; the last n % threads images are cut into bands of dcol, then col2im'd
// plane by plane by all the threads. The same gemm calls as cpu_gemm_batched_bf16 and the
// same per-plane loop as cpu_col2im_bf16: the same bits (small and packed cases go through
// those two).
static void cpu_gemm_col2im_bf16(dt_device *d, int K, int N, int OC, const uint16_t *w,
                                 const uint16_t *dy, size_t sdy, int n, int C, int H, int W,
                                 int KH, int KW, int stride, int pad, uint16_t *dx, int set) {
    if (n <= 0 || C <= 0 || H <= 0 || W <= 0) return;
    int T = d->threads, small = 2.0 * K * N * OC * n < DT_CPU_GEMM_PAR_MIN;
    int packed = !small && n > 1 && N < DT_CPU_PACK_BELOW && OC > 0;
    size_t kn = (size_t)K * N, hw = (size_t)H * W;
    if (packed || T <= 1 || small || K <= 0 || N <= 0) {
        float *f = hbuf(d, kn * n + 1);
        cpu_gemm_batched_bf16(d, 1, 0, K, N, OC, 1.0f, w, K, 0, dy, N, sdy, 0.0f, f, N, kn, n);
        cpu_col2im_bf16(d, f, n, C, H, W, KH, KW, stride, pad, dx, set);
        return;
    }
    float *f = hbuf(d, kn * (size_t)(T + 1));
#pragma omp parallel num_threads(T)
    {
        int nt = omp_get_num_threads(), t = omp_get_thread_num();
        int whole = n - n % nt;
        int lo = (int)((long)whole * t / nt), hi = (int)((long)whole * (t + 1) / nt);
        float *mine = f + (size_t)t * kn, *band = f + (size_t)T * kn;
        float *plane = mallocCheck(hw * sizeof(float));
        for (int i = lo; i < hi; i++) {
            bgemm1(0, 1, 0, K, N, OC, 1.0f, w, K, dy + i * sdy, N, 0.0f, mine, N);
            col2im_planes_bf16(d, mine, 0, C, H, W, KH, KW, stride, pad, dx + i * C * hw, set,
                               plane);
        }
        for (int i = whole; i < n; i++) {  // cut into bands, as cpu_gemm_batched_bf16
#pragma omp barrier
            bgemm_slice(t, nt, 1, 0, K, N, OC, 1.0f, w, K, dy + i * sdy, N, 0.0f, band, N);
#pragma omp barrier
            col2im_planes_bf16(d, band, (long)C * t / nt, (long)C * (t + 1) / nt, H, W, KH, KW,
                               stride, pad, dx + i * C * hw, set, plane);
        }
        free(plane);
    }
}

// As cpu_gemm_batched_sum: each thread owns a band of C and runs the whole batch into it.
static void cpu_gemm_batched_sum_bf16(dt_device *d, int ta, int tb, int M, int N, int K,
                                      float alpha, const uint16_t *A, int lda, size_t sa,
                                      const uint16_t *B, int ldb, size_t sb, float beta,
                                      float *C, int ldc, int batch) {
    if (M <= 0 || N <= 0) return;
    if (batch <= 0) {
        scale_block(C, M, N, ldc, beta);
        return;
    }
    int T = d->threads;
    if (T <= 1 || 2.0 * M * N * K * batch < DT_CPU_GEMM_PAR_MIN) {
        for (int i = 0; i < batch; i++)
            bgemm1(1, ta, tb, M, N, K, alpha, A + i * sa, lda, B + i * sb, ldb,
                   i == 0 ? beta : 1.0f, C, ldc);
        return;
    }
#pragma omp parallel num_threads(T)
    {
        int nt = omp_get_num_threads(), t = omp_get_thread_num();
        for (int i = 0; i < batch; i++)
            bgemm_slice(t, nt, ta, tb, M, N, K, alpha, A + i * sa, lda, B + i * sb, ldb,
                        i == 0 ? beta : 1.0f, C, ldc);
    }
}
#endif

void dt_cpu_install_half(dt_device *d) {
    d->bn_forward_train_h = bn_forward_train_h;
    d->bn_forward_eval_h = bn_forward_eval_h;
    d->bn_backward_h = bn_backward_h;
#if defined(DT_HAVE_DNNL) && defined(DT_HAVE_DNNL_BF16_GEMM)
    if (((dt_cpu_ctx *)d->ctx)->bf16_gemm) {
        d->im2col_bf16 = cpu_im2col_bf16;
        d->col2im_bf16 = cpu_col2im_bf16;
        d->gemm_batched_bf16 = cpu_gemm_batched_bf16;
        d->gemm_batched_sum_bf16 = cpu_gemm_batched_sum_bf16;
        d->gemm_batched_bf16_h = cpu_gemm_batched_bf16_h;
        d->gemm_col2im_bf16 = cpu_gemm_col2im_bf16;
    }
#endif
}
