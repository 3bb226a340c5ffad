// test_device_cpu_gemm.c — the cpu device's gemm backends (nn/device_cpu_gemm.c), against a
// float64 reference written here:
//  - which backend runs: oneDNN where the build has it (unless DT_CPU_GEMM=reference), with
//    bf16 gemms exactly where the CPU has AVX512_BF16 or AMX (checked with the compiler's
//    own CPUID test, independent of oneDNN's);
//  - bf16 layers (gemm_half = 2) on every entry point (gemm, gemm_batched with shared and
//    strided A, the packed narrow path, gemm_batched_sum), 1-3 threads: with bf16 gemms the
//    result is the float64 product of the inputs rounded to bf16 (dt_f32_to_bf16) and
//    differs from that of the unrounded inputs; without, it is the fp32 gemm's, bit for bit;
//  - operands read from a bf16 tensor in place (nn/device.h half_view) give the bits of
//    the same gemm on the rounded fp32 values;
//  - "no bf16 gemm" is said once per device, and a bad DT_CPU_GEMM exits 2 with a message.
// test_device_cpu.c's gemm tests run on both backends (ctest runs it again with
// DT_CPU_GEMM=reference).
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernels.h"
#include "testutil.h"

static uint64_t g_seed;

// What this build and CPU should run, from the build's configuration and the CPU's flags.
static int want_onednn(void) {
#ifdef DT_HAVE_DNNL
    const char *e = getenv("DT_CPU_GEMM");
    return !(e && strcmp(e, "reference") == 0);
#else
    return 0;
#endif
}
static int want_bf16(void) {
#if defined(__x86_64__) && defined(__GNUC__) && defined(DT_HAVE_DNNL_BF16_GEMM)
    return want_onednn() &&
           (__builtin_cpu_supports("avx512bf16") || __builtin_cpu_supports("amx-bf16"));
#else
    return 0;
#endif
}

static void test_backend_is_the_one_this_build_and_cpu_call_for(void **state) {
    (void)state;
    dt_device *d = dt_device_cpu_create(2);
    const char *name = dt_device_cpu_gemm_name(d);
    printf("cpu gemm backend: %s\n", name);
    assert_int_equal(strncmp(name, want_onednn() ? "onednn" : "reference", 6), 0);
    assert_int_equal(strstr(name, "; bf16 gemms") != NULL, want_bf16());
    assert_int_equal(d->half_view != NULL, want_bf16());
    d->destroy(d);
}

// C(M,N) = alpha*op(A)op(B) + beta*C0 in double, A and B rounded to bf16 first if `round`
static void ref_gemm(int round, int ta, int tb, int M, int N, int K, double alpha,
                     const float *A, int lda, const float *B, int ldb, double beta,
                     const float *C0, int ldc, double *C) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) {
                float a = ta ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k];
                float b = tb ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j];
                if (round) a = dt_bf16_to_f32(dt_f32_to_bf16(a)), b = dt_bf16_to_f32(dt_f32_to_bf16(b));
                s += (double)a * b;
            }
            C[(size_t)i * N + j] = alpha * s + (beta == 0 ? 0 : beta * C0[(size_t)i * ldc + j]);
        }
}

enum { GEMM, BATCHED, SUM };
static const char *const kind_name[] = {"gemm", "gemm_batched", "gemm_batched_sum"};

typedef struct {
    int kind, ta, tb, M, N, K, batch, lda, ldb, ldc;
    size_t sa, sb, sc, na, nb, nc;
} call;

