// coll_sched.h — inside the allreduce library: the schedule every algorithm compiles to,
// and the context the engine runs it in. Not part of the API (nn/coll/coll.h is).
//
// A schedule is one or more independent *lanes* (dbtree runs its two trees as two lanes, so
// neither waits for the other); a lane is a list of *rounds*; a round is a list of ops. The
// engine posts every message of a round at once (MPI_Irecv / MPI_Isend), and when all of
// them have completed it runs the round's local work in op order: RECV_ADD adds what
// arrived into the buffer (dev->add: the γ term of the cost model), RECV_COPY installs it.
// QUANT runs when the round is posted, before its sends (fp16 wire: the owner of a
// finished chunk rounds its own copy as the receivers will see it). Offsets and counts are
// in elements of the buffer; ops with count 0 are never recorded, and since both ends of a
// message compute the same count, neither side posts it.
#ifndef DT_COLL_SCHED_H
#define DT_COLL_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "coll.h"

enum { DT_OP_SEND, DT_OP_RECV_ADD, DT_OP_RECV_COPY, DT_OP_QUANT, DT_OP_NATIVE };

// Communicators an op can name (dt_coll.comms[]): everyone; hier's group (consecutive
// ranks), its leaders (local rank 0 of each group) and its cross sets (the same local rank
// in every group, only when the groups are equal); torus2d's rows (X consecutive ranks) and
// columns. A rank outside one holds MPI_COMM_NULL there.
enum { DT_COMM_ALL, DT_COMM_GROUP, DT_COMM_LEADERS, DT_COMM_CROSS, DT_COMM_ROW, DT_COMM_COL,
       DT_COMM_COUNT };

typedef struct {
    uint8_t kind;  // DT_OP_*
    uint8_t comm;  // DT_COMM_*
    int peer;      // rank in that communicator
    size_t off;    // elements into the buffer
    size_t count;  // elements
} dt_op;

typedef struct {
    dt_op *ops;
    int n_ops, cap_ops;
    int *round_start;  // round k is ops [round_start[k], round_start[k+1])
    int n_rounds, cap_rounds;
    double *delay;     // seconds to wait before posting round k (coarsened); NULL: none
    // coarsening (coll.h): key[k] = (phase << 20) | step for the rounds of a ring phase,
    // whose step s is the same step on every rank of the ring; 0 for any other round
    int *key;
    int next_key, phases;
} dt_lane;

#define DT_MAX_LANES 2

typedef struct {
    dt_lane lanes[DT_MAX_LANES];
    int n_lanes;
} dt_sched;

