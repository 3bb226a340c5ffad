// rank_zero.h — the rank program's step under ZeRO stages 1-3 (sim/rank_zero.c).
#ifndef DT_SIM_RANK_ZERO_H
#define DT_SIM_RANK_ZERO_H

#include "train.h"

// One training step of `stage` (1-3) on tr's network and communicator, with the model
// device's kernels: the collectives of the stage (sim/zero.h) and the optimizer update of
// this rank's shard only. Sets tr->last_comm (seconds in collectives). Aborts with a message
// on a collective's error (the options were checked when the trainer was set up).
void dt_rank_zero_step(dt_trainer *tr, dt_opt_kind kind, int stage, const void *x_host,
                       const int32_t *y_host);

// The algorithm the stage's reduce-scatter and allgather run (nn/coll/coll.h: rhd where the
// communicator's is rhd and P a power of two, mpi where it is mpi, else the ring)
const char *dt_rank_zero_algo(const dt_trainer *tr);

#endif
