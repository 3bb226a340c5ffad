// dtsim_analytic.c — `dtsim --analytic`: the same configuration answered without SimGrid,
// by the pieces the simulation itself is made of, composed in closed form: one GPU's step on
// the model device (the roofline, calibrated as the simulation calibrates it) with the time
// each layer's gradient becomes ready; the fusion planner's buckets and its one-channel
// schedule (nn/coll/fusion.h), each bucket priced by the α-β-γ cost model of the algorithm
// (nn/coll/coll_cost.c, the prices the planner uses inside the simulation too). Milliseconds
// per configuration at any GPU count; SMPI stays the reference, and bench/ANALYTIC.md
// measures the difference.
//   iteration = upload + forward + max(backward, last bucket's finish)   (overlap)
//             = upload + forward + backward + sum of the buckets' costs   (--no-overlap)
//             + the batch-norm statistics' allreduce + the optimizer step
// dbtree's buckets finish as the trainer's polls let them (polled_finish: one round of its
// pipeline per poll while backward runs). What it leaves out, and the simulation has:
// contention between the allreduce's messages and other traffic on shared links beyond what
// the cost model's sharing factor says, and the polls of the other algorithms' rounds.
// Not here: the report (dtsim_report.c), the simulation (dtsim_run.c).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_btree.h"
#include "coll/coll_cost.h"
#include "device_model.h"
#include "dtsim.h"
#include "dtsim_analytic_error.h"
#include "net.h"
#include "optim.h"
#include "zero.h"

typedef struct {
    dt_device *dev;
    dt_grad_event *ev;
    int n;
    double t0;  // the device's seconds when backward started
} ready_log;

static void on_ready(void *ctx, dt_net *net, int layer, size_t lo, size_t hi) {
    (void)net, (void)layer;
    ready_log *l = ctx;
    l->ev[l->n].ready = dt_device_model_stats(l->dev).seconds - l->t0;
    l->ev[l->n].lo = lo, l->ev[l->n].hi = hi;
    l->n++;
}

typedef struct {
    dt_coll_opts co;
    int p;
} pricing;

// A bucket's allreduce, as nn/train_comm.c prices it for the planner (auto: the cheapest;
// the MPI library's own, which has no model: a ring)
static double bucket_cost(void *ctx, size_t bytes) {
    const pricing *c = ctx;
    dt_algo a = c->co.algo == DT_ALGO_AUTO ? dt_coll_cheapest(&c->co, c->p, (double)bytes)
                                           : c->co.algo;
    double t = dt_coll_cost(a, &c->co, c->p, (double)bytes);
    if (!isfinite(t)) t = dt_coll_cost(DT_ALGO_RING, &c->co, c->p, (double)bytes);
    return isfinite(t) && t >= 0 ? t : 0.0;
}

// The rounds a bucket's allreduce must be polled through while backward runs, 0 for an
// algorithm whose rounds are not gated here. dbtree: its pipeline of S segments over trees D
// deep is 2(S + D - 1) steps up and down (coll_cost.c, the cost model's own count; the lanes
// of the two trees advance together).
static int gated_rounds(const pricing *c, size_t bytes) {
    dt_algo a = c->co.algo == DT_ALGO_AUTO ? dt_coll_cheapest(&c->co, c->p, (double)bytes)
                                           : c->co.algo;
    if (a != DT_ALGO_DBTREE || c->p < 2) return 0;
    return 2 * (dt_dbtree_segments(&c->co, c->p, (double)bytes) + dt_dtree_depth(c->p) - 1);
}

// When a bucket's allreduce of `rounds` rounds (`cost` seconds in all) that starts at
// `start` is seen finished, given the host's polls (nn/train_comm.c): during backward the
// trainer advances an allreduce only when it polls, after each layer's kernels (ev[i].ready),
// and a poll moves a lane by one round (coll_request.c's progress posts a round, and the next
// once that one has arrived); after backward (bw) it waits, and the rounds follow one another.
// A round whose messages take less than the time between two polls waits for the next one.
static double polled_finish(const dt_grad_event *ev, int n, double bw, double start, int rounds,
                            double cost) {
    double d = cost / rounds, t = start;
    int j = 0;
    for (int k = 0; k < rounds; k++) {
        double arrived = t + d;
        while (j < n && ev[j].ready < arrived) j++;
        t = j < n && ev[j].ready <= bw ? ev[j].ready : fmax(arrived, bw);
    }
    return t;
}

