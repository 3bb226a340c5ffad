// coll.h — dtlab's allreduce library: the communication algorithms of the landmark
// large-batch runs, written once over MPI point-to-point calls and device primitives, and
// compiled both against a real MPI and against SimGrid's SMPI (docs/architecture.md, "The
// allreduce library"; the ring in three files: docs/architecture.md, "Reading the ring
// allreduce").
//
//   mpi      the MPI library's own MPI_Allreduce / MPI_Iallreduce (the baseline)
//   ps       parameter server: every rank sends to rank 0, which sums and sends back
//   ring     reduce-scatter + allgather around a ring (Baidu allreduce, NCCL rings)
//   rhd      Rabenseifner: recursive halving reduce-scatter + recursive doubling
//            allgather, any P (the extra ranks fold in first); Facebook's Goyal et al. 2017.
//            Short messages, where the cost model says so: recursive doubling of whole
//            buffers (MPICH's short-message allreduce), half the rounds
//   dbtree   NCCL's double binary tree: two complementary trees, each reducing and
//            broadcasting one half of the buffer, pipelined in segments
//   hier     hierarchical: groups of `group` consecutive ranks (a node's GPUs). Variant
//            "reduce" (Goyal et al., Jia et al.): reduce to the group leader, allreduce
//            among the leaders with `inner`, broadcast in the group. Variant "rs":
//            reduce-scatter in the group, allreduce of each shard among the ranks with
//            the same local rank, allgather in the group (needs P % group == 0)
//   torus2d  Mikami et al. 2018 (Sony): ranks as an X×Y grid; reduce-scatter along X,
//            allreduce of the shards along Y (with `inner`), allgather along X
//   nccl     NVIDIA's NCCL on the cuda device's stream (real/cuda/coll_nccl.c attaches it
//            with dt_coll_set_ext): the reference our ring is compared with on real GPUs
//
// Every algorithm compiles to a *schedule* (coll_sched.c): rounds of sends and receives
// whose local reductions run when the round's messages have arrived; the core runner
// (coll_run.c) runs it. The same schedule is run to completion by the blocking call and
// advanced step by step by the nonblocking one (start / progress / wait, coll_request.c),
// which is how backward compute and communication overlap. The algorithms are the entries
// of one table (coll_algos.c): adding one is its schedule and one entry.
//
// Invariants, for every algorithm: any P >= 1 (hier "rs" and torus2d need the shapes they
// name), any count >= 0 (count < P too), in place, sum only, and every rank ends with the
// bit-identical result: each element is summed once, on one rank, in an order fixed by the
// schedule, and then copied. With fp16 on the wire (float32 buffers only) every message is
// rounded to IEEE binary16 and accumulated in fp32; the owner of a finished chunk rounds
// its own copy the same way before sending it, so all ranks still agree bit for bit.
//
// Buffers are the device's memory (or plain host memory with dev = NULL). Host-addressable
// memory (the cpu and model devices) goes to MPI as it is. Memory the host cannot read
// (dev->device_memory: the cuda device) is staged: copied into pinned host memory in
// chunks, each round posted as soon as the chunks it touches have arrived (so the copies
// overlap the first ring steps), reduced on the host, copied back; with gpu_direct
// (a CUDA-aware MPI) device pointers go to MPI directly and the device adds.
// Not here: the cost model and fusion plans (coll_cost.h), the trainer's use (nn/train.c).
#ifndef DT_COLL_H
#define DT_COLL_H

#include <mpi.h>
#include <stddef.h>

#include "../device.h"
#include "../dt.h"

// The built-in algorithms, numbered by their places in the registry (coll_algos.c); a build
// with more entries (DT_ALGO_EXTRA) numbers them from DT_ALGO_COUNT on.
typedef enum {
    DT_ALGO_MPI,
    DT_ALGO_PS,
    DT_ALGO_RING,
    DT_ALGO_RHD,
    DT_ALGO_DBTREE,
    DT_ALGO_HIER,
    DT_ALGO_TORUS2D,
    DT_ALGO_NCCL,  // only where an extension is attached (dt_coll_set_ext)
    DT_ALGO_AUTO,  // the cheapest by the cost model, chosen per call from its size
    DT_ALGO_COUNT  // the built-ins
} dt_algo;

