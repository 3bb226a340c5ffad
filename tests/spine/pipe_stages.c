// pipe_stages.c — pipeline parallelism (nn/train_pipe.c) through the trainer's API, against
// the plain trainer, on 4 ranks: a GPT-2 of 4 blocks (gpt2-tiny's width), AdamW with
// clipping by global norm (active: the norm is above the bound), 4 micro-batches, 3 steps
// from the same start on the same tokens. Checks:
//  1. 4 stages x 1 (1F1B, then GPipe): every step's loss, and the weights gathered from the
//     stages, are the plain run's bits (one rank, the same micro-batches, the tied head's
//     gradient kept apart): a pipeline changes no sum;
//  2. 2 stages x 2 data-parallel ranks, halving-doubling: the bits of the plain run on 2 ranks;
//     with the ring, the same within 1e-5 (relative L2; the stage's buckets are not the plain
//     net's, so the ring adds in another order);
//  3. the plain run with the tied head's gradient kept apart is the plain run within 1e-5;
//  4. under 1F1B every stage but the last recomputes each forward before its backward (a
//     later forward ran in between), the last never does.
// Prints "PASS <check>" or "FAIL <check>: ..." per rank; exits 1 on any FAIL.
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "net.h"
#include "optim.h"
#include "train.h"
#include "train_pipe.h"

enum { B = 2, T = 16, M = 4, STEPS = 3, LAYERS = 4 };
#define CLIP 0.05

typedef struct {
    float loss[STEPS];
    float *w;  // the whole model's trainable parameters
    size_t n;
    long recomputed;
    double norm;  // the last step's gradient norm before clipping
} run_out;

static uint64_t splitmix(uint64_t x) {
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static dt_model_config config(void) {
    dt_model_config c = dt_model_config_default();
    c.batch = B, c.seq_len = T, c.layers = LAYERS, c.seed = 7;
    return c;
}

// Step `step`'s tokens of data-parallel rank d of dp: M micro-batches of B sequences, and
// their targets (the next token of a random stream).
static void batch(int step, int d, int vocab, int32_t *x, int32_t *y) {
    size_t n = (size_t)M * B * T;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = splitmix(0x5EEDull * (uint64_t)(step + 1) + (uint64_t)d * n + i);
        x[i] = (int32_t)(r % (uint64_t)vocab);
        y[i] = (int32_t)((r >> 32) % (uint64_t)vocab);
    }
}

