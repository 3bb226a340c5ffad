// data_parallel.c — lesson 03, the reference solution: synchronous data-parallel SGD in
// plain MPI (Goyal et al. 2017, §2). The contract of each function is in data_parallel.h.
#include "data_parallel.h"

// Every replica must start from the same weights, or averaging their gradients means
// nothing (Horovod's broadcast_parameters). The whole buffer: trainable tensors and the
// batch-norm running statistics (they are not trained, but evaluation uses them).
// MPI counts are ints: every model of nn/ has far fewer than INT_MAX parameters.
void broadcast_weights(dt_net *net, MPI_Comm comm) {
    MPI_Bcast(net->params, (int)net->n_total, MPI_FLOAT, 0, comm);
}

// Rank r of P takes examples r·B .. r·B + B - 1 of the global batch, B = global_batch / P.
void shard(int global_batch, int rank, int size, int *first, int *count) {
    *count = global_batch / size;
    *first = rank * *count;
}

// g = (1/P) Σ_r g_r (Goyal et al. 2017, §2.1: the loss of the minibatch of kn is the mean
// over its examples, so its gradient is the mean of the workers' gradients).
void average_gradients(dt_net *net, MPI_Comm comm) {
    int size;
    MPI_Comm_size(comm, &size);
    MPI_Allreduce(MPI_IN_PLACE, net->grads, (int)net->n_trainable, MPI_FLOAT, MPI_SUM, comm);
    net->dev->scale(net->dev, net->grads, 1.0f / (float)size, net->n_trainable);
}

// shard, forward, loss, backward, average, update: see data_parallel.h.
void data_parallel_step(dt_net *net, dt_optim *opt, const float *x_global,
                        const int32_t *y_global, float lr, MPI_Comm comm) {
    int rank, size, first, count;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    shard(size * net->B, rank, size, &first, &count);
    size_t image = (size_t)net->in_c * net->in_h * net->in_w;
    dt_net_set_batch(net, x_global + (size_t)first * image, y_global + first);
    dt_net_forward(net, 1);
    dt_net_loss(net);                        // the mean over this rank's B examples
    dt_net_backward(net, 1.0f, NULL, NULL);  // seeds dL/dlogits with 1/B (the local mean)
    average_gradients(net, comm);            // mean of the P local means = the global mean
    dt_optim_step(opt, net, lr);
}
