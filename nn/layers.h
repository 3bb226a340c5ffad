// layers.h — private to nn/: the forward, backward and cost functions of every layer type
// (nn/layer_conv.c, layer_bn.c, layer_pool.c, layer_linear.c, layer_simple.c), which the
// network builder (nn/net.c) plugs into struct dt_layer. Not a public API: programs build
// layers through dt_net_add_* (nn/net.h) and run them through dt_net_forward/backward.
//
// Every function here only computes shapes and calls device primitives (nn/device.h): no
// loop touches tensor memory, so the same code runs on the cpu, cuda and model devices.
// Shapes in the comments are for the whole per-rank batch B.
#ifndef DT_LAYERS_H
#define DT_LAYERS_H

#include "layer.h"
#include "net.h"

// The tensor a layer reads: the network input for in == -1, else layer `in`'s output.
static inline const float *dt_layer_src(const dt_net *net, int in) {
    return in < 0 ? net->input : net->layers[in]->out;
}
// Where a layer ADDS the gradient w.r.t. its input: net->dinput or layer `in`'s dout.
static inline float *dt_layer_dsrc(const dt_net *net, int in) {
    return in < 0 ? net->dinput : net->layers[in]->dout;
}
// Elements of one image's input / output.
static inline size_t dt_layer_in_size(const dt_layer *l) {
    return (size_t)l->c * (size_t)l->h * (size_t)l->w;
}
static inline size_t dt_layer_out_size(const dt_layer *l) {
    return (size_t)l->oc * (size_t)l->oh * (size_t)l->ow;
}

// The layer that owns the buffers (out, dout) layer k uses: k itself, or for an in-place
// layer (l->inplace) the first layer of its chain of in-place producers. -1 stays -1.
static inline int dt_layer_buffer_root(const dt_net *net, int k) {
    while (k >= 0 && net->layers[k]->inplace) k = net->layers[k]->in;
    return k;
}

// For every layer k, the backward step that first writes its dout: its consumer with the
// highest index (backward runs last layer first); itself for the last layer (the loss seeds
// it) and for a layer nobody reads. Layers sharing a buffer in place (one root and its
// in-place chain) all get the group's first step, the highest over its members. The buffer
// is live from that step down to step root. first has net->n_layers entries.
// (nn/net_run.c; nn/net_plan.c plans the shared buffers from it.)
void dt_net_dout_first_writer(const dt_net *net, int *first);

// The buffer plan of dt_net_finalize (nn/net_plan.c): marks in-place layers (l->inplace),
// allocates every layer's out (an in-place layer takes its input's), shares the dout
// buffers between layers whose lifetimes do not overlap, and marks first writers that
// overwrite (l->dsrc_set). Uses only the device's optional primitives it finds.
void dt_net_plan_buffers(dt_net *net);
// 1 when step `first` (a layer's backward) overwrites the dout of root's group, so that
// dt_net_backward must not zero it first.
int dt_net_dout_overwritten(const dt_net *net, int root, int first);

// ---- mixed precision (nn/net_half.c) ----
// Allocates params_lp and the fp32 scratch (dt_net_finalize, after the buffer plan).
void dt_net_half_alloc(dt_net *net);
// Around a forward (training or not) and the backward that follows: begin copies the
// master weights to params_lp with conv/linear weights and biases rounded to half and
// points net->params at it; end copies the running statistics forward updated back into
// the master and points net->params at the master again.
void dt_net_half_begin(dt_net *net);
void dt_net_half_end(dt_net *net);
// One layer's forward or backward with its half tensors converted through fp32 scratch.
void dt_net_half_forward(dt_net *net, dt_layer *l, int training);
void dt_net_half_backward(dt_net *net, dt_layer *l);
// Zero layer k's gradient buffer (half or fp32) before the backward that first adds into it.
void dt_net_zero_dout(dt_net *net, const dt_layer *z);

// ---- conv2d (nn/layer_conv.c): x (B,C,H,W), w (OC,C,KH,KW), bias (OC), y (B,OC,OH,OW) ----
void dt_conv_forward(dt_layer *l, dt_net *net, int training);
void dt_conv_backward(dt_layer *l, dt_net *net);
// Under --precision bf16 on a device with convolution on bf16 storage (nn/device.h
// im2col_bf16, col2im_bf16, gemm_batched_bf16, gemm_batched_sum_bf16; gemm_batched_bf16_h
// and gemm_col2im_bf16 where the device has them), or fp16 or bf16 on one with the _h hooks
// (gemm_batched_h, gemm_batched_sum_h, col2im_h), called by nn/net_half.c for a conv
// without bias whose input is stored in half: x, the columns and the weights
// (net->params_bf16) stay half, sums and gradients w.r.t. the weights fp32; l->out_h, and
// dx (the input's half gradient) are rounded once, as the views path does.
void dt_conv_forward_bf16(dt_layer *l, dt_net *net, const uint16_t *x);
void dt_conv_backward_bf16(dt_layer *l, dt_net *net, const uint16_t *x, uint16_t *dx);
// Sets l->workspace_floats (im2col columns for a chunk of the batch) and the cost fields.
void dt_conv_setup(dt_layer *l, const dt_device *d);
// Images per im2col chunk: as many as fit in d->im2col_chunk_bytes (the device's preference,
// e.g. cache-sized on the cpu) and in DT_CONV_WORKSPACE_MAX floats; at least one.
// Forward and backward take their chunk from l->workspace_floats (dt_conv_setup sets it to
// dt_conv_chunk images' columns), so a test can shrink it before dt_net_finalize.
#define DT_CONV_WORKSPACE_MAX ((size_t)64 * 1024 * 1024)
int dt_conv_chunk(const dt_layer *l, const dt_device *d);
// 1x1, stride 1, no padding: the input already is the column matrix (darknet), no im2col.
int dt_conv_is_pointwise(const dt_layer *l);

