// dtsim_run.c — one simulated run: its preparation (the single-GPU baseline and calibration of
// sim/dtsim_onegpu.c, the memory checks), the platform and hostfile in a temporary
// directory, SimGrid's smpirun on the rank program (sim/rank.c) with the options that make it
// fast and exact (no privatization, no benchmarked host code, no time injected into
// MPI_Test, the plain latency + size/bandwidth network model), and the rank program's result;
// the checks before it (one GPU's memory, SimGrid's). What the rank program is told is
// sim/rank_run.h; what it answers, sim/rank_result.h; running SimGrid, sim/dtsim_simgrid.c.
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "device_model.h"
#include "dtsim.h"
#include "net.h"
#include "optim.h"
#include "rank_result.h"
#include "rank_run.h"
#include "zero.h"

#ifndef DT_SMPIRUN
#define DT_SMPIRUN "smpirun"
#endif
#ifndef DT_RANK_SO
#define DT_RANK_SO "dtsim_rank.so"
#endif
#ifndef DT_MALLOC_SO  // the build found no jemalloc: glibc's malloc unless DTSIM_MALLOC names one
#define DT_MALLOC_SO NULL
#endif

// A margin on the rank program's arena for what dtsim_single_gpu's count leaves out (bytes; a
// round figure, not measured)
#define ARENA_MARGIN ((size_t)16 << 20)
// The rank program's arena is reused from its base when full (dt_modeldev_config.
// reuse_arena): it needs room for the largest buffer, not for all of them, so it is capped
// here (bytes) or at twice the largest buffer. A modelled GPU's memory then costs the
// simulation no memory in proportion to the batch (SimGrid maps the arena at full size).
#define ARENA_CAP ((size_t)2 << 30)
// Automatic coarsening cuts ring phases to about this many rounds up to COARSEN_UNTIL GPUs
// (COARSEN_UNTIL_STAGE3 under ZeRO stage 3), and above it to fewer in proportion
// (auto_coarsen)
#define COARSEN_ROUNDS 16
#define COARSEN_UNTIL 1024
#define COARSEN_UNTIL_STAGE3 512
// A reduction reads two operands and writes their sum: bytes of memory traffic per byte
// reduced, which make the cost model's γ from the GPU's memory bandwidth
#define REDUCE_TRAFFIC 3

// Automatic coarsening: ring phases of more than COARSEN_ROUNDS steps are cut to about
// COARSEN_ROUNDS rounds. It keeps the simulated time (tests/coll: coarsened schedules match
// the cost model) and cuts SimGrid's work, which grows with the number of messages times the
// flows in flight: P ranks' rounds of P flows each. Above COARSEN_UNTIL GPUs the rounds per
// phase shrink as 1/P (4096 GPUs: 4, 16,384: 1), so that this work grows like P, not P²
// (bench/DTSIM-SPEED.md: a 4096-GPU ring 99 s -> 57 s, its iteration time moved 0.05 %).
// ZeRO stage 3 starts two collectives per unit every step (290 for gpt2-xl by blocks, where
// the other strategies start a few fused buckets), so its rounds shrink from 512 GPUs on:
// 8 a phase at 1,024 GPUs, which simulate in 55 s where 16 took 82 s, the step 0.84 %
// shorter (bench/DTSIM-SPEED.md).
static int auto_coarsen(int gpus, int shard) {
    if (gpus <= COARSEN_ROUNDS) return 1;
    long rounds = COARSEN_ROUNDS, until = shard == 3 ? COARSEN_UNTIL_STAGE3 : COARSEN_UNTIL;
    if (gpus > until) rounds = (long)COARSEN_ROUNDS * until / gpus;
    if (rounds < 1) rounds = 1;
    return (int)((gpus + rounds - 1) / rounds);
}

// ---- set-up: the run's files, the cluster's cost figures, the rank program's run ----

typedef struct {
    char dir[432];                 // a fresh temporary directory, $TMPDIR/dtsim_XXXXXX
    char xml[448], hosts[448];     // the generated platform and hostfile in it
    char run[448];                 // what the rank program is told (rank_run.h)
    char out[448];                 // its stdout
    char result[448];              // its result (rank_result.h)
    const char *platform;          // xml, or the user's --platform file
} run_files;

