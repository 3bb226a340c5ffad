// rank.c — dtsim's rank program (dtsim_rank.so): what SimGrid runs once per simulated GPU,
// all ranks in one process (-no-privatize). Each rank builds the real network of nn/ on the
// `model` device (sim/device_model.c: no data, every kernel advances simulated time by its
// roofline), and runs the real trainer step of nn/train.c — forward, backward with fusion
// buckets whose allreduces (nn/coll) start as soon as they are complete and are polled
// between layers, the optimizer (LARS: its per-tensor norms are kernels too). SimGrid
// simulates every message of every allreduce on the cluster's platform.
//
// Memory: one arena for the whole process, SMPI_SHARED_MALLOC'ed once (folded: every page
// maps the same small file block), and every rank's device carves its buffers from the same
// base. Nothing reads the data, and SMPI skips the copy of a message between shared buffers,
// so 1024 ranks of ResNet-50 cost megabytes, not terabytes.
//
// --device cpu runs the same steps with real numbers instead (the cpu device, small scale):
// dtrain's synthetic data, sharded as dtrain's loader shards it, so a simulated run and a
// real `mpirun dtrain` with the same seed print the same losses ("step N loss L", rank 0).
//
// dtsim (sim/dtsim.c) launches it; the user never does. Arguments: see parse(). Rank 0
// prints one line "DTSIM_RESULT {json}" on stdout; --trace writes a Chrome trace.
#include <getopt.h>
#include <math.h>
#include <mpi.h>
#include <simgrid/host.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll/coll.h"
#include "coll/coll_cost.h"
#include "data.h"
#include "coll/fusion.h"
#include "device_model.h"
#include "rank_trace.h"
#include "net.h"
#include "optim.h"
#include "train.h"

// The one arena of the process (see the top of the file). A process-wide pointer is what
// sharing needs here: sim/ is not nn/, whose code must keep no state outside its structs.
static void *g_arena;
static size_t g_arena_bytes;
// dbtree's node crossings (coll_cost.c), O(P log P) to count: counted by the first rank,
// copied by the others instead of each of P ranks counting them again in dt_coll_create
static dt_cost_params g_dbt;

typedef struct {
    char model[32], gpu[16], trace[512];
    dt_precision prec;
    int batch, iters, warmup, lars, progress, trace_ranks;
    size_t arena;
    dt_coll_opts coll;
    dt_fusion_opts fusion;
    int overlap;
    // --device cpu: real numbers on dtrain's synthetic data (see the top of the file)
    int cpu, image_size, classes;
    long synthetic_n;
    unsigned long long seed;
    float lr, momentum, wd;
} rank_opts;

// Exactly `s` simulated seconds on this rank's host (smpi_execute scales by smpi/host-speed).
static void advance(void *ctx, double s) {
    (void)ctx;
    if (s > 0) smpi_execute_flops(s * sg_host_get_speed(sg_host_self()));
}

