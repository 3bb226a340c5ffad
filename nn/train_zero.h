// train_zero.h — the state of the strategies of ZeRO stages 2 and 3 (t->state), shared by
// their set-up (train_zero_setup.c) and their hooks (train_zero.c); their entries are in the
// registry (train_strategy.h). Internal to the trainer: callers use train.h
// (dt_trainer_set_shard, dt_trainer_memory_report); the simulator's stage 3 reads it too
// (sim/rank_zero.c).
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

// The state of stage 2 or 3, NULL for another strategy
static inline dt_zero *dt_trainer_zero(const dt_trainer *t) {
    return t->shard == DT_SHARD_GRADIENTS || t->shard == DT_SHARD_PARAMETERS ? t->state : NULL;
}

#endif
