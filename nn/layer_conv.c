// layer_conv.c — conv2d as im2col + gemm (Chellapilla et al. 2006; Caffe, darknet), with
// the weights shared across the batch (gemm_batched with stride_a = 0). A 1x1 stride-1
// unpadded kernel skips im2col: its input already is the column matrix (darknet). Backward
// recomputes the columns instead of keeping them from forward (darknet), so the only scratch
// is one chunk of columns in net->workspace. Not here: the im2col/gemm kernels themselves
// (nn/device.h), parameter initialisation (nn/net.c).
//
// Shapes, per image b: x_b (C,H,W), w (OC, K) with K = C*KH*KW, col_b (K, N) with N = OH*OW,
// y_b (OC, N):
//   forward   y_b  = w col_b (+ bias)
//   backward  dw  += sum_b dy_b col_b^T       (gemm_batched_sum)
//             dcol_b = w^T dy_b ; dx_b += col2im(dcol_b)   (col2im adds)
//             dbias += sum_{b,n} dy_b
#include "dt.h"
#include "layers.h"

int dt_conv_is_pointwise(const dt_layer *l) {
    return l->kh == 1 && l->kw == 1 && l->stride == 1 && l->pad == 0;
}

// Rows of the column matrix (C*KH*KW) and its columns (OH*OW), per image.
static size_t col_rows(const dt_layer *l) { return (size_t)l->c * l->kh * l->kw; }
static size_t col_cols(const dt_layer *l) { return (size_t)l->oh * l->ow; }

// The chunk the layer runs with: as many images as l->workspace_floats holds columns for
// (dt_conv_setup sets it from dt_conv_chunk; a test may shrink it before finalize).
static int run_chunk(const dt_layer *l) {
    size_t per_image = col_rows(l) * col_cols(l);
    DT_ASSERT(l->workspace_floats >= per_image);
    size_t n = l->workspace_floats / per_image;
    return n > (size_t)l->B ? l->B : (int)n;
}

int dt_conv_chunk(const dt_layer *l, const dt_device *d) {
    size_t per_image = col_rows(l) * col_cols(l);
    size_t limit = DT_CONV_WORKSPACE_MAX;
    if (d && d->im2col_chunk_bytes && d->im2col_chunk_bytes / sizeof(float) < limit)
        limit = d->im2col_chunk_bytes / sizeof(float);
    size_t n = per_image ? limit / per_image : (size_t)l->B;
    if (n < 1) n = 1;
    if (n > (size_t)l->B) n = (size_t)l->B;
    return (int)n;
}

// Costs for the whole batch; a multiply-add is 2 FLOPs, a float is 4 bytes. With x, w, y,
// col the element counts of input, weights, output and columns (whole batch):
//  forward  FLOPs 2*B*OC*K*N (gemm) + B*OC*N (bias);
//           bytes 4*(x + w + y [gemm] + 2y [bias add] + 2col [im2col writes, gemm reads]);
//  backward FLOPs 2 * 2*B*OC*K*N (dW and dX gemms, each the forward's size) + B*OC*N (dbias);
//           bytes 4*(y [dbias] + 2y [dy read by both gemms] + 3w [w read, dw read+written]
//                    + 3x [x read again, dx read+written] + 4col [im2col again, gemm reads,
//                    dcol written, col2im reads]).
// The 1x1 stride-1 path has no columns: the col terms drop out.
void dt_conv_setup(dt_layer *l, const dt_device *d) {
    double B = l->B, K = (double)col_rows(l), N = (double)col_cols(l), OC = l->oc;
    double x = B * l->c * l->h * l->w, y = B * OC * N, w = OC * K;
    double col = dt_conv_is_pointwise(l) ? 0.0 : B * K * N;
    double gemm = 2.0 * B * OC * K * N;
    double bias = l->has_bias ? y : 0.0;
    l->fwd_flops = gemm + bias;
    l->bwd_flops = 2.0 * gemm + bias;
    l->fwd_bytes = 4.0 * (x + w + y + 2.0 * bias + 2.0 * col);
    l->bwd_bytes = 4.0 * (bias + 2.0 * y + 3.0 * w + 3.0 * x + 4.0 * col);
    l->workspace_floats =
        dt_conv_is_pointwise(l) ? 0 : (size_t)dt_conv_chunk(l, d) * col_rows(l) * col_cols(l);
    l->aux_bytes = 0;
}

