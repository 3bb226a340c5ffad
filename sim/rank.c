// rank.c — dtsim's rank program (dtsim_rank.so): what SimGrid runs once per simulated GPU,
// all ranks in one process (-no-privatize). Each rank builds the real network of nn/ on the
// `model` device (sim/device_model.c: no data, every kernel advances simulated time by its
// roofline), and runs the real trainer step of nn/train.c — forward, backward with fusion
// buckets whose allreduces (nn/coll) start as soon as they are complete and are polled
// between layers, the optimizer (LARS: its per-tensor norms are kernels too). SimGrid
// simulates every message of every allreduce on the cluster's platform.
//
// Memory (docs/architecture.md, the two worlds): one arena for the whole process,
// SMPI_SHARED_MALLOC'ed once (folded: every page maps the same small file block), and every
// rank's device carves its buffers from the same base. Nothing reads the data, and SMPI
// skips the copy of a message between shared buffers, so 1024 ranks of ResNet-50 cost
// megabytes, not terabytes.
//
// --device cpu runs the same steps with real numbers instead (the cpu device, small scale):
// dtrain's synthetic data, sharded as dtrain's loader shards it, so a simulated run and a
// real `mpirun dtrain` with the same seed print the same losses ("step N loss L", rank 0).
//
// dtsim (sim/dtsim_run.c) launches it; the user never does. Its one argument is the path of
// the run description dtsim wrote (sim/rank_run.h); rank 0 writes its result as JSON where
// that says (sim/rank_result.h), and the first ranks a Chrome trace (nn/train_trace.h).
#include <math.h>
#include <mpi.h>
#include <simgrid/actor.h>
#include <simgrid/host.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/coll_cost.h"
#include "coll/fusion.h"
#include "dataset.h"
#include "device_model.h"
#include "net.h"
#include "optim.h"
#include "rank_result.h"
#include "rank_run.h"
#include "rank_zero.h"
#include "straggler.h"
#include "train_pipe.h"
#include "train_tp.h"
#include "train_trace.h"
#include "train.h"
#include "zero.h"

// The one arena of the process (see the top of the file). A process-wide pointer is what
// sharing needs here: sim/ is not nn/, whose code must keep no state outside its structs.
static void *g_arena;
static size_t g_arena_bytes;
// dbtree's node crossings (coll_cost.c), O(P log P) to count: counted by the first rank,
// copied by the others instead of each of P ranks counting them again in dt_coll_create
static dt_cost_params g_dbt;

#define PROGRESS_WIDTH 70    // characters of rank 0's progress line, blanked at the end
#define FP32_BYTES 4         // bytes of an fp32 gradient or statistic
#define FP16_BYTES 2         // ... and of an fp16 one on the wire (--fp16-grads)

// Exactly `s` simulated seconds on this rank's host: a sleep. The host runs nothing else, so
// an execution of s x its speed in flops ended at the same date, through SimGrid's CPU model
// and its solver: 30 % of a ZeRO stage 3 simulation's time (bench/DTSIM-SPEED.md).
static void advance(void *ctx, double s) {
    (void)ctx;
    if (s > 0) sg_actor_sleep_for(s);
}

// Polls sweep (coll.h) where the schedule has hundreds of rounds per bucket for polls to
// complete (dbtree's pipelined segments: a 1024-GPU step is simulated in 60 s with the sweep,
// 93 s without), and under ZeRO stage 3, whose gathers and reduce-scatters of every unit are
// polled between every layer's kernels (GPT-2 XL on 32 H100s, a layer at a time: 494 s of
// SimGrid without it, 9.5 s with it; by blocks on 128: 56 s and 9.6 s; the same simulated
// step to the bit); with a few rounds the tick message each poll sends costs more (hier
// 1024: +15-35 %).
static int polls_sweep(dt_algo a, int shard) {
    return a == DT_ALGO_DBTREE || a == DT_ALGO_AUTO || shard >= 3;
}

// Rank 0 says why; every rank returns `code`.
static int failed(int rank, const dt_error *err, int code) {
    if (rank == 0) fprintf(stderr, "dtsim: %s\n", err->msg);
    return code;
}

// ---- the model device: set-up, the timed loop, the report ----