static int parse(int argc, char **argv, rank_opts *o, int rank) {
    memset(o, 0, sizeof *o);
    snprintf(o->model, sizeof o->model, "resnet50");
    snprintf(o->gpu, sizeof o->gpu, "v100");
    o->batch = 32, o->iters = 3, o->warmup = 1, o->overlap = 1;
    o->coll = dt_coll_opts_default();
    o->fusion = (dt_fusion_opts){DT_FUSION_SEGMENTS, 0, 2};
    o->image_size = 32, o->classes = 10, o->synthetic_n = 1024, o->seed = 1;
    o->lr = 0.1f, o->momentum = 0.9f, o->wd = 5e-4f;  // dtrain's defaults
    static const struct option lo[] = {
        {"model", 1, 0, 'm'}, {"gpu", 1, 0, 'g'}, {"precision", 1, 0, 'p'},
        {"batch", 1, 0, 'b'}, {"iters", 1, 0, 'i'}, {"warmup", 1, 0, 'w'},
        {"lars", 0, 0, 'L'}, {"algo", 1, 0, 'a'}, {"fusion", 1, 0, 'f'},
        {"no-overlap", 0, 0, 'O'}, {"fp16-grads", 0, 0, 'h'}, {"group", 1, 0, 'G'},
        {"inner", 1, 0, 'I'}, {"hier-rs", 0, 0, 'R'}, {"tx", 1, 0, 'x'}, {"ty", 1, 0, 'y'},
        {"coarsen", 1, 0, 'c'}, {"alpha", 1, 0, 'A'}, {"beta", 1, 0, 'B'},
        {"alpha-intra", 1, 0, 'C'}, {"beta-intra", 1, 0, 'D'}, {"gamma", 1, 0, 'E'},
        {"share", 1, 0, 'S'},
        {"arena", 1, 0, 'r'}, {"trace", 1, 0, 't'}, {"trace-ranks", 1, 0, 'T'},
        {"progress", 0, 0, 'P'}, {"device", 1, 0, 'd'}, {"image-size", 1, 0, 's'},
        {"classes", 1, 0, 'k'}, {"synthetic-examples", 1, 0, 'n'}, {"seed", 1, 0, 'e'},
        {"lr", 1, 0, 'l'}, {"momentum", 1, 0, 'M'}, {"wd", 1, 0, 'W'}, {0, 0, 0, 0}};
    dt_error err;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (c) {
        case 'm': snprintf(o->model, sizeof o->model, "%s", optarg); break;
        case 'g': snprintf(o->gpu, sizeof o->gpu, "%s", optarg); break;
        case 'p':
            o->prec = !strcmp(optarg, "fp16") ? DT_PREC_FP16 : !strcmp(optarg, "tf32") ? DT_PREC_TF32 : DT_PREC_FP32;
            break;
        case 'b': o->batch = atoi(optarg); break;
        case 'i': o->iters = atoi(optarg); break;
        case 'w': o->warmup = atoi(optarg); break;
        case 'L': o->lars = 1; break;
        case 'a':
            if (dt_algo_parse(optarg, "--algo", &o->coll.algo, &err)) goto bad;
            // polls sweep (coll.h) where the schedule has hundreds of rounds per bucket for
            // polls to complete (dbtree's pipelined segments: 1024-GPU step 93 -> 60 s); with
            // a few rounds the tick message each poll sends costs more (hier 1024: +15-35 %)
            o->coll.sweep = o->coll.algo == DT_ALGO_DBTREE || o->coll.algo == DT_ALGO_AUTO;
            break;
        case 'f':
            if (dt_fusion_parse(optarg, &o->fusion, &err)) goto bad;
            break;
        case 'O': o->overlap = 0; break;
        case 'h': o->coll.wire_f16 = 1; break;
        case 'G': o->coll.group = atoi(optarg); break;
        case 'I':
            if (dt_algo_parse(optarg, "--inner", &o->coll.inner, &err)) goto bad;
            break;
        case 'R': o->coll.hier_rs = 1; break;
        case 'x': o->coll.tx = atoi(optarg); break;
        case 'y': o->coll.ty = atoi(optarg); break;
        case 'c': o->coll.coarsen = atoi(optarg); break;
        case 'A': o->coll.cost.alpha = atof(optarg); break;
        case 'B': o->coll.cost.beta = atof(optarg); break;
        case 'C': o->coll.cost.alpha_intra = atof(optarg); break;
        case 'D': o->coll.cost.beta_intra = atof(optarg); break;
        case 'E': o->coll.cost.gamma = atof(optarg); break;
        case 'S': o->coll.cost.share = atof(optarg); break;
        case 'r': o->arena = strtoull(optarg, NULL, 10); break;
        case 't': snprintf(o->trace, sizeof o->trace, "%s", optarg); break;
        case 'T': o->trace_ranks = atoi(optarg); break;
        case 'P': o->progress = 1; break;
        case 'd': o->cpu = strcmp(optarg, "cpu") == 0; break;
        case 's': o->image_size = atoi(optarg); break;
        case 'k': o->classes = atoi(optarg); break;
        case 'n': o->synthetic_n = atol(optarg); break;
        case 'e': o->seed = strtoull(optarg, NULL, 10); break;
        case 'l': o->lr = (float)atof(optarg); break;
        case 'M': o->momentum = (float)atof(optarg); break;
        case 'W': o->wd = (float)atof(optarg); break;
        default:
            snprintf(err.msg, sizeof err.msg, "dtsim rank program: bad option %s", argv[optind - 1]);
            goto bad;
        }
    }
    return 0;
bad:
    if (rank == 0) fprintf(stderr, "dtsim: %s\n", err.msg);
    return 2;
}

typedef struct {
    double iter, compute, comm, exposed;  // seconds per iteration
} iter_stats;

