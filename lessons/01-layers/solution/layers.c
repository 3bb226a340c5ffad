// layers.c — lesson 01, the reference solution: conv2d as im2col + gemm, batch-norm forward
// and backward (training mode), softmax cross-entropy. Contract and shapes: layers01.h.
#include <math.h>
#include <string.h>

#include "layers01.h"

// ---- conv2d: im2col + gemm (Chellapilla et al. 2006) ----

// Row r = (c, kh, kw) of col holds, for every output position (oh, ow), the input pixel the
// kernel tap (kh, kw) of channel c sees there: a convolution becomes one matrix product.
void im2col(const float *x, int C, int H, int W, int KH, int KW, int stride, int pad,
            float *col) {
    int OH = conv_out(H, KH, stride, pad), OW = conv_out(W, KW, stride, pad);
    for (int c = 0; c < C; c++)
        for (int kh = 0; kh < KH; kh++)
            for (int kw = 0; kw < KW; kw++) {
                float *row = col + ((size_t)(c * KH + kh) * KW + kw) * OH * OW;
                for (int oh = 0; oh < OH; oh++) {
                    int ih = oh * stride - pad + kh;
                    for (int ow = 0; ow < OW; ow++) {
                        int iw = ow * stride - pad + kw;
                        int inside = ih >= 0 && ih < H && iw >= 0 && iw < W;
                        row[oh * OW + ow] = inside ? x[((size_t)c * H + ih) * W + iw] : 0.0f;
                    }
                }
            }
}

// The same walk as im2col with the arrow reversed: what im2col copied out is added back.
void col2im(const float *col, int C, int H, int W, int KH, int KW, int stride, int pad,
            float *x) {
    int OH = conv_out(H, KH, stride, pad), OW = conv_out(W, KW, stride, pad);
    for (int c = 0; c < C; c++)
        for (int kh = 0; kh < KH; kh++)
            for (int kw = 0; kw < KW; kw++) {
                const float *row = col + ((size_t)(c * KH + kh) * KW + kw) * OH * OW;
                for (int oh = 0; oh < OH; oh++) {
                    int ih = oh * stride - pad + kh;
                    if (ih < 0 || ih >= H) continue;
                    for (int ow = 0; ow < OW; ow++) {
                        int iw = ow * stride - pad + kw;
                        if (iw < 0 || iw >= W) continue;
                        x[((size_t)c * H + ih) * W + iw] += row[oh * OW + ow];
                    }
                }
            }
}

// Per image: col = im2col(x_b); y_b (OC,N) = w (OC,K) col (K,N); then the bias.
void conv2d_forward(dt_device *d, const conv_shape *s, const float *x, const float *w,
                    const float *bias, float *y, float *work) {
    int K = s->C * s->KH * s->KW, N = s->OH * s->OW;
    size_t x_img = (size_t)s->C * s->H * s->W, y_img = (size_t)s->OC * N;
    for (int b = 0; b < s->B; b++) {
        float *yb = y + b * y_img;
        im2col(x + b * x_img, s->C, s->H, s->W, s->KH, s->KW, s->stride, s->pad, work);
        d->gemm(d, 0, 0, s->OC, N, K, 1.0f, w, K, work, N, 0.0f, yb, N);
        for (int o = 0; o < s->OC; o++)
            for (int j = 0; j < N; j++) yb[(size_t)o * N + j] += bias[o];
    }
}

// Per image: the columns again (darknet recomputes them rather than keep B copies), then
//   dw += dy_b col^T      (OC,N)(N,K)
//   col = w^T dy_b        (K,OC)(OC,N), overwriting the columns
//   dx_b += col2im(col)
// and db sums dy over the batch and the positions.
void conv2d_backward(dt_device *d, const conv_shape *s, const float *x, const float *w,
                     const float *dy, float *dx, float *dw, float *db, float *work) {
    int K = s->C * s->KH * s->KW, N = s->OH * s->OW, OC = s->OC;
    size_t x_img = (size_t)s->C * s->H * s->W, y_img = (size_t)OC * N;
    for (int b = 0; b < s->B; b++) {
        const float *dyb = dy + b * y_img;
        im2col(x + b * x_img, s->C, s->H, s->W, s->KH, s->KW, s->stride, s->pad, work);
        d->gemm(d, 0, 1, OC, K, N, 1.0f, dyb, N, work, N, 1.0f, dw, K);
        d->gemm(d, 1, 0, K, N, OC, 1.0f, w, K, dyb, N, 0.0f, work, N);
        col2im(work, s->C, s->H, s->W, s->KH, s->KW, s->stride, s->pad, dx + b * x_img);
        for (int o = 0; o < OC; o++)
            for (int j = 0; j < N; j++) db[o] += dyb[(size_t)o * N + j];
    }
}

