// train_comm.c — the trainer's communication: fusion buckets of the gradient buffer, their
// allreduces started during backward as soon as each bucket is complete (overlap, Goyal et
// al. 2017 §4: "we start the allreduce of a layer's gradient as soon as it is computed";
// Jia et al. 2018's tensor fusion), progressed between layers, waited for after backward,
// and the bookkeeping of how much communication was hidden. Not here: the rest of the step
// (train.c), the algorithms (coll/), the planner (coll/fusion.c).
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "coll/coll_cost.h"
#include "train.h"

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

// ---- one step's backward and gradient allreduce ----

typedef struct {
    dt_trainer *t;
    dt_coll_req **req;  // per bucket, NULL until started (and after it is waited for)
    char *done;         // per bucket: progress saw it complete
    int next;           // the next bucket to start
    size_t final_lo;    // backward has made the gradient buffer final from here up
    int n_events;
    double t0, busy_since, busy;  // wall clock; busy_since < 0: nothing in flight
    int inflight;
} step_ctx;

static double now(const step_ctx *s) { return MPI_Wtime() - s->t0; }

static void start_bucket(step_ctx *s, int b) {
    dt_trainer *t = s->t;
    const dt_bucket *k = &t->buckets[b];
    dt_error err;
    // Stamped before the start: it posts the first rounds, and with MPI's single-copy
    // transfers (CMA) a posted message may be copied inside that call, a large part of a
    // big bucket (151 MB: ~9 of its ~28 ms on the project's VM, bench/VALIDATION.md).
    double t0 = now(s);
    s->req[b] = dt_allreduce_start(t->coll, t->net->grads + k->lo, k->hi - k->lo, DT_F32, &err);
    if (!s->req[b]) {  // the options were checked at dt_trainer_set_comm
        fprintf(stderr, "dtlab: internal error: %s\n", err.msg);
        abort();
    }
    if (s->inflight++ == 0) s->busy_since = t0;
    t->bucket_start[b] = t0;
}

static void finished(step_ctx *s, int b) {
    s->done[b] = 1;
    s->t->bucket_end[b] = now(s);
    if (--s->inflight == 0) s->busy += now(s) - s->busy_since;
}

// Whether the next bucket to start holds only final gradients once backward has made the
// buffer final from lo up: buckets are ranges of the gradient buffer, started from the top
// down as backward walks it.
static int next_bucket_complete(const step_ctx *s, size_t lo) {
    const dt_trainer *t = s->t;
    return s->next < t->n_buckets && t->buckets[s->next].lo >= lo;
}

// Buckets go through one channel, in order: the next starts once its gradients are final
// and the one before it has finished. NCCL runs a communicator's collectives one after
// another on its stream, and Horovod's background thread one fused tensor at a time; the
// fusion planner's cost model assumes exactly this (fusion.h). Concurrent allreduces would
// also each take a whole link where SimGrid does not make them share it (its FATPIPE
// intra-node loopback, sim/platform_write.c).
static void start_next(step_ctx *s) {
    if (s->inflight == 0 && next_bucket_complete(s, s->final_lo)) start_bucket(s, s->next++);
}

// Progress the allreduce in flight; when it completes, start the next bucket if it is
// ready (only while backward runs with overlap: otherwise the caller starts them).
static void poll(step_ctx *s) {
    for (int b = 0; b < s->next; b++) {
        if (!s->req[b] || s->done[b]) continue;
        if (dt_allreduce_progress(s->req[b])) finished(s, b);
    }
    if (s->t->overlap && s->t->planned) start_next(s);
}