static void die(const char *what, const dt_error *e) {
    fprintf(stderr, "pipe_stages: %s: %s\n", what, e->msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static dt_optim *adamw(dt_net *net) {
    dt_optim_config oc = dt_optim_config_default(DT_OPT_ADAMW);
    oc.weight_decay = 0.1f;
    dt_error err;
    dt_error_clear(&err);
    dt_optim *o = dt_optim_create(net, &oc, &err);
    if (!o) die("optimizer", &err);
    return o;
}

static void set_up(dt_trainer *t, dt_net *net, dt_optim *opt, MPI_Comm comm, dt_algo algo) {
    dt_error err;
    dt_error_clear(&err);
    dt_coll_opts co = dt_coll_opts_default();
    co.algo = algo;
    dt_fusion_opts fo = {DT_FUSION_NONE, 0, 0};
    if (dt_trainer_init(t, net, opt, comm, &err) || dt_trainer_set_comm(t, &co, &fo, 1, &err) ||
        dt_trainer_set_accumulate(t, M, &err))
        die("trainer", &err);
    t->piece_norms = 1;
    dt_trainer_set_clip(t, CLIP);
}

// The plain run over comm (its rank d of dp); apart: the tied head's gradient kept apart.
static run_out plain(MPI_Comm comm, dt_algo algo, int apart) {
    run_out r = {0};
    int d, dp;
    MPI_Comm_rank(comm, &d);
    MPI_Comm_size(comm, &dp);
    dt_device *dev = dt_device_cpu_create(1);
    dt_model_config c = config();
    dt_error err;
    dt_error_clear(&err);
    dt_net *net = dt_model_create("gpt2-tiny", dev, &c, &err);
    if (!net) die("plain net", &err);
    if (apart && dt_net_keep_tied_apart(net)) die("tied", &err);
    dt_optim *opt = adamw(net);
    dt_trainer t;
    set_up(&t, net, opt, comm, algo);
    int32_t x[M * B * T], y[M * B * T];
    for (int s = 0; s < STEPS; s++) {
        batch(s, d, net->num_classes, x, y);
        r.loss[s] = dt_train_step_tokens(&t, x, y, 1e-3f);
    }
    r.norm = t.last_grad_norm;
    r.n = net->n_trainable;
    r.w = mallocCheck(r.n * sizeof(float));
    memcpy(r.w, net->params, r.n * sizeof(float));
    dt_trainer_free(&t);
    dt_optim_free(opt);
    dt_net_free(net);
    dev->destroy(dev);
    return r;
}

// The pipeline of `stages` x (world / stages): rank = stage * dp + d (Megatron-LM's order,
// data-parallel ranks consecutive when there is no tensor parallelism).
static run_out pipeline(int stages, dt_pipe_kind kind, dt_algo algo) {
    run_out r = {0};
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int dp = size / stages, st = rank / dp, d = rank % dp;
    MPI_Comm pipe, dpc;
    MPI_Comm_split(MPI_COMM_WORLD, d, st, &pipe);
    MPI_Comm_split(MPI_COMM_WORLD, st, d, &dpc);
    dt_device *dev = dt_device_cpu_create(1);
    dt_model_config c = config();
    dt_error err;
    dt_error_clear(&err);
    dt_net *whole = dt_model_create("gpt2-tiny", dev, &c, &err);
    if (!whole) die("whole net", &err);
    dt_net *net = dt_pipeline_stage_net("gpt2-tiny", dev, &c, st, stages, 0, whole, &err);
    if (!net) die("stage net", &err);
    dt_optim *opt = adamw(net);
    dt_trainer t;
    set_up(&t, net, opt, dpc, algo);
    dt_pipeline p;
    if (dt_pipeline_init(&p, &t, pipe, stages, kind, DT_RECOMPUTE_FULL, &err)) die("pipeline", &err);
    int32_t x[M * B * T], y[M * B * T];
    for (int s = 0; s < STEPS; s++) {
        batch(s, d, whole->num_classes, x, y);
        r.loss[s] = dt_pipeline_step_tokens(&t, x, y, 1e-3f);
    }
    r.norm = t.last_grad_norm;
    r.recomputed = p.recomputed;
    dt_model_parts_gather(net, whole, 0, 1, pipe, 0);
    r.n = whole->n_trainable;
    r.w = mallocCheck(r.n * sizeof(float));
    memcpy(r.w, whole->params, r.n * sizeof(float));
    MPI_Bcast(r.w, (int)r.n, MPI_FLOAT, 0, pipe);  // every stage compares the whole
    dt_pipeline_free(&p, &t);
    dt_trainer_free(&t);
    dt_optim_free(opt);
    dt_net_free(net);
    dt_net_free(whole);
    dev->destroy(dev);
    MPI_Comm_free(&pipe);
    MPI_Comm_free(&dpc);
    return r;
}

static int check(int rank, int ok, const char *name, const char *msg) {
    if (ok) printf("PASS rank %d %s\n", rank, name);
    else printf("FAIL rank %d %s: %s\n", rank, name, msg);
    fflush(stdout);
    return ok ? 0 : 1;
}

// Relative L2 difference of the weights, and whether the losses and weights are the same bits.
static double rel(const run_out *a, const run_out *b, int *same) {
    double num = 0.0, den = 0.0;
    *same = a->n == b->n && !memcmp(a->loss, b->loss, sizeof a->loss);
    for (size_t i = 0; i < a->n && i < b->n; i++) {
        double e = (double)a->w[i] - b->w[i];
        num += e * e, den += (double)b->w[i] * b->w[i];
        if (memcmp(&a->w[i], &b->w[i], 4)) *same = 0;
    }
    return a->n == b->n ? sqrt(num / (den > 0 ? den : 1)) : INFINITY;
}

static int compare(int rank, const char *name, const run_out *a, const run_out *b, int bits,
                   double tol) {
    int same;
    double e = rel(a, b, &same);
    char msg[256];
    snprintf(msg, sizeof msg, "losses %.9g %.9g %.9g vs %.9g %.9g %.9g, weights' relative L2 "
             "difference %.3g (%s)", a->loss[0], a->loss[1], a->loss[2], b->loss[0],
             b->loss[1], b->loss[2], e, bits ? "bit for bit expected" : "tolerance");
    return check(rank, bits ? same : e <= tol, name, msg);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, fails = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4) {
        if (!rank) fprintf(stderr, "pipe_stages: run me on 4 ranks\n");
        MPI_Finalize();
        return 2;
    }
    char msg[200];
    run_out ref = plain(MPI_COMM_SELF, DT_ALGO_RING, 1);
    run_out tied = plain(MPI_COMM_SELF, DT_ALGO_RING, 0);
    fails += compare(rank, "tied_apart_is_plain_within_1e-5", &ref, &tied, 0, 1e-5);
    snprintf(msg, sizeof msg, "last norm %.6g, bound %g", ref.norm, CLIP);
    fails += check(rank, ref.norm > CLIP, "clipping_is_active", msg);

    run_out a = pipeline(4, DT_PIPE_1F1B, DT_ALGO_RING);
    fails += compare(rank, "pp4_1f1b_is_plain_bit_for_bit", &a, &ref, 1, 0);
    snprintf(msg, sizeof msg, "%ld forwards recomputed on stage %d", a.recomputed, rank);
    fails += check(rank, rank == 3 ? a.recomputed == 0 : a.recomputed == (long)STEPS * M,
                   "1f1b_recomputes_all_but_the_last_stage", msg);
    run_out g = pipeline(4, DT_PIPE_GPIPE, DT_ALGO_RING);
    fails += compare(rank, "pp4_gpipe_is_plain_bit_for_bit", &g, &ref, 1, 0);

    MPI_Comm two;  // two plain runs of 2 data-parallel ranks
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank % 2, &two);
    run_out ref2 = plain(two, DT_ALGO_RHD, 1);
    run_out h = pipeline(2, DT_PIPE_1F1B, DT_ALGO_RHD);
    fails += compare(rank, "pp2_dp2_rhd_is_plain_bit_for_bit", &h, &ref2, 1, 0);
    run_out ref2r = plain(two, DT_ALGO_RING, 1);
    run_out hr = pipeline(2, DT_PIPE_1F1B, DT_ALGO_RING);
    fails += compare(rank, "pp2_dp2_ring_is_plain_within_1e-5", &hr, &ref2r, 0, 1e-5);
    MPI_Comm_free(&two);

    run_out *all[] = {&ref, &tied, &a, &g, &ref2, &h, &ref2r, &hr};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]->w);
    int total = 0;
    MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!rank) printf("%s: %d failed checks\n", total ? "FAIL" : "PASS", total);
    MPI_Finalize();
    return total ? 1 : 0;
}
