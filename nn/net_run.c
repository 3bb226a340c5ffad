// net_run.c — running a network (nn/net.h "running"): copying a batch in, forward layer by
// layer, the softmax cross-entropy loss, backward last layer first with the grad-ready hook
// that fusion buckets hang on (coll/), and the FLOP totals the simulator charges. Under mixed
// precision each layer runs through nn/net_half.c (half storage, fp32 math). Not here:
// building and parameter initialisation (nn/net.c), the layers' math (nn/layer_*.c).
#include <stdio.h>

#include "kernels.h"
#include "layers.h"

void dt_net_set_batch(dt_net *net, const float *x_host, const int32_t *labels_host) {
    DT_ASSERT(net && net->finalized);
    dt_device *d = net->dev;
    size_t n = (size_t)net->B * net->in_c * net->in_h * net->in_w;
    if (x_host) d->from_host(d, net->input, x_host, n * sizeof(float));
    // The data loader validates labels; one outside [0, classes) makes the loss NaN
    // (device.h softmax_xent_forward), which the trainer's finiteness check reports.
    size_t rows = (size_t)net->B * (net->seq > 0 ? (size_t)net->seq : 1);
    if (labels_host) d->from_host(d, net->labels, labels_host, rows * sizeof(int32_t));
}

void dt_net_set_tokens(dt_net *net, const int32_t *tokens_host, const int32_t *targets_host) {
    DT_ASSERT(net && net->finalized && net->tokens);
    dt_device *d = net->dev;
    size_t n = (size_t)net->B * (size_t)net->seq;
    if (tokens_host) d->from_host(d, net->tokens, tokens_host, n * sizeof(int32_t));
    if (targets_host) d->from_host(d, net->labels, targets_host, n * sizeof(int32_t));
}

// Rows of the loss: one per sample, or one per token of a sequence model.
static int loss_rows(const dt_net *net) { return net->B * (net->seq > 0 ? net->seq : 1); }

_Static_assert(DT_LAYER_GELU + 1 == DT_N_LAYER_TYPES, "a layer type without a profile kind");

const char *dt_layer_type_name(int type) {  // a switch: no table of pointers in data
    switch (type) {
    case DT_LAYER_CONV: return "conv";
    case DT_LAYER_BN: return "bn";
    case DT_LAYER_RELU: return "relu";
    case DT_LAYER_MAXPOOL: return "maxpool";
    case DT_LAYER_AVGPOOL: return "avgpool";
    case DT_LAYER_LINEAR: return "linear";
    case DT_LAYER_DROPOUT: return "dropout";
    case DT_LAYER_ADD: return "add";
    case DT_LAYER_EMBED: return "embed";
    case DT_LAYER_LAYERNORM: return "layernorm";
    case DT_LAYER_ATTENTION: return "attention";
    case DT_LAYER_GELU: return "gelu";
    }
    return NULL;
}

const char *dt_kind_name(int kind, char *buf, size_t size) {
    if (kind == DT_KIND_REST) return snprintf(buf, size, "rest"), buf;
    const char *t = kind >= 0 && kind < DT_KIND_REST ? dt_layer_type_name(kind / 2) : NULL;
    if (!t) return NULL;
    snprintf(buf, size, "%s.%s", t, kind % 2 == DT_PHASE_FORWARD ? "forward" : "backward");
    return buf;
}

static void tell(const dt_net *net, int layer, int phase) {
    if (net->on_layer) net->on_layer(net->on_layer_ctx, net, layer, phase);
}

// the sharded trainer's turn (net.h on_params): its gathers and gradient buckets
static void prepare(dt_net *net, int layer, int phase) {
    if (net->on_params) net->on_params(net->on_params_ctx, net, layer, phase);
}

// The unit holding trainable element off: lo[k] <= off < lo[k + 1].
static int unit_of(const dt_net_units *u, size_t off) {
    int a = 0, b = u->n - 1;
    while (a < b) {
        int m = (a + b + 1) / 2;
        if (u->lo[m] <= off) a = m;
        else b = m - 1;
    }
    return a;
}

static void not_resident(const char *what, ssize_t off, int unit) {
    fprintf(stderr, "dtlab: internal error: %s element %zd used while its unit %d is not "
            "resident (the sharded trainer's on_params hook)\n", what, off, unit);
    abort();
}

float *dt_net_unit_ptr(const dt_net *net, ssize_t off, int grad) {
    const dt_net_units *u = net->units;
    DT_ASSERT(u && off >= 0);
    if (!grad && (size_t)off >= net->n_trainable) {  // running statistics
        DT_ASSERT(u->stats && (size_t)off < net->n_total);
        return u->stats + ((size_t)off - net->n_trainable);
    }
    DT_ASSERT((size_t)off < net->n_trainable);
    int a = unit_of(u, (size_t)off);
    float *base = grad ? u->grads[a] : u->params[a];
    if (!base) not_resident(grad ? "gradient" : "parameter", off, a);
    return base + ((size_t)off - u->lo[a]);
}