// x is (B,C,H,W), w is (OC,C,KH,KW), y is (B,OC,OH,OW)
void dt_conv_forward(dt_layer *l, dt_net *net, int training) {
    (void)training;
    dt_device *d = net->dev;
    const float *x = dt_layer_src(net, l->in);
    const float *w = dt_net_p(net, l->w_off);
    int K = (int)col_rows(l), N = (int)col_cols(l);
    size_t x_img = dt_layer_in_size(l), y_img = (size_t)l->oc * N;
    if (dt_conv_is_pointwise(l)) {
        // y_b (OC,N) = w (OC,C) x_b (C,N)
        d->gemm_batched(d, 0, 0, l->oc, N, K, 1.0f, w, K, 0, x, N, x_img, 0.0f, l->out, N,
                        y_img, l->B);
    } else {
        int chunk = run_chunk(l);
        for (int b0 = 0; b0 < l->B; b0 += chunk) {
            int n = l->B - b0 < chunk ? l->B - b0 : chunk;
            d->im2col(d, x + (size_t)b0 * x_img, n, l->c, l->h, l->w, l->kh, l->kw, l->stride,
                      l->pad, net->workspace);
            d->gemm_batched(d, 0, 0, l->oc, N, K, 1.0f, w, K, 0, net->workspace, N,
                            (size_t)K * N, 0.0f, l->out + (size_t)b0 * y_img, N, y_img, n);
        }
    }
    if (l->has_bias) d->bias_add(d, l->out, dt_net_p(net, l->b_off), l->B, l->oc, N);
}

// dy is (B,OC,OH,OW); adds into dw (OC,C,KH,KW), dbias (OC) and dx (B,C,H,W); writes dx
// instead when this layer writes it first (l->dsrc_set, nn/net_plan.c: the network did not
// zero it): beta = 0 in the 1x1 dx gemm, col2im_set otherwise.
void dt_conv_backward(dt_layer *l, dt_net *net) {
    dt_device *d = net->dev;
    int set = l->dsrc_set & 1;
    const float *x = dt_layer_src(net, l->in);
    float *dx = dt_layer_dsrc(net, l->in);
    const float *w = dt_net_p(net, l->w_off);
    float *dw = dt_net_g(net, l->w_off);
    const float *dy = l->dout;
    int K = (int)col_rows(l), N = (int)col_cols(l);
    size_t x_img = dt_layer_in_size(l), y_img = (size_t)l->oc * N;
    if (l->has_bias) d->bias_backward(d, dy, l->B, l->oc, N, dt_net_g(net, l->b_off));
    if (dt_conv_is_pointwise(l)) {
        // dw (OC,C) += sum_b dy_b (OC,N) x_b^T (N,C);  dx_b (C,N) += w^T (C,OC) dy_b (OC,N)
        d->gemm_batched_sum(d, 0, 1, l->oc, K, N, 1.0f, dy, N, y_img, x, N, x_img, 1.0f, dw,
                            K, l->B);
        d->gemm_batched(d, 1, 0, K, N, l->oc, 1.0f, w, K, 0, dy, N, y_img, set ? 0.0f : 1.0f,
                        dx, N, x_img, l->B);
        return;
    }
    int chunk = run_chunk(l);
    for (int b0 = 0; b0 < l->B; b0 += chunk) {
        int n = l->B - b0 < chunk ? l->B - b0 : chunk;
        const float *dy_c = dy + (size_t)b0 * y_img;
        // recompute the columns of this chunk, then dw += sum_b dy_b col_b^T
        d->im2col(d, x + (size_t)b0 * x_img, n, l->c, l->h, l->w, l->kh, l->kw, l->stride,
                  l->pad, net->workspace);
        d->gemm_batched_sum(d, 0, 1, l->oc, K, N, 1.0f, dy_c, N, y_img, net->workspace, N,
                            (size_t)K * N, 1.0f, dw, K, n);
        // dcol_b (K,N) = w^T dy_b, overwriting the columns, then dx_b += col2im(dcol_b)
        // (dx_b = col2im(dcol_b) when set: each chunk owns its images' planes of dx)
        d->gemm_batched(d, 1, 0, K, N, l->oc, 1.0f, w, K, 0, dy_c, N, y_img, 0.0f,
                        net->workspace, N, (size_t)K * N, n);
        (set ? d->col2im_set : d->col2im)(d, net->workspace, n, l->c, l->h, l->w, l->kh, l->kw,
                                          l->stride, l->pad, dx + (size_t)b0 * x_img);
    }
}

