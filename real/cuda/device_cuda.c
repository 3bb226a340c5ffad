// device_cuda.c — the cuda device (device_cuda.h): memory, streams, the copy tickets that
// the allreduce's host staging polls, cuBLAS gemms (row-major through the column-major
// transpose identity C^T = op(B)^T op(A)^T), elementwise ops, reductions and casts. The
// kernels are in kernels_*.cu, their per-element math in nn/kernels.h (shared with the cpu
// device). The network primitives' host side is device_cuda_nn.c.
// Every primitive queues work on one stream and returns; the ones that return a value to
// the host (sumsq, nonfinite, softmax_xent_forward) and to_host/from_host synchronise.
#include "device_cuda.h"

#include <math.h>
#include <string.h>

#include "cuda_internal.h"


void dt_cuda_fail(const char *what, const char *msg, const char *file, int line) {
    fprintf(stderr, "dtlab: CUDA error at %s:%d: %s: %s\n", file, line, what, msg);
    exit(DT_EXIT_RUNTIME);
}

static dt_cuda_ctx *ctx_of(dt_device *d) { return (dt_cuda_ctx *)d->ctx; }
#define ST(d) (ctx_of(d)->stream)

int dt_cuda_device_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();  // clear it: no driver or no device is not an error here
        return 0;
    }
    return n;
}

void dt_cuda_describe(int ordinal, char *buf, size_t n) {
    struct cudaDeviceProp p;
    if (n) buf[0] = 0;
    if (ordinal < 0 || ordinal >= dt_cuda_device_count()) return;
    if (cudaGetDeviceProperties(&p, ordinal) != cudaSuccess) return;
    snprintf(buf, n, "%s (sm_%d%d, %d SMs, %.1f GiB)", p.name, p.major, p.minor,
             p.multiProcessorCount, (double)p.totalGlobalMem / (1 << 30));
}

// A device block of at least `bytes` kept in *p (*have bytes). Growing waits for the
// stream: work already queued may still read the old block.
static void *grow(dt_cuda_ctx *c, void **p, size_t *have, size_t bytes) {
    if (*have < bytes) {
        cudaCheck(cudaStreamSynchronize(c->stream));
        if (*p) cudaCheck(cudaFree(*p));
        size_t want = bytes + bytes / 4;
        cudaCheck(cudaMalloc(p, want));
        *have = want;
    }
    return *p;
}

void *dt_cuda_scratch(dt_device *d, size_t bytes) {
    dt_cuda_ctx *c = ctx_of(d);
    return grow(c, &c->scratch, &c->scratch_bytes, bytes);
}

// Pinned host scratch for reduction results (read after a stream sync).
void *dt_cuda_host_scratch(dt_device *d, size_t bytes) {
    dt_cuda_ctx *c = ctx_of(d);
    if (c->host_scratch_bytes < bytes) {
        cudaCheck(cudaStreamSynchronize(c->stream));
        if (c->host_scratch) cudaCheck(cudaFreeHost(c->host_scratch));
        cudaCheck(cudaMallocHost(&c->host_scratch, bytes));
        c->host_scratch_bytes = bytes;
    }
    return c->host_scratch;
}

// ---- memory ----

static void *cu_alloc(dt_device *d, size_t bytes) {
    size_t rounded = (bytes + 255) / 256 * 256;
    if (rounded == 0) rounded = 256;
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, rounded);
    if (e != cudaSuccess) {
        size_t free_b = 0, total = 0;
        cudaGetLastError();
        cudaMemGetInfo(&free_b, &total);
        fprintf(stderr, "dtlab: cuda device: out of memory allocating %zu bytes (%.2f of %.2f "
                "GiB free) at %s:%d\n", bytes, free_b / 1073741824.0, total / 1073741824.0,
                __FILE__, __LINE__);
        exit(DT_EXIT_RUNTIME);
    }
    cudaCheck(cudaMemsetAsync(p, 0, rounded, ST(d)));
    return p;
}

