// dtrain_eval.c — test top-1 accuracy and loss of a data-parallel model: the ranks split the
// test set into contiguous parts (loader without shuffle, no dropped examples), each rank
// evaluates its part with batch statistics frozen (BN running statistics, no dropout), and the
// counts are summed with MPI_Allreduce. All replicas hold the same weights, so this equals
// one process evaluating everything.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dtrain.h"
#include "loader.h"

double dtrain_evaluate(dt_net *net, const dt_dataset *ds, MPI_Comm comm, double *mean_loss,
                       dt_error *err) {
    int rank, ranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    dt_loader_config lc = {.global_batch = net->B * ranks, .ranks = ranks, .rank = rank,
                           .seed = 0, .first_epoch = 0, .epochs = 1, .shuffle = 0,
                           .drop_last = 0, .queue = 2, .threads = 1};
    dt_loader *ld = dt_loader_create(ds, &lc, err);
    int failed = ld == NULL;
    size_t per = (size_t)net->in_c * net->in_h * net->in_w;
    float *x = calloc((size_t)net->B * per, sizeof(float));
    int32_t *y = calloc((size_t)net->B, sizeof(int32_t));
    float *probs = malloc((size_t)net->B * net->num_classes * sizeof(float));
    double sums[3] = {0, 0, 0};  // correct, loss sum, examples
    dt_batch b;
    int got;
    while (!failed && (got = dt_loader_next(ld, &b, NULL, err)) == 1) {
        if (b.b == 0) continue;
        memcpy(x, b.x, (size_t)b.b * per * sizeof(float));
        memcpy(y, b.labels, (size_t)b.b * sizeof(int32_t));
        memset(x + (size_t)b.b * per, 0, (size_t)(net->B - b.b) * per * sizeof(float));
        memset(y + b.b, 0, (size_t)(net->B - b.b) * sizeof(int32_t));
        dt_net_set_batch(net, x, y);
        dt_net_forward(net, 0);
        dt_net_loss(net);
        net->dev->to_host(net->dev, probs, net->probs,
                          (size_t)net->B * net->num_classes * sizeof(float));
        for (int i = 0; i < b.b; i++) {
            const float *p = probs + (size_t)i * net->num_classes;
            int best = 0;
            for (int k = 1; k < net->num_classes; k++)
                if (p[k] > p[best]) best = k;
            sums[0] += best == y[i];
            sums[1] += -log(fmax((double)p[y[i]], 1e-30));
            sums[2] += 1;
        }
    }
    if (!failed && got < 0) failed = 1;
    dt_loader_destroy(ld);
    free(x), free(y), free(probs);
    // agree on failure first, so that no rank waits in the sum for one that gave up
    int any_failed = failed;
    MPI_Allreduce(MPI_IN_PLACE, &any_failed, 1, MPI_INT, MPI_MAX, comm);
    if (any_failed) {
        if (!failed) dt_fail(err, DT_EXIT_RUNTIME, "evaluation failed on another rank");
        return -1;
    }
    MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, comm);
    if (mean_loss) *mean_loss = sums[2] > 0 ? sums[1] / sums[2] : 0;
    return sums[2] > 0 ? sums[0] / sums[2] : 0;
}
