// dtsim_faults.c — dtsim's answers for a cluster that is not perfect: slow GPUs
// (--straggler, simulated: the model device of each slow rank takes longer, sim/straggler.h)
// and failures with checkpoints (--mtbf, --fail-rate, ...: the simulated step composed with
// the failure process, sim/goodput.h). Their options, the second simulation of the perfect
// cluster that a straggler's penalty is measured against, and their lines of the report.
// Not here: the models themselves (straggler.c, goodput.c); the rest of the report.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtsim.h"
#include "goodput.h"
#include "opt_table.h"
#include "gpu.h"
#include "straggler.h"
#include "zero.h"

// A checkpoint holds per trainable parameter the fp32 weights (in mixed precision the fp32
// master; the half copy is rebuilt from it) and the optimizer's fp32 state: SGD's or LARS's
// momentum (8 bytes in all), AdamW's or LAMB's two moments (12): sim/zero.h's count.
#define DEFAULT_STORAGE_BW 2e9  // bytes/s a node writes to the checkpoint store
// The shared cap of the checkpoint store when --fs-bw is not given: a parallel file system of
// about one DDN AI400X2-class appliance's write bandwidth (~65-100 GB/s), ASSUMED; a buyer's
// own store's figure goes in --fs-bw.
#define DEFAULT_FS_BW 100e9
#define DEFAULT_RESTART_S 300.0 // relaunch: scheduler, process start, communicator set-up
#define MC_TRIALS 1000

// --straggler SPEC: checked as the simulation reads it (sim/straggler.c), kept as typed
static int straggler(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err) {
    dt_straggler st;
    if (strlen(s) >= d->size) return dt_opt_bad(err, what, s, "a spec of under 256 characters");
    if (dt_straggler_parse(s, what, &st, err)) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        return dt_fail(err, DT_EXIT_USAGE, "option %s", msg);
    }
    snprintf(v, d->size, "%s", s);
    return 0;
}

// --ckpt-interval M: minutes into seconds, or auto (0: the best goodput)
static int interval(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err) {
    double *out = v;
    if (!strcmp(s, "auto")) return *out = 0, 0;
    if (dt_parse_real(s, 1e-3, 1e7, out)) return dt_opt_bad(err, what, s, d->want);
    *out *= 60;
    return 0;
}

// --storage-bw, --fs-bw: a bandwidth as --net-bw takes it, in bytes/s
static int bandwidth(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err) {
    dt_bw_unit unit;
    (void)d;
    return dt_parse_bandwidth(s, what, v, &unit, err);
}

#define AT(member) DT_OPT_AT(dtsim_opts, member)

static const dt_opt fault_rows[] = {
    {.type = DT_OPT_SECTION,
     .help = "slow GPUs and failures (docs/formulas.md, \"Failures, checkpoints, goodput\"):"},
    {.name = "straggler", .arg = "SPEC", .type = DT_OPT_CUSTOM, AT(straggler),
     .parse = straggler, .help = "slow GPUs, simulated: rank:R:F, node:N:F (F times slower),\n"
     "cv:X (every rank, every step: lognormal, mean 1, CV X, seeded\nby --seed); e.g. "
     "node:3:1.3,cv:0.05. Reports the step's median,\np95 and max against the perfect cluster"},
    {.name = "mtbf", .arg = "HOURS", .type = DT_OPT_REAL, AT(gpu_mtbf_h), .lo = 1e-3,
     .hi = 1e12, .want = "a number of hours > 0", .help = "one GPU's mean time between "
     "failures, as vendors and papers\nquote it (the job's: HOURS / GPUs, printed), or"},
    {.name = "job-mtbf", .arg = "HOURS", .type = DT_OPT_REAL, AT(mtbf_h), .lo = 1e-3,
     .hi = 1e9, .want = "a number of hours > 0", .help = "the whole job's MTBF, or"},
    {.name = "fail-rate", .arg = "X", .type = DT_OPT_REAL, AT(fail_gpu_h), .lo = 0, .hi = 1,
     .want = "failures per GPU-hour in [0, 1]",
     .help = "failures per GPU-hour (Llama 3: 2e-5) and/or"},
    {.name = "node-fail-rate", .arg = "X", .type = DT_OPT_REAL, AT(fail_node_h), .lo = 0,
     .hi = 1, .want = "failures per node-hour in [0, 1]", .help = "failures per node-hour"},
    {.name = "ckpt-interval", .arg = "M", .type = DT_OPT_CUSTOM, AT(ckpt_interval_s),
     .parse = interval, .want = "a number of minutes > 0 or auto",
     .help = "minutes of training between checkpoints (default: auto, the\nbest goodput)"},
    {.name = "ckpt-async", .type = DT_OPT_SWITCH, AT(ckpt_async),
     .help = "copy the checkpoint to host memory, write it behind training"},
    {.name = "storage-bw", .arg = "BW", .type = DT_OPT_CUSTOM, AT(storage_bw),
     .parse = bandwidth, .help = "per node, to the checkpoint store (default 2GB/s)"},
    {.name = "fs-bw", .arg = "BW", .type = DT_OPT_CUSTOM, AT(fs_bw), .parse = bandwidth,
     .help = "the store's shared cap (default 100GB/s: a parallel file\nsystem of about one "
     "appliance, assumed)"},
    {.name = "restart", .arg = "S", .type = DT_OPT_REAL, AT(restart_s), .lo = 0, .hi = 1e7,
     .want = "a number of seconds >= 0",
     .help = "seconds to relaunch, before reading the checkpoint (300)"},
};

