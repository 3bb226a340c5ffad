// dtsim_3d.c — tensor and pipeline parallelism beside data parallelism (Megatron-LM's "PTD-P":
// Shoeybi et al. 2019; Narayanan et al. 2021) in dtsim, answered by the analytic model: the
// options' checks, the memory each GPU needs (refused before anything runs when it does not
// fit), and one step composed from the pieces the rest of dtsim is made of:
//   - one tensor-parallel rank's block and the model's ends (embedding, final norm, tied head
//     and loss), timed on the modelled GPU as the layers the builder makes for that rank
//     (nn/models_gpt.c with dt_model_config.tp: 1/t of every block's gemms and heads), a
//     block as the difference of the nets of two blocks and of one;
//   - tensor parallelism's allreduces of a micro-batch's activations (b s C elements), two in
//     forward and two in backward per block (Shoeybi et al. 2019, §3: the f and g operators),
//     on a ring of t GPUs inside a node (nn/coll/coll_cost.c's price);
//   - the pipeline's schedule (nn/pipe/pipe_sched.h) run against each virtual stage's costs,
//     its messages between stages as Megatron-LM sends them (the scatter/gather
//     optimisation of Narayanan et al. 2021, §4.1: 1/t of the activations per tensor rank
//     over the network, then an allgather inside the node);
//   - the data-parallel allreduce of a stage's gradients after the pipeline's flush (not
//     overlapped: a bound, as Megatron-LM 2021 runs it), the GPUs of each node sharing its
//     NICs, and the optimizer's step on a stage's parameters (ZeRO stage 1: 1/d of them).
// Ranks are laid out as Megatron-LM does: tensor-parallel ranks consecutive (inside a node),
// then data-parallel, then pipeline stages. docs/parallelism.md has the formulas.
// Not here: the schedules (nn/pipe/), the report's lines (dtsim_3d_report.c).
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_cost.h"
#include "device_model.h"
#include "dtsim.h"
#include "layer.h"
#include "models.h"
#include "net.h"
#include "net_acts.h"
#include "optim.h"
#include "pipe/pipe_sched.h"
#include "zero.h"

#define GIB 1073741824.0

static int refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int refuse(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "dtsim: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return 2;
}

// --layers, --hidden, --heads: a gpt model's, answered by the cost model (the rank program
// of a simulation builds the models by name)
static int check_shape(const dtsim_opts *o) {
    if (!o->layers && !o->hidden && !o->heads) return 0;
    if (!dt_sim_is_gpt(o->model))
        return refuse("--layers, --hidden and --heads: a gpt model's shape (%s is not one)",
                      o->model);
    if (!o->analytic)
        return refuse("--layers, --hidden and --heads: with --analytic or --tp/--pp (the "
                      "simulated trainer builds the models by name)");
    dt_gpt_shape sh;
    const dt_gpt_shape *s = dtsim_gpt_shape(o, &sh);
    if (s->width % s->heads)
        return refuse("--hidden %d is not a multiple of the %d heads (--heads)", s->width,
                      s->heads);
    return 0;
}

