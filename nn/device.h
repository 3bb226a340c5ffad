// device.h — the execution interface: every number a layer, an optimizer or an allreduce
// computes goes through one of these primitives (darknet's layer/_gpu split, turned into a
// table of function pointers). Three implementations: `cpu` (nn/device_cpu.c: OpenMP +
// oneDNN or OpenBLAS), `cuda` (real/cuda: kernels + cuBLAS) and `model` (sim/: no data, each call
// advances simulated time by a roofline). Layers never touch tensor memory themselves, so the
// same layer code runs in all three.
//
// Conventions, for every primitive:
//  - pointers are device memory (from dev->alloc) unless named *_host;
//  - sizes are in elements, not bytes, unless named *_bytes; all tensors are fp32 unless
//    named *_f16 (IEEE binary16 bits in uint16_t);
//  - images are NCHW, row-major, contiguous: x[((b*C + c)*H + h)*W + w];
//  - a backward primitive ADDS into its outputs (dx += ..., dw += ...): a tensor read by two
//    layers (the input of a residual block) gets both contributions, and the network zeroes
//    the gradient buffers before backward;
//  - primitives may run asynchronously; anything that returns a value to the host
//    (sumsq, nonfinite, softmax_xent_forward) or copies to the host synchronises first.
// Not here: allocation policy, streams, MPI. See nn/kernels.h for the per-element math that
// the cpu and cuda implementations share.
#ifndef DT_DEVICE_H
#define DT_DEVICE_H

#include <stddef.h>
#include <stdint.h>

typedef struct dt_device dt_device;

struct dt_device {
    const char *name;  // "cpu", "cuda", "model"
    void *ctx;         // the implementation's own state
    int threads;       // cpu: OpenMP/BLAS threads; others: informational
    // Preferred size of one im2col chunk in bytes: the conv layer runs as many images per
    // chunk as fit (at least one); 0 = no preference. The cpu device asks for a few MiB per
    // thread, so the columns are still in cache when the gemm reads them.
    size_t im2col_chunk_bytes;

    // ---- memory ----
    void *(*alloc)(dt_device *d, size_t bytes);  // zero-filled; aborts on failure
    void (*free)(dt_device *d, void *p);
    void (*to_host)(dt_device *d, void *dst_host, const void *src, size_t bytes);
    void (*from_host)(dt_device *d, void *dst, const void *src_host, size_t bytes);
    void (*copy)(dt_device *d, void *dst, const void *src, size_t bytes);
    void (*sync)(dt_device *d);
    void (*destroy)(dt_device *d);  // frees the device itself

    // ---- dense linear algebra (row-major; ld* are row strides in elements) ----
    // C(M,N) = alpha * op(A) * op(B) + beta * C; op(A) is (M,K): A is (M,K) if !trans_a,
    // (K,M) if trans_a; op(B) is (K,N): B is (K,N) if !trans_b, (N,K) if trans_b.
    void (*gemm)(dt_device *d, int trans_a, int trans_b, int M, int N, int K, float alpha,
                 const float *A, int lda, const float *B, int ldb, float beta, float *C,
                 int ldc);
    // `batch` independent gemms: C_i = alpha*op(A_i)*op(B_i) + beta*C_i, with
    // X_i = X + i*stride_x (elements; a stride of 0 shares one matrix, e.g. the weights).
    void (*gemm_batched)(dt_device *d, int trans_a, int trans_b, int M, int N, int K,
                         float alpha, const float *A, int lda, size_t stride_a, const float *B,
                         int ldb, size_t stride_b, float beta, float *C, int ldc,
                         size_t stride_c, int batch);
    // The sum over a batch into one C: C = alpha * sum_i op(A_i)*op(B_i) + beta*C
    // (conv2d's weight gradient: dW += sum_b dY_b * col_b^T).
    void (*gemm_batched_sum)(dt_device *d, int trans_a, int trans_b, int M, int N, int K,
                             float alpha, const float *A, int lda, size_t stride_a,
                             const float *B, int ldb, size_t stride_b, float beta, float *C,
                             int ldc, int batch);

