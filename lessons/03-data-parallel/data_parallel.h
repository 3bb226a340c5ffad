// data_parallel.h — lesson 03's contract: synchronous data-parallel SGD in plain MPI
// (Goyal et al. 2017, §2: every worker holds a replica, computes the gradient of its own
// n = B examples of the minibatch of kn = P·B, the gradients are averaged, and every
// replica applies the same update, so P workers follow one worker with batch P·B).
// You write the four functions in data_parallel.c; the grader (grader.c) calls them on
// every rank of comm, under mpirun and under SimGrid's SMPI (all ranks in one process:
// no writable globals, no `static` locals).
//
// Memory: the grader uses the cpu device, whose "device memory" is ordinary host memory,
// so net->params and net->grads may be handed to MPI directly (nn/train.c does the same;
// on a GPU they would go through a host buffer or a CUDA-aware MPI).
#ifndef LESSON03_DATA_PARALLEL_H
#define LESSON03_DATA_PARALLEL_H

#include <mpi.h>
#include <stdint.h>

#include "net.h"
#include "optim.h"

// Collective over comm. Afterwards every rank's net->params holds rank 0's values — the
// whole buffer, n_total floats: the trainable tensors AND the batch-norm running
// statistics (net.h: [trainable | running stats]). Rank 0's own values do not change.
void broadcast_weights(dt_net *net, MPI_Comm comm);

// Local (no MPI). Which examples of a global batch of `global_batch` examples rank `rank`
// of `size` takes: [*first, *first + *count). global_batch is a multiple of size; every
// rank takes B = global_batch / size examples, rank r the contiguous block
// r·B .. r·B + B - 1, so the shards are disjoint and cover the global batch.
void shard(int global_batch, int rank, int size, int *first, int *count);

// Collective over comm, in place. net->grads (n_trainable floats) becomes the mean over
// the ranks of every rank's net->grads: (1/P)·Σ_r g_r, the same on every rank.
void average_gradients(dt_net *net, MPI_Comm comm);

// Collective over comm: one data-parallel training step. x_global (P·B images of
// net->in_c × net->in_h × net->in_w floats, NCHW) and y_global (P·B labels) are the SAME
// global batch on every rank; B = net->B. Take this rank's shard (shard()), load it
// (dt_net_set_batch), forward in training mode, loss, backward with loss scale 1, average
// the gradients (average_gradients()), and update with dt_optim_step(opt, net, lr).
// Its communication: one allreduce of the n_trainable gradient floats a step, nothing more
// (the weights stay equal because every rank applies the same update: no broadcast here).
void data_parallel_step(dt_net *net, dt_optim *opt, const float *x_global,
                        const int32_t *y_global, float lr, MPI_Comm comm);

#endif
