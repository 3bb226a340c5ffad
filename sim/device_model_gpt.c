// device_model_gpt.c — the model device's transformer primitives (nn/device.h, "transformer
// primitives"; GPT-2 as llm.c lays it out): embedding, layer norm, causal attention, GELU and
// the Adam-family updates, each charged on the roofline (sim/device_model.h) with the FLOPs
// and traffic of nn/gpt_cost.h, the counts the layers report (dt_net_step_flops), so the
// cpu-side tests of those counts check what the simulator charges. Traffic is in elements
// times the activation size (2 bytes under fp16, else 4); tokens are int32, optimizer state
// fp32 (mixed precision keeps fp32 master weights and moments, Micikevicius et al. 2018).
// The products of attention (q.k, att.v and their gradients) run as batched gemms (tensor
// cores: dt_model_charge_gemm), its softmax as a CUDA-core kernel; the att matrix (B,H,T,T) is
// written and read as the layer keeps it; or, with dt_modeldev_config.flash, fused
// (FlashAttention, Dao et al. 2022: tiles of the scores stay on chip, so the att traffic is
// gone, and backward recomputes q.k and the softmax: 2 of the forward's 4 BCP FLOPs more).
// Not here: any data.
#include "device_model_internal.h"
#include "gpt_cost.h"

static double e_of(dt_device *d) { return dt_model_act_bytes(d); }

// activations at e bytes, the tokens (BT int32) at 4: e*(elems - BT) + 4*BT
static double tok_bytes(dt_device *d, double elems, double bt) {
    return e_of(d) * (elems - bt) + 4.0 * bt;
}

static void model_embed_forward(dt_device *d, const int32_t *tokens, const float *wte,
                                const float *wpe, int B, int T, int C, float *out) {
    (void)tokens, (void)wte, (void)wpe, (void)out;
    double bt = (double)B * T;
    dt_seq_cost c = dt_embed_cost(bt, C);
    if (bt > 0) dt_model_charge(d, c.fwd_flops, tok_bytes(d, c.fwd_elems, bt));
}

static void model_embed_backward(dt_device *d, const float *dout, const int32_t *tokens, int B,
                                 int T, int C, float *dwte, float *dwpe) {
    (void)dout, (void)tokens, (void)dwte, (void)dwpe;
    double bt = (double)B * T;
    dt_seq_cost c = dt_embed_cost(bt, C);
    if (bt > 0) dt_model_charge(d, c.bwd_flops, tok_bytes(d, c.bwd_elems, bt));
}

static void model_layernorm_forward(dt_device *d, const float *x, const float *gamma,
                                    const float *beta, int N, int C, float eps, float *mean,
                                    float *rstd, float *y) {
    (void)x, (void)gamma, (void)beta, (void)eps, (void)mean, (void)rstd, (void)y;
    dt_seq_cost c = dt_layernorm_cost(N, C);
    if (N > 0) dt_model_charge(d, c.fwd_flops, e_of(d) * c.fwd_elems);
}

static void model_layernorm_backward(dt_device *d, const float *dy, const float *x,
                                     const float *gamma, const float *mean, const float *rstd,
                                     int N, int C, float *dx, float *dgamma, float *dbeta) {
    (void)dy, (void)x, (void)gamma, (void)mean, (void)rstd, (void)dx, (void)dgamma, (void)dbeta;
    dt_seq_cost c = dt_layernorm_cost(N, C);
    if (N > 0) dt_model_charge(d, c.bwd_flops, e_of(d) * c.bwd_elems);
}

// two kernels each way: the products (gemm class, with the traffic) and the softmax (CUDA
// cores, its FLOPs; its att traffic is in the products' count)
static void model_attention_forward(dt_device *d, const float *qkv, int B, int T, int C, int NH,
                                    float *att, float *y) {
    (void)qkv, (void)att, (void)y;
    if (B <= 0 || T <= 0) return;
    dt_seq_cost c = dt_attention_cost(B, T, C, NH);
    double scores = dt_model_flash(d) ? (double)B * NH * T * T : 0;
    dt_model_charge_gemm(d, c.fwd_gemm_flops, e_of(d) * (c.fwd_elems - scores));
    dt_model_charge(d, c.fwd_flops - c.fwd_gemm_flops, 0.0);
}

static void model_attention_backward(dt_device *d, const float *dy, const float *qkv,
                                     const float *att, int B, int T, int C, int NH,
                                     float *dqkv) {
    (void)dy, (void)qkv, (void)att, (void)dqkv;
    if (B <= 0 || T <= 0) return;
    dt_seq_cost c = dt_attention_cost(B, T, C, NH);
    int flash = dt_model_flash(d);
    double scores = flash ? (double)B * NH * T * T : 0;
    double again = flash ? c.fwd_gemm_flops / 2 : 0;  // q.k recomputed
    double soft = c.bwd_flops - c.bwd_gemm_flops + (flash ? c.fwd_flops - c.fwd_gemm_flops : 0);
    dt_model_charge_gemm(d, c.bwd_gemm_flops + again, e_of(d) * (c.bwd_elems - scores));
    dt_model_charge(d, soft, 0.0);
}

