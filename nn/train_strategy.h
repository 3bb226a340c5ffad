// train_strategy.h — the trainer's strategies: how the gradient is summed over the ranks and
// the update applied, one entry each in a registry (train_strategy.c, DT_STRATEGY_BUILTINS:
// replicate, ZeRO's three stages), as the allreduce's algorithms are one entry each
// (coll/coll_algos.c). The step (train.c) calls an entry's hooks at fixed points and knows
// nothing else of it; each strategy keeps its state in a struct of its own (t->state).
// Internal to the trainer: callers use train.h (dt_trainer_set_shard, --shard).
#ifndef DT_TRAIN_STRATEGY_H
#define DT_TRAIN_STRATEGY_H

#include "train.h"

enum {
    DT_STRATEGY_SHARDED = 1,      // needs dt_optim_create_shard's optimizer and 2+ ranks
    DT_STRATEGY_EACH_MICRO = 2,   // communicates after every micro-batch's backward, not
                                  // only the last (ZeRO 2, 3: the gradient is kept in pieces)
};

typedef struct {
    const char *name;  // --shard NAME, dt_shard_name
    int flags;         // DT_STRATEGY_*
    // This rank's reason to refuse becoming the strategy `stage` (train_setup.c has checked
    // what the flags ask for; before the ranks agree), or 0. May be NULL.
    int (*check)(const dt_trainer *t, int stage, dt_error *err);
    // After every rank agreed (t->shard is its number): its state (t->state), t->grad and,
    // sharded, t->unit_lo. Collective.
    void (*setup)(dt_trainer *t);
    void (*free)(dt_trainer *t);  // collective, as dt_trainer_free
    // Before micro-batch k's forward (k = 0 .. t->accumulate - 1). May be NULL.
    void (*begin)(dt_trainer *t, int k);
    // dt_net_backward's hook (net.h), ctx the trainer: the layer's gradients [lo, hi) are
    // final. May be NULL.
    dt_grad_ready_fn on_gradient_ready;
    // While a GPU finishes backward's last kernels: progress what is in flight. May be NULL.
    void (*progress)(dt_trainer *t);
    // After a backward that communicates: every collective of it complete, t->grad holding
    // this rank's part of the sum over the ranks. Returns the seconds of communication it saw
    // (t->last_comm).
    double (*finish)(dt_trainer *t);
    // The update with learning rate lr from this rank's part of the averaged gradient, and
    // what makes every rank's parameters whole again (an allgather); its collectives' seconds
    // added to t->last_comm and t->last_exposed.
    void (*update)(dt_trainer *t, float lr);
    // Bytes held (train.h dt_trainer_memory): params, grads, half, units, unit_max and the
    // peaks; the caller has set activations and optim.
    void (*memory)(const dt_trainer *t, dt_trainer_memory *m);
    const char *help;  // its line of --shard's help
} dt_strategy;

// The registry (train_strategy.c): entry i into *out, 0; -1 when i names none.
int dt_strategy_get(int i, dt_strategy *out);
int dt_strategy_count(void);

// ---- the built-ins' hooks ----
// replicate (train_replicate.c): each fusion bucket's allreduce during backward
void dt_replicate_setup(dt_trainer *t);
void dt_replicate_free(dt_trainer *t);
void dt_replicate_begin(dt_trainer *t, int k);
void dt_replicate_on_gradient_ready(void *ctx, dt_net *net, int layer, size_t lo, size_t hi);
void dt_replicate_progress(dt_trainer *t);
double dt_replicate_finish(dt_trainer *t);
void dt_replicate_update(dt_trainer *t, float lr);
void dt_replicate_memory(const dt_trainer *t, dt_trainer_memory *m);  // (every copy whole)
// ZeRO stage 1 (train_shard.c): reduce-scatter after backward, the shard's update, allgather
void dt_shard_optimizer_setup(dt_trainer *t);
void dt_shard_optimizer_free(dt_trainer *t);
double dt_shard_optimizer_finish(dt_trainer *t);
void dt_shard_optimizer_update(dt_trainer *t, float lr);
// ZeRO stages 2 and 3 (train_zero_setup.c, train_zero.c): units reduce-scattered during
// backward, stage 3's parameters gathered per layer
int dt_shard_units_check(const dt_trainer *t, int stage, dt_error *err);
void dt_shard_units_setup(dt_trainer *t);
void dt_shard_units_free(dt_trainer *t);
void dt_shard_units_begin(dt_trainer *t, int k);
void dt_shard_units_on_gradient_ready(void *ctx, dt_net *net, int layer, size_t lo, size_t hi);
double dt_shard_units_finish(dt_trainer *t);
void dt_shard_units_update(dt_trainer *t, float lr);
void dt_shard_units_memory(const dt_trainer *t, dt_trainer_memory *m);

// ---- the step's pieces (train.c), for a step of another shape (train_pipe.c) ----
// Backward with the strategy's hooks where it communicates, timed; seed as
// dt_net_backward_from (NULL: the loss's gradient); last: the step's last micro-batch, where
// a tied weight's halves kept apart are summed
void dt_trainer_backward(dt_trainer *t, const dt_strategy *s, int communicate, int last,
                         const float *seed);
// The same in two halves (train_pipe.c sends its messages between them, as Megatron-LM's
// pipeline sends a gradient on before the data-parallel sums end): the backward with the
// strategy's collectives started, then their end (the strategy's finish)
void dt_trainer_backward_begin(dt_trainer *t, const dt_strategy *s, int communicate, int last,
                               const float *seed);
void dt_trainer_backward_end(dt_trainer *t, const dt_strategy *s, int communicate);
// After the micro-batches: the mean over the ranks, the hooks, the update; returns the loss
// the step reports (loss: this rank's mean over its micro-batches; lr the update's)
float dt_trainer_step_end(dt_trainer *t, const dt_strategy *s, float loss, float lr);

// ---- what the strategies share (train_norms.c, train_comm.c) ----
// The norms' plan over the units (t->unit_lo, else the fusion buckets; made once), and
// the sum over the ranks (dt_sum_fn, ctx the trainer)
dt_norm_plan *dt_trainer_norm_plan(dt_trainer *t);
void dt_trainer_sum_ranks(void *ctx, double *v, size_t n);
// The first step of a plan from measured times (SEGMENTS, AUTO): rank 0's ready times
// broadcast, the buckets planned from them
void dt_trainer_plan_measured(dt_trainer *t);

#endif