const uint16_t *dt_net_p_h(const dt_net *net, ssize_t off) {
    if (net->params_bf16) return net->params_bf16 + off;
    const dt_net_units *u = net->units;
    DT_ASSERT(u && u->params_h && off >= 0 && (size_t)off < net->n_trainable);
    int a = unit_of(u, (size_t)off);
    if (!u->params_h[a]) not_resident("parameter (half bits)", off, a);
    return u->params_h[a] + ((size_t)off - u->lo[a]);
}

// a relu or residual add that a batch norm before it runs (nn/layers.h dt_bn_fused): the
// layer 1 (bn -> relu) or 1 and 2 (bn -> add -> relu) after a fusing batch norm
static int fused_away(const dt_net *net, const dt_layer *l) {
    int k = l->index;
    if (l->type != DT_LAYER_RELU && l->type != DT_LAYER_ADD) return 0;
    if (k >= 1 && dt_bn_fused(net, net->layers[k - 1], NULL) >= 1) return 1;
    return l->type == DT_LAYER_RELU && k >= 2 && dt_bn_fused(net, net->layers[k - 2], NULL) == 2;
}

void dt_net_forward(dt_net *net, int training) {
    DT_ASSERT(net && net->finalized);
    int has_bn = 0, half = net->amp != DT_AMP_FP32;
    if (half) dt_net_half_begin(net);  // the half-rounded weights (nn/net_half.c)
    for (int i = 0; i < net->n_layers; i++) {
        dt_layer *l = net->layers[i];
        prepare(net, i, DT_PHASE_FORWARD);
        tell(net, i, DT_PHASE_FORWARD);
        if (training && fused_away(net, l)) {  // done by its batch norm
        } else if (half) {
            dt_net_half_forward(net, l, training);
        } else {
            l->forward(l, net, training);
        }
        if (net->on_tensor) net->on_tensor(net->on_tensor_ctx, net, i, DT_PHASE_FORWARD);
        has_bn |= l->type == DT_LAYER_BN;
    }
    tell(net, -1, DT_PHASE_FORWARD);
    prepare(net, -1, DT_PHASE_FORWARD);
    if (half) dt_net_half_end(net);
    if (training) {
        if (has_bn) net->bn_batches_tracked++;
        net->dropout_seed = dt_mix64(net->dropout_seed);  // the next step draws new masks
    }
}

// Mean softmax cross-entropy of the last layer's output, (B, K) logits with K its
// per-image size (a sequence model: (B*seq, vocab)), against net->labels; leaves the
// probabilities in net->probs.
float dt_net_loss(dt_net *net) {
    DT_ASSERT(net && net->finalized);
    const dt_layer *last = net->layers[net->n_layers - 1];
    if (net->loss_part) return net->loss_part(net->on_tensor_ctx, net);
    return net->dev->softmax_xent_forward(net->dev, last->out, net->labels, loss_rows(net),
                                          net->num_classes, net->probs);
}

void dt_net_dout_first_writer(const dt_net *net, int *first) {
    int n = net->n_layers;
    for (int k = 0; k < n; k++) first[k] = k;
    for (int j = 0; j < n; j++) {
        const dt_layer *l = net->layers[j];
        if (l->in >= 0 && j > first[l->in]) first[l->in] = j;
        if (l->in2 >= 0 && j > first[l->in2]) first[l->in2] = j;
    }
    // an in-place chain shares its root's buffer: the highest step over the chain, for all
    for (int k = 0; k < n; k++) {
        int r = dt_layer_buffer_root(net, k);
        if (r != k && first[k] > first[r]) first[r] = first[k];
    }
    for (int k = 0; k < n; k++) first[k] = first[dt_layer_buffer_root(net, k)];
}

