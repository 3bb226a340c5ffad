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
#include <stdint.h>

#include "../device.h"
#include "../dt.h"

// The algorithms' names and numbers, dt_dtype, the cost model's machine and the options
// (dt_algo, dt_cost_params, dt_coll_opts): coll_opts.h, which the schedules and the cost
// model include without the API.
#include "coll_opts.h"

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

// Bytes this rank's schedules on c have handed to MPI_Isend since dt_coll_create, every
// collective and lane together (the wire volume, fp16 on the wire at 2 bytes per element;
// the `mpi` algorithm's own collectives are not counted): ZeRO's volumes measured
// (Rajbhandari et al. 2020 §7; tests/sim dtsim_gpt.sh zero3).
uint64_t dt_coll_bytes_sent(const dt_coll *c);

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