static call make_call(tu_rng *r, int kind, int idx) {
    call c = {.kind = kind, .ta = idx & 1, .tb = (idx >> 1) & 1};
    int narrow = (idx >> 2) & 1, shared = (idx >> 3) & 1;
    c.batch = kind == GEMM ? 1 : tu_int(r, 1, 5);
    c.M = tu_int(r, 1, 140), c.K = tu_int(r, 1, 140);
    c.N = narrow ? tu_int(r, 1, 127) : tu_int(r, 128, 300);
    if (idx >= 16) c.M = tu_int(r, 1, 9), c.N = tu_int(r, 1, 9), c.K = tu_int(r, 1, 9);
    // two single gemms past DT_CPU_BF16_GEMM_MIN multiply-adds: the bf16 backend (smaller
    // ones multiply the same bf16 values on the fp32 gemm)
    if (kind == GEMM && (idx == 8 || idx == 9))
        c.M = tu_int(r, 480, 560), c.K = tu_int(r, 480, 560), c.N = tu_int(r, 300, 340);
    c.lda = (c.ta ? c.M : c.K) + tu_int(r, 0, 3);
    c.ldb = (c.tb ? c.K : c.N) + tu_int(r, 0, 3);
    c.ldc = c.N + tu_int(r, 0, 3);
    size_t a1 = (size_t)(c.ta ? c.K : c.M) * c.lda, b1 = (size_t)(c.tb ? c.N : c.K) * c.ldb;
    c.sa = shared ? 0 : a1 + (size_t)tu_int(r, 0, 5);
    c.sb = b1 + (size_t)tu_int(r, 0, 5);
    c.sc = kind == SUM ? 0 : (size_t)c.M * c.ldc;
    c.na = c.sa * c.batch + a1, c.nb = c.sb * c.batch + b1;
    c.nc = kind == SUM ? (size_t)c.M * c.ldc : c.sc * c.batch;
    return c;
}

static void run(dt_device *d, const call *c, float alpha, const float *A, const float *B,
                float beta, float *C) {
    if (c->kind == GEMM)
        d->gemm(d, c->ta, c->tb, c->M, c->N, c->K, alpha, A, c->lda, B, c->ldb, beta, C, c->ldc);
    else if (c->kind == BATCHED)
        d->gemm_batched(d, c->ta, c->tb, c->M, c->N, c->K, alpha, A, c->lda, c->sa, B, c->ldb,
                        c->sb, beta, C, c->ldc, c->sc, c->batch);
    else
        d->gemm_batched_sum(d, c->ta, c->tb, c->M, c->N, c->K, alpha, A, c->lda, c->sa, B,
                            c->ldb, c->sb, beta, C, c->ldc, c->batch);
}

// The float64 reference of the whole call into ref (batch x M x N, or M x N for SUM)
static void reference(int round, const call *c, double alpha, const float *A, const float *B,
                      double beta, const float *C0, double *ref) {
    size_t mn = (size_t)c->M * c->N;
    double *one = malloc(mn * sizeof(double));
    for (int i = 0; i < c->batch; i++) {
        int sum = c->kind == SUM;
        ref_gemm(round, c->ta, c->tb, c->M, c->N, c->K, alpha, A + i * c->sa, c->lda,
                 B + i * c->sb, c->ldb, sum && i > 0 ? 0 : beta, C0 + i * c->sc, c->ldc, one);
        for (size_t e = 0; e < mn; e++) ref[(sum ? 0 : i * mn) + e] = (sum && i ? ref[e] : 0) + one[e];
    }
    free(one);
}

// max |C - ref| / (|ref| + 1) over the call's outputs
static double worst(const call *c, const float *C, const double *ref) {
    double w = 0;
    int nb = c->kind == SUM ? 1 : c->batch;
    for (int i = 0; i < nb; i++)
        for (int m = 0; m < c->M; m++)
            for (int n = 0; n < c->N; n++) {
                double r = ref[((size_t)i * c->M + m) * c->N + n];
                double e = fabs(C[i * c->sc + (size_t)m * c->ldc + n] - r) / (fabs(r) + 1.0);
                if (e > w) w = e;
            }
    return w;
}

