// train_loop.c — one process trains a network: for each step a batch of examples in the
// seeded order, forward, the softmax cross-entropy loss, backward (the mean gradient over
// the batch), and one SGD step per trainable tensor; then the test top-1. The contract
// (data order, which tensors take weight decay, batches of the evaluation) is in training.h.
#include <stdlib.h>
#include <string.h>

#include "training.h"

int train_loop(dt_net *net, const dt_dataset *train, const train_config *c, float *losses,
               dt_error *err) {
    // TODO(student): allocate the momentum buffer (net->n_trainable floats; none without
    // momentum) and the host batch (x: B images of in_c*in_h*in_w floats, labels: B int32).
    // For s = 0 .. c->steps-1:
    //   - epoch e = s / spe, k = s % spe with spe = dt_steps_per_epoch(train->n, B, 1); at
    //     k == 0 draw the epoch's order, dt_epoch_permutation(c->seed, e, train->n, perm);
    //     the batch is perm[k*B .. k*B+B), read with dt_dataset_fill(..., c->seed, e, 1, ...)
    //   - dt_net_set_batch, dt_net_forward(net, 1), losses[s] = dt_net_loss(net),
    //     dt_net_backward(net, 1.0f, NULL, NULL)
    //   - for every trainable tensor p of net->params_table: sgd_step on
    //     net->params + p->offset, net->grads + p->offset, v + p->offset, p->count, with
    //     weight decay only when p->kind == DT_PARAM_WEIGHT, first = (s == 0)
    // Free what you allocated; return 0, or -1 if dt_dataset_fill failed (err is set).
    (void)net, (void)train, (void)c, (void)losses, (void)err;
    return 0;
}

double evaluate_top1(dt_net *net, const dt_dataset *ds, int64_t n, dt_error *err) {
    // TODO(student): examples 0..n-1 of ds in order, batches of B = net->B (the last one
    // padded: only its first n - start examples count): dt_dataset_fill (seed 0, epoch 0),
    // dt_net_set_batch, dt_net_forward(net, 0), dt_net_loss(net), then copy net->probs
    // (B x num_classes) to the host with net->dev->to_host and count the examples whose
    // first largest probability is at their label. Return correct / n.
    (void)net, (void)ds, (void)n, (void)err;
    return 0.0;
}
