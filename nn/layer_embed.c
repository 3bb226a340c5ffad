// layer_embed.c — GPT-2's input layer (Radford et al. 2019; llm.c encoder_forward): each
// token's embedding row plus its position's, x[b,t,:] = wte[tokens[b,t],:] + wpe[t,:]. The
// input is net->tokens (B,T) int32, not net->input. Not here: the arithmetic (nn/device.h
// embed_forward/backward), initialisation (nn/net.c: N(0, 0.02^2) as GPT-2).
#include "layers.h"

// Costs, n = B*T*C: forward n FLOPs (the add), bytes 4*(3n + B*T) (two rows read, one
// written, the tokens); backward 2n FLOPs, bytes 4*(5n + B*T) (dout read, two gradient rows
// read and written).
void dt_embed_setup(dt_layer *l) {
    double bt = (double)l->B * l->oh, n = bt * l->ow;
    l->fwd_flops = n;
    l->bwd_flops = 2.0 * n;
    l->fwd_bytes = 4.0 * (3.0 * n + bt);
    l->bwd_bytes = 4.0 * (5.0 * n + bt);
    l->aux_bytes = 0;
    l->workspace_floats = 0;
}

void dt_embed_forward(dt_layer *l, dt_net *net, int training) {
    (void)training;
    dt_device *d = net->dev;
    d->embed_forward(d, net->tokens, dt_net_p(net, l->w_off), dt_net_p(net, l->b_off), l->B,
                     l->oh, l->ow, l->out);
}

void dt_embed_backward(dt_layer *l, dt_net *net) {
    dt_device *d = net->dev;
    d->embed_backward(d, l->dout, net->tokens, l->B, l->oh, l->ow, dt_net_g(net, l->w_off),
                      dt_net_g(net, l->b_off));
}
