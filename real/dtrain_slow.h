// dtrain_slow.h — `dtrain --slow-rank R:FACTOR`: rank R made a straggler, FACTOR times slower
// in its compute, so that dtsim's `--straggler rank:R:FACTOR` (sim/straggler.h) can be
// checked against a real run (bench/validate_cpu.sh). After each layer's forward or backward
// and after the loss, the rank waits (FACTOR - 1) times the interval it just took; what
// follows backward (the gradients' allreduce, the optimizer, the next batch) is not slowed:
// the allreduce is the network's time, not the device's. The wait spins on the clock rather
// than sleeping: the rank's core stays as busy as a slower device's computing would keep
// it, so ranks that share cores (mpirun --oversubscribe) see the load they were profiled at.
// Not here: the option's parsing (dtrain_opts.c).
#ifndef DT_REAL_DTRAIN_SLOW_H
#define DT_REAL_DTRAIN_SLOW_H

#include "dtrain.h"

typedef struct {
    dt_device *dev;
    double factor;   // >= 1
    double t_prev;   // the last layer boundary (CLOCK_MONOTONIC, s)
    int slowing;     // the interval since t_prev is compute to slow down
    double added_s;  // the waits so far, summed
    double own_s;    // the slowed intervals' own time (before their waits), summed
    double owed_s;   // how far the waits so far overshot (F - 1) times the compute
    void (*inner)(void *ctx, const dt_net *net, int layer, int phase);  // the hook it wraps
    void *inner_ctx;
} dtrain_slow;

// On rank o->slow_rank: wraps r->net->on_layer (attach after dtrain --profile's hook, which
// then times the slowed layers). Elsewhere nothing.
void dtrain_slow_attach(dtrain_slow *s, dtrain_run *r);
// On the slowed rank, to stderr (--quiet too: it says what the run measured was made of):
// the compute it slowed, the waits added, and their ratio, which is the factor asked for.
void dtrain_slow_report(const dtrain_slow *s, const dtrain_run *r);

#endif