static int run(const rank_opts *o, int rank, int P) {
    dt_error err = {0};
    const dt_gpu_profile *gpu = dt_gpu_find(o->gpu);
    if (!gpu) {
        if (rank == 0) fprintf(stderr, "dtsim: unknown GPU '%s' (valid: %s)\n", o->gpu, dt_gpu_names());
        return 2;
    }
    if (!g_arena) {  // the first rank to arrive maps it; the others share it
        // whole shared-malloc blocks (dtsim sets 16 MiB): SimGrid 3.32 failed runs ("Link
        // failure") when the region ended in a partial block
        size_t block = (size_t)16 << 20;
        g_arena_bytes = o->arena ? o->arena : (size_t)8 << 30;
        g_arena_bytes = (g_arena_bytes + block - 1) / block * block;
        g_arena = SMPI_SHARED_MALLOC(g_arena_bytes);
    }
    dt_modeldev_config mc = {gpu, o->prec, advance, NULL, g_arena, g_arena_bytes};
    dt_device *dev = dt_device_model_create(&mc, &err);
    if (!dev) {
        if (rank == 0) fprintf(stderr, "dtsim: %s\n", err.msg);
        return 2;
    }
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = o->batch;
    if (dt_model_is_cifar(o->model)) {  // CIFAR ResNets: 32x32, 10 classes
        cfg.in_h = cfg.in_w = 32;
        cfg.num_classes = 10;
    }
    dt_net *net = dt_model_create(o->model, dev, &cfg, &err);
    if (!net) {
        if (rank == 0) fprintf(stderr, "dtsim: %s\n", err.msg);
        return 2;
    }
    dt_optim_config oc = dt_optim_config_default(o->lars ? DT_OPT_LARS : DT_OPT_SGD);
    dt_optim *opt = dt_optim_create(net, &oc, &err);
    dt_trainer tr;
    dt_coll_opts co = o->coll;
    if (dt_dbtree_shares_links(&co.cost, P, co.group)) {
        dt_dbtree_links_of(&g_dbt, P, co.group);
        co.cost.dbt = g_dbt.dbt;
    }
    if (!opt || dt_trainer_init(&tr, net, opt, MPI_COMM_WORLD, &err) ||
        dt_trainer_set_comm(&tr, &co, &o->fusion, o->overlap, &err)) {
        if (rank == 0) fprintf(stderr, "dtsim: %s\n", err.msg);
        return err.code ? err.code : 2;
    }
    // the host batch: its bytes are charged as a copy to the GPU, never read
    float *x = g_arena;
    int32_t *y = callocCheck((size_t)o->batch, sizeof(int32_t));
    rank_trace *trace = o->trace[0] && rank < o->trace_ranks ? rank_trace_new(rank) : NULL;
    tr.layer_times = trace != NULL;  // the trace draws every layer's kernels

    iter_stats sum = {0};

    for (int it = 0; it < o->warmup + o->iters; it++) {
        int timed = it >= o->warmup;
        MPI_Barrier(MPI_COMM_WORLD);
        dt_device_model_reset_stats(dev);
        double t0 = MPI_Wtime();
        dt_train_step(&tr, x, y, 0.1f);
        dev->sync(dev);
        double t = MPI_Wtime() - t0;
        dt_model_stats ms = dt_device_model_stats(dev);
        if (trace && timed) rank_trace_step(trace, &tr, t0, MPI_Wtime());
        if (timed) {
            sum.iter += t, sum.compute += ms.seconds;
            sum.comm += tr.last_comm, sum.exposed += t - ms.seconds;
        }
        if (o->progress && rank == 0)
            fprintf(stderr, "\r[dtsim] %d GPUs: iteration %d/%d (%s) simulated %.4f s   ", P,
                    it + 1, o->warmup + o->iters, timed ? "timed" : "warm-up", t);
    }
    if (o->progress && rank == 0) fprintf(stderr, "\r%*s\r", 70, "");
    double v[4] = {sum.iter / o->iters, sum.compute / o->iters, sum.comm / o->iters,
                   sum.exposed / o->iters};
    double mx[4];
    MPI_Reduce(v, mx, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (o->trace[0]) rank_trace_write(trace, o->trace, rank, o->trace_ranks);  // collective
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        dt_model_stats ms = dt_device_model_stats(dev);
        // what the α-β-γ model says the step's allreduces take, one after the other: the
        // buckets, and the batch-norm statistics (nn/train.c averages them too)
        const dt_coll_opts *co = dt_coll_get_opts(tr.coll);
        double wire = co->wire_f16 ? 2 : 4, model = 0;
        for (int b = 0; b < tr.n_buckets; b++) {
            double bytes = (double)(tr.buckets[b].hi - tr.buckets[b].lo) * wire;
            model += dt_coll_cost(dt_coll_resolve(tr.coll, (size_t)bytes), co, P, bytes);
        }
        double stats = (double)(net->n_total - net->n_trainable) * 4;
        if (stats > 0) model += dt_coll_cost(dt_coll_resolve(tr.coll, (size_t)stats), co, P, stats);
        printf("DTSIM_RESULT {\"gpus\": %d, \"iter_s\": %.9g, \"compute_s\": %.9g, \"comm_s\": "
               "%.9g, \"exposed_s\": %.9g, \"buckets\": %d, \"algo\": \"%s\", \"params\": %zu, "
               "\"arena_used\": %zu, \"model_comm_s\": %.9g}\n", P, mx[0], mx[1], mx[2], mx[3],
               tr.n_buckets, dt_algo_name(dt_coll_resolve(tr.coll, net->n_trainable * 4)),
               net->n_trainable, ms.arena_used, model);
        fflush(stdout);
    }
    rank_trace_free(trace);
    free(y);
    dt_trainer_free(&tr);
    dt_optim_free(opt);
    dt_net_free(net);
    dev->destroy(dev);
    return 0;
}

