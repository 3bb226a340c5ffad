// in_dtrain.c — lesson 11's sharded step inside the real dtrain. Linked into a dtrain with
// -Wl,--wrap=dt_shard_optimizer_finish,--wrap=dt_shard_optimizer_update (lesson.cmake), so
// that `dtrain --shard-optimizer` runs the student's sharded_step (sharded.c) where the
// library's ZeRO stage 1 (nn/train_shard.c, the registry's entry "optimizer") would run;
// the rest of the step — data, forward, backward, the batch-norm statistics, the loss, the
// schedule of lr — is dtrain's own.
//
// dt_train_step (nn/train.c) calls the strategy at two points: its finish after backward
// (the library's: the reduce-scatter), then (after the mean of the shard, the batch-norm
// statistics and the loss) its update (the shard's update + the allgather). sharded_step
// does all four moves itself, from each rank's own gradient. So the first wrapper only keeps
// this rank's gradient; the second puts it back and calls sharded_step with the step's lr.
// The mean dt_train_step takes in between lands on a gradient that is then overwritten: the
// bits are sharded_step's alone.
// What sharded.h's step does not do is refused before the first step, with a clear line:
// another optimizer than SGD, Nesterov, fp16 loss scaling, micro-batches (--accumulate).
//
// State: dtrain runs one rank per process, so one set of variables per process is one per
// rank (this file is not linked into dtsim, where every rank shares the process).
#include <stdio.h>
#include <stdlib.h>

#include "sharded.h"
#include "train.h"

static struct {
    int ready;
    shard_state s;
    float *grad;  // this rank's own gradient (on the device), from backward to the step
} l11;

// Once, before the first step: what sharded_step implements, or exit 2 naming the option.
static void l11_start(dt_trainer *t) {
    const char *no = NULL;
    if (t->opt->cfg.kind != DT_OPT_SGD) no = "--optimizer (sharded.h's step is SGD's)";
    else if (t->opt->cfg.nesterov) no = "--nesterov (sharded.h's step has no Nesterov)";
    else if (t->loss_scaling) no = "--precision fp16's loss scaling (--loss-scale off)";
    else if (t->accumulate > 1) no = "--accumulate (one micro-batch a step)";
    if (no) {
        if (t->rank == 0)
            fprintf(stderr, "dtrain: --shard-optimizer with lesson 11's sharded_step: %s is "
                    "not supported here; use the library's dtrain for it\n", no);
        exit(DT_EXIT_USAGE);
    }
    shard_state_init(&l11.s, t->net, t->net->dev, t->rank, t->size, t->opt->cfg.momentum,
                     t->opt->cfg.weight_decay);
    l11.grad = t->net->dev->alloc(t->net->dev, t->net->n_trainable * sizeof(float) + 4);
    l11.ready = 1;
    if (t->rank == 0)
        fprintf(stderr, "dtrain: --shard-optimizer runs lesson 11's sharded_step (sharded.c): "
                "rank 0 keeps the momentum of [%zu, %zu) of %zu parameters\n", l11.s.lo,
                l11.s.hi, t->net->n_trainable);
}

// after backward: this rank's own gradient kept for the step, nothing communicated
double __wrap_dt_shard_optimizer_finish(dt_trainer *t);
double __wrap_dt_shard_optimizer_finish(dt_trainer *t) {
    if (!l11.ready) l11_start(t);
    dt_net *net = t->net;
    net->dev->copy(net->dev, l11.grad, net->grads, net->n_trainable * sizeof(float));
    return 0.0;
}

// the student's step on this rank's own gradient; its time counts as communication
// (exposed: it starts after backward)
void __wrap_dt_shard_optimizer_update(dt_trainer *t, float lr);
void __wrap_dt_shard_optimizer_update(dt_trainer *t, float lr) {
    dt_net *net = t->net;
    net->dev->copy(net->dev, net->grads, l11.grad, net->n_trainable * sizeof(float));
    double t0 = MPI_Wtime();
    sharded_step(&l11.s, net, t->coll, lr);
    net->dev->sync(net->dev);
    double d = MPI_Wtime() - t0;
    t->last_comm += d, t->last_exposed += d;
}