// Whether the host must wait for the kernels of the layer whose gradients [lo, ...) just
// became final (dev->sync) before it stamps their ready time, polls and starts buckets.
// A host thread polls beside the GPU stream after each layer's kernels (docs/architecture.md,
// "Start, progress, wait"); on the model device the wait is where the layer's simulated
// time passes, so it decides when, in simulated time, communication happens. It must wait:
//  - when a bucket starts here: its allreduce may begin only once its last gradient is
//    computed. MPI reads the buffer in place, and on the model device an earlier start
//    would send gradients that do not exist yet: backward would seem to hide more of the
//    allreduce than it can;
//  - while an allreduce is in flight: it posts its next round only when polled, so the
//    polls must come one after each layer's time, as a polling thread's would; otherwise
//    several layers' time passes in one go with the allreduce unpolled, and its next
//    rounds start late;
//  - in the planning step (SEGMENTS/AUTO) and with layer_times: the ready times measured
//    here are exact only after the wait.
// Otherwise nothing observes the time between layers: skipping the wait charges the same
// time at the next one, with fewer SimGrid events. The cpu device is synchronous (its wait
// costs nothing). The cuda device's kernels run on while the host polls, and a bucket's
// staged copies are ordered after them on the GPU, so it waits only to measure ready times.
// Without overlap nothing communicates during backward.
static int must_wait_for_layer(const step_ctx *s, const dt_device *d, size_t lo) {
    const dt_trainer *t = s->t;
    if (!t->overlap) return 0;
    if (!t->planned) return 1;  // the step that measures ready times for the planner
    if (d->device_memory) return 0;
    return t->layer_times || s->inflight > 0 || next_bucket_complete(s, lo);
}

static void on_ready(void *ctx, dt_net *net, int layer, size_t lo, size_t hi) {
    (void)layer;
    step_ctx *s = ctx;
    dt_trainer *t = s->t;
    if (must_wait_for_layer(s, net->dev, lo)) net->dev->sync(net->dev);
    if (s->n_events < t->n_events) t->events[s->n_events++] = (dt_grad_event){now(s), lo, hi};
    if (lo < s->final_lo) s->final_lo = lo;
    poll(s);  // and start the next bucket if it is ready and the channel free
}

// backward (loss scale 1), then every bucket's allreduce complete: net->grads holds the sum
// over the ranks (not yet divided by P)
void dt_trainer_backward_allreduce(dt_trainer *t) {
    dt_net *net = t->net;
    dt_device *d = net->dev;
    int nb_max = t->n_buckets > 0 ? t->n_buckets : 1;
    step_ctx s = {t, callocCheck((size_t)nb_max, sizeof(dt_coll_req *)),
                  callocCheck((size_t)nb_max, 1), 0, SIZE_MAX, 0, MPI_Wtime(), -1.0, 0.0, 0};
    dt_net_backward(net, t->loss_scaling ? t->scaler.scale : 1.0f, on_ready, &s);
    if (d->device_memory && d->mark) {  // the GPU is still computing: progress meanwhile
        uint64_t m = d->mark(d);
        while (!d->done(d, m)) poll(&s);
    }
    d->sync(d);  // the model device: backward's last kernels take their time here
    double bw_end = now(&s);
    if (!t->planned) {  // first step of SEGMENTS/AUTO: plan from rank 0's ready times
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
        free(s.req), free(s.done);
        s.req = callocCheck((size_t)(t->n_buckets + 1), sizeof(dt_coll_req *));
        s.done = callocCheck((size_t)(t->n_buckets + 1), 1);
    }
    for (int b = 0; b < t->n_buckets; b++) {  // the rest, one after another
        if (b == s.next) start_bucket(&s, s.next++);
        dt_allreduce_wait(s.req[b]);
        if (!s.done[b]) finished(&s, b);
    }
    double end = now(&s);
    t->last_backward_start = s.t0;
    t->last_backward = bw_end;
    t->last_comm = s.busy;
    t->last_exposed = end - bw_end;
    t->sum_backward += t->last_backward;
    t->sum_comm += t->last_comm;
    t->sum_exposed += t->last_exposed;
    t->n_stats++;
    free(s.req), free(s.done);
}
