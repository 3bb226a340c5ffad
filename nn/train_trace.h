// train_trace.h — a Chrome trace (chrome://tracing, Perfetto; docs/conventions.md, traces)
// of a data-parallel run, Horovod-timeline style, the same for a simulated run (dtsim
// --trace: simulated microseconds) and a real one (dtrain --trace: wall-clock ones): per
// rank a "compute" row (forward + loss, then each layer's backward), an "allreduce" row
// (each fusion bucket's allreduce, from its start to its completion as polling saw it) and
// an "iteration" row (each step). Built from the trainer's own timeline (train.h: the
// gradient-ready events, bucket_start/bucket_end), so the two programs' traces carry the
// same event names and open side by side. Not here: the programs that call it.
#ifndef DT_TRAIN_TRACE_H
#define DT_TRAIN_TRACE_H

#include "train.h"

typedef struct dt_trace dt_trace;

dt_trace *dt_trace_new(int rank);
// record the step that ran from t0 to t1 (MPI_Wtime) with the trainer's last timeline
void dt_trace_step(dt_trace *tr, const dt_trainer *t, double t0, double t1);
// Collective over MPI_COMM_WORLD (every rank calls it; tr may be NULL on ranks not traced):
// rank r writes path.r.part; rank 0 then joins the parts of ranks 0..n_ranks-1 into `path`
// atomically (temporary name, rename) and removes them. 0, or -1 on rank 0 with err naming
// the file (`who` is the program, for the messages: "dtsim", "dtrain").
int dt_trace_write(dt_trace *tr, const char *path, int rank, int n_ranks, const char *who,
                   dt_error *err);
void dt_trace_free(dt_trace *tr);

#endif
