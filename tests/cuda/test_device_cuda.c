// test_device_cuda.c — the cuda device (real/cuda) checked primitive by primitive against
// the cpu device (nn/device_cpu*.c) on the same fresh random inputs: memory and copies,
// pinned memory and the asynchronous copies with their tickets, the three gemms (tight on
// fp32 with DT_CUDA_DETERMINISTIC, loose on TF32 without), and determinism (the same bits
// twice). Elementwise, optimizer and fp16 checks: test_device_cuda_elem.c; the network
// primitives: test_device_cuda_nn.c. Exits 77 (ctest: skipped) on a machine with no GPU.
// Not here: any float64 reference of its own — the cpu device is tested against those in
// tests/unit, so a pass here carries that proof over to the GPU.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_check.h"
#include "device_cuda.h"
#include "dt.h"
#include "kernels.h"

// ---- memory: alloc's zero fill, host copies, device copies ----

void cc_check_memory(cc_ctx *t) {
    dt_device *g = t->gpu;
    char nm[160];
    const size_t sizes[] = {1, 3, 1001, ((size_t)4 << 20) + 3};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s], tot = n + 16;
        unsigned char *h = mallocCheck(tot), *want = callocCheck(tot, 1);
        for (size_t i = 0; i < tot; i++) h[i] = (unsigned char)cc_next(t);
        // a freed block full of data, then a fresh allocation (often the same block): zeros
        void *p = g->alloc(g, tot);
        g->from_host(g, p, h, tot);
        g->free(g, p);
        p = g->alloc(g, tot);
        unsigned char *back = cc_host_copy(g, p, tot);
        snprintf(nm, sizeof nm, "alloc zero-fills %zu bytes after a dirty free", tot);
        cc_cmp_bytes(t, nm, back, want, tot);
        free(back);
        // from_host at a byte offset: only [5, 5+n) changes
        memset(want, 0, tot);
        memcpy(want + 5, h, n);
        g->from_host(g, (char *)p + 5, h, n);
        back = cc_host_copy(g, p, tot);
        snprintf(nm, sizeof nm, "from_host/to_host %zu bytes at byte offset 5", n);
        cc_cmp_bytes(t, nm, back, want, tot);
        free(back);
        // device copy to another offset: only [3, 3+n) of q changes
        void *q = g->alloc(g, tot);
        g->copy(g, (char *)q + 3, (char *)p + 5, n);
        memset(want, 0, tot);
        memcpy(want + 3, h, n);
        back = cc_host_copy(g, q, tot);
        snprintf(nm, sizeof nm, "copy %zu bytes device to device, offsets 5 -> 3", n);
        cc_cmp_bytes(t, nm, back, want, tot);
        free(back);
        g->free(g, p);
        g->free(g, q);
        free(h);
        free(want);
    }
}

// ---- pinned memory, asynchronous copies, tickets (nn/device.h "memory the host cannot
// read"; nn/coll/coll_stage.c polls these while MPI runs) ----

// polls done(ticket) until it says 1 or 30 s pass; returns 1 if it did, counts the polls
static int wait_ticket(dt_device *g, uint64_t tk, long *polls) {
    double end = dt_now_s() + 30.0;
    *polls = 0;
    while (!g->done(g, tk)) {
        ++*polls;
        if (dt_now_s() > end) return 0;
    }
    return 1;
}

