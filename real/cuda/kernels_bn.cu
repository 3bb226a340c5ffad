// kernels_bn.cu — batch normalisation (Ioffe & Szegedy 2015) on the cuda device, with the
// residual add and relu that follow it in a ResNet block (He et al. 2016) fused in:
//  - statistics by a two-level reduction: each channel's B*HW elements are cut into slices
//    of about BN_SLICE elements, one block per (channel, slice) forms the slice's
//    (count, mean, M2) triple, and one thread per channel combines its slices in order
//    (nn/kernels.h dt_moments_combine, Chan et al. 1979, in float64);
//  - forward: one elementwise pass y = relu(gamma*xhat + beta + res) (dt_bn_fused_y);
//  - backward: one reduction pass (sum g, sum g*xhat with g = relu_grad(y, dy)) and one
//    elementwise pass writing dx and the residual's gradient (dt_bn_fused_dz, dt_bn_dx).
// Every reduction runs in a fixed order (no atomics): the same bits on every run. A slice
// is walked plane by plane where planes are large, so the inner loop is contiguous and has
// no division (for_slice).
// Not here: the slices' backward combine (kernels_nn.cu dt_cu_bn_backward_finish, shared
// with the bias gradient's layout), the host side (device_cuda_nn.c).
#include "cuda_launch.cuh"

#define BN_SLICE 8192  // elements of one channel per reduction block (32 per thread)
#define BN_MAX_SLICES 1024

extern "C" int dt_cu_bn_slices(int B, int HW) {
    size_t n = (size_t)B * HW, s = (n + BN_SLICE - 1) / BN_SLICE;
    return (int)(s < 1 ? 1 : (s > BN_MAX_SLICES ? BN_MAX_SLICES : s));
}

// Slice sl of S of a channel's n = B*HW elements: [n*sl/S, n*(sl+1)/S) in (b, hw) order.
// Plane b of it covers hw in [*h0, *h1); returns 0 past the slice's end.
__device__ static inline int slice_plane(size_t lo, size_t hi, int HW, size_t b, int *h0,
                                         int *h1) {
    size_t p0 = b * (size_t)HW;
    if (p0 >= hi) return 0;
    *h0 = p0 < lo ? (int)(lo - p0) : 0;
    *h1 = p0 + (size_t)HW > hi ? (int)(hi - p0) : HW;
    return 1;
}

// Calls f(i) for this thread's share of slice [lo, hi) of channel c (i: the element's index
// in the (B,C,HW) tensor), in a fixed order. Planes of at least half a block are walked
// plane by plane (contiguous, no division per element); smaller ones (ResNet's 7x7 = 49)
// would leave most threads idle that way, so there the block strides over the
// slice's flat range, one 32-bit division per element where the range allows it.
template <typename F>
__device__ static inline void for_slice(size_t lo, size_t hi, int C, int c, int HW, F f) {
    if (HW >= THREADS / 2) {
        int h0, h1;
        for (size_t b = lo / HW; slice_plane(lo, hi, HW, b, &h0, &h1); b++) {
            size_t base = (b * C + c) * HW;
            for (int h = h0 + (int)threadIdx.x; h < h1; h += blockDim.x) f(base + h);
        }
    } else if (hi < 0x80000000u) {  // j + blockDim.x cannot wrap
        for (unsigned j = (unsigned)lo + threadIdx.x; j < (unsigned)hi; j += blockDim.x) {
            unsigned b = j / (unsigned)HW;
            f(((size_t)b * C + c) * HW + (j - b * (unsigned)HW));
        }
    } else {
        for (size_t j = lo + threadIdx.x; j < hi; j += blockDim.x) {
            size_t b = j / HW;
            f((b * C + c) * HW + (j - b * HW));
        }
    }
}

// ---- forward statistics ----
// Block (c, sl): each thread sums x - k and (x - k)^2 in double over its elements (k = the
// slice's first element, so the sums stay small whatever the channel's offset), forms its
// triple, and the block combines the 256 triples in a fixed tree.
template <typename T>
__global__ static void k_bn_moments(const T *x, int C, int HW, size_t n, int S,
                                    dt_moments *part) {
    int c = (int)(blockIdx.x / S), sl = (int)(blockIdx.x % S);
    size_t lo = n * sl / S, hi = n * (sl + 1) / S;
    double k = 0.0;
    if (lo < hi) {
        size_t b = lo / HW;
        k = ld(x, (b * C + c) * HW + (lo - b * HW));
    }
    double s = 0.0, ss = 0.0, cnt = 0.0;
    for_slice(lo, hi, C, c, HW, [&](size_t i) {
        double t = (double)ld(x, i) - k;
        s += t, ss += t * t, cnt += 1.0;
    });
    __shared__ dt_moments m[THREADS];
    m[threadIdx.x] = dt_moments_from_shifted(cnt, k, s, ss);
    __syncthreads();
    for (int h = THREADS / 2; h > 0; h >>= 1) {
        if ((int)threadIdx.x < h) m[threadIdx.x] = dt_moments_combine(m[threadIdx.x], m[threadIdx.x + h]);
        __syncthreads();
    }
    if (threadIdx.x == 0) part[(size_t)c * S + sl] = m[0];
}

