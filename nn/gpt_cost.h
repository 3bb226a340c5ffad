// gpt_cost.h — the FLOPs and memory traffic of the transformer primitives (nn/device.h,
// "transformer primitives"), counted once for both places that need them: the layers' own
// counts (nn/layer_attention.c, layer_layernorm.c, layer_embed.c, layer_simple.c's GELU:
// dt_net_step_flops, the planner, the cpu tests) and the model device's roofline
// (sim/device_model_gpt.c), which charges exactly these. Traffic is in elements read plus
// written (a layer multiplies by 4 bytes, the model device by its activation size); vectors of
// C elements (gamma, beta) are left out (C << n).
// Not here: the arithmetic (nn/device_cpu_gpt.c), the gemms of the linears (2MNK, device.h).
#ifndef DT_GPT_COST_H
#define DT_GPT_COST_H

typedef struct {
    double fwd_flops, bwd_flops;  // FLOPs of forward and of backward
    double fwd_elems, bwd_elems;  // elements moved (read + written)
    // attention only: of the FLOPs above, the products q.k and att.v (forward) and their four
    // gradients (backward), which a GPU runs as batched gemms on its tensor cores
    double fwd_gemm_flops, bwd_gemm_flops;
} dt_seq_cost;

// Causal multi-head self-attention over the computed triangle, P = T(T+1)/2 query-key pairs
// per head, B*H heads of C/H channels: forward 2*hs FLOPs per pair for q.k and 2*hs for
// att.v = 4*B*C*P, plus 5 per pair for the scaled softmax; backward twice the products
// (8*B*C*P: datt, dv, dq, dk) plus 5 per pair for the softmax's gradient. Per token and layer
// about 2*C*(T+1) forward: Kaplan et al. 2020's 2*n_ctx*d_attn (docs/formulas.md,
// "Transformer FLOPs"). Traffic, n = B*T*C, att = B*H*T*T: forward reads qkv (3n), writes att
// and y (n); backward reads qkv, att, dy and reads and writes dqkv (6n).
static inline dt_seq_cost dt_attention_cost(double B, double T, double C, double H) {
    double P = T * (T + 1.0) / 2.0, n = B * T * C, att = B * H * T * T;
    dt_seq_cost c;
    c.fwd_gemm_flops = 4.0 * B * C * P;
    c.bwd_gemm_flops = 8.0 * B * C * P;
    c.fwd_flops = c.fwd_gemm_flops + 5.0 * B * H * P;
    c.bwd_flops = c.bwd_gemm_flops + 5.0 * B * H * P;
    c.fwd_elems = 3.0 * n + att + n;
    c.bwd_elems = 3.0 * n + att + n + 2.0 * 3.0 * n;
    return c;
}

// Layer norm, N rows of C, n = N*C: forward 7n FLOPs (mean 1, variance 3, normalise 2,
// affine 2, less the shared subtraction), traffic 3n + 2N (x read twice, y written, the
// statistics); backward 10n FLOPs, 5n + 2N (x and dy read twice, dx read and written).
static inline dt_seq_cost dt_layernorm_cost(double N, double C) {
    double n = N * C;
    dt_seq_cost c = {7.0 * n, 10.0 * n, 3.0 * n + 2.0 * N, 5.0 * n + 2.0 * N, 0.0, 0.0};
    return c;
}

// Token + position embedding, BT tokens of C: forward n = BT*C FLOPs (the add), traffic
// 3n + BT (two rows read, one written, the tokens); backward 2n FLOPs, 5n + BT (dout read, two
// gradient rows read and written).
static inline dt_seq_cost dt_embed_cost(double BT, double C) {
    double n = BT * C;
    dt_seq_cost c = {n, 2.0 * n, 3.0 * n + BT, 5.0 * n + BT, 0.0, 0.0};
    return c;
}

// GELU (tanh form, nn/kernels.h dt_gelu), n elements: forward 8n FLOPs (the cubic, the tanh
// counted once, the products), traffic 2n; backward 14n FLOPs, 4n (x and dy read, dx read and
// written).
static inline dt_seq_cost dt_gelu_cost(double n) {
    dt_seq_cost c = {8.0 * n, 14.0 * n, 2.0 * n, 4.0 * n, 0.0, 0.0};
    return c;
}

#endif
