// bf16_small_k.c — the measurement behind the cpu device's choice of bf16 gemm for the gemms
// with a short inner dimension (K <= 64: ResNet-50's 64-channel layers; docs/cpu-backends.md,
// "Small inner dimensions"): oneDNN's dnnl_gemm_bf16bf16f32, which the device runs, against a
// register-blocked AVX512_BF16 kernel of our own written for these shapes, on the same
// operands, 2 threads each multiplying its own images (8 per thread, as the device deals out
// a batch of 16).
//
// The candidate (Goto & van de Geijn 2008, "Anatomy of high-performance matrix
// multiplication"; the BLIS/oneDNN structure): op(A) packed into MR-row panels of k-pairs
// and op(B) into NR-column panels of k-pairs, the layout of `vdpbf16ps` (each fp32 lane adds
// the two bf16 products of a pair k = 2p, 2p+1); an MR x NR = 8 x 48 block of C held in 24
// zmm accumulators, A's pair broadcast as one 32-bit word, B's pairs of 16 columns one zmm.
// Its results are checked against oneDNN's (printed: the largest difference; both sum the
// exact products in fp32 in k order) and against float64 within fp32 summation's bound
// (Higham, "Accuracy and Stability of Numerical Algorithms", eq. 3.5: K*2^-24*sum|a b|).
//
// Usage: bench_bf16_small_k [reps]  (inside the build lock: a timing). Needs a CPU with
// AVX512_BF16 (else it prints SKIPPED and exits 77) and oneDNN's bf16 gemm (CMake builds it
// then). Exits 1 where our kernel leaves the bound.
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>

#include "kernels.h"  // dt_f32_to_bf16, dt_bf16_to_f32: the device's own bf16 rounding

// exported by libdnnl beside dnnl_sgemm, not declared in its headers (nn/device_cpu_internal.h)
dnnl_status_t dnnl_gemm_bf16bf16f32(char transa, char transb, dnnl_dim_t M, dnnl_dim_t N,
                                    dnnl_dim_t K, float alpha, const uint16_t *A,
                                    dnnl_dim_t lda, const uint16_t *B, dnnl_dim_t ldb,
                                    float beta, float *C, dnnl_dim_t ldc);

#define DT_CPU_BF16K_MAX_K 64

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 10
#define BF16K_X86 1
#include <immintrin.h>
#endif

enum { MR = 8, NV = 3, NR = 16 * NV };  // C block MR x NR: MR*NV zmm accumulators

#ifdef BF16K_X86

// A's k-pairs in MR-row panels: Ap[(t*KP + p)*MR + i] = a(t*MR+i, 2p) | a(t*MR+i, 2p+1) << 16,
// zero past M and past K (a zero pair adds nothing).
static void pack_a(int ta, int M, int K, const uint16_t *A, int lda, uint32_t *Ap) {
    int KP = (K + 1) / 2, tiles = (M + MR - 1) / MR;
    for (int t = 0; t < tiles; t++)
        for (int p = 0; p < KP; p++) {
            uint32_t *d = Ap + ((size_t)t * KP + p) * MR;
            int k0 = 2 * p, k1 = 2 * p + 1;
            for (int i = 0; i < MR; i++) {
                int r = t * MR + i;
                uint32_t lo = 0, hi = 0;
                if (r < M) {
                    lo = ta ? A[(size_t)k0 * lda + r] : A[(size_t)r * lda + k0];
                    if (k1 < K) hi = ta ? A[(size_t)k1 * lda + r] : A[(size_t)r * lda + k1];
                }
                d[i] = lo | hi << 16;
            }
        }
}

