// train_comm.c — the trainer's communication plan (dt_trainer_set_comm): the allreduce the
// ranks agree on, and the fusion buckets of the gradient buffer (Jia et al. 2018's tensor
// fusion; Horovod's threshold), planned at once from a byte threshold or, from one step's
// measured gradient-ready times, by the cost model (the planner: coll/fusion.c). Not here:
// running the buckets' allreduces during backward (train_replicate.c), the algorithms
// (coll/).
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "coll/coll_cost.h"
#include "train_strategy.h"

// The static events of backward: layer t's range of the gradient buffer, top down (the
// same walk as dt_net_backward). Times are filled in by a measured step.
static void static_events(dt_trainer *t) {
    dt_net *net = t->net;
    size_t mark = net->n_trainable;
    t->n_events = net->n_layers;
    for (int k = 0, i = net->n_layers - 1; i >= 0; i--, k++) {
        const dt_layer *l = net->layers[i];
        size_t lo = l->n_trainable ? (size_t)l->w_off : mark;
        t->events[k] = (dt_grad_event){0.0, lo, mark};
        mark = lo;
    }
}

// The modelled time of one bucket's allreduce (coll_cost.c), for the planner; the library's
// own MPI_Allreduce has no model, so it is priced as a ring.
static double bucket_cost(void *ctx, size_t bytes) {
    dt_trainer *t = ctx;
    const dt_coll_opts *o = dt_coll_get_opts(t->coll);
    dt_algo a = dt_coll_resolve(t->coll, bytes);
    double c = dt_coll_cost(a, o, t->size, (double)bytes);
    if (!isfinite(c)) c = dt_coll_cost(DT_ALGO_RING, o, t->size, (double)bytes);
    return isfinite(c) && c >= 0 ? c : 0.0;
}

static int plan(dt_trainer *t, dt_error *err) {
    size_t wire = dt_coll_get_opts(t->coll)->wire_f16 ? 2 : 4;
    int nb = dt_fusion_plan(t->events, t->n_events, wire, &t->fusion, bucket_cost, t,
                            t->buckets, err);
    if (nb < 0) return -1;
    t->n_buckets = nb;
    t->planned = 1;
    return 0;
}

// SEGMENTS and AUTO choose split points from when the gradients become ready, so they plan
// after one measured step; until then the whole buffer is one bucket.
static int needs_times(const dt_fusion_opts *f) {
    return f->mode == DT_FUSION_SEGMENTS || f->mode == DT_FUSION_AUTO;
}

int dt_trainer_set_comm(dt_trainer *t, const dt_coll_opts *co, const dt_fusion_opts *fo,
                        int overlap, dt_error *err) {
    DT_ASSERT(t && t->net);
    dt_device *d = t->comm_dev ? t->comm_dev : t->net->dev;
    dt_coll_opts o = co ? *co : dt_coll_opts_default();
    // cuda memory is staged by the library (or passed on, with a CUDA-aware MPI: gpu_direct)
    dt_coll *c = dt_coll_create(t->comm, d, &o, err);
    if (c && o.wire_f16 && t->opt->sharded) {  // its allgather would round the parameters
        dt_fail(err, DT_EXIT_USAGE, "trainer: fp16 on the wire and a sharded optimizer: the "
                "allgather of the parameters would round them to fp16 (drop one of the two)");
        dt_coll_free(c);
        c = NULL;
    }
    int bad = c ? 0 : 1;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, t->comm);
    if (bad) {
        if (c) dt_coll_free(c);
        if (!c) return -1;
        return dt_fail(err, DT_EXIT_USAGE, "trainer: another rank rejected the allreduce "
                       "options (see its message)");
    }
    if (t->coll) dt_coll_free(t->coll);
    t->coll = c;
    t->fusion = fo ? *fo : (dt_fusion_opts){DT_FUSION_BYTES, SIZE_MAX, 1};
    t->overlap = overlap;
    if (!t->events) {
        t->events = callocCheck((size_t)t->net->n_layers + 1, sizeof(dt_grad_event));
        t->buckets = callocCheck((size_t)t->net->n_layers + 1, sizeof(dt_bucket));
        t->bucket_start = callocCheck((size_t)t->net->n_layers + 1, sizeof(double));
        t->bucket_end = callocCheck((size_t)t->net->n_layers + 1, sizeof(double));
    }
    static_events(t);
    dt_norm_plan_free(t->norms);  // (cut from the buckets)
    t->norms = NULL;
    t->planned = 0;
    t->n_buckets = 0;
    if (!needs_times(&t->fusion)) return plan(t, err);
    return 0;
}

void dt_trainer_reset_stats(dt_trainer *t) {
    t->sum_backward = t->sum_comm = t->sum_exposed = 0.0;
    t->n_stats = 0;
}

// The first step of SEGMENTS/AUTO has measured when each layer's gradients became ready:
// plan from rank 0's times, broadcast, so that every rank starts the same allreduces.
void dt_trainer_plan_measured(dt_trainer *t) {
    double *times = mallocCheck((size_t)t->n_events * sizeof(double));
    for (int i = 0; i < t->n_events; i++) times[i] = t->events[i].ready;
    MPI_Bcast(times, t->n_events, MPI_DOUBLE, 0, t->comm);
    for (int i = 0; i < t->n_events; i++) t->events[i].ready = times[i];
    free(times);
    dt_error err;
    if (plan(t, &err)) {  // cannot happen with measured, monotone times
        fprintf(stderr, "dtlab: internal error: %s\n", err.msg);
        abort();
    }
}