// One GPU's step (forward, loss, backward with its ready events, the optimizer), calibrated
// as the rank program is (time_scale, or a profile's factor per kind), into *up (the
// batch's upload), *fw, *bw, *opt (seconds) and the events. 0, or 2 with a message.
static int one_step(const dtsim_opts *o, const dtsim_result *r, ready_log *log, double *up,
                    double *fw, double *bw, double *opt_s, dt_net **net_out) {
    dt_error err = {0};
    dt_modeldev_config mc = {dt_gpu_find(o->cluster.gpu), o->prec, NULL, NULL, NULL, 0, 1,
                             r->time_scale, o->flash};
    dt_device *dev = dt_device_model_create(&mc, &err);
    if (!dev) return fprintf(stderr, "dtsim: %s\n", err.msg), 2;
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = o->per_gpu_batch;
    dt_model_shape(o->model, o->model_side, o->model_classes, &cfg.in_h, &cfg.num_classes);
    cfg.in_w = cfg.in_h;
    dtsim_gpt_config(o, &cfg);  // gpt models (0: the model's)
    dt_net *net = dt_model_create(o->model, dev, &cfg, &err);
    dt_optim_config oc = dt_optim_config_default(dt_sim_optim_kind(o->model, o->lars));
    dt_optim *opt = net ? dt_optim_create(net, &oc, &err) : NULL;
    if (!opt) {
        fprintf(stderr, "dtsim: %s\n", err.msg);
        if (net) dt_net_free(net);
        dev->destroy(dev);
        return 2;
    }
    dt_device_model_follow_layers(dev, net);
    if (o->has_profile) dt_device_model_set_kind_scales(dev, r->kind_scale, DT_N_KINDS);
    float *x = callocCheck(1, sizeof(float));
    int32_t *y = callocCheck((size_t)cfg.batch, sizeof(int32_t));
    log->dev = dev;
    log->ev = callocCheck((size_t)net->n_layers + 1, sizeof *log->ev);
    dt_net_set_batch(net, x, y);
    *up = dt_device_model_stats(dev).seconds;
    dt_net_forward(net, 1);
    dt_net_loss(net);
    *fw = dt_device_model_stats(dev).seconds - *up;
    log->t0 = dt_device_model_stats(dev).seconds;
    dt_net_backward(net, 1.0f, on_ready, log);
    *bw = dt_device_model_stats(dev).seconds - log->t0;
    double before = dt_device_model_stats(dev).seconds;
    dt_optim_step(opt, net, 0.1f);
    *opt_s = dt_device_model_stats(dev).seconds - before;
    free(x), free(y);
    dt_optim_free(opt);
    *net_out = net;  // the caller frees it, then the device
    return 0;
}

int dtsim_analytic(const dtsim_opts *o, dtsim_result *r) {
    if (dtsim_is_3d(o)) return dtsim_3d_analytic(o, r);  // a pipeline's step (dtsim_3d.c)
    ready_log log = {0};
    double up, fw, bw, opt_s;
    dt_net *net = NULL;
    int rc = one_step(o, r, &log, &up, &fw, &bw, &opt_s, &net);
    if (rc) return rc;
    pricing pr = {dtsim_coll_for(o, &o->cluster), o->gpus};
    dt_error err = {0};
    if (dt_coll_opts_resolve(&pr.co, o->gpus, &err)) {
        fprintf(stderr, "dtsim: %s\n", err.msg);
        rc = 2;
        goto out;
    }
    size_t wire = pr.co.wire_f16 ? 2 : 4;
    dt_bucket *b = callocCheck((size_t)log.n + 1, sizeof *b);
    int nb = o->gpus > 1 ? dt_fusion_plan(log.ev, log.n, wire, &o->fusion, bucket_cost, &pr, b,
                                          &err)
                         : 0;
    if (nb < 0) {
        fprintf(stderr, "dtsim: %s\n", err.msg);
        free(b);
        rc = 2;
        goto out;
    }
    double comm = 0, finish = 0;
    for (int i = 0; i < nb; i++) {
        size_t bytes = (b[i].hi - b[i].lo) * wire;
        double c = bucket_cost(&pr, bytes);
        int rounds = o->overlap ? gated_rounds(&pr, bytes) : 0;
        comm += c;
        if (rounds > 0) {  // one after another, each started at a poll (the planner's order)
            double start = fmax(log.ev[b[i].last_event].ready, finish);
            b[i].finish = polled_finish(log.ev, log.n, bw, start, rounds, c);
        }
        finish = fmax(finish, b[i].finish);
    }
    double exposed = o->overlap ? fmax(0, finish - bw) : comm;
    double stats_bytes = (double)(net->n_total - net->n_trainable) * 4;
    double stats = o->gpus > 1 && stats_bytes > 0 ? bucket_cost(&pr, (size_t)stats_bytes) : 0;
    r->buckets = nb;
    r->compute_s = up + fw + bw + opt_s;
    r->comm_s = comm + stats;
    r->exposed_s = exposed + stats;
    r->iter_s = r->compute_s + r->exposed_s;
    r->model_comm_s = comm + stats;
    r->iter_p50_s = r->iter_p95_s = r->iter_max_s = r->iter_s;
    snprintf(r->algo, sizeof r->algo, "%s",
             dt_algo_name(pr.co.algo == DT_ALGO_AUTO
                              ? dt_coll_cheapest(&pr.co, o->gpus, (double)net->n_trainable * wire)
                              : pr.co.algo));
    r->images_s = o->per_gpu_batch * (double)o->gpus / r->iter_s;
    r->global_batch = o->per_gpu_batch * o->gpus;
    r->per_gpu_batch = o->per_gpu_batch;  // (one GPU's rate in the report)
    r->gpus = o->gpus;
    r->efficiency = r->images_s / (o->gpus * o->per_gpu_batch / r->single_iter_s);
    r->epoch_s = o->dataset / r->images_s;
    r->train_s = r->epoch_s * o->epochs;
    r->gpu_hours = o->gpus * r->train_s / 3600;
    dtsim_band_set(o, r);
    r->wall_s = 0;
    if (o->shard > 0) rc = dtsim_gpt_analytic(o, r, opt_s, net, log.ev, log.n, fw, bw);  // ZeRO's collectives instead
    free(b);
out:
    free(log.ev);
    dt_device *dev = net->dev;
    dt_net_free(net);
    dev->destroy(dev);
    return rc;
}

