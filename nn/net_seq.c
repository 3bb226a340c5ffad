// net_seq.c — constructors of the sequence layers a GPT-2 decoder is built from (nn/net.h
// "Sequence layers"): embedding, layer norm, attention, GELU, the per-token linear and the
// output head tied to the token embedding (Press & Wolf 2017; GPT-2). A sample is (1, T,
// width): T tokens in h, features in w. Not here: the common builder steps (nn/net.c), the
// layers' math (nn/layer_embed.c, layer_layernorm.c, layer_attention.c, layer_simple.c,
// layer_linear.c), the architecture (nn/models_gpt.c).
#include <stdio.h>

#include "layers.h"

// Set the output of a sequence layer: (1, T, width) per sample.
static void seq_out(dt_layer *l, int T, int width) { l->oc = 1, l->oh = T, l->ow = width; }

// A sequence layer's input must be (1, T, width) with T the network's sequence length.
static int check_seq_input(dt_net *net, dt_layer *l) {
    if (l->c == 1 && l->h == net->seq && net->seq > 0) return 0;
    char detail[96];
    snprintf(detail, sizeof detail, "got %dx%dx%d, sequence length %d", l->c, l->h, l->w,
             net->seq);
    return dt_net_layer_reject(net, l, "a sequence layer needs a (1, T, features) input; ",
                               detail);
}

int dt_net_add_embed(dt_net *net, const char *name, int vocab, int context, int C,
                     float init_std) {
    dt_layer *l = dt_net_layer_new(net, DT_LAYER_EMBED, name, "embed", -1);
    if (!l) return -1;
    char detail[128];
    if (vocab <= 0 || context <= 0 || C <= 0 || net->seq <= 0 || net->in_c != 1 ||
        net->in_h != 1 || net->in_w != net->seq) {
        snprintf(detail, sizeof detail, "got vocabulary %d, context %d, width %d, input "
                 "%dx%dx%d, sequence length %d", vocab, context, C, net->in_c, net->in_h,
                 net->in_w, net->seq);
        return dt_net_layer_reject(net, l, "an embedding needs positive sizes and the input "
                                   "1x1xT of a sequence model; ", detail);
    }
    if (net->seq > context) {
        snprintf(detail, sizeof detail, "%d tokens, context %d", net->seq, context);
        return dt_net_layer_reject(net, l, "the sequence is longer than the model's context: ",
                                   detail);
    }
    seq_out(l, net->seq, C);
    l->init_std = init_std;
    l->w_off = dt_net_layer_param(net, l, "wte.weight", DT_PARAM_WEIGHT, 2, vocab, C);
    l->b_off = dt_net_layer_param(net, l, "wpe.weight", DT_PARAM_WEIGHT, 2, context, C);
    l->forward = dt_embed_forward;
    l->backward = dt_embed_backward;
    dt_embed_setup(l);
    return dt_net_layer_append(net, l);
}

int dt_net_add_layernorm(dt_net *net, const char *name, int in, float eps) {
    dt_layer *l = dt_net_layer_new(net, DT_LAYER_LAYERNORM, name, "layernorm", in);
    if (!l) return -1;
    if (check_seq_input(net, l)) return -1;
    if (!(eps > 0.0f)) return dt_net_layer_reject(net, l, "layer norm needs eps > 0", NULL);
    seq_out(l, l->h, l->w);
    l->eps = eps;
    l->w_off = dt_net_layer_param(net, l, "weight", DT_PARAM_LN_GAMMA, 1, l->w, 0);
    l->b_off = dt_net_layer_param(net, l, "bias", DT_PARAM_LN_BETA, 1, l->w, 0);
    l->forward = dt_layernorm_forward;
    l->backward = dt_layernorm_backward;
    dt_layernorm_setup(l);
    return dt_net_layer_append(net, l);
}

int dt_net_add_attention(dt_net *net, int in, int heads) {
    dt_layer *l = dt_net_layer_new(net, DT_LAYER_ATTENTION, NULL, "attention", in);
    if (!l) return -1;
    if (check_seq_input(net, l)) return -1;
    if (heads <= 0 || l->w % 3 != 0 || (l->w / 3) % heads != 0) {
        char detail[96];
        snprintf(detail, sizeof detail, "got width %d and %d heads", l->w, heads);
        return dt_net_layer_reject(net, l, "attention needs [q|k|v] of 3C features with C a "
                                   "multiple of the heads; ", detail);
    }
    seq_out(l, l->h, l->w / 3);
    l->heads = heads;
    l->forward = dt_attention_forward;
    l->backward = dt_attention_backward;
    dt_attention_setup(l);
    return dt_net_layer_append(net, l);
}

int dt_net_add_gelu(dt_net *net, int in) {
    dt_layer *l = dt_net_layer_new(net, DT_LAYER_GELU, NULL, "gelu", in);
    if (!l) return -1;
    l->oc = l->c, l->oh = l->h, l->ow = l->w;
    l->forward = dt_gelu_forward;
    l->backward = dt_gelu_backward;
    dt_gelu_setup(l);
    return dt_net_layer_append(net, l);
}

int dt_net_add_linear_tokens(dt_net *net, const char *name, int in, int out, int bias,
                             float init_std) {
    dt_layer *l = dt_net_layer_new(net, DT_LAYER_LINEAR, name, "linear", in);
    if (!l) return -1;
    if (check_seq_input(net, l)) return -1;
    if (out <= 0) return dt_net_layer_reject(net, l, "linear needs out_features >= 1", NULL);
    seq_out(l, l->h, out);
    l->per_token = 1;
    l->has_bias = bias != 0;
    l->init_std = init_std;
    l->w_off = dt_net_layer_param(net, l, "weight", DT_PARAM_WEIGHT, 2, out, l->w);
    if (l->has_bias) l->b_off = dt_net_layer_param(net, l, "bias", DT_PARAM_BIAS, 1, out, 0);
    l->forward = dt_linear_forward;
    l->backward = dt_linear_backward;
    dt_linear_setup(l);
    return dt_net_layer_append(net, l);
}

int dt_net_add_tied_head(dt_net *net, const char *name, int in, int embed) {
    dt_layer *l = dt_net_layer_new(net, DT_LAYER_LINEAR, name, "linear", in);
    if (!l) return -1;
    if (check_seq_input(net, l)) return -1;
    if (embed < 0 || embed >= net->n_layers || net->layers[embed]->type != DT_LAYER_EMBED ||
        net->layers[embed]->ow != l->w)
        return dt_net_layer_reject(net, l, "a tied head reads an embedding layer of its "
                                   "input's width", NULL);
    const dt_param *wte = NULL;
    for (int t = 0; t < net->n_params; t++)
        if (net->params_table[t].layer == embed) { wte = &net->params_table[t]; break; }
    seq_out(l, l->h, wte->shape[0]);
    l->per_token = 1;
    l->tied = 1;
    l->w_off = (ssize_t)wte->offset;  // no parameters of its own: n_trainable stays 0
    l->forward = dt_linear_forward;
    l->backward = dt_linear_backward;
    dt_linear_setup(l);
    return dt_net_layer_append(net, l);
}