_Static_assert(sizeof fault_rows / sizeof *fault_rows == DTSIM_FAULT_ROWS, "dtsim.h's count");

dt_opt_table dtsim_fault_table(dtsim_opts *o, unsigned char *given, const char **typed) {
    return (dt_opt_table){.opts = fault_rows, .n = DTSIM_FAULT_ROWS, .base = o, .given = given, .typed = typed};
}

int dtsim_has_failures(const dtsim_opts *o) {
    return o->mtbf_h > 0 || o->gpu_mtbf_h > 0 || o->fail_gpu_h > 0 || o->fail_node_h > 0;
}

// Before the header: the straggler's ranks and nodes within the cluster, failure options
// only with a failure rate. 0, or 2 with a message.
int dtsim_faults_check(const dtsim_opts *o) {
    dt_straggler s;
    dt_error err;
    if (dt_straggler_parse(o->straggler, "--straggler", &s, &err)) return 2;
    int rank, node, gpn = o->cluster.gpus_per_node > 0 ? o->cluster.gpus_per_node : 1;
    dt_straggler_max_index(&s, &rank, &node);
    int gpus = o->sweep ? o->sweep_gpus[0] : o->gpus;
    for (int i = 1; o->sweep && i < o->n_sweep_gpus; i++)
        if (o->sweep_gpus[i] < gpus) gpus = o->sweep_gpus[i];
    if (rank >= gpus || node >= (gpus + gpn - 1) / gpn) {
        fprintf(stderr, "dtsim: option --straggler: %s %d is beyond the cluster's %d %s\n",
                rank >= gpus ? "rank" : "node", rank >= gpus ? rank : node,
                rank >= gpus ? gpus : (gpus + gpn - 1) / gpn, rank >= gpus ? "GPUs" : "nodes");
        return 2;
    }
    if (o->straggler[0] && o->analytic) {
        fprintf(stderr, "dtsim: --straggler is simulated (the model device of each slow rank "
                        "takes longer): not with --analytic\n");
        return 2;
    }
    int ck = o->ckpt_interval_s > 0 || o->storage_bw > 0 || o->fs_bw > 0 || o->restart_s >= 0 ||
             o->ckpt_async;
    if (ck && !dtsim_has_failures(o)) {
        fprintf(stderr, "dtsim: checkpoint options need a failure rate: --mtbf HOURS (per "
                        "GPU), --job-mtbf HOURS, --fail-rate X or --node-fail-rate X\n");
        return 2;
    }
    if ((o->mtbf_h > 0) + (o->gpu_mtbf_h > 0) + (o->fail_gpu_h > 0 || o->fail_node_h > 0) > 1) {
        fprintf(stderr, "dtsim: --mtbf (one GPU's), --job-mtbf (the job's) and --fail-rate / "
                        "--node-fail-rate each give the failure rate: give one or the other\n");
        return 2;
    }
    return 0;
}

// The failure process and the checkpoint of run r (its simulated step and time-to-train).
static void goodput_of(const dtsim_opts *o, dtsim_result *r) {
    int gpn = o->cluster.gpus_per_node > 0 ? o->cluster.gpus_per_node : 1;
    double nodes = ceil((double)r->gpus / gpn);
    r->mtbf_s = o->mtbf_h > 0 ? 3600 * o->mtbf_h
              : o->gpu_mtbf_h > 0 ? 3600 * o->gpu_mtbf_h / r->gpus  // independent GPUs
              : 3600 / (o->fail_gpu_h * r->gpus + o->fail_node_h * nodes);
    int moments = dt_zero_moments(dt_sim_optim_kind(o->model, o->lars));
    r->ckpt_bytes = (4.0 + 4.0 * moments) * (double)r->params;
    // every node writes its share (ranks hold identical copies), up to the shared cap
    double bw = nodes * (o->storage_bw > 0 ? o->storage_bw : DEFAULT_STORAGE_BW);
    double cap = o->fs_bw > 0 ? o->fs_bw : DEFAULT_FS_BW;
    if (cap < bw) bw = cap;
    r->ckpt_write_bw = bw;
    r->ckpt_save_s = r->ckpt_bytes / bw;
    const dt_gpu_profile *g = dt_gpu_find(o->cluster.gpu);
    double copy = r->ckpt_bytes / r->gpus / (g ? g->host_bw : 12e9);  // its share over PCIe
    dt_goodput_in in = {.work_s = r->train_s, .mtbf_s = r->mtbf_s,
                        .stall_s = o->ckpt_async ? copy : r->ckpt_save_s,
                        .save_s = o->ckpt_async ? r->ckpt_save_s : 0,
                        .restart_s = (o->restart_s >= 0 ? o->restart_s : DEFAULT_RESTART_S) +
                                     r->ckpt_save_s,  // reading back, at the writing rate
                        .async = o->ckpt_async};
    in.interval_s = o->ckpt_interval_s > 0 ? o->ckpt_interval_s : dt_goodput_best_interval(&in);
    dt_goodput e = dt_goodput_expected(&in);
    dt_goodput m = dt_goodput_monte_carlo(&in, MC_TRIALS, o->seed, &r->mc_ci_s);
    r->has_goodput = 1;
    r->ckpt_interval_s = in.interval_s;
    r->ckpt_stall_s = in.stall_s;
    r->restart_total_s = in.restart_s;
    r->young_s = dt_goodput_young_interval(in.stall_s, in.mtbf_s);
    r->daly_s = dt_goodput_daly_interval(in.stall_s, in.mtbf_s);
    r->failures = e.failures;
    r->goodput = e.goodput;
    r->wall_train_s = e.wall_s;
    r->mc_wall_s = m.wall_s;
}

