// dtsim_plan_out.c — `dtsim plan`'s confirmation and output. The top K candidates are
// simulated with SimGrid, each in its own process (fork: the parent prepares, the child runs
// dtsim_simulate and the goodput exactly as `dtsim` with the row's flags does, and hands its
// result back through a pipe), -j at a time; then the ranked table, the CSV and the JSON.
// Not here: the search and the ranking (dtsim_plan.c).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomic_file.h"
#include "dtsim_plan.h"
#include "json.h"

// One GPU's memory: the ZeRO breakdown's total where dtsim computed it (gpt models, --shard),
// else the modelled GPU's buffers
static double mem_of(const plan_row *r) {
    return r->a.has_mem ? r->a.mem_total : r->a.device_bytes;
}

static double time_of(const dtsim_result *r) {
    return r->has_goodput ? r->wall_train_s : r->train_s;
}

typedef struct {
    const plan_opts *p;
    plan_row *rows;
    int k;
    dtsim_opts o;  // the run being started (prepared in the parent)
    double t0;
} confirm_ctx;

// Row i's run prepared here, before its process starts: 0, or 1 refused (its message
// printed, e.g. more GPUs than this machine's memory can simulate)
static int prepare(void *ctx, int i) {
    confirm_ctx *c = ctx;
    plan_row *row = &c->rows[i];
    char store[PLAN_MAX_ARGS][64], *argv[PLAN_MAX_ARGS];
    int argc = plan_argv(c->p, &row->c, 0, store, argv);
    if (dtsim_parse(argc, argv, &c->o)) return 1;
    c->o.no_memory_check |= c->p->par.gather[0] != 0;
    return dtsim_prepare(&c->o, &row->s) ? 1 : 0;
}

// In the child: the simulation and the goodput exactly as `dtsim` with the row's flags
static int simulate(void *ctx, int i, void *res) {
    confirm_ctx *c = ctx;
    dtsim_result *r = res;
    (void)i;
    int rc = c->o.coll.algo == DT_ALGO_AUTO ? dtsim_auto(&c->o, r) : dtsim_simulate(&c->o, r);
    return rc ? rc : dtsim_faults_run(&c->o, r);
}

static void started(void *ctx, int i) {
    const confirm_ctx *c = ctx;
    const plan_row *row = &c->rows[i];
    if (!c->p->quiet)
        fprintf(stderr, "[dtsim plan] confirming %d/%d with SimGrid: %d x %s, %s, batch %d/GPU "
                "(%.0f s so far)\n", i + 1, c->k, row->c.gpus, row->c.gpu, row->c.algo,
                row->c.pgb, dt_now_s() - c->t0);
}

static int done(void *ctx, int i, int rc, const void *res) {
    confirm_ctx *c = ctx;
    plan_row *row = &c->rows[i];
    (void)res;  // row->s, where dtsim_jobs_run put it
    row->confirmed = rc ? -1 : 1;
    if (!rc) {
        row->sim_time_s = time_of(&row->s);
        row->sim_cost = row->sim_time_s / 3600 * row->c.gpus * row->price;
    }
    if (!c->p->quiet && !c->p->par.gather[0]) {
        if (rc)
            fprintf(stderr, "[dtsim plan] %d/%d failed (exit %d; its message above)\n", i + 1,
                    c->k, rc);
        else
            fprintf(stderr, "[dtsim plan] %d/%d simulated: %.3f h, %+.1f %% from the analytic "
                    "model (%.0f s so far)\n", i + 1, c->k, row->sim_time_s / 3600,
                    100 * (row->sim_time_s / row->time_s - 1), dt_now_s() - c->t0);
    }
    return 0;  // a failed confirmation is a row marked failed, not the end of the plan
}

static void key(void *ctx, int i, char *buf, size_t n) {
    snprintf(buf, n, "%s", ((confirm_ctx *)ctx)->rows[i].flags);
}

int plan_confirm(const plan_opts *p, plan_row *rows, int k) {
    confirm_ctx c;
    memset(&c, 0, sizeof c);
    c.p = p, c.rows = rows, c.k = k, c.t0 = dt_now_s();
    dtsim_job_set set = {&c, "plan", prepare, simulate, started, done, key};
    // each row's result lands in its own s: rows[] strided by sizeof (plan_row)
    int rc = dtsim_jobs_run(&p->par, k, &set, &rows[0].s, sizeof rows[0].s, sizeof *rows);
    if (!p->quiet && k && !rc && !p->par.gather[0])
        fprintf(stderr, "[dtsim plan] %d confirmed in %.0f s\n", k, dt_now_s() - c.t0);
    return rc;
}

