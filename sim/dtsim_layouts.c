// dtsim_layouts.c — `dtsim plan` for a transformer on a given cluster, without prices: every
// feasible layout of tensor, pipeline and data parallelism (--tp x --pp x data-parallel), the
// micro-batch, the schedule (1F1B, interleaved), recomputation and ZeRO stage 1, each
// answered by the 3D cost model (sim/dtsim_3d.c) and ranked by time per step (the GPU count
// fixed, so also by cost); what does not fit is rejected with its memory. Calibrated once, as
// every candidate runs on the same GPU (Calculon and Megatron-LM's own search do the same:
// Isaev et al. 2023; Narayanan et al. 2021, §3.3's rules of thumb are what it checks).
// The first --confirm K (3) layouts that the trainer runs (GPipe or 1F1B, ZeRO stage 0 or 1,
// no sequence parallelism) are then simulated by SimGrid (dtsim --simgrid: the trainer's own
// pipeline and tensor parallelism on modelled GPUs), their step printed beside the model's.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtsim.h"
#include "pipe/pipe_sched.h"

#define GIB 1073741824.0

typedef struct {
    int tp, pp, dp, mb, kind, chunks, recompute, shard;
    double step_s, flops, mem;  // seconds per step, model FLOP/s per GPU, busiest GPU's bytes
    int fits;
    double sg_step_s;  // SimGrid's step (confirmed), 0 not simulated, -1 failed
} layout_row;

// GPT-3's batch in sequences of 2048 (Brown et al. 2020, Table 2.1: 0.5M to 3.2M tokens), the
// default global batch of a search over a GPT-3 shape; 512 for the others
static int default_batch(const char *model) {
    static const struct { const char *m; int b; } t[] = {
        {"gpt3-small", 256}, {"gpt3-medium", 256}, {"gpt3-large", 256}, {"gpt3-xl", 512},
        {"gpt3-2.7b", 512}, {"gpt3-6.7b", 1024}, {"gpt3-13b", 1024}, {"gpt3-175b", 1536}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(model, t[i].m)) return t[i].b;
    return 512;
}

static int cmp_rows(const void *a, const void *b) {
    const layout_row *x = a, *y = b;
    if (x->fits != y->fits) return y->fits - x->fits;
    if (x->step_s != y->step_s) return x->step_s < y->step_s ? -1 : 1;
    return x->mem < y->mem ? -1 : x->mem > y->mem;  // the same time: the less memory
}

static void describe(const layout_row *r, int sp, char *buf, size_t n) {
    char sched[24];
    if (r->kind == DT_PIPE_INTERLEAVED) snprintf(sched, sizeof sched, "interleaved:%d", r->chunks);
    else snprintf(sched, sizeof sched, "%s", dt_pipe_kind_name((dt_pipe_kind)r->kind));
    snprintf(buf, n, "--tp %d --pp %d --micro-batch %d --pp-schedule %s --recompute %s%s%s",
             r->tp, r->pp, r->mb, sched, dt_recompute_name(r->recompute),
             r->shard ? " --shard 1" : "", sp && r->tp > 1 ? " --sequence-parallel" : "");
}

// The options of row r: the search's base with the row's layout
static dtsim_opts row_opts(const dtsim_opts *base, const layout_row *r, int per, int batch) {
    dtsim_opts o = *base;
    o.tp = r->tp, o.pp = r->pp, o.micro_batch = r->mb, o.recompute = r->recompute;
    o.pp_kind = r->kind, o.pp_chunks = r->chunks, o.shard = r->shard;
    o.per_gpu_batch = per, o.global_batch = batch, o.plan_row = 1;
    return o;
}

// Whether the trainer runs the row's layout under SimGrid (sim/dtsim_3d.c's --simgrid check)
static int simgrid_runs(const dtsim_opts *base, const layout_row *r) {
    return r->kind != DT_PIPE_INTERLEAVED && r->shard <= 1 && !(base->seq_par && r->tp > 1);
}

// SimGrid's step for the first k rows the trainer runs (rows[0..feasible)): a fresh run of
// dtsim --simgrid each, as its flags would give it
static void confirm(const dtsim_opts *base, layout_row *rows, int feasible, int k, int batch) {
    int done = 0;
    for (int i = 0; i < feasible && done < k; i++) {
        layout_row *row = &rows[i];
        if (!simgrid_runs(base, row)) continue;
        dtsim_opts o = row_opts(base, row, batch / row->dp, batch);
        o.analytic = 0, o.simgrid_3d = 1, o.plan_row = 0, o.quiet = 1;
        char what[180];
        describe(row, base->seq_par, what, sizeof what);
        fprintf(stderr, "[dtsim plan] confirming %d/%d with SimGrid: #%d, %s\n", done + 1, k,
                i + 1, what);
        dtsim_result r;
        row->sg_step_s = dtsim_run_one(&o, &r) == 0 ? r.iter_s : -1;
        done++;
    }
}

