// train_scale.c — dynamic loss scaling (Micikevicius et al. 2018 §3.2), an extension of the
// step (dt_step_hooks scale, unscale): backward runs with the loss multiplied by S, so that
// fp16's small gradients do not underflow; on the reduced gradient an Inf or NaN on any rank
// skips the update everywhere and halves S, else the gradient is divided by S (optim.h
// dt_loss_scaler_update). Not here: the step (train.c).
#include <math.h>

#include "train_pipe.h"
#include "train_strategy.h"
#include "train_tp.h"

static float scale(const dt_trainer *t) { return t->loss_scaling ? t->scaler.scale : 1.0f; }

// After the allreduce all ranks hold the same sum, but an fp16 wire or a NaN can differ in
// where it shows first: one MAX settles whether any overflowed, so every rank decides alike.
// Returns whether to apply the update.
static int unscale(dt_trainer *t) {
    t->last_skipped = 0;
    dt_device *d = t->net->dev;
    if (t->fault_inf_grad && t->grad_n) d->fill(d, t->grad, INFINITY, 1);
    t->fault_inf_grad = 0;
    if (!t->loss_scaling) return 1;
    int overflow = d->nonfinite(d, t->grad, t->grad_n) > 0;
    MPI_Allreduce(MPI_IN_PLACE, &overflow, 1, MPI_INT, MPI_MAX, t->comm);
    // a pipeline's stages and a tensor-parallel group's slices hold other parts of the
    // gradient: an overflow in any part skips the step of the whole model
    if (t->pipe) MPI_Allreduce(MPI_IN_PLACE, &overflow, 1, MPI_INT, MPI_MAX, t->pipe->comm);
    if (t->tp) MPI_Allreduce(MPI_IN_PLACE, &overflow, 1, MPI_INT, MPI_MAX, t->tp->comm);
    float s = t->scaler.scale;  // the scale backward ran with
    if (!dt_loss_scaler_update(&t->scaler, overflow)) {
        t->last_skipped = 1;
        return 0;
    }
    d->scale(d, t->grad, 1.0f / s, t->grad_n);
    return 1;
}

void dt_trainer_set_loss_scaling(dt_trainer *t, const dt_loss_scaler *ls) {
    DT_ASSERT(t);
    t->loss_scaling = ls != NULL;
    if (ls) t->scaler = *ls;
    t->last_skipped = 0;
    t->hooks.scale = ls ? scale : NULL;
    t->hooks.unscale = ls || t->fault_inf_grad ? unscale : NULL;
}

void dt_trainer_inject_inf_grad(dt_trainer *t) {
    DT_ASSERT(t);
    t->fault_inf_grad = 1;
    t->hooks.unscale = unscale;
}
