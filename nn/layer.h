// layer.h — one shape for every layer (darknet): a struct with forward and backward
// pointers, shapes per image, offsets of its parameters in the network's single parameter
// buffer, and its FLOP and byte counts (the simulator charges time from them). A layer's
// code only computes shapes and calls device primitives (nn/device.h); it never touches
// tensor memory, so it runs unchanged on the cpu, cuda and model devices.
//
// Layers live in a network (nn/net.h): they are added in torchvision module order, each
// reading the output of an earlier layer (or the network input, index -1), so a residual
// block is a small DAG. Backward runs in reverse order and ADDS into its input's gradient.
#ifndef DT_LAYER_H
#define DT_LAYER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct dt_net dt_net;
typedef struct dt_layer dt_layer;

typedef enum {
    DT_LAYER_CONV,      // conv2d: im2col + gemm; 1x1 stride-1 unpadded skips im2col
    DT_LAYER_BN,        // batchnorm2d
    DT_LAYER_RELU,
    DT_LAYER_MAXPOOL,
    DT_LAYER_AVGPOOL,   // adaptive average pool to (oh, ow); (1,1) is global
    DT_LAYER_LINEAR,    // flattens its (C,H,W) input; weight (out, in) as torch.nn.Linear
    DT_LAYER_DROPOUT,
    DT_LAYER_ADD,       // residual add: out = in + in2
    // Sequence layers (GPT-2): a sample is (1, T, width), T tokens in h, features in w
    DT_LAYER_EMBED,     // token + position embedding of net->tokens
    DT_LAYER_LAYERNORM, // over the features of each token
    DT_LAYER_ATTENTION, // causal multi-head self-attention on [q|k|v] (T, 3C) -> (T, C)
    DT_LAYER_GELU,
} dt_layer_type;

struct dt_layer {
    dt_layer_type type;
    char name[64];    // torchvision module prefix: "layer1.0.conv1", "fc", "features.0"
    int index;        // position in net->layers
    int in, in2;      // producer layer indices; -1 = the network input; in2 only for ADD
    int B;            // batch (per rank)
    int c, h, w;      // input shape per image
    int oc, oh, ow;   // output shape per image
    int kh, kw, stride, pad;  // conv, maxpool
    int has_bias;     // conv, linear
    float p;          // dropout probability
    float eps, momentum;  // batchnorm (PyTorch defaults 1e-5, 0.1); layernorm eps
    int heads;        // attention: number of heads (C/heads channels each)
    int per_token;    // linear: applied to each of the h rows of width w (a transformer's
                      // tokens) instead of flattening C*H*W; weight (out, w)
    int tied;         // linear: w_off is another layer's weight (GPT-2's output head reads
                      // the token embedding), so it owns no parameters but adds to that grad
    int bias_elsewhere;  // linear: its bias is added by another rank (a row-parallel linear
                         // of tensor parallelism: once in the sum, nn/train_tp.c); its
                         // gradient is still computed here. embed: the positions, likewise
    int vocab_lo, vocab_n;  // embed, vocab_n > 0: its wte is rows [vocab_lo, vocab_lo +
                            // vocab_n) of the vocabulary, a tensor-parallel rank's slice
                            // (nn/train_tp.c; host memory); other tokens embed to 0
    float init_std;   // weights drawn from N(0, init_std^2) (GPT-2); 0: the type's default

    // Parameter offsets in elements into net->params (and net->grads, same offsets for the
    // trainable ones); -1 where the layer has none. bn: w = gamma, b = beta, rm/rv = running.
    ssize_t w_off, b_off, rm_off, rv_off;
    size_t n_trainable;  // elements of trainable parameters this layer owns

    // Buffers (device memory), set by dt_net_finalize:
    float *out;    // (B, oc, oh, ow)
    float *dout;   // gradient of the loss w.r.t. out, same shape
    // Under mixed precision (net->amp != DT_AMP_FP32, nn/net_half.c) every layer but the last
    // stores out and dout here in half precision instead; out and dout then point at fp32
    // scratch only while a layer that reads or writes them runs (NULL otherwise).
    uint16_t *out_h, *dout_h;
    void *aux;     // bn: save_mean, save_invstd (2*oc floats); maxpool: int32 argmax
                   // (B,oc,oh,ow); dropout: mask (B,oc,oh,ow) floats; layernorm: mean,
                   // rstd (2*B*T floats); attention: probabilities (B,heads,T,T) floats
    size_t aux_bytes;
    size_t workspace_floats;  // conv: scratch this layer needs (im2col columns)
    // Buffer plan, set by dt_net_finalize (nn/net_plan.c):
    // inplace: relu or add whose out and dout ARE its input layer's (torchvision's
    //   inplace=True), because nothing else reads that input; forward overwrites it, backward
    //   turns the gradient w.r.t. out into the one w.r.t. the input in the same buffer.
    // dsrc_set: bit 1 (in), bit 2 (in2): this backward is the first to write that input's
    //   dout, so it writes (=) instead of adding and the network skips zeroing it.
    int inplace;
    int dsrc_set;

    // Cost per step for the whole per-rank batch (the simulator's inputs): multiply-adds
    // count as 2 FLOPs; bytes are the tensor bytes read + written by the layer's kernels.
    double fwd_flops, bwd_flops, fwd_bytes, bwd_bytes;

    void (*forward)(dt_layer *l, dt_net *net, int training);
    void (*backward)(dt_layer *l, dt_net *net);
};

// Output-shape helper shared by conv and maxpool: (size + 2*pad - k)/stride + 1.
static inline int dt_conv_out(int size, int k, int stride, int pad) {
    return (size + 2 * pad - k) / stride + 1;
}

#endif