    // ---- convolution helpers (darknet/Caffe im2col) ----
    // x is (B,C,H,W); col is (B, C*KH*KW, OH*OW) with OH = (H+2*pad-KH)/stride+1 (same for
    // OW); padding reads as 0. col2im ADDS col back into x (the adjoint of im2col).
    void (*im2col)(dt_device *d, const float *x, int B, int C, int H, int W, int KH, int KW,
                   int stride, int pad, float *col);
    void (*col2im)(dt_device *d, const float *col, int B, int C, int H, int W, int KH, int KW,
                   int stride, int pad, float *x);

    // ---- per-channel bias ----
    // y is (B,C,HW): y[b,c,:] += bias[c]
    void (*bias_add)(dt_device *d, float *y, const float *bias, int B, int C, int HW);
    // db[c] += sum_{b,hw} dy[b,c,hw]
    void (*bias_backward)(dt_device *d, const float *dy, int B, int C, int HW, float *db);

    // ---- batch normalisation (Ioffe & Szegedy 2015), x and y are (B,C,HW) ----
    // training: batch mean/var per channel (biased var for normalising), y = gamma*xhat+beta,
    // save_mean/save_invstd (C each) kept for backward, running stats updated as PyTorch:
    // r = (1-momentum)*r + momentum*stat, with the unbiased variance (n/(n-1)) for running_var.
    void (*bn_forward_train)(dt_device *d, const float *x, int B, int C, int HW,
                             const float *gamma, const float *beta, float eps, float momentum,
                             float *running_mean, float *running_var, float *save_mean,
                             float *save_invstd, float *y);
    // evaluation: y = gamma*(x - running_mean)/sqrt(running_var + eps) + beta
    void (*bn_forward_eval)(dt_device *d, const float *x, int B, int C, int HW,
                            const float *gamma, const float *beta, float eps,
                            const float *running_mean, const float *running_var, float *y);
    // dx += gamma*invstd/n * (n*dy - sum(dy) - xhat*sum(dy*xhat)), n = B*HW;
    // dgamma += sum(dy*xhat); dbeta += sum(dy)
    void (*bn_backward)(dt_device *d, const float *dy, const float *x, int B, int C, int HW,
                        const float *gamma, const float *save_mean, const float *save_invstd,
                        float *dx, float *dgamma, float *dbeta);

    // ---- activations and pooling ----
    void (*relu_forward)(dt_device *d, const float *x, float *y, size_t n);  // x == y is fine
    // dx += dy where y > 0
    void (*relu_backward)(dt_device *d, const float *y, const float *dy, float *dx, size_t n);
    // x (B,C,H,W) -> y (B,C,OH,OW), OH = (H+2*pad-K)/stride+1; padding never wins;
    // argmax (B,C,OH,OW) holds the index h*W+w of the winner inside its (b,c) plane.
    void (*maxpool_forward)(dt_device *d, const float *x, int B, int C, int H, int W, int K,
                            int stride, int pad, float *y, int32_t *argmax);
    void (*maxpool_backward)(dt_device *d, const float *dy, const int32_t *argmax, int B,
                             int C, int H, int W, int OH, int OW, float *dx);
    // adaptive average pooling as PyTorch's AdaptiveAvgPool2d: output cell (i,j) averages
    // rows floor(i*H/OH) .. ceil((i+1)*H/OH)-1 and the same for columns. OH=OW=1 is global.
    void (*avgpool_forward)(dt_device *d, const float *x, int B, int C, int H, int W, int OH,
                            int OW, float *y);
    void (*avgpool_backward)(dt_device *d, const float *dy, int B, int C, int H, int W, int OH,
                             int OW, float *dx);
    // inverted dropout: mask[i] = dt_dropout_mask(seed, i, p), 1/(1-p) with probability
    // 1-p, else 0 (nn/kernels.h: a counter-based hash, so every device draws the same
    // mask); y = x*mask
    void (*dropout_forward)(dt_device *d, const float *x, float *y, float *mask, size_t n,
                            float p, uint64_t seed);
    // dx += dy*mask
    void (*dropout_backward)(dt_device *d, const float *dy, const float *mask, float *dx,
                             size_t n);

