// kernels_nn.cu — the cuda device's network kernels: im2col/col2im (Caffe's GPU form),
// per-channel bias, the per-channel slice sums' combine of batch norm's backward (Ioffe &
// Szegedy 2015; its other kernels are in kernels_bn.cu), max and adaptive average pooling,
// softmax cross-entropy. Every reduction runs in a fixed order (no atomics), so
// results are the same bits on every run: col2im, pooling backward and the channel sums
// gather instead of scattering. Per-element formulas come from nn/kernels.h, shared with the
// cpu device (nn/device_cpu_nn.c), whose comments give the shapes.
// Not here: the flat elementwise kernels (kernels_elem.cu), memory and cuBLAS.
#include "cuda_launch.cuh"

// ---- im2col / col2im ----
// col (B, C*KH*KW, OH*OW): entry (b, (c*KH+kh)*KW+kw, oh*OW+ow) = x[b,c,oh*s-p+kh,ow*s-p+kw]
template <typename I>
__global__ static void k_im2col(const float *x, int C, int H, int W, int KH, int KW, int s,
                                int p, int OH, int OW, size_t n, float *col) {
    FOR_EACH(i, n) {
        int ow = (int)(i % OW);
        I t = i / OW;
        int oh = (int)(t % OH);
        t /= OH;
        int kw = (int)(t % KW);
        t /= KW;
        int kh = (int)(t % KH);
        size_t pc = t / KH;  // b*C + c (offsets in size_t)
        int ih = oh * s - p + kh, iw = ow * s - p + kw;
        col[i] = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? x[(pc * H + ih) * W + iw] : 0.0f;
    }
}
extern "C" void dt_cu_im2col(cudaStream_t st, const float *x, int B, int C, int H, int W,
                             int KH, int KW, int stride, int pad, float *col) {
    int OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1;
    if (B <= 0 || C <= 0 || OH <= 0 || OW <= 0) return;
    size_t n = (size_t)B * C * KH * KW * OH * OW;
    LAUNCH(k_im2col, n, x, C, H, W, KH, KW, stride, pad, OH, OW, n, col);
}

// One thread per input cell gathers the col entries im2col read from it, kh then kw
// ascending (Caffe's col2im_gpu): no atomics, the same bits every run.
template <typename I>
__global__ static void k_col2im(const float *col, int C, int H, int W, int KH, int KW, int s,
                                int p, int OH, int OW, size_t n, float *x, int set) {
    FOR_EACH(i, n) {
        int iw = (int)(i % W);
        I t = i / W;
        int ih = (int)(t % H);
        size_t pc = t / H;
        const float *cp = col + pc * KH * KW * (size_t)OH * OW;
        float acc = set ? 0.0f : x[i];
        for (int kh = 0; kh < KH; kh++) {
            int hh = ih + p - kh;  // = oh*s
            if (hh < 0 || hh % s) continue;
            int oh = hh / s;
            if (oh >= OH) continue;
            for (int kw = 0; kw < KW; kw++) {
                int ww = iw + p - kw;
                if (ww < 0 || ww % s) continue;
                int ow = ww / s;
                if (ow >= OW) continue;
                acc += cp[((size_t)(kh * KW + kw) * OH + oh) * OW + ow];
            }
        }
        x[i] = acc;
    }
}
extern "C" void dt_cu_col2im(cudaStream_t st, const float *col, int B, int C, int H, int W,
                             int KH, int KW, int stride, int pad, float *x, int set) {
    int OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1;
    if (B <= 0 || C <= 0 || H <= 0 || W <= 0) return;
    size_t n = (size_t)B * C * H * W;
    if (OH <= 0 || OW <= 0) {  // no window reads x: only set writes (zeros)
        if (set) cudaCheck(cudaMemsetAsync(x, 0, n * sizeof(float), st));
        return;
    }
    LAUNCH(k_col2im, n, col, C, H, W, KH, KW, stride, pad, OH, OW, n, x, set);
}

