// student_fusion.h — lesson 07's contract: the bucket planner (which consecutive gradients of
// backward go into one allreduce) and the overlap (starting each bucket's allreduce during
// backward, as soon as its last gradient is final). Given by the lesson; you write the four
// functions in student_fusion.c. dtlab's own versions: nn/coll/fusion.c (the planner) and
// nn/train_replicate.c (the overlap); write yours first.
#ifndef LESSON07_STUDENT_FUSION_H
#define LESSON07_STUDENT_FUSION_H

#include <math.h>
#include <stddef.h>

#include "coll/coll.h"
#include "coll/fusion.h"

// ---- the planner (nn/coll/fusion.h says the same at more length) ----
// Events: backward reports event i = {ready, lo, hi}: the gradient elements [lo, hi) became
// final `ready` seconds after backward began. The ranges tile the flat gradient buffer from
// the top down (ev[0].hi = n, ev[i].hi = ev[i-1].lo, ev[n_ev-1].lo = 0); layers without
// parameters give EMPTY events (lo == hi), and ready times never decrease.
// Buckets: a bucket is a run of consecutive events, written as out[j].first_event and
// out[j].last_event (inclusive), in backward order. Every bucket but the last ENDS at a
// nonempty event: an empty event joins the bucket below it (the next one), so it never
// delays the bucket above. The last bucket ends at event n_ev-1. Every bucket holds at least
// one nonempty event; no nonempty event: no bucket (return 0).
// You fill first_event and last_event; plan_times() below fills lo, hi, start and finish.

// Horovod's HOROVOD_FUSION_THRESHOLD / PyTorch DDP's bucket_cap_mb: walk the events in
// backward order adding each one's bytes ((hi - lo) * elem_bytes) to the open bucket, and
// close it at the first nonempty event that brings it to >= threshold bytes; whatever is
// left forms the last bucket. Returns the number of buckets written to out (room for n_ev).
int plan_bytes(const dt_grad_event *ev, int n_ev, size_t elem_bytes, size_t threshold,
               dt_bucket *out);

// Tencent's split into K segments (Jia et al. 2018, "tensor fusion"): exactly min(K, m)
// buckets (m = the number of nonempty events) whose split points MINIMISE the modelled
// finish of the last allreduce, under the one-channel model (Shi, Wang & Chu 2019):
//     start_j  = max(ready of bucket j's last event, finish_{j-1})   (finish_{-1} = -inf)
//     finish_j = start_j + cost(ctx, bytes of bucket j)
// (the last bucket's ready is that of event n_ev-1). By dynamic programming over the
// nonempty events; the number of splits is large (m-1 choose K-1), so do not enumerate them.
int plan_segments(const dt_grad_event *ev, int n_ev, size_t elem_bytes, int k,
                  dt_comm_cost_fn cost, void *ctx, dt_bucket *out);

// Given: fills lo, hi (elements), start and finish (the model above) of the nb buckets
// from their first_event and last_event.
static inline void plan_times(const dt_grad_event *ev, size_t elem_bytes, dt_comm_cost_fn cost,
                              void *ctx, dt_bucket *b, int nb) {
    double finish = -INFINITY;
    for (int j = 0; j < nb; j++) {
        b[j].hi = ev[b[j].first_event].hi, b[j].lo = ev[b[j].last_event].lo;
        double ready = ev[b[j].last_event].ready;
        b[j].start = ready > finish ? ready : finish;
        b[j].finish = finish = b[j].start + (cost ? cost(ctx, (b[j].hi - b[j].lo) * elem_bytes) : 0);
    }
}

// ---- the overlap ----
#define OVERLAP_MAX_BUCKETS 256

typedef struct {
    dt_coll *coll;          // the allreduce library (coll.h), the same on every rank
    float *grads;           // the flat gradient buffer: event ranges are offsets into it
                            // (pass grads + lo to the library; the grader runs your code in a
                            // process of its own, where no memory backs it: reading or
                            // writing it there crashes, lessons/kit/subject.h)
    const dt_bucket *plan;  // the buckets, in backward order (every rank has the same plan)
    int n_buckets;
    // yours to use: the requests in flight, and whatever else you need to keep
    dt_coll_req *req[OVERLAP_MAX_BUCKETS];
    int next;               // e.g. the next bucket to start (0 at the beginning)
} overlap_state;

// Called by backward after event `event` (0, 1, 2, ... in order): its gradient range is
// final. Start the allreduce (the SUM over ranks, float32, in place: dt_allreduce_start) of
// every bucket whose last gradient is now final — not one before — and let the ones in
// flight advance (dt_coll_progress_all) while backward goes on.
void overlap_ready(overlap_state *s, int event);

// Called once after backward: wait for every allreduce (dt_allreduce_wait). Afterwards
// grads holds the sum over ranks of every bucket, bit-identical to reducing the same
// buckets one by one with dt_allreduce after backward.
void overlap_finish(overlap_state *s);

#endif