    // ---- loss: softmax cross-entropy, mean over the batch ----
    // logits (B,K), labels (B) int32 in [0,K) on the device; writes probs (B,K); returns
    // the mean loss to the host (synchronises). Stable: log-sum-exp with the max subtracted.
    float (*softmax_xent_forward)(dt_device *d, const float *logits, const int32_t *labels,
                                  int B, int K, float *probs);
    // dlogits += scale * (probs - onehot(labels)); scale is 1/B for the mean (times the loss
    // scale under mixed precision).
    void (*softmax_xent_backward)(dt_device *d, const float *probs, const int32_t *labels,
                                  int B, int K, float scale, float *dlogits);

    // ---- elementwise and reductions ----
    void (*fill)(dt_device *d, float *x, float value, size_t n);
    void (*scale)(dt_device *d, float *x, float alpha, size_t n);               // x *= alpha
    void (*axpy)(dt_device *d, float alpha, const float *x, float *y, size_t n); // y += a*x
    // y += x. The local reduction step of every allreduce (coll/) and of the residual add.
    void (*add)(dt_device *d, float *y, const float *x, size_t n);
    // sum of squares, accumulated in double; returns to the host (synchronises). LARS norms.
    double (*sumsq)(dt_device *d, const float *x, size_t n);
    // out_host[i] = sumsq(x[i], n[i]) bit for bit, for k tensors with one synchronisation (a
    // multi-tensor norm, as apex's multi_tensor_l2norm): LARS needs every layer's norms per
    // step, and one host wait per norm cost 108 GPU round trips for ResNet-50.
    void (*sumsq_many)(dt_device *d, int k, const float *const *x, const size_t *n,
                       double *out_host);
    // number of NaN/Inf elements; returns to the host (synchronises). Loss scaling, NaN input.
    size_t (*nonfinite)(dt_device *d, const float *x, size_t n);

    // ---- optimizer updates (per-element formulas in nn/kernels.h) ----
    // PyTorch SGD: g' = g + wd*w; v = momentum*v + g'; w -= lr * (nesterov ? g' + momentum*v : v)
    void (*sgd_update)(dt_device *d, float *w, const float *g, float *v, size_t n, float lr,
                       float momentum, float wd, int nesterov);
    // LARS (You et al. 2017, MLPerf form: docs/formulas.md, "LARS"):
    // v = momentum*v + scaled_lr*(g + wd*w); w -= v, where scaled_lr = lr_t * local_lr was
    // computed on the host from the norms.
    void (*lars_update)(dt_device *d, float *w, const float *g, float *v, size_t n,
                        float scaled_lr, float momentum, float wd);

    // ---- precision casts (round to nearest even; overflow to +-Inf) ----
    void (*f32_to_f16)(dt_device *d, const float *x, uint16_t *y_f16, size_t n);
    void (*f16_to_f32)(dt_device *d, const uint16_t *x_f16, float *y, size_t n);
    // y += float(x): fp16 on the wire, accumulated in fp32 (allreduce with fp16 gradients)
    void (*add_f16)(dt_device *d, float *y, const uint16_t *x_f16, size_t n);
    // bfloat16 (nn/kernels.h dt_f32_to_bf16: round to nearest even, NaN stays NaN): the
    // storage of activations and gradients under --precision bf16 (nn/net_half.c)
    void (*f32_to_bf16)(dt_device *d, const float *x, uint16_t *y_bf16, size_t n);
    void (*bf16_to_f32)(dt_device *d, const uint16_t *x_bf16, float *y, size_t n);

