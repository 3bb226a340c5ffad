// cuda_check.h — what the cuda-vs-cpu test programs share (tests/cuda): the test context
// (the two devices, the random stream, the pass/fail count), tensors that live on both
// devices, and the comparisons, each printing one line `ok   <name> max_err=.. tol=..` or
// `FAIL <name> ...`. Plain C11, no cmocka: the GPU machines have none.
// The reference is the cpu device (nn/device_cpu*.c, itself tested against float64 loops
// in tests/unit); this program only asks whether the cuda device computes the same thing.
// DT_CUDA_TEST_BREAK=1 perturbs the reference of every comparison: every check must FAIL
// (the proof that each one can fail).
#ifndef DT_CUDA_CHECK_H
#define DT_CUDA_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"

// 2^-k as a double: tolerances are written in units of fp32's epsilon 2^-23 (1 ulp at 1.0)
#define CC_EPS (1.0 / 8388608.0)
#define CC_EPS64 (1.0 / 9007199254740992.0)  // 2^-53, double's unit roundoff

typedef struct {
    dt_device *cpu;  // the reference
    dt_device *gpu;  // the cuda device as training runs it (flags 0: cuBLAS may use TF32)
    dt_device *det;  // the cuda device with DT_CUDA_DETERMINISTIC (fp32 gemms, fixed order)
    uint64_t rng;    // splitmix64 state
    int brk;         // DT_CUDA_TEST_BREAK: perturb every reference
    int checks, failed;
} cc_ctx;

// ---- random inputs (splitmix64, seeded once from DT_SEED or the clock and pid) ----
uint64_t cc_seed(void);  // prints the seed and how to replay it
uint64_t cc_next(cc_ctx *t);
float cc_unif(cc_ctx *t, float lo, float hi);
int cc_int(cc_ctx *t, int lo, int hi);  // inclusive
float *cc_rand(cc_ctx *t, size_t n, float lo, float hi);  // malloc'd, uniform in [lo,hi)

// ---- a tensor on both devices: the same bytes on the cpu (c) and on a cuda device (g) ----
typedef struct {
    dt_device *gd;  // which cuda device holds g
    void *c, *g;
    size_t bytes;
} cc_buf;
// host NULL: zeros (alloc's fill). bytes 0 still allocates (one float), so calls with an
// empty tensor get a valid pointer.
cc_buf cc_new(cc_ctx *t, dt_device *gd, const void *host, size_t bytes);
void cc_free(cc_ctx *t, cc_buf *b);
void *cc_host_copy(dt_device *d, const void *p, size_t bytes);  // malloc'd, via to_host

// ---- comparisons; each prints its line and returns 1 on pass ----
// exact: same bits, except that any NaN matches any NaN (CUDA's arithmetic returns the
// canonical NaN where x86 keeps the payload)
int cc_exact(cc_ctx *t, const char *name, const cc_buf *b);  // b holds floats
int cc_bytes(cc_ctx *t, const char *name, const cc_buf *b);  // b's bytes (int32, fp16 bits)
// close: |got - want| <= tol * mag[i] for every i (mag NULL: |want|); NaN matches NaN, an
// infinity only itself. mag is the size of the terms that produced element i, so a bound
// like n*eps*sum|terms| is stated directly.
int cc_close(cc_ctx *t, const char *name, const cc_buf *b, const double *mag, double tol);
// on host arrays (want is perturbed in break mode)
int cc_cmp_exact(cc_ctx *t, const char *name, const float *got, float *want, size_t n);
int cc_cmp_bytes(cc_ctx *t, const char *name, const void *got, void *want, size_t bytes);
int cc_cmp_close(cc_ctx *t, const char *name, const float *got, float *want,
                 const double *mag, size_t n, double tol);
int cc_cmp_scalar(cc_ctx *t, const char *name, double got, double want, double mag,
                  double tol);
// fetch b from both devices: *c and *g malloc'd
void cc_fetch(const cc_buf *b, void **c, void **g);

// ---- the checks (test_device_cuda.c, test_device_cuda_nn.c) ----
void cc_check_memory(cc_ctx *t);
void cc_check_async(cc_ctx *t);
void cc_check_gemm(cc_ctx *t);
void cc_check_elementwise(cc_ctx *t);
void cc_check_optim_f16(cc_ctx *t);
void cc_check_conv_bias(cc_ctx *t);
void cc_check_bn(cc_ctx *t);
void cc_check_pool_loss(cc_ctx *t);
void cc_check_determinism(cc_ctx *t);
// test_device_cuda_half.c: convolutions on half storage, fused batch norm
void cc_check_half_conv(cc_ctx *t);
void cc_check_bn_fused(cc_ctx *t);

#endif
