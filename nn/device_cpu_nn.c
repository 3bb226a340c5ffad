// device_cpu_nn.c — the network primitives of the cpu device (nn/device.h): im2col/col2im
// (darknet/Caffe), per-channel bias, batch normalisation (Ioffe & Szegedy 2015), relu, max
// and adaptive average pooling, inverted dropout and softmax cross-entropy. Plain loops,
// parallel over (image, channel) planes with OpenMP; per-element formulas from nn/kernels.h.
// Not here: memory, gemm, elementwise ops (device_cpu.c), the same primitives on half
// storage (device_cpu_half.c, which shares their loops through device_cpu_internal.h), or any
// layer logic (shapes are the caller's business; a primitive only trusts the sizes it is
// given).
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "device_cpu_internal.h"
#include "dt.h"
#include "kernels.h"

// ---- im2col / col2im ----

// x is (B,C,H,W); col is (B, C*KH*KW, OH*OW), row (c*KH + kh)*KW + kw, column oh*OW + ow
// holds x[b, c, oh*stride - pad + kh, ow*stride - pad + kw] (0 in the padding). Parallel
// over the B*C*KH*KW rows of col (each written by one thread).
static void cpu_im2col(dt_device *d, const float *x, int B, int C, int H, int W, int KH,
                       int KW, int stride, int pad, float *col) {
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
                          col + r * ohw, sizeof(float));
    }
}

// The adjoint of im2col: x[b,c,ih,iw] += every col entry that im2col read from it (set:
// each plane of x is zeroed first, so x = col2im(col)). Parallel over the B*C planes of x: a
// plane is written only from its own KH*KW rows.
static void col2im_impl(dt_device *d, const float *col, int B, int C, int H, int W, int KH,
                        int KW, int stride, int pad, float *x, int set) {
    int OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1;
    if (B <= 0 || C <= 0 || H <= 0 || W <= 0) return;
    if (OH <= 0 || OW <= 0) {  // no window: nothing to add, but set still writes the zeros
        if (set) memset(x, 0, (size_t)B * C * H * W * sizeof(float));
        return;
    }
    size_t ohw = (size_t)OH * OW, kk = (size_t)KH * KW;
    long planes = (long)B * C;
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if ((size_t)planes * kk * ohw > DT_CPU_PAR_MIN)
    for (long pc = 0; pc < planes; pc++) {
        float *xp = x + (size_t)pc * H * W;
        const float *cp = col + (size_t)pc * kk * ohw;
        if (set) memset(xp, 0, (size_t)H * W * sizeof(float));
        dt_cpu_col2im_plane(cp, H, W, KH, KW, stride, pad, OH, OW, xp);
    }
}

static void cpu_col2im(dt_device *d, const float *col, int B, int C, int H, int W, int KH,
                       int KW, int stride, int pad, float *x) {
    col2im_impl(d, col, B, C, H, W, KH, KW, stride, pad, x, 0);
}
static void cpu_col2im_set(dt_device *d, const float *col, int B, int C, int H, int W, int KH,
                           int KW, int stride, int pad, float *x) {
    col2im_impl(d, col, B, C, H, W, KH, KW, stride, pad, x, 1);
}

// ---- per-channel bias ----

// y is (B,C,HW): y[b,c,:] += bias[c]
static void cpu_bias_add(dt_device *d, float *y, const float *bias, int B, int C, int HW) {
    if (HW == 1) {  // (B, C) rows: a row at a time, vectorised (not a division per element)
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if ((size_t)B * C > DT_CPU_PAR_MIN)
        for (int b = 0; b < B; b++) {
            float *p = y + (size_t)b * C;
#pragma omp simd
            for (int c = 0; c < C; c++) p[c] += bias[c];
        }
        return;
    }
    long planes = (long)B * C;
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if ((size_t)planes * HW > DT_CPU_PAR_MIN)
    for (long pc = 0; pc < planes; pc++) {
        float *p = y + (size_t)pc * HW, bc = bias[pc % C];
        for (int i = 0; i < HW; i++) p[i] += bc;
    }
}