// One thread per channel: the slices combined in order, then the saved statistics and
// PyTorch's running statistics (dt_bn_invstd, dt_bn_running, dt_bn_unbiased).
template <typename I>
__global__ static void k_bn_moments_finish(const dt_moments *part, int C, int S, float eps,
                                           float momentum, float *rm, float *rv, float *smean,
                                           float *sinv) {
    FOR_EACH(c, (size_t)C) {
        dt_moments m = part[(size_t)c * S];
        for (int i = 1; i < S; i++) m = dt_moments_combine(m, part[(size_t)c * S + i]);
        double var = m.n > 0.0 ? m.m2 / m.n : 0.0;
        float fmean = (float)m.mean;
        smean[c] = fmean;
        sinv[c] = dt_bn_invstd(var, eps);
        if (rm) rm[c] = dt_bn_running(rm[c], fmean, momentum);
        if (rv) rv[c] = dt_bn_running(rv[c], (float)dt_bn_unbiased(var, m.n), momentum);
    }
}

template <typename T>
static void bn_stats(cudaStream_t st, const void *x, int B, int C, int HW, dt_moments *part,
                     float eps, float momentum, float *rm, float *rv, float *smean,
                     float *sinv) {
    int S = dt_cu_bn_slices(B, HW);
    size_t blocks = (size_t)C * S;
    if (blocks > 0x7fffffffu) {
        char msg[120];
        snprintf(msg, sizeof msg, "%d channels x %d slices: more blocks than a grid holds", C, S);
        dt_cuda_fail("batch norm statistics", msg, __FILE__, __LINE__);
    }
    k_bn_moments<T><<<(unsigned)blocks, THREADS, 0, st>>>((const T *)x, C, HW, (size_t)B * HW,
                                                          S, part);
    DT_LAUNCH_CHECK();
    LAUNCH(k_bn_moments_finish, (size_t)C, part, C, S, eps, momentum, rm, rv, smean, sinv);
}
extern "C" void dt_cu_bn_stats(cudaStream_t st, int fmt, const void *x, int B, int C, int HW,
                               dt_moments *part, float eps, float momentum, float *running_mean,
                               float *running_var, float *save_mean, float *save_invstd) {
    if (B <= 0 || C <= 0 || HW <= 0) return;
    BY_FORMAT(fmt, bn_stats, st, x, B, C, HW, part, eps, momentum, running_mean, running_var,
              save_mean, save_invstd);
}

// ---- forward apply: y = relu?(gamma*(x-mean)*invstd + beta (+ res)); invstd NULL: from
// the running variance (evaluation) ----
template <typename I, typename T>
__global__ static void k_bn_fused_apply(const T *x, const T *res, int C, int HW,
                                        const float *gamma, const float *beta,
                                        const float *mean, const float *invstd,
                                        const float *rv, float eps, size_t n, T *y, int relu) {
    FOR_EACH(i, n) {
        int c = (int)((i / HW) % C);
        float is = invstd ? invstd[c] : dt_bn_invstd((double)rv[c], eps);
        float r = res ? ld(res, i) : 0.0f;
        st(y, i, dt_bn_fused_y(ld(x, i), mean[c], is, gamma[c], beta[c], res != NULL, r, relu));
    }
}
template <typename T>
static void bn_fused_apply(cudaStream_t st, const void *x, const void *res, int B, int C,
                           int HW, const float *gamma, const float *beta, const float *mean,
                           const float *invstd, const float *rv, float eps, void *y, int relu) {
    size_t n = (size_t)B * C * HW;
    LAUNCH(k_bn_fused_apply, n, (const T *)x, (const T *)res, C, HW, gamma, beta, mean, invstd,
           rv, eps, n, (T *)y, relu);
}
extern "C" void dt_cu_bn_fused_apply(cudaStream_t st, int fmt, const void *x, const void *res,
                                     int B, int C, int HW, const float *gamma,
                                     const float *beta, const float *mean, const float *invstd,
                                     const float *running_var, float eps, void *y, int relu) {
    if (B <= 0 || C <= 0 || HW <= 0) return;
    BY_FORMAT(fmt, bn_fused_apply, st, x, res, B, C, HW, gamma, beta, mean, invstd, running_var,
              eps, y, relu);
}