static void cu_free(dt_device *d, void *p) {
    (void)d;
    if (p) cudaCheck(cudaFree(p));  // waits for the device: nothing queued can still use p
}

static void cu_to_host(dt_device *d, void *dst, const void *src, size_t bytes) {
    if (!bytes) return;
    cudaCheck(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, ST(d)));
    cudaCheck(cudaStreamSynchronize(ST(d)));
}

static void cu_from_host(dt_device *d, void *dst, const void *src, size_t bytes) {
    if (!bytes) return;
    cudaCheck(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, ST(d)));
    cudaCheck(cudaStreamSynchronize(ST(d)));  // the caller may free src on return
}

static void cu_copy(dt_device *d, void *dst, const void *src, size_t bytes) {
    if (bytes && dst != src)
        cudaCheck(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, ST(d)));
}

static void cu_sync(dt_device *d) {
    cudaCheck(cudaStreamSynchronize(ctx_of(d)->copy));
    cudaCheck(cudaStreamSynchronize(ST(d)));
}

static void cu_destroy(dt_device *d) {
    if (!d) return;
    dt_cuda_ctx *c = ctx_of(d);
    if (c) {
        cudaStreamSynchronize(c->stream);
        cudaStreamSynchronize(c->copy);
        if (c->scratch) cudaFree(c->scratch);
        if (c->half_in) cudaFree(c->half_in);
        if (c->host_scratch) cudaFreeHost(c->host_scratch);
        for (int i = 0; i < DT_CUDA_TICKETS; i++) cudaEventDestroy(c->tickets[i]);
        cudaEventDestroy(c->ev_compute);
        cudaEventDestroy(c->ev_copy);
        cublasDestroy(c->blas);
        cudaStreamDestroy(c->copy);
        cudaStreamDestroy(c->stream);
        free(c);
    }
    free(d);
}

// ---- pinned memory and asynchronous copies (the allreduce's host staging) ----

static void *cu_alloc_host(dt_device *d, size_t bytes) {
    (void)d;
    void *p = NULL;
    if (bytes == 0) bytes = 64;
    cudaCheck(cudaMallocHost(&p, bytes));
    memset(p, 0, bytes);
    return p;
}
static void cu_free_host(dt_device *d, void *p) {
    (void)d;
    if (p) cudaCheck(cudaFreeHost(p));
}

// the copy stream first waits for everything queued on the compute stream
static void copy_after_compute(dt_cuda_ctx *c) {
    cudaCheck(cudaEventRecord(c->ev_compute, c->stream));
    cudaCheck(cudaStreamWaitEvent(c->copy, c->ev_compute, 0));
}

static void cu_to_host_async(dt_device *d, void *dst, const void *src, size_t bytes) {
    dt_cuda_ctx *c = ctx_of(d);
    if (!bytes) return;
    copy_after_compute(c);
    cudaCheck(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c->copy));
}

static void cu_from_host_async(dt_device *d, void *dst, const void *src, size_t bytes) {
    dt_cuda_ctx *c = ctx_of(d);
    if (!bytes) return;
    copy_after_compute(c);  // e.g. after alloc's zero-fill of dst
    cudaCheck(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, c->copy));
    cudaCheck(cudaEventRecord(c->ev_copy, c->copy));
    cudaCheck(cudaStreamWaitEvent(c->stream, c->ev_copy, 0));  // later kernels see the data
}

// Tickets are events on the copy stream, in a ring; they complete in order, so a slot
// reused by a newer ticket that has completed proves the older one complete too.
static uint64_t cu_mark(dt_device *d) {
    dt_cuda_ctx *c = ctx_of(d);
    copy_after_compute(c);  // the ticket covers the primitives queued so far too
    cudaCheck(cudaEventRecord(c->tickets[c->n_tickets % DT_CUDA_TICKETS], c->copy));
    return ++c->n_tickets;
}

