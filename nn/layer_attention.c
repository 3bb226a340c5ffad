// layer_attention.c — causal multi-head self-attention (Vaswani et al. 2017 sec. 3.2.2;
// GPT-2's masked attention): the input is the (T, 3C) output of the c_attn projection,
// [q | k | v] per token, split into `heads` heads of hs = C/heads; each head's query at t
// attends to keys t2 <= t with softmax(q.k/sqrt(hs)), and the heads' outputs sit side by
// side in (T, C), which the c_proj linear then mixes. Not here: the projections (per-token
// linears), the arithmetic (nn/device.h attention_forward/backward).
#include "layers.h"

// Costs for the causal triangle that is computed, P = T(T+1)/2 query-key pairs per head,
// B*heads heads: forward 2*hs FLOPs per pair for q.k and 2*hs for att*v = 4*B*C*P, plus 5
// per pair for the scaled softmax; backward twice the products (8*B*C*P: datt, dv, dq, dk)
// plus 5 per pair for the softmax's gradient. Per token and layer that is about 2*C*(T+1)
// forward, Kaplan et al. 2020's 2*n_ctx*d_attn (docs/formulas.md, "Transformer FLOPs").
// Bytes: forward reads qkv (3n, n = B*T*C) once per head sweep and k, v once per pair row,
// written att (B*heads*T*T) and y (n); backward reads qkv, att, dy and reads and writes dqkv.
void dt_attention_setup(dt_layer *l) {
    double B = l->B, T = l->h, C = l->ow, H = l->heads;
    double P = T * (T + 1.0) / 2.0, n = B * T * C, att = B * H * T * T;
    l->fwd_flops = 4.0 * B * C * P + 5.0 * B * H * P;
    l->bwd_flops = 8.0 * B * C * P + 5.0 * B * H * P;
    l->fwd_bytes = 4.0 * (3.0 * n + att + n);
    l->bwd_bytes = 4.0 * (3.0 * n + att + n + 2.0 * 3.0 * n);
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