// A row's relative difference, simulated against analytic (NAN: not confirmed)
static double diff(const plan_row *r) {
    return r->confirmed > 0 ? r->sim_time_s / r->time_s - 1 : NAN;
}

// Counts of the rejected by the start of their reason
static void print_rejected(FILE *f, const plan_row *rows, int n, int n_all) {
    if (n_all == n) return;
    fprintf(f, "rejected: %d of %d candidates\n", n_all - n, n_all);
    int seen[64] = {0}, ns = 0;
    for (int i = n; i < n_all && ns < 64; i++) {
        int dup = 0;
        for (int j = 0; j < ns && !dup; j++) dup = !strncmp(rows[seen[j]].reason, rows[i].reason, 12);
        if (dup) continue;
        seen[ns++] = i;
        int count = 0;
        for (int j = n; j < n_all; j++) count += !strncmp(rows[j].reason, rows[i].reason, 12);
        fprintf(f, "  %4d like: %s\n        %s\n", count, rows[i].reason, rows[i].flags);
    }
}

void plan_print(FILE *f, const plan_opts *p, const plan_row *rows, int n, int n_all) {
    int meeting = 0, goodput = rows[0].a.has_goodput;
    for (int i = 0; i < n; i++) meeting += rows[i].meets;
    fprintf(f, "dtsim plan: %s, %d candidates searched with the analytic model: %d can train, "
               "%d meet", p->model, n_all, n, meeting);
    if (p->deadline_h > 0) fprintf(f, " the deadline of %g h", p->deadline_h);
    if (p->deadline_h > 0 && p->budget > 0) fprintf(f, " and");
    if (p->budget > 0) fprintf(f, " the budget of %.0f USD", p->budget);
    if (!(p->deadline_h > 0) && !(p->budget > 0)) fprintf(f, " (no deadline, no budget)");
    fprintf(f, "; ranked by %s\n", p->budget > 0 && !(p->deadline_h > 0) ? "time-to-train"
                                                                         : "cost-to-train");
    fprintf(f, "%3s %-5s %5s %4s %4s %-6s %-10s %5s %-4s", "#", "gpu", "GPUs", "/nod", "nics",
            "algo", "fusion", "b/GPU", "prec");
    if (p->n_topo) fprintf(f, " %-9s", "topology");
    if (p->n_frate) fprintf(f, " %9s", "fail/GPUh");
    if (p->n_ckint) fprintf(f, " %6s", "ckpt");
    if (p->n_shard) fprintf(f, " %-10s", "shard");
    fprintf(f, " %16s %18s %5s %9s%s %12s %7s\n", "time-to-train h", "cost USD", "eff",
            "mem/GPU", goodput ? " goodput" : "", "simulated h", "sim-an");
    int shown = n < p->top ? n : p->top;
    for (int i = 0; i < shown; i++) {
        const plan_row *r = &rows[i];
        char sim[32] = "-", d[16] = "-";
        if (r->confirmed > 0) {
            snprintf(sim, sizeof sim, "%.3f", r->sim_time_s / 3600);
            snprintf(d, sizeof d, "%+.1f%%", 100 * diff(r));
        } else if (r->confirmed < 0) {
            snprintf(sim, sizeof sim, "failed");
        }
        char gp[16] = "";
        if (goodput) snprintf(gp, sizeof gp, " %6.1f%%", 100 * r->a.goodput);
        fprintf(f, "%3d %-5s %5d %4d %4d %-6s %-10s %5d %-4s", i + 1, r->c.gpu, r->c.gpus,
                r->c.gpn, r->c.nics, r->c.algo, r->c.fusion, r->c.pgb, r->c.prec);
        if (p->n_topo) fprintf(f, " %-9s", r->c.topo);
        if (p->n_frate) fprintf(f, " %9s", r->c.frate);
        if (p->n_ckint) fprintf(f, " %6s", r->c.ckint);
        if (p->n_shard) fprintf(f, " %-10s", r->c.shard);
        char b[24];
        if (fabs(r->a.band_lo + r->a.band_hi) < 1e-12)
            snprintf(b, sizeof b, "±%4.1f%%", 100 * r->a.band_hi);
        else snprintf(b, sizeof b, "%+.0f/%+.0f%%", 100 * r->a.band_lo, 100 * r->a.band_hi);
        fprintf(f, " %8.3f %s %10.2f %s %4.0f%% %5.1f GiB%s %12s %7s%s\n",
                r->time_s / 3600, b, r->cost, b,
                100 * r->a.efficiency, mem_of(r) / 1073741824.0, gp, sim, d,
                r->meets ? "" : "  misses");
    }
    if (n > shown) fprintf(f, "... %d more (--top N, --csv, --json)\n", n - shown);
    fprintf(f, "time-to-train: %s; cost: the GPU-hours at each type's --price (a node-hour's "
               "--price-node over its GPUs); ± the error band "
               "(dtsim --help); eff: scaling efficiency against one GPU; mem/GPU: one modelled "
               "GPU's buffers for its batch (gpt models, --shard: its ZeRO memory); sim-an: "
               "SimGrid against the analytic model\n",
            goodput ? "with failures and checkpoints (goodput)" : "the analytic model's");
    // the answer: the best confirmed row by the simulation's own figures
    int best = -1;
    for (int i = 0; i < shown; i++) {
        const plan_row *r = &rows[i];
        int ok = r->confirmed > 0 && (!(p->deadline_h > 0) || r->sim_time_s <= 3600 * p->deadline_h)
                 && (!(p->budget > 0) || r->sim_cost <= p->budget);
        if (!ok) continue;
        double key = p->budget > 0 && !(p->deadline_h > 0) ? r->sim_time_s : r->sim_cost;
        double bk = best < 0 ? INFINITY : p->budget > 0 && !(p->deadline_h > 0)
                                              ? rows[best].sim_time_s : rows[best].sim_cost;
        if (key < bk) best = i;
    }
    if (best >= 0)
        fprintf(f, "answer: #%d, simulated %.3f h and %.2f USD: dtsim %s\n", best + 1,
                rows[best].sim_time_s / 3600, rows[best].sim_cost, rows[best].flags);
    else if (rows[0].confirmed)
        fprintf(f, "answer: none of the confirmed rows meets the targets in the simulation; "
                   "confirm more (--confirm K)\n");
    print_rejected(f, rows, n, n_all);
}

