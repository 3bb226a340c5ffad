// train_state.c — a sharded run's optimizer state whole, and back (nn/train.h): for a
// checkpoint that any stage and rank count can resume (FSDP's full state dict). Each rank's
// compact state holds its pieces of the strategy's units side by side (t->unit_lo: stage
// 1's one unit, the whole buffer; stages 2, 3: ZeRO's units), each piece the ring's split of
// its unit (coll.h dt_shard_lo); a unit's pieces are gathered on the root with one MPI_Gatherv
// into their places, and a resumed rank copies its pieces out of the whole arrays. Not here:
// the file (real/checkpoint.c).
#include <limits.h>

#include "train.h"

// The units the compact state is cut from: the strategy's, else one (the whole buffer).
static int state_units(const dt_trainer *t, const size_t **lo, size_t one[2]) {
    if (t->unit_lo) return *lo = t->unit_lo, t->n_units;
    one[0] = 0, one[1] = t->net->n_trainable;
    *lo = one;
    return 1;
}

static void gather_buffer(dt_trainer *t, int root, const float *compact, float *whole) {
    dt_device *d = t->net->dev;
    size_t one[2];
    const size_t *lo;
    int nu = state_units(t, &lo, one), P = t->size;
    size_t mine = 0;
    for (int k = 0; k < nu; k++) {
        size_t len = lo[k + 1] - lo[k];
        mine += dt_shard_lo(len, P, t->rank + 1) - dt_shard_lo(len, P, t->rank);
    }
    float *h = mallocCheck((mine ? mine : 1) * sizeof(float));
    if (mine) d->to_host(d, h, compact, mine * sizeof(float));
    int *cnt = mallocCheck((size_t)P * sizeof(int)), *dis = mallocCheck((size_t)P * sizeof(int));
    size_t pos = 0;
    for (int k = 0; k < nu; k++) {
        size_t len = lo[k + 1] - lo[k];
        DT_ASSERT(len <= (size_t)INT_MAX);  // (MPI counts)
        for (int r = 0; r < P; r++) {
            dis[r] = (int)dt_shard_lo(len, P, r);
            cnt[r] = (int)dt_shard_lo(len, P, r + 1) - dis[r];
        }
        MPI_Gatherv(h + pos, cnt[t->rank], MPI_FLOAT, t->rank == root ? whole + lo[k] : NULL,
                    cnt, dis, MPI_FLOAT, root, t->comm);
        pos += (size_t)cnt[t->rank];
    }
    free(cnt), free(dis), free(h);
}

void dt_trainer_gather_state(dt_trainer *t, int root, float *m, float *v) {
    DT_ASSERT(t && t->opt);
    const dt_optim *opt = t->opt;
    dt_device *d = t->net->dev;
    size_t n = t->net->n_trainable;
    if (!opt->sharded) {  // whole on every rank already
        if (t->rank == root && n) {
            d->to_host(d, m, opt->velocity, n * sizeof(float));
            if (v && opt->second) d->to_host(d, v, opt->second, n * sizeof(float));
        }
        return;
    }
    gather_buffer(t, root, opt->velocity, m);
    if (opt->second) gather_buffer(t, root, opt->second, v);
}

void dt_trainer_scatter_state(dt_trainer *t, const float *m, const float *v, long step) {
    DT_ASSERT(t && t->opt);
    dt_optim *opt = t->opt;
    dt_device *d = t->net->dev;
    size_t one[2];
    const size_t *lo;
    int nu = opt->sharded ? state_units(t, &lo, one) : 0;
    if (!opt->sharded && t->net->n_trainable) {
        size_t bytes = t->net->n_trainable * sizeof(float);
        d->from_host(d, opt->velocity, m, bytes);
        if (opt->second && v) d->from_host(d, opt->second, v, bytes);
    }
    size_t pos = 0;
    for (int k = 0; k < nu; k++) {
        size_t len = lo[k + 1] - lo[k], a = dt_shard_lo(len, t->size, t->rank);
        size_t c = dt_shard_lo(len, t->size, t->rank + 1) - a;
        if (c) d->from_host(d, opt->velocity + pos, m + lo[k] + a, c * sizeof(float));
        if (c && opt->second && v)
            d->from_host(d, opt->second + pos, v + lo[k] + a, c * sizeof(float));
        pos += c;
    }
    opt->step = step;
}