void cc_check_async(cc_ctx *t) {
    dt_device *g = t->gpu;
    char nm[200];
    // alloc_host: pinned and zero-filled, also where a dirty block comes back
    size_t hb = (size_t)1 << 20;
    unsigned char *h = g->alloc_host(g, hb), *zeros = callocCheck(hb, 1);
    memset(h, 0xAB, hb);
    g->free_host(g, h);
    h = g->alloc_host(g, hb);
    cc_cmp_bytes(t, "alloc_host zero-fills 1 MiB after a dirty free_host", h, zeros, hb);
    g->free_host(g, h);
    free(zeros);

    // from_host_async -> scale (compute stream) -> to_host_async -> mark, done() polled:
    // the scale must see the copied data and the copy back must see the scale
    size_t n = ((size_t)3 << 20) + 5, bytes = n * sizeof(float);
    float *src = g->alloc_host(g, bytes), *dst = g->alloc_host(g, bytes);
    float *want = mallocCheck(bytes);
    for (size_t i = 0; i < n; i++) src[i] = cc_unif(t, -1, 1), want[i] = 2.0f * src[i];
    float *x = g->alloc(g, bytes);
    g->from_host_async(g, x, src, bytes);
    g->scale(g, x, 2.0f, n);
    g->to_host_async(g, dst, x, bytes);
    long polls;
    int fin = wait_ticket(g, g->mark(g), &polls);
    cc_cmp_scalar(t, "done(mark()) turns 1 within 30 s of polling", fin, 1, 1, 0);
    snprintf(nm, sizeof nm, "from_host_async -> scale -> to_host_async, %zu floats, read "
             "after done() (%ld polls)", n, polls);
    cc_cmp_exact(t, nm, dst, want, n);

    // sync waits for the copy stream too
    for (size_t i = 0; i < n; i++) src[i] = cc_unif(t, -1, 1), want[i] = src[i];
    g->from_host_async(g, x, src, bytes);
    memset(dst, 0, bytes);
    g->to_host_async(g, dst, x, bytes);
    g->sync(g);
    cc_cmp_exact(t, "from_host_async -> to_host_async, read after sync (no ticket)", dst, want,
                 n);

    // 300 tickets, more than the ring holds (256): once the last is done, every older one
    // is; the data of all the copies is seen by a later primitive (to_host)
    enum { NT = 300, CHUNK = 1000 };
    uint64_t tk[NT];
    for (size_t i = 0; i < (size_t)NT * CHUNK; i++) src[i] = cc_unif(t, -1, 1), want[i] = src[i];
    for (int i = 0; i < NT; i++) {
        g->from_host_async(g, x + (size_t)i * CHUNK, src + (size_t)i * CHUNK,
                           CHUNK * sizeof(float));
        tk[i] = g->mark(g);
    }
    fin = wait_ticket(g, tk[NT - 1], &polls);
    int flags[NT], ones[NT];
    for (int i = 0; i < NT; i++) flags[i] = g->done(g, tk[i]), ones[i] = 1;
    snprintf(nm, sizeof nm, "done() of all %d tickets once the last is done (%s)", NT,
             fin ? "it finished" : "it never finished");
    cc_cmp_bytes(t, nm, flags, ones, sizeof flags);
    float *back = cc_host_copy(g, x, (size_t)NT * CHUNK * sizeof(float));
    cc_cmp_exact(t, "300 from_host_async chunks seen by a later to_host", back, want,
                 (size_t)NT * CHUNK);
    free(back);
    g->free(g, x);
    g->free_host(g, src);
    g->free_host(g, dst);
    free(want);
}

// ---- gemm, gemm_batched, gemm_batched_sum ----

typedef struct {
    int kind;  // 0 gemm, 1 gemm_batched, 2 gemm_batched_sum
    int ta, tb, M, N, K, pad, batch;  // pad: added to every minimal leading dimension
    size_t sa;                        // stride of A; sb, sc: one matrix + 7 / + 9 (gaps)
    float alpha, beta;
} gcase;

static const char *kind_name[] = {"gemm", "gemm_batched", "gemm_batched_sum"};

static void round_inputs(int half, float *x, size_t n) {
    for (size_t i = 0; i < n && half; i++)
        x[i] = half == 2 ? dt_bf16_to_f32(dt_f32_to_bf16(x[i]))
                         : dt_f16_to_f32(dt_f32_to_f16(x[i]));
}

