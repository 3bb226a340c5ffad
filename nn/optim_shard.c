// optim_shard.c — the optimizer step of ZeRO stage 1 (Rajbhandari et al. 2020 §5.1, "P_os":
// optimizer state partitioning): each rank keeps the momentum of its shard [lo, hi) of the
// flat trainable parameters only and updates only those parameters; an allgather then gives
// every rank the whole model (nn/train_shard.c). The update is elementwise (nn/kernels.h's
// sgd and lars formulas), so each element of the shard is updated with the very arithmetic
// of dt_optim_step: the kernels run on the piece of each tensor that lies inside the shard,
// with that tensor's weight decay and (LARS) trust ratio. Stages 2 and 3 (§5.2, §5.3) step
// a list of pieces instead of one shard, from compact buffers (dt_optim_step_pieces). Not
// here: the optimizer's configuration and the whole-model step (optim.c), the collectives
// (nn/coll), the units and their pieces (nn/train_zero.c).
#include "optim.h"

#include <math.h>

#include "kernels.h"

// Does parameter p take LARS's trust ratio? (the tensors lars_norms in optim.c measures)
static int lars_weight(const dt_param *p) {
    return p->trainable && p->count > 0 && p->kind == DT_PARAM_WEIGHT;
}

int dt_optim_lars_tensors(const dt_net *net) {
    int k = 0;
    for (int i = 0; i < net->n_params; i++) k += lars_weight(&net->params_table[i]);
    return k;
}

// The piece of p inside [lo, hi): [*a, *b), empty when *a >= *b.
static void piece(const dt_param *p, size_t lo, size_t hi, size_t *a, size_t *b) {
    *a = p->offset > lo ? p->offset : lo;
    *b = p->offset + p->count < hi ? p->offset + p->count : hi;
}

int dt_optim_shard_grad_sumsq(dt_optim *opt, const dt_net *net, double *partial) {
    DT_ASSERT(opt && opt->sharded && net);
    if (opt->cfg.kind != DT_OPT_LARS) return 0;
    int k = 0, m = 0;
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        if (!lars_weight(p)) continue;
        size_t a, b;
        piece(p, opt->shard_lo, opt->shard_hi, &a, &b);
        partial[k] = 0.0;
        if (a < b) {  // one device synchronisation for all of them (sumsq_many)
            opt->norm_x[m] = net->grads + a, opt->norm_n[m] = b - a;
            opt->norm_out[m] = (double)k;  // (where its sum goes, until it is computed)
            m++;
        }
        k++;
    }
    if (m) {
        int *slot = mallocCheck((size_t)m * sizeof(int));
        for (int j = 0; j < m; j++) slot[j] = (int)opt->norm_out[j];
        opt->dev->sumsq_many(opt->dev, m, opt->norm_x, opt->norm_n, opt->norm_out);
        for (int j = 0; j < m; j++) partial[slot[j]] = opt->norm_out[j];
        free(slot);
    }
    return k;
}

void dt_optim_step_shard(dt_optim *opt, dt_net *net, float lr, const double *g_sumsq) {
    DT_ASSERT(opt && opt->sharded && net && net->dev == opt->dev && net->n_trainable == opt->n);
    const dt_optim_config *c = &opt->cfg;
    int lars = c->kind == DT_OPT_LARS;
    DT_ASSERT(!lars || g_sumsq || dt_optim_lars_tensors(net) == 0);
    double *wsq = NULL;
    if (lars) {  // |w|^2 of each weight tensor, whole (every rank holds the whole model)
        int k = 0;
        for (int i = 0; i < net->n_params; i++) {
            const dt_param *p = &net->params_table[i];
            if (!lars_weight(p)) continue;
            opt->norm_x[k] = net->params + p->offset, opt->norm_n[k++] = p->count;
        }
        wsq = mallocCheck((size_t)(k + 1) * sizeof(double));
        if (k) opt->dev->sumsq_many(opt->dev, k, opt->norm_x, opt->norm_n, wsq);
    }
    int t = 0;  // weight tensors seen (LARS)
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        if (!p->trainable || p->count == 0) continue;
        int weight = p->kind == DT_PARAM_WEIGHT;
        size_t a, b;
        piece(p, opt->shard_lo, opt->shard_hi, &a, &b);
        if (a < b) {
            float *w = net->params + a, *v = opt->velocity + (a - opt->shard_lo);
            const float *g = net->grads + a;
            if (!lars) {  // optim.c's sgd_tensor on the piece
                DT_CALL(opt->dev, sgd_update, w, g, v, b - a, lr, c->momentum,
                        weight ? c->weight_decay : 0.0f, c->nesterov);
            } else if (!weight) {  // optim.c's lars_tensor: plain momentum, no decay
                DT_CALL(opt->dev, lars_update, w, g, v, b - a, lr, c->momentum, 0.0f);
            } else {
                double local_lr = dt_lars_local_lr(sqrt(wsq[t]), sqrt(g_sumsq[t]), c->trust,
                                                   c->weight_decay, c->eps);
                DT_CALL(opt->dev, lars_update, w, g, v, b - a, (float)((double)lr * local_lr),
                        c->momentum, c->weight_decay);
            }
        }
        if (lars && weight) t++;
    }
    free(wsq);
    opt->step++;
}

