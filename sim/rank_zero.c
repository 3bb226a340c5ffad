// rank_zero.c — one simulated training step under ZeRO (Rajbhandari et al. 2020 §5, "ZeRO-DP";
// sim/zero.h), on the model device, with the library's reduce-scatter and allgather (nn/coll,
// "the ring's two halves"):
//   stage 1 (P_os) and 2 (P_os+g): forward, backward, reduce-scatter of the gradients into
//     each rank's shard, the optimizer update of that shard, allgather of the parameters;
//     the collectives run whole, after backward (no bucketing), an upper bound of what
//     DeepSpeed's bucketed stages cost;
//   stage 3 (P_os+g+p): dtrain's own schedule (nn/train_zero.c, the trainer's hooks on the
//     layers): each layer's parameters allgathered before its forward and again before its
//     backward, the next layer's gather started before this layer computes (prefetch) and
//     freed after use, each layer's gradient reduce-scattered as soon as backward completes
//     it (two buckets at a time); 1.5x the elements of stages 1-2 (§7.2.2). The trainer is
//     given a sharded SGD and the update of its pieces is priced here with the model's
//     optimizer, one kernel over the shard, as for stages 1-2. The trainer's own AdamW and
//     LAMB (nn/optim_norms.c dt_optim_step_plan) launch a kernel per segment of the pieces
//     (a tensor's part: no decay on biases and norms, LAMB's ratio per tensor), and LAMB
//     an allreduce of its norms: running them here would add those launches (and LAMB's
//     messages) to every simulated gpt step at stages 1-3 and change its figures.
// Stages 1 and 2 send the same messages and differ in the memory they keep (sim/zero.c).
// The trainer's stage 1 and 2 (nn/train_shard.c, train_zero.c) are the real-numbers path
// of those; this one prices them for any optimizer the model device has.
#include "rank_zero.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "coll/coll_cost.h"
#include "train_zero.h"  // the trainer's ZeRO-3 state (nn/, internal to the trainer)
#include "zero.h"

static double gather(dt_trainer *tr, float *buf, size_t n) {
    dt_error err = {0};
    double t0 = MPI_Wtime();
    if (dt_allgather(tr->coll, buf, n, NULL, DT_F32, &err)) {
        fprintf(stderr, "dtsim: allgather: %s\n", err.msg);
        abort();
    }
    return MPI_Wtime() - t0;
}

// The optimizer's kernels on the shard [lo, hi): the element-wise update of its kind (LARS
// and LAMB: their norms, one reduction kernel per shard and the direction, as the layer-wise
// ratio needs)
static void update_shard(dt_device *d, dt_opt_kind kind, float *w, const float *g, size_t n) {
    if (!n) return;
    // the model device never reads these addresses: w serves as every state vector
    switch (kind) {
    case DT_OPT_SGD: d->sgd_update(d, w, g, w, n, 0.1f, 0.9f, 0.0f, 0); break;
    case DT_OPT_LARS:
        d->sumsq(d, w, n);
        d->sumsq(d, g, n);
        d->lars_update(d, w, g, w, n, 0.1f, 0.9f, 0.0f);
        break;
    case DT_OPT_ADAMW:
        d->adamw_update(d, w, g, w, w, n, 1e-4f, 0.9f, 0.999f, 1e-8f, 0.0f, 1e-4f, 1.0f);
        break;
    case DT_OPT_LAMB:
        d->lamb_direction(d, w, g, w, w, w, n, 0.9f, 0.999f, 1e-6f, 0.0f, 1.0f, 1.0f);
        d->sumsq(d, w, n);
        d->sumsq(d, w, n);
        d->axpy(d, -1e-4f, w, w, n);
        break;
    }
}

static dt_algo zero_algo(const dt_trainer *tr) {
    dt_algo a = dt_coll_get_opts(tr->coll)->algo;
    int pow2 = (tr->size & (tr->size - 1)) == 0;
    return a == DT_ALGO_MPI || (a == DT_ALGO_RHD && pow2) ? a : DT_ALGO_RING;
}

const char *dt_rank_zero_algo(const dt_trainer *tr) { return dt_algo_name(zero_algo(tr)); }

dt_optim *dt_rank_zero_optim(dt_net *net, int stage, int rank, int P, dt_opt_kind kind,
                             dt_error *err) {
    if (stage < 3) {
        dt_optim_config oc = dt_optim_config_default(kind);
        return dt_optim_create(net, &oc, err);
    }
    dt_optim_config oc = dt_optim_config_default(DT_OPT_SGD);  // (see the top of the file)
    size_t n = net->n_trainable;
    return dt_optim_create_shard(net, &oc, dt_shard_lo(n, P, rank), dt_shard_lo(n, P, rank + 1),
                                 err);
}

