// coll_internal.h — inside the allreduce library: a communicator's context (dt_coll) and
// one allreduce in flight (dt_coll_req), which coll.c and coll_request.c share. Not part of
// the API (nn/coll/coll.h is).
//
//   coll.c, coll_request.c   the API: communicators; start / progress / wait
//   coll_cache.c             the schedules built, by shape, for the next request
//   coll_hooks.h             the runner's extensions (fp16, device memory, the library's own allreduce,
//                            coarsening, polling under SMPI, scratch), each on its own
//   coll_run.h               the core runner: one lane, round by round
//   coll_sched.h             the schedules, their registry (coll_algos.c), costs
#ifndef DT_COLL_INTERNAL_H
#define DT_COLL_INTERNAL_H

#include <stdint.h>

#include "coll.h"
#include "coll_hooks.h"

// Schedules built before, by shape (coll_cache.c): what built one, and a coarsened copy.
typedef struct {
    int kind;            // 0 an allreduce of the registry, 1 a reduce-scatter, 2 an allgather
    int algo, quant;     // the algorithm resolved, fp16 on the wire
    size_t count;        // elements
    size_t *lo;          // uneven shards' bounds (n_lo of them; owned in the cache), or NULL
    int n_lo;
} dt_sched_key;
typedef struct {
    int used;
    dt_sched_key key;
    dt_sched s;
} dt_sched_entry;
#define DT_SCHED_CACHE 8
typedef struct {
    dt_sched_entry e[DT_SCHED_CACHE];
    int next;            // the entry the next put replaces
} dt_sched_cache;
// 1 and *out a copy of the schedule built for k before, else 0
int dt_sched_cache_get(dt_sched_cache *c, const dt_sched_key *k, dt_sched *out);
void dt_sched_cache_put(dt_sched_cache *c, const dt_sched_key *k, const dt_sched *s);
void dt_sched_cache_free(dt_sched_cache *c);

struct dt_coll {
    MPI_Comm comms[DT_COMM_COUNT];  // the caller's communicator (or a duplicate), sub-groups of it
    int rank[DT_COMM_COUNT];        // this rank in each (-1 where MPI_COMM_NULL)
    int size[DT_COMM_COUNT];        // their sizes (0 where MPI_COMM_NULL)
    int first[DT_COMM_COUNT];       // one_comm: a sub-group's rank 0 in the caller's comm
    int stride[DT_COMM_COUNT];      //   and the step between its ranks there
    dt_device *dev;
    dt_coll_opts o;                 // resolved
    int tag_ub;                     // largest tag the MPI allows
    unsigned long seq;              // allreduces started (tags)
    dt_coll_req *inflight;          // list of requests not yet waited for
    // cached scratch blocks, reused across calls (fusion buckets in flight each hold one);
    // host: pinned host blocks for staging device buffers
    dt_scratch scratch, hscratch;
    dt_coll_ext ext;                // the nccl algorithm, when attached
    dt_native_order native;         // `mpi` requests started, and posted, in one order
    dt_sweep sweep;                 // polling under SMPI (opts.sweep)
    uint64_t sent;                  // bytes its schedules handed to MPI_Isend (dt_coll_bytes_sent)
    dt_sched_cache built;           // its schedules by shape, coarsened (coll_cache.c)
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
    dt_run_hooks hooks;         // the extensions it needs, composed (coll_request.c)
    MPI_Request *reqs;          // max_reqs per lane, lane after lane
    int max_reqs;
    char *scratch;              // per lane: tmp (received messages) then stage (fp16 sends)
    size_t scratch_bytes;
    dt_coll_req *next;          // c->inflight list
    dt_device *ldev;            // the device of the local work (NULL: host loops)
    dt_stage stage;             // staging device memory (stage.dbuf NULL: not staged)
    int native;                 // its schedule posts the MPI library's collective
    unsigned long native_seq;   // its place among those
    void *ext;                  // the nccl algorithm's handle (c->ext), else NULL
};

// A rank's place in a communicator of c (coll.c): its rank and the communicator's size, and
// all of them with the resolved options as a schedule's builder takes them (coll_sched.h).
int dt_coll_rank_in(const dt_coll *c, int comm);
int dt_coll_size_of(const dt_coll *c, int comm);
dt_build_ctx dt_coll_build_ctx(const dt_coll *c);

// A request for buf (coll_request.c): with pre (a schedule the caller built, or its copy
// from c->built, which the request then owns; left to the caller on failure) and pre_key
// (what built it: kept in c->built once coarsened) instead of the algorithm's allreduce.
dt_coll_req *dt_coll_req_create(dt_coll *c, void *buf, size_t count, dt_dtype dtype,
                                dt_sched *pre, const dt_sched_key *pre_key, dt_error *err);

#endif