static void csv_rows(FILE *f, const plan_row *rows, int n_all) {
    fprintf(f, "rank,gpu,gpus,gpus_per_node,nics,algo,fusion,per_gpu_batch,precision,topology,"
               "fail_rate,ckpt_interval,price_gpu_hour,time_to_train_s,band,cost,efficiency,mem_bytes_per_gpu,goodput,"
               "meets,sim_time_to_train_s,sim_cost,reason,flags\n");
    for (int i = 0; i < n_all; i++) {
        const plan_row *r = &rows[i];
        int ok = !r->reason[0];
        fprintf(f, "%d,%s,%d,%d,%d,%s,%s,%d,%s,%s,%s,%s,%.17g,", ok ? i + 1 : 0, r->c.gpu,
                r->c.gpus, r->c.gpn, r->c.nics, r->c.algo, r->c.fusion, r->c.pgb, r->c.prec,
                r->c.topo, r->c.frate, r->c.ckint, r->price);
        if (ok)
            fprintf(f, "%.17g,%.17g,%.17g,%.17g,%.17g,", r->time_s, r->a.band, r->cost,
                    r->a.efficiency, mem_of(r));
        else
            fprintf(f, ",,,,,");
        if (ok && r->a.has_goodput) fprintf(f, "%.17g", r->a.goodput);
        fprintf(f, ",%d,", ok && r->meets);
        if (r->confirmed > 0) fprintf(f, "%.17g,%.17g", r->sim_time_s, r->sim_cost);
        else fprintf(f, ",");
        fprintf(f, ",\"%s\",\"%s\"\n", r->reason, r->flags);
    }
}

int plan_write_csv(const plan_opts *p, const plan_row *rows, int n, int n_all) {
    (void)n;
    if (p->csv_stdout) {
        csv_rows(stdout, rows, n_all);
        return fflush(stdout) ? -1 : 0;
    }
    dt_atomic_file a;
    dt_error err;
    if (dt_atomic_open(&a, p->csv, "--csv", &err))
        return fprintf(stderr, "dtsim plan: %s\n", err.msg), -1;
    csv_rows(a.f, rows, n_all);
    if (dt_atomic_finish(&a, &err) || dt_atomic_commit(&a, &err))
        return fprintf(stderr, "dtsim plan: --csv %s: %s\n", p->csv, err.msg), -1;
    return 0;
}

