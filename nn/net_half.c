// net_half.c — mixed-precision training (Micikevicius et al. 2018, "Mixed Precision
// Training"; Jia et al. 2018 §3, Tencent's fp16 ResNet-50): what the network stores in half
// precision and how every layer still computes in fp32.
//
//  - Master weights stay fp32 in net->params; the optimizer (SGD, LARS: norms, trust ratio,
//    momentum) updates them in fp32 (nn/optim.c, unchanged).
//  - Each forward copies them to net->params_lp with the conv and linear weights and biases
//    rounded to half (the half-precision copy forward and backward use); batch-norm's gamma,
//    beta and running statistics stay fp32.
//  - Every layer's output and output gradient except the logits' is stored in half
//    (l->out_h, l->dout_h: nn/net_plan.c), which halves activation memory. A layer runs on
//    fp32 views of them: its half inputs are widened into scratch, the unchanged layer code
//    (nn/layer_*.c) runs, and what it wrote is rounded back to half. A product of two halfs
//    is exact in fp32, so a gemm on widened halfs with fp32 accumulation is what a tensor-core
//    gemm on half inputs computes (up to the order of the sums); while a layer runs,
//    dev->gemm_half tells the device so, and the cuda device runs exactly that gemm
//    (cublasGemmEx on half inputs, fp32 compute). Relu, the residual add, batch norm and
//    max pooling skip the views where the device has half-storage ops (below): the same
//    bits.
//  - The logits, the softmax and the loss stay fp32, and so do batch-norm's statistics,
//    computed in fp32 from the widened input (docs/formulas.md, "Mixed precision").
//  - Gradients w.r.t. the parameters accumulate in fp32 (net->grads), as PyTorch's autocast.
// Loss scaling (fp16's small range) is the trainer's (nn/train.c); bf16 has fp32's range.
//
// The scratch: a layer touches at most three distinct tensors of activations or their
// gradients at once (forward: in, in2, out; backward: its input or its own output, dout,
// dx, dx2 where an add reads no input), so three fp32 buffers as large as the largest such
// tensor serve every layer. Two names of one half buffer (an in-place relu or add and its
// input, nn/net_plan.c; an add of a tensor with itself) share one view.
#include <string.h>

#include "layers.h"

const char *dt_amp_name(dt_amp a) {
    switch (a) {
    case DT_AMP_FP32: return "fp32";
    case DT_AMP_FP16: return "fp16";
    case DT_AMP_BF16: return "bf16";
    }
    return "?";
}

int dt_amp_parse(const char *s, dt_amp *out) {
    for (int a = DT_AMP_FP32; a <= DT_AMP_BF16; a++)
        if (s && strcmp(s, dt_amp_name((dt_amp)a)) == 0) {
            *out = (dt_amp)a;
            return 0;
        }
    return -1;
}

double dt_amp_unit_roundoff(dt_amp a) {
    // half the distance from 1 to the next value: 2^-(p) for p stored+implicit mantissa bits
    return a == DT_AMP_FP16 ? 0x1p-11 : a == DT_AMP_BF16 ? 0x1p-8 : 0x1p-24;
}

static void widen(dt_net *net, const uint16_t *h, float *f, size_t n) {
    dt_device *d = net->dev;
    if (net->amp == DT_AMP_BF16) d->bf16_to_f32(d, h, f, n);
    else d->f16_to_f32(d, h, f, n);
}

static void narrow(dt_net *net, const float *f, uint16_t *h, size_t n) {
    dt_device *d = net->dev;
    if (net->amp == DT_AMP_BF16) d->f32_to_bf16(d, f, h, n);
    else d->f32_to_f16(d, f, h, n);
}

static size_t out_elems(const dt_layer *l) { return (size_t)l->B * dt_layer_out_size(l); }

// The device runs convolutions on half storage: bf16 through its bf16 hooks (nn/device.h
// im2col_bf16 and the rest), either format through im2col_bf16 (a bit copy) and the _h
// hooks (gemm_batched_h, gemm_batched_sum_h, col2im_h).
static int conv_bf16(const dt_net *net) {
    const dt_device *d = net->dev;
    if (net->amp == DT_AMP_BF16 && d->im2col_bf16 && d->col2im_bf16 && d->gemm_batched_bf16 &&
        d->gemm_batched_sum_bf16)
        return 1;
    return net->amp != DT_AMP_FP32 && d->im2col_bf16 && d->col2im_h && d->gemm_batched_h &&
           d->gemm_batched_sum_h;
}

