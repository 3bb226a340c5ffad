// student_fusion.c — lesson 07: the bucket planner and the overlap (the contract is in
// student_fusion.h; the idea and the grading in README.md).
//   plan_bytes: Horovod's fusion threshold, PyTorch DDP's bucket_cap_mb.
//   plan_segments: Jia et al. 2018's K segments, placed by the one-channel model of
//   wait-free backpropagation with merged gradients (Shi, Wang & Chu 2019).
//   overlap_*: each bucket's allreduce starts the moment its last gradient is final and
//   progresses while backward computes the layers below.
#include <stdlib.h>

#include "student_fusion.h"

int plan_bytes(const dt_grad_event *ev, int n_ev, size_t elem_bytes, size_t threshold,
               dt_bucket *out) {
    (void)ev, (void)n_ev, (void)elem_bytes, (void)threshold, (void)out;
    // TODO(student): walk the events in backward order. Skip the empty ones (they join
    //   whatever bucket comes next). Add a nonempty event's bytes to the open bucket; when
    //   the bucket then holds >= threshold bytes, close it: out[nb].first_event = the first
    //   event after the previous bucket, out[nb].last_event = this event.
    //   After the walk: bytes left open form the last bucket (up to event n_ev-1); if none
    //   are left, the trailing empty events join the last bucket (its last_event = n_ev-1).
    return 0;
}

int plan_segments(const dt_grad_event *ev, int n_ev, size_t elem_bytes, int k,
                  dt_comm_cost_fn cost, void *ctx, dt_bucket *out) {
    (void)ev, (void)n_ev, (void)elem_bytes, (void)k, (void)cost, (void)ctx, (void)out;
    // TODO(student): 1. list the nonempty events ("units") u = 0..m-1; k = min(k, m).
    // TODO(student): 2. dynamic programming: F[j][b] = the earliest finish of j buckets that
    //   hold units [0, b):
    //     F[0][0] = -inf, F[0][b > 0] = +inf,
    //     F[j][b] = min over a < b of  max(ready(b), F[j-1][a]) + cost(bytes of units [a, b))
    //   where ready(b) is the ready time of unit b-1's event (of event n_ev-1 when b = m),
    //   and the bytes of units [a, b) are (ev[unit a].hi - ev[unit b-1].lo) * elem_bytes.
    //   Remember the best a for each (j, b).
    // TODO(student): 3. walk the choices back from (k, m): bucket j-1 holds units [a, b);
    //   its first_event is the event after unit a-1 (0 when a = 0), its last_event unit
    //   b-1's event (n_ev-1 when b = m). Return k.
    return 0;
}

void overlap_ready(overlap_state *s, int event) {
    (void)s, (void)event;
    // TODO(student): start every bucket s->plan[s->next], s->plan[s->next + 1], ... whose
    //   last_event is now final (<= event): s->req[j] = dt_allreduce_start(s->coll,
    //   s->grads + lo, hi - lo, DT_F32, &err). Then let the ones in flight advance:
    //   dt_coll_progress_all(s->coll).
}

void overlap_finish(overlap_state *s) {
    (void)s;
    // TODO(student): wait for every allreduce you started (dt_allreduce_wait).
}
