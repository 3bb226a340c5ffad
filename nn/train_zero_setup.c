// train_zero_setup.c — the set-up of ZeRO stages 2 and 3 (dt_trainer_set_shard, nn/train.h):
// their checks, the units and this rank's pieces of them (the ring's split of each unit,
// coll.h dt_shard_lo: FSDP's even split of each flat parameter), and the move of the
// network's buffers into the sharded state: the whole gradient buffer freed (stages 2, 3),
// the parameters kept as this rank's pieces only (stage 3). Not here: the checks every
// strategy shares (train_setup.c), the hooks and the update (train_zero.c).
#include <string.h>

#include "train_strategy.h"
#include "train_zero.h"

// This rank's reason to refuse stage 2 or 3 (train_setup.c has checked what every sharded
// strategy needs), or 0.
int dt_shard_units_check(const dt_trainer *t, int stage, dt_error *err) {
    const char *name = stage == DT_SHARD_GRADIENTS ? "gradients" : "parameters";
    if (t->opt->step > 0)
        return dt_fail(err, DT_EXIT_USAGE, "trainer: --shard %s after %ld steps", name,
                       t->opt->step);
    if (stage == DT_SHARD_GRADIENTS && !t->planned)
        return dt_fail(err, DT_EXIT_USAGE, "--shard gradients needs a bucket plan known "
                       "before the first step: --fusion with a byte threshold (e.g. 25MB) or "
                       "none, not one planned from measured times");
    return 0;
}

// The unit holding trainable element off, or -1 (not trainable, off < 0).
static int unit_of(const dt_zero *z, const dt_net *net, ssize_t off) {
    if (off < 0 || (size_t)off >= net->n_trainable) return -1;
    int k = 0;
    while (k + 1 < z->n && z->lo[k + 1] <= (size_t)off) k++;
    return k;
}

static void make_units(dt_trainer *t, dt_zero *z) {
    dt_net *net = t->net;
    int nl = net->n_layers;
    z->lo = mallocCheck(((size_t)(nl > t->n_buckets ? nl : t->n_buckets) + 1) * sizeof(size_t));
    z->n = 0;
    if (z->stage == DT_SHARD_GRADIENTS) {  // the buckets, listed top down: ascending here
        for (int b = t->n_buckets - 1; b >= 0; b--) z->lo[z->n++] = t->buckets[b].lo;
    } else if (t->shard_blocks) {  // stage 3, FSDP's units: a block each
        z->n = dt_net_blocks(net, z->lo);
    } else {  // stage 3: a layer each
        for (int i = 0; i < nl; i++)
            if (net->layers[i]->n_trainable) z->lo[z->n++] = (size_t)net->layers[i]->w_off;
    }
    z->lo[z->n] = net->n_trainable;
    DT_ASSERT(z->n == 0 || z->lo[0] == 0);
    size_t n = (size_t)z->n + 1;
    z->plo = mallocCheck(n * sizeof(size_t));
    z->phi = mallocCheck(n * sizeof(size_t));
    z->at = mallocCheck(n * sizeof(size_t));
    z->shard = 0;
    for (int k = 0; k < z->n; k++) {
        size_t len = z->lo[k + 1] - z->lo[k];
        z->plo[k] = z->lo[k] + dt_shard_lo(len, z->P, z->r);
        z->phi[k] = z->lo[k] + dt_shard_lo(len, z->P, z->r + 1);
        z->at[k] = z->shard;
        z->shard += z->phi[k] - z->plo[k];
    }
    z->lu = mallocCheck(2 * (size_t)nl * sizeof(int) + 1);
    z->nextp = mallocCheck(((size_t)nl + 1) * sizeof(int));
    z->prevp = mallocCheck(((size_t)nl + 1) * sizeof(int));
    for (int i = 0; i < nl; i++) {
        const dt_layer *l = net->layers[i];
        int a = unit_of(z, net, l->w_off), b = unit_of(z, net, l->b_off);
        if (a < 0) a = b, b = -1;
        z->lu[2 * i] = a;
        z->lu[2 * i + 1] = b == a ? -1 : b;
    }
    int last = -1;
    for (int i = 0; i <= nl; i++) {
        z->prevp[i] = last;
        if (i < nl && z->lu[2 * i] >= 0) last = i;
    }
    last = -1;
    for (int i = nl - 1; i >= 0; i--) {
        z->nextp[i] = last;
        if (z->lu[2 * i] >= 0) last = i;
    }
    z->nextp[nl] = -1;
}

