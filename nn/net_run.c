// net_run.c — running a network (nn/net.h "running"): copying a batch in, forward layer by
// layer, the softmax cross-entropy loss, backward last layer first with the grad-ready hook
// that fusion buckets hang on (coll/), and the FLOP totals the simulator charges. Not here:
// building and parameter initialisation (nn/net.c), the layers' math (nn/layer_*.c).
#include "kernels.h"
#include "layers.h"

void dt_net_set_batch(dt_net *net, const float *x_host, const int32_t *labels_host) {
    DT_ASSERT(net && net->finalized);
    dt_device *d = net->dev;
    size_t n = (size_t)net->B * net->in_c * net->in_h * net->in_w;
    if (x_host) d->from_host(d, net->input, x_host, n * sizeof(float));
    // The data loader validates labels; one outside [0, classes) makes the loss NaN
    // (device.h softmax_xent_forward), which the trainer's finiteness check reports.
    if (labels_host) d->from_host(d, net->labels, labels_host, (size_t)net->B * sizeof(int32_t));
}

void dt_net_forward(dt_net *net, int training) {
    DT_ASSERT(net && net->finalized);
    int has_bn = 0;
    for (int i = 0; i < net->n_layers; i++) {
        dt_layer *l = net->layers[i];
        l->forward(l, net, training);
        has_bn |= l->type == DT_LAYER_BN;
    }
    if (training) {
        if (has_bn) net->bn_batches_tracked++;
        net->dropout_seed = dt_mix64(net->dropout_seed);  // the next step draws new masks
    }
}

// Mean softmax cross-entropy of the last layer's output, (B, K) logits with K its
// per-image size, against net->labels; leaves the probabilities in net->probs.
float dt_net_loss(dt_net *net) {
    DT_ASSERT(net && net->finalized);
    const dt_layer *last = net->layers[net->n_layers - 1];
    return net->dev->softmax_xent_forward(net->dev, last->out, net->labels, net->B,
                                          (int)dt_layer_out_size(last), net->probs);
}

// Needs dt_net_loss first (the seed gradient is probs - onehot(labels)).
// Each layer's trainable tensors are contiguous, [w_off, w_off + n_trainable), and layers
// register in order, so walking the layers backwards hands out ranges that tile
// [0, n_trainable) from the top down; a layer without parameters reports the empty range
// at the current low mark.
void dt_net_backward(dt_net *net, float loss_scale, dt_grad_ready_fn ready, void *ctx) {
    DT_ASSERT(net && net->finalized);
    dt_device *d = net->dev;
    d->fill(d, net->grads, 0.0f, net->n_trainable);
    d->fill(d, net->dinput, 0.0f, (size_t)net->B * net->in_c * net->in_h * net->in_w);
    for (int i = 0; i < net->n_layers; i++) {
        dt_layer *l = net->layers[i];
        d->fill(d, l->dout, 0.0f, (size_t)l->B * dt_layer_out_size(l));
    }
    dt_layer *last = net->layers[net->n_layers - 1];
    d->softmax_xent_backward(d, net->probs, net->labels, net->B, (int)dt_layer_out_size(last),
                             loss_scale / (float)net->B, last->dout);
    size_t mark = net->n_trainable;
    for (int i = net->n_layers - 1; i >= 0; i--) {
        dt_layer *l = net->layers[i];
        l->backward(l, net);
        size_t lo = mark;
        if (l->n_trainable) {
            lo = (size_t)l->w_off;
            DT_ASSERT(lo + l->n_trainable == mark);
        }
        if (ready) ready(ctx, net, i, lo, mark);
        mark = lo;
    }
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
