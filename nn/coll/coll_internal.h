// coll_internal.h — inside the allreduce library: a communicator's context (dt_coll), one
// allreduce in flight (dt_coll_req), and what the layers on top of the core runner export
// to coll_request.c, which composes them. Not part of the API (nn/coll/coll.h is).
//
//   coll_request.c   start / progress / wait: lanes, polling, the layers composed
//     coll_fp16.c      fp16 on the wire            coll_stage.c   device memory
//     coll_native.c    the MPI library's, NCCL's   coll_coarsen.c merged rounds (simulator)
//     coll_sweep.c     polling under SMPI          coll_scratch.c scratch blocks
//   coll_run.c       the core runner: one lane, round by round
//   coll_sched.c ... the schedules; coll_algos.c their registry; coll_cost.c their costs
#ifndef DT_COLL_INTERNAL_H
#define DT_COLL_INTERNAL_H

#include <stdint.h>

#include "coll_run.h"

#define DT_SCRATCH_SLOTS 8

struct dt_coll {
    MPI_Comm comms[DT_COMM_COUNT];  // duplicates and splits of the caller's communicator
    int rank[DT_COMM_COUNT];        // this rank in each (-1 where MPI_COMM_NULL)
    int size[DT_COMM_COUNT];        // their sizes (0 where MPI_COMM_NULL)
    dt_device *dev;
    dt_coll_opts o;                 // resolved
    int tag_ub;                     // largest tag the MPI allows
    unsigned long seq;              // allreduces started (tags)
    dt_coll_req *inflight;          // list of requests not yet waited for
    // cached scratch blocks, reused across calls (fusion buckets in flight each hold one);
    // host: the same for pinned host blocks (staging device buffers), coll_scratch.c
    void *scratch[DT_SCRATCH_SLOTS], *hscratch[DT_SCRATCH_SLOTS];
    size_t scratch_bytes[DT_SCRATCH_SLOTS], hscratch_bytes[DT_SCRATCH_SLOTS];
    dt_coll_ext ext;                // the nccl algorithm, when attached
    unsigned long native_started;   // `mpi` requests started, and how many of them have
    unsigned long native_posted;    // posted the library's collective (same order everywhere)
    // polling under SMPI (coll_sweep.c): a zero-byte message to self that
    // has arrived once tick_lat has passed since tick_t; the requests waited on with it
    MPI_Request tick[2];
    double tick_t, tick_lat, swept_t;
    const dt_coll_req *swept_by;
    MPI_Request *sweep;
    int sweep_cap;
};

// One allreduce in flight.
struct dt_coll_req {
    dt_coll *c;
    char *buf;           // the data the runners reduce (a staged request: the host copy)
    size_t count;
    dt_dtype dtype;
    int wire16;          // fp16 on the wire (float32 data)
    size_t esize, wsize; // bytes per element in the buffer, on the wire
    int tag;
    dt_sched s;
    dt_run run[DT_MAX_LANES];   // one runner per lane
    MPI_Request *reqs;          // max_reqs per lane, lane after lane
    int max_reqs;
    char *scratch;              // per lane: tmp (received messages) then stage (fp16 sends)
    size_t scratch_bytes;
    dt_coll_req *next;          // c->inflight list
    // ---- staging (coll_stage.c; dev->device_memory without gpu_direct): buf is then a
    // pinned host copy of the caller's device buffer dbuf, filled chunk by chunk; the local
    // work runs on the host ----
    dt_device *ldev;            // the device of the local work (NULL: host loops)
    char *dbuf;
    size_t chunk;               // elements per staging chunk
    int n_chunks, staged;       // staged: every chunk has arrived on the host
    uint64_t *ready;            // per chunk: the device's ticket of its copy
    int back;                   // 0: not yet copied back; 1: copying; 2: done
    uint64_t back_ticket;
    // ---- the libraries' own allreduce (coll_native.c) ----
    void *ext;                  // the nccl algorithm's handle (c->ext), else NULL
    int native;                 // its schedule posts the MPI library's collective
    unsigned long native_seq;   // this request's place among the `mpi` ones
};

// Checked mode (opts.checked): did every rank pass the same count and type? 0, or -1 with
// err set on every rank (coll_request.c)
int dt_check_counts(dt_coll *c, size_t count, dt_dtype dtype, dt_error *err);

// ---- fp16 on the wire (coll_fp16.c) ----
void dt_fp16_before_post(dt_coll_req *r, dt_run *x);  // QUANT ops, sends into x->stage
void dt_fp16_land(dt_coll_req *r, const dt_op *op, char *dst, const char *src);

// ---- device memory (coll_stage.c) ----
int dt_stage_needed(const dt_coll *c, dt_dtype dtype);  // staged through pinned host memory?
void dt_stage_start(dt_coll_req *r);       // copies to the host leave, chunk by chunk
int dt_stage_round_ready(dt_coll_req *r, const dt_run *x);  // its chunks have arrived?
int dt_stage_back(dt_coll_req *r);         // the sum copied back to the device: 1 once there
void dt_stage_sync(dt_coll_req *r);        // an asynchronous device finishes its local work

// ---- the libraries' own allreduce (coll_native.c) ----
int dt_native_ready(dt_coll_req *r);       // the library's collectives start in one order
void dt_native_post(dt_run *x, const dt_op *op, void *p, int count, MPI_Request *q);
int dt_native_fast(dt_coll *c, void *buf, size_t count, dt_dtype dtype, int *rc,
                   dt_error *err);         // 1 when the blocking library call took it
int dt_ext_start(dt_coll_req *r);          // nccl: queued on the device; 1 when taken
int dt_ext_progress(dt_coll_req *r, int blocking);  // 1 once complete

// ---- timing-only simulation (coll_coarsen.c) ----
// Merge runs of up to k rounds with the same ops (kinds, communicators, peers) into one,
// counts summed from offset 0, and a delay of (merged-1)·α, α_intra for rounds on a
// group's or a row's communicator (coll.h, coarsen).
void dt_sched_coarsen(dt_sched *s, int k, double alpha, double alpha_intra);
void dt_coarsen_delay(dt_coll_req *r, const dt_run *x);  // the round's merged latencies

// ---- polling under SMPI (coll_sweep.c): the tick's first message, timed (dt_coll_create),
// and its last (dt_coll_free); a sweep of the requests in flight for a poll of r, 1 when
// done ----
void dt_coll_tick_start(dt_coll *c);
void dt_coll_tick_end(dt_coll *c);
int dt_coll_sweep(dt_coll *c, const dt_coll_req *r);

// ---- scratch blocks (coll_scratch.c); host: pinned host memory ----
void *dt_scratch_get(dt_coll *c, size_t bytes, size_t *got, int host);
void dt_scratch_put(dt_coll *c, void *p, size_t bytes, int host);
void dt_scratch_release_all(dt_coll *c);

#endif
