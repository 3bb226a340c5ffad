// layer_bn.c — batchnorm2d (Ioffe & Szegedy 2015) as torch.nn.BatchNorm2d: training uses
// the batch statistics (biased variance to normalise) and updates the running statistics
// with momentum 0.1 (unbiased variance), evaluation uses the running statistics; eps 1e-5.
// The per-channel mean and 1/sqrt(var+eps) of the last training forward are kept in l->aux
// for backward. Not here: the per-element math (nn/kernels.h, the devices).
#include "layers.h"

// Costs for the whole batch, n = B*C*H*W elements, 4 bytes each:
//  forward  FLOPs 7n (statistics: sum and sum of squares, 3n; normalise and scale: 4n);
//           bytes 4*3n (x read for the statistics and again to normalise, y written);
//  backward FLOPs 11n (sums of dy and dy*xhat with xhat recomputed: 5n; dx: 6n);
//           bytes 4*6n (dy and x read for the sums; dy and x read, dx read and written).
void dt_bn_setup(dt_layer *l) {
    double n = (double)l->B * l->c * l->h * l->w;
    l->fwd_flops = 7.0 * n;
    l->bwd_flops = 11.0 * n;
    l->fwd_bytes = 4.0 * 3.0 * n;
    l->bwd_bytes = 4.0 * 6.0 * n;
    l->aux_bytes = 2 * (size_t)l->c * sizeof(float);  // save_mean, save_invstd
    l->workspace_floats = 0;
}

// layer k is a `type` reading only `in` (first input), in place
static int inplace_on(const dt_net *net, int k, dt_layer_type type, int in) {
    if (k >= net->n_layers) return 0;
    const dt_layer *l = net->layers[k];
    return l->type == type && l->in == in && l->inplace;
}

int dt_bn_fused(const dt_net *net, const dt_layer *l, int *res_in) {
    const dt_device *d = net->dev;
    int k = l->index, half = net->amp != DT_AMP_FP32, n = 0;
    if (l->type != DT_LAYER_BN || !d->bn_fused_forward_train || !d->bn_fused_backward) return 0;
    if (half && (!l->out_h || l->in < 0 || !net->layers[l->in]->out_h ||
                 !d->bn_forward_train_h || !d->bn_forward_eval_h || !d->bn_backward_h))
        return 0;  // half: only where l runs in place on half storage
    if (inplace_on(net, k + 1, DT_LAYER_RELU, k)) n = 1;
    if (inplace_on(net, k + 1, DT_LAYER_ADD, k) && inplace_on(net, k + 2, DT_LAYER_RELU, k + 1)) {
        int r = net->layers[k + 1]->in2;
        if (r >= 0 && r != k && (!half || (net->layers[r]->out_h && net->layers[r]->dout_h))) {
            if (res_in) *res_in = r;
            n = 2;
        }
    }
    return n;
}

// Fused with the residual add: whether the residual's gradient is written (=) rather than
// added to, as the add's backward would (its l->dsrc_set bit 2, nn/net_plan.c)
static int res_set(const dt_net *net, const dt_layer *l, int fused) {
    return fused == 2 ? (net->layers[l->index + 1]->dsrc_set >> 1) & 1 : 0;
}

// x, y are (B,C,H,W); gamma, beta, running_mean, running_var are (C)
void dt_bn_forward(dt_layer *l, dt_net *net, int training) {
    dt_device *d = net->dev;
    const float *x = dt_layer_src(net, l->in);
    float *p = dt_net_p(net, l->w_off), *q = dt_net_p(net, l->b_off);  // gamma, beta
    float *rm = dt_net_p(net, l->rm_off), *rv = dt_net_p(net, l->rv_off);
    int hw = l->h * l->w;
    if (training) {
        float *save_mean = (float *)l->aux, *save_invstd = save_mean + l->c;
        int r = -1, fused = dt_bn_fused(net, l, &r);
        if (fused)
            d->bn_fused_forward_train(d, 0, x, fused == 2 ? dt_layer_src(net, r) : NULL, l->B,
                                      l->c, hw, p, q, l->eps, l->momentum, rm, rv, save_mean,
                                      save_invstd, l->out, 1);
        else
            d->bn_forward_train(d, x, l->B, l->c, hw, p, q, l->eps, l->momentum, rm, rv,
                                save_mean, save_invstd, l->out);
    } else {
        d->bn_forward_eval(d, x, l->B, l->c, hw, p, q, l->eps,
                           rm, rv, l->out);
    }
}

