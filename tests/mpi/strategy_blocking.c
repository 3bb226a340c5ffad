// strategy_blocking.c — the hooks of strategy_blocking.h's entry: replicate without buckets
// or overlap. After backward one blocking allreduce of the whole gradient (coll.h
// dt_allreduce, the nonblocking call's schedule run to completion), then the whole update:
// the bits of replicate's step with one fusion bucket.
#include "strategy_blocking.h"

void test_blocking_setup(dt_trainer *t) {
    t->grad = t->net->grads;  // the whole gradient, summed on every rank
    t->grad_n = t->net->n_trainable;
}

void test_blocking_free(dt_trainer *t) { (void)t; }

double test_blocking_finish(dt_trainer *t) {
    double t0 = MPI_Wtime();
    dt_error err;
    if (dt_allreduce(t->coll, t->net->grads, t->net->n_trainable, DT_F32, &err)) {
        fprintf(stderr, "strategy blocking: %s\n", err.msg);  // (checked at set_comm)
        abort();
    }
    return MPI_Wtime() - t0;
}

void test_blocking_update(dt_trainer *t, float lr) { dt_optim_step(t->opt, t->net, lr); }
