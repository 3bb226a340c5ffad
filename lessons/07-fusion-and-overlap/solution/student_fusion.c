// student_fusion.c — lesson 07: the bucket planner and the overlap (the contract is in
// student_fusion.h; the idea and the grading in README.md).
//   plan_bytes: Horovod's fusion threshold (Sergeev & Del Balso 2018), DDP's bucket_cap_mb.
//   plan_segments: Jia et al. 2018's K segments, placed by the one-channel model of
//   wait-free backpropagation with merged gradients (Shi, Wang & Chu 2019).
//   overlap_*: each bucket's allreduce starts the moment its last gradient is final and
//   progresses while backward computes the layers below (Goyal et al. 2017 §4; Horovod).
#include <limits.h>
#include <stdlib.h>

#include "student_fusion.h"

int plan_bytes(const dt_grad_event *ev, int n_ev, size_t elem_bytes, size_t threshold,
               dt_bucket *out) {
    int nb = 0, first = 0;
    size_t held = 0;  // bytes of the open bucket
    for (int i = 0; i < n_ev; i++) {
        if (ev[i].lo == ev[i].hi) continue;  // empty: it joins whatever bucket comes next
        held += (ev[i].hi - ev[i].lo) * elem_bytes;
        if (held >= threshold) {  // the first nonempty event that fills it closes it
            out[nb].first_event = first, out[nb].last_event = i;
            nb++, first = i + 1, held = 0;
        }
    }
    if (held > 0) {  // what is left forms the last bucket
        out[nb].first_event = first, out[nb].last_event = n_ev - 1;
        nb++;
    } else if (nb > 0) {
        out[nb - 1].last_event = n_ev - 1;  // trailing empty events join the last bucket
    }
    return nb;
}

int plan_segments(const dt_grad_event *ev, int n_ev, size_t elem_bytes, int k,
                  dt_comm_cost_fn cost, void *ctx, dt_bucket *out) {
    int *unit = malloc(((size_t)n_ev + 1) * sizeof *unit), m = 0;
    for (int i = 0; i < n_ev; i++)
        if (ev[i].lo < ev[i].hi) unit[m++] = i;
    if (m == 0) {
        free(unit);
        return 0;
    }
    if (k > m) k = m;
    // F[j][b]: the earliest finish of j buckets holding units [0, b); arg: where the j-th
    // bucket starts. F[j][b] = min over a of max(ready(b), F[j-1][a]) + cost(units [a, b)).
    size_t w = (size_t)m + 1;
    double *F = malloc((size_t)(k + 1) * w * sizeof *F);
    int *arg = malloc((size_t)(k + 1) * w * sizeof *arg);
    for (size_t i = 0; i < (size_t)(k + 1) * w; i++) F[i] = INFINITY, arg[i] = -1;
    F[0] = -INFINITY;
    for (int b = 1; b <= m; b++) {
        double ready = b == m ? ev[n_ev - 1].ready : ev[unit[b - 1]].ready;
        for (int a = 0; a < b; a++) {
            double c = cost(ctx, (ev[unit[a]].hi - ev[unit[b - 1]].lo) * elem_bytes);
            for (int j = 1; j <= k && j <= a + 1; j++) {
                double prev = F[(size_t)(j - 1) * w + a];
                if (prev == INFINITY) continue;
                double f = (ready > prev ? ready : prev) + c;
                if (f < F[(size_t)j * w + b]) F[(size_t)j * w + b] = f, arg[(size_t)j * w + b] = a;
            }
        }
    }
    // walk the choices back: bucket j-1 holds units [arg, b)
    for (int j = k, b = m; j >= 1; j--) {
        int a = arg[(size_t)j * w + b];
        out[j - 1].first_event = a == 0 ? 0 : unit[a - 1] + 1;
        out[j - 1].last_event = b == m ? n_ev - 1 : unit[b - 1];
        b = a;
    }
    free(F), free(arg), free(unit);
    return k;
}

// Start the allreduce of every bucket from s->next on whose last event is <= upto, in plan
// order (every rank starts the same buckets in the same order: requests match by order).
static void start_ready(overlap_state *s, int upto) {
    dt_error err;
    while (s->next < s->n_buckets && s->plan[s->next].last_event <= upto) {
        const dt_bucket *b = &s->plan[s->next];
        s->req[s->next] = dt_allreduce_start(s->coll, s->grads + b->lo, b->hi - b->lo, DT_F32,
                                             &err);
        if (!s->req[s->next]) abort();  // the library refused (err.msg): a broken plan
        s->next++;
    }
}

void overlap_ready(overlap_state *s, int event) {
    start_ready(s, event);
    dt_coll_progress_all(s->coll);  // the buckets in flight advance between layers
}

void overlap_finish(overlap_state *s) {
    start_ready(s, INT_MAX);  // none left when backward reported its every event
    for (int j = 0; j < s->next; j++) dt_allreduce_wait(s->req[j]);
}
