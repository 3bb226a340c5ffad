// layer_attention.c — causal multi-head self-attention (Vaswani et al. 2017 sec. 3.2.2;
// GPT-2's masked attention): the input is the (T, 3C) output of the c_attn projection,
// [q | k | v] per token, split into `heads` heads of hs = C/heads; each head's query at t
// attends to keys t2 <= t with softmax(q.k/sqrt(hs)), and the heads' outputs sit side by
// side in (T, C), which the c_proj linear then mixes. Not here: the projections (per-token
// linears), the arithmetic (nn/device.h attention_forward/backward).
#include "gpt_cost.h"
#include "layers.h"

// Costs: nn/gpt_cost.h dt_attention_cost (shared with the model device's roofline).
void dt_attention_setup(dt_layer *l) {
    dt_seq_cost c = dt_attention_cost(l->B, l->h, l->ow, l->heads);
    l->fwd_flops = c.fwd_flops;
    l->bwd_flops = c.bwd_flops;
    l->fwd_bytes = 4.0 * c.fwd_elems;
    l->bwd_bytes = 4.0 * c.bwd_elems;
    l->aux_bytes = (size_t)l->B * l->heads * l->h * l->h * sizeof(float);
    l->workspace_floats = 0;
}

void dt_attention_forward(dt_layer *l, dt_net *net, int training) {
    (void)training;
    dt_device *d = net->dev;
    d->attention_forward(d, dt_layer_src(net, l->in), l->B, l->h, l->ow, l->heads,
                         (float *)l->aux, l->out);
}

void dt_attention_backward(dt_layer *l, dt_net *net) {
    dt_device *d = net->dev;
    d->attention_backward(d, l->dout, dt_layer_src(net, l->in), (const float *)l->aux, l->B,
                          l->h, l->ow, l->heads, dt_layer_dsrc(net, l->in));
}