static int usage_error(const char *msg) {
    fprintf(stderr, "dtsim plan: %s\n", msg);
    return 2;
}

int dtsim_layouts_main(int argc, char **argv) {
    int top = 10, batch = 0, json = 0, seq_par = 0, k_confirm = 3;
    char **av = calloc((size_t)argc + 2, sizeof *av);
    int ac = 0;
    av[ac++] = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long long v;
        if ((!strcmp(a, "--top") || !strcmp(a, "--batch")) && i + 1 < argc) {
            if (dt_parse_int(argv[i + 1], 1, 1 << 24, &v))
                return free(av), fprintf(stderr, "dtsim plan: option %s: '%s' is not a whole "
                                         "number from 1\n", a, argv[i + 1]), 2;
            *(!strcmp(a, "--top") ? &top : &batch) = (int)v;
            i++;
        } else if (!strcmp(a, "--confirm") && i + 1 < argc) {
            if (dt_parse_int(argv[i + 1], 0, 64, &v))
                return free(av), fprintf(stderr, "dtsim plan: option --confirm: '%s' is not a "
                                         "whole number from 0 to 64\n", argv[i + 1]), 2;
            k_confirm = (int)v;
            i++;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--sequence-parallel")) {  // for every layout with --tp > 1
            seq_par = 1;
        } else if (!strcmp(a, "--tp") || !strcmp(a, "--pp") || !strcmp(a, "--micro-batch") ||
                   !strcmp(a, "--pp-schedule") || !strcmp(a, "--recompute") ||
                   !strcmp(a, "--shard")) {
            free(av);
            fprintf(stderr, "dtsim plan: %s is what the search chooses (every feasible layout "
                            "is tried); give the cluster and the model\n", a);
            return 2;
        } else {
            av[ac++] = argv[i];
        }
    }
    av[ac++] = "--analytic";
    dtsim_opts base;
    int rc = dtsim_parse(ac, av, &base);
    free(av);
    if (rc) return rc == 1 ? 0 : rc;
    base.seq_par = seq_par;
    dt_gpt_shape sh;
    const dt_gpt_shape *s = dtsim_gpt_shape(&base, &sh);
    if (!s) return usage_error("without --price, plan searches a transformer's layouts: give a "
                               "gpt --model (or --price for a cluster search)");
    if (!batch) batch = default_batch(base.model);
    int G = base.gpus, gpn = base.cluster.gpus_per_node;
    // one calibration for all (the same GPU and model): a layout that always divides
    dtsim_opts c0 = base;
    c0.recompute = 1, c0.per_gpu_batch = 1, c0.global_batch = G;
    dtsim_result cal;
    memset(&cal, 0, sizeof cal);
    if ((rc = dtsim_3d_calibration(&c0, &cal))) return rc;
    int cap = 4096, n = 0;
    layout_row *rows = calloc((size_t)cap, sizeof *rows);
    for (int tp = 1; tp <= gpn; tp *= 2) {
        if (gpn % tp || s->heads % tp) continue;
        for (int pp = 1; pp <= s->layers; pp++) {
            if (s->layers % pp || G % (tp * pp) || batch % (G / (tp * pp))) continue;
            int dp = G / (tp * pp), per = batch / dp;
            for (int mb = 1; mb <= 8 && mb <= per; mb *= 2) {
                if (per % mb) continue;
                int m = per / mb;
                for (int k = 0; k < 2; k++) {  // 1f1b, then interleaved:2
                    if (k && (pp < 2 || m % pp || s->layers % (2 * pp))) continue;
                    for (int rec = 0; rec < 3; rec++)
                        for (int z = 0; z < 2 && n < cap; z++) {
                            if ((z && dp < 2) || (tp * pp == 1 && !rec)) continue;  // one
                            // stage at tp 1 is the 3D model's with recomputation only;
                            // selective keeps all but the scores, which flash keeps not
                            if (rec == 2 && base.flash) continue;
                            layout_row *row = &rows[n];
                            *row = (layout_row){tp, pp, dp, mb,
                                                k ? DT_PIPE_INTERLEAVED : DT_PIPE_1F1B,
                                                k ? 2 : 1, rec, z, 0, 0, 0, 0, 0};
                            dtsim_opts o = row_opts(&base, row, per, batch);
                            dtsim_result r;
                            memset(&r, 0, sizeof r);
                            r.time_scale = cal.time_scale;
                            int fits = dtsim_3d_prepare(&o, &r) == 0;
                            row->mem = r.mem_total;
                            if (fits && dtsim_3d_analytic(&o, &r) == 0) {
                                row->fits = 1, row->step_s = r.iter_s;
                                row->flops = r.model_flops / r.iter_s / r.gpus;
                            }
                            n++;
                        }
                }
            }
        }
    }
    qsort(rows, (size_t)n, sizeof *rows, cmp_rows);
    int feasible = 0;
    for (int i = 0; i < n; i++) feasible += rows[i].fits;
    if (!feasible) {
        fprintf(stderr, "dtsim plan: none of the %d layouts of %s on %d %s fits its memory (the "
                        "least needs %.1f GiB)\n", n, base.model, G, base.cluster.gpu,
                rows[0].mem / GIB);
        free(rows);
        return 2;
    }
    confirm(&base, rows, feasible, k_confirm, batch);
    const dt_gpu_profile *g = dt_gpu_find(base.cluster.gpu);
    int T = dtsim_seq_tokens(&base);
    if (json) {
        printf("[");
        for (int i = 0; i < feasible && i < top; i++) {
            const layout_row *r = &rows[i];
            printf("%s{\"rank\": %d, \"tp\": %d, \"pp\": %d, \"dp\": %d, \"micro_batch\": %d, "
                   "\"pp_schedule\": \"%s\", \"pp_chunks\": %d, \"recompute\": \"%s\", "
                   "\"shard\": %d, \"step_s\": %.17g, \"model_flops_per_gpu\": %.17g, "
                   "\"mem_total_bytes\": %.17g", i ? ", " : "", i + 1, r->tp, r->pp, r->dp,
                   r->mb, dt_pipe_kind_name((dt_pipe_kind)r->kind), r->chunks,
                   dt_recompute_name(r->recompute), r->shard, r->step_s, r->flops, r->mem);
            if (r->sg_step_s) printf(", \"simgrid_step_s\": %.17g", r->sg_step_s);
            printf("}");
        }
        printf("]\n");
        free(rows);
        return 0;
    }
    printf("dtsim plan: %s on %d %s (%d per node), global batch %d of %d tokens%s: %d layouts, "
           "%d fit the %s's %.0f GiB%s; ranked by time per step (the cost model, "
           "docs/parallelism.md)\n", base.model, G, base.cluster.gpu, gpn, batch, T,
           batch == default_batch(base.model) && strncmp(base.model, "gpt3", 4) == 0
               ? " (GPT-3's, Brown et al. 2020)" : "", n, feasible, base.cluster.gpu,
           g ? g->mem_bytes / GIB : 0,
           base.seq_par ? " (sequence parallelism wherever --tp > 1)" : "");
    printf("%4s %4s %4s %5s %4s %-14s %-9s %4s %10s %9s %8s\n", "rank", "tp", "pp", "dp", "mb",
           "schedule", "recompute", "zero", "step s", "TFLOP/s", "GiB");
    for (int i = 0; i < feasible && i < top; i++) {
        const layout_row *r = &rows[i];
        char sched[24];
        if (r->kind == DT_PIPE_INTERLEAVED) snprintf(sched, sizeof sched, "interleaved:%d", r->chunks);
        else snprintf(sched, sizeof sched, "%s", dt_pipe_kind_name((dt_pipe_kind)r->kind));
        printf("%4d %4d %4d %5d %4d %-14s %-9s %4d %10.3f %9.1f %8.1f\n", i + 1, r->tp, r->pp,
               r->dp, r->mb, sched, dt_recompute_name(r->recompute), r->shard, r->step_s,
               r->flops / 1e12, r->mem / GIB);
    }
    char best[180];
    describe(&rows[0], base.seq_par, best, sizeof best);
    printf("TFLOP/s: model FLOPs per GPU as Narayanan et al. 2021 count them (the "
           "recomputation's included where it is on)\n");
    printf("the first, as dtsim flags: %s --batch %d\n", best, batch);
    int shown = 0;
    for (int i = 0; i < feasible; i++) {
        const layout_row *r = &rows[i];
        if (!r->sg_step_s) continue;
        if (!shown++)
            printf("confirmed by SimGrid (the trainer's pipeline and tensor parallelism on "
                   "modelled GPUs, dtsim --simgrid; the first %d it runs: GPipe or 1F1B, ZeRO "
                   "0 or 1):\n", k_confirm);
        describe(r, base.seq_par, best, sizeof best);
        if (r->sg_step_s < 0)
            printf("  #%d %s: not simulated here (the reason is above: SimGrid's memory or "
                   "time on this machine)\n", i + 1, best);
        else printf("  #%d %s: SimGrid %.3f s a step, the cost model %.3f s (%+.1f %%)\n",
                    i + 1, best, r->sg_step_s, r->step_s, 100 * (r->step_s / r->sg_step_s - 1));
    }
    if (!shown)
        printf("not confirmed by SimGrid (--confirm %d%s): the ranking is the cost model's (its "
               "held-out error: bench/MEGATRON.md)\n", k_confirm, k_confirm ? ", and none of "
               "the layouts is one the trainer runs" : "");
    free(rows);
    return 0;
}