    // ---- optional in-place and overwriting variants (NULL where a device lacks them: the
    // network then keeps separate buffers and zero-fills, nn/net_plan.c) ----
    // In-place ReLU backward (torchvision's inplace=True; relu_forward may run with x == y):
    // dxy = y > 0 ? dxy : 0, turning the gradient w.r.t. y into the one w.r.t. x in place.
    void (*relu_backward_inplace)(dt_device *d, const float *y, float *dxy, size_t n);
    // bn_backward that overwrites dx (dx = ..., not dx += ...); dgamma and dbeta still add
    void (*bn_backward_set)(dt_device *d, const float *dy, const float *x, int B, int C, int HW,
                            const float *gamma, const float *save_mean,
                            const float *save_invstd, float *dx, float *dgamma, float *dbeta);
    // col2im that overwrites x (x = col2im(col), not x += ...): every (b,c) plane of x is
    // zeroed, then col is added back as col2im does (cells no window reads end up 0)
    void (*col2im_set)(dt_device *d, const float *col, int B, int C, int H, int W, int KH,
                       int KW, int stride, int pad, float *x);

    // ---- memory the host cannot read (the cuda device; 0 and NULL elsewhere) ----
    // device_memory = 1: pointers from alloc are not host addresses, so MPI reads them only
    // through pinned host copies (nn/coll/coll_stage.c stages them) or a CUDA-aware MPI.
    int device_memory;
    void *(*alloc_host)(dt_device *d, size_t bytes);  // pinned (page-locked), zero-filled
    void (*free_host)(dt_device *d, void *p);
    // Asynchronous copies on a stream of their own: to_host_async reads src after every
    // primitive queued before it (src must not change until its ticket is done);
    // from_host_async's data is seen by every primitive queued after it. mark() returns a
    // ticket for all work queued so far (primitives and copies); done(ticket) says, without
    // waiting, whether it has finished. sync waits for the copies too.
    void (*to_host_async)(dt_device *d, void *dst_host, const void *src, size_t bytes);
    void (*from_host_async)(dt_device *d, void *dst, const void *src_host, size_t bytes);
    uint64_t (*mark)(dt_device *d);
    int (*done)(dt_device *d, uint64_t ticket);

