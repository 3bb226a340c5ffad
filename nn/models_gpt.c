// models_gpt.c — GPT-2-class decoders (Radford et al. 2019, "Language Models are
// Unsupervised Multitask Learners"; the layout of Karpathy's llm.c train_gpt2.py): token and
// position embeddings, L pre-norm blocks (x += attn(ln_1(x)); x += mlp(ln_2(x)) with a
// 4C GELU MLP), a final layer norm and an output head tied to the token embedding, trained
// with next-token cross-entropy. Parameter names are the PyTorch reference module's
// (transformer.wte.weight, transformer.h.0.attn.c_attn.weight, ...; torch.nn.Linear's
// (out, in) layout); the tied lm_head.weight is transformer.wte.weight and is not a tensor of
// its own. Shapes: GPT-2 small to XL (Radford et al. 2019, table 2) and the GPT-3 family
// (Brown et al. 2020, table 2.1; its banded sparse layers are modelled as dense).
// Not here: the layers (nn/net_seq.c and the layer_*.c files), model names and dispatch
// (nn/models.c).
#include <math.h>
#include <string.h>

#include "models.h"

// GPT-3 XL's table entry (24 heads of 128 for d_model 2048) is inconsistent; 16 heads of 128
// are used. GPT-3 13B's d_model is printed as 5140 there, which no 40 heads divide: 5120.
static const dt_gpt_shape SHAPES[] = {
    {"gpt2-tiny", 2, 64, 4, 64, 256},        {"gpt2", 12, 768, 12, 1024, 50257},
    {"gpt2-medium", 24, 1024, 16, 1024, 50257}, {"gpt2-large", 36, 1280, 20, 1024, 50257},
    {"gpt2-xl", 48, 1600, 25, 1024, 50257},  {"gpt3-small", 12, 768, 12, 2048, 50257},
    {"gpt3-medium", 24, 1024, 16, 2048, 50257}, {"gpt3-large", 24, 1536, 16, 2048, 50257},
    {"gpt3-xl", 24, 2048, 16, 2048, 50257},  {"gpt3-2.7b", 32, 2560, 32, 2048, 50257},
    {"gpt3-6.7b", 32, 4096, 32, 2048, 50257}, {"gpt3-13b", 40, 5120, 40, 2048, 50257},
    {"gpt3-175b", 96, 12288, 96, 2048, 50257},
};
#define N_SHAPES ((int)(sizeof SHAPES / sizeof SHAPES[0]))

const dt_gpt_shape *dt_gpt_find(const char *name) {
    for (int i = 0; name && i < N_SHAPES; i++)
        if (strcmp(SHAPES[i].name, name) == 0) return &SHAPES[i];
    return NULL;
}

dt_gpt_shape dt_gpt_shape_of(const dt_gpt_shape *s, const dt_model_config *cfg) {
    dt_gpt_shape r = *s;
    if (cfg->layers > 0) r.layers = cfg->layers;
    if (cfg->width > 0) r.width = cfg->width;
    if (cfg->heads > 0) r.heads = cfg->heads;
    return r;
}

double dt_gpt_param_count(const dt_gpt_shape *s, int vocab) {
    double C = s->width, L = s->layers;
    double V = vocab > 0 ? vocab : s->vocab;
    return V * C + (double)s->context * C + L * (12.0 * C * C + 13.0 * C) + 2.0 * C;
}

// With cfg->tp = t > 1, the layers of one rank of Megatron-LM's tensor parallelism (Shoeybi
// et al. 2019, §3): attention's c_attn and the MLP's c_fc split by columns (3C/t and 4C/t
// outputs, heads/t heads), their c_proj by rows (C/t inputs, C outputs: the partial sums the
// tensor-parallel group's allreduce adds), the embedding and the tied head over V/t of the
// vocabulary; layer norms and residuals whole, on every rank. cfg->blocks builds that many
// blocks (a pipeline stage's share, with the embedding and head kept: sim/dtsim_3d.c times
// one block as the difference of two such nets). cfg->ends leaves the embedding out (the
// stage then reads its first block's input, (1, T, C) per sample, from net->input) or the
// final norm and head (it ends with its last block's output), and cfg->block0 numbers the
// blocks from there: one stage of nn/train_pipe.c's pipeline. A head without the embedding
// holds its own copy of the tied weight, "lm_head.weight", marked tied (Megatron-LM keeps
// the word embedding on the last stage too: Narayanan et al. 2021, §4).
int dt_build_gpt(dt_net *net, const dt_model_config *cfg, const dt_gpt_shape *s) {
    int L = s->layers, C = s->width, t = cfg->tp > 1 ? cfg->tp : 1;
    int V = cfg->vocab > 0 ? cfg->vocab : s->vocab;
    int nb = cfg->blocks > 0 ? cfg->blocks : L;
    if (!cfg->tp_vocab_whole) V = (V + t - 1) / t;
    // llm.c train_gpt2.py _init_weights: N(0, 0.02^2), the residual projections scaled by
    // 1/sqrt(2L) (GPT-2 sec. 2.3); biases 0, layer norms 1 and 0
    float std = 0.02f, proj_std = 0.02f / sqrtf(2.0f * (float)L);
    int emb = -1;
    if (!(cfg->ends & DT_GPT_NO_EMBED))
        emb = dt_net_add_embed(net, "transformer", V, s->context, C, std);
    int x = emb;
    char n[64];
    for (int i = cfg->block0; i < cfg->block0 + nb && dt_build_status(net) == 0; i++) {
#define NAME(part) (snprintf(n, sizeof n, "transformer.h.%d.%s", i, part), n)
        int ln1 = dt_net_add_layernorm(net, NAME("ln_1"), x, 1e-5f);
        int qkv = dt_net_add_linear_tokens(net, NAME("attn.c_attn"), ln1, 3 * C / t, 1, std);
        int att = dt_net_add_attention(net, qkv, s->heads / t);
        int proj = dt_net_add_linear_tokens(net, NAME("attn.c_proj"), att, C, 1, proj_std);
        int x1 = dt_net_add_add(net, proj, x);
        int ln2 = dt_net_add_layernorm(net, NAME("ln_2"), x1, 1e-5f);
        int fc = dt_net_add_linear_tokens(net, NAME("mlp.c_fc"), ln2, 4 * C / t, 1, std);
        int g = dt_net_add_gelu(net, fc);
        int p2 = dt_net_add_linear_tokens(net, NAME("mlp.c_proj"), g, C, 1, proj_std);
        x = dt_net_add_add(net, p2, x1);
#undef NAME
    }
    if (cfg->ends & DT_GPT_NO_HEAD) return dt_build_status(net);
    int lnf = dt_net_add_layernorm(net, "transformer.ln_f", x, 1e-5f);
    if (emb >= 0) {
        dt_net_add_tied_head(net, "lm_head", lnf, emb);
    } else {
        int h = dt_net_add_linear_tokens(net, "lm_head", lnf, V, 0, std);
        if (h >= 0) net->layers[h]->tied = 1;
    }
    return dt_build_status(net);
}
