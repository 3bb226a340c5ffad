// data_parallel.c — lesson 03: synchronous data-parallel SGD in plain MPI. The contract
// of each function is in data_parallel.h; the idea and the paper in README.md.
// Grade it from the repository root with `lessons/grade 03`.
#include "data_parallel.h"

// Every replica must start from the same weights, or averaging their gradients means
// nothing (Horovod's broadcast_parameters). The grader gives every rank a DIFFERENT seed.
void broadcast_weights(dt_net *net, MPI_Comm comm) {
    // TODO(student): the contract (data_parallel.h): afterwards every rank's whole
    //   parameter buffer (net->n_total floats: trainable tensors and BN running statistics)
    //   is rank 0's, bit for bit. Cost: one collective call. Stuck: HINTS.md.
    (void)net;
    (void)comm;
}

// Rank r of P takes examples r·B .. r·B + B - 1 of the global batch, B = global_batch / P.
void shard(int global_batch, int rank, int size, int *first, int *count) {
    // TODO(student): the contract: the P ranks' blocks are disjoint, contiguous, of equal
    //   size B = global_batch / P, in rank order, and together cover the global batch.
    (void)global_batch;
    (void)rank;
    (void)size;
    *first = 0;
    *count = 0;
}

// g = (1/P) Σ_r g_r (Goyal et al. 2017, §2.1: the loss of the minibatch of kn is the mean
// over its examples, so its gradient is the mean of the workers' gradients).
void average_gradients(dt_net *net, MPI_Comm comm) {
    // TODO(student): the contract: afterwards every rank's net->grads (net->n_trainable
    //   floats) holds the mean over the P ranks of their gradients, the same bits on every
    //   rank, in place (no copy of the gradient). Cost: one collective call, then O(n).
    (void)net;
    (void)comm;
}

// shard, forward, loss, backward, average, update: see data_parallel.h.
void data_parallel_step(dt_net *net, dt_optim *opt, const float *x_global,
                        const int32_t *y_global, float lr, MPI_Comm comm) {
    // TODO(student): the contract: x_global, y_global hold the same P·B examples on every
    //   rank (B = net->B); after the call every rank's weights equal what one process
    //   would get from one step of opt on all P·B examples (Goyal et al. 2017, §2), up to
    //   the rounding of the gradient's sum. Each rank computes on its own B examples only.
    //   Cost: on the wire, one allreduce of the gradient and nothing else (the grade times
    //   it in simulated time against 2(P-1)α + 2(P-1)/P·nβ, ±5 %). Stuck: HINTS.md.
    (void)net;
    (void)opt;
    (void)x_global;
    (void)y_global;
    (void)lr;
    (void)comm;
}