// dy is (B,C,HW): db[c] += sum_{b,hw} dy[b,c,hw], accumulated in double
static void cpu_bias_backward(dt_device *d, const float *dy, int B, int C, int HW, float *db) {
    if (HW == 1) {  // (B, C) rows: row by row over 64 columns at a time (not a column's
                    // stride of C), each column still summed b = 0..B-1 in double
        int blocks = (C + 63) / 64;
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if ((size_t)B * C > DT_CPU_PAR_MIN)
        for (int k = 0; k < blocks; k++) {
            int c0 = 64 * k, w = C - c0 < 64 ? C - c0 : 64;
            double s[64] = {0};
            for (int b = 0; b < B; b++) {
                const float *p = dy + (size_t)b * C + c0;
#pragma omp simd
                for (int j = 0; j < w; j++) s[j] += p[j];
            }
            for (int j = 0; j < w; j++) db[c0 + j] += (float)s[j];
        }
        return;
    }
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if ((size_t)B * C * HW > DT_CPU_PAR_MIN)
    for (int c = 0; c < C; c++) {
        double s = 0.0;
        for (int b = 0; b < B; b++) {
            const float *p = dy + ((size_t)b * C + c) * HW;
#pragma omp simd reduction(+ : s)
            for (int i = 0; i < HW; i++) s += p[i];
        }
        db[c] += (float)s;
    }
}

// ---- batch normalisation (Ioffe & Szegedy 2015, Alg. 1), x and y are (B,C,HW) ----

// Training: per channel the batch mean and biased variance over n = B*HW (one pass in
// double), y = gamma*(x-mean)*invstd + beta, and PyTorch's running statistics
// r = (1-momentum)*r + momentum*stat with the unbiased variance n/(n-1)*var (n = 1: var).
static void cpu_bn_forward_train(dt_device *d, const float *x, int B, int C, int HW,
                                 const float *gamma, const float *beta, float eps,
                                 float momentum, float *running_mean, float *running_var,
                                 float *save_mean, float *save_invstd, float *y) {
    size_t n = (size_t)B * HW;
    if (n == 0) return;
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if (n * C > DT_CPU_PAR_MIN)
    for (int c = 0; c < C; c++) {
        // one pass over x, shifted by its first element k; in double the cancellation in
        // E[(x-k)^2] - E[x-k]^2 stays far below fp32 resolution
        double k = x[(size_t)c * HW], s = 0.0, ss = 0.0;
        for (int b = 0; b < B; b++) dt_cpu_bn_sums(x + ((size_t)b * C + c) * HW, HW, k, &s, &ss);
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
            const float *p = x + ((size_t)b * C + c) * HW;
            float *q = y + ((size_t)b * C + c) * HW;
            for (int i = 0; i < HW; i++) q[i] = dt_bn_normalize(p[i], fmean, finvstd, g, bt);
        }
    }
}

// Evaluation: y = gamma*(x - running_mean)/sqrt(running_var + eps) + beta
static void cpu_bn_forward_eval(dt_device *d, const float *x, int B, int C, int HW,
                                const float *gamma, const float *beta, float eps,
                                const float *running_mean, const float *running_var,
                                float *y) {
    long planes = (long)B * C;
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if ((size_t)planes * HW > DT_CPU_PAR_MIN)
    for (long pc = 0; pc < planes; pc++) {
        int c = (int)(pc % C);
        float invstd = dt_bn_invstd((double)running_var[c], eps);
        float m = running_mean[c], g = gamma[c], bt = beta[c];
        const float *p = x + (size_t)pc * HW;
        float *q = y + (size_t)pc * HW;
        for (int i = 0; i < HW; i++) q[i] = dt_bn_normalize(p[i], m, invstd, g, bt);
    }
}