void dt_net_half_alloc(dt_net *net) {
    dt_device *d = net->dev;
    size_t most = 1;
    for (int i = 0; i < net->n_layers; i++) {
        const dt_layer *l = net->layers[i];
        size_t in = (size_t)l->B * dt_layer_in_size(l);
        if (in > most) most = in;
        if (out_elems(l) > most) most = out_elems(l);
    }
    net->half_scratch_floats = most;
    for (int k = 0; k < 3; k++) net->half_scratch[k] = d->alloc(d, most * sizeof(float));
    net->params_lp = d->alloc(d, (net->n_total ? net->n_total : 1) * sizeof(float));
    if (conv_bf16(net))
        net->params_bf16 = d->alloc(d, (net->n_total ? net->n_total : 1) * sizeof(uint16_t));
}

// ---- the weights: fp32 master, half-rounded copy ----

// x (device, n floats) = float(half(x)), through scratch 0 read as halfs, chunk by chunk.
static void round_to_half(dt_net *net, float *x, size_t n) {
    uint16_t *h = (uint16_t *)net->half_scratch[0];
    size_t chunk = 2 * net->half_scratch_floats;
    for (size_t i = 0; i < n; i += chunk) {
        size_t c = n - i < chunk ? n - i : chunk;
        narrow(net, x + i, h, c);
        widen(net, h, x + i, c);
    }
}

int dt_net_half_conv_bits(const dt_net *net) { return conv_bf16(net); }

void dt_net_half_bits(dt_net *net, const float *x, uint16_t *h, size_t n) {
    narrow(net, x, h, n);
}

void dt_net_half_widen(dt_net *net, const uint16_t *h, float *x, size_t n) {
    widen(net, h, x, n);
}

void dt_net_half_round(dt_net *net, float *x, size_t off, size_t n) {
    for (int t = 0; t < net->n_params; t++) {
        const dt_param *p = &net->params_table[t];
        if (p->kind != DT_PARAM_WEIGHT && p->kind != DT_PARAM_BIAS) continue;
        size_t lo = (size_t)p->offset, hi = lo + p->count;  // [lo, hi) within [off, off + n)
        if (lo < off) lo = off;
        if (hi > off + n) hi = off + n;
        if (lo < hi) round_to_half(net, x + (lo - off), hi - lo);
    }
}

// Under a sharded trainer (net.h params_half): no net->params (stage 3: each unit gathered
// rounded, with its bits), or net->params already the half copy (stage 2: its bits made
// here); else the master whole, copied and rounded as unsharded (params_lp and params_bf16
// made here when the trainer freed them).
void dt_net_half_begin(dt_net *net) {
    dt_device *d = net->dev;
    net->master = NULL;
    if (!net->params) return;
    size_t n = net->n_total ? net->n_total : 1;
    if (conv_bf16(net) && !net->params_bf16)
        net->params_bf16 = d->alloc(d, n * sizeof(uint16_t));
    if (net->params_half) {
        if (net->params_bf16) narrow(net, net->params, net->params_bf16, net->n_total);
        return;
    }
    if (!net->params_lp) net->params_lp = d->alloc(d, n * sizeof(float));
    net->master = net->params;
    d->copy(d, net->params_lp, net->master, net->n_total * sizeof(float));
    dt_net_half_round(net, net->params_lp, 0, net->n_trainable);
    if (net->params_bf16) narrow(net, net->params_lp, net->params_bf16, net->n_total);
    net->params = net->params_lp;
}

void dt_net_half_end(dt_net *net) {
    dt_device *d = net->dev;
    if (!net->master) return;  // (nothing was swapped)
    size_t stats = net->n_total - net->n_trainable;  // batch norm's running mean and var
    if (stats)
        d->copy(d, net->master + net->n_trainable, net->params_lp + net->n_trainable,
                stats * sizeof(float));
    net->params = net->master;
    net->master = NULL;
}

// ---- fp32 views of half tensors while one layer runs ----

typedef struct {
    uint16_t *h[3];   // the half buffer each scratch slot views (NULL: free)
    size_t n[3];      // elements viewed
    int dirty[3];     // written by the layer: narrow back when it is done
} views;

// The fp32 view of half buffer h (n elements): a slot already viewing h, or a free one,
// widened from h when `load` (an input, or a gradient the layer adds into).
static float *view(dt_net *net, views *v, uint16_t *h, size_t n, int load, int write) {
    int s = 0;
    while (s < 3 && v->h[s] != h) s++;
    if (s == 3) {
        s = 0;
        while (s < 3 && v->h[s]) s++;
        DT_ASSERT(s < 3 && n <= net->half_scratch_floats);
        v->h[s] = h, v->n[s] = n, v->dirty[s] = 0;
        if (load) widen(net, h, net->half_scratch[s], n);
    }
    v->dirty[s] |= write;
    // a view that only holds its half buffer's values, as long as the layer runs: the
    // device may read the half bits instead (nn/device.h half_view)
    dt_device *d = net->dev;
    if (d->half_view) d->half_view(d, s, net->half_scratch[s], v->dirty[s] ? NULL : h, n);
    return net->half_scratch[s];
}