// The built-ins' names, for help texts (dt_algo_parse's message lists a build's extras too).
#define DT_ALGO_VALID "mpi, ps, ring, rhd, dbtree, hier, torus2d, nccl, auto"

const char *dt_algo_name(dt_algo a);
// Parse an algorithm name; unknown names fail with DT_EXIT_USAGE and a message listing the
// valid ones (`what` names the option or variable, e.g. "--algo" or "DTCOLL_ALGO").
int dt_algo_parse(const char *s, const char *what, dt_algo *out, dt_error *err);

typedef enum { DT_F32, DT_F64 } dt_dtype;

// The α-β-γ machine of the cost model (docs/formulas.md, "Collective costs"): α seconds per message, β seconds per
// byte sent, γ seconds per byte reduced. `intra` is the link inside a group (hier's first
// and last phase, torus2d's X rings); the flat algorithms use the outer figures.
typedef struct {
    double alpha, beta, gamma;
    double alpha_intra, beta_intra;
    // ranks of one group (a node's GPUs: opts.group) that reach the network through the same
    // links, β being that node's whole network: an rhd step that pairs ranks of different
    // nodes moves every rank's bytes through them at once, at share·β each (as hier rs's
    // inner allreduce does). 0 or 1: each rank has the network to itself (flat platforms).
    double share;
    // dbtree with share > 1 (coll_cost.c): how its trees cross the nodes of `g` ranks, for p
    // ranks; filled by dt_dbtree_links_of (dt_coll_create does it for its communicator)
    struct {
        int p, g;                 // the shape it describes (0: none)
        int edges;                // the most tree edges leaving or entering one node
        signed char intra[33];    // [c]: the most intra-node hops of a root path with c
    } dbt;                        // cross-node hops (-1: no such path)
} dt_cost_params;

// Shared memory on one machine (a few µs per message, ~10 GB/s, ~5 GB/s of additions): a
// default under which `auto` chooses sensibly on a workstation.
dt_cost_params dt_cost_params_default(void);

typedef struct {
    dt_algo algo;
    int wire_f16;       // fp16 on the wire (float32 buffers only; not with algo mpi)
    int group;          // hier: ranks per group; 0 = dt_coll_local_size() (the launcher's
                        // ranks per node), or 1 when it does not say
    dt_algo inner;      // hier's and torus2d's inner allreduce: DT_ALGO_RING or DT_ALGO_RHD
    int hier_rs;        // hier variant: 0 reduce/allreduce/broadcast, 1 rs/allreduce/ag
    int tx, ty;         // torus2d grid X×Y with X*Y == P; 0,0 = the squarest factorisation
    int segments;       // dbtree pipeline segments per half; 0 = chosen by the cost model
    int checked;        // every call first checks that all ranks passed the same count
                        // (one extra small allreduce); also on when DTCOLL_CHECK=1
    // SMPI only: a poll completes requests with MPI_Waitany and a tick instead of MPI_Test,
    // which SimGrid 3.32 makes slower with every request it completes (coll_sweep.c). For
    // polls spaced by computation, as dtsim's trainer makes them between kernels; a busy
    // loop of polls is slower with it. Real MPI ignores it.
    int sweep;
    // Timing-only simulation (the model device, whose buffers hold no data): merge up to
    // `coarsen` consecutive rounds that talk to the same peers into one round of one message
    // k times longer, and let the device wait (k-1)·α first (dev->delay), so the simulated
    // time is kept while SimGrid handles k times fewer messages (a ring over 1024 ranks:
    // 2046 rounds become 64). The sums are then meaningless. 0 or 1: off.
    int coarsen;
    // The same for dbtree's pipeline (coll_tree.c): up to `coarsen_tree` consecutive
    // segments per simulated message. Exact on an uncontended fabric (tests/coll); on a
    // shared one it moves the simulated time (bench/DTSIM-SPEED.md), so dtsim merges them
    // only when asked (--coarsen-dbtree). 0 or 1: off.
    int coarsen_tree;
    // dbtree's depth for this many ranks; dt_coll_create fills it for algo dbtree and auto
    // (0: computed on demand, O(P log P) each time, which the fusion planner's thousands of
    // cost calls cannot afford)
    int dbtree_depth;
    // device buffers go to MPI as they are (a CUDA-aware MPI); else they are staged through
    // pinned host memory (see above). No effect on host-addressable memory.
    int gpu_direct;
    // use the caller's communicator itself instead of a duplicate (MPI_Comm_dup). For a
    // program that creates one library per rank in one process, and whose own traffic on
    // the communicator is collectives only (their tags never meet ours): dtsim, where P
    // duplicates of MPI_COMM_WORLD cost SimGrid memory for every rank. The caller keeps the
    // communicator until dt_coll_free.
    int share_comm;
    dt_cost_params cost;
} dt_coll_opts;