typedef struct {
    dt_device *dev;
    dt_device *comm_dev;  // the same device, unscaled: the allreduce's kernels
    dt_net *net;
    dt_optim *opt;
    dt_trainer tr;
    int32_t *y;          // the host batch's labels (its images: the arena); never read
    dt_trace *trace;     // NULL: this rank is not traced
    // --tp/--pp --simgrid (run->pp > 0): this rank's part and its groups, laid out as dtrain
    // lays them out (real/dtrain_pipe.c): rank = (stage x dp + dp_rank) x tp + tp_rank
    int three_d, dp;
    MPI_Comm dp_comm, pipe_comm, tp_comm;
    dt_pipeline pipe;
    dt_tensor_par tpar;
    int32_t *tok;        // a step's tokens (and targets): never read
} model_run;

typedef struct {
    double iter, compute, comm, exposed;  // seconds, summed over the timed steps
    double bytes;                         // sent by this rank's collectives in them
    double *steps;                        // each timed step's iteration (rank 0's)
} iter_stats;

// The process's arena: the first rank to arrive maps it, the others share it.
static void map_arena(const dt_rank_run *run) {
    if (g_arena) return;
    // whole shared-malloc blocks: SimGrid 3.32 failed runs ("Link failure") when the region
    // ended in a partial block
    size_t block = DT_RANK_SHARED_BLOCK;
    g_arena_bytes = run->arena ? run->arena : DT_RANK_DEFAULT_ARENA;
    g_arena_bytes = (g_arena_bytes + block - 1) / block * block;
    g_arena = SMPI_SHARED_MALLOC(g_arena_bytes);
}

// The modeled GPU, the network on it, the optimizer and the trainer with its allreduce.
// The micro-batch must be a whole number of images (dtsim checks it too).
static int check_accumulate(const dt_rank_run *run, int rank) {
    if (run->accumulate >= 1 && run->batch % run->accumulate == 0) return 0;
    dt_error err = {0};
    dt_fail(&err, DT_EXIT_USAGE, "accumulate %d does not divide the batch %d", run->accumulate,
            run->batch);
    return failed(rank, &err, DT_EXIT_USAGE);
}

// The trainer's hook after a layer of backward whose gradients are final (nn/train.h
// layer_wait): the model device charges the layers' time when it is waited for, so it waits
// where a poll must come after the layer's time, as a polling thread's would (an allreduce in
// flight posts its next round only when polled; one starting here may send only gradients
// that exist), and for a trace at every layer (its ready times are exact only where backward
// waited). Elsewhere nothing observes the time between layers: skipping the wait charges the
// same time at the next one, with fewer SimGrid events.
static void layer_wait(void *ctx, dt_net *net, int communicating) {
    const model_run *m = ctx;
    if (communicating || m->trace) net->dev->sync(net->dev);
}

