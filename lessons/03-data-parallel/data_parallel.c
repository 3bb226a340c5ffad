// data_parallel.c — lesson 03: synchronous data-parallel SGD in plain MPI. The contract
// of each function is in data_parallel.h; the idea and the paper in README.md.
// Grade it from the repository root with `lessons/grade 03`.
#include "data_parallel.h"

// Every replica must start from the same weights, or averaging their gradients means
// nothing (Horovod's broadcast_parameters). The grader gives every rank a DIFFERENT seed.
void broadcast_weights(dt_net *net, MPI_Comm comm) {
    // TODO(student): one MPI_Bcast of net->params (net->n_total floats: the running
    // statistics too) from rank 0 to every rank of comm.
    (void)net;
    (void)comm;
}

// Rank r of P takes examples r·B .. r·B + B - 1 of the global batch, B = global_batch / P.
void shard(int global_batch, int rank, int size, int *first, int *count) {
    // TODO(student): set *count to B and *first to the first example of this rank's block.
    (void)global_batch;
    (void)rank;
    (void)size;
    *first = 0;
    *count = 0;
}

// g = (1/P) Σ_r g_r (Goyal et al. 2017, §2.1: the loss of the minibatch of kn is the mean
// over its examples, so its gradient is the mean of the workers' gradients).
void average_gradients(dt_net *net, MPI_Comm comm) {
    // TODO(student): MPI_Allreduce with MPI_SUM over net->grads (net->n_trainable floats,
    // in place: MPI_IN_PLACE), then scale by 1/P (net->dev->scale, or a loop).
    (void)net;
    (void)comm;
}

// shard, forward, loss, backward, average, update: see data_parallel.h.
void data_parallel_step(dt_net *net, dt_optim *opt, const float *x_global,
                        const int32_t *y_global, float lr, MPI_Comm comm) {
    // TODO(student): find this rank's shard of the P·B examples (P from MPI_Comm_size,
    // B = net->B); dt_net_set_batch with the shard's images and labels (an image is
    // in_c·in_h·in_w floats); dt_net_forward(net, 1); dt_net_loss(net);
    // dt_net_backward(net, 1.0f, NULL, NULL); average_gradients(net, comm);
    // dt_optim_step(opt, net, lr).
    (void)net;
    (void)opt;
    (void)x_global;
    (void)y_global;
    (void)lr;
    (void)comm;
}