// Inputs uniform in (-1, 1), not bf16 values: 24 bits each, so rounding them shows.
static void test_bf16_layers_multiply_inputs_rounded_to_bf16_on_every_entry_point(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 11);
    int bf16 = want_bf16();
    for (int threads = 1; threads <= 3; threads++) {
        dt_device *d = dt_device_cpu_create(threads);
        int showed_rounding = 0;
        for (int kind = GEMM; kind <= SUM; kind++)
            for (int idx = 0; idx < 20; idx++) {
                call c = make_call(&r, kind, idx);
                float *A = d->alloc(d, c.na * 4), *B = d->alloc(d, c.nb * 4);
                float *C = d->alloc(d, c.nc * 4), *C0 = malloc(c.nc * 4), *C32 = malloc(c.nc * 4);
                tu_fill_uniform(&r, A, c.na, -1, 1);
                tu_fill_uniform(&r, B, c.nb, -1, 1);
                tu_fill_uniform(&r, C0, c.nc, -1, 1);
                float alpha = (float)tu_uniform(&r, 0.5, 2), beta = idx % 3 ? 0.75f : 0.0f;
                memcpy(C32, C0, c.nc * 4);
                run(d, &c, alpha, A, B, beta, C32);  // fp32
                memcpy(C, C0, c.nc * 4);
                d->gemm_half = 2;
                run(d, &c, alpha, A, B, beta, C);
                d->gemm_half = 0;
                size_t nref = (size_t)c.M * c.N * (c.kind == SUM ? 1 : c.batch);
                double *ref = malloc(nref * sizeof(double)), *raw = malloc(nref * sizeof(double));
                reference(1, &c, alpha, A, B, beta, C0, ref);
                reference(0, &c, alpha, A, B, beta, C0, raw);
                double tol = 2e-6 * sqrt((double)c.K * c.batch) + 1e-6;
                if (bf16) {
                    double e = worst(&c, C, ref);
                    if (e > tol)
                        fail_msg("%s ta %d tb %d M %d N %d K %d batch %d threads %d: bf16 "
                                 "error %.3g > %.3g", kind_name[kind], c.ta, c.tb, c.M, c.N,
                                 c.K, c.batch, threads, e, tol);
                    if (worst(&c, C, raw) > 10 * tol && c.K >= 8) showed_rounding++;
                } else {
                    assert_memory_equal(C, C32, c.nc * 4);  // the fp32 gemm, bit for bit
                }
                d->free(d, A), d->free(d, B), d->free(d, C);
                free(C0), free(C32), free(ref), free(raw);
            }
        // the inputs were rounded: most results are off the unrounded product by more
        // than fp32's error (bf16's unit roundoff is 2^-8)
        if (bf16) assert_true(showed_rounding >= 30);
        d->destroy(d);
    }
}

// An operand in a named view of a bf16 tensor is read from the tensor: the same bits as the
// gemm on the view's values rounded to bf16 into scratch. The view's floats are made to
// differ from the tensor (a stale view would show): the result must follow the tensor.
static void test_operands_in_a_named_view_are_read_from_the_bf16_tensor(void **state) {
    (void)state;
    if (!want_bf16()) {
        printf("SKIPPED: no bf16 gemms in this build or on this CPU\n");
        return;
    }
    tu_rng r = tu_rng_new(g_seed ^ 12);
    dt_device *d = dt_device_cpu_create(2);
    int M = 64, N = 200, K = 96, batch = 3;
    size_t na = (size_t)M * K, nb = (size_t)K * N * batch, nc = (size_t)M * N * batch;
    float *A = d->alloc(d, na * 4), *B = d->alloc(d, nb * 4), *Bv = d->alloc(d, nb * 4);
    float *C1 = d->alloc(d, nc * 4), *C2 = d->alloc(d, nc * 4);
    uint16_t *Bh = d->alloc(d, nb * 2);
    tu_fill_uniform(&r, A, na, -1, 1);
    tu_fill_uniform(&r, B, nb, -1, 1);
    for (size_t i = 0; i < nb; i++) Bh[i] = dt_f32_to_bf16(B[i]), Bv[i] = -B[i];
    d->gemm_half = 2;
    d->gemm_batched(d, 0, 0, M, N, K, 1.0f, A, K, 0, B, N, (size_t)K * N, 0.0f, C1, N,
                    (size_t)M * N, batch);
    d->half_view(d, 1, Bv, Bh, nb);  // Bv "views" Bh (its values deliberately negated)
    d->gemm_batched(d, 0, 0, M, N, K, 1.0f, A, K, 0, Bv, N, (size_t)K * N, 0.0f, C2, N,
                    (size_t)M * N, batch);
    d->half_view(d, 1, NULL, NULL, 0);
    d->gemm_half = 0;
    assert_memory_equal(C1, C2, nc * 4);
    d->free(d, A), d->free(d, B), d->free(d, Bv), d->free(d, C1), d->free(d, C2), d->free(d, Bh);
    d->destroy(d);
}

