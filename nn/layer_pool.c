// layer_pool.c — max pooling (k, stride, pad as torch.nn.MaxPool2d; the winner's index is
// kept in l->aux for backward) and adaptive average pooling to (OH, OW) as
// torch.nn.AdaptiveAvgPool2d ((1,1) is global average pooling). Not here: the window loops
// (nn/device.h maxpool_*/avgpool_*).
#include <stdint.h>

#include "layers.h"

// Costs for the whole batch, 4 bytes per float or int32:
//  forward  FLOPs B*C*OH*OW*K*K (one comparison per window element);
//           bytes 4*(x + 2y) (x read, y and argmax written);
//  backward FLOPs B*C*OH*OW (one add per output); bytes 4*(2y + 2x) (dy and argmax read,
//           dx read and written).
void dt_maxpool_setup(dt_layer *l) {
    double x = (double)l->B * l->c * l->h * l->w, y = (double)l->B * l->oc * l->oh * l->ow;
    l->fwd_flops = y * l->kh * l->kw;
    l->bwd_flops = y;
    l->fwd_bytes = 4.0 * (x + 2.0 * y);
    l->bwd_bytes = 4.0 * (2.0 * y + 2.0 * x);
    l->aux_bytes = (size_t)l->B * dt_layer_out_size(l) * sizeof(int32_t);
    l->workspace_floats = 0;
}

// x is (B,C,H,W), y and argmax are (B,C,OH,OW)
void dt_maxpool_forward(dt_layer *l, dt_net *net, int training) {
    (void)training;
    dt_device *d = net->dev;
    d->maxpool_forward(d, dt_layer_src(net, l->in), l->B, l->c, l->h, l->w, l->kh, l->stride,
                       l->pad, l->out, (int32_t *)l->aux);
}

// dy is (B,C,OH,OW); adds dy into dx (B,C,H,W) at the argmax of each window
void dt_maxpool_backward(dt_layer *l, dt_net *net) {
    dt_device *d = net->dev;
    d->maxpool_backward(d, l->dout, (const int32_t *)l->aux, l->B, l->c, l->h, l->w, l->oh,
                        l->ow, dt_layer_dsrc(net, l->in));
}

// Window of adaptive pooling cell i along an axis of `size` cells pooled to `out`:
// rows floor(i*size/out) .. ceil((i+1)*size/out)-1 (torch's adaptive pooling).
static int window_len(int i, int size, int out) {
    int lo = (int)(((long)i * size) / out);
    int hi = (int)(((long)(i + 1) * size + out - 1) / out);
    return hi - lo;
}

// Costs: every output cell averages its window. With S the summed window areas over one
// (OH,OW) plane (= H*W when the windows tile the input without overlap):
//  forward  FLOPs B*C*(S + OH*OW) (adds, then one scale per cell); bytes 4*(B*C*S + y);
//  backward FLOPs B*C*2S (scale, add per element); bytes 4*(y + 2*B*C*S).
void dt_avgpool_setup(dt_layer *l) {
    double rows = 0.0, cols = 0.0;
    for (int i = 0; i < l->oh; i++) rows += window_len(i, l->h, l->oh);
    for (int j = 0; j < l->ow; j++) cols += window_len(j, l->w, l->ow);
    double bc = (double)l->B * l->c, area = rows * cols, y = bc * l->oh * l->ow;
    l->fwd_flops = bc * area + y;
    l->bwd_flops = 2.0 * bc * area;
    l->fwd_bytes = 4.0 * (bc * area + y);
    l->bwd_bytes = 4.0 * (y + 2.0 * bc * area);
    l->aux_bytes = 0;
    l->workspace_floats = 0;
}

// x is (B,C,H,W), y is (B,C,OH,OW)
void dt_avgpool_forward(dt_layer *l, dt_net *net, int training) {
    (void)training;
    dt_device *d = net->dev;
    d->avgpool_forward(d, dt_layer_src(net, l->in), l->B, l->c, l->h, l->w, l->oh, l->ow,
                       l->out);
}

// dy is (B,C,OH,OW); adds into dx (B,C,H,W) dy/area over each cell's window
void dt_avgpool_backward(dt_layer *l, dt_net *net) {
    dt_device *d = net->dev;
    d->avgpool_backward(d, l->dout, l->B, l->c, l->h, l->w, l->oh, l->ow,
                        dt_layer_dsrc(net, l->in));
}