int dtsim_3d_check(dtsim_opts *o, int batch) {
    if (o->seq_par && o->tp < 2 && !o->plan_row)
        return refuse("--sequence-parallel splits along the sequence what tensor parallelism "
                      "leaves whole on each of its ranks: give --tp 2 or more");
    if (!dtsim_is_3d(o)) {
        if (check_shape(o)) return 2;
        if (o->simgrid_3d)
            return refuse("--simgrid: for a layout of --tp/--pp (plain runs are SimGrid's "
                          "unless --analytic)");
        if (o->micro_batch > 1 || o->pp_kind != DT_PIPE_1F1B)
            return refuse("--micro-batch and --pp-schedule: for a pipeline or tensor "
                          "parallelism (--pp, --tp; or --recompute full, which one stage runs)");
        return 0;
    }
    dt_gpt_shape shape;
    const dt_gpt_shape *s = dtsim_gpt_shape(o, &shape);
    if (!s) {
        fprintf(stderr, "dtsim: --tp and --pp: for the gpt models (Megatron-LM's layouts of a "
                        "transformer); %s is trained data-parallel\n", o->model);
        return 2;
    }
    if (o->cpu || o->platform_file[0] || o->sweep || o->has_profile)
        return refuse("--tp and --pp: on a cluster dtsim describes, one run (not with --device "
                      "cpu, --platform, --profile or a sweep)");
    int t = o->tp, p = o->pp, gpn = o->cluster.gpus_per_node;
    if (o->gpus % (t * p))
        return refuse("--tp %d x --pp %d does not divide the %d GPUs (the data-parallel degree "
                      "is what remains)", t, p, o->gpus);
    if (t > gpn || gpn % t)
        return refuse("--tp %d: tensor-parallel ranks stay inside a node, as Megatron-LM lays "
                      "them out (a divisor of the %d GPUs per node)", t, gpn);
    if (s->heads % t)
        return refuse("--tp %d does not divide the model's %d attention heads", t, s->heads);
    int v = o->pp_kind == DT_PIPE_INTERLEAVED ? o->pp_chunks : 1;
    if (s->layers < p * v || (v > 1 && s->layers % (p * v)))  // (Megatron-LM's interleaving
        return refuse("--pp %d x %d chunks per stage: the model's %d blocks %s", p, v,  // divides)
                      s->layers, s->layers < p * v ? "are fewer than the chunks"
                                                   : "do not divide into them (interleaved)");
    int d = o->gpus / (t * p);
    if (batch && batch % d)
        return refuse("--batch %d does not divide over the %d data-parallel replicas (GPUs / "
                      "(tp x pp) = %d)", batch, d, d);
    int b = o->micro_batch;
    if (o->per_gpu_batch % b)
        return refuse("the %d sequences of a data-parallel replica do not split into "
                      "micro-batches of %d (--micro-batch)", o->per_gpu_batch, b);
    if (o->shard > 1)
        return refuse("--shard %d beside --tp/--pp: ZeRO stage 1 (Megatron-LM's distributed "
                      "optimizer) composes with them here; stages 2 and 3 do not", o->shard);
    if (o->accumulate > 1)
        return refuse("--accumulate %d beside --pp/--tp: the micro-batches are the pipeline's "
                      "(--micro-batch)", o->accumulate);
    dt_pipe_sched ps;
    dt_error err = {0};
    if (dt_pipe_build(&ps, (dt_pipe_kind)o->pp_kind, p, o->per_gpu_batch / b, v, &err)) {
        fprintf(stderr, "dtsim: --pp-schedule: %s\n", err.msg);
        return 2;
    }
    dt_pipe_free(&ps);
    if (o->simgrid_3d) {  // the trainer's pipeline (nn/train_pipe.c) under SMPI
        if (o->analytic)
            return refuse("--simgrid and --analytic: one of them");
        if (v > 1 || o->shard > 1)
            return refuse("--simgrid runs dtrain's pipeline: GPipe or 1F1B, ZeRO stage 0 or 1 "
                          "(not interleaved)");
        if (o->seq_par)
            return refuse("--simgrid and --sequence-parallel: the trainer does not split the "
                          "sequence yet (the cost model does: drop --simgrid)");
    } else if (!o->analytic) {
        char w[320];
        snprintf(w, sizeof w, "--tp/--pp: answered with --analytic (the cost model of "
                 "docs/parallelism.md); --simgrid runs the layout in SimGrid too");
        fprintf(stderr, "dtsim: warning: %s\n", w);
        dtsim_warn_json(o, w);
        o->analytic = 1;
    }
    return check_shape(o);
}

// One tensor-parallel rank's network of `blocks` blocks at one micro-batch, timed on the
// modelled GPU: forward (with the loss), backward and the optimizer's step, its trainable
// parameters and the bytes its activations keep (as sim/dtsim_gpt.c counts them); of these,
// the attention's core: its forward again (selective recomputation) and its scores' bytes
typedef struct {
    double f, b, opt, params, act, att_f, att_act;
} part_t;