static int model_setup(const dt_rank_run *run, int rank, int P, model_run *m) {
    dt_error err = {0};
    memset(m, 0, sizeof *m);
    if (check_accumulate(run, rank)) return DT_EXIT_USAGE;
    const dt_gpu_profile *gpu = dt_gpu_find(run->gpu);
    if (!gpu) {
        dt_fail(&err, DT_EXIT_USAGE, "unknown GPU '%s' (valid: %s)", run->gpu, dt_gpu_names());
        return failed(rank, &err, DT_EXIT_USAGE);
    }
    map_arena(run);
    dt_modeldev_config mc = {gpu, run->prec, advance, NULL, g_arena, g_arena_bytes, 1,
                             run->time_scale, run->flash};
    if (!(m->dev = dt_device_model_create(&mc, &err))) return failed(rank, &err, DT_EXIT_USAGE);
    if (run->n_kind_scales)  // a profile's factor per layer kind (dtsim --profile)
        dt_device_model_set_kind_scales(m->dev, run->kind_scale, run->n_kind_scales);
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = run->batch / run->accumulate;  // the micro-batch (dtsim checked that it divides)
    int t = 1, st = 0, dr = rank;
    m->dp = P, m->dp_comm = MPI_COMM_WORLD;
    if ((m->three_d = run->pp > 0)) {  // this rank's stage and slices; its three groups
        t = run->tp, m->dp = P / (run->tp * run->pp);
        int tr = rank % t;
        dr = rank / t % m->dp, st = rank / (t * m->dp);
        MPI_Comm_split(MPI_COMM_WORLD, st * t + tr, dr, &m->dp_comm);
        MPI_Comm_split(MPI_COMM_WORLD, dr * t + tr, st, &m->pipe_comm);
        MPI_Comm_split(MPI_COMM_WORLD, st * m->dp + dr, tr, &m->tp_comm);
        // the ends split over the vocabulary (nn/train_tp.c), V / t rows a rank rounded up:
        // the vocabulary padded to a multiple of t, as Megatron-LM pads it (its
        // --make-vocab-size-divisible-by), the cost model's (sim/dtsim_3d.c) shapes
        cfg.batch = run->micro_batch, cfg.tp = t, cfg.tp_vocab_whole = 0;
    }
    // the model's own input, or the shape a profile measured (dtsim --profile)
    dt_model_shape(run->model, run->model_side, run->model_classes, &cfg.in_h, &cfg.num_classes);
    cfg.in_w = cfg.in_h;
    cfg.seq_len = run->seq_len, cfg.vocab = run->vocab;  // gpt models (0: the model's)
    m->net = m->three_d ? dt_pipeline_stage_net(run->model, m->dev, &cfg, st, run->pp,
                                                rank % t, NULL, &err)
                        : dt_model_create(run->model, m->dev, &cfg, &err);
    if (!m->net) return failed(rank, &err, DT_EXIT_USAGE);
    dt_device_model_follow_layers(m->dev, m->net);  // whose kernels: a profile's kinds
    m->opt = dt_rank_zero_optim(m->net, run->shard, dr, m->dp,
                                dt_sim_optim_kind(run->model, run->lars), &err);
    dt_coll_opts co = run->coll;
    co.share_comm = 1;  // no duplicate of MPI_COMM_WORLD per rank (bench/DTSIM-SPEED.md)
    if (m->three_d) {  // a data-parallel group's ranks in one node (sim/dtsim_3d.c's g)
        int g = run->gpus_per_node / t < m->dp ? run->gpus_per_node / t : m->dp;
        co.group = g < 1 ? 1 : g;
    } else if (dt_dbtree_shares_links(&co.cost, P, co.group)) {
        dt_dbtree_links_of(&g_dbt, P, co.group);
        co.cost.dbt = g_dbt.dbt;
    }
    if (!m->opt || dt_trainer_init(&m->tr, m->net, m->opt, m->dp_comm, &err))
        return failed(rank, &err, err.code ? err.code : DT_EXIT_USAGE);
    m->comm_dev = dt_device_model_unscaled(m->dev);
    m->tr.comm_dev = m->comm_dev;
    m->tr.act_wire_half = run->prec == DT_PREC_FP16;  // (the model device's 2-byte activations)
    m->tr.shard_blocks = run->shard_blocks;  // stage 3's units (--shard-units)
    if (dt_trainer_set_comm(&m->tr, &co, &run->fusion, run->overlap, &err) ||
        dt_trainer_set_accumulate(&m->tr, run->accumulate, &err) ||
        dt_rank_zero_setup(&m->tr, run->shard, &err))  // stage 3: the trainer's own
        return failed(rank, &err, err.code ? err.code : DT_EXIT_USAGE);
    if (m->three_d) {  // the step is the pipeline's, its sums of slices the group's
        int micro = run->batch / run->micro_batch;
        if (dt_trainer_set_accumulate(&m->tr, micro, &err) ||
            (t > 1 && dt_tp_init(&m->tpar, &m->tr, m->tp_comm, &err)) ||
            dt_pipeline_init(&m->pipe, &m->tr, m->pipe_comm, run->pp,
                             (dt_pipe_kind)run->pp_kind, (dt_recompute)run->recompute, &err))
            return failed(rank, &err, err.code ? err.code : DT_EXIT_USAGE);
        m->tok = callocCheck((size_t)run->batch * (size_t)m->net->seq, sizeof(int32_t));
    }
    m->y = callocCheck((size_t)run->batch, sizeof(int32_t));
    m->trace = run->trace[0] && rank < run->rank.trace_ranks ? dt_trace_new(rank) : NULL;
    m->tr.layer_wait = layer_wait;
    m->tr.layer_wait_ctx = m;
    return 0;
}