// ---- half storage (nn/layers.h dt_conv_forward_bf16): the passes above with half operands,
// bf16 through the device's bf16 hooks, or fp16 and bf16 through its _h hooks (nn/device.h
// gemm_batched_h, col2im_h; the cuda device). The half results (y, the 1x1 dx) are rounded
// once: by the device as each image's gemm ends (gemm_batched_h; on the cpu device, bf16,
// gemm_batched_bf16_h), else from fp32 in net->half_scratch[0], free while no view is
// bound. The half columns take half of the chunk's workspace, which holds the fp32 dcol of
// backward as above.

// gemm_batched with half A and B (fmt = net->amp), fp32 C
static void hgemm_f32(dt_device *d, int fmt, int ta, int tb, int M, int N, int K,
                      const uint16_t *A, int lda, size_t sa, const uint16_t *B, int ldb,
                      size_t sb, float beta, float *C, int ldc, size_t sc, int batch) {
    if (d->gemm_batched_h)
        d->gemm_batched_h(d, fmt, 0, ta, tb, M, N, K, 1.0f, A, lda, sa, B, ldb, sb, beta, C, ldc,
                          sc, batch);
    else
        d->gemm_batched_bf16(d, ta, tb, M, N, K, 1.0f, A, lda, sa, B, ldb, sb, beta, C, ldc, sc,
                             batch);
}
static void hgemm_sum(dt_device *d, int fmt, int M, int N, int K, const uint16_t *A, int lda,
                      size_t sa, const uint16_t *B, int ldb, size_t sb, float *C, int ldc,
                      int batch) {
    if (d->gemm_batched_sum_h)
        d->gemm_batched_sum_h(d, fmt, 0, 1, M, N, K, 1.0f, A, lda, sa, B, ldb, sb, 1.0f, C, ldc,
                              batch);
    else
        d->gemm_batched_sum_bf16(d, 0, 1, M, N, K, 1.0f, A, lda, sa, B, ldb, sb, 1.0f, C, ldc,
                                 batch);
}
// does the device write a half gemm's C in half itself (hgemm_h)?
static int half_out(const dt_device *d, int fmt) {
    return d->gemm_batched_h || (d->gemm_batched_bf16_h && fmt == DT_AMP_BF16);
}
// gemm_batched with half A, B and C (C = half(alpha AB + beta C), rounded once) where
// half_out(d, fmt); returns 0, doing nothing, where not
static int hgemm_h(dt_device *d, int fmt, int ta, int tb, int M, int N, int K, const uint16_t *A,
                   int lda, size_t sa, const uint16_t *B, int ldb, size_t sb, float beta,
                   uint16_t *C, int ldc, size_t sc, int batch) {
    if (d->gemm_batched_h)
        d->gemm_batched_h(d, fmt, 1, ta, tb, M, N, K, 1.0f, A, lda, sa, B, ldb, sb, beta, C, ldc,
                          sc, batch);
    else if (half_out(d, fmt))
        d->gemm_batched_bf16_h(d, ta, tb, M, N, K, 1.0f, A, lda, sa, B, ldb, sb, beta, C, ldc,
                               sc, batch);
    else
        return 0;
    return 1;
}

