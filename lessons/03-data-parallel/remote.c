// remote.c — the judge's data_parallel.c (subject03.h): lesson 03's grader is linked with
// these stubs of the student's four functions in place of the student's file, so that the
// process that prints the verdicts never holds the student's code. Each stub reads back, on
// its world rank, what the recording run of the student's file (subject03_mpi.c, under
// mpirun or smpirun before this run, with the same seed and arguments) returned at the same
// call: the parameters after the broadcast or the step, the averaged gradients, the shard.
// A record that ends early (the student's run crashed, hung, or exited) ends this run as a
// crash or a hang that names the call (kit/subject.h's replay_missing).
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "data_parallel.h"
#include "subject03.h"

int lesson03_recording(void) { return 0; }

static int world_rank(void) {
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

// This rank's next frame of `tag` into b. Missing: under mpirun rank 0 says what the
// student's run did (every rank stops at the same call, or mpirun stops them all); under
// SMPI whichever rank comes first, since its stop ends every rank's process.
static void replay(uint32_t tag, subject_buf *b, const char *what) {
    int r = world_rank(), speak = r == 0;
#ifdef DT_SMPI
    speak = 1;
#endif
    if (rec03_next(r, tag, b)) replay_missing(what, speak);
}

// A frame of n floats (u64 n, then the floats) into p, a buffer of the net's device.
static void replay_floats(uint32_t tag, const dt_net *net, float *p, size_t n,
                          const char *what) {
    subject_buf b = {0};
    replay(tag, &b, what);
    if (sb_get_u64(&b) != n || b.len - b.at != n * sizeof(float)) subject_malformed(what);
    net->dev->from_host(net->dev, p, b.p + b.at, n * sizeof(float));
    sb_free(&b);
}

void broadcast_weights(dt_net *net, MPI_Comm comm) {
    (void)comm;
    char what[96];
    snprintf(what, sizeof what, "broadcast_weights on rank %d", world_rank());
    replay_floats(SUBJECT03_BROADCAST, net, net->params, net->n_total, what);
}

void shard(int global_batch, int rank, int size, int *first, int *count) {
    char what[128];
    snprintf(what, sizeof what, "shard(global_batch=%d, rank=%d, size=%d) on rank %d",
             global_batch, rank, size, world_rank());
    subject_buf b = {0};
    replay(SUBJECT03_SHARD, &b, what);
    int64_t v[5];
    sb_get(&b, v, sizeof v);
    // the call recorded is this one, and what it wrote is an int
    if (b.bad || b.at != b.len || v[0] != global_batch || v[1] != rank || v[2] != size ||
        v[3] != (int)v[3] || v[4] != (int)v[4])
        subject_malformed(what);
    *first = (int)v[3];
    *count = (int)v[4];
    sb_free(&b);
}

void average_gradients(dt_net *net, MPI_Comm comm) {
    (void)comm;
    char what[96];
    snprintf(what, sizeof what, "average_gradients on rank %d", world_rank());
    replay_floats(SUBJECT03_AVERAGE, net, net->grads, net->n_trainable, what);
}

// The step's inputs are grader.c's and the same in the recording: only its result, the
// parameters afterwards, is read back (the optimizer's state stays the judge's, unread).
void data_parallel_step(dt_net *net, dt_optim *opt, const float *x_global,
                        const int32_t *y_global, float lr, MPI_Comm comm) {
    (void)opt, (void)x_global, (void)y_global, (void)lr, (void)comm;
    char what[96];
    snprintf(what, sizeof what, "data_parallel_step on rank %d", world_rank());
    replay_floats(SUBJECT03_STEP, net, net->params, net->n_total, what);
}

void lesson03_step_span(int wrank, double se[2]) {
    char what[96];
    snprintf(what, sizeof what, "the timed data_parallel_step on rank %d", wrank);
    subject_buf b = {0};
    replay(SUBJECT03_SPAN, &b, what);
    sb_get(&b, se, 2 * sizeof(double));
    if (b.bad || b.at != b.len) subject_malformed(what);
    sb_free(&b);
}