// ---- stages 2 and 3: the pieces of the units (nn/train_zero.c) ----

int dt_optim_reshard(dt_optim *opt, size_t elems, dt_error *err) {
    DT_ASSERT(opt && opt->sharded);
    if (opt->step > 0)
        return dt_fail(err, DT_EXIT_USAGE, "optimizer: re-sharding after %ld steps would drop "
                       "the state of those steps", opt->step);
    dt_optim_alloc_state(opt, elems);
    opt->shard_lo = 0, opt->shard_hi = elems;  // (compact: the pieces side by side)
    return 0;
}

// The first piece that ends after element `off` (pieces ascending), from k on.
static int first_piece(const dt_optim_pieces *pc, int k, size_t off) {
    while (k < pc->n && pc->hi[k] <= off) k++;
    return k;
}

void dt_optim_pieces_sumsq(dt_optim *opt, const dt_net *net, const dt_optim_pieces *pc,
                           const float *x, double *partial) {
    DT_ASSERT(opt && net && pc);
    int k = 0, m = 0, k0 = 0;
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        if (!lars_weight(p)) continue;
        partial[k] = 0.0;
        k0 = first_piece(pc, k0, p->offset);
        // a tensor lies in one unit, so in at most one piece of this rank
        for (int j = k0; j < pc->n && pc->lo[j] < p->offset + p->count; j++) {
            size_t a = p->offset > pc->lo[j] ? p->offset : pc->lo[j];
            size_t b = p->offset + p->count < pc->hi[j] ? p->offset + p->count : pc->hi[j];
            if (a >= b) continue;
            DT_ASSERT(m < opt->norm_cap);
            opt->norm_x[m] = x ? x + pc->at[j] + (a - pc->lo[j]) : net->params + a;
            opt->norm_n[m] = b - a;
            opt->norm_out[m] = (double)k;
            m++;
        }
        k++;
    }
    if (!m) return;
    int *slot = mallocCheck((size_t)m * sizeof(int));
    for (int j = 0; j < m; j++) slot[j] = (int)opt->norm_out[j];
    opt->dev->sumsq_many(opt->dev, m, opt->norm_x, opt->norm_n, opt->norm_out);
    for (int j = 0; j < m; j++) partial[slot[j]] += opt->norm_out[j];
    free(slot);
}

void dt_optim_step_pieces(dt_optim *opt, dt_net *net, const dt_optim_pieces *pc, float *w,
                          const float *g, float lr, const double *g_sumsq,
                          const double *w_sumsq) {
    DT_ASSERT(opt && opt->sharded && net && pc && net->dev == opt->dev);
    const dt_optim_config *c = &opt->cfg;
    int lars = c->kind == DT_OPT_LARS;
    DT_ASSERT(!lars || (g_sumsq && w_sumsq) || dt_optim_lars_tensors(net) == 0);
    int t = 0, k0 = 0;  // weight tensors seen (LARS); the first piece not behind
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        if (!p->trainable || p->count == 0) continue;
        int weight = p->kind == DT_PARAM_WEIGHT;
        k0 = first_piece(pc, k0, p->offset);
        for (int j = k0; j < pc->n && pc->lo[j] < p->offset + p->count; j++) {
            size_t a = p->offset > pc->lo[j] ? p->offset : pc->lo[j];
            size_t b = p->offset + p->count < pc->hi[j] ? p->offset + p->count : pc->hi[j];
            if (a >= b) continue;
            size_t in = pc->at[j] + (a - pc->lo[j]);  // in the compact buffers
            float *wp = w ? w + in : net->params + a, *v = opt->velocity + in;
            const float *gp = g + in;
            if (!lars) {  // optim.c's sgd_tensor on the piece
                DT_CALL(opt->dev, sgd_update, wp, gp, v, b - a, lr, c->momentum,
                        weight ? c->weight_decay : 0.0f, c->nesterov);
            } else if (!weight) {  // optim.c's lars_tensor: plain momentum, no decay
                DT_CALL(opt->dev, lars_update, wp, gp, v, b - a, lr, c->momentum, 0.0f);
            } else {
                double local_lr = dt_lars_local_lr(sqrt(w_sumsq[t]), sqrt(g_sumsq[t]),
                                                   c->trust, c->weight_decay, c->eps);
                DT_CALL(opt->dev, lars_update, wp, gp, v, b - a,
                        (float)((double)lr * local_lr), c->momentum, c->weight_decay);
            }
        }
        if (lars && weight) t++;
    }
    opt->step++;
}