static void model_gelu_forward(dt_device *d, const float *x, float *y, size_t n) {
    (void)x, (void)y;
    dt_seq_cost c = dt_gelu_cost((double)n);
    if (n) dt_model_charge(d, c.fwd_flops, e_of(d) * c.fwd_elems);
}

static void model_gelu_backward(dt_device *d, const float *x, const float *dy, float *dx,
                                size_t n) {
    (void)x, (void)dy, (void)dx;
    dt_seq_cost c = dt_gelu_cost((double)n);
    if (n) dt_model_charge(d, c.bwd_flops, e_of(d) * c.bwd_elems);
}

// AdamW (nn/kernels.h dt_adamw_elem): w, m, v read and written, g read: 7 x 4 bytes; 12
// FLOPs (decay 2, two moments 3 + 4, the step 3 with the square root counted once)
static void model_adamw_update(dt_device *d, float *w, const float *g, float *m, float *v,
                               size_t n, float lr, float b1, float b2, float eps, float wd,
                               float step, float bc2_sqrt) {
    (void)w, (void)g, (void)m, (void)v, (void)lr, (void)b1, (void)b2, (void)eps, (void)wd;
    (void)step, (void)bc2_sqrt;
    if (n) dt_model_charge(d, 12.0 * (double)n, 28.0 * (double)n);
}

// LAMB's direction (dt_lamb_dir_elem): w, g read, m, v read and written, r written: 7 x 4
// bytes; 12 FLOPs
static void model_lamb_direction(dt_device *d, const float *w, const float *g, float *m,
                                 float *v, float *r, size_t n, float b1, float b2, float eps,
                                 float wd, float bc1, float bc2) {
    (void)w, (void)g, (void)m, (void)v, (void)r, (void)b1, (void)b2, (void)eps, (void)wd;
    (void)bc1, (void)bc2;
    if (n) dt_model_charge(d, 12.0 * (double)n, 28.0 * (double)n);
}

// A slice of the vocabulary (nn/device.h, "the vocabulary split"): the embedding of its rows
// reads what the whole one reads (a row or a zero per token, the positions where wpe is
// given); the loss in three passes: the row maxima (logits read, 1 FLOP each), exp and sum
// (logits read, probabilities written, 3 FLOPs: subtract, exp, add), the scaling (the
// probabilities read and written, 1 FLOP); the host waits after the first two, whose B
// numbers it reads (8 bytes each in double), those of uniform probabilities.
static void model_embed_part_forward(dt_device *d, const int32_t *tokens, const float *wte,
                                     const float *wpe, int lo, int n, int B, int T, int C,
                                     float *out) {
    (void)lo, (void)n;
    model_embed_forward(d, tokens, wte, wpe, B, T, C, out);
}

static void model_embed_part_backward(dt_device *d, const float *dout, const int32_t *tokens,
                                      int lo, int n, int B, int T, int C, float *dwte,
                                      float *dwpe) {
    (void)lo, (void)n;
    model_embed_backward(d, dout, tokens, B, T, C, dwte, dwpe);
}

static void model_xent_part_max(dt_device *d, const float *z, int B, int K, float *row_max) {
    (void)z;
    double bk = (double)B * K;
    if (B > 0 && K > 0) dt_model_charge(d, bk, e_of(d) * bk + 4.0 * B);
    dt_model_flush(d);
    for (int b = 0; b < B; b++) row_max[b] = 0.0f;  // (uniform: the loss is ln V, finite)
}

static void model_xent_part_exp(dt_device *d, const float *z, const int32_t *labels, int lo,
                                int B, int K, const float *row_max, float *p, double *row_sum,
                                double *row_tgt) {
    (void)z, (void)labels, (void)lo, (void)row_max, (void)p;
    double bk = (double)B * K;
    if (B > 0 && K > 0) dt_model_charge(d, 3.0 * bk, e_of(d) * 2.0 * bk + 8.0 * 2 * B);
    dt_model_flush(d);
    for (int b = 0; b < B; b++) row_sum[b] = (double)K, row_tgt[b] = 0.0;  // (uniform)
}

static void model_xent_part_scale(dt_device *d, float *p, const double *row_sum, int B, int K) {
    (void)p, (void)row_sum;
    double bk = (double)B * K;
    if (B > 0 && K > 0) dt_model_charge(d, bk, e_of(d) * 2.0 * bk + 8.0 * B);
}

void dt_model_install_gpt(dt_device *d) {
    d->embed_forward = model_embed_forward;
    d->embed_backward = model_embed_backward;
    d->layernorm_forward = model_layernorm_forward;
    d->layernorm_backward = model_layernorm_backward;
    d->attention_forward = model_attention_forward;
    d->attention_backward = model_attention_backward;
    d->gelu_forward = model_gelu_forward;
    d->gelu_backward = model_gelu_backward;
    d->adamw_update = model_adamw_update;
    d->lamb_direction = model_lamb_direction;
    d->embed_part_forward = model_embed_part_forward;
    d->embed_part_backward = model_embed_part_backward;
    d->xent_part_max = model_xent_part_max;
    d->xent_part_exp = model_xent_part_exp;
    d->xent_part_scale = model_xent_part_scale;
}
