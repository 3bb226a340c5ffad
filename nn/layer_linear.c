// layer_linear.c — a fully connected layer as torch.nn.Linear: the (C,H,W) input of each
// image is flattened to IN = C*H*W features (torch.flatten(x, 1)), the weight is (OUT, IN)
// and y = x w^T + b. A per-token linear (l->per_token, transformers) applies the same to
// each of the H rows of W features, as torch.nn.Linear on a (B,T,C) tensor: B*H rows of
// IN = W. Not here: initialisation (nn/net.c), the gemm (nn/device.h).
#include "layers.h"

// Rows of the gemm and features per row.
static int lin_rows(const dt_layer *l) { return l->per_token ? l->B * l->h : l->B; }
static int lin_in(const dt_layer *l) {
    return l->per_token ? l->w : (int)dt_layer_in_size(l);
}

// Costs for the whole batch, 4 bytes per float:
//  forward  FLOPs 2*B*IN*OUT (gemm) + B*OUT (bias);
//           bytes 4*(x + w + y [gemm] + 2y [bias add]);
//  backward FLOPs 2 * 2*B*IN*OUT (dW and dX gemms) + B*OUT (dbias);
//           bytes 4*(y [dbias] + 2y [dy read twice] + x + 2w [dW: x read, dw read+written]
//                    + w + 2x [dX: w read, dx read+written]).
void dt_linear_setup(dt_layer *l) {
    double in = lin_in(l), B = lin_rows(l), out = l->per_token ? l->ow : l->oc;
    double x = B * in, y = B * out, w = out * in;
    double bias = l->has_bias ? y : 0.0;
    l->fwd_flops = 2.0 * B * in * out + bias;
    l->bwd_flops = 4.0 * B * in * out + bias;
    l->fwd_bytes = 4.0 * (x + w + y + 2.0 * bias);
    l->bwd_bytes = 4.0 * (bias + 2.0 * y + 3.0 * x + 3.0 * w);
    l->aux_bytes = 0;
    l->workspace_floats = 0;
}

// x is (B,IN), w is (OUT,IN), bias is (OUT), y is (B,OUT)
void dt_linear_forward(dt_layer *l, dt_net *net, int training) {
    (void)training;
    dt_device *d = net->dev;
    int in = lin_in(l), rows = lin_rows(l), out = l->per_token ? l->ow : l->oc;
    d->gemm(d, 0, 1, rows, out, in, 1.0f, dt_layer_src(net, l->in), in,
            dt_net_p(net, l->w_off), in, 0.0f, l->out, out);
    if (l->has_bias && !l->bias_elsewhere)
        d->bias_add(d, l->out, dt_net_p(net, l->b_off), rows, out, 1);
}

// dy is (B,OUT); adds dw (OUT,IN) += dy^T x, dbias (OUT) += sum_b dy, dx (B,IN) += dy w;
// dx = dy w (beta 0) when this layer writes dx first (l->dsrc_set, nn/net_plan.c)
void dt_linear_backward(dt_layer *l, dt_net *net) {
    dt_device *d = net->dev;
    int in = lin_in(l), rows = lin_rows(l), out = l->per_token ? l->ow : l->oc;
    if (l->has_bias) d->bias_backward(d, l->dout, rows, out, 1, dt_net_g(net, l->b_off));
    // a tied head's weight gradient: apart while the net keeps it so (net.h tied_grad)
    float *dw = l->tied && net->tied_grad ? net->tied_grad : dt_net_g(net, l->w_off);
    d->gemm(d, 1, 0, out, in, rows, 1.0f, l->dout, out, dt_layer_src(net, l->in), in,
            1.0f, dw, in);
    d->gemm(d, 0, 0, rows, in, out, 1.0f, l->dout, out, dt_net_p(net, l->w_off), in,
            l->dsrc_set & 1 ? 0.0f : 1.0f, dt_layer_dsrc(net, l->in), in);
}