int dt_rank_zero_setup(dt_trainer *tr, int stage, dt_error *err) {
    return stage < 3 ? 0 : dt_trainer_set_shard(tr, DT_SHARD_PARAMETERS, err);
}

// Stage 3: dt_train_step's first half with the trainer's ZeRO hooks (nn/train.c
// dt_trainer_forward_backward), then the pieces' update with the model's optimizer
static void step3(dt_trainer *tr, dt_opt_kind kind, const void *x_host, const int32_t *y_host) {
    dt_device *d = tr->net->dev;
    dt_zero *z = dt_trainer_zero(tr);
    // each layer's gather waited for before its forward, the next one's started; gathered
    // again for backward, reduce-scattered layer by layer
    float loss = dt_trainer_forward_backward(tr, x_host, y_host);
    MPI_Allreduce(MPI_IN_PLACE, &loss, 1, MPI_FLOAT, MPI_SUM, tr->comm);
    d->scale(d, z->gshard, 1.0f / (float)tr->size, z->shard);  // the mean
    update_shard(d, kind, z->pshard, z->gshard, z->shard);
    d->sync(d);
}

int dt_rank_zero_units(const dt_trainer *tr) {
    const dt_zero *z = dt_trainer_zero(tr);
    return z ? z->n : 0;
}

uint64_t dt_rank_zero_bytes_sent(const dt_trainer *tr) {
    uint64_t b = dt_coll_bytes_sent(tr->coll);
    const dt_zero *z = dt_trainer_zero(tr);
    return z && z->pcoll ? b + dt_coll_bytes_sent(z->pcoll) : b;
}

// Stage 3's collectives priced one after another by the α-β-γ model (nn/coll/coll_cost.c):
// per layer unit its allgathers (sim/zero.h dt_zero3_units: two, a tied unit more) and a
// reduce-scatter, each half of its algorithm's allreduce
double dt_rank_zero_model_comm_s(const dt_trainer *tr) {
    if (!dt_trainer_zero(tr) || tr->size < 2) return 0;
    const dt_coll_opts *co = dt_coll_get_opts(tr->coll);
    dt_algo a = zero_algo(tr);
    if (a == DT_ALGO_MPI) a = DT_ALGO_RING;  // (the library's own has no model)
    int nl = tr->net->n_layers;
    size_t *lo = mallocCheck(((size_t)nl + 1) * sizeof(size_t));
    int *gathers = mallocCheck(((size_t)nl + 1) * sizeof(int));
    double peak, s = 0;
    int n = dt_zero3_units(tr->net, tr->shard_blocks, lo, gathers, &peak);
    for (int k = 0; k < n; k++) {
        double bytes = (double)(lo[k + 1] - lo[k]) * (co->wire_f16 ? 2.0 : 4.0);
        double c = dt_coll_cost(a, co, tr->size, bytes);
        if (isfinite(c)) s += (gathers[k] + 1) * c / 2;
    }
    free(lo), free(gathers);
    return s;
}

void dt_rank_zero_step(dt_trainer *tr, dt_opt_kind kind, int stage, const void *x_host,
                       const int32_t *y_host) {
    if (stage >= 3) {
        step3(tr, kind, x_host, y_host);
        return;
    }
    dt_net *net = tr->net;
    dt_device *d = net->dev;
    size_t n = net->n_trainable;
    size_t lo = dt_shard_lo(n, tr->size, tr->rank), hi = dt_shard_lo(n, tr->size, tr->rank + 1);
    double comm = 0;
    dt_error err = {0};
    dt_net_set_batch(net, x_host, y_host);
    dt_net_forward(net, 1);
    dt_net_loss(net);
    dt_net_backward(net, 1.0f, NULL, NULL);
    d->sync(d);
    double t0 = MPI_Wtime();
    if (dt_reduce_scatter(tr->coll, net->grads, n, NULL, DT_F32, &err)) {
        fprintf(stderr, "dtsim: reduce-scatter: %s\n", err.msg);
        abort();
    }
    comm += MPI_Wtime() - t0;
    d->scale(d, net->grads + lo, 1.0f / (float)tr->size, hi - lo);  // the mean
    update_shard(d, kind, net->params + lo, net->grads + lo, hi - lo);
    comm += gather(tr, net->params, n);  // everyone's updated parameters
    d->sync(d);
    tr->last_comm = comm;
}
