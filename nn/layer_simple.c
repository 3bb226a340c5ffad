// layer_simple.c — the elementwise layers: relu, GELU (GPT-2), inverted dropout (Srivastava
// et al. 2014; the mask is a counter-based hash of (seed, element), nn/kernels.h
// dt_dropout_mask, so every device draws the same mask) and the residual add of He et al.
// 2016 (y = F(x) + x).
// Not here: the per-element loops (nn/device.h).
#include "gpt_cost.h"
#include "kernels.h"
#include "layers.h"

static double batch_elems(const dt_layer *l) { return (double)l->B * dt_layer_out_size(l); }
static size_t batch_count(const dt_layer *l) { return (size_t)l->B * dt_layer_out_size(l); }

// relu costs, n elements: forward n FLOPs, 4*2n bytes (x read, y written);
// backward n FLOPs, 4*4n bytes (y and dy read, dx read and written).
void dt_relu_setup(dt_layer *l) {
    double n = batch_elems(l);
    l->fwd_flops = n;
    l->bwd_flops = n;
    l->fwd_bytes = 4.0 * 2.0 * n;
    l->bwd_bytes = 4.0 * 4.0 * n;
    l->aux_bytes = 0;
    l->workspace_floats = 0;
}

// x, y are (B,C,H,W): y = max(x, 0); in place (l->inplace, nn/net_plan.c) y is x
void dt_relu_forward(dt_layer *l, dt_net *net, int training) {
    (void)training;
    net->dev->relu_forward(net->dev, dt_layer_src(net, l->in), l->out, batch_count(l));
}

// dx += dy where y > 0; in place dy is dx's buffer: dx = y > 0 ? dy : 0
void dt_relu_backward(dt_layer *l, dt_net *net) {
    dt_device *d = net->dev;
    if (l->inplace) {
        d->relu_backward_inplace(d, l->out, l->dout, batch_count(l));
    } else {
        d->relu_backward(d, l->out, l->dout, dt_layer_dsrc(net, l->in), batch_count(l));
    }
}

// dropout costs, n elements: forward 2n FLOPs (draw, multiply), 4*3n bytes (x read, mask
// and y written); backward n FLOPs, 4*4n bytes (dy and mask read, dx read and written).
void dt_dropout_setup(dt_layer *l) {
    double n = batch_elems(l);
    l->fwd_flops = 2.0 * n;
    l->bwd_flops = n;
    l->fwd_bytes = 4.0 * 3.0 * n;
    l->bwd_bytes = 4.0 * 4.0 * n;
    l->aux_bytes = batch_count(l) * sizeof(float);  // the mask
    l->workspace_floats = 0;
}

uint64_t dt_dropout_layer_seed(const dt_net *net, const dt_layer *l) {
    return dt_mix64(net->dropout_seed ^ dt_mix64(0xD0D0000000000000ull + (uint64_t)l->index));
}

// x, y, mask are (B,C,H,W). Training: y = x*mask, mask = keep ? 1/(1-p) : 0. Evaluation:
// the identity, with the mask set to 1 so that a backward after it is the identity too.
void dt_dropout_forward(dt_layer *l, dt_net *net, int training) {
    dt_device *d = net->dev;
    const float *x = dt_layer_src(net, l->in);
    size_t n = batch_count(l);
    if (training) {
        d->dropout_forward(d, x, l->out, (float *)l->aux, n, l->p,
                           dt_dropout_layer_seed(net, l));
    } else {
        d->copy(d, l->out, x, n * sizeof(float));
        d->fill(d, (float *)l->aux, 1.0f, n);
    }
}

// dx += dy*mask
void dt_dropout_backward(dt_layer *l, dt_net *net) {
    net->dev->dropout_backward(net->dev, l->dout, (const float *)l->aux,
                               dt_layer_dsrc(net, l->in), batch_count(l));
}

// residual add costs, n elements: forward n FLOPs, 4*5n bytes (copy: x read, y written;
// add: y and x2 read, y written); backward 2n FLOPs, 4*6n bytes (two adds of dy into the
// two input gradients, each reading dy and reading and writing dx). These are the costs of
// the general case; in place (nn/net_plan.c) the cpu moves 3n forward and 3n backward.
void dt_add_setup(dt_layer *l) {
    double n = batch_elems(l);
    l->fwd_flops = n;
    l->bwd_flops = 2.0 * n;
    l->fwd_bytes = 4.0 * 5.0 * n;
    l->bwd_bytes = 4.0 * 6.0 * n;
    l->aux_bytes = 0;
    l->workspace_floats = 0;
}

// x, x2, y are (B,C,H,W): y = x + x2; in place (l->inplace) y is x: y += x2
void dt_add_forward(dt_layer *l, dt_net *net, int training) {
    (void)training;
    dt_device *d = net->dev;
    size_t n = batch_count(l);
    if (!l->inplace) d->copy(d, l->out, dt_layer_src(net, l->in), n * sizeof(float));
    d->add(d, l->out, dt_layer_src(net, l->in2), n);
}

// dx += dy into one input's gradient, or dx = dy when this layer writes it first
// (l->dsrc_set bit `bit`, nn/net_plan.c: the network did not zero it)
static void add_grad_into(dt_layer *l, dt_net *net, int in, int bit) {
    dt_device *d = net->dev;
    size_t n = batch_count(l);
    if (l->dsrc_set & bit) {
        d->copy(d, dt_layer_dsrc(net, in), l->dout, n * sizeof(float));
    } else {
        d->add(d, dt_layer_dsrc(net, in), l->dout, n);
    }
}

// dx += dy and dx2 += dy (the same tensor twice when in == in2: both contributions add);
// in place dy already is dx's buffer, and dx = dy is nothing to do
void dt_add_backward(dt_layer *l, dt_net *net) {
    if (!l->inplace) add_grad_into(l, net, l->in, 1);
    add_grad_into(l, net, l->in2, 2);
}

// GELU costs: nn/gpt_cost.h dt_gelu_cost (shared with the model device's roofline).
void dt_gelu_setup(dt_layer *l) {
    dt_seq_cost c = dt_gelu_cost(batch_elems(l));
    l->fwd_flops = c.fwd_flops;
    l->bwd_flops = c.bwd_flops;
    l->fwd_bytes = 4.0 * c.fwd_elems;
    l->bwd_bytes = 4.0 * c.bwd_elems;
    l->aux_bytes = 0;
    l->workspace_floats = 0;
}

void dt_gelu_forward(dt_layer *l, dt_net *net, int training) {
    (void)training;
    net->dev->gelu_forward(net->dev, dt_layer_src(net, l->in), l->out, batch_count(l));
}

// dx += dy*gelu'(x): reads the input, so the input must not be overwritten in place
void dt_gelu_backward(dt_layer *l, dt_net *net) {
    net->dev->gelu_backward(net->dev, dt_layer_src(net, l->in), l->dout,
                            dt_layer_dsrc(net, l->in), batch_count(l));
}
