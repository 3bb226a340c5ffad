// trainer_init.c — checks dt_trainer_init (nn/train.h) on 3 or more ranks, in either world:
//  1. one rank without an optimizer: every rank fails with DT_EXIT_USAGE (none hangs), the bad
//     rank names its problem, the others point at "another rank";
//  2. one rank with a different per-rank batch: every rank fails, naming both batches;
//  3. ranks initialised with different seeds: after init every rank holds rank 0's
//     parameters, bit for bit (the broadcast).
// Prints "PASS <check>" or "FAIL <check>: ..." per rank and check; exits 1 on any FAIL.
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "net.h"
#include "optim.h"
#include "train.h"

// A small network: linear 1x4x4 -> 3 classes, per-rank batch B, parameters from seed.
static dt_net *tiny_net(dt_device *dev, int B, uint64_t seed) {
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = B;
    cfg.in_c = 1;
    cfg.in_h = cfg.in_w = 4;
    cfg.num_classes = 3;
    cfg.seed = seed;
    dt_net *net = dt_net_new(dev, "tiny", &cfg);
    dt_net_add_linear(net, "fc", -1, 3, 1);
    dt_error err;
    dt_error_clear(&err);
    if (dt_net_finalize(net, &err) != 0) {
        fprintf(stderr, "trainer_init: cannot build the test network: %s\n", err.msg);
        return NULL;
    }
    return net;
}

static int check(int rank, int ok, const char *name, const char *msg) {
    if (ok) printf("PASS rank %d %s\n", rank, name);
    else printf("FAIL rank %d %s: %s\n", rank, name, msg);
    fflush(stdout);
    return ok ? 0 : 1;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, fails = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    dt_device *dev = dt_device_cpu_create(1);
    dt_optim_config ocfg = dt_optim_config_default(DT_OPT_SGD);
    dt_error err;
    dt_trainer t;

    // 1. the last rank has no optimizer
    dt_net *net = tiny_net(dev, 2, 7);
    dt_optim *opt = dt_optim_create(net, &ocfg, NULL);
    dt_error_clear(&err);
    int r = dt_trainer_init(&t, net, rank == size - 1 ? NULL : opt, MPI_COMM_WORLD, &err);
    const char *want = rank == size - 1 ? "optimizer is NULL" : "another rank rejected";
    fails += check(rank, r == -1 && err.code == DT_EXIT_USAGE && strstr(err.msg, want),
                   "one_rank_without_optimizer_fails_everywhere", err.msg);

    // 2. rank 1 has batch 3, the others 2
    dt_optim_free(opt);
    dt_net_free(net);
    net = tiny_net(dev, rank == 1 ? 3 : 2, 7);
    opt = dt_optim_create(net, &ocfg, NULL);
    dt_error_clear(&err);
    r = dt_trainer_init(&t, net, opt, MPI_COMM_WORLD, &err);
    fails += check(rank, r == -1 && err.code == DT_EXIT_USAGE && strstr(err.msg, "batch 2..3"),
                   "different_batches_fail_everywhere", err.msg);

    // 3. different seeds: rank 0's parameters win
    dt_optim_free(opt);
    dt_net_free(net);
    net = tiny_net(dev, 2, 100 + (uint64_t)rank);
    dt_net *ref = tiny_net(dev, 2, 100);  // what rank 0 has
    opt = dt_optim_create(net, &ocfg, NULL);
    int same_before = rank == 0, same_after = 0;
    if (rank != 0)  // different seeds really give different parameters
        same_before = memcmp(net->params, ref->params, net->n_total * sizeof(float)) == 0;
    dt_error_clear(&err);
    r = dt_trainer_init(&t, net, opt, MPI_COMM_WORLD, &err);
    if (r == 0)
        same_after = memcmp(net->params, ref->params, net->n_total * sizeof(float)) == 0;
    fails += check(rank, r == 0 && (rank == 0 || !same_before) && same_after,
                   "init_broadcasts_rank0_parameters", r ? err.msg : "parameters differ");
    dt_trainer_free(&t);
    dt_optim_free(opt);
    dt_net_free(ref);
    dt_net_free(net);
    dev->destroy(dev);

    MPI_Allreduce(MPI_IN_PLACE, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%s: %d failed checks over %d ranks\n", fails ? "FAIL" : "PASS", fails, size);
    MPI_Finalize();
    return fails ? 1 : 0;
}