    // ---- mixed precision (nn/net_half.c) ----
    // Set by the network while a layer runs under --precision fp16 (1) or bf16 (2), else 0:
    // the gemm inputs are then half values held in fp32 (widened activations, half-rounded
    // weights), so a device may multiply them as halfs with fp32 accumulation and output.
    // cuda does (tensor cores, real/cuda/device_cuda.c); cpu does for bf16 where the CPU has
    // AVX512_BF16 or AMX (oneDNN, nn/device_cpu_gemm.c), else its fp32 gemm on the same
    // inputs computes the same exact products (a product of two halfs fits fp32).
    int gemm_half;
    // Optional (NULL where a device has no use for it): while a layer runs with gemm_half
    // set, the network names each fp32 view it widened from a half tensor and that the layer
    // only reads: view[0, n) holds exactly the values of h[0, n) (h NULL: slot 0..2 is no
    // longer such a view). A device multiplying halfs reads h instead of rounding the view.
    void (*half_view)(dt_device *d, int slot, const float *view, const uint16_t *h, size_t n);
    // Relu, the residual add and batch norm on half storage (optional: NULL where a device
    // lacks them, and the network then runs the fp32 ops on widened views). fmt is
    // net->amp (1 fp16, 2 bf16). Each element is widened, the fp32 op's formula applied
    // (nn/kernels.h: dt_relu, dt_relu_grad_h, an fp32 add, dt_bn_normalize, dt_bn_dx) and
    // the result rounded once, so the bits are those of the views; these ops are
    // memory-bound, and reading and writing 2 bytes an element instead of widening to and
    // narrowing from fp32 scratch moves a third of the bytes or less (PyTorch AMP keeps
    // them in half too).
    void (*relu_forward_h)(dt_device *d, int fmt, const uint16_t *x, uint16_t *y,
                           size_t n);  // x == y is fine
    // dx = (set ? 0 : dx) + relu_grad(y, dy); dy == dx is fine with set (in place)
    void (*relu_backward_h)(dt_device *d, int fmt, const uint16_t *y, const uint16_t *dy,
                            uint16_t *dx, size_t n, int set);
    // y = a + b; y may be a or b
    void (*add_h)(dt_device *d, int fmt, const uint16_t *a, const uint16_t *b, uint16_t *y,
                  size_t n);
    // Batch norm with x, y, dy, dx in half storage; the parameters, the statistics and every
    // sum stay fp32/double, as in bn_forward_train, bn_forward_eval and bn_backward (set:
    // bn_backward_set). Optional as above: the cuda device has them (its kernels are
    // templates on the element type, so the sums run in the same order on the same
    // values); the cpu device has them too (nn/device_cpu_half.c: each plane widened into
    // thread-local fp32, then the fp32 op's own loops, so the bits of the views).
    void (*bn_forward_train_h)(dt_device *d, int fmt, const uint16_t *x, int B, int C, int HW,
                               const float *gamma, const float *beta, float eps,
                               float momentum, float *running_mean, float *running_var,
                               float *save_mean, float *save_invstd, uint16_t *y);
    void (*bn_forward_eval_h)(dt_device *d, int fmt, const uint16_t *x, int B, int C, int HW,
                              const float *gamma, const float *beta, float eps,
                              const float *running_mean, const float *running_var,
                              uint16_t *y);
    void (*bn_backward_h)(dt_device *d, int fmt, const uint16_t *dy, const uint16_t *x, int B,
                          int C, int HW, const float *gamma, const float *save_mean,
                          const float *save_invstd, uint16_t *dx, float *dgamma, float *dbeta,
                          int set);
    // Max pooling with x, y, dy, dx in half storage, argmax as maxpool_forward's; optional as
    // above (the cpu device has them: each plane widened into thread-local fp32, then the
    // fp32 op's own loop). Forward: y = the maxima, exact in half (each is an input value).
    // Backward: dx += dy at argmax, each dx plane summed in fp32 and rounded once.
    void (*maxpool_forward_h)(dt_device *d, int fmt, const uint16_t *x, int B, int C, int H,
                              int W, int K, int stride, int pad, uint16_t *y, int32_t *argmax);
    void (*maxpool_backward_h)(dt_device *d, int fmt, const uint16_t *dy, const int32_t *argmax,
                               int B, int C, int H, int W, int OH, int OW, uint16_t *dx);

