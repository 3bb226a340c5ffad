// dtrain_slow.c — `dtrain --slow-rank R:FACTOR` (real/dtrain_slow.h): rank R's layers take
// FACTOR times as long, by a spin after each of them.
#include "dtrain_slow.h"

#include <stdio.h>

#include "dt.h"

// Told before each layer's forward and backward, and with layer -1 after each pass
// (nn/net.h: on_layer): the interval that ends here was the previous layer's (or, after
// forward's end, the loss's) computation, unless it began at backward's end.
static void on_layer(void *ctx, const dt_net *net, int layer, int phase) {
    dtrain_slow *s = ctx;
    s->dev->sync(s->dev);  // the cuda device: the layer's kernels are done
    double t = dt_now_s();
    if (s->slowing) {
        // A spin ends late when the rank is preempted in it: the overshoot is owed back by
        // the next waits, so the waits sum to (F - 1) times the compute, as a slower device's.
        double want = (s->factor - 1) * (t - s->t_prev) - s->owed_s;
        s->own_s += t - s->t_prev;
        double until = t + want;
        while (dt_now_s() < until) {
        }
        double t1 = dt_now_s();
        s->added_s += t1 - t;
        s->owed_s = (t1 - t) - want;
        t = t1;
    }
    s->slowing = !(layer < 0 && phase == DT_PHASE_BACKWARD);
    s->t_prev = t;
    if (s->inner) s->inner(s->inner_ctx, net, layer, phase);
}

void dtrain_slow_attach(dtrain_slow *s, dtrain_run *r) {
    *s = (dtrain_slow){r->dev, r->o->slow_factor, dt_now_s(), 0, 0.0, 0.0, 0.0,
                       r->net->on_layer, r->net->on_layer_ctx};
    if (r->o->slow_rank != r->rank || !(r->o->slow_factor > 1)) return;
    r->net->on_layer = on_layer;
    r->net->on_layer_ctx = s;
}

void dtrain_slow_report(const dtrain_slow *s, const dtrain_run *r) {
    if (r->o->slow_rank != r->rank || !(r->o->slow_factor > 1) || !(s->own_s > 0)) return;
    fprintf(stderr, "dtrain: --slow-rank %d:%g: %.6f s of compute slowed by %.6f s of waits "
            "(x %.3f)\n", r->rank, s->factor, s->own_s, s->added_s,
            (s->own_s + s->added_s) / s->own_s);
}
