// train_replicate.c — the replicate strategy, plain data parallelism (PyTorch DDP, Horovod):
// every rank keeps the whole model, gradient and optimizer state; the gradient is summed by
// one allreduce per fusion bucket (Jia et al. 2018's tensor fusion), each started during
// backward as soon as its last gradient is final (Goyal et al. 2017 §4: "we start the
// allreduce of a layer's gradient as soon as it is computed") and progressed between layers,
// the rest started and waited for after backward; then every rank applies the same whole
// update. Not here: the step (train.c), the bucket plan (train_comm.c, coll/fusion.c), the
// allreduce itself (coll/, docs/architecture.md "Reading the ring allreduce").
#include <stdint.h>
#include <string.h>

#include "train_strategy.h"

typedef struct {
    dt_coll_req **req;  // per bucket, NULL until started (and after it is waited for)
    char *done;         // per bucket: progress saw it complete
    int next;           // the next bucket to start
    size_t final_lo;    // backward has made the gradient buffer final from here up
    int n_events;       // gradient-ready events recorded in this backward
    double busy_since, busy;  // seconds since backward's start; busy_since < 0: nothing
    int inflight;             // in flight
} dt_replicate;

void dt_replicate_setup(dt_trainer *t) {
    dt_replicate *s = callocCheck(1, sizeof *s);
    size_t room = (size_t)t->net->n_layers + 1;  // a plan has at most a bucket per layer
    s->req = callocCheck(room, sizeof(dt_coll_req *));
    s->done = callocCheck(room, 1);
    t->state = s;
    t->grad = t->net->grads;  // the whole gradient, summed on every rank
    t->grad_n = t->net->n_trainable;
}

void dt_replicate_free(dt_trainer *t) {
    dt_replicate *s = t->state;
    free(s->req), free(s->done), free(s);
    t->state = NULL;
}

void dt_replicate_begin(dt_trainer *t, int k) {
    (void)k;
    dt_replicate *s = t->state;
    memset(s->done, 0, (size_t)t->net->n_layers + 1);
    s->next = 0, s->final_lo = SIZE_MAX, s->n_events = 0;
    s->busy_since = -1.0, s->busy = 0.0, s->inflight = 0;
}

static double now(const dt_trainer *t) { return MPI_Wtime() - t->last_backward_start; }

static void start_bucket(dt_trainer *t, dt_replicate *s, int b) {
    const dt_bucket *k = &t->buckets[b];
    dt_error err;
    // Stamped before the start: it posts the first rounds, and with MPI's single-copy
    // transfers (CMA) a posted message may be copied inside that call, a large part of a
    // big bucket (151 MB: ~9 of its ~28 ms on the project's VM, bench/VALIDATION.md).
    double t0 = now(t);
    s->req[b] = dt_allreduce_start(t->coll, t->net->grads + k->lo, k->hi - k->lo, DT_F32, &err);
    if (!s->req[b]) {  // the options were checked at dt_trainer_set_comm
        fprintf(stderr, "dtlab: internal error: %s\n", err.msg);
        abort();
    }
    if (s->inflight++ == 0) s->busy_since = t0;
    t->bucket_start[b] = t0;
}

static void finished(dt_trainer *t, dt_replicate *s, int b) {
    s->done[b] = 1;
    t->bucket_end[b] = now(t);
    if (--s->inflight == 0) s->busy += now(t) - s->busy_since;
}

// Whether the next bucket to start holds only final gradients once backward has made the
// buffer final from lo up: buckets are ranges of the gradient buffer, started from the top
// down as backward walks it.
static int next_bucket_complete(const dt_trainer *t, const dt_replicate *s, size_t lo) {
    return s->next < t->n_buckets && t->buckets[s->next].lo >= lo;
}

// Buckets go through one channel, in order: the next starts once its gradients are final
// and the one before it has finished. NCCL runs a communicator's collectives one after
// another on its stream, and Horovod's background thread one fused tensor at a time; the
// fusion planner's cost model assumes exactly this (fusion.h). Concurrent allreduces would
// also each take a whole link where SimGrid does not make them share it (its FATPIPE
// intra-node loopback, sim/platform_write.c).
static void start_next(dt_trainer *t, dt_replicate *s) {
    if (s->inflight == 0 && next_bucket_complete(t, s, s->final_lo))
        start_bucket(t, s, s->next++);
}