// One NR-column panel of op(B) (nc <= NR columns from column j0) as k-pairs, 16 columns a
// zmm: Bp[(p*NV + v)*32 + 2j + h] = b(2p + h, j0 + 16v + j), zero past K and past nc. B plain
// (K,N): 16 columns of two rows interleaved by one permute.
__attribute__((target("avx512f,avx512bw"))) static void pack_b_rows(int K, int nc,
                                                                    const uint16_t *B, int ldb,
                                                                    uint16_t *Bp) {
    static const uint16_t ilv[32] = {0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39,
                                     8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
    const __m512i idx = _mm512_loadu_si512(ilv);
    int KP = (K + 1) / 2;
    for (int v = 0; v < NV; v++) {
        int n = nc - 16 * v;
        __mmask32 m = n >= 16 ? 0xFFFFu : n <= 0 ? 0u : (1u << n) - 1u;
        const uint16_t *b = B + 16 * v;
        for (int p = 0; p < KP; p++) {
            __m512i x0 = _mm512_maskz_loadu_epi16(m, b + (size_t)(2 * p) * ldb);
            __m512i x1 = 2 * p + 1 < K ? _mm512_maskz_loadu_epi16(m, b + (size_t)(2 * p + 1) * ldb)
                                       : _mm512_setzero_si512();
            _mm512_store_si512(Bp + ((size_t)p * NV + v) * 32,
                               _mm512_permutex2var_epi16(x0, idx, x1));
        }
    }
}

// The same from B transposed (op(B) = B^T, B stored (N,K)): column j's pair is two adjacent
// elements of row j of B.
static void pack_b_cols(int K, int nc, const uint16_t *B, int ldb, uint16_t *Bp) {
    int KP = (K + 1) / 2;
    memset(Bp, 0, (size_t)KP * 2 * NR * sizeof(uint16_t));
    for (int j = 0; j < nc; j++) {
        const uint16_t *b = B + (size_t)j * ldb;
        for (int k = 0; k < K; k++) Bp[(size_t)(k / 2) * 2 * NR + 2 * j + (k & 1)] = b[k];
    }
}

// acc + the pairwise products of a and b (vdpbf16ps). Written as one instruction: GCC 12's
// __m512bh casts of the intrinsic's operands went through the stack.
__attribute__((target("avx512f,avx512bf16"), always_inline)) static inline __m512
dpbf16(__m512 acc, __m512i a, __m512i b) {
    __asm__("vdpbf16ps %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
    return acc;
}

// C's MR x NR block at C (mr rows, nc columns valid) = alpha*sum_p A-pair*B-pair + beta*C
__attribute__((target("avx512f,avx512bf16"))) static void tile(int KP, const uint32_t *Ap,
                                                               const uint16_t *Bp, int mr,
                                                               int nc, float alpha,
                                                               float beta, float *C, int ldc) {
    __m512 acc[MR][NV];
#pragma GCC unroll 8
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 3
        for (int v = 0; v < NV; v++) acc[i][v] = _mm512_setzero_ps();
    for (int p = 0; p < KP; p++) {
        __m512i b[NV];
#pragma GCC unroll 3
        for (int v = 0; v < NV; v++) b[v] = _mm512_load_si512(Bp + ((size_t)p * NV + v) * 32);
        const uint32_t *a = Ap + (size_t)p * MR;
#pragma GCC unroll 8
        for (int i = 0; i < MR; i++) {
            __m512i ai = _mm512_set1_epi32((int)a[i]);
#pragma GCC unroll 3
            for (int v = 0; v < NV; v++) acc[i][v] = dpbf16(acc[i][v], ai, b[v]);
        }
    }
    __mmask16 m[NV];
    for (int v = 0; v < NV; v++) {
        int n = nc - 16 * v;
        m[v] = n >= 16 ? 0xFFFF : n <= 0 ? 0 : (__mmask16)((1u << n) - 1u);
    }
    const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 8
    for (int i = 0; i < MR; i++) {
        if (i >= mr) break;
        float *c = C + (size_t)i * ldc;
#pragma GCC unroll 3
        for (int v = 0; v < NV; v++) {
            __m512 r = alpha == 1.0f ? acc[i][v] : _mm512_mul_ps(va, acc[i][v]);
            if (beta != 0.0f)  // beta == 0 writes alpha*AB (NaN in C does not survive, as BLAS)
                r = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m[v], c + 16 * v), r);
            _mm512_mask_storeu_ps(c + 16 * v, m[v], r);
        }
    }
}