int dtsim_faults_run(const dtsim_opts *o, dtsim_result *r) {
    if (o->straggler[0]) {  // the same cluster without its stragglers
        dtsim_opts perfect = *o;
        perfect.straggler[0] = 0;
        perfect.trace[0] = 0;
        dtsim_result p = *r;
        int rc = dtsim_simulate(&perfect, &p);
        if (rc) return rc;
        r->perfect_iter_s = p.iter_s;
        r->perfect_compute_s = p.compute_s;
    }
    if (dtsim_has_failures(o)) goodput_of(o, r);
    return 0;
}

static void duration(char *buf, size_t n, double s) {
    if (isfinite(s)) dtsim_duration(s, buf, n);
    else snprintf(buf, n, "never");
}

void dtsim_faults_report(FILE *f, const dtsim_opts *o, const dtsim_result *r) {
    if (o->straggler[0]) {
        dt_straggler s;
        dt_error err;
        dt_straggler_parse(o->straggler, "--straggler", &s, &err);
        fprintf(f, "stragglers (%s): step median %.2f ms, p95 %.2f, max %.2f over %d timed "
                   "steps; mean %.2f ms, %+.1f %% against the perfect cluster (%.2f ms)\n",
                o->straggler, 1e3 * r->iter_p50_s, 1e3 * r->iter_p95_s, 1e3 * r->iter_max_s,
                o->iters, 1e3 * r->iter_s, 100 * (r->iter_s / r->perfect_iter_s - 1),
                1e3 * r->perfect_iter_s);
        if (s.cv > 0)
            fprintf(f, "  order statistics: the slowest of %d GPUs draws %.3f on average (cv "
                       "%.3g), so a step of %.2f ms compute alone would take %.2f ms\n",
                    r->gpus, dt_straggler_expected_max(s.cv, r->gpus), s.cv,
                    1e3 * r->perfect_compute_s,
                    1e3 * r->perfect_compute_s * dt_straggler_expected_max(s.cv, r->gpus));
    }
    if (!r->has_goodput) return;
    char iv[32], yg[32], dl[32], rs[32], w[32], mc[32], ci[32];
    duration(iv, sizeof iv, r->ckpt_interval_s);
    duration(yg, sizeof yg, r->young_s);
    duration(dl, sizeof dl, r->daly_s);
    duration(rs, sizeof rs, r->restart_total_s);
    duration(w, sizeof w, r->wall_train_s);
    duration(mc, sizeof mc, r->mc_wall_s);
    duration(ci, sizeof ci, r->mc_ci_s);
    char per[64] = "";
    if (o->gpu_mtbf_h > 0) snprintf(per, sizeof per, " (%.4g h per GPU / %d GPUs)", o->gpu_mtbf_h,
                                    r->gpus);
    int moments = dt_zero_moments(dt_sim_optim_kind(o->model, o->lars));
    fprintf(f, "failures: MTBF %.2f h for the job%s; checkpoint %.0f MB (fp32 weights + %s) "
               "written at %.3g GB/s (%s) %s %.3g s; restart %s\n", r->mtbf_s / 3600, per,
            r->ckpt_bytes / 1e6, moments == 2 ? "two moments" : "momentum",
            r->ckpt_write_bw / 1e9, o->fs_bw > 0 ? "--fs-bw" : r->ckpt_write_bw >= DEFAULT_FS_BW
            ? "the default file system's cap, 100 GB/s: --fs-bw" : "--storage-bw per node",
            o->ckpt_async ? "stalls training (copy to host) for" : "blocks training for",
            r->ckpt_stall_s, rs);
    fprintf(f, "  every %s of training (%s; Young %s, Daly %s): %.2f interruptions expected, "
               "goodput %.1f %%\n", iv, o->ckpt_interval_s > 0 ? "--ckpt-interval" : "auto",
            yg, dl, r->failures, 100 * r->goodput);
    char bt[48];
    fprintf(f, "  time-to-train with failures: %s %s (Monte-Carlo over %d runs: %s ± %s)\n", w,
            dtsim_band_text(r, bt, sizeof bt), MC_TRIALS, mc, ci);
}