// ---- backward reduction: per (channel, slice) sum g and sum g*xhat in double, g =
// dt_bn_fused_dz(y, dy); part is (C, S, 2) doubles, combined by dt_cu_bn_backward_finish ----
template <typename T>
__global__ static void k_bn_fused_part(const T *y, const T *dy, const T *x, int C, int HW,
                                       size_t n, int S, const float *mean, const float *invstd,
                                       int relu, double *part) {
    int c = (int)(blockIdx.x / S), sl = (int)(blockIdx.x % S);
    size_t lo = n * sl / S, hi = n * (sl + 1) / S;
    float m = mean[c], is = invstd[c];
    double s0 = 0.0, s1 = 0.0;
    for_slice(lo, hi, C, c, HW, [&](size_t i) {
        float g = dt_bn_fused_dz(relu ? ld(y, i) : 0.0f, ld(dy, i), relu);
        s0 += g;
        s1 += (double)g * (double)((ld(x, i) - m) * is);
    });
    __shared__ double b0[THREADS], b1[THREADS];
    b0[threadIdx.x] = s0, b1[threadIdx.x] = s1;
    __syncthreads();
    for (int h = THREADS / 2; h > 0; h >>= 1) {
        if ((int)threadIdx.x < h) {
            b0[threadIdx.x] += b0[threadIdx.x + h];
            b1[threadIdx.x] += b1[threadIdx.x + h];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        part[((size_t)c * S + sl) * 2] = b0[0];
        part[((size_t)c * S + sl) * 2 + 1] = b1[0];
    }
}
template <typename T>
static void bn_fused_part(cudaStream_t st, const void *y, const void *dy, const void *x, int B,
                          int C, int HW, const float *mean, const float *invstd, int relu,
                          double *part) {
    int S = dt_cu_bn_slices(B, HW);
    k_bn_fused_part<T><<<(unsigned)((size_t)C * S), THREADS, 0, st>>>(
        (const T *)y, (const T *)dy, (const T *)x, C, HW, (size_t)B * HW, S, mean, invstd, relu,
        part);
    DT_LAUNCH_CHECK();
}
extern "C" void dt_cu_bn_fused_part(cudaStream_t st, int fmt, const void *y, const void *dy,
                                    const void *x, int B, int C, int HW, const float *mean,
                                    const float *invstd, int relu, double *part) {
    if (B <= 0 || C <= 0 || HW <= 0) return;
    BY_FORMAT(fmt, bn_fused_part, st, y, dy, x, B, C, HW, mean, invstd, relu, part);
}

// ---- backward elementwise: dx (+)= dt_bn_dx(g, xhat, ...), dres (+)= g ----
template <typename I, typename T>
__global__ static void k_bn_fused_dx(const T *y, const T *dy, const T *x, int C, int HW,
                                     const float *gamma, const float *mean, const float *invstd,
                                     const float *sums, float fn, size_t n, T *dx, int set,
                                     T *dres, int set_res, int relu) {
    FOR_EACH(i, n) {
        int c = (int)((i / HW) % C);
        float is = invstd[c];
        float g = dt_bn_fused_dz(relu ? ld(y, i) : 0.0f, ld(dy, i), relu);
        float v = dt_bn_dx(g, (ld(x, i) - mean[c]) * is, gamma[c], is, sums[2 * c],
                           sums[2 * c + 1], fn);
        // read both old values before either write: dx or dres may be dy
        float odx = set ? 0.0f : ld(dx, i), ores = (dres && !set_res) ? ld(dres, i) : 0.0f;
        // __fadd_rn: never fused with v's last multiply, so every element type rounds v
        // first (nvcc's FMA contraction chose differently for float and half dx: 1 ulp)
        st(dx, i, set ? v : __fadd_rn(odx, v));
        if (dres) st(dres, i, set_res ? g : __fadd_rn(ores, g));
    }
}
template <typename T>
static void bn_fused_dx(cudaStream_t st, const void *y, const void *dy, const void *x, int B,
                        int C, int HW, const float *gamma, const float *mean,
                        const float *invstd, const float *sums, void *dx, int set, void *dres,
                        int set_res, int relu) {
    size_t n = (size_t)B * C * HW;
    LAUNCH(k_bn_fused_dx, n, (const T *)y, (const T *)dy, (const T *)x, C, HW, gamma, mean,
           invstd, sums, (float)((size_t)B * HW), n, (T *)dx, set, (T *)dres, set_res, relu);
}
extern "C" void dt_cu_bn_fused_dx(cudaStream_t st, int fmt, const void *y, const void *dy,
                                  const void *x, int B, int C, int HW, const float *gamma,
                                  const float *mean, const float *invstd, const float *sums,
                                  void *dx, int set, void *dres, int set_res, int relu) {
    if (B <= 0 || C <= 0 || HW <= 0) return;
    BY_FORMAT(fmt, bn_fused_dx, st, y, dy, x, B, C, HW, gamma, mean, invstd, sums, dx, set,
              dres, set_res, relu);
}
