// net_part.c — a part of a model and the whole (nn/net_part.h): a pipeline stage's tensors
// are whole tensors of the model, a tensor-parallel rank's are slices of them (Shoeybi et al.
// 2019, §3: attention's c_attn and the MLP's c_fc split by their output rows, c_attn's per
// [q | k | v] so that a rank holds whole heads; both c_proj split by their input columns;
// the token embedding and the head's copy of it by vocabulary rows where the part's
// vocabulary is a slice (dt_model_config.tp_vocab_whole 0); everything else whole on every
// rank). Each part tensor is found in the whole by name
// (lm_head.weight, the last stage's copy of the tied embedding, is transformer.wte.weight)
// and mapped as runs of elements.
#include "net_part.h"

#include <string.h>

int dt_name_ends_with(const char *s, const char *tail) {
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && !strcmp(s + a - b, tail);
}

const dt_param *dt_net_part_whole_param(const dt_net *whole, const dt_param *p) {
    const char *name = strcmp(p->name, "lm_head.weight") ? p->name : "transformer.wte.weight";
    return dt_net_find_param(whole, name);
}

int dt_net_part_split(const dt_net *part, const dt_param *p) {
    const char *n = p->name;
    if (!strcmp(n, "transformer.wte.weight") || !strcmp(n, "lm_head.weight"))
        return part->cfg.tp > 1 && !part->cfg.tp_vocab_whole;  // vocabulary rows
    if (dt_name_ends_with(n, "attn.c_attn.weight") || dt_name_ends_with(n, "attn.c_attn.bias"))
        return 3;
    if (dt_name_ends_with(n, "mlp.c_fc.weight") || dt_name_ends_with(n, "mlp.c_fc.bias"))
        return 1;
    if (dt_name_ends_with(n, "attn.c_proj.weight") || dt_name_ends_with(n, "mlp.c_proj.weight"))
        return -1;
    return 0;
}

// Calls fn(ctx, part offset, whole offset, n) for each run of part tensor p (tensor-parallel
// rank r of t) in whole tensor w; -1 when the shapes do not fit that split.
static int each_run(const dt_net *part, const dt_param *p, const dt_param *w, int r, int t,
                    void (*fn)(void *ctx, size_t po, size_t wo, size_t n), void *ctx) {
    int split = t > 1 ? dt_net_part_split(part, p) : 0;
    size_t cols = p->ndim == 2 ? (size_t)p->shape[1] : 1;
    if (split == 0) {  // whole on every rank
        if (w->count != p->count) return -1;
        fn(ctx, p->offset, w->offset, p->count);
    } else if (split > 0) {  // by output rows, in `split` chunks ([q | k | v])
        size_t rows = (size_t)p->shape[0], chunk = (size_t)w->shape[0] / (size_t)split;
        size_t per = rows / (size_t)split;
        if (w->count != p->count * (size_t)t || per * (size_t)t != chunk) return -1;
        for (int c = 0; c < split; c++)
            fn(ctx, p->offset + c * per * cols, w->offset + (c * chunk + (size_t)r * per) * cols,
               per * cols);
    } else {  // by input columns
        size_t wc = w->ndim == 2 ? (size_t)w->shape[1] : 0, rows = (size_t)p->shape[0];
        if (p->ndim != 2 || wc != cols * (size_t)t || (size_t)w->shape[0] != rows) return -1;
        for (size_t i = 0; i < rows; i++)
            fn(ctx, p->offset + i * cols, w->offset + i * wc + (size_t)r * cols, cols);
    }
    return 0;
}

typedef struct {
    dt_device *d;
    float *part;
    const float *whole;
    float *whole_host;
    const float *part_host;
    const float *whole_host_in;
    float *part_host_out;
} runs;

static void take(void *ctx, size_t po, size_t wo, size_t n) {
    runs *c = ctx;
    c->d->copy(c->d, c->part + po, c->whole + wo, n * sizeof(float));
}

static void put(void *ctx, size_t po, size_t wo, size_t n) {
    runs *c = ctx;
    memcpy(c->whole_host + wo, c->part_host + po, n * sizeof(float));
}

int dt_net_part_copy(dt_net *part, const dt_net *whole, int tp_rank, int tp, dt_error *err) {
    runs c = {.d = part->dev, .part = part->params, .whole = whole->params};
    for (int i = 0; i < part->n_params; i++) {
        const dt_param *p = &part->params_table[i];
        const dt_param *w = dt_net_part_whole_param(whole, p);
        if (!w || each_run(part, p, w, tp_rank, tp, take, &c))
            return dt_fail(err, DT_EXIT_USAGE, "model part: the whole model has no tensor %s "
                           "that a part of %zu elements (tensor-parallel rank %d of %d) fits "
                           "(built from another model?)", p->name, p->count, tp_rank, tp);
    }
    return 0;
}

void dt_net_part_place_array(const dt_net *part, const dt_net *whole, int tp_rank, int tp,
                             const float *part_host, float *whole_host) {
    runs c = {.whole_host = whole_host, .part_host = part_host};
    for (int i = 0; i < part->n_params; i++) {
        const dt_param *p = &part->params_table[i];
        if (!p->trainable || !strcmp(p->name, "lm_head.weight")) continue;  // (the copy)
        if (tp_rank > 0 && (tp <= 1 || !dt_net_part_split(part, p))) continue;  // rank 0's
        const dt_param *w = dt_net_part_whole_param(whole, p);
        DT_ASSERT(w && !each_run(part, p, w, tp_rank, tp, put, &c));
    }
}

void dt_net_part_place(const dt_net *part, const dt_net *whole, int tp_rank, int tp,
                       float *whole_host) {
    float *host = mallocCheck((part->n_trainable + 1) * sizeof(float));
    part->dev->to_host(part->dev, host, part->params, part->n_trainable * sizeof(float));
    dt_net_part_place_array(part, whole, tp_rank, tp, host, whole_host);
    free(host);
}

static void take_host(void *ctx, size_t po, size_t wo, size_t n) {
    runs *c = ctx;
    memcpy(c->part_host_out + po, c->whole_host_in + wo, n * sizeof(float));
}

void dt_net_part_take_array(const dt_net *part, const dt_net *whole, int tp_rank, int tp,
                            const float *whole_host, float *part_host) {
    runs c = {.whole_host_in = whole_host, .part_host_out = part_host};
    for (int i = 0; i < part->n_params; i++) {
        const dt_param *p = &part->params_table[i];
        if (!p->trainable) continue;
        const dt_param *w = dt_net_part_whole_param(whole, p);
        DT_ASSERT(w && !each_run(part, p, w, tp_rank, tp, take_host, &c));
    }
}