// --device cpu: the steps of `mpirun -np P dtrain --device cpu --data synthetic` with the
// same seed, image size, classes, examples, batch, constant lr (--schedule const --warmup 0),
// momentum and weight decay: the same initial weights (cfg.seed), the same epoch
// permutation and shards (real/data_shard.c), the same images (real/data_synthetic.c).
// Rank 0 prints "step N loss L" per step and "epoch E train_loss L" per completed epoch.
static int run_real(const rank_opts *o, int rank, int P) {
    dt_error err = {0};
    dt_device *dev = dt_device_cpu_create(1);
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = o->batch;
    cfg.in_c = 3, cfg.in_h = cfg.in_w = o->image_size;
    cfg.num_classes = o->classes;
    cfg.seed = o->seed;
    int G = o->batch * P;
    dt_dataset *ds = dt_dataset_synthetic(o->synthetic_n, 3, o->image_size, o->image_size,
                                          o->classes, o->seed, &err);
    dt_net *net = ds ? dt_model_create(o->model, dev, &cfg, &err) : NULL;
    dt_optim_config oc = dt_optim_config_default(o->lars ? DT_OPT_LARS : DT_OPT_SGD);
    oc.momentum = o->momentum, oc.weight_decay = o->wd;
    dt_optim *opt = net ? dt_optim_create(net, &oc, &err) : NULL;
    int64_t spe = ds ? dt_steps_per_epoch(ds->n, G, 1) : 0;
    dt_trainer tr;
    if (!opt || spe < 1 || dt_trainer_init(&tr, net, opt, MPI_COMM_WORLD, &err) ||
        dt_trainer_set_comm(&tr, &o->coll, &o->fusion, o->overlap, &err)) {
        if (rank == 0)
            fprintf(stderr, "dtsim: %s\n", spe < 1 && opt ? "--device cpu: fewer examples "
                    "than one global batch" : err.msg);
        return 2;
    }
    size_t per = (size_t)3 * o->image_size * o->image_size;
    float *x = mallocCheck((size_t)o->batch * per * sizeof(float));
    int32_t *y = mallocCheck((size_t)o->batch * sizeof(int32_t));
    int64_t *perm = mallocCheck((size_t)ds->n * sizeof(int64_t));
    int64_t *idx = mallocCheck((size_t)o->batch * sizeof(int64_t));
    double epoch_sum = 0;
    int rc = 0, steps = o->warmup + o->iters;
    for (int s = 0; s < steps && !rc; s++) {
        int64_t epoch = s / spe, step = s % spe;
        if (step == 0) dt_epoch_permutation(o->seed, epoch, ds->n, perm);
        int b = dt_shard_indices(perm, ds->n, G, P, rank, 1, step, idx, &err);
        if (b != o->batch || dt_dataset_fill(ds, idx, b, o->seed, epoch, 1, x, y, &err)) {
            fprintf(stderr, "dtsim: rank %d: %s\n", rank, err.msg);
            rc = 1;
            break;
        }
        float loss = dt_train_step(&tr, x, y, o->lr);
        epoch_sum += loss;
        if (rank == 0) printf("step %d loss %.9g\n", s, loss);
        if (rank == 0 && step == spe - 1)
            printf("epoch %lld train_loss %.9g\n", (long long)epoch + 1, epoch_sum / spe);
        if (step == spe - 1) epoch_sum = 0;
    }
    if (rank == 0 && !rc)
        printf("DTSIM_RESULT {\"gpus\": %d, \"iter_s\": 1, \"compute_s\": 0, \"comm_s\": 0, "
               "\"exposed_s\": 0, \"buckets\": %d, \"algo\": \"%s\", \"params\": %zu, "
               "\"arena_used\": 0, \"model_comm_s\": 0}\n", P, tr.n_buckets,
               dt_algo_name(dt_coll_resolve(tr.coll, net->n_trainable * 4)), net->n_trainable);
    fflush(stdout);
    free(x), free(y), free(perm), free(idx);
    dt_trainer_free(&tr);
    dt_optim_free(opt);
    dt_net_free(net);
    dt_dataset_free(ds);
    dev->destroy(dev);
    return rc;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    rank_opts o;
    int rc = parse(argc, argv, &o, rank);
    if (rc == 0) rc = o.cpu ? run_real(&o, rank, P) : run(&o, rank, P);
    MPI_Finalize();
    return rc;
}
