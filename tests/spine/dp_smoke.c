// dp_smoke.c — the spine's smoke test: a few data-parallel training steps of a small model
// on the cpu device, through dt_train_step (nn/train.h). The same source is compiled twice:
// against Open MPI (run with mpirun) and as an SMPI shared object (run with smpirun
// -no-privatize); tests/smpi/two_worlds.sh checks that both print the same losses, and that
// P ranks with batch G/P follow 1 rank with batch G.
// Not a benchmark and not a real dataset: the images are synthetic (below), so the test
// needs no files and every rank can generate exactly its own slice of every global batch.
//
// Output (rank 0): "# ..." comment lines, then "step <n> loss <value>" per step (9
// significant digits), then "replicas identical: yes" when every rank ends with bit-identical
// parameters. Exit: 0 ok; 1 a NaN/Inf loss (the step is named) or diverged replicas; 2 usage.
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "net.h"
#include "optim.h"
#include "train.h"

#ifdef DT_SMPI
#define WORLD "smpi"
#else
#define WORLD "mpi"
#endif

enum { IMG = 28, CLASSES = 10, CELL = 7 };

typedef struct {
    int steps, global_batch, threads, accumulate;
    float lr, dropout;
    uint64_t seed;
    const char *model;
} options;

// Synthetic "Fashion-MNIST-shaped" sample number s of the stream `seed`: a 1x28x28 image of
// uniform noise in [0, 0.5) plus a bright 7x7 square in the grid cell (label / 4, label % 4)
// of a 4x4 grid. Learnable in a few steps, and a pure function of (seed, s).
static int32_t synth_sample(uint64_t seed, uint64_t s, float *img) {
    int32_t label = (int32_t)(dt_uniform(seed, 2 * s) * CLASSES);
    if (label >= CLASSES) label = CLASSES - 1;
    int r0 = (label / 4) * CELL, c0 = (label % 4) * CELL;
    uint64_t noise = dt_mix64(seed ^ 0x5EED5EEDull);
    for (int h = 0; h < IMG; h++)
        for (int w = 0; w < IMG; w++) {
            int in_cell = h >= r0 && h < r0 + CELL && w >= c0 && w < c0 + CELL;
            img[h * IMG + w] = 0.5f * dt_uniform(noise, s * IMG * IMG + (uint64_t)(h * IMG + w))
                               + (in_cell ? 0.8f : 0.0f);
        }
    return label;
}

// FNV-1a over the bytes: a fingerprint to check that the replicas agree bit for bit.
static uint64_t fnv1a(const void *p, size_t n) {
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: dp_smoke [--steps N (8)] [--batch G (32), global, divisible by the ranks]\n"
            "                [--lr LR (0.05)] [--seed S (1)] [--model NAME (smallcnn)]\n"
            "                [--dropout P (0)] [--threads T (1)] [--accumulate K (1)]\n"
            "Data-parallel SGD (momentum 0.9) on synthetic 1x28x28 images, 10 classes.\n");
}

// Parses argv; returns 0, or 2 after printing the problem (rank 0 only prints).
static int parse(int argc, char **argv, options *o, int rank) {
    *o = (options){.steps = 8, .global_batch = 32, .threads = 1, .accumulate = 1, .lr = 0.05f,
                   .dropout = 0.0f, .seed = 1, .model = "smallcnn"};
    static const struct option longopts[] = {
        {"steps", required_argument, 0, 's'}, {"batch", required_argument, 0, 'b'},
        {"lr", required_argument, 0, 'l'},    {"seed", required_argument, 0, 'S'},
        {"model", required_argument, 0, 'm'}, {"dropout", required_argument, 0, 'd'},
        {"threads", required_argument, 0, 't'}, {"help", no_argument, 0, 'h'},
        {"accumulate", required_argument, 0, 'k'},
        {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 's': o->steps = (int)strtol(optarg, &end, 10); break;
        case 'b': o->global_batch = (int)strtol(optarg, &end, 10); break;
        case 'l': o->lr = strtof(optarg, &end); break;
        case 'S': o->seed = strtoull(optarg, &end, 10); break;
        case 'm': o->model = optarg; end = optarg + strlen(optarg); break;
        case 'd': o->dropout = strtof(optarg, &end); break;
        case 't': o->threads = (int)strtol(optarg, &end, 10); break;
        case 'k': o->accumulate = (int)strtol(optarg, &end, 10); break;
        case 'h': if (rank == 0) usage(stdout); return 2;
        default: if (rank == 0) usage(stderr); return 2;
        }
        if (!end || *end != '\0') {
            if (rank == 0) fprintf(stderr, "dp_smoke: bad value '%s' for an option\n", optarg);
            return 2;
        }
    }
    if (optind < argc || o->steps < 1 || o->global_batch < 1 || o->threads < 1 || o->accumulate < 1 ||
        !(o->lr > 0.0f)) {
        if (rank == 0) {
            fprintf(stderr, "dp_smoke: --steps, --batch, --threads must be >= 1 and --lr > 0\n");
            usage(stderr);
        }
        return 2;
    }
    return 0;
}

