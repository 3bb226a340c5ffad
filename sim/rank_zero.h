// rank_zero.h — the rank program's step under ZeRO stages 1-3 (sim/rank_zero.c).
#ifndef DT_SIM_RANK_ZERO_H
#define DT_SIM_RANK_ZERO_H

#include "train.h"

// The optimizer of this rank's network for `stage` (0-3): the model's kind; stage 3 the
// sharded SGD the trainer's stage 3 takes (sim/rank_zero.c). NULL with err.
dt_optim *dt_rank_zero_optim(dt_net *net, int stage, int rank, int P, dt_opt_kind kind,
                             dt_error *err);
// Collective, after dt_trainer_set_comm: stage 3 shards the trainer (dt_trainer_set_shard);
// other stages: nothing. 0, or -1 with err on every rank.
int dt_rank_zero_setup(dt_trainer *tr, int stage, dt_error *err);

// One training step of `stage` (1-3) on tr's network and communicator, with the model
// device's kernels: the collectives of the stage (sim/zero.h) and the optimizer update of
// this rank's shard only. Sets tr->last_comm (stages 1, 2: seconds in collectives; stage 3:
// the trainer's, the reduce-scatters' tail after backward). Aborts with a message
// on a collective's error (the options were checked when the trainer was set up).
void dt_rank_zero_step(dt_trainer *tr, dt_opt_kind kind, int stage, const void *x_host,
                       const int32_t *y_host);

// The algorithm the stage's reduce-scatter and allgather run (nn/coll/coll.h: rhd where the
// communicator's is rhd and P a power of two, mpi where it is mpi, else the ring)
const char *dt_rank_zero_algo(const dt_trainer *tr);

// Stage 3: the units the trainer shards (its layers with parameters); 0 for the others
int dt_rank_zero_units(const dt_trainer *tr);
// Bytes this rank's collectives have sent (nn/coll dt_coll_bytes_sent: the trainer's
// communicator, and stage 3's gathers' own)
uint64_t dt_rank_zero_bytes_sent(const dt_trainer *tr);
// Stage 3: the α-β-γ model's time of the step's collectives one after another (per layer two
// allgathers and a reduce-scatter); 0 for the other stages
double dt_rank_zero_model_comm_s(const dt_trainer *tr);

#endif
