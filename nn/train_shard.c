// train_shard.c — the strategy that shards the optimizer state, ZeRO stage 1 (Rajbhandari et
// al. 2020 §5.1): instead of "allreduce the gradient, every rank updates the whole model",
// reduce-scatter the gradient (rank r ends with the sum of its shard, the ring's chunk r:
// coll.h dt_shard_lo), update the shard with the shard's optimizer state (optim_shard.c),
// allgather the parameters. The reduce-scatter and the allgather are the allreduce's two
// halves, so the bytes sent are the allreduce's (docs/formulas.md, "ZeRO"); the momentum
// kept per rank is 1/P of it. With the ring (or rhd) every element of the gradient is summed
// in the allreduce's order, so a step gives the bits of the plain step when the plain step
// ran one allreduce over the whole gradient (one fusion bucket). Here the reduce-scatter
// starts after backward (no bucketed overlap). Not here: the step (train.c).
#include "train_strategy.h"

static void fail_internal(const dt_error *err) {  // options were checked at set_comm
    fprintf(stderr, "dtlab: internal error: %s\n", err->msg);
    abort();
}

// The gradient is reduced into this rank's shard of net->grads; its norms and its state
// (train_state.c) are cut from one unit, the whole buffer.
void dt_shard_optimizer_setup(dt_trainer *t) {
    size_t *lo = mallocCheck(2 * sizeof(size_t));
    lo[0] = 0, lo[1] = t->net->n_trainable;
    t->state = lo;
    t->n_units = 1, t->unit_lo = lo;
    t->grad = t->net->grads + t->opt->shard_lo;
    t->grad_n = t->opt->shard_hi - t->opt->shard_lo;
}

void dt_shard_optimizer_free(dt_trainer *t) {
    free(t->state);
    t->state = NULL;
    t->n_units = 0, t->unit_lo = NULL;
}

// After backward: this rank's shard of the gradient summed over the ranks (not yet divided
// by P); the rest of net->grads is left undefined. Returns the reduce-scatter's seconds.
double dt_shard_optimizer_finish(dt_trainer *t) {
    dt_net *net = t->net;
    double t0 = MPI_Wtime();
    dt_error err;
    if (dt_reduce_scatter(t->coll, net->grads, net->n_trainable, NULL, DT_F32, &err))
        fail_internal(&err);
    return MPI_Wtime() - t0;
}

// The shard's update (LARS: the |g| of each weight tensor summed over the ranks from the
// shards' parts; AdamW, LAMB: optim_norms.c over the one unit, the whole buffer), then the
// allgather of the trainable parameters.
void dt_shard_optimizer_update(dt_trainer *t, float lr) {
    dt_net *net = t->net;
    dt_error err;
    double *g_sumsq = NULL;
    int k = dt_optim_lars_tensors(net);
    dt_opt_kind kind = t->opt->cfg.kind;
    if (kind == DT_OPT_ADAMW || kind == DT_OPT_LAMB) {  // the moments of the shard alone
        size_t lo = t->opt->shard_lo;
        dt_optim_step_plan(t->opt, net, dt_trainer_norm_plan(t), t->rank, net->params, 0,
                           net->grads + lo, 1, lr, dt_trainer_sum_ranks, t);
    } else if (kind == DT_OPT_LARS && k > 0) {
        g_sumsq = mallocCheck((size_t)k * sizeof(double));
        dt_optim_shard_grad_sumsq(t->opt, net, g_sumsq);
        // k doubles, summed in the library's fixed order: the same bits on every rank
        if (dt_allreduce(t->coll, g_sumsq, (size_t)k, DT_F64, &err)) fail_internal(&err);
    }
    if (kind != DT_OPT_ADAMW && kind != DT_OPT_LAMB)
        dt_optim_step_shard(t->opt, net, lr, g_sumsq);
    free(g_sumsq);
    double t0 = MPI_Wtime();
    if (dt_allgather(t->coll, net->params, net->n_trainable, NULL, DT_F32, &err))
        fail_internal(&err);
    double ag = MPI_Wtime() - t0;
    t->last_comm += ag, t->last_exposed += ag;
}