// Progress the allreduce in flight; when it completes, start the next bucket if it is
// ready (only while backward runs with overlap: otherwise finish starts them).
void dt_replicate_progress(dt_trainer *t) {
    dt_replicate *s = t->state;
    for (int b = 0; b < s->next; b++) {
        if (!s->req[b] || s->done[b]) continue;
        if (dt_allreduce_progress(s->req[b])) finished(t, s, b);
    }
    if (t->overlap && t->planned) start_next(t, s);
}

// After each layer of backward: its gradients [lo, hi) are final. The host polls here, as a
// polling thread beside the GPU's stream would (docs/architecture.md, "Start, progress,
// wait"). In the step that measures ready times for the planner (SEGMENTS, AUTO) it first
// waits for the layer's kernels, so that the time stamped is when they ended; otherwise a
// world that must let a layer's time pass before a poll sees it is told whether one matters
// here (t->layer_wait: the simulator's model device), while a cpu's kernels are done and a
// GPU's bucket copies are ordered after them on its stream. Without overlap nothing
// communicates during backward.
void dt_replicate_on_gradient_ready(void *ctx, dt_net *net, int layer, size_t lo, size_t hi) {
    (void)layer;
    dt_trainer *t = ctx;
    dt_replicate *s = t->state;
    if (t->overlap && !t->planned)
        net->dev->sync(net->dev);
    else if (t->overlap && t->layer_wait)  // an allreduce in flight, or one starting here
        t->layer_wait(t->layer_wait_ctx, net, s->inflight > 0 || next_bucket_complete(t, s, lo));
    if (s->n_events < t->n_events) t->events[s->n_events++] = (dt_grad_event){now(t), lo, hi};
    if (lo < s->final_lo) s->final_lo = lo;
    dt_replicate_progress(t);  // and start the next bucket if it is ready and the channel free
}

// After backward: every bucket's allreduce complete, net->grads the sum over the ranks (not
// yet divided by P). Returns the seconds during which an allreduce was in flight.
double dt_replicate_finish(dt_trainer *t) {
    dt_replicate *s = t->state;
    if (!t->planned) dt_trainer_plan_measured(t);  // SEGMENTS/AUTO's first step
    for (int b = 0; b < t->n_buckets; b++) {  // the rest, one after another
        if (b == s->next) start_bucket(t, s, s->next++);
        dt_allreduce_wait(s->req[b]);
        s->req[b] = NULL;
        if (!s->done[b]) finished(t, s, b);
    }
    return s->busy;
}

// The whole update on every rank, from the whole averaged gradient (LAMB with piece_norms:
// its norms summed from the pieces a sharded run holds, train.h)
void dt_replicate_update(dt_trainer *t, float lr) {
    dt_net *net = t->net;
    if (t->opt->cfg.kind == DT_OPT_LAMB && t->piece_norms)
        dt_optim_step_plan(t->opt, net, dt_trainer_norm_plan(t), -1, net->params, 0,
                           net->grads, 0, lr, NULL, NULL);
    else
        dt_optim_step(t->opt, net, lr);
}

// Every copy whole (docs/formulas.md, "ZeRO": stage 0; stage 1 keeps them so too)
void dt_replicate_memory(const dt_trainer *t, dt_trainer_memory *m) {
    const dt_net *net = t->net;
    size_t f = sizeof(float);
    m->params = net->n_total * f;
    m->grads = net->n_trainable * f;
    if (net->amp != DT_AMP_FP32) {  // the half copy params_lp (+ its half bits), net_half.c
        size_t bits = dt_net_half_conv_bits(net) ? net->n_total * sizeof(uint16_t) : 0;
        m->half = net->n_total * f + bits;
        m->params += m->half;
    }
    m->params_peak = m->params;
    m->grads_peak = m->grads;
}