static void bf16k_gemm(int ta, int tb, int M, int N, int K, float alpha, const uint16_t *A,
                       int lda, const uint16_t *B, int ldb, float beta, float *C, int ldc) {
    int KP = (K + 1) / 2, tiles = (M + MR - 1) / MR;
    size_t na = (size_t)tiles * KP * MR * sizeof(uint32_t);
    uint32_t *Ap = NULL;
    if (posix_memalign((void **)&Ap, 64, na) != 0 || !Ap) {
        fprintf(stderr, "bench_bf16_small_k: out of memory allocating %zu bytes at %s:%d\n", na,
                __FILE__, __LINE__);
        exit(1);
    }
    int panels = (N + NR - 1) / NR;
    size_t np = (size_t)panels * KP * 2 * NR * sizeof(uint16_t);
    uint16_t *Bp = NULL;
    if (posix_memalign((void **)&Bp, 64, np) != 0 || !Bp) {
        fprintf(stderr, "bench_bf16_small_k: out of memory allocating %zu bytes at %s:%d\n", np,
                __FILE__, __LINE__);
        exit(1);
    }
    pack_a(ta, M, K, A, lda, Ap);
    for (int q = 0; q < panels; q++) {
        int j0 = q * NR, nc = N - j0 < NR ? N - j0 : NR;
        uint16_t *bq = Bp + (size_t)q * KP * 2 * NR;
        if (tb) pack_b_cols(K, nc, B + (size_t)j0 * ldb, ldb, bq);
        else pack_b_rows(K, nc, B + j0, ldb, bq);
    }
    for (int t = 0; t < tiles; t++) {
        int mr = M - t * MR < MR ? M - t * MR : MR;
        for (int q = 0; q < panels; q++) {
            int j0 = q * NR, nc = N - j0 < NR ? N - j0 : NR;
            tile(KP, Ap + (size_t)t * KP * MR, Bp + (size_t)q * KP * 2 * NR, mr, nc, alpha, beta,
                 C + (size_t)t * MR * ldc + j0, ldc);
        }
    }
    free(Bp);
    free(Ap);
}

#endif

#ifdef BF16K_X86
typedef struct {
    const char *what;
    int ta, tb, M, N, K;
} shape;

