// grader.c — lesson 11's grader: the student's ZeRO stage 1 step (sharded.h) against the
// plain data-parallel step this grader runs itself with nn/'s own pieces (dt_allreduce with
// the ring, the mean, dt_optim_step) on a twin of the same network fed the same batches.
// Built twice: against Open MPI (grade.sh: mpirun at P = 1..4) and as an SMPI shared object
// (smpirun -no-privatize at P = 16 on tests/coll/flat1024.xml, where the step's simulated
// time is also checked against the closed form 2(P-1)α + 2(P-1)/P·nβ: one reduce-scatter and
// one allgather, the allreduce's bytes; α, β of that platform, computation not simulated).
// The momentum's memory is measured: the state is allocated on a device that counts the
// bytes it hands out. Inputs are fresh each run (the seed is printed; DT_LESSON_SEED=N
// replays). No writable globals or static locals: under SMPI every rank runs this code in
// the same process.
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kit/grade.h"
#include "kernels.h"
#include "optim.h"
#include "sharded.h"

#ifdef DT_SMPI
#define WORLD "smpi"
#else
#define WORLD "mpirun"
#endif

enum { MSG = 640, IMG = 8, CLASSES = 10, STEPS = 3 };

typedef struct {
    grade_t g;
    MPI_Comm comm;
    int rank, size;
    dt_device *dev;
    const char *model;  // the steps' network (argv[1]; resnet8) and its classes (argv[2]; 10)
    int classes;
} ctx_t;

// A device that counts the bytes alloc hands out (the cpu device underneath): the state's
// memory, measured.
typedef struct {
    dt_device d;  // first: the device the student is given
    dt_device *inner;
    size_t bytes;
} counting_dev;
static void *count_alloc(dt_device *d, size_t bytes) {
    counting_dev *c = (counting_dev *)d;
    c->bytes += bytes;
    return c->inner->alloc(c->inner, bytes);
}
static void count_free(dt_device *d, void *p) {
    counting_dev *c = (counting_dev *)d;
    c->inner->free(c->inner, p);
}

// Every rank's verdict on one check: PASS only if every rank passed; else rank 0 prints the
// hint of the first rank that failed.
static void agree(ctx_t *c, const char *name, int ok, const char *msg) {
    char *all = c->rank == 0 ? mallocCheck((size_t)c->size * MSG) : NULL;
    int *oks = c->rank == 0 ? mallocCheck((size_t)c->size * sizeof(int)) : NULL;
    char mine[MSG];
    snprintf(mine, sizeof mine, "%s", msg);
    MPI_Gather(mine, MSG, MPI_CHAR, all, MSG, MPI_CHAR, 0, c->comm);
    MPI_Gather(&ok, 1, MPI_INT, oks, 1, MPI_INT, 0, c->comm);
    int all_ok = ok;
    MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_LAND, c->comm);
    if (c->rank == 0) {
        int bad = 0;
        while (bad < c->size - 1 && oks[bad]) bad++;
        if (all_ok) grade_check(&c->g, 1, name, "(P = %d, %s) %s", c->size, WORLD, mine);
        else grade_check(&c->g, 0, name, "(P = %d, %s) rank %d: %s", c->size, WORLD, bad,
                         all + (size_t)bad * MSG);
    } else {
        grade_check(&c->g, all_ok, name, "%s", "");
    }
    free(all);
    free(oks);
}

static dt_net *make_net(ctx_t *c, const char *model, int hw, uint64_t seed) {
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = 2, cfg.in_c = 3, cfg.in_h = cfg.in_w = hw, cfg.num_classes = c->classes;
    cfg.seed = seed;
    dt_error err;
    dt_error_clear(&err);
    dt_net *net = dt_model_create(model, c->dev, &cfg, &err);
    if (!net) {
        fprintf(stderr, "grader: cannot build %s: %s\n", model, err.msg);
        MPI_Abort(c->comm, 3);
    }
    return net;
}

// "conv1.weight[17]": the tensor that element i of net->params belongs to.
static void where(const dt_net *net, size_t i, char *buf, size_t n) {
    snprintf(buf, n, "element %zu", i);
    for (int t = 0; t < net->n_params; t++) {
        const dt_param *p = &net->params_table[t];
        if (i >= p->offset && i < p->offset + p->count)
            snprintf(buf, n, "%s[%zu] (a %s)", p->name, i - p->offset,
                     p->kind == DT_PARAM_WEIGHT ? "weight: decayed" : "bias or batch-norm "
                     "parameter: no weight decay");
    }
}