// dx += gamma*invstd/n * (n*dy - sum(dy) - xhat*sum(dy*xhat)) (set: dx = ...);
// dgamma += sum(dy*xhat); dbeta += sum(dy); xhat = (x - save_mean)*save_invstd.
// dx, dgamma, dbeta may be NULL.
static void bn_backward_impl(dt_device *d, const float *dy, const float *x, int B, int C,
                             int HW, const float *gamma, const float *save_mean,
                             const float *save_invstd, float *dx, float *dgamma, float *dbeta,
                             int set) {
    size_t n = (size_t)B * HW;
    if (n == 0) return;
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if (n * C > DT_CPU_PAR_MIN)
    for (int c = 0; c < C; c++) {
        float m = save_mean[c], is = save_invstd[c];
        double sdy = 0.0, sdyx = 0.0;
        for (int b = 0; b < B; b++) {
            size_t o = ((size_t)b * C + c) * HW;
            dt_cpu_bn_grad_sums(dy + o, x + o, HW, m, is, &sdy, &sdyx);
        }
        if (dgamma) dgamma[c] += (float)sdyx;
        if (dbeta) dbeta[c] += (float)sdy;
        if (!dx) continue;
        float gm = gamma[c], fs = (float)sdy, fsx = (float)sdyx, fn = (float)n;
        for (int b = 0; b < B; b++) {
            const float *g = dy + ((size_t)b * C + c) * HW;
            const float *p = x + ((size_t)b * C + c) * HW;
            float *q = dx + ((size_t)b * C + c) * HW;
            if (set) {
                for (int i = 0; i < HW; i++)
                    q[i] = dt_bn_dx(g[i], (p[i] - m) * is, gm, is, fs, fsx, fn);
            } else {
                for (int i = 0; i < HW; i++)
                    q[i] += dt_bn_dx(g[i], (p[i] - m) * is, gm, is, fs, fsx, fn);
            }
        }
    }
}

static void cpu_bn_backward(dt_device *d, const float *dy, const float *x, int B, int C,
                            int HW, const float *gamma, const float *save_mean,
                            const float *save_invstd, float *dx, float *dgamma, float *dbeta) {
    bn_backward_impl(d, dy, x, B, C, HW, gamma, save_mean, save_invstd, dx, dgamma, dbeta, 0);
}
static void cpu_bn_backward_set(dt_device *d, const float *dy, const float *x, int B, int C,
                                int HW, const float *gamma, const float *save_mean,
                                const float *save_invstd, float *dx, float *dgamma,
                                float *dbeta) {
    bn_backward_impl(d, dy, x, B, C, HW, gamma, save_mean, save_invstd, dx, dgamma, dbeta, 1);
}

// ---- activations ----

// y = max(x, 0); NaN stays NaN (as PyTorch); x == y (in place) is fine
static void cpu_relu_forward(dt_device *d, const float *x, float *y, size_t n) {
    DT_CPU_FOR(n, y[i] = dt_relu(x[i]));
}

// dx += dy where y > 0
static void cpu_relu_backward(dt_device *d, const float *y, const float *dy, float *dx,
                              size_t n) {
    DT_CPU_FOR(n, dx[i] += dt_relu_grad(y[i], dy[i]));
}

// in place (torchvision inplace=True): dxy = y > 0 ? dxy : 0
static void cpu_relu_backward_inplace(dt_device *d, const float *y, float *dxy, size_t n) {
    DT_CPU_FOR(n, dxy[i] = dt_relu_grad(y[i], dxy[i]));
}

// ---- pooling ----

// dt_pool_beats (nn/kernels.h) is the max pooling order. Scanning a window row by row with
// it gives the first cell (row-major) of the maximal class, and so does taking each row's
// winner first, then the rows' winners in order.
#define pool_beats dt_pool_beats

// One window, scanned row-major (dt_maxpool_window, nn/kernels.h, shared with the cuda device)
#define pool_window dt_maxpool_window

// Stride-2 rows (ResNet's 3x3/s2 stem pool): for the output cells [lo,hi) of one output row,
// whose windows lie inside the plane's columns, the window rows [h0,h1) are scanned kernel
// column by kernel column across the whole output row, so the inner loop is a fixed-stride
// sweep over ow (vectorisable) instead of a bounds-checked window per cell. Same order,
// same winner as pool_window.
static void pool_row_stride2(const float *xp, int W, int h0, int h1, int K, int pad, int lo,
                             int hi, float *restrict y, int32_t *restrict a) {
    for (int ih = h0; ih < h1; ih++) {
        const float *xr = xp + (size_t)ih * W;
        for (int kw = 0; kw < K; kw++) {
            int off = kw - pad;  // column of cell ow: 2*ow + off
            int32_t base = ih * W + off;
            if (ih == h0 && kw == 0) {
                for (int ow = lo; ow < hi; ow++) y[ow] = xr[2 * ow + off], a[ow] = base + 2 * ow;
                continue;
            }
            for (int ow = lo; ow < hi; ow++) {
                float v = xr[2 * ow + off];
                int take = pool_beats(v, y[ow]);
                y[ow] = take ? v : y[ow];
                a[ow] = take ? base + 2 * ow : a[ow];
            }
        }
    }
}