// ---- batch normalisation, training mode (Ioffe & Szegedy 2015, Algorithm 1) ----

void bn_forward_train(int B, int C, int HW, const float *x, const float *gamma,
                      const float *beta, float eps, float *y, float *mean, float *invstd) {
    double n = (double)B * HW;
    for (int c = 0; c < C; c++) {
        double s = 0.0, ss = 0.0;
        for (int b = 0; b < B; b++)
            for (int i = 0; i < HW; i++) s += x[((size_t)b * C + c) * HW + i];
        double m = s / n;
        for (int b = 0; b < B; b++)
            for (int i = 0; i < HW; i++) {
                double dlt = x[((size_t)b * C + c) * HW + i] - m;
                ss += dlt * dlt;
            }
        double var = ss / n;
        float inv = (float)(1.0 / sqrt(var + eps));
        mean[c] = (float)m;
        invstd[c] = inv;
        for (int b = 0; b < B; b++)
            for (int i = 0; i < HW; i++) {
                size_t k = ((size_t)b * C + c) * HW + i;
                y[k] = gamma[c] * (x[k] - mean[c]) * inv + beta[c];
            }
    }
}

// The closed form of the chain rule through mean and variance (the paper's backward,
// simplified): dx = gamma*invstd * (dy - mean(dy) - xhat*mean(dy*xhat)).
void bn_backward(int B, int C, int HW, const float *x, const float *dy, const float *gamma,
                 const float *mean, const float *invstd, float *dx, float *dgamma,
                 float *dbeta) {
    double n = (double)B * HW;
    for (int c = 0; c < C; c++) {
        double sdy = 0.0, sdyx = 0.0;
        for (int b = 0; b < B; b++)
            for (int i = 0; i < HW; i++) {
                size_t k = ((size_t)b * C + c) * HW + i;
                double xhat = (x[k] - mean[c]) * invstd[c];
                sdy += dy[k];
                sdyx += dy[k] * xhat;
            }
        double g = (double)gamma[c] * invstd[c];
        for (int b = 0; b < B; b++)
            for (int i = 0; i < HW; i++) {
                size_t k = ((size_t)b * C + c) * HW + i;
                double xhat = (x[k] - mean[c]) * invstd[c];
                dx[k] += (float)(g * (dy[k] - sdy / n - xhat * sdyx / n));
            }
        dgamma[c] += (float)sdyx;
        dbeta[c] += (float)sdy;
    }
}

// ---- softmax cross-entropy, mean over the batch ----

// Per row: m = max z; p = exp(z - m) / sum exp(z - m); loss = m + log(sum) - z[label]
// (log-sum-exp: exp never sees a positive argument, so it cannot overflow).
float softmax_xent_forward(int B, int K, const float *logits, const int32_t *labels,
                           float *probs) {
    double total = 0.0;
    for (int b = 0; b < B; b++) {
        const float *z = logits + (size_t)b * K;
        float *p = probs + (size_t)b * K;
        float m = z[0];
        for (int k = 1; k < K; k++)
            if (z[k] > m) m = z[k];
        double sum = 0.0;
        for (int k = 0; k < K; k++) {
            p[k] = expf(z[k] - m);
            sum += p[k];
        }
        for (int k = 0; k < K; k++) p[k] = (float)(p[k] / sum);
        total += (double)m + log(sum) - z[labels[b]];
    }
    return (float)(total / B);
}

void softmax_xent_backward(int B, int K, const float *probs, const int32_t *labels,
                           float *dlogits) {
    float scale = 1.0f / (float)B;
    for (int b = 0; b < B; b++)
        for (int k = 0; k < K; k++) {
            size_t i = (size_t)b * K + k;
            dlogits[i] += scale * (probs[i] - (k == labels[b] ? 1.0f : 0.0f));
        }
}
