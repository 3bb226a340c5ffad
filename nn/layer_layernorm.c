// layer_layernorm.c — layer normalisation (Ba, Kiros, Hinton 2016) over the features of each
// token, as torch.nn.LayerNorm(C) (eps 1e-5, biased variance): y = (x - mean)/sqrt(var +
// eps)*gamma + beta. Statistics are per token, so training and evaluation are the same and
// nothing runs between steps. Not here: the arithmetic (nn/device.h layernorm_forward/
// backward).
#include "gpt_cost.h"
#include "layers.h"

// Costs: nn/gpt_cost.h dt_layernorm_cost (shared with the model device's roofline).
void dt_layernorm_setup(dt_layer *l) {
    dt_seq_cost c = dt_layernorm_cost((double)l->B * l->h, l->w);
    l->fwd_flops = c.fwd_flops;
    l->bwd_flops = c.bwd_flops;
    l->fwd_bytes = 4.0 * c.fwd_elems;
    l->bwd_bytes = 4.0 * c.bwd_elems;
    l->aux_bytes = 2 * (size_t)l->B * l->h * sizeof(float);  // mean, rstd
    l->workspace_floats = 0;
}

void dt_layernorm_forward(dt_layer *l, dt_net *net, int training) {
    (void)training;
    dt_device *d = net->dev;
    int N = l->B * l->h;
    float *mean = (float *)l->aux, *rstd = mean + N;
    d->layernorm_forward(d, dt_layer_src(net, l->in), dt_net_p(net, l->w_off),
                         dt_net_p(net, l->b_off), N, l->w, l->eps, mean, rstd, l->out);
}

void dt_layernorm_backward(dt_layer *l, dt_net *net) {
    dt_device *d = net->dev;
    int N = l->B * l->h;
    const float *mean = (const float *)l->aux, *rstd = mean + N;
    d->layernorm_backward(d, l->dout, dt_layer_src(net, l->in), dt_net_p(net, l->w_off), mean,
                          rstd, N, l->w, dt_layer_dsrc(net, l->in), dt_net_g(net, l->w_off),
                          dt_net_g(net, l->b_off));
}
