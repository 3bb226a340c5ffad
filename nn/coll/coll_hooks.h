// coll_hooks.h — the extensions of the core runner (coll_run.h) through its hooks, each in its own file
// and each knowing only the runner and its own state; coll_request.c composes them into the
// runners' hooks for the allreduces that need them. Not part of the API (coll.h is).
//
//   coll_fp16.c     fp16 on the wire            coll_stage.c    device memory
//   coll_native.c   the MPI library's own       coll_coarsen.c  merged rounds (simulator)
//   coll_sweep.c    polling under SMPI          coll_scratch.c  scratch blocks
#ifndef DT_COLL_HOOKS_H
#define DT_COLL_HOOKS_H

#include <stdint.h>

#include "coll_run.h"

// ---- fp16 on the wire (coll_fp16.c): the local work on x->dev ----
void dt_fp16_before_post(dt_run *x);  // the round's QUANT ops, then its sends into x->stage
void dt_fp16_land(dt_run *x, const dt_op *op, char *dst, const char *src);

// ---- device memory (coll_stage.c) ----
// Staged through pinned host memory? (device memory, and no CUDA-aware MPI for this type)
int dt_stage_needed(const dt_device *dev, int gpu_direct, dt_dtype dtype);
typedef struct {
    dt_device *dev;     // the device that holds dbuf
    char *dbuf, *host;  // the caller's device buffer, its pinned host copy
    size_t count, esize;
    size_t chunk;       // elements per staging chunk
    int n_chunks, staged;  // staged: every chunk has arrived on the host
    uint64_t *ready;    // per chunk: the device's ticket of its copy
    int back;           // 0: not yet copied back; 1: copying; 2: done
    uint64_t back_ticket;
} dt_stage;
// The copies to the host leave, chunk by chunk, the chunk `first` (an element) is in first;
// p: ranks (a chunk is about one ring step).
void dt_stage_start(dt_stage *st, size_t first, int p);
int dt_stage_round_ready(dt_stage *st, const dt_run *x);  // the round's chunks have arrived?
int dt_stage_back(dt_stage *st);   // the sum copied back to the device: 1 once it is there
void dt_stage_free(dt_stage *st);
void dt_stage_sync(const dt_run *x);  // gpu_direct: the device finishes the round's work

// ---- the MPI library's own allreduce, the `mpi` algorithm (coll_native.c) ----
// Its collectives start in the same order on every rank: the communicator counts them.
typedef struct {
    unsigned long started, posted;
} dt_native_order;
int dt_native_ready(dt_native_order *o, unsigned long seq);  // 1: request seq may post now
void dt_native_post(dt_run *x, const dt_op *op, void *p, int count, MPI_Request *q);

// ---- timing-only simulation (coll_coarsen.c) ----
// Merge runs of up to k rounds with the same ops (kinds, communicators, peers) into one,
// counts summed from offset 0, and a delay of (merged-1)·α, α_intra for rounds on a
// group's or a row's communicator (coll.h, coarsen; dbtree's pipeline: coarsen_tree).
void dt_sched_coarsen(dt_sched *s, int k_ring, int k_tree, double alpha, double alpha_intra);
void dt_coarsen_delay(const dt_run *x, dt_device *dev);  // the round's merged latencies

// ---- polling under SMPI (coll_sweep.c) ----
typedef struct {
    int on;                 // opts.sweep
    MPI_Request tick[2];    // a zero-byte message to self, arrived once tick_lat has
    double tick_t, tick_lat, swept_t;  // passed since tick_t
    const void *swept_by;   // the poller of the last sweep
    MPI_Request *all;       // the requests waited on with the tick
    int cap;
} dt_sweep;
void dt_sweep_start(dt_sweep *s, int on);  // the tick's first message, timed
void dt_sweep_end(dt_sweep *s);            // its last
// A sweep of every request in flight (n_sets arrays of them) for a poll by `who`: 1 when
// done (the arrays then hold what is still in flight), 0 when `who` must test instead.
int dt_sweep_poll(dt_sweep *s, const void *who, int n_sets, MPI_Request *const *sets,
                  const int *lens);

// ---- scratch blocks (coll_scratch.c): a small cache per communicator ----
#define DT_SCRATCH_SLOTS 8
typedef struct {
    void *blk[DT_SCRATCH_SLOTS];
    size_t bytes[DT_SCRATCH_SLOTS];
    int host;  // pinned host memory (dev->alloc_host) rather than the device's
} dt_scratch;
void *dt_scratch_get(dt_scratch *s, dt_device *dev, size_t bytes, size_t *got);
void dt_scratch_put(dt_scratch *s, dt_device *dev, void *p, size_t bytes);
void dt_scratch_release_all(dt_scratch *s, dt_device *dev);

#endif