    // Convolution on bf16 storage (optional: NULL where a device lacks them; the cpu device
    // has them where it multiplies bf16, nn/device_cpu_half.c). The layer (nn/layer_conv.c
    // dt_conv_*_bf16) then reads its bf16 input and weights as they are, instead of through
    // fp32 views and columns rounded back to bf16 before each gemm; the same sums of the same
    // exact products, so the bits of the views path (tests/unit/test_amp.c).
    // im2col with x (B,C,H,W) and col (B, C*KH*KW, OH*OW) as bf16 bits; padding reads +0.
    void (*im2col_bf16)(dt_device *d, const uint16_t *x, int B, int C, int H, int W, int KH,
                        int KW, int stride, int pad, uint16_t *col);
    // x = bf16((set ? 0 : float(x)) + col2im(col)) per (b,c) plane: col fp32, x bf16 bits,
    // the sum in fp32 and one rounding (what col2im on a widened view, then narrowing, gives)
    void (*col2im_bf16)(dt_device *d, const float *col, int B, int C, int H, int W, int KH,
                        int KW, int stride, int pad, uint16_t *x, int set);
    // gemm_batched and gemm_batched_sum with A and B bf16 bits, fp32 accumulation, C fp32
    void (*gemm_batched_bf16)(dt_device *d, int trans_a, int trans_b, int M, int N, int K,
                              float alpha, const uint16_t *A, int lda, size_t stride_a,
                              const uint16_t *B, int ldb, size_t stride_b, float beta, float *C,
                              int ldc, size_t stride_c, int batch);
    void (*gemm_batched_sum_bf16)(dt_device *d, int trans_a, int trans_b, int M, int N, int K,
                                  float alpha, const uint16_t *A, int lda, size_t stride_a,
                                  const uint16_t *B, int ldb, size_t stride_b, float beta,
                                  float *C, int ldc, int batch);
    // gemm_batched_bf16 with C stored in bf16 too: C_i = bf16(alpha*op(A_i)op(B_i) +
    // beta*float(C_i)), each item's fp32 sum rounded once (bit for bit gemm_batched_bf16 into
    // an fp32 buffer widened from C, then narrowed). Optional (NULL: the layer goes through
    // an fp32 buffer of the whole batch).
    void (*gemm_batched_bf16_h)(dt_device *d, int trans_a, int trans_b, int M, int N, int K,
                                float alpha, const uint16_t *A, int lda, size_t stride_a,
                                const uint16_t *B, int ldb, size_t stride_b, float beta,
                                uint16_t *C, int ldc, size_t stride_c, int batch);
    // A bf16 conv's backward-data pass on n images: dcol_i = w^T dy_i ((K, N) = (C*KH*KW,
    // OH*OW), fp32 sums; w (OC, K), dy_i (OC, N) at dy + i*stride_dy, bf16), then
    // dx_i = bf16((set ? 0 : float(dx_i)) + col2im(dcol_i)): bit for bit gemm_batched_bf16
    // then col2im_bf16. Optional (NULL: the layer runs those two on a buffer of the n images).
    void (*gemm_col2im_bf16)(dt_device *d, int K, int N, int OC, const uint16_t *w,
                             const uint16_t *dy, size_t stride_dy, int n, int C, int H, int W,
                             int KH, int KW, int stride, int pad, uint16_t *dx, int set);

    // ---- half-precision convolutions and fused batch norm (optional: NULL where a device
    // lacks them; the cuda device has them, real/cuda/device_cuda_half.c) ----
    // fmt: 1 fp16, 2 bf16 (the values of net->amp); fmt 0 (fp32) where a tensor is `void *`.
    // im2col_bf16 above copies bits, so it serves fp16 as well (+0 is 0x0000 in both).
    // col2im_bf16 for either half format: x = half((set ? 0 : float(x)) + col2im(col))
    void (*col2im_h)(dt_device *d, int fmt, const float *col, int B, int C, int H, int W,
                     int KH, int KW, int stride, int pad, uint16_t *x, int set);
    // gemm_batched with A and B in half (fmt), fp32 accumulation, and C fp32 (c_half 0) or
    // half of the same format (c_half 1): C = half(alpha*op(A)op(B) + beta*float(C)), one
    // rounding, so a convolution writes its half output straight from the gemm
    void (*gemm_batched_h)(dt_device *d, int fmt, int c_half, int trans_a, int trans_b, int M,
                           int N, int K, float alpha, const uint16_t *A, int lda,
                           size_t stride_a, const uint16_t *B, int ldb, size_t stride_b,
                           float beta, void *C, int ldc, size_t stride_c, int batch);
    // gemm_batched_sum with A and B in half (fmt), C fp32 (the weight gradient)
    void (*gemm_batched_sum_h)(dt_device *d, int fmt, int trans_a, int trans_b, int M, int N,
                               int K, float alpha, const uint16_t *A, int lda,
                               size_t stride_a, const uint16_t *B, int ldb, size_t stride_b,
                               float beta, float *C, int ldc, int batch);
    // Batch norm (training) + residual add + relu in one pass over x after the statistics
    // (nn/kernels.h dt_bn_fused_y): y = relu?(gamma*xhat + beta (+ res)); statistics, saved
    // and running, as bn_forward_train. x, res, y in fmt's storage (0: float); res NULL: no
    // add; y may be x or res.
    void (*bn_fused_forward_train)(dt_device *d, int fmt, const void *x, const void *res,
                                   int B, int C, int HW, const float *gamma,
                                   const float *beta, float eps, float momentum,
                                   float *running_mean, float *running_var, float *save_mean,
                                   float *save_invstd, void *y, int relu);
    // Its backward from y and dy (the gradient w.r.t. y): g = dt_bn_fused_dz(y, dy, relu);
    // dres = (set_res ? 0 : dres) + g (dres NULL: no residual); dx = (set ? 0 : dx) +
    // bn_backward's dx for dy = g; dgamma, dbeta add. One reduction pass and one elementwise
    // pass. dx or dres may be dy (with its set flag).
    void (*bn_fused_backward)(dt_device *d, int fmt, const void *y, const void *dy,
                              const void *x, int B, int C, int HW, const float *gamma,
                              const float *save_mean, const float *save_invstd, void *dx,
                              int set, void *dres, int set_res, float *dgamma, float *dbeta,
                              int relu);

