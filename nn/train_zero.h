// train_zero.h — the sharded trainer's state for ZeRO stages 2 and 3, shared by its setup
// (train_zero_setup.c), its hooks and step (train_zero.c) and the step (train.c). Internal
// to the trainer: callers use train.h (dt_trainer_set_shard, dt_trainer_memory_report).
#ifndef DT_TRAIN_ZERO_H
#define DT_TRAIN_ZERO_H

#include "train.h"

typedef struct dt_zero {
    int stage, P, r;
    int n;                   // units: unit k is the trainable elements [lo[k], lo[k + 1])
    size_t *lo;              // n + 1 boundaries, ascending
    size_t *plo, *phi, *at;  // this rank's piece of unit k, [plo, phi), at at[k] in gshard
    size_t shard;            // elements of this rank's pieces (the compact buffers' length)
    float *gshard;           // this rank's pieces of the reduced gradient (device)
    float *pshard;           // stage 3, and stage 2 in mixed precision: this rank's pieces of
                             // the parameters, fp32 (the master weights; device)
    int half;                // mixed precision: the gathered copies are half-rounded
    uint16_t **params_h;     // per unit, where convolutions run on half storage: the gathered
                             // parameters' half bits (stage 3; else NULL)
    float *stats;            // stage 3: the running statistics (net->params is freed)
    float **params, **grads; // per unit: the gathered parameters, the gradient bucket
    dt_coll_req **preq, **greq;  // per unit: its allgather, its reduce-scatter in flight
    // stage 3: the gathers' own context. Requests of one context must start in the same
    // order on every rank (coll.h); the gathers start at fixed points of forward and
    // backward, the reduce-scatters when the one before completes (a rank-local time), so
    // each kind gets its channel (FSDP's all-gather and reduce-scatter streams).
    dt_coll *pcoll;
    int *resident, n_resident;   // stage 3: units whose parameters are gathered
    int *lu;                 // 2 per layer: the units its parameters lie in (-1: none)
    int *nextp, *prevp;      // per layer (and n_layers): the next / previous layer with units
    int g_next, g_inflight;  // the next unit to reduce-scatter (top down), the one in flight
    int g_resident;          // gradient buckets allocated now
    size_t final_lo;         // backward has made the gradient final from here up
    int accum;               // a later micro-batch (--accumulate): its pieces add to gshard
    dt_net_units view;       // what net->units points at
    size_t p_live, p_peak, g_live, g_peak;  // transient bytes: now and at the peak
} dt_zero;

// train_zero.c
void dt_trainer_zero_begin(dt_trainer *t);      // before forward: the hooks on
void dt_trainer_backward_zero(dt_trainer *t);   // backward, units reduce-scattered
void dt_trainer_zero_step(dt_trainer *t, float lr);  // the pieces' update (stage 2: gather)
void dt_trainer_zero_end(dt_trainer *t);        // hooks off, statistics
// train.c: the norms' plan over the trainer's units (made once), and the sum over the
// ranks (dt_sum_fn, ctx the trainer)
dt_norm_plan *dt_trainer_norm_plan(dt_trainer *t);
void dt_trainer_sum_ranks(void *ctx, double *v, size_t n);
// train_zero_setup.c
void dt_zero_free(dt_trainer *t);

#endif