// The interior output columns [*lo, *hi) of a stride-2 pooling (2*ow - pad >= 0 and
// 2*ow - pad + K <= W), which pool_row_stride2 takes; an empty range for other strides.
static void pool_interior(int W, int K, int stride, int pad, int OW, int *lo, int *hi) {
    *lo = OW, *hi = OW;
    if (stride == 2 && W - K + pad >= 0) {
        *lo = (pad + 1) / 2;
        *hi = (W - K + pad) / 2 + 1;
        if (*hi > OW) *hi = OW;
        if (*lo > *hi) *lo = *hi;
    }
}

// One (b,c) plane: xp (H,W) -> yp and ap (OH,OW); [lo,hi) from pool_interior
static void maxpool_plane(const float *xp, int H, int W, int K, int stride, int pad, int OH,
                          int OW, int lo, int hi, float *yp, int32_t *ap) {
    for (int oh = 0; oh < OH; oh++) {
        int h0 = oh * stride - pad, h1 = h0 + K;
        if (h0 < 0) h0 = 0;
        if (h1 > H) h1 = H;
        float *yr = yp + (size_t)oh * OW;
        int32_t *ar = ap + (size_t)oh * OW;
        int a = h0 < h1 ? lo : OW, b = h0 < h1 ? hi : OW;  // the row-wise cells [a,b)
        if (a < b) pool_row_stride2(xp, W, h0, h1, K, pad, a, b, yr, ar);
        for (int ow = 0; ow < OW; ow++) {
            if (ow >= a && ow < b) continue;  // done row-wise above
            int w0 = ow * stride - pad, w1 = w0 + K;
            if (w0 < 0) w0 = 0;
            if (w1 > W) w1 = W;
            pool_window(xp, W, h0, h1, w0, w1, yr + ow, ar + ow);
        }
    }
}

// x (B,C,H,W) -> y (B,C,OH,OW): the max over the window's in-image cells (padding never
// wins; a NaN wins, as in PyTorch); argmax = h*W + w of the winner in its plane, -1 only
// for a window entirely in the padding (pad >= K), whose y is -inf. Stride 2 runs the
// interior cells of each output row through pool_row_stride2, the border cells one by one.
static void cpu_maxpool_forward(dt_device *d, const float *x, int B, int C, int H, int W,
                                int K, int stride, int pad, float *y, int32_t *argmax) {
    int OH = (H + 2 * pad - K) / stride + 1, OW = (W + 2 * pad - K) / stride + 1;
    if (B <= 0 || C <= 0 || OH <= 0 || OW <= 0) return;
    int lo, hi;
    pool_interior(W, K, stride, pad, OW, &lo, &hi);
    long planes = (long)B * C;
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if ((size_t)planes * OH * OW * K * K > DT_CPU_PAR_MIN)
    for (long pc = 0; pc < planes; pc++)
        maxpool_plane(x + (size_t)pc * H * W, H, W, K, stride, pad, OH, OW, lo, hi,
                      y + (size_t)pc * OH * OW, argmax + (size_t)pc * OH * OW);
}

// dx plane q (hw) += dy plane g (ohw) at the argmax plane a
static void maxpool_bw_plane(const float *g, const int32_t *a, size_t ohw, size_t hw,
                             float *q) {
    for (size_t i = 0; i < ohw; i++) {
        if (a[i] >= 0 && (size_t)a[i] < hw) q[a[i]] += g[i];
    }
}

// dx[b,c,argmax] += dy[b,c,oh,ow]; dy and argmax are (B,C,OH,OW), dx is (B,C,H,W)
static void cpu_maxpool_backward(dt_device *d, const float *dy, const int32_t *argmax, int B,
                                 int C, int H, int W, int OH, int OW, float *dx) {
    long planes = (long)B * C;
    size_t ohw = (size_t)OH * OW, hw = (size_t)H * W;
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if ((size_t)planes * ohw > DT_CPU_PAR_MIN)
    for (long pc = 0; pc < planes; pc++)
        maxpool_bw_plane(dy + (size_t)pc * ohw, argmax + (size_t)pc * ohw, ohw, hw,
                         dx + (size_t)pc * hw);
}