// ---- batchnorm2d (nn/layer_bn.c): x, y (B,C,H,W); gamma, beta, running stats (C) ----
void dt_bn_forward(dt_layer *l, dt_net *net, int training);
void dt_bn_backward(dt_layer *l, dt_net *net);
// the same on half storage (nn/net_half.c, the device's bn_*_h): x the input's half buffer,
// l->out_h, l->dout_h, and dx the input's half gradient
void dt_bn_forward_h(dt_layer *l, dt_net *net, int training, const uint16_t *x);
void dt_bn_backward_h(dt_layer *l, dt_net *net, const uint16_t *x, uint16_t *dx);
void dt_bn_setup(dt_layer *l);
// What batch-norm layer l runs fused (nn/device.h bn_fused_*): 0 nothing; 1 the relu right
// after it (reading only l, in place); 2 the residual add right after it (over l in place;
// its other input, layer *res_in) and the relu right after that (in place) — ResNet's
// bn -> relu and bn -> add -> relu. Only where the device has the fused hooks and l runs on
// fp32 or on half storage in place (its input stored in half, the bn_*_h hooks). In
// training, l's forward then writes relu(bn(x) (+ res)) and its backward starts from relu's
// mask (and writes the residual's gradient); the network skips those layers' own forward
// (training) and backward (nn/net_run.c).
int dt_bn_fused(const dt_net *net, const dt_layer *l, int *res_in);

// ---- pooling (nn/layer_pool.c) ----
// maxpool: x (B,C,H,W) -> y (B,C,OH,OW), argmax (B,C,OH,OW) int32 in l->aux
void dt_maxpool_forward(dt_layer *l, dt_net *net, int training);
void dt_maxpool_backward(dt_layer *l, dt_net *net);
void dt_maxpool_setup(dt_layer *l);
// adaptive average pool: x (B,C,H,W) -> y (B,C,OH,OW)
void dt_avgpool_forward(dt_layer *l, dt_net *net, int training);
void dt_avgpool_backward(dt_layer *l, dt_net *net);
void dt_avgpool_setup(dt_layer *l);

// ---- linear (nn/layer_linear.c): x (B, C*H*W), w (OUT, IN), bias (OUT), y (B, OUT) ----
void dt_linear_forward(dt_layer *l, dt_net *net, int training);
void dt_linear_backward(dt_layer *l, dt_net *net);
void dt_linear_setup(dt_layer *l);

// ---- elementwise layers (nn/layer_simple.c): x, y (B,C,H,W) ----
void dt_relu_forward(dt_layer *l, dt_net *net, int training);
void dt_relu_backward(dt_layer *l, dt_net *net);
void dt_relu_setup(dt_layer *l);
// dropout: mask (B,C,H,W) floats in l->aux; eval is the identity (mask set to 1)
void dt_dropout_forward(dt_layer *l, dt_net *net, int training);
void dt_dropout_backward(dt_layer *l, dt_net *net);
void dt_dropout_setup(dt_layer *l);
// The mask stream of a dropout layer in the current step: net->dropout_seed mixed with the
// layer index, so two dropout layers of one step draw independent masks.
uint64_t dt_dropout_layer_seed(const dt_net *net, const dt_layer *l);
// residual add: y = x (layer in) + x2 (layer in2)
void dt_add_forward(dt_layer *l, dt_net *net, int training);
void dt_add_backward(dt_layer *l, dt_net *net);
void dt_add_setup(dt_layer *l);


// ---- the network builder's steps (nn/net.c), for the constructors in nn/net_seq.c ----
// a layer reading `in` with its input shape (NULL once the net is in error); reject records
// "model: layer: what detail", frees l and returns -1; append returns the new index; param
// registers "<layer>.<suffix>" (ndim 1 or 2) and returns its offset
dt_layer *dt_net_layer_new(dt_net *net, dt_layer_type type, const char *name,
                           const char *kind, int in);
int dt_net_layer_reject(dt_net *net, dt_layer *l, const char *what, const char *detail);
int dt_net_layer_append(dt_net *net, dt_layer *l);
ssize_t dt_net_layer_param(dt_net *net, dt_layer *l, const char *suffix, dt_param_kind kind,
                           int ndim, int s0, int s1);

// ---- sequence layers: a sample is (1, T, width), T = l->h tokens of l->w features ----
// token + position embedding (nn/layer_embed.c): tokens (B,T) -> (B,T,C); w_off is wte
// (vocab, C), b_off wpe (context, C)
void dt_embed_forward(dt_layer *l, dt_net *net, int training);
void dt_embed_backward(dt_layer *l, dt_net *net);
void dt_embed_setup(dt_layer *l);
// layer norm (nn/layer_layernorm.c): (B,T,C) -> (B,T,C); mean, rstd in l->aux
void dt_layernorm_forward(dt_layer *l, dt_net *net, int training);
void dt_layernorm_backward(dt_layer *l, dt_net *net);
void dt_layernorm_setup(dt_layer *l);
// causal self-attention (nn/layer_attention.c): qkv (B,T,3C) -> (B,T,C); probabilities in
// l->aux
void dt_attention_forward(dt_layer *l, dt_net *net, int training);
void dt_attention_backward(dt_layer *l, dt_net *net);
void dt_attention_setup(dt_layer *l);
// GELU (nn/layer_simple.c): elementwise, backward reads the input
void dt_gelu_forward(dt_layer *l, dt_net *net, int training);
void dt_gelu_backward(dt_layer *l, dt_net *net);
void dt_gelu_setup(dt_layer *l);

#endif
