// sharded.h — lesson 11's contract: the optimizer step of ZeRO stage 1 (Rajbhandari et al.
// 2020 §5.1, "optimizer state partitioning"; Stanford CS336 assignment 2). Plain data
// parallelism allreduces the gradient and every rank updates the whole model with the whole
// momentum. Here rank r of P keeps the momentum of ITS SHARD of the trainable parameters
// only, and a step is: reduce-scatter the gradient (the first half of the ring), update the
// shard, allgather the parameters (the second half). Same bytes on the wire as the
// allreduce, 1/P of the optimizer state per rank.
//
// You write the three functions in sharded.c. The grader (grader.c) calls them on every rank,
// under mpirun (P = 1..4) and under SimGrid's SMPI (all ranks in one process: no writable
// globals, no `static` locals). The library's two halves are yours to call (calls.txt):
// dt_reduce_scatter and dt_allgather (nn/coll/coll.h), and dt_shard_lo.
#ifndef LESSON11_SHARDED_H
#define LESSON11_SHARDED_H

#include "coll/coll.h"
#include "net.h"

typedef struct {
    size_t lo, hi;          // this rank's shard of the n_trainable parameters: [lo, hi)
    float *velocity;        // the momentum of the shard: hi - lo floats, from dev->alloc
    dt_device *dev;         // where velocity lives and the update kernels run
    float momentum, weight_decay;
} shard_state;

// Local. Set s up for rank `rank` of `size` on net: the shard is the ring's chunk `rank` of
// the n_trainable elements (what the reduce-scatter leaves summed on this rank:
// [dt_shard_lo(n, size, rank), dt_shard_lo(n, size, rank + 1))), its momentum zero and
// allocated on dev (dev->alloc zero-fills) — for the shard only: the grader counts the bytes.
void shard_state_init(shard_state *s, const dt_net *net, dt_device *dev, int rank, int size,
                      float momentum, float weight_decay);
void shard_state_free(shard_state *s);  // frees what init allocated

// Collective over coll's ranks: one SGD step with momentum (torch.optim.SGD, no Nesterov:
// g' = g + wd·w for conv/linear WEIGHT tensors only, g' = g for biases and batch-norm
// parameters; v = m·v + g'; w -= lr·v; dev->sgd_update does exactly this on a range).
// On entry net->grads (n_trainable floats) holds this rank's gradient; the step uses the
// MEAN over the ranks, (1/P)·Σ_r g_r. Afterwards every rank holds the same trainable
// parameters, bit for bit what the plain step gives: dt_allreduce with the ring, scale by
// 1/P, dt_optim_step. net->grads outside the shard may be left anything.
// Cost: one reduce-scatter and one allgather of n_trainable floats, nothing more on the wire.
void sharded_step(shard_state *s, dt_net *net, dt_coll *coll, float lr);

#endif