// Max pooling on half storage (nn/device.h maxpool_forward_h, maxpool_backward_h): each
// plane widened into thread-local fp32 and the fp32 primitive's own plane loop run on it,
// so the bits of the views (nn/net_half.c). Forward narrows the maxima, which are widened
// halfs, so exactly; backward sums a plane's gradients in fp32 and rounds each dx once. No
// fp32 copy of the batch goes to memory: on ResNet's 112x112 stem the views path moved
// about three times the bytes (bench/RESULTS.md).
static void cpu_maxpool_forward_h(dt_device *d, int fmt, const uint16_t *x, int B, int C,
                                  int H, int W, int K, int stride, int pad, uint16_t *y,
                                  int32_t *argmax) {
    int OH = (H + 2 * pad - K) / stride + 1, OW = (W + 2 * pad - K) / stride + 1;
    if (B <= 0 || C <= 0 || OH <= 0 || OW <= 0) return;
    int lo, hi;
    pool_interior(W, K, stride, pad, OW, &lo, &hi);
    long planes = (long)B * C;
    size_t hw = (size_t)H * W, ohw = (size_t)OH * OW;
#pragma omp parallel num_threads(d->threads) if ((size_t)planes * ohw * K * K > DT_CPU_PAR_MIN)
    {
        float *f = mallocCheck((hw + ohw) * sizeof(float)), *fy = f + hw;
#pragma omp for schedule(static)
        for (long pc = 0; pc < planes; pc++) {
            dt_cpu_widen(d, fmt, x + (size_t)pc * hw, f, hw);
            maxpool_plane(f, H, W, K, stride, pad, OH, OW, lo, hi, fy,
                          argmax + (size_t)pc * ohw);
            dt_cpu_narrow(d, fmt, fy, y + (size_t)pc * ohw, ohw);
        }
        free(f);
    }
}

static void cpu_maxpool_backward_h(dt_device *d, int fmt, const uint16_t *dy,
                                   const int32_t *argmax, int B, int C, int H, int W, int OH,
                                   int OW, uint16_t *dx) {
    long planes = (long)B * C;
    size_t ohw = (size_t)OH * OW, hw = (size_t)H * W;
    if (planes <= 0 || ohw == 0 || hw == 0) return;
#pragma omp parallel num_threads(d->threads) if ((size_t)planes * ohw > DT_CPU_PAR_MIN)
    {
        float *q = mallocCheck((hw + ohw) * sizeof(float)), *g = q + hw;
#pragma omp for schedule(static)
        for (long pc = 0; pc < planes; pc++) {
            dt_cpu_widen(d, fmt, dx + (size_t)pc * hw, q, hw);
            dt_cpu_widen(d, fmt, dy + (size_t)pc * ohw, g, ohw);
            maxpool_bw_plane(g, argmax + (size_t)pc * ohw, ohw, hw, q);
            dt_cpu_narrow(d, fmt, q, dx + (size_t)pc * hw, hw);
        }
        free(q);
    }
}

// PyTorch AdaptiveAvgPool2d windows (nn/kernels.h)
#define ada_start dt_ada_start
#define ada_end dt_ada_end

// x (B,C,H,W) -> y (B,C,OH,OW), each cell the mean of its adaptive window
static void cpu_avgpool_forward(dt_device *d, const float *x, int B, int C, int H, int W,
                                int OH, int OW, float *y) {
    if (OH <= 0 || OW <= 0) return;
    long planes = (long)B * C;
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if ((size_t)planes * H * W > DT_CPU_PAR_MIN)
    for (long pc = 0; pc < planes; pc++) {
        const float *xp = x + (size_t)pc * H * W;
        float *yp = y + (size_t)pc * OH * OW;
        for (int i = 0; i < OH; i++)
            for (int j = 0; j < OW; j++) yp[i * OW + j] = dt_avgpool_cell(xp, H, W, OH, OW, i, j);
    }
}

// dx += dy/count spread over each cell's window (windows may overlap: they add)
static void cpu_avgpool_backward(dt_device *d, const float *dy, int B, int C, int H, int W,
                                 int OH, int OW, float *dx) {
    if (OH <= 0 || OW <= 0) return;
    long planes = (long)B * C;
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if ((size_t)planes * H * W > DT_CPU_PAR_MIN)
    for (long pc = 0; pc < planes; pc++) {
        const float *g = dy + (size_t)pc * OH * OW;
        float *q = dx + (size_t)pc * H * W;
        for (int i = 0; i < OH; i++) {
            int h0 = ada_start(i, H, OH), h1 = ada_end(i, H, OH);
            for (int j = 0; j < OW; j++) {
                int w0 = ada_start(j, W, OW), w1 = ada_end(j, W, OW);
                float v = g[i * OW + j] / (float)((h1 - h0) * (w1 - w0));
                for (int ih = h0; ih < h1; ih++) {
                    for (int iw = w0; iw < w1; iw++) q[ih * W + iw] += v;
                }
            }
        }
    }
}