void dt_conv_forward_bf16(dt_layer *l, dt_net *net, const uint16_t *x) {
    dt_device *d = net->dev;
    int fmt = (int)net->amp, direct = half_out(d, fmt);
    const uint16_t *w = dt_net_p_h(net, l->w_off);
    float *y = net->half_scratch[0];
    int K = (int)col_rows(l), N = (int)col_cols(l);
    size_t x_img = dt_layer_in_size(l), y_img = (size_t)l->oc * N;
    uint16_t *col = (uint16_t *)net->workspace;
    int pw = dt_conv_is_pointwise(l), chunk = pw ? l->B : run_chunk(l);
    for (int b0 = 0; b0 < l->B; b0 += chunk) {
        int n = l->B - b0 < chunk ? l->B - b0 : chunk;
        const uint16_t *src = x + (size_t)b0 * x_img;  // 1x1: the activations are the columns
        if (!pw) {
            d->im2col_bf16(d, src, n, l->c, l->h, l->w, l->kh, l->kw, l->stride, l->pad, col);
            src = col;
        }
        size_t s_img = pw ? x_img : (size_t)K * N;
        if (direct)
            hgemm_h(d, fmt, 0, 0, l->oc, N, K, w, K, 0, src, N, s_img, 0.0f,
                    l->out_h + (size_t)b0 * y_img, N, y_img, n);
        else
            hgemm_f32(d, fmt, 0, 0, l->oc, N, K, w, K, 0, src, N, s_img, 0.0f,
                      y + (size_t)b0 * y_img, N, y_img, n);
    }
    if (!direct) d->f32_to_bf16(d, y, l->out_h, (size_t)l->B * y_img);
}

void dt_conv_backward_bf16(dt_layer *l, dt_net *net, const uint16_t *x, uint16_t *dx) {
    dt_device *d = net->dev;
    int set = l->dsrc_set & 1, fmt = (int)net->amp;
    const uint16_t *w = dt_net_p_h(net, l->w_off), *dy = l->dout_h;
    float *dw = dt_net_g(net, l->w_off);
    int K = (int)col_rows(l), N = (int)col_cols(l);
    size_t x_img = dt_layer_in_size(l), y_img = (size_t)l->oc * N;
    if (dt_conv_is_pointwise(l)) {
        hgemm_sum(d, fmt, l->oc, K, N, dy, N, y_img, x, N, x_img, dw, K, l->B);
        // dx = half(dx + w^T dy): the gemm adds into dx widened, as on the views
        if (hgemm_h(d, fmt, 1, 0, K, N, l->oc, w, K, 0, dy, N, y_img, set ? 0.0f : 1.0f, dx, N,
                    x_img, l->B))
            return;
        float *s = net->half_scratch[0];
        size_t nx = (size_t)l->B * x_img;
        if (!set) d->bf16_to_f32(d, dx, s, nx);
        hgemm_f32(d, fmt, 1, 0, K, N, l->oc, w, K, 0, dy, N, y_img, set ? 0.0f : 1.0f, s, N,
                  x_img, l->B);
        d->f32_to_bf16(d, s, dx, nx);
        return;
    }
    uint16_t *col = (uint16_t *)net->workspace;
    int chunk = run_chunk(l);
    for (int b0 = 0; b0 < l->B; b0 += chunk) {
        int n = l->B - b0 < chunk ? l->B - b0 : chunk;
        const uint16_t *dy_c = dy + (size_t)b0 * y_img;
        d->im2col_bf16(d, x + (size_t)b0 * x_img, n, l->c, l->h, l->w, l->kh, l->kw,
                       l->stride, l->pad, col);
        hgemm_sum(d, fmt, l->oc, K, N, dy_c, N, y_img, col, N, (size_t)K * N, dw, K, n);
        if (d->gemm_col2im_bf16 && fmt == DT_AMP_BF16) {  // the cpu device: image by image
            d->gemm_col2im_bf16(d, K, N, l->oc, w, dy_c, y_img, n, l->c, l->h, l->w, l->kh,
                                l->kw, l->stride, l->pad, dx + (size_t)b0 * x_img, set);
            continue;
        }
        hgemm_f32(d, fmt, 1, 0, K, N, l->oc, w, K, 0, dy_c, N, y_img, 0.0f, net->workspace, N,
                  (size_t)K * N, n);
        if (d->col2im_h)
            d->col2im_h(d, fmt, net->workspace, n, l->c, l->h, l->w, l->kh, l->kw, l->stride,
                        l->pad, dx + (size_t)b0 * x_img, set);
        else
            d->col2im_bf16(d, net->workspace, n, l->c, l->h, l->w, l->kh, l->kw, l->stride,
                           l->pad, dx + (size_t)b0 * x_img, set);
    }
}