static int make_run_files(run_files *f) {
    const char *tmp = getenv("TMPDIR");  // the run's folder: $TMPDIR's, else /tmp's
    snprintf(f->dir, sizeof f->dir, "%.400s/dtsim_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(f->dir)) {
        fprintf(stderr, "dtsim: cannot create a temporary directory: %s\n", strerror(errno));
        return 1;
    }
    snprintf(f->xml, sizeof f->xml, "%s/platform.xml", f->dir);
    snprintf(f->hosts, sizeof f->hosts, "%s/hostfile", f->dir);
    snprintf(f->run, sizeof f->run, "%s/rank_run.bin", f->dir);
    snprintf(f->out, sizeof f->out, "%s/rank.out", f->dir);
    snprintf(f->result, sizeof f->result, "%s/result.json", f->dir);
    f->platform = f->xml;
    return 0;
}

// The platform SimGrid runs: the user's (SMPI places ranks on its hosts in turn), or c's,
// written into the run's directory.
static int write_platform(const dtsim_opts *o, const dt_cluster *c, run_files *f) {
    dt_error err = {0};
    if (o->platform_file[0]) {
        f->platform = o->platform_file;
    } else if (dt_cluster_write(c, f->xml, f->hosts, &err)) {
        fprintf(stderr, "dtsim: %s\n", err.msg);
        return err.code ? err.code : 1;
    }
    return 0;
}

// The allreduce's options with the cluster's α-β-γ figures (docs/formulas.md, α-β-γ
// collective costs).
dt_coll_opts dtsim_coll_for(const dtsim_opts *o, const dt_cluster *c) {
    dt_coll_opts co = o->coll;
    int own_platform = o->platform_file[0] != 0;
    if (!own_platform)
        dt_cluster_cost(c, &co.cost.alpha, &co.cost.beta, &co.cost.alpha_intra,
                        &co.cost.beta_intra);
    if (co.group == 0) co.group = own_platform ? 1 : c->gpus_per_node;
    // a node's GPUs share its NICs (dt_cost_params.share): what rhd's cost must know
    co.cost.share = own_platform ? 1 : c->gpus_per_node;
    const dt_gpu_profile *g = dt_gpu_find(c->gpu);
    co.cost.gamma = 1.0 / (g->mem_bw * g->eff_mem / REDUCE_TRAFFIC);
    co.coarsen = o->coarsen >= 0 ? o->coarsen : auto_coarsen(o->gpus, o->shard);
    return co;
}

// A real to 9 significant digits: the rank program's figures were so rounded on the command
// line it was once given, and every committed simulated figure was computed with them
// (tests/sim/same_bits.sh holds those bits).
static double digits9(double x) {
    char buf[32];
    snprintf(buf, sizeof buf, "%.9g", x);
    return strtod(buf, NULL);
}

// Everything the rank program is told (sim/rank_run.h), into its file: 0, or the exit code
// with a message.
static int write_rank_run(const dtsim_opts *o, const dtsim_result *r, const run_files *f) {
    const dt_cluster *c = &o->cluster;
    dt_rank_run *run = callocCheck(1, sizeof *run);
    snprintf(run->model, sizeof run->model, "%s", o->model);
    snprintf(run->gpu, sizeof run->gpu, "%s", c->gpu);
    run->prec = o->prec;
    run->batch = o->per_gpu_batch;
    run->accumulate = o->accumulate;
    run->iters = o->iters, run->warmup = o->warmup;
    run->lars = o->lars;
    run->model_side = o->model_side, run->model_classes = o->model_classes;
    run->seq_len = o->seq_len, run->vocab = o->vocab, run->flash = o->flash;
    run->shard = o->shard, run->shard_blocks = o->shard_blocks;
    if (dtsim_is_3d(o)) {  // --simgrid: the ranks' parts (sim/rank.c)
        run->tp = o->tp, run->pp = o->pp, run->pp_kind = o->pp_kind;
        run->micro_batch = o->micro_batch, run->recompute = o->recompute;
    }
    run->coll = dtsim_coll_for(o, c);
    dt_cost_params *k = &run->coll.cost;
    k->alpha = digits9(k->alpha), k->beta = digits9(k->beta), k->gamma = digits9(k->gamma);
    k->alpha_intra = digits9(k->alpha_intra), k->beta_intra = digits9(k->beta_intra);
    k->share = digits9(k->share);
    run->fusion = o->fusion;
    run->overlap = o->overlap;
    run->arena = r->arena;
    run->time_scale = digits9(r->time_scale);
    for (int i = 0; o->has_profile && i < DT_N_KINDS; i++)
        run->kind_scale[run->n_kind_scales++] = digits9(r->kind_scale[i]);
    dt_error err = {0};
    int rc = dt_straggler_parse(o->straggler, "--straggler", &run->straggler, &err);
    run->seed = o->seed;
    run->gpus_per_node = c->gpus_per_node;
    run->cpu = o->cpu;
    snprintf(run->trace, sizeof run->trace, "%s", o->trace);
    snprintf(run->result, sizeof run->result, "%s", f->result);
    run->progress = !o->quiet && isatty(STDERR_FILENO) && !o->cpu;
    run->rank = o->rank;
    if (!rc) rc = dt_rank_run_write(f->run, run, &err);
    free(run);
    if (rc) fprintf(stderr, "dtsim: %s\n", err.msg);
    return rc ? err.code : 0;
}

