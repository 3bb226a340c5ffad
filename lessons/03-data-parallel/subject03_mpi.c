// subject03_mpi.c — the recording run of lesson 03's data_parallel.c (subject03.h): linked
// with grader.c (its main, its sequence of calls from the seed given as --seed, its verdicts
// quiet) and the student's file, under mpirun (subject_mpi) and smpirun (subject_smpi.so).
// The student's four functions are wrapped at link time (-Wl,--wrap=broadcast_weights, ...:
// grader.c's calls reach __wrap_*, the student's own calls inside data_parallel.c do not),
// and after each call what it returned is written to this rank's record, which the judge
// (remote.c) reads back: the parameters, the gradients, the shard. The step's simulated
// span under SMPI (grader.c's check_time) is recorded too: the judge's replayed step takes
// no simulated time.
#include <mpi.h>
#include <stdlib.h>

#include "data_parallel.h"
#include "subject03.h"

void __real_broadcast_weights(dt_net *net, MPI_Comm comm);
void __real_shard(int global_batch, int rank, int size, int *first, int *count);
void __real_average_gradients(dt_net *net, MPI_Comm comm);
void __real_data_parallel_step(dt_net *net, dt_optim *opt, const float *x_global,
                               const int32_t *y_global, float lr, MPI_Comm comm);
void __wrap_broadcast_weights(dt_net *net, MPI_Comm comm);
void __wrap_shard(int global_batch, int rank, int size, int *first, int *count);
void __wrap_average_gradients(dt_net *net, MPI_Comm comm);
void __wrap_data_parallel_step(dt_net *net, dt_optim *opt, const float *x_global,
                               const int32_t *y_global, float lr, MPI_Comm comm);

int lesson03_recording(void) { return 1; }

// The record is the world rank's (the calls' comm may be a group's: --groups).
static int world_rank(void) {
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

// The n floats at p, a buffer of the net's device (the cpu device's is host memory; through
// to_host all the same), as one frame: n, then the floats.
static void record_floats(uint32_t tag, const dt_net *net, const float *p, size_t n) {
    float *h = malloc(n * sizeof(float) + 1);
    if (!h) subject_stop(3);
    net->dev->to_host(net->dev, h, p, n * sizeof(float));
    subject_buf b = {0};
    sb_u64(&b, n);
    sb_put(&b, h, n * sizeof(float));
    rec03_put(world_rank(), tag, &b);
    sb_free(&b);
    free(h);
}

void __wrap_broadcast_weights(dt_net *net, MPI_Comm comm) {
    __real_broadcast_weights(net, comm);
    record_floats(SUBJECT03_BROADCAST, net, net->params, net->n_total);
}

// the arguments too: the judge checks that it replays the call it makes
void __wrap_shard(int global_batch, int rank, int size, int *first, int *count) {
    __real_shard(global_batch, rank, size, first, count);
    int64_t v[5] = {global_batch, rank, size, *first, *count};
    subject_buf b = {0};
    sb_put(&b, v, sizeof v);
    rec03_put(world_rank(), SUBJECT03_SHARD, &b);
    sb_free(&b);
}

void __wrap_average_gradients(dt_net *net, MPI_Comm comm) {
    __real_average_gradients(net, comm);
    record_floats(SUBJECT03_AVERAGE, net, net->grads, net->n_trainable);
}

void __wrap_data_parallel_step(dt_net *net, dt_optim *opt, const float *x_global,
                               const int32_t *y_global, float lr, MPI_Comm comm) {
    __real_data_parallel_step(net, opt, x_global, y_global, lr, comm);
    record_floats(SUBJECT03_STEP, net, net->params, net->n_total);
}

// grader.c measured se around the step (MPI_Wtime: simulated time under SMPI, where writing
// the record costs none)
void lesson03_step_span(int wrank, double se[2]) {
    subject_buf b = {0};
    sb_put(&b, se, 2 * sizeof(double));
    rec03_put(wrank, SUBJECT03_SPAN, &b);
    sb_free(&b);
}