static void finish(dt_net *net, views *v) {
    dt_device *d = net->dev;
    for (int s = 0; s < 3; s++) {
        if (d->half_view) d->half_view(d, s, NULL, NULL, 0);
        if (v->h[s] && v->dirty[s]) narrow(net, net->half_scratch[s], v->h[s], v->n[s]);
    }
}

// Input slot `in` of a layer as fp32: the network input, or a view of the producer's out.
static void bind_src(dt_net *net, views *v, int in, int load) {
    if (in < 0) return;
    dt_layer *p = net->layers[in];
    if (p->out_h) p->out = view(net, v, p->out_h, out_elems(p), load, 0);
}

// Gradient slot of input `in`: a view of the producer's dout, widened unless this layer
// overwrites it (bit `bit` of l->dsrc_set, nn/net_plan.c).
static void bind_dsrc(dt_net *net, views *v, const dt_layer *l, int in, int bit) {
    if (in < 0) return;
    dt_layer *p = net->layers[in];
    if (p->dout_h) p->dout = view(net, v, p->dout_h, out_elems(p), !(l->dsrc_set & bit), 1);
}

static void unbind(dt_net *net, const dt_layer *l) {
    int k[3] = {l->index, l->in, l->in2};
    for (int i = 0; i < 3; i++) {
        if (k[i] < 0) continue;
        dt_layer *p = net->layers[k[i]];
        if (p->out_h) p->out = NULL;
        if (p->dout_h) p->dout = NULL;
    }
}

// ---- relu, the residual add, batch norm, max pooling and (bf16) conv straight on the half
// tensors ----
// Where the device has the half-storage ops (nn/device.h relu_forward_h, relu_backward_h,
// add_h, bn_*_h, maxpool_*_h; im2col_bf16 and the bf16 gemms for a conv without bias) and every tensor
// the layer touches is stored in half, these layers skip the views: the same bits (each op
// rounds once, as finish() does), a third of the traffic or less. Else (a device without
// them, the network's fp32 input, an add of a tensor with itself whose two gradients the
// views sum in fp32 before one rounding) the views.

static uint16_t *out_h_of(const dt_net *net, int in) {
    return in >= 0 ? net->layers[in]->out_h : NULL;
}
static uint16_t *dout_h_of(const dt_net *net, int in) {
    return in >= 0 ? net->layers[in]->dout_h : NULL;
}

static int direct_forward(dt_net *net, dt_layer *l, int training) {
    dt_device *d = net->dev;
    int fmt = (int)net->amp;
    uint16_t *x = out_h_of(net, l->in), *x2 = out_h_of(net, l->in2);
    if (!l->out_h || !x) return 0;
    if (l->type == DT_LAYER_RELU && d->relu_forward_h) {
        d->relu_forward_h(d, fmt, x, l->out_h, out_elems(l));
        return 1;
    }
    if (l->type == DT_LAYER_ADD && d->add_h && x2) {  // in place: out_h is x's buffer
        d->add_h(d, fmt, x, x2, l->out_h, out_elems(l));
        return 1;
    }
    if (l->type == DT_LAYER_BN && d->bn_forward_train_h && d->bn_forward_eval_h) {
        dt_bn_forward_h(l, net, training, x);
        return 1;
    }
    if (l->type == DT_LAYER_MAXPOOL && d->maxpool_forward_h) {
        d->maxpool_forward_h(d, fmt, x, l->B, l->c, l->h, l->w, l->kh, l->stride, l->pad,
                             l->out_h, (int32_t *)l->aux);
        return 1;
    }
    if (l->type == DT_LAYER_CONV && conv_bf16(net) && !l->has_bias) {
        dt_conv_forward_bf16(l, net, x);
        return 1;
    }
    return 0;
}

// dx = dy when this layer writes dx first (bit of l->dsrc_set), else dx += dy, rounded once
static void add_grad_into_h(dt_net *net, const dt_layer *l, uint16_t *dx, int bit) {
    dt_device *d = net->dev;
    size_t n = out_elems(l);
    if (l->dsrc_set & bit) d->copy(d, dx, l->dout_h, n * sizeof(uint16_t));
    else d->add_h(d, (int)net->amp, dx, l->dout_h, dx, n);
}