// ---- running SimGrid ----

typedef struct {
    char **v;  // NULL-terminated
    int n, cap;
} arg_list;

static void push(arg_list *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void push(arg_list *a, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    DT_ASSERT(a->n + 1 < a->cap);
    a->v[a->n++] = strdup(buf);
    a->v[a->n] = NULL;
}

// smpirun's own arguments: the platform, and the settings that make the run fast and exact.
static void smpirun_args(const dtsim_opts *o, const run_files *f, dt_algo algo, arg_list *a) {
    push(a, "%s", getenv("DTSIM_SMPIRUN") ? getenv("DTSIM_SMPIRUN") : DT_SMPIRUN);
    push(a, "-np");
    push(a, "%d", o->gpus);
    push(a, "-platform");
    push(a, "%s", f->platform);
    if (!o->platform_file[0]) {
        push(a, "-hostfile");
        push(a, "%s", f->hosts);
    }
    push(a, "-no-privatize");
    push(a, "--cfg=smpi/simulate-computation:no");
    push(a, "--cfg=smpi/test:0");
    // MPI_Wtime is a clock read, not a 10 ns sleep (SMPI's default smpi/wtime:1e-8 makes
    // every call a simcall and a new event for the solver: the trainer reads it per layer)
    push(a, "--cfg=smpi/wtime:0");
    push(a, "--cfg=network/model:CM02");
    push(a, "--cfg=network/crosstraffic:0");
    // no detached ("eager") sends: SimGrid shares a link fairly between a rank's concurrent
    // sends, so a detached send below 64 KB slowed the previous round's message (a binomial
    // broadcast of 8 KB took one message longer than on a NIC that sends in order)
    push(a, "--cfg=smpi/send-is-detached-thresh:0");
    // SMPI's own collectives carry the rank program's bookkeeping (the barrier before each
    // step, the loss, the trainer's agreements, the results): binomial trees, as MPI libraries
    // run them for a few bytes, not the "default" selector's linear barrier and reduce (which
    // SimGrid itself calls naive, not to be trusted for performance). A linear one's root waits
    // on P-1 requests, each O(P) to complete in SimGrid: O(P^2) host time, 12 s per barrier
    // at 8192 ranks, 0.6 s as a tree (bench/DTSIM-SPEED.md).
    push(a, "--cfg=smpi/barrier:ompi_tree");
    push(a, "--cfg=smpi/bcast:binomial_tree");
    push(a, "--cfg=smpi/reduce:binomial");
    if (algo != DT_ALGO_MPI) push(a, "--cfg=smpi/allreduce:redbcast");  // the two above
    push(a, "--cfg=smpi/shared-malloc-blocksize:%zu", DT_RANK_SHARED_BLOCK);
    push(a, "--cfg=smpi/tmpdir:%s", f->dir);
    push(a, "--log=root.thres:critical");
    if (algo == DT_ALGO_MPI)  // SMPI's own MPI_Allreduce; DTSIM_SMPI_ALLREDUCE picks which
        push(a, "--cfg=smpi/allreduce:%s",
             getenv("DTSIM_SMPI_ALLREDUCE") ? getenv("DTSIM_SMPI_ALLREDUCE") : "lr");
}

// The whole command: smpirun's arguments, the rank program, its run description.
static arg_list simgrid_command(const dtsim_opts *o, const run_files *f) {
    arg_list a = {NULL, 0, 32};  // smpirun's take about 20
    a.v = callocCheck((size_t)a.cap, sizeof *a.v);
    smpirun_args(o, f, o->coll.algo, &a);
    char *rank_so = dtsim_rank_program_path();
    push(&a, "%s", rank_so);
    free(rank_so);
    push(&a, "%s", f->run);
    if (getenv("DTSIM_VERBOSE")) {  // the exact SimGrid command, to rerun it by hand (--keep)
        for (int i = 0; i < a.n; i++) fprintf(stderr, "%s%s", i ? " " : "dtsim: running ", a.v[i]);
        fprintf(stderr, "\n");
    }
    return a;
}

// Runs the command with stdout to out_path; its exit code (1 if it did not exit).
// ---- the result ----

// --device cpu: the real losses rank 0 printed ("step N loss L", "epoch E train_loss L").
static void print_losses(const char *out_path) {
    FILE *f = fopen(out_path, "r");
    char line[4096];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "step ", 5) || !strncmp(line, "epoch ", 6)) fputs(line, stdout);
    if (f) fclose(f);
}

