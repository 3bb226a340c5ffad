// rank_zero.c — one simulated training step under ZeRO (Rajbhandari et al. 2020 §5, "ZeRO-DP";
// sim/zero.h), on the model device, with the library's reduce-scatter and allgather (nn/coll,
// "the ring's two halves"):
//   stage 1 (P_os) and 2 (P_os+g): forward, backward, reduce-scatter of the gradients into
//     each rank's shard, the optimizer update of that shard, allgather of the parameters;
//   stage 3 (P_os+g+p): allgather of the parameters before forward and again before backward
//     (each rank keeps only its shard between them), backward, reduce-scatter, the shard's
//     update: 1.5x the elements of stages 1-2 (§7.2.2).
// Stages 1 and 2 send the same messages and differ in the memory they keep (sim/zero.c). What
// the step leaves out, so that sharding here costs at most what it does in practice: the
// collectives run whole, after backward or before a pass (no bucketing, no per-layer
// prefetch overlapping compute as DeepSpeed and FSDP do), and stage 3's gathers are one
// collective of the whole model, not one per layer. The trainer's own ZeRO (nn/train_shard.c)
// is the real-numbers path; this one prices the stages for any optimizer the model device has.
#include "rank_zero.h"

#include <stdio.h>
#include <stdlib.h>

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

const char *dt_rank_zero_algo(const dt_trainer *tr) {
    dt_algo a = dt_coll_get_opts(tr->coll)->algo;
    int pow2 = (tr->size & (tr->size - 1)) == 0;
    if (a == DT_ALGO_MPI || (a == DT_ALGO_RHD && pow2)) return dt_algo_name(a);
    return dt_algo_name(DT_ALGO_RING);
}

void dt_rank_zero_step(dt_trainer *tr, dt_opt_kind kind, int stage, const void *x_host,
                       const int32_t *y_host) {
    dt_net *net = tr->net;
    dt_device *d = net->dev;
    size_t n = net->n_trainable;
    size_t lo = dt_shard_lo(n, tr->size, tr->rank), hi = dt_shard_lo(n, tr->size, tr->rank + 1);
    double comm = 0;
    dt_error err = {0};
    dt_net_set_batch(net, x_host, y_host);
    if (stage >= 3) comm += gather(tr, net->params, n);  // forward's parameters
    dt_net_forward(net, 1);
    dt_net_loss(net);
    if (stage >= 3) comm += gather(tr, net->params, n);  // backward's, gathered again
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
    if (stage <= 2) comm += gather(tr, net->params, n);  // everyone's updated parameters
    d->sync(d);
    tr->last_comm = comm;
}
