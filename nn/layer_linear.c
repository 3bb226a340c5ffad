// layer_linear.c — a fully connected layer as torch.nn.Linear: the (C,H,W) input of each
// image is flattened to IN = C*H*W features (torch.flatten(x, 1)), the weight is (OUT, IN)
// and y = x w^T + b. Not here: initialisation (nn/net.c), the gemm (nn/device.h).
#include "layers.h"

// Costs for the whole batch, 4 bytes per float:
//  forward  FLOPs 2*B*IN*OUT (gemm) + B*OUT (bias);
//           bytes 4*(x + w + y [gemm] + 2y [bias add]);
//  backward FLOPs 2 * 2*B*IN*OUT (dW and dX gemms) + B*OUT (dbias);
//           bytes 4*(y [dbias] + 2y [dy read twice] + x + 2w [dW: x read, dw read+written]
//                    + w + 2x [dX: w read, dx read+written]).
void dt_linear_setup(dt_layer *l) {
    double in = (double)dt_layer_in_size(l), B = l->B, out = l->oc;
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
    int in = (int)dt_layer_in_size(l);
    d->gemm(d, 0, 1, l->B, l->oc, in, 1.0f, dt_layer_src(net, l->in), in,
            net->params + l->w_off, in, 0.0f, l->out, l->oc);
    if (l->has_bias) d->bias_add(d, l->out, net->params + l->b_off, l->B, l->oc, 1);
}

// dy is (B,OUT); adds dw (OUT,IN) += dy^T x, dbias (OUT) += sum_b dy, dx (B,IN) += dy w;
// dx = dy w (beta 0) when this layer writes dx first (l->dsrc_set, nn/net_plan.c)
void dt_linear_backward(dt_layer *l, dt_net *net) {
    dt_device *d = net->dev;
    int in = (int)dt_layer_in_size(l);
    if (l->has_bias) d->bias_backward(d, l->dout, l->B, l->oc, 1, net->grads + l->b_off);
    d->gemm(d, 1, 0, l->oc, in, l->B, 1.0f, l->dout, l->oc, dt_layer_src(net, l->in), in,
            1.0f, net->grads + l->w_off, in);
    d->gemm(d, 0, 0, l->B, in, l->oc, 1.0f, l->dout, l->oc, net->params + l->w_off, in,
            l->dsrc_set & 1 ? 0.0f : 1.0f, dt_layer_dsrc(net, l->in), in);
}