// This rank's batch of step k: forward and backward on net (its own gradient in grads).
static void backward(const ctx_t *c, dt_net *net, int k) {
    size_t img = (size_t)3 * IMG * IMG, B = (size_t)net->B;
    float *x = mallocCheck(B * img * sizeof(float));
    int32_t *y = mallocCheck(B * sizeof(int32_t));
    uint64_t s = dt_mix64(c->g.seed ^ dt_mix64((uint64_t)(c->rank * 100 + k + 1)));
    for (size_t i = 0; i < B * img; i++) x[i] = 2.0f * dt_uniform(s, i) - 1.0f;
    for (size_t i = 0; i < B; i++) y[i] = (int32_t)(dt_mix64(s + i) % (uint64_t)c->classes);
    dt_net_set_batch(net, x, y);
    dt_net_forward(net, 1);
    dt_net_loss(net);
    dt_net_backward(net, 1.0f, NULL, NULL);
    free(x), free(y);
}

static void check_step(ctx_t *c, dt_coll *coll) {
    uint64_t seed = c->g.seed + 11;
    dt_net *net = make_net(c, c->model, IMG, seed), *ref = make_net(c, c->model, IMG, seed);
    size_t n = net->n_trainable;
    char msg[MSG] = "";
    // the shard
    counting_dev cd = {*c->dev, c->dev, 0};
    cd.d.alloc = count_alloc, cd.d.free = count_free;
    shard_state s;
    memset(&s, 0, sizeof s);
    shard_state_init(&s, net, &cd.d, c->rank, c->size, 0.9f, 1e-4f);
    size_t lo = dt_shard_lo(n, c->size, c->rank), hi = dt_shard_lo(n, c->size, c->rank + 1);
    int ok = s.lo == lo && s.hi == hi;
    if (ok) snprintf(msg, sizeof msg, "rank r holds [dt_shard_lo(n, P, r), dt_shard_lo(n, P, r+1)) of n = %zu", n);
    else snprintf(msg, sizeof msg, "the shard is [%zu, %zu), expected [%zu, %zu) of n = %zu: the "
                  "reduce-scatter leaves the ring's chunk r summed on rank r, and its chunks "
                  "are dt_shard_lo's (sizes differ by at most one when P does not divide n)",
                  s.lo, s.hi, lo, hi, n);
    agree(c, "shard_is_the_rings_chunk_of_this_rank", ok, msg);
    // the state's memory
    size_t want = (hi - lo) * sizeof(float);
    ok = cd.bytes >= want && cd.bytes <= want + 256;
    snprintf(msg, sizeof msg, "%zu bytes of momentum on this rank, 1/%d of the whole "
             "model's %zu", cd.bytes, c->size, n * sizeof(float));
    if (!ok) snprintf(msg, sizeof msg, "init allocated %zu bytes on the device, expected the "
                      "shard's momentum, %zu bytes (1/%d of the whole model's %zu): keep the "
                      "state of the shard only", cd.bytes, want, c->size, n * sizeof(float));
    agree(c, "optimizer_state_is_one_pth_per_rank", ok, msg);
    // the steps, against the plain data-parallel step on the twin
    dt_optim_config oc = dt_optim_config_default(DT_OPT_SGD);
    oc.momentum = 0.9f, oc.weight_decay = 1e-4f;
    dt_error err;
    dt_optim *opt = dt_optim_create(ref, &oc, &err);
    float *mine = mallocCheck(n * sizeof(float));
    long diff = -1;
    int k, shard_ok = s.lo == lo && s.hi == hi;  // on every rank, or no rank steps (a
    MPI_Allreduce(MPI_IN_PLACE, &shard_ok, 1, MPI_INT, MPI_LAND, c->comm);  // collective)
    for (k = 0; k < STEPS && diff < 0; k++) {
        backward(c, net, k);
        backward(c, ref, k);
        if (shard_ok) sharded_step(&s, net, coll, 0.1f);
        dt_allreduce(coll, ref->grads, n, DT_F32, &err);
        c->dev->scale(c->dev, ref->grads, 1.0f / (float)c->size, n);
        dt_optim_step(opt, ref, 0.1f);
        for (size_t i = 0; i < n && diff < 0; i++)
            if (memcmp(&net->params[i], &ref->params[i], sizeof(float))) diff = (long)i;
    }
    ok = diff < 0;
    char at[200] = "";
    if (!ok) where(ref, (size_t)diff, at, sizeof at);
    if (ok) snprintf(msg, sizeof msg, "%d steps of %s (n = %zu), every parameter bit for bit "
                     "the plain step's (ring allreduce, mean, dt_optim_step)", STEPS, c->model, n);
    else snprintf(msg, sizeof msg, "after step %d, %s = %.9g, the plain step gives %.9g "
                  "(the mean of the ranks' gradients? this tensor's weight decay? the "
                  "momentum of the right elements?)", k, at, (double)net->params[diff],
                  (double)ref->params[diff]);
    agree(c, "step_is_bit_identical_to_plain_data_parallel", ok, msg);
    // every rank the same parameters
    memcpy(mine, net->params, n * sizeof(float));
    uint64_t h = 1469598103934665603ull, h0;
    const unsigned char *b = (const unsigned char *)mine;
    for (size_t i = 0; i < n * sizeof(float); i++) h = (h ^ b[i]) * 1099511628211ull;
    h0 = h;
    MPI_Bcast(&h0, 1, MPI_UINT64_T, 0, c->comm);
    ok = h == h0;
    snprintf(msg, sizeof msg, ok ? "every rank holds the same %zu parameters" : "this rank's %zu "
             "parameters differ from rank 0's: every rank updated only its shard, and the "
             "other shards reach it only through the allgather", n);
    agree(c, "ranks_hold_identical_parameters", ok, msg);
    free(mine);
    dt_optim_free(opt);
    shard_state_free(&s);
    dt_net_free(net), dt_net_free(ref);
}

