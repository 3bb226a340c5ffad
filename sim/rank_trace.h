// rank_trace.h — Chrome trace (chrome://tracing, Perfetto; docs/conventions.md, traces) of
// chosen ranks of a dtsim run, Horovod-timeline style: per rank a "compute" row (forward,
// then each layer's backward) and a "comm" row (each fusion bucket's allreduce, from its
// start to its completion as polling saw it), in simulated microseconds. Not here: the run (rank.c).
#ifndef DT_SIM_RANK_TRACE_H
#define DT_SIM_RANK_TRACE_H

#include "train.h"

typedef struct rank_trace rank_trace;

rank_trace *rank_trace_new(int rank);
// record the step that ran from t0 to t1 (MPI_Wtime) with the trainer's last timeline
void rank_trace_step(rank_trace *tr, const dt_trainer *t, double t0, double t1);
// every traced rank calls it: rank r writes path.r.part; rank 0 then joins the parts of
// ranks 0..n_ranks-1 into `path` (temporary name, rename) and removes them
void rank_trace_write(rank_trace *tr, const char *path, int rank, int n_ranks);
void rank_trace_free(rank_trace *tr);

#endif