// Trains; returns the exit status (every rank returns the same one).
static int run(const options *o, int rank, int size) {
    if (o->global_batch % (size * o->accumulate) != 0) {
        if (rank == 0)
            fprintf(stderr, "dp_smoke: --batch %d is not divisible by the %d ranks x %d "
                    "micro-batches\n", o->global_batch, size, o->accumulate);
        return 2;
    }
    int B = o->global_batch / size;  // this rank's examples per step, in K micro-batches
    dt_device *dev = dt_device_cpu_create(o->threads);
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = B / o->accumulate;
    cfg.in_c = 1;
    cfg.in_h = cfg.in_w = IMG;
    cfg.num_classes = CLASSES;
    cfg.dropout = o->dropout;
    cfg.seed = o->seed;
    dt_error err;
    dt_error_clear(&err);
    dt_net *net = dt_model_create(o->model, dev, &cfg, &err);
    dt_optim_config ocfg = dt_optim_config_default(DT_OPT_SGD);
    dt_optim *opt = net ? dt_optim_create(net, &ocfg, &err) : NULL;
    dt_trainer t;
    // dt_trainer_init is collective and fails on every rank if any rank failed above.
    if (dt_trainer_init(&t, net, opt, MPI_COMM_WORLD, &err) != 0 ||
        dt_trainer_set_accumulate(&t, o->accumulate, &err) != 0) {
        if (rank == 0) fprintf(stderr, "dp_smoke: %s\n", err.msg);
        dt_optim_free(opt);
        dt_net_free(net);
        dev->destroy(dev);
        return err.code ? err.code : 1;
    }
    if (rank == 0)
        printf("# dp_smoke world=%s ranks=%d model=%s params=%zu global_batch=%d "
               "local_batch=%d accumulate=%d lr=%g seed=%" PRIu64 "\n",
               WORLD, size, o->model, net->n_trainable, o->global_batch, B, o->accumulate,
               (double)o->lr, o->seed);

    float *x = mallocCheck((size_t)B * IMG * IMG * sizeof(float));
    int32_t *y = mallocCheck((size_t)B * sizeof(int32_t));
    int status = 0;
    double t0 = MPI_Wtime();
    for (int step = 0; step < o->steps && status == 0; step++) {
        // This rank's slice of global batch `step`: samples step*G + rank*B + [0, B).
        uint64_t first = (uint64_t)step * (uint64_t)o->global_batch + (uint64_t)rank * B;
        for (int i = 0; i < B; i++)
            y[i] = synth_sample(o->seed, first + (uint64_t)i, x + (size_t)i * IMG * IMG);
        float loss = dt_train_step(&t, x, y, o->lr);
        if (!isfinite(loss)) {
            if (rank == 0) fprintf(stderr, "dp_smoke: loss is not finite at step %d\n", step);
            status = 1;
        } else if (rank == 0) {
            printf("step %d loss %.9g\n", step, (double)loss);
            fflush(stdout);
        }
    }
    double elapsed = MPI_Wtime() - t0;

    // Every replica must hold bit-identical parameters after the same updates.
    float *p = mallocCheck(net->n_total * sizeof(float));
    dev->to_host(dev, p, net->params, net->n_total * sizeof(float));
    unsigned long long h = fnv1a(p, net->n_total * sizeof(float)), lo = h, hi = h;
    free(p);
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("# MPI_Wtime for %d steps: %.6f s (%s)\n", o->steps, elapsed,
               strcmp(WORLD, "smpi") == 0 ? "simulated" : "real");
        printf("replicas identical: %s (fnv1a %016llx)\n", lo == hi ? "yes" : "NO", lo);
    }
    if (lo != hi) status = 1;

    free(x);
    free(y);
    dt_trainer_free(&t);
    dt_optim_free(opt);
    dt_net_free(net);
    dev->destroy(dev);
    return status;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    options o;
    int status = parse(argc, argv, &o, rank);
    if (status == 0) status = run(&o, rank, size);
    MPI_Finalize();
    return status;
}