static int cu_done(dt_device *d, uint64_t t) {
    dt_cuda_ctx *c = ctx_of(d);
    if (t <= c->done_upto) return 1;
    cudaError_t e = cudaEventQuery(c->tickets[(t - 1) % DT_CUDA_TICKETS]);
    if (e == cudaErrorNotReady) return 0;
    cudaCheck(e);
    c->done_upto = t;
    return 1;
}

// ---- dense linear algebra ----

static cublasOperation_t op(int t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; }

// C = beta*C for an (M,N) block with row stride ldc (beta 0 writes zeros, NaN or not)
static void scale_block(dt_device *d, float *C, int M, int N, int ldc, float beta) {
    if (beta == 1.0f || M <= 0 || N <= 0) return;
    if (beta == 0.0f) {
        cudaCheck(cudaMemset2DAsync(C, (size_t)ldc * sizeof(float), 0, (size_t)N * sizeof(float),
                                    (size_t)M, ST(d)));
        return;
    }
    float zero = 0.0f;  // geam in place: C = beta*C + 0*C (column-major: N rows, M columns)
    cublasCheck(cublasSgeam(ctx_of(d)->blas, CUBLAS_OP_N, CUBLAS_OP_N, N, M, &beta, C, ldc,
                            &zero, C, ldc, C, ldc));
}

// ---- mixed precision: gemms on half inputs (d->gemm_half, nn/device.h) ----
// The inputs are half values held in fp32 (nn/net_half.c), so packing them to half loses
// nothing (the network's input images and the logits' gradient are rounded, as PyTorch's
// autocast rounds them); cublasGemmEx then multiplies halfs on the tensor cores with fp32
// accumulation and an fp32 C: CUBLAS_COMPUTE_32F, the gemm of Micikevicius et al. 2018 §3
// and of PyTorch AMP. A and B are packed element for element over the span their rows,
// leading dimensions and strides cover, so every offset and stride stays the same.

// elements from X_0's first to X_{batch-1}'s last: `rows` rows of `cols`, ld apart
static size_t span(int rows, int cols, int ld, size_t stride, int batch) {
    return (size_t)(batch - 1) * stride + (size_t)(rows - 1) * ld + (size_t)cols;
}

typedef struct {
    const void *A, *B;
    cudaDataType t;
} half_in;

static half_in pack_half(dt_device *d, int ta, int tb, int M, int N, int K, const float *A,
                         int lda, size_t sa, const float *B, int ldb, size_t sb, int batch) {
    dt_cuda_ctx *c = ctx_of(d);
    size_t na = ta ? span(K, M, lda, sa, batch) : span(M, K, lda, sa, batch);
    size_t nb = tb ? span(N, K, ldb, sb, batch) : span(K, N, ldb, sb, batch);
    uint16_t *h = grow(c, &c->half_in, &c->half_in_bytes, (na + nb) * sizeof(uint16_t));
    int bf = d->gemm_half == 2;
    (bf ? dt_cu_f32_to_bf16 : dt_cu_f32_to_f16)(c->stream, A, h, na);
    (bf ? dt_cu_f32_to_bf16 : dt_cu_f32_to_f16)(c->stream, B, h + na, nb);
    return (half_in){h, h + na, bf ? CUDA_R_16BF : CUDA_R_16F};
}

