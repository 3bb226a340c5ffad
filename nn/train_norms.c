// train_norms.c — the norms of the gradient and the weights that clipping and LAMB need
// (optim.h dt_norm_plan: summed from pieces, so that a sharded run and a plain one give the
// same bits) over the trainer's units, and clipping by global norm, an extension of the step
// (dt_step_hooks clip). Not here: the plan's arithmetic (optim_norms.c), the step (train.c).
#include <math.h>

#include "train_pipe.h"
#include "train_tp.h"
#include "train_strategy.h"

// The units the pieces are cut from: a sharded strategy's (t->unit_lo: ZeRO's units; stage
// 1's one, the whole buffer), else the fusion buckets (those a sharded run matches bit for
// bit).
dt_norm_plan *dt_trainer_norm_plan(dt_trainer *t) {
    if (t->norms) return t->norms;
    const dt_net *net = t->net;
    if (t->unit_lo) return t->norms = dt_norm_plan_create(net, t->n_units, t->unit_lo, t->size);
    size_t *lo = mallocCheck(((size_t)t->n_buckets + 2) * sizeof(size_t));
    int n = 0;
    lo[n++] = 0;
    for (int b = t->n_buckets - 1; b >= 0; b--)  // the buckets, listed top down: ascending
        if (t->buckets[b].lo > lo[n - 1] && t->buckets[b].lo < net->n_trainable)
            lo[n++] = t->buckets[b].lo;
    lo[n] = net->n_trainable;
    t->norms = dt_norm_plan_create(net, n, lo, t->size);
    free(lo);
    return t->norms;
}

// dt_sum_fn: v summed over the ranks (the zero-padded vectors of optim_norms.c: exact)
void dt_trainer_sum_ranks(void *ctx, double *v, size_t n) {
    dt_trainer *t = ctx;
    dt_error err;
    if (n && dt_allreduce(t->coll, v, n, DT_F64, &err)) {  // options checked at set_comm
        fprintf(stderr, "dtlab: internal error: %s\n", err.msg);
        abort();
    }
}

// A pipeline stage's plan total (nn/train_pipe.h): sq holds this stage's segments' sums of
// squares; the last stage's copy of the tied weight is left out (counted on the first stage),
// and every stage's segments summed in the model's order, as the plain net sums its own.
static double pipe_total(dt_trainer *t, const dt_norm_plan *pl, double *sq) {
    dt_pipeline *p = t->pipe;
    if (p->stage == p->stages - 1 && p->stages > 1)  // the copy: counted on the first stage
        for (int i = 0; i < pl->n; i++)
            if (pl->lo[i] >= p->tied_lo && pl->hi[i] <= p->tied_lo + p->tied_n) sq[i] = 0.0;
    int n = pl->n, P = p->stages;
    int *count = mallocCheck((size_t)P * sizeof(int)), *at = mallocCheck((size_t)P * sizeof(int));
    MPI_Allgather(&n, 1, MPI_INT, count, 1, MPI_INT, p->comm);
    int all = 0;
    for (int i = 0; i < P; i++) at[i] = all, all += count[i];
    double *v = mallocCheck(((size_t)all + 1) * sizeof(double));
    MPI_Allgatherv(sq, n, MPI_DOUBLE, v, count, at, MPI_DOUBLE, p->comm);
    double total = 0.0;  // ascending over the model, as dt_norm_plan_total (+0.0 is exact)
    for (int i = 0; i < all; i++) total += v[i];
    free(count), free(at), free(v);
    return total;
}

// Clipping by global norm (optim.h dt_clip_grad_norm's rule) of this rank's part of the
// averaged gradient: the whole when plain, the norm summed from the pieces when sharded or
// piece_norms, a pipeline's stage or a tensor-parallel rank (from every part's pieces).
static void clip(dt_trainer *t) {
    dt_net *net = t->net;
    int sharded = t->opt->sharded;
    if (!sharded && !t->piece_norms && !t->pipe && !t->tp) {
        t->last_grad_norm = dt_clip_grad_norm(net, t->clip_norm);
        return;
    }
    dt_norm_plan *pl = dt_trainer_norm_plan(t);
    double *sq = mallocCheck(((size_t)pl->n + 1) * sizeof(double));
    dt_norm_plan_sumsq(pl, net->dev, sharded ? t->rank : -1, t->grad, sharded, sq);
    if (sharded) dt_trainer_sum_ranks(t, sq, (size_t)pl->n);
    if (t->tp) dt_tp_norms(t, pl, sq);  // a tensor-parallel rank's slices
    // a pipeline stage's segments are part of the model's: all of them, in the model's order
    double norm = sqrt(t->pipe ? pipe_total(t, pl, sq) : dt_norm_plan_total(pl, sq));
    free(sq);
    double coef = t->clip_norm / (norm + 1e-6);  // torch.nn.utils.clip_grad_norm_
    if (coef < 1.0 && t->grad_n) net->dev->scale(net->dev, t->grad, (float)coef, t->grad_n);
    t->last_grad_norm = norm;
}

void dt_trainer_set_clip(dt_trainer *t, double max_norm) {
    DT_ASSERT(t);
    t->clip_norm = max_norm > 0 ? max_norm : 0;
    t->hooks.clip = max_norm > 0 ? clip : NULL;
}