void plan_print_json(const plan_opts *p, const plan_row *rows, int n, int n_all) {
    dt_json_writer w;
    dt_json_writer_init(&w, stdout);
    dt_json_begin_object(&w, NULL);
    dt_json_write_string(&w, "model", p->model);
    if (p->deadline_h > 0) dt_json_write_real(&w, "deadline_h", p->deadline_h);
    if (p->budget > 0) dt_json_write_real(&w, "budget", p->budget);
    dt_json_write_string(&w, "rank_by", p->budget > 0 && !(p->deadline_h > 0) ? "time" : "cost");
    dt_json_write_int(&w, "candidates", n_all);
    dt_json_begin_array(&w, "ranked");
    for (int i = 0; i < n; i++) {
        const plan_row *r = &rows[i];
        dt_json_begin_object(&w, NULL);
        dt_json_write_int(&w, "rank", i + 1);
        dt_json_write_string(&w, "flags", r->flags);
        dt_json_write_string(&w, "gpu", r->c.gpu);
        dt_json_write_int(&w, "gpus", r->c.gpus);
        dt_json_write_int(&w, "gpus_per_node", r->c.gpn);
        dt_json_write_int(&w, "nics", r->c.nics);
        dt_json_write_string(&w, "algo", r->c.algo);
        dt_json_write_string(&w, "fusion", r->c.fusion);
        dt_json_write_int(&w, "per_gpu_batch", r->c.pgb);
        dt_json_write_string(&w, "precision", r->c.prec);
        if (r->c.topo[0]) dt_json_write_string(&w, "topology", r->c.topo);
        if (r->c.frate[0]) dt_json_write_real(&w, "fail_rate", strtod(r->c.frate, NULL));
        if (r->c.ckint[0]) dt_json_write_string(&w, "ckpt_interval", r->c.ckint);
        if (r->c.shard[0]) dt_json_write_string(&w, "shard", r->c.shard);
        dt_json_write_real(&w, "price_gpu_hour", r->price);
        dt_json_write_real(&w, "train_s", r->a.train_s);
        dt_json_write_real(&w, "time_to_train_s", r->time_s);
        dt_json_write_real(&w, "time_low_s", r->time_s * (1 + r->a.band_lo));
        dt_json_write_real(&w, "time_high_s", r->time_s * (1 + r->a.band_hi));
        dt_json_write_real(&w, "cost", r->cost);
        dt_json_write_real(&w, "cost_low", r->cost * (1 + r->a.band_lo));
        dt_json_write_real(&w, "cost_high", r->cost * (1 + r->a.band_hi));
        dt_json_write_real(&w, "efficiency", r->a.efficiency);
        dt_json_write_real(&w, "mem_bytes_per_gpu", mem_of(r));
        if (r->a.has_goodput) dt_json_write_real(&w, "goodput", r->a.goodput);
        dt_json_write_bool(&w, "meets", r->meets);
        dt_json_write_bool(&w, "confirmed", r->confirmed > 0);
        if (r->confirmed > 0) {
            dt_json_write_real(&w, "sim_train_s", r->s.train_s);
            dt_json_write_real(&w, "sim_time_to_train_s", r->sim_time_s);
            dt_json_write_real(&w, "sim_cost", r->sim_cost);
            dt_json_write_real(&w, "sim_vs_analytic", diff(r));
        }
        dt_json_end_object(&w);
    }
    dt_json_end_array(&w);
    dt_json_begin_array(&w, "rejected");
    for (int i = n; i < n_all; i++) {
        dt_json_begin_object(&w, NULL);
        dt_json_write_string(&w, "flags", rows[i].flags);
        dt_json_write_string(&w, "reason", rows[i].reason);
        dt_json_end_object(&w);
    }
    dt_json_end_array(&w);
    dt_json_end_object(&w);
    fflush(stdout);
}

static const plan_opts *g_sort_plan;  // qsort's comparator has no context argument

// Feasible before rejected; meeting the targets before not; then by cost (or by time
// under a budget alone); among those that miss, the nearest miss first; then the flags
static int by_rank(const void *x, const void *y) {
    const plan_row *a = x, *b = y;
    const plan_opts *p = g_sort_plan;
    int fa = !a->reason[0], fb = !b->reason[0];
    if (fa != fb) return fb - fa;
    if (!fa) return strcmp(a->flags, b->flags);
    if (a->meets != b->meets) return b->meets - a->meets;
    double ka, kb;
    if (!a->meets) {  // the relative miss of the worse-missed target
        double d = p->deadline_h > 0 ? 3600 * p->deadline_h : INFINITY;
        double u = p->budget > 0 ? p->budget : INFINITY;
        ka = fmax(a->time_s / d, a->cost / u), kb = fmax(b->time_s / d, b->cost / u);
    } else if (p->budget > 0 && !(p->deadline_h > 0)) {
        ka = a->time_s, kb = b->time_s;
    } else {
        ka = a->cost, kb = b->cost;
    }
    if (ka != kb) return ka < kb ? -1 : 1;
    return strcmp(a->flags, b->flags);
}

void plan_rank(const plan_opts *p, plan_row *rows, int n) {
    g_sort_plan = p;
    qsort(rows, (size_t)n, sizeof *rows, by_rank);
}