// Runs one case on the cpu and on cuda device g and compares all of C, the gaps between
// and beside the matrices included (they must not change). Tolerance: the classic bound
// |fl(sum_k a_k b_k) - sum_k a_k b_k| <= K*u*sum_k |a_k b_k| (u = 2^-24; Higham, Accuracy
// and Stability, 3.1) for each side, so |cuda - cpu| <= (K+2)*2^-23 * mag with
// mag = |alpha|*sum|a||b| + |beta*c| (+2: alpha and beta); the batched sum adds `batch`
// more terms. `extra` is TF32's input rounding: 10 mantissa bits, <= 2^-10 per operand.
// `half`: the device's gemm_half, 0 or the inputs rounded to fp16 (1) / bf16 (2) first.
static void gemm_case_h(cc_ctx *t, dt_device *g, const gcase *c, double extra, const char *tag,
                        int half) {
    int M = c->M, N = c->N, K = c->K, batch = c->kind == 0 ? 1 : c->batch;
    int lda = (c->ta ? M : K) + c->pad, ldb = (c->tb ? K : N) + c->pad, ldc = N + c->pad;
    if (lda < 1) lda = 1;
    if (ldb < 1) ldb = 1;
    if (ldc < 1) ldc = 1;
    size_t one_a = (size_t)(c->ta ? K : M) * lda, one_b = (size_t)(c->tb ? N : K) * ldb;
    size_t one_c = (size_t)M * ldc, sa = c->sa, sb = one_b + 7, sc = one_c + 9;
    int nb = batch > 0 ? batch : 1, nc_items = c->kind == 2 ? 1 : nb;
    size_t na = (nb - 1) * sa + one_a + 1, nbb = (nb - 1) * sb + one_b + 1;
    size_t nc = (nc_items - 1) * sc + one_c + 16;
    float *A = cc_rand(t, na, -1, 1), *B = cc_rand(t, nbb, -1, 1), *C0 = cc_rand(t, nc, -1, 1);
    if (c->beta == 0.0f && one_c > 0) C0[0] = NAN, C0[one_c - 1] = NAN;  // beta 0 ignores C
    round_inputs(half, A, na);  // mixed precision: half values held in fp32 (net_half.c)
    round_inputs(half, B, nbb);
    cc_buf a = cc_new(t, g, A, na * 4), b = cc_new(t, g, B, nbb * 4), cb = cc_new(t, g, C0, nc * 4);
    dt_device *d[2] = {t->cpu, g};
    g->gemm_half = half;
    for (int k = 0; k < 2; k++) {
        float *pa = k ? a.g : a.c, *pb = k ? b.g : b.c, *pc = k ? cb.g : cb.c;
        if (c->kind == 0)
            d[k]->gemm(d[k], c->ta, c->tb, M, N, K, c->alpha, pa, lda, pb, ldb, c->beta, pc, ldc);
        else if (c->kind == 1)
            d[k]->gemm_batched(d[k], c->ta, c->tb, M, N, K, c->alpha, pa, lda, sa, pb, ldb, sb,
                               c->beta, pc, ldc, sc, c->batch);
        else
            d[k]->gemm_batched_sum(d[k], c->ta, c->tb, M, N, K, c->alpha, pa, lda, sa, pb, ldb,
                                   sb, c->beta, pc, ldc, c->batch);
    }
    g->gemm_half = 0;
    double *mag = mallocCheck(nc * sizeof(double));
    for (size_t i = 0; i < nc; i++) mag[i] = fabs(C0[i]);  // untouched cells: exact
    for (int it = 0; it < nc_items && batch > 0; it++) {
        for (int m = 0; m < M; m++) {
            for (int n = 0; n < N; n++) {
                double s = 0.0;
                for (int i = c->kind == 2 ? 0 : it; i < (c->kind == 2 ? batch : it + 1); i++) {
                    const float *Ai = A + i * sa, *Bi = B + i * sb;
                    for (int k = 0; k < K; k++) {
                        float av = c->ta ? Ai[(size_t)k * lda + m] : Ai[(size_t)m * lda + k];
                        float bv = c->tb ? Bi[(size_t)n * ldb + k] : Bi[(size_t)k * ldb + n];
                        s += fabs((double)av * bv);
                    }
                }
                size_t ci = it * sc + (size_t)m * ldc + n;
                mag[ci] = fabs(c->alpha) * s + (c->beta == 0.0f ? 0.0 : fabs(c->beta * C0[ci]));
            }
        }
    }
    if (batch <= 0 && c->kind == 2) {  // C = beta*C
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) {
                size_t ci = (size_t)m * ldc + n;
                mag[ci] = c->beta == 0.0f ? 0.0 : fabs(c->beta * C0[ci]);
            }
    }
    double tol = (K + (c->kind == 2 ? batch : 0) + 2) * CC_EPS + extra;
    char nm[200];
    snprintf(nm, sizeof nm, "%s %s %c%c M=%d N=%d K=%d batch=%d ld+%d sa=%zu alpha=%g beta=%g",
             kind_name[c->kind], tag, c->ta ? 'T' : 'N', c->tb ? 'T' : 'N', M, N, K, c->batch,
             c->pad, sa, c->alpha, c->beta);
    cc_close(t, nm, &cb, mag, tol);
    cc_free(t, &a);
    cc_free(t, &b);
    cc_free(t, &cb);
    free(A);
    free(B);
    free(C0);
    free(mag);
}