// Warm-up steps, then timed ones, all ranks starting together; the timed ones summed.
static iter_stats model_loop(const dt_rank_run *run, model_run *m, int rank, int P) {
    iter_stats sum = {0};
    sum.steps = callocCheck((size_t)run->iters, sizeof(double));
    int steps = run->warmup + run->iters;
    for (int it = 0; it < steps; it++) {
        int timed = it >= run->warmup;
        MPI_Barrier(MPI_COMM_WORLD);
        if (dt_straggler_any(&run->straggler))  // slow GPUs: this rank's factor, step by step
            dt_device_model_set_slowdown(m->dev, dt_straggler_factor(&run->straggler, run->seed,
                                                                     rank, run->gpus_per_node, it));
        dt_device_model_reset_stats(m->dev);
        uint64_t sent = dt_rank_zero_bytes_sent(&m->tr);
        double t0 = MPI_Wtime();
        // the host batch is the arena: its bytes are charged as a copy to the GPU, never
        // read; and any learning rate does, as the model device computes nothing
        if (m->three_d)  // the trainer's pipeline (nn/train_pipe.c), its strategy's update
            dt_pipeline_step_tokens(&m->tr, m->tok, m->tok, 0.1f);
        else if (run->shard > 0)  // ZeRO stages 1-3 (sim/rank_zero.c)
            dt_rank_zero_step(&m->tr, dt_sim_optim_kind(run->model, run->lars), run->shard, g_arena,
                              m->y);
        else
            dt_train_step(&m->tr, g_arena, m->y, 0.1f);
        m->dev->sync(m->dev);
        double t = MPI_Wtime() - t0;
        dt_model_stats ms = dt_device_model_stats(m->dev);
        if (m->trace && timed) dt_trace_step(m->trace, &m->tr, t0, MPI_Wtime());
        if (timed) {
            sum.steps[it - run->warmup] = t;
            sum.iter += t, sum.compute += ms.seconds;
            sum.comm += m->tr.last_comm, sum.exposed += t - ms.seconds;
            sum.bytes += (double)(dt_rank_zero_bytes_sent(&m->tr) - sent);
        }
        if (run->progress && rank == 0)
            fprintf(stderr, "\r[dtsim] %d GPUs: iteration %d/%d (%s) simulated %.4f s   ", P,
                    it + 1, steps, timed ? "timed" : "warm-up", t);
    }
    if (run->progress && rank == 0) fprintf(stderr, "\r%*s\r", PROGRESS_WIDTH, "");
    return sum;
}

// What the α-β-γ model says the step's allreduces take, one after the other: the buckets,
// and the batch-norm statistics (nn/train.c averages them too, in fp32).
static double modeled_allreduce_s(const model_run *m, int P) {
    const dt_coll_opts *co = dt_coll_get_opts(m->tr.coll);
    double wire = co->wire_f16 ? FP16_BYTES : FP32_BYTES, model = 0;
    for (int b = 0; b < m->tr.n_buckets; b++) {
        double bytes = (double)(m->tr.buckets[b].hi - m->tr.buckets[b].lo) * wire;
        model += dt_coll_cost(dt_coll_resolve(m->tr.coll, (size_t)bytes), co, P, bytes);
    }
    double stats = (double)(m->net->n_total - m->net->n_trainable) * FP32_BYTES;
    if (stats > 0) model += dt_coll_cost(dt_coll_resolve(m->tr.coll, (size_t)stats), co, P, stats);
    return model;
}

