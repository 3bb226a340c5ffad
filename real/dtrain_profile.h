// dtrain_profile.h — `dtrain --profile FILE`: one rank's training step timed per layer kind
// (nn/net.h: each layer type's forward and backward, and "rest": upload, loss, optimizer,
// the allreduce's polls), the device synchronised at every layer boundary so each kind's
// kernels are timed alone. The steps after the first PROFILE_WARMUP are averaged; rank 0
// writes the result as a dtlab profile (sim/profile.h: the format `dtsim calibrate` and
// `dtsim --profile` read). Not here: the training loop that calls it (dtrain_loop.c).
#ifndef DT_REAL_DTRAIN_PROFILE_H
#define DT_REAL_DTRAIN_PROFILE_H

#include "dtrain.h"

#define PROFILE_WARMUP 2  // steps not timed: the first plans fusion buckets, caches warm up

typedef struct {
    dt_device *dev;
    int kind;                  // whose time is running now
    double t_prev;             // when it started (MPI_Wtime)
    int timing;                // inside a timed step
    long steps;                // timed steps so far
    double kind_s[DT_N_KINDS]; // summed over the timed steps
} dtrain_profiler;

// Hooks the profiler into r->net (net->on_layer).
void dtrain_profile_attach(dtrain_profiler *p, dtrain_run *r);
// Around each step: `step` is the number of steps run before this one.
void dtrain_profile_step_begin(dtrain_profiler *p, long step);
void dtrain_profile_step_end(dtrain_profiler *p);
// Rank 0 writes o->profile (atomically). 0, or -1 with err (nothing timed: too few steps;
// the file cannot be written).
int dtrain_profile_write(const dtrain_profiler *p, const dtrain_run *r, dt_error *err);

#endif