// algo ring, inner ring, everything else automatic, cost = dt_cost_params_default()
dt_coll_opts dt_coll_opts_default(void);

// Ranks on this node as the launcher tells it, or 0 when none does. In order: DT_LOCAL_SIZE
// (yours to set), Open MPI's mpirun (OMPI_COMM_WORLD_LOCAL_SIZE), MPICH's and Intel MPI's
// (MPI_LOCALNRANKS), then Slurm's srun: this node's entry of SLURM_STEP_TASKS_PER_NODE (or
// SLURM_TASKS_PER_NODE), picked by SLURM_NODEID.
int dt_coll_local_size(void);
// Slurm's tasks-per-node list ("8(x4)", "2(x3),1", "4,3"): the count of node `node` (0 ..),
// or 0 when spec is malformed or has no such node.
int dt_slurm_tasks_on_node(const char *spec, int node);

typedef struct dt_coll dt_coll;            // one communicator's context
typedef struct dt_coll_req dt_coll_req;    // one allreduce in flight

// Collective over comm: duplicates it (our messages never meet the caller's), splits the
// sub-communicators hier/torus2d need, checks the options (the same on every rank is the
// caller's duty). dev does the local reductions of float32 data (may be NULL: host loops).
// Returns NULL with err set (DT_EXIT_USAGE: the message names the option) on bad options.
dt_coll *dt_coll_create(MPI_Comm comm, dt_device *dev, const dt_coll_opts *o, dt_error *err);
void dt_coll_free(dt_coll *c);  // collective (frees the communicators)
int dt_coll_rank(const dt_coll *c);
int dt_coll_size(const dt_coll *c);
const dt_coll_opts *dt_coll_get_opts(const dt_coll *c);  // as resolved (group, tx, ty, ...)

// Blocking: buf (count elements of dtype) becomes the sum over the ranks, in place.
// Returns 0, or -1 with err set: in checked mode when the ranks' counts differ (on every
// rank, DT_EXIT_USAGE), or for fp16 wire with float64 data.
int dt_allreduce(dt_coll *c, void *buf, size_t count, dt_dtype dtype, dt_error *err);

// Nonblocking: start posts the first messages and returns at once; progress advances every
// round whose messages have arrived and returns 1 when the allreduce is complete; wait
// completes it and frees the request (always call it, once). Requests may overlap (fusion
// buckets): start them in the same order on every rank. NULL with err set on failure.
dt_coll_req *dt_allreduce_start(dt_coll *c, void *buf, size_t count, dt_dtype dtype,
                                dt_error *err);
int dt_allreduce_progress(dt_coll_req *r);
void dt_allreduce_wait(dt_coll_req *r);
// Progress every request of c in flight (the trainer calls it between kernels).
void dt_coll_progress_all(dt_coll *c);