    // ---- transformer primitives (GPT-2: Radford et al. 2019, in llm.c's layout) ----
    // Optional: NULL where a device lacks them (cuda); the gpt models then refuse to
    // build there (nn/models_gpt.c). Tokens are (B,T) int32; activations (B,T,C) row-major.
    // out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:]
    void (*embed_forward)(dt_device *d, const int32_t *tokens, const float *wte,
                          const float *wpe, int B, int T, int C, float *out);
    // dwte[tokens[b,t],:] += dout[b,t,:]; dwpe[t,:] += sum_b dout[b,t,:]
    void (*embed_backward)(dt_device *d, const float *dout, const int32_t *tokens, int B,
                           int T, int C, float *dwte, float *dwpe);
    // layer norm over the last axis (Ba et al. 2016) of x (N,C), biased variance:
    // rstd = 1/sqrt(var + eps), y = (x - mean)*rstd*gamma + beta; mean, rstd (N) kept
    void (*layernorm_forward)(dt_device *d, const float *x, const float *gamma,
                              const float *beta, int N, int C, float eps, float *mean,
                              float *rstd, float *y);
    // with g = dy*gamma and xhat = (x - mean)*rstd: dx += rstd*(g - mean(g) -
    // xhat*mean(g*xhat)); dgamma += sum_rows dy*xhat; dbeta += sum_rows dy
    void (*layernorm_backward)(dt_device *d, const float *dy, const float *x,
                               const float *gamma, const float *mean, const float *rstd, int N,
                               int C, float *dx, float *dgamma, float *dbeta);
    // causal multi-head self-attention (Vaswani et al. 2017 sec. 3.2) on qkv (B,T,3C) = [q|k|v]
    // with NH heads of hs = C/NH channels: att (B,NH,T,T) = softmax over keys t2 <= t of
    // q_t.k_t2/sqrt(hs) (0 above the diagonal), y (B,T,C) = att v, heads side by side
    void (*attention_forward)(dt_device *d, const float *qkv, int B, int T, int C, int NH,
                              float *att, float *y);
    // dqkv += the gradient through y = att v and the softmax, from forward's att
    void (*attention_backward)(dt_device *d, const float *dy, const float *qkv,
                               const float *att, int B, int T, int C, int NH, float *dqkv);
    // GELU, tanh form (nn/kernels.h dt_gelu): y = gelu(x), x == y is fine; dx += dy*gelu'(x)
    void (*gelu_forward)(dt_device *d, const float *x, float *y, size_t n);
    void (*gelu_backward)(dt_device *d, const float *x, const float *dy, float *dx, size_t n);
    // Adam-family updates (nn/kernels.h dt_adamw_elem, dt_lamb_dir_elem; optional as above:
    // dt_optim_create refuses adamw and lamb on a device without them).
    void (*adamw_update)(dt_device *d, float *w, const float *g, float *m, float *v, size_t n,
                         float lr, float b1, float b2, float eps, float wd, float step,
                         float bc2_sqrt);
    // writes LAMB's direction r (n) and updates the moments m, v; w is only read
    void (*lamb_direction)(dt_device *d, const float *w, const float *g, float *m, float *v,
                           float *r, size_t n, float b1, float b2, float eps, float wd,
                           float bc1, float bc2);