// The algorithm that reduces the gradients (auto: the one it picks for all of them at once).
static const char *gradient_algo(const dt_trainer *tr, const dt_net *net) {
    return dt_algo_name(dt_coll_resolve(tr->coll, net->n_trainable * FP32_BYTES));
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// Rank 0's timed steps, sorted: the median, the 95th percentile (nearest rank) and the
// longest. With stragglers they differ; on the perfect cluster they are one figure.
static void step_percentiles(double *t, int n, dt_rank_result *r) {
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    r->iter_p50_s = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
    int k = (int)ceil(0.95 * n) - 1;
    r->iter_p95_s = t[k < 0 ? 0 : k];
    r->iter_max_s = t[n - 1];
}

static int write_result(const dt_rank_run *run, const dt_rank_result *r) {
    dt_error err = {0};
    if (!dt_rank_result_write(run->result, r, &err)) return 0;
    fprintf(stderr, "dtsim: %s\n", err.msg);
    return 1;
}

// The slowest rank's averages to rank 0, the trace (collective), rank 0's result.
static int model_report(const dt_rank_run *run, model_run *m, const iter_stats *sum, int rank,
                        int P) {
    double v[5] = {sum->iter / run->iters, sum->compute / run->iters, sum->comm / run->iters,
                   sum->exposed / run->iters, sum->bytes / run->iters};
    double mx[5];
    MPI_Reduce(v, mx, 5, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    dt_error terr;
    if (run->trace[0] &&
        dt_trace_write(m->trace, run->trace, rank, run->rank.trace_ranks, "dtsim", &terr))
        fprintf(stderr, "dtsim: %s\n", terr.msg);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) return 0;
    dt_rank_result r = {.gpus = P, .iter_s = mx[0], .compute_s = mx[1], .comm_s = mx[2],
                        .exposed_s = mx[3], .buckets = m->tr.n_buckets,
                        .params = (int64_t)m->net->n_trainable,
                        .arena_used = (int64_t)dt_device_model_stats(m->dev).arena_used,
                        .model_comm_s = modeled_allreduce_s(m, m->dp), .comm_bytes = mx[4]};
    if (run->shard >= 3) {  // the units, and their collectives' time alone (sim/rank_zero.h)
        r.buckets = dt_rank_zero_units(&m->tr);
        r.comm_s = r.model_comm_s = dt_rank_zero_model_comm_s(&m->tr);
    }
    step_percentiles(sum->steps, run->iters, &r);
    snprintf(r.algo, sizeof r.algo, "%s", run->shard && !m->three_d
             ? dt_rank_zero_algo(&m->tr) : gradient_algo(&m->tr, m->net));
    return write_result(run, &r);
}

static void model_free(model_run *m) {
    dt_trace_free(m->trace);
    free(m->y);
    free(m->tok);
    if (m->three_d) {
        dt_pipeline_free(&m->pipe, &m->tr);
        dt_tp_free(&m->tpar, &m->tr);
    }
    dt_trainer_free(&m->tr);
    dt_optim_free(m->opt);
    dt_net_free(m->net);
    if (m->comm_dev) m->comm_dev->destroy(m->comm_dev);
    m->dev->destroy(m->dev);
    if (m->three_d) {
        MPI_Comm_free(&m->dp_comm);
        MPI_Comm_free(&m->pipe_comm);
        MPI_Comm_free(&m->tp_comm);
    }
}

static int run_model(const dt_rank_run *run, int rank, int P) {
    model_run m;
    int rc = model_setup(run, rank, P, &m);
    if (rc) return rc;
    iter_stats sum = model_loop(run, &m, rank, P);
    rc = model_report(run, &m, &sum, rank, P);
    free(sum.steps);
    model_free(&m);
    return rc;
}

// ---- --device cpu: real numbers ----
// The steps of `mpirun -np P dtrain --device cpu --data synthetic` with the same seed, image
// size, classes, examples, batch, constant lr (--schedule const --warmup 0), momentum and
// weight decay: the same initial weights (cfg.seed), the same epoch permutation and shards
// (nn/data_shard.c), the same images (nn/data_synthetic.c). Rank 0 prints
// "step N loss L" per step and "epoch E train_loss L" per completed epoch.

typedef struct {
    dt_device *dev;
    dt_dataset *ds;
    dt_net *net;
    dt_optim *opt;
    dt_trainer tr;
    int64_t steps_per_epoch;
    float *x;              // this rank's batch: images
    int32_t *y;            // and labels
    int64_t *perm, *idx;   // the epoch's permutation; this step's examples of this rank
} cpu_run;

static int cpu_setup(const dt_rank_run *run, int rank, int P, cpu_run *c) {
    const dt_rank_settings *s = &run->rank;  // the synthetic data and SGD
    dt_error err = {0};
    memset(c, 0, sizeof *c);
    if (check_accumulate(run, rank)) return DT_EXIT_USAGE;
    c->dev = dt_device_cpu_create(1);
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = run->batch / run->accumulate;  // the micro-batch
    cfg.in_c = 3, cfg.in_h = cfg.in_w = s->image_size;
    cfg.num_classes = s->classes;
    cfg.seed = run->seed;
    c->ds = dt_dataset_synthetic(s->synthetic_n, 3, s->image_size, s->image_size, s->classes,
                                 run->seed, &err);
    c->net = c->ds ? dt_model_create(run->model, c->dev, &cfg, &err) : NULL;
    dt_optim_config oc = dt_optim_config_default(run->lars ? DT_OPT_LARS : DT_OPT_SGD);
    oc.momentum = (float)s->momentum, oc.weight_decay = (float)s->wd;
    c->opt = c->net ? dt_optim_create(c->net, &oc, &err) : NULL;
    c->steps_per_epoch = c->ds ? dt_steps_per_epoch(c->ds->n, run->batch * P, 1) : 0;
    if (c->opt && c->steps_per_epoch < 1)
        dt_fail(&err, DT_EXIT_USAGE, "--device cpu: fewer examples than one global batch");
    if (!c->opt || c->steps_per_epoch < 1 ||
        dt_trainer_init(&c->tr, c->net, c->opt, MPI_COMM_WORLD, &err) ||
        dt_trainer_set_comm(&c->tr, &run->coll, &run->fusion, run->overlap, &err) ||
        dt_trainer_set_accumulate(&c->tr, run->accumulate, &err))
        return failed(rank, &err, DT_EXIT_USAGE);
    size_t image = (size_t)3 * s->image_size * s->image_size;  // floats: 3 channels
    c->x = mallocCheck((size_t)run->batch * image * sizeof(float));
    c->y = mallocCheck((size_t)run->batch * sizeof(int32_t));
    c->perm = mallocCheck((size_t)c->ds->n * sizeof(int64_t));
    c->idx = mallocCheck((size_t)run->batch * sizeof(int64_t));
    return 0;
}

// --warmup + --iters steps (both are real here), each on this rank's shard of the batch.
static int cpu_loop(const dt_rank_run *run, cpu_run *c, int rank, int P) {
    dt_error err = {0};
    int64_t spe = c->steps_per_epoch, n = c->ds->n;
    int G = run->batch * P;
    double epoch_sum = 0;
    for (int s = 0; s < run->warmup + run->iters; s++) {
        int64_t epoch = s / spe, step = s % spe;
        if (step == 0) dt_epoch_permutation(run->seed, epoch, n, c->perm);
        int b = dt_shard_indices(c->perm, n, G, P, rank, 1, step, c->idx, &err);
        if (b != run->batch ||
            dt_dataset_fill(c->ds, c->idx, b, run->seed, epoch, 1, c->x, c->y, &err)) {
            fprintf(stderr, "dtsim: rank %d: %s\n", rank, err.msg);
            return 1;
        }
        float loss = dt_train_step(&c->tr, c->x, c->y, (float)run->rank.lr);
        epoch_sum += loss;
        if (rank == 0) printf("step %d loss %.9g\n", s, loss);
        if (rank == 0 && step == spe - 1)
            printf("epoch %lld train_loss %.9g\n", (long long)epoch + 1, epoch_sum / spe);
        if (step == spe - 1) epoch_sum = 0;
    }
    return 0;
}

// Time is not modeled here: the result carries 1 s per step and the run's shape.
static int cpu_report(const dt_rank_run *run, const cpu_run *c, int rank, int P) {
    fflush(stdout);
    if (rank != 0) return 0;
    dt_rank_result r = {.gpus = P, .iter_s = 1, .buckets = c->tr.n_buckets,
                        .params = (int64_t)c->net->n_trainable};
    snprintf(r.algo, sizeof r.algo, "%s", gradient_algo(&c->tr, c->net));
    return write_result(run, &r);
}

static void cpu_free(cpu_run *c) {
    free(c->x), free(c->y), free(c->perm), free(c->idx);
    dt_trainer_free(&c->tr);
    dt_optim_free(c->opt);
    dt_net_free(c->net);
    dt_dataset_free(c->ds);
    c->dev->destroy(c->dev);
}

static int run_cpu(const dt_rank_run *run, int rank, int P) {
    cpu_run c;
    int rc = cpu_setup(run, rank, P, &c);
    if (rc) return rc;
    rc = cpu_loop(run, &c, rank, P);
    if (!rc) rc = cpu_report(run, &c, rank, P);
    else fflush(stdout);
    cpu_free(&c);
    return rc;
}

// The run description (sim/rank_run.h), read by the first rank for all of them (one
// process, -no-privatize, as the arena): rc 0, or the exit code with err.
static struct {
    int read, rc;
    dt_rank_run run;
    dt_error err;
} g_run;

static const dt_rank_run *read_run(int argc, char **argv) {
    if (!g_run.read) {
        g_run.read = 1;
        if (argc != 2)
            dt_fail(&g_run.err, DT_EXIT_USAGE, "usage: dtsim_rank.so RUN, the run description "
                    "dtsim writes (sim/rank_run.h): dtsim runs it");
        else
            dt_rank_run_read(argv[1], &g_run.run, &g_run.err);
        g_run.rc = g_run.err.code;
        g_run.run.coll.sweep = polls_sweep(g_run.run.coll.algo, g_run.run.shard);
    }
    return g_run.rc ? NULL : &g_run.run;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, P, rc;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    const dt_rank_run *run = read_run(argc, argv);
    if (!run) rc = failed(rank, &g_run.err, g_run.rc);
    else rc = run->cpu ? run_cpu(run, rank, P) : run_model(run, rank, P);
    MPI_Finalize();
    return rc;
}