static void remove_run_files(const dtsim_opts *o, const run_files *f) {
    if (!o->keep) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
        if (system(cmd)) {}
    } else if (!o->quiet) {
        fprintf(stderr, "dtsim: platform, hostfile, the rank program's run description and "
                "output kept in %s\n", f->dir);
    }
}

// The rank program's figures, and what dtsim derives from them.
static void fill_result(const dtsim_opts *o, const dt_rank_result *rr, dtsim_result *r) {
    r->gpus = o->gpus;
    r->per_gpu_batch = o->per_gpu_batch;
    r->global_batch = o->per_gpu_batch * o->gpus;
    if (dtsim_is_3d(o))  // a data-parallel replica's sequences (sim/dtsim_3d.c)
        r->global_batch = o->per_gpu_batch * (o->gpus / (o->tp * o->pp));
    r->iter_s = rr->iter_s;
    r->compute_s = rr->compute_s;
    r->comm_s = rr->comm_s;
    r->exposed_s = rr->exposed_s;
    r->buckets = rr->buckets;
    r->model_comm_s = rr->model_comm_s;
    r->comm_bytes = rr->comm_bytes;
    r->iter_p50_s = rr->iter_p50_s, r->iter_p95_s = rr->iter_p95_s, r->iter_max_s = rr->iter_max_s;
    snprintf(r->algo, sizeof r->algo, "%s", rr->algo);
    r->images_s = r->global_batch / r->iter_s;
    r->efficiency = dtsim_is_3d(o) ? r->compute_s / r->iter_s  // (no GPU holds the model)
                  : r->images_s / (o->gpus * o->per_gpu_batch / r->single_iter_s);
    r->epoch_s = o->dataset / r->images_s;
    r->train_s = r->epoch_s * o->epochs;
    r->gpu_hours = o->gpus * r->train_s / 3600;
    dtsim_band_set(o, r);
}

// ---- will it fit? ----
// Peak resident memory of a dtsim run of P simulated GPUs, fitted to bench/DTSIM-SPEED.md's
// measurements (ResNet-50, hier, the default cluster, the library sharing MPI_COMM_WORLD:
// 2.50 GiB at 2048 GPUs, 3.19 GiB at 4096, 12.0 GiB at 16,384): the native baseline and the
// touched arena, plus per rank SimGrid's actor, its stack and our schedules (linear), plus
// state that grows with P in every rank (per pair of ranks: world-sized groups and request
// tables in SMPI).
#define MEM_BASE_GIB 2.03
#define MEM_PER_RANK_GIB 1.73e-4
#define MEM_PER_PAIR_GIB 2.65e-8
static double memory_estimate_gib(double P) {
    return MEM_BASE_GIB + MEM_PER_RANK_GIB * P + MEM_PER_PAIR_GIB * P * P;
}

