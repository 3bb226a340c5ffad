// sharded.c — lesson 11's reference solution: ZeRO stage 1's step on the ring's two halves.
#include "sharded.h"

void shard_state_init(shard_state *s, const dt_net *net, dt_device *dev, int rank, int size,
                      float momentum, float weight_decay) {
    size_t n = net->n_trainable;
    s->lo = dt_shard_lo(n, size, rank);
    s->hi = dt_shard_lo(n, size, rank + 1);
    s->dev = dev;
    s->velocity = s->hi > s->lo ? dev->alloc(dev, (s->hi - s->lo) * sizeof(float)) : NULL;
    s->momentum = momentum, s->weight_decay = weight_decay;
}

void shard_state_free(shard_state *s) {
    if (s->velocity) s->dev->free(s->dev, s->velocity);
    s->velocity = NULL;
}

void sharded_step(shard_state *s, dt_net *net, dt_coll *coll, float lr) {
    dt_error err;
    size_t n = net->n_trainable;
    // 1. reduce-scatter: this rank's shard of the gradient becomes the sum over the ranks
    dt_reduce_scatter(coll, net->grads, n, NULL, DT_F32, &err);
    // 2. the mean, on the shard only
    s->dev->scale(s->dev, net->grads + s->lo, 1.0f / (float)dt_coll_size(coll), s->hi - s->lo);
    // 3. the update of each tensor's piece inside [lo, hi), with that tensor's decay
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        if (!p->trainable || p->count == 0) continue;
        size_t a = p->offset > s->lo ? p->offset : s->lo;
        size_t b = p->offset + p->count < s->hi ? p->offset + p->count : s->hi;
        if (a >= b) continue;
        float wd = p->kind == DT_PARAM_WEIGHT ? s->weight_decay : 0.0f;
        s->dev->sgd_update(s->dev, net->params + a, net->grads + a, s->velocity + (a - s->lo),
                           b - a, lr, s->momentum, wd, 0);
    }
    // 4. allgather: every rank's updated shard to every rank
    dt_allgather(coll, net->params, n, NULL, DT_F32, &err);
}