static void gemm_case(cc_ctx *t, dt_device *g, const gcase *c, double extra, const char *tag) {
    gemm_case_h(t, g, c, extra, tag, 0);
}

void cc_check_gemm(cc_ctx *t) {
    const double tf32 = 2.0 / 1024.0;  // two operands rounded to 10 mantissa bits
    for (int ta = 0; ta < 2; ta++) {
        for (int tb = 0; tb < 2; tb++) {
            // plain gemm with slack in every leading dimension, beta 0 (C holds NaNs) and not
            gemm_case(t, t->det, &(gcase){0, ta, tb, 37, 53, 129, 3, 1, 0, 0.7f, 0.0f}, 0, "fp32");
            gemm_case(t, t->det, &(gcase){0, ta, tb, 37, 53, 129, 5, 1, 0, 0.7f, -1.3f}, 0, "fp32");
            gemm_case(t, t->gpu, &(gcase){0, ta, tb, 37, 53, 129, 5, 1, 0, 0.7f, -1.3f}, tf32,
                      "tf32");
            // batched: A shared (stride 0) for ta == tb, else its own; gaps between the C_i
            size_t sa = ta == tb ? 0 : (size_t)19 * 33 + 11;
            gemm_case(t, t->det, &(gcase){1, ta, tb, 19, 45, 33, 2, 5, sa, 1.0f, 0.0f}, 0, "fp32");
            gemm_case(t, t->det, &(gcase){1, ta, tb, 19, 45, 33, 0, 5, sa, -0.5f, 1.0f}, 0,
                      "fp32");
            gemm_case(t, t->det, &(gcase){2, ta, tb, 13, 17, 29, 0, 4, 13 * 29 + 3, 1.0f, 1.0f},
                      0, "fp32");
            gemm_case(t, t->det, &(gcase){2, ta, tb, 13, 17, 29, 3, 4, 13 * 29 + 3, 0.5f, 0.0f},
                      0, "fp32");
        }
    }
    // degenerate and thin shapes: 1x1x1, K = 0 (C = beta*C), M = 0 (nothing), alpha = 0
    gemm_case(t, t->det, &(gcase){0, 0, 0, 1, 1, 1, 0, 1, 0, 1.0f, 0.0f}, 0, "fp32");
    gemm_case(t, t->det, &(gcase){0, 1, 0, 1, 300, 257, 1, 1, 0, 1.0f, 0.5f}, 0, "fp32");
    gemm_case(t, t->det, &(gcase){0, 0, 1, 255, 1, 33, 0, 1, 0, 2.0f, 0.0f}, 0, "fp32");
    gemm_case(t, t->det, &(gcase){0, 0, 0, 5, 7, 0, 1, 1, 0, 1.0f, 0.5f}, 0, "fp32");
    gemm_case(t, t->det, &(gcase){0, 0, 0, 5, 7, 0, 1, 1, 0, 1.0f, 0.0f}, 0, "fp32");
    gemm_case(t, t->det, &(gcase){0, 0, 0, 0, 7, 5, 1, 1, 0, 1.0f, 0.0f}, 0, "fp32");
    gemm_case(t, t->det, &(gcase){0, 1, 1, 9, 10, 11, 1, 1, 0, 0.0f, 2.0f}, 0, "fp32");
    gemm_case(t, t->det, &(gcase){1, 0, 0, 9, 10, 11, 1, 1, 0, 1.0f, 0.0f}, 0, "fp32");
    gemm_case(t, t->det, &(gcase){1, 0, 0, 9, 10, 11, 1, 0, 0, 1.0f, 0.0f}, 0, "fp32");
    gemm_case(t, t->det, &(gcase){2, 0, 1, 9, 10, 11, 0, 1, 130, 1.0f, 0.0f}, 0, "fp32");
    gemm_case(t, t->det, &(gcase){2, 0, 1, 9, 10, 11, 0, 0, 130, 1.0f, 0.5f}, 0, "fp32");
    // the shapes of training: a linear layer's dW (NT), conv forward W * col_b with W shared
    // (the cpu's packed path), conv dW summed over the batch (packed C: the cuda scratch path)
    gcase big = {0, 0, 1, 512, 384, 1000, 0, 1, 0, 1.0f, 0.0f};
    gcase conv = {1, 0, 0, 64, 49, 288, 0, 8, 0, 1.0f, 0.0f};
    gcase dw = {2, 0, 1, 64, 576, 196, 0, 8, 64 * 196, 1.0f, 1.0f};
    gemm_case(t, t->det, &big, 0, "fp32");
    gemm_case(t, t->det, &conv, 0, "fp32");
    gemm_case(t, t->det, &dw, 0, "fp32");
    gemm_case(t, t->gpu, &big, tf32, "tf32");
    gemm_case(t, t->gpu, &conv, tf32, "tf32");
    gemm_case(t, t->gpu, &dw, tf32, "tf32");
    // mixed precision: inputs that are halfs multiply exactly on the tensor cores and add
    // in fp32, so the fp32 bound holds with no extra term (cublasGemmEx, CUBLAS_COMPUTE_32F)
    for (int h = 1; h <= 2; h++) {
        const char *tag = h == 1 ? "fp16 inputs" : "bf16 inputs";
        gcase cases[] = {big, conv, dw, {0, 1, 0, 37, 53, 129, 5, 1, 0, 0.7f, -1.3f},
                         {1, 0, 1, 19, 45, 33, 2, 5, 19 * 33 + 11, 1.0f, 0.0f},
                         {2, 1, 1, 13, 17, 29, 3, 4, 13 * 29 + 3, 0.5f, 0.0f}};
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            gemm_case_h(t, t->det, &cases[i], 0, tag, h);
            gemm_case_h(t, t->gpu, &cases[i], 0, tag, h);
        }
    }
}

