// reflayers.h — float64 reference layers for the layer and network tests: the plainest
// loops that say what each layer computes (torch.nn semantics), written independently of
// nn/ (no device, no im2col, no gemm). Shared by test_layers_*.c and test_net*.c; not a
// library, not fast. Shapes are NCHW, row-major, as in nn/device.h.
#ifndef DT_REFLAYERS_H
#define DT_REFLAYERS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

static inline int ref_out(int size, int k, int stride, int pad) {
    return size + 2 * pad < k ? 0 : (size + 2 * pad - k) / stride + 1;
}

// Direct convolution, 7 loops. x (B,C,H,W), w (OC,C,K,K), bias (OC) or NULL,
// y (B,OC,OH,OW) overwritten.
static inline void ref_conv_forward(int B, int C, int H, int W, int OC, int K, int S, int P,
                                    const double *x, const double *w, const double *bias,
                                    double *y) {
    int OH = ref_out(H, K, S, P), OW = ref_out(W, K, S, P);
    for (int b = 0; b < B; b++)
        for (int o = 0; o < OC; o++)
            for (int i = 0; i < OH; i++)
                for (int j = 0; j < OW; j++) {
                    double s = bias ? bias[o] : 0.0;
                    for (int c = 0; c < C; c++)
                        for (int u = 0; u < K; u++)
                            for (int v = 0; v < K; v++) {
                                int hi = i * S - P + u, wi = j * S - P + v;
                                if (hi < 0 || hi >= H || wi < 0 || wi >= W) continue;
                                s += w[((o * C + c) * K + u) * K + v] *
                                     x[((b * C + c) * H + hi) * W + wi];
                            }
                    y[((b * OC + o) * OH + i) * OW + j] = s;
                }
}

// The adjoint of ref_conv_forward, by the same loops: dx, dw, db (may be NULL) accumulate.
static inline void ref_conv_backward(int B, int C, int H, int W, int OC, int K, int S, int P,
                                     const double *x, const double *w, const double *dy,
                                     double *dx, double *dw, double *db) {
    int OH = ref_out(H, K, S, P), OW = ref_out(W, K, S, P);
    for (int b = 0; b < B; b++)
        for (int o = 0; o < OC; o++)
            for (int i = 0; i < OH; i++)
                for (int j = 0; j < OW; j++) {
                    double g = dy[((b * OC + o) * OH + i) * OW + j];
                    if (db) db[o] += g;
                    for (int c = 0; c < C; c++)
                        for (int u = 0; u < K; u++)
                            for (int v = 0; v < K; v++) {
                                int hi = i * S - P + u, wi = j * S - P + v;
                                if (hi < 0 || hi >= H || wi < 0 || wi >= W) continue;
                                size_t xi = ((size_t)(b * C + c) * H + hi) * W + wi;
                                size_t wk = ((size_t)(o * C + c) * K + u) * K + v;
                                dw[wk] += g * x[xi];
                                dx[xi] += g * w[wk];
                            }
                }
}

// Batch normalisation with batch statistics (training). x, y (B,C,HW); mean, var (C) get
// the batch mean and the biased variance.
static inline void ref_bn_train(int B, int C, int HW, const double *x, const double *gamma,
                                const double *beta, double eps, double *y, double *mean,
                                double *var) {
    double n = (double)B * HW;
    for (int c = 0; c < C; c++) {
        double s = 0.0, ss = 0.0;
        for (int b = 0; b < B; b++)
            for (int k = 0; k < HW; k++) s += x[((size_t)b * C + c) * HW + k];
        double m = s / n;
        for (int b = 0; b < B; b++)
            for (int k = 0; k < HW; k++) {
                double dlt = x[((size_t)b * C + c) * HW + k] - m;
                ss += dlt * dlt;
            }
        double v = ss / n, inv = 1.0 / sqrt(v + eps);
        for (int b = 0; b < B; b++)
            for (int k = 0; k < HW; k++) {
                size_t i = ((size_t)b * C + c) * HW + k;
                y[i] = gamma[c] * (x[i] - m) * inv + beta[c];
            }
        if (mean) mean[c] = m;
        if (var) var[c] = v;
    }
}