int main(int argc, char **argv) {
    if (!__builtin_cpu_supports("avx512bf16")) {
        printf("SKIPPED: this CPU has no AVX512_BF16\n");
        return 77;
    }
    int reps = argc > 1 ? atoi(argv[1]) : 6;
    if (reps < 1) {
        fprintf(stderr, "bench_bf16_small_k: reps: expected a positive count, got '%s'\n", argv[1]);
        return 2;
    }
    const shape shapes[] = {
        {"1x1 64->256 forward", 0, 0, 256, 3136, 64},
        {"1x1 64->64 forward", 0, 0, 64, 3136, 64},
        {"3x3 64 backward-data", 1, 0, 576, 3136, 64},
        {"1x1 256->64 backward-data", 1, 0, 256, 3136, 64},
        {"1x1 64->64 backward-data", 1, 0, 64, 3136, 64},
        {"3x3 512 (7x7) weight gradient", 0, 1, 512, 4608, 49},
    };
    enum { T = 2, IMG = 8 };
    omp_set_num_threads(T);
    printf("| shape | op(A) | op(B) | M | N | K | oneDNN GFLOP/s | ours GFLOP/s | ours / oneDNN "
           "| largest difference from oneDNN | our error / bound |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    srand(42);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        shape h = shapes[s];
        int lda = h.ta ? h.M : h.K, ldb = h.tb ? h.K : h.N;
        size_t na = (size_t)h.M * h.K, nb = (size_t)h.K * h.N, nc = (size_t)h.M * h.N;
        uint16_t *A[T], *B[T];
        float *C[2][T];
        for (int t = 0; t < T; t++) {
            A[t] = malloc(na * 2), B[t] = malloc(nb * IMG * 2);
            C[0][t] = calloc(nc * IMG, 4), C[1][t] = calloc(nc * IMG, 4);
            for (size_t i = 0; i < na; i++)
                A[t][i] = dt_f32_to_bf16((float)rand() / RAND_MAX - 0.5f);
            for (size_t i = 0; i < nb * IMG; i++)
                B[t][i] = dt_f32_to_bf16((float)rand() / RAND_MAX - 0.5f);
        }
        double best[2] = {1e30, 1e30};
        for (int r = 0; r < reps; r++)
            for (int impl = 0; impl < 2; impl++) {  // alternated, best of reps
                double t0 = omp_get_wtime();
#pragma omp parallel num_threads(T)
                {
                    int t = omp_get_thread_num();
                    for (int i = 0; i < IMG; i++) {
                        const uint16_t *b = B[t] + (size_t)i * nb;
                        float *c = C[impl][t] + (size_t)i * nc;
                        if (impl == 0)
                            dnnl_gemm_bf16bf16f32(h.ta ? 'T' : 'N', h.tb ? 'T' : 'N', h.M, h.N, h.K,
                                                  1.0f, A[t], lda, b, ldb, 0.0f, c, h.N);
                        else
                            bf16k_gemm(h.ta, h.tb, h.M, h.N, h.K, 1.0f, A[t], lda, b, ldb, 0.0f,
                                       c, h.N);
                    }
                }
                double dt = omp_get_wtime() - t0;
                if (dt < best[impl]) best[impl] = dt;
            }
        double diff = 0, worst = 0;
        for (size_t e = 0; e < nc * IMG; e++) {
            double d = fabs((double)C[0][0][e] - C[1][0][e]);
            if (d > diff) diff = d;
        }
        for (int k = 0; k < 2000; k++) {  // sampled elements of thread 0's first image
            int m = rand() % h.M, n = rand() % h.N;
            double sum = 0, abs_sum = 0;
            for (int q = 0; q < h.K; q++) {
                uint16_t a = h.ta ? A[0][(size_t)q * lda + m] : A[0][(size_t)m * lda + q];
                uint16_t b = h.tb ? B[0][(size_t)n * ldb + q] : B[0][(size_t)q * ldb + n];
                double p = (double)dt_bf16_to_f32(a) * dt_bf16_to_f32(b);
                sum += p, abs_sum += fabs(p);
            }
            double bound = h.K * 0x1p-24 * abs_sum + 1e-30;
            double e = fabs(C[1][0][(size_t)m * h.N + n] - sum) / bound;
            if (e > worst) worst = e;
        }
        double flop = 2.0 * h.M * h.N * h.K * IMG * T;
        printf("| %s | %s | %s | %d | %d | %d | %.0f | %.0f | %.2f | %.1e | %.3f |\n", h.what,
               h.ta ? "T" : "N", h.tb ? "T" : "N", h.M, h.N, h.K, flop / best[0] / 1e9,
               flop / best[1] / 1e9, best[0] / best[1], diff, worst);
        if (worst > 1.0) {
            fprintf(stderr, "bench_bf16_small_k: %s: our kernel is outside the fp32 bound\n",
                    h.what);
            return 1;
        }
        for (int t = 0; t < T; t++) free(A[t]), free(B[t]), free(C[0][t]), free(C[1][t]);
    }
    return 0;
}
#else
int main(void) {
    printf("SKIPPED: the candidate kernel needs an x86-64 GCC build\n");
    return 77;
}
#endif
