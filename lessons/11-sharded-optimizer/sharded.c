// sharded.c — your ZeRO stage 1 optimizer step (the contract: sharded.h; hints: HINTS.md).
#include "sharded.h"

void shard_state_init(shard_state *s, const dt_net *net, dt_device *dev, int rank, int size,
                      float momentum, float weight_decay) {
    // TODO: this rank's shard of net->n_trainable elements, and its momentum (zero, on dev,
    // for the shard only).
    (void)net, (void)rank, (void)size;
    s->lo = s->hi = 0;
    s->velocity = NULL;
    s->dev = dev;
    s->momentum = momentum, s->weight_decay = weight_decay;
}

void shard_state_free(shard_state *s) {
    if (s->velocity) s->dev->free(s->dev, s->velocity);
    s->velocity = NULL;
}

void sharded_step(shard_state *s, dt_net *net, dt_coll *coll, float lr) {
    // TODO: the gradient's reduce-scatter, the mean of the shard, the SGD update of the part
    // of each trainable tensor that lies in the shard (with that tensor's weight decay),
    // the parameters' allgather.
    (void)s, (void)net, (void)coll, (void)lr;
}