// Batch normalisation with given statistics (evaluation).
static inline void ref_bn_eval(int B, int C, int HW, const double *x, const double *gamma,
                               const double *beta, double eps, const double *rmean,
                               const double *rvar, double *y) {
    for (int b = 0; b < B; b++)
        for (int c = 0; c < C; c++)
            for (int k = 0; k < HW; k++) {
                size_t i = ((size_t)b * C + c) * HW + k;
                y[i] = gamma[c] * (x[i] - rmean[c]) / sqrt(rvar[c] + eps) + beta[c];
            }
}

static inline void ref_relu(size_t n, const double *x, double *y) {
    for (size_t i = 0; i < n; i++) y[i] = x[i] > 0.0 ? x[i] : 0.0;
}

// Max pooling; padded cells never win (torch.nn.MaxPool2d pads with -inf).
static inline void ref_maxpool(int B, int C, int H, int W, int K, int S, int P,
                               const double *x, double *y) {
    int OH = ref_out(H, K, S, P), OW = ref_out(W, K, S, P);
    for (int bc = 0; bc < B * C; bc++)
        for (int i = 0; i < OH; i++)
            for (int j = 0; j < OW; j++) {
                double m = -INFINITY;
                for (int u = 0; u < K; u++)
                    for (int v = 0; v < K; v++) {
                        int hi = i * S - P + u, wi = j * S - P + v;
                        if (hi < 0 || hi >= H || wi < 0 || wi >= W) continue;
                        double e = x[((size_t)bc * H + hi) * W + wi];
                        if (e > m) m = e;
                    }
                y[((size_t)bc * OH + i) * OW + j] = m;
            }
}

// Adaptive average pooling, torch's windows: rows floor(i*H/OH) .. ceil((i+1)*H/OH)-1.
static inline void ref_avgpool(int B, int C, int H, int W, int OH, int OW, const double *x,
                               double *y) {
    for (int bc = 0; bc < B * C; bc++)
        for (int i = 0; i < OH; i++)
            for (int j = 0; j < OW; j++) {
                int h0 = (int)floor((double)i * H / OH), h1 = (int)ceil((double)(i + 1) * H / OH);
                int w0 = (int)floor((double)j * W / OW), w1 = (int)ceil((double)(j + 1) * W / OW);
                double s = 0.0;
                for (int h = h0; h < h1; h++)
                    for (int w = w0; w < w1; w++) s += x[((size_t)bc * H + h) * W + w];
                y[((size_t)bc * OH + i) * OW + j] = s / ((double)(h1 - h0) * (w1 - w0));
            }
}

// torch.nn.Linear: x (B,IN), w (OUT,IN), bias (OUT) or NULL, y (B,OUT) = x w^T + b
static inline void ref_linear(int B, int IN, int OUT, const double *x, const double *w,
                              const double *bias, double *y) {
    for (int b = 0; b < B; b++)
        for (int o = 0; o < OUT; o++) {
            double s = bias ? bias[o] : 0.0;
            for (int k = 0; k < IN; k++) s += x[(size_t)b * IN + k] * w[(size_t)o * IN + k];
            y[(size_t)b * OUT + o] = s;
        }
}

// Mean softmax cross-entropy over the batch: logits (B,K), labels (B).
static inline double ref_xent(int B, int K, const double *logits, const int32_t *labels) {
    double total = 0.0;
    for (int b = 0; b < B; b++) {
        const double *z = logits + (size_t)b * K;
        double m = z[0];
        for (int k = 1; k < K; k++)
            if (z[k] > m) m = z[k];
        double s = 0.0;
        for (int k = 0; k < K; k++) s += exp(z[k] - m);
        total += m + log(s) - z[labels[b]];
    }
    return total / B;
}

#endif
