// zero_stages.c — ZeRO stages 2 and 3 (nn/train_zero.c) through the trainer's API, in
// either world (mpirun, or smpirun: the trainer code dtsim's ranks run, sim/rank.c). On a
// small conv + batch norm + linear network and the cpu device, 3 SGD steps with momentum of
// the plain trainer (ring, a bucket per layer) and of each stage from the same start on the
// same batches:
//  1. the parameters are the plain run's bits (stage 3: gathered with
//     dt_trainer_gather_params), on every rank: the same sums, in the same order;
//  2. stage 2 and 3 keep no whole gradient (net->grads freed), stage 3 no whole parameters
//     between steps, and each rank's gradient shard is the sum of its pieces of the units:
//     the memory report's gradient bytes are 4 * (sum over units of dt_shard_lo's piece).
// Prints "PASS <check>" or "FAIL <check>: ..." per rank; exits 1 on any FAIL.
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "net.h"
#include "optim.h"
#include "train.h"

enum { B = 4, STEPS = 3 };

static uint64_t splitmix(uint64_t x) {  // SplitMix64's finaliser: the batches' numbers
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static dt_net *small_net(dt_device *dev) {
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = B;
    cfg.in_c = 2;
    cfg.in_h = cfg.in_w = 6;
    cfg.num_classes = 3;
    cfg.seed = 11;
    dt_net *net = dt_net_new(dev, "zero-small", &cfg);
    int c = dt_net_add_conv(net, "conv1", -1, 5, 3, 1, 1, 0);
    c = dt_net_add_bn(net, "bn1", c);
    c = dt_net_add_relu(net, c);
    c = dt_net_add_conv(net, "conv2", c, 4, 3, 1, 1, 1);
    c = dt_net_add_avgpool(net, c, 1, 1);
    dt_net_add_linear(net, "fc", c, 3, 1);
    dt_error err;
    dt_error_clear(&err);
    if (dt_net_finalize(net, &err)) {
        fprintf(stderr, "zero_stages: cannot build the network: %s\n", err.msg);
        return NULL;
    }
    return net;
}

// STEPS steps at the given stage; returns the parameters (n_total floats, malloc'ed).
static float *train(int stage, int rank, int size, size_t *n_total, dt_trainer_memory *mem,
                    int *grads_freed, int *params_freed) {
    dt_device *dev = dt_device_cpu_create(1);
    dt_net *net = small_net(dev);
    dt_optim_config oc = dt_optim_config_default(DT_OPT_SGD);
    oc.momentum = 0.9f, oc.weight_decay = 1e-4f;
    dt_error err;
    dt_error_clear(&err);
    dt_optim *opt = stage ? dt_optim_create_shard(net, &oc, dt_shard_lo(net->n_trainable, size,
                                                  rank), dt_shard_lo(net->n_trainable, size,
                                                  rank + 1), &err)
                          : dt_optim_create(net, &oc, &err);
    dt_trainer t;
    dt_coll_opts co = dt_coll_opts_default();
    co.algo = DT_ALGO_RING;
    dt_fusion_opts fo = {DT_FUSION_NONE, 0, 0};
    if (dt_trainer_init(&t, net, opt, MPI_COMM_WORLD, &err) ||
        dt_trainer_set_comm(&t, &co, &fo, 1, &err) || dt_trainer_set_shard(&t, stage, &err)) {
        fprintf(stderr, "zero_stages: stage %d: %s\n", stage, err.msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t img = (size_t)net->in_c * net->in_h * net->in_w;
    float x[B * 2 * 6 * 6];
    int32_t y[B];
    uint64_t s = 0x9E3779B97F4A7C15ull ^ (uint64_t)(rank + 1);
    for (int step = 0; step < STEPS; step++) {
        for (size_t i = 0; i < B * img; i++) {
            s = splitmix(s + 0x9E3779B97F4A7C15ull);
            x[i] = (float)((double)(s >> 11) / 9007199254740992.0) - 0.5f;
        }
        for (int i = 0; i < B; i++) y[i] = (int32_t)((s >> (8 * i)) % 3);
        dt_train_step(&t, x, y, 0.1f);
    }
    *grads_freed = net->grads == NULL;
    *params_freed = net->params == NULL;
    dt_trainer_memory_report(&t, mem);
    dt_trainer_gather_params(&t);
    *n_total = net->n_total;
    float *p = mallocCheck(net->n_total * sizeof(float));
    memcpy(p, net->params, net->n_total * sizeof(float));
    dt_trainer_free(&t);
    dt_optim_free(opt);
    dt_net_free(net);
    dev->destroy(dev);
    return p;
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
    size_t n = 0, n2;
    dt_trainer_memory m0, m;
    int gf, pf;
    float *plain = train(DT_SHARD_NONE, rank, size, &n, &m0, &gf, &pf);
    // the pieces of each layer's unit for this rank, as the ring splits it
    dt_device *dev = dt_device_cpu_create(1);
    dt_net *net = small_net(dev);
    size_t pieces = 0;
    for (int i = 0; i < net->n_layers; i++) {
        size_t len = net->layers[i]->n_trainable;
        pieces += dt_shard_lo(len, size, rank + 1) - dt_shard_lo(len, size, rank);
    }
    dt_net_free(net);
    dev->destroy(dev);
    for (int stage = DT_SHARD_GRADIENTS; stage <= DT_SHARD_PARAMETERS; stage++) {
        char name[64], msg[200];
        float *p = train(stage, rank, size, &n2, &m, &gf, &pf);
        size_t bad = n2 == n ? 0 : 1;
        for (size_t i = 0; i < n && !bad; i++) bad = memcmp(&p[i], &plain[i], 4) ? i + 1 : 0;
        snprintf(name, sizeof name, "stage_%d_is_plain_bit_for_bit", stage);
        snprintf(msg, sizeof msg, "element %zu of %zu differs", bad ? bad - 1 : 0, n);
        fails += check(rank, !bad, name, msg);
        snprintf(name, sizeof name, "stage_%d_keeps_its_pieces_only", stage);
        snprintf(msg, sizeof msg, "whole gradient freed %d, parameters freed %d, gradient "
                 "%zu B (pieces %zu B)", gf, pf, m.grads, pieces * 4);
        fails += check(rank, gf && pf == (stage == DT_SHARD_PARAMETERS) &&
                       m.grads == pieces * 4 && m.optim == pieces * 4, name, msg);
        free(p);
    }
    free(plain);
    MPI_Allreduce(MPI_IN_PLACE, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%s: %d failed checks over %d ranks\n", fails ? "FAIL" : "PASS", fails,
                          size);
    MPI_Finalize();
    return fails ? 1 : 0;
}