static int time_part(const dtsim_opts *o, double scale, int blocks, part_t *out) {
    dt_error err = {0};
    dt_modeldev_config mc = {dt_gpu_find(o->cluster.gpu), o->prec, NULL, NULL, NULL, 0, 1, scale,
                             o->flash};
    dt_device *dev = dt_device_model_create(&mc, &err);
    if (!dev) return fprintf(stderr, "dtsim: %s\n", err.msg), 2;
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = o->micro_batch;
    dtsim_gpt_config(o, &cfg);
    cfg.tp = o->tp, cfg.blocks = blocks;
    dt_net *net = dt_model_create(o->model, dev, &cfg, &err);
    dt_optim_config oc = dt_optim_config_default(dt_sim_optim_kind(o->model, o->lars));
    dt_optim *opt = net ? dt_optim_create(net, &oc, &err) : NULL;
    if (!opt) {
        fprintf(stderr, "dtsim: %s\n", err.msg);
        if (net) dt_net_free(net);
        dev->destroy(dev);
        return 2;
    }
    float *x = callocCheck(1, sizeof(float));
    int32_t *y = callocCheck((size_t)cfg.batch, sizeof(int32_t));
    dt_net_set_batch(net, x, y);
    double t0 = dt_device_model_stats(dev).seconds;
    dt_net_forward(net, 1);
    dt_net_loss(net);
    double t1 = dt_device_model_stats(dev).seconds;
    dt_net_backward(net, 1.0f, NULL, NULL);
    double t2 = dt_device_model_stats(dev).seconds;
    dt_optim_step(opt, net, 0.1f);
    double t3 = dt_device_model_stats(dev).seconds;
    dt_net_acts_rerun_attention(net);  // (what selective recomputation runs again)
    double t4 = dt_device_model_stats(dev).seconds;
    *out = (part_t){t1 - t0, t2 - t1, t3 - t2, (double)net->n_trainable,
                    dtsim_net_activation_bytes(o, net), t4 - t3, dtsim_net_saved_bytes(o, net, 1)};
    free(x), free(y);
    dt_optim_free(opt);
    dt_net_free(net);
    dev->destroy(dev);
    return 0;
}

// A block (the difference of two blocks and one) and the model's ends (one block's net less
// the block): embedding, final layer norm, tied head and loss
static int block_and_ends(const dtsim_opts *o, double scale, part_t *blk, part_t *ends) {
    part_t one, two;
    int rc = time_part(o, scale, 1, &one);
    if (!rc) rc = time_part(o, scale, 2, &two);
    if (rc) return rc;
    *blk = (part_t){two.f - one.f, two.b - one.b, two.opt - one.opt, two.params - one.params,
                    two.act - one.act, two.att_f - one.att_f, two.att_act - one.att_act};
    *ends = (part_t){one.f - blk->f, one.b - blk->b, one.opt - blk->opt,
                     one.params - blk->params, one.act - blk->act, 0, 0};
    return 0;
}

// The layout's sizes
typedef struct {
    // the blocks of virtual stage k: L / (p v), the first L % (p v) one more (stages as
    // DeepSpeed's pipeline cuts a model that does not divide; Megatron-LM's always divide)
    int t, p, d, v, m, b, L, chunk_blocks, stage_blocks;  // the most in a chunk, a stage
    double esz;  // bytes of an activation element: 2 in mixed precision, else 4
} layout_t;

