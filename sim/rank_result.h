// rank_result.h — what dtsim's rank program (sim/rank.c) sends back to its launcher
// (sim/dtsim_run.c): rank 0's figures of one run, as one JSON object, written with nn/json's
// writer to the file the launcher names (--result, written whole or not at all) and read
// back with nn/json's parser. A table of key, type and field serves both directions.
// Not here: what goes the other way (rank_run.h); what dtsim prints (dtsim.h).
#ifndef DT_SIM_RANK_RESULT_H
#define DT_SIM_RANK_RESULT_H

#include <stdint.h>

#include "dt.h"

typedef struct {
    int gpus;                                     // ranks simulated
    double iter_s, compute_s, comm_s, exposed_s;  // per timed step, the slowest rank's
    int buckets;                                  // fusion buckets of the gradients
    char algo[16];        // the algorithm of the gradients' allreduce (auto: the one chosen)
    int64_t params;       // trainable parameters
    int64_t arena_used;   // bytes of rank 0's device arena in use
    double model_comm_s;  // the α-β-γ model's time of the step's allreduces, one after another
    double iter_p50_s, iter_p95_s, iter_max_s;  // rank 0's timed steps: median, 95th
                                                // percentile (nearest rank), longest
    double comm_bytes;    // bytes a GPU's collectives sent per timed step (the most of any)
} dt_rank_result;

// To path (atomically), or stdout when path is "". 0, or -1 with err.
int dt_rank_result_write(const char *path, const dt_rank_result *r, dt_error *err);
// 0, or -1 with err (DT_EXIT_RUNTIME): missing, unreadable, not JSON, a key missing or of
// the wrong type.
int dt_rank_result_read(const char *path, dt_rank_result *r, dt_error *err);

#endif