// ---- dropout (Srivastava et al. 2014, inverted) ----

// mask[i] = keep(seed, i) ? 1/(1-p) : 0 (dt_dropout_mask, counter-based); y = x*mask
static void cpu_dropout_forward(dt_device *d, const float *x, float *y, float *mask, size_t n,
                                float p, uint64_t seed) {
#pragma omp parallel for num_threads(d->threads) schedule(static) if (n > DT_CPU_PAR_MIN)
    for (size_t i = 0; i < n; i++) {
        float m = dt_dropout_mask(seed, i, p);
        mask[i] = m;
        y[i] = x[i] * m;
    }
}

// dx += dy*mask
static void cpu_dropout_backward(dt_device *d, const float *dy, const float *mask, float *dx,
                                 size_t n) {
    DT_CPU_FOR(n, dx[i] += dy[i] * mask[i]);
}

// ---- softmax cross-entropy, mean over the batch ----

// logits (B,K), labels (B) -> probs (B,K); returns mean_b (logsumexp(z_b) - z_b[label_b]),
// with the row maximum subtracted before exp. A label outside [0,K) makes the loss NaN
// (never a read out of bounds, never a plausible number).
static float cpu_softmax_xent_forward(dt_device *d, const float *logits,
                                      const int32_t *labels, int B, int K, float *probs) {
    if (B <= 0 || K <= 0) return B <= 0 ? 0.0f : NAN;
    double *row_loss = mallocCheck((size_t)B * sizeof(double));
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if ((size_t)B * K > DT_CPU_PAR_MIN)
    for (int b = 0; b < B; b++)
        row_loss[b] = dt_softmax_xent_row(logits + (size_t)b * K, probs + (size_t)b * K, K,
                                          labels[b]);
    double total = 0.0;
    for (int b = 0; b < B; b++) total += row_loss[b];
    free(row_loss);
    return (float)(total / B);
}

// dlogits += scale * (probs - onehot(labels)); probs, dlogits are (B,K)
static void cpu_softmax_xent_backward(dt_device *d, const float *probs, const int32_t *labels,
                                      int B, int K, float scale, float *dlogits) {
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if ((size_t)B * K > DT_CPU_PAR_MIN)
    for (int b = 0; b < B; b++) {
        const float *pr = probs + (size_t)b * K;
        float *g = dlogits + (size_t)b * K;
        int32_t y = labels[b];
        for (int k = 0; k < K; k++) g[k] += dt_xent_grad(pr[k], k == y, scale);
    }
}

void dt_cpu_install_nn(dt_device *d) {
    d->im2col = cpu_im2col;
    d->col2im = cpu_col2im;
    d->col2im_set = cpu_col2im_set;
    d->bias_add = cpu_bias_add;
    d->bias_backward = cpu_bias_backward;
    d->bn_forward_train = cpu_bn_forward_train;
    d->bn_forward_eval = cpu_bn_forward_eval;
    d->bn_backward = cpu_bn_backward;
    d->bn_backward_set = cpu_bn_backward_set;
    d->relu_forward = cpu_relu_forward;
    d->relu_backward = cpu_relu_backward;
    d->relu_backward_inplace = cpu_relu_backward_inplace;
    d->maxpool_forward = cpu_maxpool_forward;
    d->maxpool_backward = cpu_maxpool_backward;
    d->maxpool_forward_h = cpu_maxpool_forward_h;
    d->maxpool_backward_h = cpu_maxpool_backward_h;
    d->avgpool_forward = cpu_avgpool_forward;
    d->avgpool_backward = cpu_avgpool_backward;
    d->dropout_forward = cpu_dropout_forward;
    d->dropout_backward = cpu_dropout_backward;
    d->softmax_xent_forward = cpu_softmax_xent_forward;
    d->softmax_xent_backward = cpu_softmax_xent_backward;
}
