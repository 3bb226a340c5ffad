// net_plan.c — the buffer plan of dt_net_finalize (nn/layers.h dt_net_plan_buffers):
//  1. in-place layers: a relu (torchvision's ReLU(inplace=True)) or a residual add (into its
//     main branch, as torchvision's `out += identity`) whose input nobody else reads takes
//     that input's out and dout buffers instead of its own;
//  2. every other layer's output buffer;
//  3. gradient buffers shared between layers whose backward lifetimes do not overlap;
//  4. first writers that overwrite a gradient buffer instead of adding into a zeroed one.
// Under mixed precision (net->amp) steps 2 and 3 allocate half-precision buffers (out_h,
// dout_h) for every layer but the last, whose logits and their gradient stay fp32.
// Not here: parameters (nn/net.c), running the network and zeroing (nn/net_run.c).
//
// Why in place is exact: the only backward that reads its own layer's output is relu's (the
// mask); batchnorm, conv and linear read their input, maxpool its argmax, dropout its mask,
// add and avgpool nothing. So a relu may overwrite any producer's output (a relu producer's
// mask is unchanged: relu(relu(x)) = relu(x)), and an add any producer but a relu. Every
// reader outside the chain reads its top, whose values are final once the top has run.
// Backward: the chain's one gradient buffer holds d(top); each in-place layer turns it into
// the gradient w.r.t. its input in place (relu masks it, add leaves it as it is).
#include <string.h>

#include "layers.h"

// Decide l->inplace for every layer (step 1).
static void plan_inplace(dt_net *net) {
    int n = net->n_layers;
    int *readers = callocCheck((size_t)n, sizeof(int));  // input slots reading each layer
    for (int j = 0; j < n; j++) {
        const dt_layer *l = net->layers[j];
        if (l->in >= 0) readers[l->in]++;
        if (l->in2 >= 0) readers[l->in2]++;
    }
    for (int j = 0; j < n; j++) {
        dt_layer *l = net->layers[j];
        l->inplace = 0;
        if (l->in < 0 || readers[l->in] != 1) continue;  // the network input, or shared
        const dt_layer *src = net->layers[l->in];
        if (l->type == DT_LAYER_RELU) l->inplace = net->dev->relu_backward_inplace != NULL;
        if (l->type == DT_LAYER_ADD) l->inplace = src->type != DT_LAYER_RELU;
        if (net->amp != DT_AMP_FP32 && j == n - 1) l->inplace = 0;  // the logits stay fp32
    }
    free(readers);
}

static float *alloc_floats(dt_device *d, size_t n) {
    return d->alloc(d, (n ? n : 1) * sizeof(float));
}

// Half-precision storage (mixed precision), rounded up to an even count so that zeroing it
// as floats (0.0f is two zero halfs in fp16 and bf16) covers every element.
static uint16_t *alloc_halfs(dt_device *d, size_t n) {
    return d->alloc(d, ((n + 1) / 2 ? (n + 1) / 2 : 1) * sizeof(float));
}

// Under mixed precision every layer but the last stores half (nn/net_half.c).
static int stores_half(const dt_net *net, int k) {
    return net->amp != DT_AMP_FP32 && k != net->n_layers - 1;
}