// An allreduce run by another library (the `nccl` algorithm, real/cuda/coll_nccl.c): start
// queues the sum of buf over the ranks, in place, and returns a handle; test returns 1 once
// it is complete (and frees the handle); destroy frees ctx (dt_coll_free calls it).
typedef struct {
    void *ctx;
    void *(*start)(void *ctx, void *buf, size_t count, dt_dtype dtype);
    int (*test)(void *ctx, void *handle);
    void (*destroy)(void *ctx);
} dt_coll_ext;
// Attach the extension that runs algo nccl (c takes ownership of ext->ctx). Without one, an
// allreduce with algo nccl fails with a message.
void dt_coll_set_ext(dt_coll *c, const dt_coll_ext *ext);

// The options as dt_coll_create settles them for p ranks (defaults filled, shapes checked,
// dbtree's depth and link crossings for its cost), without a communicator: for pricing a
// configuration with the cost model alone (dtsim --analytic). 0, or -1 with DT_EXIT_USAGE.
int dt_coll_opts_resolve(dt_coll_opts *o, int p, dt_error *err);

// The algorithm a call of `bytes` payload would run (auto resolved).
dt_algo dt_coll_resolve(const dt_coll *c, size_t bytes);

// ---- the ring's two halves as collectives of their own (coll_rsag.c) ----
// Reduce-scatter and allgather, in place on a buffer of count elements split into P shards
// (ZeRO's partitions, Rajbhandari et al. 2020; NCCL's in-place ncclReduceScatter and
// ncclAllGather). Shard i is [lo_i, lo_{i+1}): with counts NULL the even split of
// dt_shard_lo, which is the ring allreduce's chunk i (sizes differ by at most one), else
// counts[0..P-1] elements each, in rank order, summing to count (MPI_Reduce_scatter's
// recvcounts, MPI_Allgatherv's).
//   reduce-scatter: buf holds this rank's count elements; afterwards this rank's shard holds
//                   the sum over the ranks of that shard, and the rest of buf is undefined
//   allgather:      this rank's shard of buf is its contribution; afterwards buf holds every
//                   rank's shard, the same bits on every rank
// The algorithm is the communicator's where it has these halves: ring (any P), rhd (P a
// power of two and the even split: recursive halving, recursive doubling), mpi (the MPI
// library's MPI_Reduce_scatter and MPI_Allgatherv, host-addressable memory, counts below
// 2^31); every other algorithm, and those where their conditions fail, runs the ring's.
// Ring and rhd sum each element in the order their allreduce does: a reduce-scatter and
// an allgather of the same buffer give the bits of dt_allreduce with that algorithm. fp16
// on the wire applies as in the allreduce (the allgather rounds every shard to binary16:
// use a context without it to gather parameters). Sum only, like the allreduce.
// Returns 0, or -1 with err set (DT_EXIT_USAGE: counts that do not sum to count, a NULL
// buffer, fp16 wire with float64 data).
size_t dt_shard_lo(size_t count, int p, int i);  // first element of shard i (i = p: count)
int dt_reduce_scatter(dt_coll *c, void *buf, size_t count, const size_t *counts,
                      dt_dtype dtype, dt_error *err);
int dt_allgather(dt_coll *c, void *buf, size_t count, const size_t *counts, dt_dtype dtype,
                 dt_error *err);
// Nonblocking, completed by dt_allreduce_progress / dt_allreduce_wait like an allreduce's
// request (algo mpi runs its blocking call here and returns a request already complete).
dt_coll_req *dt_reduce_scatter_start(dt_coll *c, void *buf, size_t count,
                                     const size_t *counts, dt_dtype dtype, dt_error *err);
dt_coll_req *dt_allgather_start(dt_coll *c, void *buf, size_t count, const size_t *counts,
                                dt_dtype dtype, dt_error *err);

#endif
