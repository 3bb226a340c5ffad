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
    // TODO(student): the contract (layers01.h): col (C·KH·KW rows, OH·OW columns, OH and OW
    //   from conv_out) holds, in column j, the receptive field of output pixel j — the
    //   C·KH·KW input values the kernel sees there, in the order of a filter's weights
    //   w[o][c][kh][kw], zeros where the window hangs over the padding — so that a
    //   convolution becomes one product w (OC, C·KH·KW) · col. Every entry is written (col
    //   holds stale numbers). Cost: O(C·KH·KW·OH·OW), no allocation. Stuck: HINTS.md.
    (void)x, (void)C, (void)H, (void)W, (void)KH, (void)KW, (void)stride, (void)pad;
    (void)col;
}

void col2im(const float *col, int C, int H, int W, int KH, int KW, int stride, int pad,
            float *x) {
    // TODO(student): the contract: the adjoint (transpose) of im2col — every entry of col is
    //   added to the element of x that im2col copied it from (entries from the padding are
    //   dropped), so x gains the sum over all windows that saw it. Adds into x, never
    //   assigns (overlapping windows each contribute). Stuck: HINTS.md.
    (void)col, (void)C, (void)H, (void)W, (void)KH, (void)KW, (void)stride, (void)pad;
    (void)x;
}

void conv2d_forward(dt_device *d, const conv_shape *s, const float *x, const float *w,
                    const float *bias, float *y, float *work) {
    // TODO(student): the contract: y[b][o][oh][ow] = bias[o] + the sum over c, kh, kw of
    //   w[o][c][kh][kw] · x[b][c][oh·stride − pad + kh][ow·stride − pad + kw] (zero outside
    //   the image), every element of y overwritten. The multiply-adds go through the
    //   device's matrix product (d->gemm, nn/device.h: row-major) on im2col's columns, with
    //   `work` (C·KH·KW · OH·OW floats) as the only scratch. Stuck: HINTS.md.
    (void)d, (void)s, (void)x, (void)w, (void)bias, (void)y, (void)work;
}

void conv2d_backward(dt_device *d, const conv_shape *s, const float *x, const float *w,
                     const float *dy, float *dx, float *dw, float *db, float *work) {
    // TODO(student): the contract: given dy = ∂L/∂y, add ∂L/∂x to dx, ∂L/∂w to dw and
    //   ∂L/∂bias to db (the caller zeroed them: gradients accumulate, nn/device.h), exact
    //   to float rounding against the float64 derivatives of conv2d_forward. Matrix products
    //   through d->gemm, `work` the only scratch. Stuck: HINTS.md.
    (void)d, (void)s, (void)x, (void)w, (void)dy, (void)dx, (void)dw, (void)db, (void)work;
}

// ---- batch normalisation, training mode (Ioffe & Szegedy 2015, Algorithm 1) ----

void bn_forward_train(int B, int C, int HW, const float *x, const float *gamma,
                      const float *beta, float eps, float *y, float *mean, float *invstd) {
    // TODO(student): the contract: per channel c, over its B·HW elements (all images, all
    //   pixels), the batch's mean and biased variance (÷ n); writes mean[c], invstd[c] =
    //   1/sqrt(var + eps) and y = gamma[c]·(x − mean)·invstd + beta[c] (y overwritten).
    //   Accurate to float rounding for channels of 10^5 elements (sums in double).
    (void)B, (void)C, (void)HW, (void)x, (void)gamma, (void)beta, (void)eps, (void)y;
    (void)mean, (void)invstd;
}

void bn_backward(int B, int C, int HW, const float *x, const float *dy, const float *gamma,
                 const float *mean, const float *invstd, float *dx, float *dgamma,
                 float *dbeta) {
    // TODO(student): the contract: the gradient of bn_forward_train in training mode, where
    //   mean and variance are functions of the whole channel's x: adds ∂L/∂x to dx, ∂L/∂γ to
    //   dgamma and ∂L/∂β to dbeta, with the batch's mean and invstd given (not recomputed).
    //   O(B·C·HW): two passes over each channel, no scratch. Stuck: HINTS.md.
    (void)B, (void)C, (void)HW, (void)x, (void)dy, (void)gamma, (void)mean, (void)invstd;
    (void)dx, (void)dgamma, (void)dbeta;
}

// ---- softmax cross-entropy, mean over the batch ----

float softmax_xent_forward(int B, int K, const float *logits, const int32_t *labels,
                           float *probs) {
    // TODO(student): the contract: per row b, probs[b] = softmax(logits[b]) (overwritten),
    //   and the return value is the mean over the rows of −log softmax(logits[b])[label b].
    //   Finite for any finite logits, even ±1e4 (no exp overflows). Stuck: HINTS.md.
    (void)B, (void)K, (void)logits, (void)labels, (void)probs;
    return 0.0f;
}

void softmax_xent_backward(int B, int K, const float *probs, const int32_t *labels,
                           float *dlogits) {
    // TODO(student): the contract: adds ∂(mean loss)/∂logits to dlogits, from the probs
    //   the forward wrote (the logits are not needed). Stuck: HINTS.md.
    (void)B, (void)K, (void)probs, (void)labels, (void)dlogits;
}
