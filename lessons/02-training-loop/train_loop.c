// train_loop.c — one process trains a network: for each step a batch of examples in the
// seeded order, forward, the softmax cross-entropy loss, backward (the mean gradient over
// the batch), and one SGD step per trainable tensor; then the test top-1. The contract
// (data order, which tensors take weight decay, batches of the evaluation) is in training.h.
#include <stdlib.h>
#include <string.h>

#include "training.h"

int train_loop(dt_net *net, const dt_dataset *train, const train_config *c, float *losses,
               dt_error *err) {
    // TODO(student): the contract (training.h): c->steps steps of SGD on net, taking batches of B = net->B in dtrain's order — epoch e is the seeded
    //   permutation dt_epoch_permutation(c->seed, e, n), cut into floor(n/B) batches (the
    //   rest of an epoch dropped) — so that the losses and the weights match the reference
    //   loop bit for bit; losses[s] is step s's mean training loss; every trainable tensor
    //   takes one sgd_step a step, with weight decay on DT_PARAM_WEIGHT tensors only and
    //   one momentum buffer for the whole net. Everything allocated is freed. Returns 0, or
    //   -1 when reading the data failed (err set). Stuck: HINTS.md.
    (void)net, (void)train, (void)c, (void)losses, (void)err;
    return 0;
}

double evaluate_top1(dt_net *net, const dt_dataset *ds, int64_t n, dt_error *err) {
    // TODO(student): the contract: the top-1 accuracy of net on examples 0..n-1 of ds, in
    //   inference mode (no dropout), in batches of net->B (the last one padded; its padding
    //   not counted): the fraction whose first largest probability is at their label.
    //   Stuck: HINTS.md.
    (void)net, (void)ds, (void)n, (void)err;
    return 0.0;
}