static layout_t layout_of(const dtsim_opts *o) {
    layout_t y;
    dt_gpt_shape shape;
    const dt_gpt_shape *s = dtsim_gpt_shape(o, &shape);
    y.t = o->tp, y.p = o->pp, y.d = o->gpus / (o->tp * o->pp);
    y.v = o->pp_kind == DT_PIPE_INTERLEAVED ? o->pp_chunks : 1;
    y.b = o->micro_batch, y.m = o->per_gpu_batch / o->micro_batch;
    y.L = s->layers, y.stage_blocks = (y.L + y.p - 1) / y.p;
    y.chunk_blocks = (y.L + y.p * y.v - 1) / (y.p * y.v);
    y.esz = o->prec == DT_PREC_FP16 ? 2.0 : 4.0;
    return y;
}

// Peak micro-batch chunks in flight on the first stage (whose activations are the most: 1F1B
// keeps p there) and on the last (which also holds the head's logits)
static void inflight(const dtsim_opts *o, const layout_t *y, int *first, int *last) {
    dt_pipe_sched ps;
    dt_error err = {0};
    dt_pipe_build(&ps, (dt_pipe_kind)o->pp_kind, y->p, y->m, y->v, &err);  // checked already
    dt_pipe_cost c = {1, 2, 0, 0};
    dt_pipe_price pr;
    int *in = callocCheck((size_t)y->p, sizeof(int));
    char why[256];
    dt_pipe_run(&ps, &c, 1, &pr, in, why, sizeof why);
    *first = in[0], *last = in[y->p - 1];
    free(in);
    dt_pipe_free(&ps);
}

int dtsim_3d_prepare(const dtsim_opts *o, dtsim_result *r) {
    part_t blk, ends;
    int rc = block_and_ends(o, 0, &blk, &ends);
    if (rc) return rc;
    layout_t y = layout_of(o);
    dt_gpt_shape shape;
    const dt_gpt_shape *s = dtsim_gpt_shape(o, &shape);
    int T = o->seq_len ? o->seq_len : s->context;
    int in0, inl;
    inflight(o, &y, &in0, &inl);
    // sequence parallelism (Korthikanti et al. 2022, Table 2: sbh(34/t + 5as/ht) against
    // tensor parallelism's sbh(10 + 24/t + 5as/ht)): what the t ranks keep is the whole
    // block's activations, and the ends', over t; a fully recomputed block's input too
    double sp = o->seq_par && y.t > 1 ? y.t : 1;
    if (sp > 1) {
        part_t blk1, ends1;
        dtsim_opts o1 = *o;
        o1.tp = 1;
        if ((rc = block_and_ends(&o1, 0, &blk1, &ends1))) return rc;
        blk.act = blk1.act / sp, blk.att_act = blk1.att_act / sp, ends.act = ends1.act / sp;
    }
    // activations: each chunk-micro-batch in flight keeps its blocks' (recomputed fully, each
    // block's input: b T C elements, plus the chunk being recomputed; selectively, all but
    // the attention's scores: Korthikanti et al. 2022 §5, eq. 2 without 5as/h, plus the one
    // block's scores being used); the last stage also the ends' (the head's logits over V/t)
    int full = o->recompute == 1, sel = o->recompute == 2;
    double keep = full ? (double)y.b * T * s->width * y.esz / sp
                       : blk.act - (sel ? blk.att_act : 0);
    double again = full ? y.chunk_blocks * blk.act : sel ? blk.att_act : 0;
    double a0 = in0 * y.chunk_blocks * keep + again;
    double al = inl * y.chunk_blocks * keep + again + ends.act;
    double act = y.p > 1 ? fmax(a0, al) : al;
    // parameters: a stage's blocks, the ends on the first stage (embedding) and the last
    // (Megatron-LM keeps a copy of the tied word embedding there); one stage: both
    double psi = y.stage_blocks * blk.params + ends.params;
    int moments = dt_zero_moments(dt_sim_optim_kind(o->model, o->lars));
    dt_zero_mem mm = dt_zero_memory(psi, o->shard, y.d, o->prec == DT_PREC_FP16, moments, act);
    r->has_mem = 1;
    r->mem_params = mm.params, r->mem_grads = mm.grads, r->mem_optim = mm.optim;
    r->mem_act = mm.activations, r->mem_total = mm.total, r->mem_gathered = 0;
    r->dp = y.d, r->micro_batches = y.m, r->stage_params = psi;
    const dt_gpu_profile *g = dt_gpu_find(o->cluster.gpu);
    if (o->no_memory_check || !g || mm.total <= g->mem_bytes) return 0;
    if (o->plan_row) return 2;  // dtsim plan's candidate: rejected there, with its memory
    fprintf(stderr, "dtsim: %s does not fit: one %s has %.0f GiB, and with --tp %d --pp %d "
            "(data-parallel %d, ZeRO stage %d) its busiest GPU keeps %.1f GiB (parameters %.1f + "
            "gradients %.1f + %s state %.1f + activations %.1f of %d micro-batches of %d in "
            "flight); more stages (--pp), more tensor parallelism (--tp), "
            "--sequence-parallel, --recompute full, --shard 1, or a smaller --micro-batch\n", o->model, g->name, g->mem_bytes / GIB,
            y.t, y.p, y.d, o->shard, mm.total / GIB, mm.params / GIB, mm.grads / GIB,
            dtsim_optim_label(o), mm.optim / GIB, mm.activations / GIB, in0 > inl ? in0 : inl,
            y.b);
    return 2;
}

