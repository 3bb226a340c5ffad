// layer_embed.c — GPT-2's input layer (Radford et al. 2019; llm.c encoder_forward): each
// token's embedding row plus its position's, x[b,t,:] = wte[tokens[b,t],:] + wpe[t,:]. The
// input is net->tokens (B,T) int32, not net->input. Not here: the arithmetic (nn/device.h
// embed_forward/backward), initialisation (nn/net.c: N(0, 0.02^2) as GPT-2).
#include "gpt_cost.h"
#include "layers.h"

// Costs: nn/gpt_cost.h dt_embed_cost (shared with the model device's roofline).
void dt_embed_setup(dt_layer *l) {
    dt_seq_cost c = dt_embed_cost((double)l->B * l->oh, l->ow);
    l->fwd_flops = c.fwd_flops;
    l->bwd_flops = c.bwd_flops;
    l->fwd_bytes = 4.0 * c.fwd_elems;
    l->bwd_bytes = 4.0 * c.bwd_elems;
    l->aux_bytes = 0;
    l->workspace_floats = 0;
}

// A tensor-parallel rank's slice of the vocabulary (l->vocab_n > 0): a token outside rows
// [vocab_lo, vocab_lo + vocab_n) embeds to 0 here, the positions are added by the group's
// rank 0 (bias_elsewhere elsewhere), and the group sums the outputs (Megatron-LM's
// VocabParallelEmbedding; Shoeybi et al. 2019 §3). Backward: the gradient of the sum is
// every rank's (the same), so each adds it to its rows, and to the positions (whole on every
// rank, the same gradient everywhere). The device's embed_part_* (nn/device.h).
void dt_embed_forward(dt_layer *l, dt_net *net, int training) {
    (void)training;
    dt_device *d = net->dev;
    if (l->vocab_n) {
        d->embed_part_forward(d, net->tokens, dt_net_p(net, l->w_off),
                              l->bias_elsewhere ? NULL : dt_net_p(net, l->b_off), l->vocab_lo,
                              l->vocab_n, l->B, l->oh, l->ow, l->out);
        return;
    }
    d->embed_forward(d, net->tokens, dt_net_p(net, l->w_off), dt_net_p(net, l->b_off), l->B,
                     l->oh, l->ow, l->out);
}

void dt_embed_backward(dt_layer *l, dt_net *net) {
    dt_device *d = net->dev;
    float *wte = dt_net_g(net, l->w_off);
    if (l->vocab_n) d->embed_part_backward(d, l->dout, net->tokens, l->vocab_lo, l->vocab_n,
                                           l->B, l->oh, l->ow, wte, dt_net_g(net, l->b_off));
    else d->embed_backward(d, l->dout, net->tokens, l->B, l->oh, l->ow, wte,
                           dt_net_g(net, l->b_off));
    if (net->tied_grad && !net->tied_defer) {  // the tied head's half, once per step
        d->add(d, wte, net->tied_grad, net->tied_n);
        d->fill(d, net->tied_grad, 0.0f, net->tied_n);
    }
}