// After every rank agreed (train_setup.c): the units, this rank's pieces, the buffers.
void dt_shard_units_setup(dt_trainer *t) {
    int stage = t->shard;
    dt_net *net = t->net;
    dt_device *d = net->dev;
    dt_zero *z = callocCheck(1, sizeof *z);
    z->stage = stage, z->P = t->size, z->r = t->rank;
    make_units(t, z);
    size_t n = (size_t)z->n + 1;
    z->params = callocCheck(n, sizeof(float *));
    z->grads = callocCheck(n, sizeof(float *));
    z->preq = callocCheck(n, sizeof(dt_coll_req *));
    z->greq = callocCheck(n, sizeof(dt_coll_req *));
    z->resident = callocCheck(n, sizeof(int));
    z->gshard = d->alloc(d, (z->shard ? z->shard : 1) * sizeof(float));
    z->g_inflight = -1;
    dt_error err;
    if (dt_optim_reshard(t->opt, z->shard, &err)) {  // (check: no step yet)
        fprintf(stderr, "dtlab: internal error: %s\n", err.msg);
        abort();
    }
    z->half = net->amp != DT_AMP_FP32;
    if (z->half) {  // forward makes the whole rounded copies only from a whole master
        if (net->params_lp) d->free(d, net->params_lp);
        net->params_lp = NULL;
        net->params_half = 0;
        if (stage == DT_SHARD_PARAMETERS && dt_net_half_conv_bits(net)) {
            if (net->params_bf16) d->free(d, net->params_bf16);
            net->params_bf16 = NULL;
            z->params_h = callocCheck(n, sizeof(uint16_t *));
        }
    }
    if (stage == DT_SHARD_PARAMETERS || z->half) {  // the master: this rank's pieces
        z->pshard = d->alloc(d, (z->shard ? z->shard : 1) * sizeof(float));
        for (int k = 0; k < z->n; k++)
            d->copy(d, z->pshard + z->at[k], net->params + z->plo[k],
                    (z->phi[k] - z->plo[k]) * sizeof(float));
    }
    if (stage == DT_SHARD_PARAMETERS) {  // keep this rank's pieces and the statistics only
        z->pcoll = dt_coll_create(t->comm, t->comm_dev ? t->comm_dev : d,
                                  dt_coll_get_opts(t->coll), &err);
        if (!z->pcoll) {  // the options were accepted for t->coll on every rank
            fprintf(stderr, "dtlab: internal error: %s\n", err.msg);
            abort();
        }
        size_t s = net->n_total - net->n_trainable;
        z->stats = d->alloc(d, (s ? s : 1) * sizeof(float));
        if (s) d->copy(d, z->stats, net->params + net->n_trainable, s * sizeof(float));
        d->free(d, net->params);
        net->params = NULL;
    }
    if (net->grads) d->free(d, net->grads);
    net->grads = NULL;
    z->view = (dt_net_units){z->n, z->lo, z->params, z->grads, z->stats, z->params_h};
    net->units = &z->view;
    t->state = z;
    t->grad = z->gshard, t->grad_n = z->shard;  // the reduced gradient: this rank's pieces
    t->n_units = z->n, t->unit_lo = z->lo;
}

void dt_shard_units_free(dt_trainer *t) {
    dt_zero *z = t->state;
    dt_device *d = t->net->dev;
    for (int k = 0; k < z->n; k++) {
        if (z->preq[k]) dt_allreduce_wait(z->preq[k]);
        if (z->greq[k]) dt_allreduce_wait(z->greq[k]);
        if (z->params[k]) d->free(d, z->params[k]);
        if (z->grads[k]) d->free(d, z->grads[k]);
        if (z->params_h && z->params_h[k]) d->free(d, z->params_h[k]);
    }
    if (z->gshard) d->free(d, z->gshard);
    if (z->pshard) d->free(d, z->pshard);
    if (z->stats) d->free(d, z->stats);
    if (z->pcoll) dt_coll_free(z->pcoll);  // collective, as dt_trainer_free
    free(z->lo), free(z->plo), free(z->phi), free(z->at), free(z->params), free(z->grads);
    free(z->preq), free(z->greq), free(z->resident), free(z->lu), free(z->nextp);
    free(z->prevp), free(z->params_h);
    t->net->units = NULL;
    t->net->params_half = 0;
    t->net->on_params = NULL;
    free(z);
    t->state = NULL;
    t->n_units = 0, t->unit_lo = NULL;
}