static double ram_bytes(void) {
    return (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
}

// The largest P whose estimate fits in `have` GiB
static double gpus_fitting(double have) {
    double b = MEM_PER_RANK_GIB, c = MEM_PER_PAIR_GIB, d = have - MEM_BASE_GIB;
    return d > 0 ? (-b + sqrt(b * b + 4 * c * d)) / (2 * c) : 0;
}

int dtsim_gpus_that_fit(void) {
    double ram = ram_bytes();
    return ram > 0 ? (int)gpus_fitting(ram / 1073741824.0) : 0;
}

// Refuse (exit 2) before simulating a run the kernel would kill half-way: the estimate
// against the machine's physical memory, and the largest GPU count that fits. With
// o->fallback the reason goes to r->simgrid_refused and the answer is 3 (the caller answers
// with --analytic instead).
static int memory_check(const dtsim_opts *o, double ram, dtsim_result *r) {
    double need = memory_estimate_gib(o->gpus), have = ram / 1073741824.0;
    if (ram <= 0 || need <= have) return 0;
    double fits = gpus_fitting(have);
    snprintf(r->simgrid_refused, sizeof r->simgrid_refused, "simulating %d GPUs needs about "
             "%.0f GiB of memory (measured growth: bench/DTSIM-SPEED.md), more than this "
             "machine's %.1f GiB; about %d GPUs fit here", o->gpus, need, have, (int)fits);
    if (o->fallback) return 3;
    fprintf(stderr, "dtsim: %s: lower --gpus, use a machine with more memory, --analytic, or "
            "--no-memory-check to try anyway\n", r->simgrid_refused);
    return 2;
}

// dbtree's pipeline is simulated segment by segment unless asked (--coarsen-dbtree), which
// SimGrid pays for as P² above a thousand GPUs: say so before the minutes start.
static void dbtree_hint(const dtsim_opts *o) {
    if (o->quiet || o->coll.algo != DT_ALGO_DBTREE || o->coll.coarsen_tree > 1 || o->gpus < 2048)
        return;
    fprintf(stderr, "dtsim: dbtree over %d GPUs is simulated segment by segment of its pipeline "
            "and takes minutes (4096 GPUs: about 13 on a 2-core machine); --coarsen-dbtree 16 "
            "merges them, several times faster, but its iteration comes out shorter (by up to "
            "~17 %% overlapping backward, bench/DTSIM-SPEED.md)\n", o->gpus);
}

// ---- one run ----

int dtsim_prepare(const dtsim_opts *o, dtsim_result *r) {
    memset(r, 0, sizeof *r);
    size_t used, params;
    dt_model_stats one;
    int three_d = dtsim_is_3d(o);  // one GPU's step: the whole model at a micro-batch
    int rc = dtsim_single_gpu(o, three_d ? o->micro_batch : o->per_gpu_batch, o->prec,
                        three_d ? 1 : o->accumulate, &one, &used, &params);
    if (rc || (rc = three_d ? dtsim_3d_prepare(o, r) : dtsim_gpt_prepare(o, r)))
        return rc;  // gpt, --shard, --tp/--pp: memory per GPU
    size_t max_alloc = one.max_alloc;
    r->roofline_iter_s = one.seconds;
    r->params = (long long)params;
    dt_gpt_shape sh;
    if (three_d)  // the whole model's (one GPU holds a stage of a tensor rank's)
        r->params = (long long)dt_gpt_param_count(dtsim_gpt_shape(o, &sh), o->vocab);
    r->time_scale = 1;
    if (o->gpu_img_s > 0 && (rc = dtsim_calibrate(o, &one, r))) return rc;
    if (o->calib_row && (rc = dtsim_calib_node(o, r))) return rc;
    r->single_iter_s = one.host_s + (one.seconds - one.host_s) * r->time_scale;
    if (o->has_profile) {
        if ((rc = dtsim_profile_scales(o, r))) return rc;
        r->single_iter_s = 0;
        for (int k = 0; k < DT_N_KINDS; k++) r->single_iter_s += one.kind_seconds[k] * r->kind_scale[k];
    }
    if (three_d && o->analytic) return 0;  // no SimGrid to size (sim/dtsim_3d.c)
    // one modelled GPU's memory (dtsim plan's check; the gpt models' in dtsim_gpt_prepare)
    const dt_gpu_profile *g = dt_gpu_find(o->cluster.gpu);
    if (!o->plan_row && !o->cpu && !o->no_memory_check && !r->has_mem && g &&
        (double)used > g->mem_bytes) {
        fprintf(stderr, "dtsim: %s at %d %s per GPU%s needs %.1f GiB of one %s's memory, which "
                "has %.0f GiB (its weights, gradients, optimizer state and activations; dtsim "
                "plan refuses the same): lower --per-gpu-batch, split it with --accumulate K, "
                "or --no-memory-check to simulate anyway\n", o->model, o->per_gpu_batch,
                dtsim_samples(o), o->accumulate > 1 ? " (in micro-batches)" : "",
                (double)used / 1073741824.0, g->name, g->mem_bytes / 1073741824.0);
        return 2;
    }
    size_t arena = used + ARENA_MARGIN, least = 2 * max_alloc + ARENA_MARGIN;
    if (arena > ARENA_CAP) arena = least > ARENA_CAP ? least : ARENA_CAP;
    double ram = ram_bytes();
    if (!o->analytic && ram > 0 && (double)arena > 0.75 * ram) {  // SimGrid maps it whole
        snprintf(r->simgrid_refused, sizeof r->simgrid_refused, "one modelled GPU's largest "
                 "buffer is %.1f GiB (%s, %d %s per GPU in micro-batches of %d): SimGrid must "
                 "map twice that, more than this machine's %.1f GiB of memory allow",
                 max_alloc / 1073741824.0, o->model, o->per_gpu_batch, dtsim_samples(o),
                 o->per_gpu_batch / o->accumulate, ram / 1073741824.0);
        if (o->fallback) return 3;
        fprintf(stderr, "dtsim: %s; lower --per-gpu-batch, split it with --accumulate K, or "
                "--analytic\n", r->simgrid_refused);
        return 2;
    }
    // SimGrid's memory for the ranks, then its time; --analytic runs no SimGrid, at any count
    if (!o->no_memory_check && !o->analytic && (rc = memory_check(o, ram, r))) return rc;
    int buckets = o->fusion.mode == DT_FUSION_SEGMENTS ? o->fusion.segments
                : o->fusion.mode == DT_FUSION_BYTES && o->fusion.bytes > 0
                    ? (int)fmin(1e6, ceil(4.0 * (double)params / (double)o->fusion.bytes)) : 0;
    if (!o->analytic && (rc = dtsim_wall_check(o, buckets, r))) return rc;
    r->arena = arena;
    r->device_bytes = (double)used;
    return 0;
}

int dtsim_simulate(const dtsim_opts *o, dtsim_result *r) {
    if (o->analytic) return dtsim_analytic(o, r);
    if (dtsim_is_3d(o)) {  // --simgrid: the cost model's parts first, then SimGrid's step
        int rc = dtsim_3d_analytic(o, r);
        if (rc) return rc;
        r->analytic_iter_s = r->iter_s;
    }
    double t_wall = dt_now_s();
    int rc;
    dbtree_hint(o);
    run_files f;
    if ((rc = make_run_files(&f))) return rc;
    const dt_cluster *c = &o->cluster;
    if ((rc = write_platform(o, c, &f))) {
        remove_run_files(o, &f);
        return rc;
    }
    if ((rc = write_rank_run(o, r, &f))) {
        remove_run_files(o, &f);
        return rc;
    }
    arg_list cmd = simgrid_command(o, &f);
    double peak;
    int code = dtsim_simgrid_run(cmd.v, f.out, ram_bytes(), &peak);
    for (int i = 0; i < cmd.n; i++) free(cmd.v[i]);
    free(cmd.v);

    if (o->cpu) print_losses(f.out);
    dt_rank_result rr;
    dt_error err = {0};
    int missing = access(f.result, F_OK) != 0;  // the rank program did not finish
    int read = missing ? -1 : dt_rank_result_read(f.result, &rr, &err);
    remove_run_files(o, &f);
    dtsim_end_if_signalled();  // after the folder is gone
    if (code == -1) {  // stopped for memory
        snprintf(r->simgrid_refused, sizeof r->simgrid_refused, "SimGrid needed more than the "
                 "%.3g GiB of memory it may use here (of %.1f GiB) for %d GPUs of %s (stopped at "
                 "%.3g GiB)", dtsim_simgrid_memory_limit(ram_bytes()) / 1073741824.0,
                 ram_bytes() / 1073741824.0, o->gpus, o->model, peak / 1073741824.0);
        if (o->fallback) return 3;
        fprintf(stderr, "dtsim: %s: lower --gpus or --per-gpu-batch, or --analytic\n",
                r->simgrid_refused);
        return 2;
    }
    if (missing) {
        fprintf(stderr, "dtsim: the simulation of %d GPUs failed (SimGrid exit %d)\n", o->gpus,
                code);
        return code == 2 ? 2 : 1;
    }
    if (read) {
        fprintf(stderr, "dtsim: %s\n", err.msg);
        return 1;
    }
    fill_result(o, &rr, r);
    r->wall_s = dt_now_s() - t_wall;
    return 0;
}

int dtsim_run_one(const dtsim_opts *o, dtsim_result *r) {
    int rc = dtsim_prepare(o, r);
    if (rc) return rc;
    return o->coll.algo == DT_ALGO_AUTO && !o->cpu ? dtsim_auto(o, r) : dtsim_simulate(o, r);
}
