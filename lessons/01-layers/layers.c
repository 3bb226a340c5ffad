// layers.c — lesson 01: conv2d as im2col + gemm, batch-norm forward and backward (training
// mode), softmax cross-entropy. The contract (shapes, what adds and what overwrites) is in
// layers01.h; the lesson in README.md. Grade with `lessons/grade 01` from the repo root.
//
// Each body below is yours to write. As handed out they do nothing, so every check fails
// (outputs stay zero) — nothing crashes and nothing passes by accident.
#include <math.h>
#include <string.h>

#include "layers01.h"

// ---- conv2d: im2col + gemm (Chellapilla et al. 2006) ----

void im2col(const float *x, int C, int H, int W, int KH, int KW, int stride, int pad,
            float *col) {
    // TODO(student): fill col (C*KH*KW rows, OH*OW columns; OH, OW from conv_out) so that
    // row (c*KH + kh)*KW + kw, column oh*OW + ow holds x[c][ih][iw] with
    // ih = oh*stride - pad + kh, iw = ow*stride - pad + kw — and 0 where (ih, iw) lies in
    // the padding. Overwrite every entry (col is scratch: it holds stale numbers).
    (void)x, (void)C, (void)H, (void)W, (void)KH, (void)KW, (void)stride, (void)pad;
    (void)col;
}

void col2im(const float *col, int C, int H, int W, int KH, int KW, int stride, int pad,
            float *x) {
    // TODO(student): the same walk as im2col, the arrow reversed: x[c][ih][iw] += the col
    // entry im2col copied from there; skip entries that came from the padding. ADD, never
    // assign: overlapping windows (stride < kernel) each contribute.
    (void)col, (void)C, (void)H, (void)W, (void)KH, (void)KW, (void)stride, (void)pad;
    (void)x;
}

void conv2d_forward(dt_device *d, const conv_shape *s, const float *x, const float *w,
                    const float *bias, float *y, float *work) {
    // TODO(student): for each image b (K = C*KH*KW, N = OH*OW):
    //   im2col(x_b) into work (K,N); then y_b (OC,N) = w (OC,K) · work (K,N) with one
    //   d->gemm(d, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc) —
    //   row-major, ld* are row lengths (nn/device.h); then add bias[o] to row o of y_b.
    (void)d, (void)s, (void)x, (void)w, (void)bias, (void)y, (void)work;
}

void conv2d_backward(dt_device *d, const conv_shape *s, const float *x, const float *w,
                     const float *dy, float *dx, float *dw, float *db, float *work) {
    // TODO(student): for each image b:
    //   work = im2col(x_b) again; dw (OC,K) += dy_b (OC,N) · work^T   (gemm, trans_b, beta 1)
    //   work = w^T (K,OC) · dy_b (OC,N)                                (gemm, trans_a, beta 0)
    //   dx_b += col2im(work);  db[o] += the sum of row o of dy_b.
    (void)d, (void)s, (void)x, (void)w, (void)dy, (void)dx, (void)dw, (void)db, (void)work;
}

// ---- batch normalisation, training mode (Ioffe & Szegedy 2015, Algorithm 1) ----

void bn_forward_train(int B, int C, int HW, const float *x, const float *gamma,
                      const float *beta, float eps, float *y, float *mean, float *invstd) {
    // TODO(student): per channel c, over its n = B*HW elements x[(b*C + c)*HW + i]: the mean,
    // the biased variance (divide by n), invstd = 1/sqrt(var + eps); write mean[c],
    // invstd[c] and y = gamma[c]*(x - mean)*invstd + beta[c]. Sum in double.
    (void)B, (void)C, (void)HW, (void)x, (void)gamma, (void)beta, (void)eps, (void)y;
    (void)mean, (void)invstd;
}

void bn_backward(int B, int C, int HW, const float *x, const float *dy, const float *gamma,
                 const float *mean, const float *invstd, float *dx, float *dgamma,
                 float *dbeta) {
    // TODO(student): per channel, with xhat = (x - mean[c])*invstd[c]: the two sums
    // sum(dy) and sum(dy*xhat) over the channel's n elements, then
    //   dx += gamma*invstd*(dy - sum(dy)/n - xhat*sum(dy*xhat)/n),
    //   dgamma[c] += sum(dy*xhat), dbeta[c] += sum(dy).
    (void)B, (void)C, (void)HW, (void)x, (void)dy, (void)gamma, (void)mean, (void)invstd;
    (void)dx, (void)dgamma, (void)dbeta;
}

// ---- softmax cross-entropy, mean over the batch ----

float softmax_xent_forward(int B, int K, const float *logits, const int32_t *labels,
                           float *probs) {
    // TODO(student): per row b: m = max_k z[k]; probs = exp(z - m) / sum exp(z - m);
    // loss_b = m + log(sum exp(z - m)) - z[label]. Return the mean of loss_b over the rows.
    (void)B, (void)K, (void)logits, (void)labels, (void)probs;
    return 0.0f;
}

void softmax_xent_backward(int B, int K, const float *probs, const int32_t *labels,
                           float *dlogits) {
    // TODO(student): dlogits[b][k] += (probs[b][k] - (k == labels[b])) / B.
    (void)B, (void)K, (void)probs, (void)labels, (void)dlogits;
}