struct dt_coll {
    MPI_Comm comms[DT_COMM_COUNT];  // duplicates and splits of the caller's communicator
    int rank[DT_COMM_COUNT];        // this rank in each (-1 where MPI_COMM_NULL)
    int size[DT_COMM_COUNT];        // their sizes (0 where MPI_COMM_NULL)
    dt_device *dev;
    dt_coll_opts o;                 // resolved
    int tag_ub;                     // largest tag the MPI allows
    unsigned long seq;              // allreduces started (tags)
    dt_coll_req *inflight;          // list of requests not yet waited for
    void *scratch[8];               // cached scratch blocks, reused across calls (fusion
    size_t scratch_bytes[8];        // buckets in flight each hold one)
    void *hscratch[8];              // the same for pinned host blocks (staging device
    size_t hscratch_bytes[8];       // buffers: dev->device_memory without gpu_direct)
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

// One allreduce in flight (coll_engine.c runs it).
struct dt_coll_req {
    dt_coll *c;
    char *buf;
    size_t count;
    dt_dtype dtype;
    int wire16;          // fp16 on the wire (float32 data)
    size_t esize, wsize; // bytes per element in the buffer, on the wire
    int tag;
    dt_sched s;
    int cur[DT_MAX_LANES];      // the round in flight (n_rounds once the lane is done)
    int posted[DT_MAX_LANES];
    MPI_Request *reqs;          // max_reqs per lane
    int max_reqs;
    char *scratch;              // per lane: tmp (received messages) then stage (fp16 sends)
    size_t scratch_bytes;
    size_t tmp_off[DT_MAX_LANES], stage_off[DT_MAX_LANES];
    dt_coll_req *next;          // c->inflight list
    // ---- staging (dev->device_memory without gpu_direct): buf is then a pinned host copy
    // of the caller's device buffer dbuf, filled chunk by chunk; ldev is NULL (host sums) ----
    dt_device *ldev;            // the device of the local work (NULL: host loops)
    char *dbuf;
    size_t chunk;               // elements per staging chunk
    int n_chunks, staged;       // staged: every chunk has arrived on the host
    uint64_t *ready;            // per chunk: the device's ticket of its copy
    int back;                   // 0: not yet copied back; 1: copying; 2: done
    uint64_t back_ticket;
    void *ext;                  // the nccl algorithm's handle (c->ext), else NULL
    unsigned long native_seq;   // this request's place among the `mpi` ones (see post_round)
};

// Polling under SMPI (coll_sweep.c): the tick's first message, timed (dt_coll_create), and
// its last (dt_coll_free); a sweep of the requests in flight for a poll of r, 1 when done.
void dt_coll_tick_start(dt_coll *c);
void dt_coll_tick_end(dt_coll *c);
int dt_coll_sweep(dt_coll *c, const dt_coll_req *r);

// Building (coll_sched.c)
void dt_lane_round(dt_lane *l);  // opens a new round (empty rounds are dropped)
void dt_lane_op(dt_lane *l, int kind, int comm, int peer, size_t off, size_t count);
void dt_sched_free(dt_sched *s);
// Timing-only: merge runs of up to k rounds with the same ops (kinds, communicators, peers)
// into one, counts summed from offset 0, and a delay of (merged-1)·α, α_intra for rounds on
// a group's or a row's communicator (coll.h, coarsen).
void dt_sched_coarsen(dt_sched *s, int k, double alpha, double alpha_intra);
// The chunk i of n elements split into p nearly equal parts: [chunk_lo(i), chunk_lo(i+1))
static inline size_t dt_chunk_lo(size_t n, int p, int i) {
    return (size_t)((unsigned __int128)n * (unsigned)i / (unsigned)p);
}

// The algorithms (coll_flat.c, coll_tree.c, coll_hier.c) append their rounds to lane l for
// the buffer range [off, off+n) over communicator `comm` (rank r of p). `quant` is set
// when the wire is fp16 (the allgather phases then round the owner's chunk first).
void dt_sched_ps(dt_lane *l, int comm, int r, int p, size_t off, size_t n, int quant);
void dt_sched_ring(dt_lane *l, int comm, int r, int p, size_t off, size_t n, int quant);
// whole: recursive doubling (short messages; dt_rhd_whole in coll_cost.h decides)
void dt_sched_rhd(dt_lane *l, int comm, int r, int p, size_t off, size_t n, int quant,
                  int whole);
// reduce-scatter and allgather halves of the ring (hier rs, torus2d); rank r owns
// chunk r of the p chunks of [off, off+n) in between
void dt_sched_ring_rs(dt_lane *l, int comm, int r, int p, size_t off, size_t n);
void dt_sched_ring_ag(dt_lane *l, int comm, int r, int p, size_t off, size_t n, int quant);
// binomial-tree reduce to rank 0 and broadcast from rank 0
void dt_sched_binomial_reduce(dt_lane *l, int comm, int r, int p, size_t off, size_t n);
void dt_sched_binomial_bcast(dt_lane *l, int comm, int r, int p, size_t off, size_t n,
                             int quant);
// double binary tree: lanes 0 and 1 of s, `segments` pipeline segments per half
void dt_sched_dbtree(dt_sched *s, int comm, int r, int p, size_t off, size_t n, int segments,
                     int quant);
// the whole allreduce for c's resolved algorithm `a`
void dt_sched_build(const dt_coll *c, dt_algo a, size_t n, int quant, dt_sched *s);

// NCCL-style binary tree over p ranks (in-order numbering, ncclGetBtree's shape): the
// parent (-1 at the root) and up to two children (-1 if absent) of rank r; tree 1 of the
// double tree is tree 0 mirrored (p even) or shifted by one (p odd).
void dt_btree(int r, int p, int *parent, int *child0, int *child1);
void dt_dtree(int tree, int r, int p, int *parent, int *child0, int *child1);
int dt_dtree_depth(int p);  // edges from the root to the deepest leaf, over both trees

#endif