static int direct_backward(dt_net *net, dt_layer *l) {
    dt_device *d = net->dev;
    uint16_t *dx = dout_h_of(net, l->in), *dx2 = dout_h_of(net, l->in2);
    if (!l->dout_h || !dx) return 0;
    if (l->type == DT_LAYER_RELU && d->relu_backward_h && l->out_h) {
        // in place dout_h is dx's buffer (nn/net_plan.c) and the op overwrites it
        d->relu_backward_h(d, (int)net->amp, l->out_h, l->dout_h, dx, out_elems(l),
                           l->inplace || (l->dsrc_set & 1));
        return 1;
    }
    if (l->type == DT_LAYER_ADD && d->add_h && dx2 && l->in != l->in2) {
        if (!l->inplace) add_grad_into_h(net, l, dx, 1);  // in place dx already is dy
        add_grad_into_h(net, l, dx2, 2);
        return 1;
    }
    if (l->type == DT_LAYER_MAXPOOL && d->maxpool_backward_h) {  // never overwrites dx
        d->maxpool_backward_h(d, (int)net->amp, l->dout_h, (const int32_t *)l->aux, l->B, l->c,
                              l->h, l->w, l->oh, l->ow, dx);
        return 1;
    }
    uint16_t *x = out_h_of(net, l->in);
    if (l->type == DT_LAYER_BN && d->bn_backward_h && x) {
        dt_bn_backward_h(l, net, x, dx);
        return 1;
    }
    if (l->type == DT_LAYER_CONV && conv_bf16(net) && !l->has_bias && x) {
        dt_conv_backward_bf16(l, net, x, dx);
        return 1;
    }
    return 0;
}

// ---- one layer ----

void dt_net_half_forward(dt_net *net, dt_layer *l, int training) {
    if (direct_forward(net, l, training)) return;
    views v = {{NULL}, {0}, {0}};
    bind_src(net, &v, l->in, 1);
    bind_src(net, &v, l->in2, 1);
    if (l->out_h) l->out = view(net, &v, l->out_h, out_elems(l), l->inplace, 1);
    net->dev->gemm_half = (int)net->amp;  // half-input gemms (nn/device.h)
    l->forward(l, net, training);
    net->dev->gemm_half = 0;
    finish(net, &v);
    unbind(net, l);
}

// Which tensors a backward reads (nn/net_plan.c, "Why in place is exact"): conv, linear and
// batchnorm their input, relu its own output; the others neither.
void dt_net_half_backward(dt_net *net, dt_layer *l) {
    if (direct_backward(net, l)) return;
    views v = {{NULL}, {0}, {0}};
    int reads_in = l->type == DT_LAYER_CONV || l->type == DT_LAYER_LINEAR ||
                   l->type == DT_LAYER_BN || l->type == DT_LAYER_LAYERNORM ||
                   l->type == DT_LAYER_ATTENTION || l->type == DT_LAYER_GELU;
    if (reads_in) bind_src(net, &v, l->in, 1);
    if (l->type == DT_LAYER_RELU && l->out_h) l->out = view(net, &v, l->out_h, out_elems(l), 1, 0);
    if (l->dout_h) l->dout = view(net, &v, l->dout_h, out_elems(l), 1, 0);
    bind_dsrc(net, &v, l, l->in, 1);
    if (l->in2 >= 0) bind_dsrc(net, &v, l, l->in2, 2);
    net->dev->gemm_half = (int)net->amp;
    l->backward(l, net);
    net->dev->gemm_half = 0;
    finish(net, &v);
    unbind(net, l);
}

void dt_net_zero_dout(dt_net *net, const dt_layer *z) {
    dt_device *d = net->dev;
    size_t n = out_elems(z);
    if (z->dout_h) d->fill(d, (float *)z->dout_h, 0.0f, (n + 1) / 2);  // zero bits: +0 halfs
    else d->fill(d, z->dout, 0.0f, n);
}

size_t dt_net_activation_bytes(const dt_net *net, size_t *scratch_bytes) {
    size_t bytes = 0;
    for (int i = 0; i < net->n_layers; i++) {
        const dt_layer *l = net->layers[i];
        size_t e = out_elems(l);
        if (!l->inplace) bytes += e * (l->out_h ? 2 : 4);
        int seen = 0;  // gradient buffers are shared (nn/net_plan.c): count each once, at
                       // the size of its largest user
        for (int j = 0; j < net->n_layers && !seen; j++) {
            const dt_layer *o = net->layers[j];
            int same = (l->dout_h && o->dout_h == l->dout_h) || (l->dout && o->dout == l->dout);
            if (same && j != i && (out_elems(o) > e || (out_elems(o) == e && j < i))) seen = 1;
        }
        if (!seen) bytes += e * (l->dout_h ? 2 : 4);
    }
    if (scratch_bytes) *scratch_bytes = 3 * net->half_scratch_floats * sizeof(float);
    return bytes;
}