// ---- per-channel bias and sums ----
template <typename I>
__global__ static void k_bias_add(float *y, const float *bias, int C, int HW, size_t n) {
    FOR_EACH(i, n) y[i] += bias[(i / HW) % C];
}
extern "C" void dt_cu_bias_add(cudaStream_t st, float *y, const float *bias, int B, int C,
                               int HW) {
    size_t n = (size_t)B * C * HW;
    LAUNCH(k_bias_add, n, y, bias, C, HW, n);
}

// The B*HW elements of a channel are cut into S slices (S from the size only), each summed
// by one block in a fixed order; the slices are added in order by one thread per channel.
extern "C" int dt_cu_channel_slices(int B, int HW) {
    size_t n = (size_t)B * HW, s = n / 16384;
    return (int)(s < 1 ? 1 : (s > 256 ? 256 : s));
}

template <typename I, typename T>
__global__ static void k_channel_part(int mode, const T *a, const T *x, int B, int C,
                                      int HW, const float *mean, const float *invstd, int S,
                                      double *part) {
    int c = blockIdx.x / S, sl = blockIdx.x % S;
    size_t n = (size_t)B * HW;
    I lo = (I)(n * sl / S), hi = (I)(n * (sl + 1) / S);
    double k = mode == 1 ? (double)ld(a, (size_t)c * HW) : 0.0;  // bn stats: shift by x[0,c,0]
    float m = mode == 2 ? mean[c] : 0.0f, is = mode == 2 ? invstd[c] : 0.0f;
    double s0 = 0.0, s1 = 0.0;
    for (I j = lo + threadIdx.x; j < hi; j += blockDim.x) {
        I b = j / HW;
        size_t idx = ((size_t)b * C + c) * HW + (j - b * HW);
        if (mode == 1) {
            double t = (double)ld(a, idx) - k;
            s0 += t;
            s1 += t * t;
        } else {
            float g = ld(a, idx);
            s0 += g;
            if (mode == 2) s1 += (double)g * (double)((ld(x, idx) - m) * is);
        }
    }
    __shared__ double b0[THREADS], b1[THREADS];
    b0[threadIdx.x] = s0;
    b1[threadIdx.x] = s1;
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
static void channel_part(cudaStream_t st, int mode, const void *av, const void *xv, int B, int C,
                         int HW, const float *mean, const float *invstd, double *part) {
    const T *a = (const T *)av, *x = (const T *)xv;
    int S = dt_cu_channel_slices(B, HW);
    if (C <= 0) return;
    if ((size_t)B * HW < ((size_t)1 << 31))
        k_channel_part<unsigned><<<(unsigned)C * S, THREADS, 0, st>>>(mode, a, x, B, C, HW, mean,
                                                                     invstd, S, part);
    else
        k_channel_part<size_t><<<(unsigned)C * S, THREADS, 0, st>>>(mode, a, x, B, C, HW, mean,
                                                                   invstd, S, part);
    DT_LAUNCH_CHECK();
}
extern "C" void dt_cu_channel_part(cudaStream_t st, int mode, int fmt, const void *a,
                                   const void *x, int B, int C, int HW, const float *mean,
                                   const float *invstd, double *part) {
    BY_FORMAT(fmt, channel_part, st, mode, a, x, B, C, HW, mean, invstd, part);
}

__device__ static void slice_sums(const double *part, int c, int S, double *s0, double *s1) {
    double a = 0.0, b = 0.0;
    for (int i = 0; i < S; i++) a += part[((size_t)c * S + i) * 2], b += part[((size_t)c * S + i) * 2 + 1];
    *s0 = a, *s1 = b;
}

template <typename I>
__global__ static void k_bias_finish(const double *part, int C, int S, float *db) {
    FOR_EACH(c, (size_t)C) {
        double s0, s1;
        slice_sums(part, (int)c, S, &s0, &s1);
        db[c] += (float)s0;
    }
}
extern "C" void dt_cu_bias_finish(cudaStream_t st, const double *part, int C, int S, float *db) {
    LAUNCH(k_bias_finish, (size_t)C, part, C, S, db);
}

// dgamma += sum(dy*xhat), dbeta += sum(dy); sums = (float)sum(dy), (float)sum(dy*xhat)
template <typename I>
__global__ static void k_bn_bw_finish(const double *part, int C, int S, float *dgamma,
                                      float *dbeta, float *sums) {
    FOR_EACH(c, (size_t)C) {
        double sdy, sdyx;
        slice_sums(part, (int)c, S, &sdy, &sdyx);
        if (dgamma) dgamma[c] += (float)sdyx;
        if (dbeta) dbeta[c] += (float)sdy;
        sums[2 * c] = (float)sdy;
        sums[2 * c + 1] = (float)sdyx;
    }
}
extern "C" void dt_cu_bn_backward_finish(cudaStream_t st, const double *part, int C, int S,
                                         float *dgamma, float *dbeta, float *sums) {
    LAUNCH(k_bn_bw_finish, (size_t)C, part, C, S, dgamma, dbeta, sums);
}

// ---- pooling ----
// one thread per output cell; the window is scanned row-major with dt_pool_beats, as on
// the cpu, so the winner (and argmax) is the same cell
template <typename I>
__global__ static void k_maxpool(const float *x, int H, int W, int K, int s, int p, int OH,
                                 int OW, size_t n, float *y, int32_t *argmax) {
    FOR_EACH(i, n) {
        int ow = (int)(i % OW), oh = (int)((i / OW) % OH);
        I pc = i / ((I)OW * OH);
        const float *xp = x + (size_t)pc * H * W;
        int h0 = oh * s - p, w0 = ow * s - p, h1 = h0 + K, w1 = w0 + K;
        h0 = h0 < 0 ? 0 : h0, w0 = w0 < 0 ? 0 : w0, h1 = h1 > H ? H : h1, w1 = w1 > W ? W : w1;
        dt_maxpool_window(xp, W, h0, h1, w0, w1, &y[i], &argmax[i]);
    }
}
extern "C" void dt_cu_maxpool_forward(cudaStream_t st, const float *x, int B, int C, int H,
                                      int W, int K, int stride, int pad, float *y,
                                      int32_t *argmax) {
    int OH = (H + 2 * pad - K) / stride + 1, OW = (W + 2 * pad - K) / stride + 1;
    if (B <= 0 || C <= 0 || OH <= 0 || OW <= 0) return;
    size_t n = (size_t)B * C * OH * OW;
    LAUNCH(k_maxpool, n, x, H, W, K, stride, pad, OH, OW, n, y, argmax);
}

// The primitive is not told the window shape, so a plane's outputs are added by one thread
// in output order: the cpu device's order, no atomics (one maxpool per ResNet).
template <typename I>
__global__ static void k_maxpool_bw(const float *dy, const int32_t *argmax, size_t planes,
                                    int hw, int ohw, float *dx) {
    FOR_EACH(pc, planes) {
        const float *g = dy + (size_t)pc * ohw;
        const int32_t *a = argmax + (size_t)pc * ohw;
        float *q = dx + (size_t)pc * hw;
        for (int i = 0; i < ohw; i++)
            if (a[i] >= 0 && a[i] < hw) q[a[i]] += g[i];
    }
}
extern "C" void dt_cu_maxpool_backward(cudaStream_t st, const float *dy, const int32_t *argmax,
                                       int B, int C, int H, int W, int OH, int OW, float *dx) {
    size_t planes = (size_t)B * C;
    if (OH <= 0 || OW <= 0) return;
    LAUNCH(k_maxpool_bw, planes, dy, argmax, planes, H * W, OH * OW, dx);
}

template <typename I>
__global__ static void k_avgpool(const float *x, int H, int W, int OH, int OW, size_t n,
                                 float *y) {
    FOR_EACH(i, n) {
        int j = (int)(i % OW), r = (int)((i / OW) % OH);
        const float *xp = x + (size_t)(i / ((I)OW * OH)) * H * W;
        y[i] = dt_avgpool_cell(xp, H, W, OH, OW, r, j);
    }
}
extern "C" void dt_cu_avgpool_forward(cudaStream_t st, const float *x, int B, int C, int H,
                                      int W, int OH, int OW, float *y) {
    if (OH <= 0 || OW <= 0) return;
    size_t n = (size_t)B * C * OH * OW;
    LAUNCH(k_avgpool, n, x, H, W, OH, OW, n, y);
}

// One thread per input cell adds dy/count of every output cell whose window holds it, in
// output order (the cpu device's order). Cell r holds row h iff
// floor(h*OH/H) <= r <= ceil((h+1)*OH/H) - 1; each candidate is checked exactly.
template <typename I>
__global__ static void k_avgpool_bw(const float *dy, int H, int W, int OH, int OW, size_t n,
                                    float *dx) {
    FOR_EACH(i, n) {
        int w = (int)(i % W), h = (int)((i / W) % H);
        const float *g = dy + (size_t)(i / ((I)W * H)) * OH * OW;
        int r0 = (int)((long long)h * OH / H), r1 = (int)(((long long)(h + 1) * OH + H - 1) / H);
        int c0 = (int)((long long)w * OW / W), c1 = (int)(((long long)(w + 1) * OW + W - 1) / W);
        r1 = r1 > OH ? OH : r1, c1 = c1 > OW ? OW : c1;
        float acc = dx[i];
        for (int r = r0; r < r1; r++) {
            int h0 = dt_ada_start(r, H, OH), h1 = dt_ada_end(r, H, OH);
            if (h < h0 || h >= h1) continue;
            for (int c = c0; c < c1; c++) {
                int w0 = dt_ada_start(c, W, OW), w1 = dt_ada_end(c, W, OW);
                if (w < w0 || w >= w1) continue;
                acc += g[r * OW + c] / (float)((h1 - h0) * (w1 - w0));
            }
        }
        dx[i] = acc;
    }
}
extern "C" void dt_cu_avgpool_backward(cudaStream_t st, const float *dy, int B, int C, int H,
                                       int W, int OH, int OW, float *dx) {
    if (OH <= 0 || OW <= 0) return;
    size_t n = (size_t)B * C * H * W;
    LAUNCH(k_avgpool_bw, n, dy, H, W, OH, OW, n, dx);
}

// ---- softmax cross-entropy: one thread per row, the cpu device's order ----
template <typename I>
__global__ static void k_xent(const float *z, const int32_t *labels, int B, int K, float *probs,
                              double *row_loss) {
    FOR_EACH(b, (size_t)B) {
        row_loss[b] = dt_softmax_xent_row(z + (size_t)b * K, probs + (size_t)b * K, K, labels[b]);
    }
}
extern "C" void dt_cu_softmax_xent_forward(cudaStream_t st, const float *logits,
                                           const int32_t *labels, int B, int K, float *probs,
                                           double *row_loss) {
    LAUNCH(k_xent, (size_t)B, logits, labels, B, K, probs, row_loss);
}

template <typename I>
__global__ static void k_xent_bw(const float *probs, const int32_t *labels, int K, float scale,
                                 size_t n, float *dl) {
    FOR_EACH(i, n) dl[i] += dt_xent_grad(probs[i], (int)(i % K) == labels[i / K], scale);
}
extern "C" void dt_cu_softmax_xent_backward(cudaStream_t st, const float *probs,
                                            const int32_t *labels, int B, int K, float scale,
                                            float *dlogits) {
    size_t n = (size_t)B * K;
    LAUNCH(k_xent_bw, n, probs, labels, K, scale, n, dlogits);
}
