// gpt_sample.c — the next token drawn with a temperature and a top-k cut, and the loop that
// feeds it back (nn/gpt_sample.h).
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpt_sample.h"
#include "kernels.h"

// A uniform double in [0, 1) for draw i of seed: 53 bits of a counter-based hash, so a
// draw depends on (seed, i) only, never on what ran before
static double draw(uint64_t seed, uint64_t i) {
    return (double)(dt_mix64(dt_mix64(seed) ^ (i * 0x9E3779B97F4A7C15ull)) >> 11) * 0x1p-53;
}

static float prob(const float *p, int t) { return p[t] == p[t] && p[t] > 0 ? p[t] : 0.0f; }

typedef struct { float p; int t; } ranked;
static int by_rank(const void *a, const void *b) {  // most likely first, then the lower id
    const ranked *x = a, *y = b;
    return x->p > y->p ? -1 : x->p < y->p ? 1 : (x->t > y->t) - (x->t < y->t);
}

int dt_sample_token(const float *probs, int V, const dt_sample_opts *s, uint64_t i, int *order) {
    int best = 0;
    for (int t = 1; t < V; t++)
        if (prob(probs, t) > prob(probs, best)) best = t;
    if (s->temperature <= 0 || s->top_k == 1 || prob(probs, best) == 0) return best;
    int k = s->top_k > 0 && s->top_k < V ? s->top_k : V;
    if (k == V) {
        for (int t = 0; t < V; t++) order[t] = t;
    } else {  // the k most likely (a sort: V log V, under a millisecond at GPT-2's 50,257)
        ranked *r = malloc((size_t)V * sizeof *r);
        if (!r) return best;
        for (int t = 0; t < V; t++) r[t] = (ranked){prob(probs, t), t};
        qsort(r, (size_t)V, sizeof *r, by_rank);
        for (int j = 0; j < k; j++) order[j] = r[j].t;
        free(r);
    }
    // weights p^(1/T) relative to the largest: exp((ln p - ln p_max) / T), in double
    double lmax = log((double)prob(probs, best)), sum = 0;
    for (int j = 0; j < k; j++) {
        double p = prob(probs, order[j]);
        sum += p > 0 ? exp((log(p) - lmax) / s->temperature) : 0.0;
    }
    double u = draw(s->seed, i) * sum, c = 0;
    int pick = best;
    for (int j = 0; j < k; j++) {
        double p = prob(probs, order[j]);
        if (p <= 0) continue;
        pick = order[j];
        c += exp((log(p) - lmax) / s->temperature);
        if (u < c) break;
    }
    return pick;
}

int dt_gpt_generate(dt_net *net, const int32_t *prompt, int n_prompt, int n_new,
                    const dt_sample_opts *s, int32_t *out, dt_error *err) {
    int T = net->seq, V = net->num_classes;
    if (T < 1 || !net->tokens)
        return dt_fail(err, DT_EXIT_USAGE, "generation needs a gpt model (this net reads no "
                       "tokens)");
    if (n_prompt < 1 || n_new < 0)
        return dt_fail(err, DT_EXIT_USAGE, "generation needs a prompt of at least one token");
    if (!(s->temperature >= 0) || s->top_k < 0)
        return dt_fail(err, DT_EXIT_USAGE, "temperature %g and top-k %d: expected a "
                       "temperature >= 0 and a top-k >= 0", s->temperature, s->top_k);
    for (int j = 0; j < n_prompt; j++)
        if (prompt[j] < 0 || prompt[j] >= V)
            return dt_fail(err, DT_EXIT_USAGE, "prompt token %d is %d, outside the model's "
                           "vocabulary of %d", j, (int)prompt[j], V);
    size_t rows = (size_t)net->B * T, len = (size_t)n_prompt + (size_t)n_new;
    int32_t *ctx = malloc(len * sizeof *ctx), *tok = calloc(rows, sizeof *tok),
            *tgt = calloc(rows, sizeof *tgt);
    int *order = malloc((size_t)V * sizeof *order);
    float *p = malloc((size_t)V * sizeof *p);
    if (!ctx || !tok || !tgt || !order || !p) {
        free(ctx), free(tok), free(tgt), free(order), free(p);
        return dt_fail(err, DT_EXIT_RUNTIME, "out of memory for %zu tokens of context", len);
    }
    memcpy(ctx, prompt, (size_t)n_prompt * sizeof *ctx);
    for (size_t n = (size_t)n_prompt; n < len; n++) {
        // the window: the context's last T tokens, from position 0 (causal attention: the
        // zeros after the last one do not change its distribution)
        size_t first = n > (size_t)T ? n - (size_t)T : 0;
        int last = (int)(n - first) - 1;
        memset(tok, 0, (size_t)T * sizeof *tok);
        memcpy(tok, ctx + first, (n - first) * sizeof *tok);
        dt_net_set_tokens(net, tok, tgt);
        dt_net_forward(net, 0);
        dt_net_loss(net);
        net->dev->to_host(net->dev, p, net->probs + (size_t)last * V, (size_t)V * sizeof *p);
        ctx[n] = dt_sample_token(p, V, s, (uint64_t)(n - (size_t)n_prompt), order);
    }
    memcpy(out, ctx + n_prompt, (size_t)n_new * sizeof *out);
    free(ctx), free(tok), free(tgt), free(order), free(p);
    return 0;
}