// Needs dt_net_loss first (the seed gradient is probs - onehot(labels)).
// Gradient buffers of layers whose backward lifetimes do not overlap are shared (nn/net_plan.c),
// so each dout is zeroed just before the backward step that first adds into it rather than
// all at once: the same result as zeroing everything first. An in-place chain's buffer is
// zeroed once (for its root); a buffer whose first writer overwrites it (l->dsrc_set) and
// the loss-seeded one are not zeroed.
// Each layer's trainable tensors are contiguous, [w_off, w_off + n_trainable), and layers
// register in order, so walking the layers backwards hands out ranges that tile
// [0, n_trainable) from the top down; a layer without parameters reports the empty range
// at the current low mark.
static void backward(dt_net *net, float loss_scale, const float *seed, dt_grad_ready_fn ready,
                     void *ctx) {
    DT_ASSERT(net && net->finalized);
    dt_device *d = net->dev;
    int n = net->n_layers;
    // (sharded: the trainer zeroes each gradient bucket as it allocates it)
    if (!net->keep_grads && net->grads) d->fill(d, net->grads, 0.0f, net->n_trainable);
    d->fill(d, net->dinput, 0.0f, (size_t)net->B * net->in_c * net->in_h * net->in_w);
    // zero_at[t]: the layers whose dout step t writes first (a list threaded through next)
    int *first = mallocCheck((size_t)n * sizeof(int));
    int *zero_at = mallocCheck((size_t)n * sizeof(int));
    int *next = mallocCheck((size_t)n * sizeof(int));
    dt_net_dout_first_writer(net, first);
    for (int t = 0; t < n; t++) zero_at[t] = -1;
    for (int k = 0; k < n; k++) next[k] = zero_at[first[k]], zero_at[first[k]] = k;

    // forward's weights: params_lp, unless the sharded trainer holds them (net_half.c)
    int half = net->amp != DT_AMP_FP32, swap = half && net->params && !net->params_half;
    DT_ASSERT(!swap || net->params_lp);
    if (swap) net->master = net->params, net->params = net->params_lp;
    dt_layer *last = net->layers[n - 1];
    int root_last = dt_layer_buffer_root(net, n - 1);
    size_t n_last = (size_t)last->B * dt_layer_out_size(last);
    if (seed) {  // a later pipeline stage's gradient
        d->copy(d, last->dout, seed, n_last * sizeof(float));
    } else {
        d->fill(d, last->dout, 0.0f, n_last);
        if (net->seed_part)
            net->seed_part(net->on_tensor_ctx, net, loss_scale / (float)loss_rows(net),
                           last->dout);
        else
            d->softmax_xent_backward(d, net->probs, net->labels, loss_rows(net),
                                     net->num_classes, loss_scale / (float)loss_rows(net),
                                     last->dout);
    }
    size_t mark = net->n_trainable;
    for (int t = n - 1; t >= 0; t--) {
        dt_layer *l = net->layers[t];
        prepare(net, t, DT_PHASE_BACKWARD);
        tell(net, t, DT_PHASE_BACKWARD);
        for (int k = zero_at[t]; k >= 0; k = next[k]) {
            const dt_layer *z = net->layers[k];
            if (z->inplace || k == root_last) continue;  // a chain's root; the loss seed
            if (dt_net_dout_overwritten(net, k, t)) continue;
            dt_net_zero_dout(net, z);
        }
        if (net->on_tensor) net->on_tensor(net->on_tensor_ctx, net, t, DT_PHASE_BACKWARD);
        if (fused_away(net, l)) {  // its batch norm's backward applies its mask
        } else if (half) {
            dt_net_half_backward(net, l);
        } else {
            l->backward(l, net);
        }
        size_t lo = mark;
        if (l->n_trainable) {
            lo = (size_t)l->w_off;
            DT_ASSERT(lo + l->n_trainable == mark);
        }
        if (ready) {  // the allreduce's polls and starts: no layer's work
            tell(net, -1, DT_PHASE_BACKWARD);
            ready(ctx, net, t, lo, mark);
        }
        mark = lo;
    }
    tell(net, -1, DT_PHASE_BACKWARD);
    prepare(net, -1, DT_PHASE_BACKWARD);
    if (swap) net->params = net->master, net->master = NULL;
    free(first), free(zero_at), free(next);
}

void dt_net_backward(dt_net *net, float loss_scale, dt_grad_ready_fn ready, void *ctx) {
    backward(net, loss_scale, NULL, ready, ctx);
}

void dt_net_backward_from(dt_net *net, const float *dout, dt_grad_ready_fn ready, void *ctx) {
    DT_ASSERT(dout);
    backward(net, 1.0f, dout, ready, ctx);
}

int dt_net_keep_tied_apart(dt_net *net) {
    DT_ASSERT(net && net->finalized);
    for (int i = 0; i < net->n_layers && !net->tied_grad; i++) {
        const dt_layer *l = net->layers[i];
        if (l->type != DT_LAYER_EMBED && !l->tied) continue;
        const dt_param *w = NULL;  // wte, or the head's copy of it
        for (int t = 0; t < net->n_params && !w; t++)
            if (net->params_table[t].offset == (size_t)l->w_off && net->params_table[t].trainable)
                w = &net->params_table[t];
        DT_ASSERT(w);
        net->tied_n = w->count;
        net->tied_grad = net->dev->alloc(net->dev, w->count * sizeof(float));
    }
    return net->tied_grad ? 0 : -1;
}

double dt_net_forward_flops(const dt_net *net) {
    double f = 0.0;
    for (int i = 0; i < net->n_layers; i++) f += net->layers[i]->fwd_flops;
    return f;
}

double dt_net_step_flops(const dt_net *net) {
    double f = 0.0;
    for (int i = 0; i < net->n_layers; i++)
        f += net->layers[i]->fwd_flops + net->layers[i]->bwd_flops;
    return f;
}