static void gemm_on_halfs(dt_device *d, int ta, int tb, int M, int N, int K, float alpha,
                          const float *A, int lda, size_t sa, const float *B, int ldb,
                          size_t sb, float beta, float *C, int ldc, size_t sc, int batch) {
    half_in h = pack_half(d, ta, tb, M, N, K, A, lda, sa, B, ldb, sb, batch);
    if (batch == 1)
        cublasCheck(cublasGemmEx(ctx_of(d)->blas, op(tb), op(ta), N, M, K, &alpha, h.B, h.t,
                                 ldb, h.A, h.t, lda, &beta, C, CUDA_R_32F, ldc,
                                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    else
        cublasCheck(cublasGemmStridedBatchedEx(
            ctx_of(d)->blas, op(tb), op(ta), N, M, K, &alpha, h.B, h.t, ldb, (long long)sb, h.A,
            h.t, lda, (long long)sa, &beta, C, CUDA_R_32F, ldc, (long long)sc, batch,
            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// row-major C(M,N) = alpha*op(A)*op(B) + beta*C as column-major C^T = op(B)^T op(A)^T
static void cu_gemm(dt_device *d, int ta, int tb, int M, int N, int K, float alpha,
                    const float *A, int lda, const float *B, int ldb, float beta, float *C,
                    int ldc) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0 || alpha == 0.0f) {
        scale_block(d, C, M, N, ldc, beta);
        return;
    }
    if (d->gemm_half) {
        gemm_on_halfs(d, ta, tb, M, N, K, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
        return;
    }
    cublasCheck(cublasSgemm(ctx_of(d)->blas, op(tb), op(ta), N, M, K, &alpha, B, ldb, A, lda,
                            &beta, C, ldc));
}

static void cu_gemm_batched(dt_device *d, int ta, int tb, int M, int N, int K, float alpha,
                            const float *A, int lda, size_t sa, const float *B, int ldb,
                            size_t sb, float beta, float *C, int ldc, size_t sc, int batch) {
    if (batch <= 0 || M <= 0 || N <= 0) return;
    if (K <= 0 || alpha == 0.0f) {
        for (int i = 0; i < batch; i++) scale_block(d, C + i * sc, M, N, ldc, beta);
        return;
    }
    if (d->gemm_half) {
        gemm_on_halfs(d, ta, tb, M, N, K, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc,
                      batch);
        return;
    }
    cublasCheck(cublasSgemmStridedBatched(ctx_of(d)->blas, op(tb), op(ta), N, M, K, &alpha, B,
                                          ldb, (long long)sb, A, lda, (long long)sa, &beta, C,
                                          ldc, (long long)sc, batch));
}

// Most floats of products the batched sum keeps in scratch at once (128 MiB).
#define DT_CUDA_SUM_SCRATCH ((size_t)32 << 20)

// C = alpha*sum_i op(A_i)op(B_i) + beta*C (conv2d's dW): groups of g products go into
// scratch with one strided-batched gemm, then are added into C in item order (fixed order:
// the same bits every run; no split-K atomics).
static void cu_gemm_batched_sum(dt_device *d, int ta, int tb, int M, int N, int K,
                                float alpha, const float *A, int lda, size_t sa,
                                const float *B, int ldb, size_t sb, float beta, float *C,
                                int ldc, int batch) {
    if (M <= 0 || N <= 0) return;
    if (batch <= 0 || K <= 0 || alpha == 0.0f) {
        scale_block(d, C, M, N, ldc, beta);
        return;
    }
    size_t mn = (size_t)M * N;
    if (ldc != N || batch == 1) {  // C not packed: accumulate item by item
        for (int i = 0; i < batch; i++)
            cu_gemm(d, ta, tb, M, N, K, alpha, A + i * sa, lda, B + i * sb, ldb,
                    i == 0 ? beta : 1.0f, C, ldc);
        return;
    }
    int g = (int)(DT_CUDA_SUM_SCRATCH / mn);
    if (g < 1) g = 1;
    if (g > batch) g = batch;
    float *w = dt_cuda_scratch(d, (size_t)g * mn * sizeof(float));
    float zero = 0.0f;
    for (int i0 = 0; i0 < batch; i0 += g) {
        int n = batch - i0 < g ? batch - i0 : g;
        if (d->gemm_half)
            gemm_on_halfs(d, ta, tb, M, N, K, alpha, A + i0 * sa, lda, sa, B + i0 * sb, ldb,
                          sb, zero, w, N, mn, n);
        else
            cublasCheck(cublasSgemmStridedBatched(
                ctx_of(d)->blas, op(tb), op(ta), N, M, K, &alpha, B + i0 * sb, ldb,
                (long long)sb, A + i0 * sa, lda, (long long)sa, &zero, w, N, (long long)mn, n));
        dt_cu_sum_rows(ST(d), w, n, mn, beta, i0 == 0, C);
    }
}

// ---- elementwise and reductions ----

static void cu_fill(dt_device *d, float *x, float v, size_t n) { dt_cu_fill(ST(d), x, v, n); }
static void cu_scale(dt_device *d, float *x, float a, size_t n) { dt_cu_scale(ST(d), x, a, n); }
static void cu_axpy(dt_device *d, float a, const float *x, float *y, size_t n) {
    dt_cu_axpy(ST(d), a, x, y, n);
}
static void cu_add(dt_device *d, float *y, const float *x, size_t n) { dt_cu_add(ST(d), y, x, n); }

// Block sums on the device, added in block order on the host (deterministic, see
// kernels_elem.cu): every tensor's block sums into one scratch buffer, one copy to the host
// (one wait), then each tensor's blocks added in order. sumsq is the case of one tensor.
static void cu_sumsq_many(dt_device *d, int k, const float *const *x, const size_t *n,
                          double *out_host) {
    size_t total = 0;
    for (int i = 0; i < k; i++) total += n[i] ? (size_t)dt_cu_reduce_blocks(n[i]) : 0;
    if (!total) {
        for (int i = 0; i < k; i++) out_host[i] = 0.0;
        return;
    }
    double *part = dt_cuda_scratch(d, total * sizeof(double));
    double *h = dt_cuda_host_scratch(d, total * sizeof(double));
    size_t at = 0;
    for (int i = 0; i < k; i++) {
        if (!n[i]) continue;
        dt_cu_sumsq_part(ST(d), x[i], n[i], part + at);
        at += (size_t)dt_cu_reduce_blocks(n[i]);
    }
    cu_to_host(d, h, part, total * sizeof(double));
    at = 0;
    for (int i = 0; i < k; i++) {
        double s = 0.0;
        int nb = n[i] ? dt_cu_reduce_blocks(n[i]) : 0;
        for (int j = 0; j < nb; j++) s += h[at + (size_t)j];
        out_host[i] = s;
        at += (size_t)nb;
    }
}

static double cu_sumsq(dt_device *d, const float *x, size_t n) {
    double s;
    cu_sumsq_many(d, 1, &x, &n, &s);
    return s;
}

static size_t cu_nonfinite(dt_device *d, const float *x, size_t n) {
    if (!n) return 0;
    int nb = dt_cu_reduce_blocks(n);
    unsigned long long *part = dt_cuda_scratch(d, (size_t)nb * sizeof(*part));
    unsigned long long *h = dt_cuda_host_scratch(d, (size_t)nb * sizeof(*part));
    dt_cu_nonfinite_part(ST(d), x, n, part);
    cu_to_host(d, h, part, (size_t)nb * sizeof(*part));
    size_t s = 0;
    for (int i = 0; i < nb; i++) s += (size_t)h[i];
    return s;
}

static void cu_sgd(dt_device *d, float *w, const float *g, float *v, size_t n, float lr,
                   float m, float wd, int nesterov) {
    dt_cu_sgd(ST(d), w, g, v, n, lr, m, wd, nesterov);
}
static void cu_lars(dt_device *d, float *w, const float *g, float *v, size_t n, float slr,
                    float m, float wd) {
    dt_cu_lars(ST(d), w, g, v, n, slr, m, wd);
}
static void cu_to_f16(dt_device *d, const float *x, uint16_t *y, size_t n) {
    dt_cu_f32_to_f16(ST(d), x, y, n);
}
static void cu_from_f16(dt_device *d, const uint16_t *x, float *y, size_t n) {
    dt_cu_f16_to_f32(ST(d), x, y, n);
}
static void cu_add_f16(dt_device *d, float *y, const uint16_t *x, size_t n) {
    dt_cu_add_f16(ST(d), y, x, n);
}
static void cu_to_bf16(dt_device *d, const float *x, uint16_t *y, size_t n) {
    dt_cu_f32_to_bf16(ST(d), x, y, n);
}
static void cu_from_bf16(dt_device *d, const uint16_t *x, float *y, size_t n) {
    dt_cu_bf16_to_f32(ST(d), x, y, n);
}

// ---- the device ----

dt_device *dt_device_cuda_create(int ordinal, unsigned flags, dt_error *err) {
    int count = dt_cuda_device_count();
    if (ordinal < 0 || ordinal >= count) {
        dt_fail(err, DT_EXIT_USAGE, "cuda device: no GPU %d (this machine has %d CUDA GPU%s)",
                ordinal, count, count == 1 ? "" : "s");
        return NULL;
    }
    cudaError_t e = cudaSetDevice(ordinal);
    if (e != cudaSuccess) {
        dt_fail(err, DT_EXIT_USAGE, "cuda device: cannot use GPU %d: %s", ordinal,
                cudaGetErrorString(e));
        return NULL;
    }
    dt_cuda_ctx *c = callocCheck(1, sizeof *c);
    c->ordinal = ordinal;
    c->flags = flags;
    cudaCheck(cudaDeviceGetAttribute(&c->sms, cudaDevAttrMultiProcessorCount, ordinal));
    cudaCheck(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    cudaCheck(cudaStreamCreateWithFlags(&c->copy, cudaStreamNonBlocking));
    cudaCheck(cudaEventCreateWithFlags(&c->ev_compute, cudaEventDisableTiming));
    cudaCheck(cudaEventCreateWithFlags(&c->ev_copy, cudaEventDisableTiming));
    for (int i = 0; i < DT_CUDA_TICKETS; i++)
        cudaCheck(cudaEventCreateWithFlags(&c->tickets[i], cudaEventDisableTiming));
    cublasCheck(cublasCreate(&c->blas));
    cublasCheck(cublasSetStream(c->blas, c->stream));
    // deterministic: plain fp32 products; else TF32 tensor cores where the GPU has them
    cublasCheck(cublasSetMathMode(c->blas, (flags & DT_CUDA_DETERMINISTIC)
                                               ? CUBLAS_PEDANTIC_MATH
                                               : CUBLAS_TF32_TENSOR_OP_MATH));

    dt_device *d = callocCheck(1, sizeof *d);
    d->name = "cuda";
    d->ctx = c;
    d->threads = 1;
    d->im2col_chunk_bytes = (size_t)256 << 20;  // large chunks: fewer, larger gemms
    d->device_memory = 1;
    d->alloc = cu_alloc;
    d->free = cu_free;
    d->to_host = cu_to_host;
    d->from_host = cu_from_host;
    d->copy = cu_copy;
    d->sync = cu_sync;
    d->destroy = cu_destroy;
    d->alloc_host = cu_alloc_host;
    d->free_host = cu_free_host;
    d->to_host_async = cu_to_host_async;
    d->from_host_async = cu_from_host_async;
    d->mark = cu_mark;
    d->done = cu_done;
    d->gemm = cu_gemm;
    d->gemm_batched = cu_gemm_batched;
    d->gemm_batched_sum = cu_gemm_batched_sum;
    d->fill = cu_fill;
    d->scale = cu_scale;
    d->axpy = cu_axpy;
    d->add = cu_add;
    d->sumsq = cu_sumsq;
    d->sumsq_many = cu_sumsq_many;
    d->nonfinite = cu_nonfinite;
    d->sgd_update = cu_sgd;
    d->lars_update = cu_lars;
    d->f32_to_f16 = cu_to_f16;
    d->f16_to_f32 = cu_from_f16;
    d->add_f16 = cu_add_f16;
    d->f32_to_bf16 = cu_to_bf16;
    d->bf16_to_f32 = cu_from_bf16;
    dt_cuda_install_nn(d);
    dt_cuda_install_half(d);
    return d;
}