// Seconds of one allreduce of `bytes` on n ranks with opts co (auto: the cheapest; NaN: a ring)
static double allreduce(const dt_coll_opts *co, int n, double bytes) {
    if (n < 2 || bytes <= 0) return 0;
    dt_algo a = co->algo == DT_ALGO_AUTO ? dt_coll_cheapest(co, n, bytes) : co->algo;
    double c = dt_coll_cost(a, co, n, bytes);
    if (!isfinite(c)) c = dt_coll_cost(DT_ALGO_RING, co, n, bytes);
    return isfinite(c) && c > 0 ? c : 0;
}

int dtsim_3d_analytic(const dtsim_opts *o, dtsim_result *r) {
    part_t blk, ends;
    int rc = block_and_ends(o, r->time_scale, &blk, &ends);
    if (rc) return rc;
    layout_t y = layout_of(o);
    dt_gpt_shape shape;
    const dt_gpt_shape *s = dtsim_gpt_shape(o, &shape);
    int T = o->seq_len ? o->seq_len : s->context, gpn = o->cluster.gpus_per_node;
    dt_coll_opts base = dtsim_coll_for(o, &o->cluster);
    // tensor parallelism: a ring of t GPUs on the node's links
    dt_coll_opts tp = base;
    tp.algo = DT_ALGO_RING, tp.group = y.t;
    double msg = (double)y.b * T * s->width * y.esz;  // a micro-batch's activations
    double ar = y.t > 1 ? allreduce(&tp, y.t, msg) : 0;
    double ce = y.t > 1 ? 3 * allreduce(&tp, y.t, (double)y.b * T * 4) : 0;  // vocab-parallel loss
    // a message between stages: over the network when stages are t d ranks apart across
    // nodes (1/t per tensor rank, every GPU of a node sending at once, then an allgather
    // inside it), else on the node's links
    double p2p = 0;
    if (y.p > 1) {
        if (y.t * y.d * y.p <= gpn)
            p2p = base.cost.alpha_intra + msg * base.cost.beta_intra;
        else
            p2p = base.cost.alpha + msg / y.t * base.cost.beta * gpn +
                  (y.t > 1 ? base.cost.alpha_intra + msg * (y.t - 1) / y.t * base.cost.beta_intra
                           : 0);
    }
    // the pipeline: virtual stage k runs nb blocks; the first adds the embedding's
    // allreduce, the last the ends (head and loss) and the head's input-gradient allreduce
    int V = y.p * y.v;
    dt_pipe_cost *c = callocCheck((size_t)V, sizeof *c);
    for (int k = 0; k < V; k++) {
        int nb = y.L / V + (k < y.L % V);
        double f = nb * (blk.f + 2 * ar), b = nb * (blk.b + 2 * ar);
        if (k == 0) f += ar;
        if (k == V - 1) f += ends.f + ce, b += ends.b + ar;
        double again = o->recompute == 1 ? nb * (blk.f + 2 * ar)  // full: the forward again
                       : o->recompute == 2 ? nb * blk.att_f : 0;   // selective: attention's
        c[k] = (dt_pipe_cost){f, b, p2p, again};
    }
    dt_pipe_sched ps;
    dt_error err = {0};
    dt_pipe_price pr;
    char why[256];
    rc = dt_pipe_build(&ps, (dt_pipe_kind)o->pp_kind, y.p, y.m, y.v, &err) ? 2 : 0;
    if (!rc && dt_pipe_run(&ps, c, V, &pr, NULL, why, sizeof why)) rc = 2;
    dt_pipe_free(&ps);
    free(c);
    if (rc) return fprintf(stderr, "dtsim: pipeline: %s\n", err.msg[0] ? err.msg : why), 2;
    // data parallelism: d ranks, g of them in a node (tensor ranks first), gpn / g groups
    // sharing the node's NICs at once after the flush
    double psi = y.stage_blocks * blk.params + ends.params;  // the first or last stage's
    dt_coll_opts dp = base;
    int g = gpn / y.t < y.d ? gpn / y.t : y.d;
    if (g < 1) g = 1;
    dp.group = g, dp.cost.share = g, dp.cost.beta *= (double)gpn / g;
    double wire = base.wire_f16 ? 2 : 4;
    double dp_s = allreduce(&dp, y.d, psi * wire);
    double opt = (y.stage_blocks * blk.opt + ends.opt) / (o->shard >= 1 ? y.d : 1);
    double tp_s = y.m * (y.stage_blocks * (4 + (o->recompute == 1 ? 2 : 0)) * ar + (2 * ar + ce));
    r->iter_s = pr.step_s + dp_s + opt;
    r->compute_s = pr.busy_s + opt;
    r->comm_s = tp_s + (y.p > 1 ? 2.0 * y.m * y.v * p2p : 0) + dp_s;
    r->exposed_s = r->iter_s - r->compute_s;
    r->model_comm_s = r->comm_s;
    r->pp_bubble = pr.bubble, r->pipeline_s = pr.step_s, r->tp_comm_s = tp_s, r->p2p_s = p2p;
    r->dp_comm_s = dp_s, r->opt_s = opt;
    r->buckets = 1;
    snprintf(r->algo, sizeof r->algo, "%s", dt_algo_name(base.algo == DT_ALGO_AUTO
        ? dt_coll_cheapest(&dp, y.d, psi * wire) : base.algo));
    r->iter_p50_s = r->iter_p95_s = r->iter_max_s = r->iter_s;
    r->global_batch = o->per_gpu_batch * y.d;
    r->per_gpu_batch = o->per_gpu_batch;
    r->gpus = o->gpus;
    r->images_s = r->global_batch / r->iter_s;
    r->efficiency = pr.busy_s / pr.step_s;
    r->epoch_s = o->dataset / r->images_s;
    r->train_s = r->epoch_s * o->epochs;
    r->gpu_hours = o->gpus * r->train_s / 3600;
    // Narayanan et al. 2021, appendix: a step's FLOPs 72 B s l h^2 (1 + s/6h + V/16lh), 96
    // with full recomputation (one more forward); selective adds the attention's core
    // forward, 4 B s^2 h a block (Korthikanti et al. 2022 §6): s/18h
    double h = s->width, V0 = o->vocab ? o->vocab : s->vocab;
    r->model_flops = (o->recompute == 1 ? 96.0 : 72.0) * r->global_batch * T * y.L * h * h *
                     (1 + T / (6 * h) + (o->recompute == 2 ? T / (18 * h) : 0) +
                      V0 / (16 * y.L * h));
    r->wall_s = 0;
    dtsim_band_set(o, r);
    return 0;
}