// One algorithm's committed error (sim/dtsim_analytic_error.h), for a run of gpus GPUs
static void error_line(FILE *f, dt_algo a, int gpus) {
    const char *name = dt_algo_name(a);
    for (size_t i = 0; i < sizeof dtsim_analytic_errors / sizeof *dtsim_analytic_errors; i++) {
        const dtsim_analytic_error *e = &dtsim_analytic_errors[i];
        if (strcmp(e->algo, name)) continue;
        fprintf(f, "analytic against SimGrid, %s: %+.1f %% to %+.1f %% of the simulated step from "
                   "%d to %d GPUs", name, e->err_lo, e->err_hi, e->gpus_lo, e->gpus_hi);
        if (e->not_measured[0]) fprintf(f, " (not measured: %s)", e->not_measured);
        if (gpus > e->gpus_hi || gpus < e->gpus_lo)
            fprintf(f, "; %d GPUs is outside what was measured", gpus);
        fprintf(f, "\n");
        return;
    }
    fprintf(f, "analytic against SimGrid, %s: not measured (bench/ANALYTIC.md)\n", name);
}

void dtsim_analytic_note(FILE *f, const dtsim_opts *o) {
    if (dtsim_is_3d(o)) {  // sim/dtsim_3d.c
        fprintf(f, "analytic, 3D: the pipeline's schedule run against each stage's modelled "
                   "compute and messages, the data-parallel allreduce after the flush (not "
                   "overlapped: a bound); --simgrid runs the layout in SimGrid beside it; "
                   "against published runs: bench/MEGATRON.md\n");
        return;
    }
    if (o->shard > 0 && o->shard < 3)  // sim/dtsim_gpt.c, dtsim_gpt_analytic
        fprintf(f, "analytic, ZeRO stage %d: the compute, then the reduce-scatter and the "
                   "allgather of the whole model, as the simulation runs them\n", o->shard);
    if (o->shard >= 3)
        fprintf(f, "analytic, ZeRO stage 3: each layer's gathers and reduce-scatter on one "
                   "channel that progresses while the layers compute, as NCCL's stream does "
                   "under FSDP; SimGrid's trainer moves them only when it polls, so its step "
                   "is longer (docs/formulas.md)\n");
    fprintf(f, "analytic: the cost model, the roofline and the fusion schedule without SimGrid; "
               "its difference from the simulation (bench/ANALYTIC.md):\n");
    if (!o->sweep) {
        error_line(f, o->coll.algo, o->gpus);
        return;
    }
    int most = 0;
    for (int i = 0; i < o->n_sweep_gpus; i++)
        if (o->sweep_gpus[i] > most) most = o->sweep_gpus[i];
    for (int i = 0; i < o->n_sweep_algos; i++) error_line(f, o->sweep_algos[i], most);
}