// The message for a CPU (or build) without bf16 gemms: printed once per device, to stderr.
static void test_no_bf16_gemm_is_said_once(void **state) {
    (void)state;
    char path[] = "/tmp/dt_test_gemm_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    const char *old = getenv("DT_CPU_GEMM");
    char *keep = old ? strdup(old) : NULL;
    setenv("DT_CPU_GEMM", "reference", 1);  // the reference path has no bf16 gemm anywhere
    dt_device *d = dt_device_cpu_create(1);
    if (keep) setenv("DT_CPU_GEMM", keep, 1);
    else unsetenv("DT_CPU_GEMM");
    free(keep);
    float a[4] = {1, 2, 3, 4}, c[4] = {0};
    d->gemm_half = 2;
    for (int i = 0; i < 3; i++) d->gemm(d, 0, 0, 2, 2, 2, 1.0f, a, 2, a, 2, 0.0f, c, 2);
    d->destroy(d);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char buf[2048] = {0};
    ssize_t got = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    unlink(path);
    assert_true(got > 0);
    int lines = 0;
    for (char *p = buf; (p = strstr(p, "bf16 layers multiply in fp32")); p++) lines++;
    printf("said: %s", buf);
    assert_int_equal(lines, 1);
    assert_true(c[0] == 7.0f && c[3] == 22.0f);  // and the numbers are right
}

static void test_bad_DT_CPU_GEMM_exits_2_naming_it(void **state) {
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    // the child runs this program afresh (exec): a bare fork of this process, whose gemm
    // threads have run, can deadlock in its exit handlers (seen under AddressSanitizer)
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 2);
        setenv("DT_CPU_GEMM", "mkl", 1);
        setenv("DT_TEST_BAD_GEMM_CHILD", "1", 1);
        execl("/proc/self/exe", "test_device_cpu_gemm", (char *)NULL);
        _exit(3);  // exec failed
    }
    close(p[1]);
    char buf[512] = {0};
    ssize_t got = read(p[0], buf, sizeof buf - 1);
    close(p[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    assert_true(got > 0 && WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 2);
    assert_non_null(strstr(buf, "DT_CPU_GEMM=mkl"));
}

int main(void) {
    if (getenv("DT_TEST_BAD_GEMM_CHILD")) {  // test_bad_DT_CPU_GEMM_exits_2_naming_it's child
        dt_device_cpu_create(1);
        return 0;
    }
    g_seed = tu_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backend_is_the_one_this_build_and_cpu_call_for),
        cmocka_unit_test(test_bf16_layers_multiply_inputs_rounded_to_bf16_on_every_entry_point),
        cmocka_unit_test(test_operands_in_a_named_view_are_read_from_the_bf16_tensor),
        cmocka_unit_test(test_no_bf16_gemm_is_said_once),
        cmocka_unit_test(test_bad_DT_CPU_GEMM_exits_2_naming_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