#ifdef DT_SMPI
// One step of smallcnn (n ≈ 1.1 M floats): its simulated time against the closed form.
static void check_time(ctx_t *c, dt_coll *coll) {
    const double alpha = 2e-6, beta = 8e-10;  // tests/coll/flat1024.xml (as lesson 04's)
    dt_net *net = make_net(c, "smallcnn", 16, c->g.seed + 5);
    shard_state s;
    memset(&s, 0, sizeof s);
    shard_state_init(&s, net, c->dev, c->rank, c->size, 0.9f, 1e-4f);
    size_t n = net->n_trainable;
    int P = c->size;
    MPI_Barrier(c->comm);
    double t0 = MPI_Wtime();
    sharded_step(&s, net, coll, 0.01f);
    double t = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, c->comm);
    double model = 2.0 * (P - 1) * alpha + 2.0 * (P - 1) / P * (double)n * 4 * beta;
    int ok = fabs(t / model - 1.0) <= 0.05;
    char msg[MSG];
    snprintf(msg, sizeof msg, "%s: %.3f ms simulated for n = %zu floats, the closed form "
             "2(P-1)α + 2(P-1)/P·nβ gives %.3f ms (%+.1f %%)%s", ok ? "within 5 %" :
             "outside 5 %", t * 1e3, n, model * 1e3, 100.0 * (t / model - 1.0),
             ok ? "" : ": one reduce-scatter and one allgather, nothing more on the wire?");
    agree(c, "simulated_time_within_5pc_of_closed_form", ok, msg);
    shard_state_free(&s);
    dt_net_free(net);
}
#endif

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    // the instructor's cases (instructor/grade.sh) pass another network: `grader MODEL CLASSES`
    ctx_t c = {.comm = MPI_COMM_WORLD, .model = argc > 1 ? argv[1] : "resnet8",
               .classes = argc > 2 ? atoi(argv[2]) : CLASSES};
    if (c.classes < 2) c.classes = CLASSES;
    MPI_Comm_rank(c.comm, &c.rank);
    MPI_Comm_size(c.comm, &c.size);
    c.g = grade_begin("11 sharded-optimizer", c.rank != 0);
    unsigned long long seed = c.g.seed;
    MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, c.comm);
    c.g.seed = seed;
    if (c.rank == 0) {
        printf("# %s, P = %d ranks\n", WORLD, c.size);
        fflush(stdout);
    }
    c.dev = dt_device_cpu_create(1);
    dt_coll_opts o = dt_coll_opts_default();  // the ring
    dt_error err;
    dt_coll *coll = dt_coll_create(c.comm, c.dev, &o, &err);
    if (!coll) {
        fprintf(stderr, "grader: %s\n", err.msg);
        MPI_Abort(c.comm, 3);
    }
    check_step(&c, coll);
#ifdef DT_SMPI
    check_time(&c, coll);
#endif
    int rc = grade_end(&c.g);
    dt_coll_free(coll);
    c.dev->destroy(c.dev);
    MPI_Finalize();
    return rc;
}
