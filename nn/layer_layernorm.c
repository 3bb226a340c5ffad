// layer_layernorm.c — layer normalisation (Ba, Kiros, Hinton 2016) over the features of each
// token, as torch.nn.LayerNorm(C) (eps 1e-5, biased variance): y = (x - mean)/sqrt(var +
// eps)*gamma + beta. Statistics are per token, so training and evaluation are the same and
// nothing runs between steps. Not here: the arithmetic (nn/device.h layernorm_forward/
// backward).
#include "layers.h"

// Costs, N = B*T rows of C, n = N*C: forward 7n FLOPs (mean 1, variance 3, normalise 2,
// affine 2, less the shared subtraction), bytes 4*(3n + 2N) (x read twice, y written, the
// statistics); backward 10n FLOPs, bytes 4*(5n + 2N) (x and dy read twice, dx read and
// written, the statistics; gamma and beta are negligible).
void dt_layernorm_setup(dt_layer *l) {
    double N = (double)l->B * l->h, n = N * l->w;
    l->fwd_flops = 7.0 * n;
    l->bwd_flops = 10.0 * n;
    l->fwd_bytes = 4.0 * (3.0 * n + 2.0 * N);
    l->bwd_bytes = 4.0 * (5.0 * n + 2.0 * N);
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