// Gradient buffers (dout), shared where lifetimes allow (step 3). A root's buffer (shared
// with its in-place chain) is live from the backward step that first writes it
// (dt_net_dout_first_writer) down to step root, both inclusive; roots whose live ranges are
// disjoint share one buffer (greedy interval colouring in the order buffers become live,
// best fit by size, growing the largest free buffer when none fits). ResNet-50 needs ~2.4M
// live gradient floats per image instead of one buffer per layer (~37.6M).
static void plan_douts(dt_net *net, int half) {
    int n = net->n_layers, nb = 0;
    int *first = mallocCheck((size_t)n * sizeof(int));
    int *buf_of = mallocCheck((size_t)n * sizeof(int));
    int *owner_end = mallocCheck((size_t)n * sizeof(int));  // buffer free for steps < this
    size_t *cap = mallocCheck((size_t)n * sizeof(size_t));
    dt_net_dout_first_writer(net, first);
    for (int t = n - 1; t >= 0; t--) {
        for (int k = 0; k <= t; k++) {
            if (first[k] != t || net->layers[k]->inplace || !stores_half(net, k) != !half)
                continue;
            size_t need = (size_t)net->layers[k]->B * dt_layer_out_size(net->layers[k]);
            int best = -1, largest = -1;
            for (int b = 0; b < nb; b++) {
                if (owner_end[b] <= t) continue;  // still live at step t
                if (cap[b] >= need && (best < 0 || cap[b] < cap[best])) best = b;
                if (largest < 0 || cap[b] > cap[largest]) largest = b;
            }
            if (best < 0) best = largest;
            if (best < 0) best = nb++, cap[best] = 0;
            if (cap[best] < need) cap[best] = need;
            owner_end[best] = k;
            buf_of[k] = best;
        }
    }
    void **bufs = mallocCheck((size_t)(nb ? nb : 1) * sizeof(void *));
    for (int b = 0; b < nb; b++)
        bufs[b] = half ? (void *)alloc_halfs(net->dev, cap[b]) : alloc_floats(net->dev, cap[b]);
    for (int k = 0; k < n; k++) {
        if (!stores_half(net, k) != !half) continue;
        void *buf = bufs[buf_of[dt_layer_buffer_root(net, k)]];
        if (half) net->layers[k]->dout_h = buf;
        else net->layers[k]->dout = buf;
    }
    free(bufs), free(cap), free(owner_end), free(buf_of), free(first);
}

// Can layer w's backward write (=) the gradient of its input slot (1: in, 2: in2)?
// batchnorm with the device's bn_backward_set; linear and 1x1 stride-1 conv with beta = 0
// in their dx gemm; other convs with the device's col2im_set; add with a copy (not when
// in == in2, which adds twice into one buffer, and not into its own in-place input).
static int can_overwrite(const dt_net *net, const dt_layer *w, int slot) {
    switch (w->type) {
    case DT_LAYER_BN: return slot == 1 && net->dev->bn_backward_set != NULL;
    case DT_LAYER_LINEAR: return slot == 1;
    case DT_LAYER_CONV:
        return slot == 1 && (dt_conv_is_pointwise(w) || net->dev->col2im_set != NULL);
    case DT_LAYER_ADD: return w->in != w->in2 && !(slot == 1 && w->inplace);
    default: return 0;
    }
}

// Step 4: for every root whose buffer is first written by a layer reading it (not by one of
// its own chain, not the loss seed), let that layer overwrite when it can.
static void plan_overwrites(dt_net *net) {
    int n = net->n_layers;
    int *first = mallocCheck((size_t)n * sizeof(int));
    dt_net_dout_first_writer(net, first);
    for (int k = 0; k < n; k++) net->layers[k]->dsrc_set = 0;
    for (int k = 0; k < n; k++) {
        if (net->layers[k]->inplace || dt_layer_buffer_root(net, first[k]) == k) continue;
        dt_layer *w = net->layers[first[k]];
        int via_in = w->in >= 0 && dt_layer_buffer_root(net, w->in) == k;
        int via_in2 = w->in2 >= 0 && dt_layer_buffer_root(net, w->in2) == k;
        if (via_in && !via_in2 && can_overwrite(net, w, 1)) w->dsrc_set |= 1;
        if (via_in2 && !via_in && can_overwrite(net, w, 2)) w->dsrc_set |= 2;
    }
    free(first);
}

int dt_net_dout_overwritten(const dt_net *net, int root, int first) {
    const dt_layer *w = net->layers[first];
    return ((w->dsrc_set & 1) && dt_layer_buffer_root(net, w->in) == root) ||
           ((w->dsrc_set & 2) && dt_layer_buffer_root(net, w->in2) == root);
}

void dt_net_plan_buffers(dt_net *net) {
    plan_inplace(net);
    for (int i = 0; i < net->n_layers; i++) {  // step 2; an in-place layer's input came first
        dt_layer *l = net->layers[i];
        size_t n = (size_t)l->B * dt_layer_out_size(l);
        if (stores_half(net, i))
            l->out_h = l->inplace ? net->layers[l->in]->out_h : alloc_halfs(net->dev, n);
        else
            l->out = l->inplace ? net->layers[l->in]->out : alloc_floats(net->dev, n);
    }
    plan_douts(net, 0);  // fp32 gradient buffers: every one, or (mixed) the logits' alone
    if (net->amp != DT_AMP_FP32) plan_douts(net, 1);
    plan_overwrites(net);
}