// ---- determinism: with DT_CUDA_DETERMINISTIC the reductions run in a fixed order, so the
// same inputs give the same bits twice (LARS norms and BN statistics must agree across
// ranks and runs). Each case: random inputs, outputs reset to the same values, run twice.

typedef void (*det_fn)(dt_device *d, void **b);
// bn_backward (16,64,3136): b = dx, dgamma, dbeta | dy, x, gamma, mean, invstd
static void det_bn(dt_device *d, void **b) {
    d->bn_backward(d, b[3], b[4], 16, 64, 3136, b[5], b[6], b[7], b[0], b[1], b[2]);
}
static void det_bias(dt_device *d, void **b) { d->bias_backward(d, b[1], 16, 32, 6273, b[0]); }
static void det_col2im(dt_device *d, void **b) {
    d->col2im(d, b[1], 4, 32, 56, 56, 3, 3, 1, 1, b[0]);
}
// maxpool (8,64,112,112) 3x3/s2/p1 -> 56x56: b = dx | dy, argmax (from a forward on x)
static void det_maxpool(dt_device *d, void **b) {
    d->maxpool_backward(d, b[1], b[2], 8, 64, 112, 112, 56, 56, b[0]);
}
static void det_gemm(dt_device *d, void **b) {
    d->gemm(d, 0, 1, 512, 384, 1000, 1.0f, b[1], 1000, b[2], 1000, 0.0f, b[0], 384);
}
static void det_gemm_sum(dt_device *d, void **b) {
    d->gemm_batched_sum(d, 0, 1, 64, 576, 196, 1.0f, b[1], 196, 64 * 196, b[2], 196, 576 * 196,
                        1.0f, b[0], 576, 8);
}

typedef struct {
    const char *name;
    det_fn run;
    int nout, nin;
    size_t n[8];  // floats in each buffer, outputs first
} det_case;

static void det_twice(cc_ctx *t, const det_case *k) {
    dt_device *g = t->det;
    int nb = k->nout + k->nin;
    void *b[8], *first[8];
    float *init[8];
    for (int i = 0; i < nb; i++) {
        init[i] = cc_rand(t, k->n[i], i < k->nout ? -1 : 0.5f, i < k->nout ? 1 : 1.5f);
        b[i] = g->alloc(g, k->n[i] * sizeof(float));
        g->from_host(g, b[i], init[i], k->n[i] * sizeof(float));
    }
    if (k->run == det_maxpool) {  // a real argmax from a forward pass
        float *x = g->alloc(g, (size_t)8 * 64 * 112 * 112 * sizeof(float)), *y = b[1];
        float *hx = cc_rand(t, (size_t)8 * 64 * 112 * 112, -1, 1);
        g->from_host(g, x, hx, (size_t)8 * 64 * 112 * 112 * sizeof(float));
        g->maxpool_forward(g, x, 8, 64, 112, 112, 3, 2, 1, y, b[2]);
        g->from_host(g, b[1], init[1], k->n[1] * sizeof(float));  // dy back to random
        g->free(g, x);
        free(hx);
    }
    for (int run = 0; run < 2; run++) {
        for (int i = 0; i < k->nout; i++)
            g->from_host(g, b[i], init[i], k->n[i] * sizeof(float));
        k->run(g, b);
        for (int i = 0; i < k->nout; i++) {
            void *h = cc_host_copy(g, b[i], k->n[i] * sizeof(float));
            if (run == 0) {
                first[i] = h;
                continue;
            }
            char nm[160];
            snprintf(nm, sizeof nm, "deterministic: %s output %d, twice -> same bits", k->name, i);
            cc_cmp_bytes(t, nm, h, first[i], k->n[i] * sizeof(float));
            free(h);
            free(first[i]);
        }
    }
    for (int i = 0; i < nb; i++) g->free(g, b[i]), free(init[i]);
}