    // ---- the vocabulary split over a tensor-parallel group (nn/train_tp.c; Megatron-LM's
    // VocabParallelEmbedding and vocab_parallel_cross_entropy) ----
    // Optional: NULL where a device lacks them (cuda); dt_tp_init then refuses the split. A
    // rank holds vocabulary rows [lo, lo + n). Arrays named host are host memory.
    // out[b,t,:] = (wte[tokens[b,t] - lo,:] for a token of its rows, else 0) + wpe[t,:]
    // (wpe NULL: no positions, another rank adds them)
    void (*embed_part_forward)(dt_device *d, const int32_t *tokens, const float *wte,
                               const float *wpe, int lo, int n, int B, int T, int C,
                               float *out);
    // dwte[tokens[b,t] - lo,:] += dout[b,t,:] for a token of its rows; dwpe as embed_backward
    void (*embed_part_backward)(dt_device *d, const float *dout, const int32_t *tokens,
                                int lo, int n, int B, int T, int C, float *dwte, float *dwpe);
    // The loss over B rows of K logits z, the slice of vocabulary entries lo..lo+K-1, in
    // three passes between the group's allreduces: row_max_host[b] = max_k z[b,k]; then with
    // the group's maxima M, p[b,k] = exp(z[b,k] - M[b]), row_sum_host[b] = sum_k p[b,k] (in
    // double, k ascending) and row_tgt_host[b] = z[b, labels[b] - lo] where that column is
    // this slice's, else 0; then with the group's sums S, p[b,k] *= (float)(1 / S[b]). The
    // host reads the rows after each of the first two (the device waits for its kernels).
    void (*xent_part_max)(dt_device *d, const float *z, int B, int K, float *row_max_host);
    void (*xent_part_exp)(dt_device *d, const float *z, const int32_t *labels, int lo, int B,
                          int K, const float *row_max_host, float *p, double *row_sum_host,
                          double *row_tgt_host);
    void (*xent_part_scale)(dt_device *d, float *p, const double *row_sum_host, int B, int K);

    // ---- simulation only (NULL elsewhere) ----
    // Let `seconds` of simulated time pass on this device's clock (the model device: the
    // latency that a coarsened allreduce schedule folds away, nn/coll/coll_ring.c).
    void (*delay)(dt_device *d, double seconds);
};

// The cpu device (nn/device_cpu.c): real math with OpenMP and OpenBLAS on `threads` threads
// (0: all cores). Returns NULL only if threads < 0.
// Its gemms run on oneDNN where the build has it, else on OpenBLAS (nn/device_cpu_gemm.c;
// DT_CPU_GEMM=reference|onednn|auto in the environment chooses, docs/cpu-backends.md).
dt_device *dt_device_cpu_create(int threads);
// Which gemm backend a cpu device runs, in words ("" for another device).
const char *dt_device_cpu_gemm_name(const dt_device *d);

// Convenience wrappers so call sites read like math: DT_CALL(d, add, y, x, n).
#define DT_CALL(d, fn, ...) ((d)->fn((d), __VA_ARGS__))

#endif