// dy is (B,C,H,W); adds into dx (B,C,H,W), dgamma and dbeta (C); writes dx instead when
// this layer writes it first (l->dsrc_set, nn/net_plan.c: the network did not zero it).
// Uses the batch statistics of the last training forward (backward after an eval forward
// is not meaningful).
void dt_bn_backward(dt_layer *l, dt_net *net) {
    dt_device *d = net->dev;
    const float *x = dt_layer_src(net, l->in);
    const float *save_mean = (const float *)l->aux, *save_invstd = save_mean + l->c;
    int r = -1, fused = dt_bn_fused(net, l, &r);
    if (fused) {  // l->out holds relu's output, l->dout its gradient (in place)
        d->bn_fused_backward(d, 0, l->out, l->dout, x, l->B, l->c, l->h * l->w,
                             dt_net_p(net, l->w_off), save_mean, save_invstd,
                             dt_layer_dsrc(net, l->in), l->dsrc_set & 1,
                             fused == 2 ? dt_layer_dsrc(net, r) : NULL, res_set(net, l, fused),
                             dt_net_g(net, l->w_off), dt_net_g(net, l->b_off), 1);
        return;
    }
    (l->dsrc_set & 1 ? d->bn_backward_set : d->bn_backward)(
        d, l->dout, x, l->B, l->c, l->h * l->w, dt_net_p(net, l->w_off), save_mean, save_invstd,
        dt_layer_dsrc(net, l->in), dt_net_g(net, l->w_off), dt_net_g(net, l->b_off));
}

// Under --precision fp16|bf16 on a device with half batch norm (nn/device.h bn_*_h): the
// same calls with x, y, dy and dx in half storage; gamma, beta and the statistics fp32.
void dt_bn_forward_h(dt_layer *l, dt_net *net, int training, const uint16_t *x) {
    dt_device *d = net->dev;
    float *p = dt_net_p(net, l->w_off), *q = dt_net_p(net, l->b_off);  // gamma, beta
    float *rm = dt_net_p(net, l->rm_off), *rv = dt_net_p(net, l->rv_off);
    int hw = l->h * l->w, fmt = (int)net->amp;
    if (training) {
        float *save_mean = (float *)l->aux, *save_invstd = save_mean + l->c;
        int r = -1, fused = dt_bn_fused(net, l, &r);
        if (fused)
            d->bn_fused_forward_train(d, fmt, x, fused == 2 ? net->layers[r]->out_h : NULL,
                                      l->B, l->c, hw, p, q, l->eps, l->momentum, rm, rv,
                                      save_mean, save_invstd, l->out_h, 1);
        else
            d->bn_forward_train_h(d, fmt, x, l->B, l->c, hw, p, q, l->eps, l->momentum, rm, rv,
                                  save_mean, save_invstd, l->out_h);
    } else {
        d->bn_forward_eval_h(d, fmt, x, l->B, l->c, hw, p, q, l->eps,
                             rm, rv, l->out_h);
    }
}

void dt_bn_backward_h(dt_layer *l, dt_net *net, const uint16_t *x, uint16_t *dx) {
    dt_device *d = net->dev;
    const float *save_mean = (const float *)l->aux, *save_invstd = save_mean + l->c;
    int r = -1, fused = dt_bn_fused(net, l, &r);
    if (fused) {
        d->bn_fused_backward(d, (int)net->amp, l->out_h, l->dout_h, x, l->B, l->c,
                             l->h * l->w, dt_net_p(net, l->w_off), save_mean, save_invstd, dx,
                             l->dsrc_set & 1, fused == 2 ? net->layers[r]->dout_h : NULL,
                             res_set(net, l, fused), dt_net_g(net, l->w_off),
                             dt_net_g(net, l->b_off), 1);
        return;
    }
    d->bn_backward_h(d, (int)net->amp, l->dout_h, x, l->B, l->c, l->h * l->w,
                     dt_net_p(net, l->w_off), save_mean, save_invstd, dx,
                     dt_net_g(net, l->w_off), dt_net_g(net, l->b_off), l->dsrc_set & 1);
}