void cc_check_determinism(cc_ctx *t) {
    size_t bn = (size_t)16 * 64 * 3136, col = (size_t)4 * 32 * 9 * 56 * 56;
    size_t mx = (size_t)8 * 64 * 112 * 112, my = (size_t)8 * 64 * 56 * 56;
    const det_case cases[] = {
        {"bn_backward 16x64x3136 (dx, dgamma, dbeta)", det_bn, 3, 5,
         {bn, 64, 64, bn, bn, 64, 64, 64}},
        {"bias_backward 16x32x6273", det_bias, 1, 1, {32, (size_t)16 * 32 * 6273}},
        {"col2im 4x32x56x56 k3 s1 p1", det_col2im, 1, 1, {(size_t)4 * 32 * 56 * 56, col}},
        {"maxpool_backward 8x64x112x112 k3 s2 p1", det_maxpool, 1, 2, {mx, my, my}},
        {"gemm NT 512x384x1000", det_gemm, 1, 2, {512 * 384, 512 * 1000, 384 * 1000}},
        {"gemm_batched_sum NT 64x576x196 batch 8", det_gemm_sum, 1, 2,
         {64 * 576, (size_t)8 * 64 * 196, (size_t)8 * 576 * 196}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) det_twice(t, &cases[i]);
    size_t n = ((size_t)3 << 20) + 7;
    float *hx = cc_rand(t, n, -10, 10), *x = t->det->alloc(t->det, n * sizeof(float));
    t->det->from_host(t->det, x, hx, n * sizeof(float));
    double s[2] = {t->det->sumsq(t->det, x, n), t->det->sumsq(t->det, x, n)};
    cc_cmp_bytes(t, "deterministic: sumsq 3 M, twice -> same bits", &s[1], &s[0], sizeof(double));
    t->det->free(t->det, x);
    free(hx);
}

int main(void) {
    if (dt_cuda_device_count() == 0) {
        printf("SKIPPED: no CUDA GPU on this machine (the cuda device tests need one)\n");
        return 77;
    }
    cc_ctx t = {0};
    t.rng = cc_seed();
    const char *brk = getenv("DT_CUDA_TEST_BREAK");
    t.brk = brk && atoi(brk) != 0;
    dt_error err = {0};
    t.gpu = dt_device_cuda_create(0, 0, &err);
    if (t.gpu) t.det = dt_device_cuda_create(0, DT_CUDA_DETERMINISTIC, &err);
    t.cpu = dt_device_cpu_create(1);
    if (!t.gpu || !t.det || !t.cpu) {
        fprintf(stderr, "test_device_cuda: cannot create the devices: %s\n", err.msg);
        return 1;
    }
    char desc[256];
    dt_cuda_describe(0, desc, sizeof desc);
    printf("# gpu 0: %s%s\n", desc, t.brk ? " — BREAK MODE: every check must FAIL" : "");

    cc_check_memory(&t);
    cc_check_async(&t);
    cc_check_gemm(&t);
    cc_check_elementwise(&t);
    cc_check_optim_f16(&t);
    cc_check_conv_bias(&t);
    cc_check_bn(&t);
    cc_check_half_conv(&t);
    cc_check_bn_fused(&t);
    cc_check_pool_loss(&t);
    cc_check_determinism(&t);

    t.cpu->destroy(t.cpu);
    t.det->destroy(t.det);
    t.gpu->destroy(t.gpu);
    if (t.brk) {
        printf("# break mode: %d of %d checks failed (all must)\n", t.failed, t.checks);
        return t.failed == t.checks ? 0 : 1;
    }
    printf("# %d checks, %d failed\n", t.checks, t.failed);
    return t.failed ? 1 : 0;
}
