// dtsim_plan.c — `dtsim plan`: which cluster should I buy (or rent) to train this model by
// the deadline, or as fast as the budget allows? Every combination of the candidate ranges
// (GPU types, counts, GPUs and NICs per node, algorithms, fusion, per-GPU batch, precision)
// is answered by `dtsim --analytic` — the same code as that command, on the same flags, so
// each row can be rerun by hand — and rejected with its reason where it cannot train (a
// modelled GPU's memory need beyond the GPU's memory, a global batch beyond the largest
// published to reach accuracy, not a whole number of nodes, a configuration dtsim refuses).
// The feasible ones are ranked by cost among those that meet the deadline (and budget), or
// by time-to-train under a budget alone; failures and checkpoints (--fail-rate ...) make the
// time-to-train the one with goodput (sim/goodput.h). The top --confirm K are simulated with
// SimGrid (dtsim_plan_out.c) beside the analytic figure.
// Not here: the confirmation and the output (dtsim_plan_out.c).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "dtsim_plan.h"
#include "opt_table.h"
#include "zero.h"

// A comma-separated list's place in plan_opts and what its items must be: integers in
// [lo, hi], or words of under `width` characters that ok() accepts
typedef struct {
    size_t list, count;  // offsets in plan_opts of the items and of their number
    int max, width;      // width 0: integers
    long lo, hi;
    int (*ok)(const char *);
    const char *(*want)(char *buf, size_t n);  // what a word must be (its message)
} plan_list;

// A list of integers, or of words checked by ok() (NULL: any): each option's own items,
// or a refusal naming the list (integers) or the item (words)
static int list(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err) {
    const plan_list *l = d->data;
    char buf[512], want[DT_ALGO_NAMES_MAX + 64];
    int n = 0, *count = (int *)((char *)v + l->count);
    if (l->width) l->want(want, sizeof want);
    else snprintf(want, sizeof want, "a list of at most %d integers in %ld..%ld", l->max, l->lo,
                  l->hi);
    snprintf(buf, sizeof buf, "%s", s);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","), n++) {
        long long x;
        if (!l->width) {
            if (n == l->max || dt_parse_int(t, l->lo, l->hi, &x))
                return dt_opt_bad(err, what, s, want);
            ((int *)((char *)v + l->list))[n] = (int)x;
        } else {
            if (n == l->max || strlen(t) >= (size_t)l->width || (l->ok && !l->ok(t)))
                return dt_opt_bad(err, what, t, want);
            snprintf((char *)v + l->list + (size_t)n * l->width, (size_t)l->width, "%s", t);
        }
    }
    if (!n) return dt_opt_bad(err, what, s, l->width ? want : "a comma-separated list");
    *count = n;
    return 0;
}

static int ok_gpu(const char *s) { return dt_gpu_find(s) != NULL; }
static int ok_prec(const char *s) {
    return !strcmp(s, "fp32") || !strcmp(s, "tf32") || !strcmp(s, "fp16");
}
static int ok_shard(const char *s) {
    int stage;
    return dt_zero_parse(s, &stage) == 0;
}
static int ok_algo(const char *s) {
    dt_algo a;
    dt_error err;
    return !dt_algo_parse(s, "--algos", &a, &err) && a != DT_ALGO_NCCL;
}
static int ok_topo(const char *s) {
    return !strcmp(s, "flat") || !strcmp(s, "fat-tree") || !strcmp(s, "torus") ||
           !strcmp(s, "dragonfly");
}
static int ok_fusion(const char *s) {
    dt_fusion_opts f;
    dt_error err;
    return !dt_fusion_parse(s, &f, &err);
}

// --price h100=6,a100=3.5 (data NULL) or --price-node h100=98,a100:4=40 (each given adds)
static int prices(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err) {
    plan_opts *p = v;
    int node = d->data != NULL;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        char *eq = strchr(t, '='), *colon = strchr(t, ':');
        long long gpn = 0;
        if (!eq || p->n_price == 8) return dt_opt_bad(err, what, s, d->want);
        *eq = 0;
        if (colon && node) {
            *colon = 0;
            if (dt_parse_int(colon + 1, 1, 1024, &gpn))
                return dt_opt_bad(err, what, colon + 1, "a count of GPUs per node (TYPE:GPUS=USD)");
        }
        if (!dt_gpu_find(t))
            return dt_fail(err, DT_EXIT_USAGE, "option %s: unknown GPU '%s' (valid: %s)", what, t,
                           dt_gpu_names());
        for (int i = 0; i < p->n_price; i++)
            if (!strcasecmp(p->price_gpu[i], t) && (p->price_node[i] != node ||
                                                     p->node_gpn[i] == gpn))
                return dt_fail(err, DT_EXIT_USAGE, "option %s: %s is priced twice (give a GPU "
                               "type one price: per GPU-hour with --price, or per node-hour with "
                               "--price-node)", what, t);
        if (dt_parse_real(eq + 1, 1e-6, 1e6, &p->price[p->n_price]))
            return dt_opt_bad(err, what, eq + 1, node ? "a price per node-hour > 0 in USD"
                                                      : "a price per GPU-hour > 0 in USD");
        p->price_node[p->n_price] = node, p->node_gpn[p->n_price] = (int)gpn;
        snprintf(p->price_gpu[p->n_price++], sizeof p->price_gpu[0], "%s", t);
    }
    return strspn(s, ",") < strlen(s) ? 0 : dt_opt_bad(err, what, s, d->want);
}

// The candidate's price per GPU-hour (a node's price over its GPUs), or 0 with the reason
static double price_of(const plan_opts *p, const plan_cand *c, char *why, size_t n) {
    int any = -1;
    for (int i = 0; i < p->n_price; i++) {
        if (strcasecmp(p->price_gpu[i], c->gpu)) continue;
        if (!p->price_node[i]) return p->price[i];
        if (p->node_gpn[i] == c->gpn) return p->price[i] / c->gpn;
        if (!p->node_gpn[i]) any = i;
    }
    if (any >= 0) return p->price[any] / c->gpn;
    if (why) snprintf(why, n, "no price for %s nodes of %d GPUs (--price-node %s:%d=USD)",
                      c->gpu, c->gpn, c->gpu, c->gpn);
    return 0;
}

// 1 when price i's GPU type was priced by an earlier entry
static int priced_before(const plan_opts *p, int i) {
    for (int k = 0; k < i; k++)
        if (!strcasecmp(p->price_gpu[k], p->price_gpu[i])) return 1;
    return 0;
}

// The number of candidates: the product of the lists' lengths
static double plan_points(const plan_opts *p) {
    return (double)p->n_gpu * p->n_gpus * p->n_gpn * p->n_nics * p->n_algo * p->n_fusion *
           p->n_pgb * p->n_prec * (p->n_topo ? p->n_topo : 1) * (p->n_frate ? p->n_frate : 1) *
           (p->n_ckint ? p->n_ckint : 1) * (p->n_shard ? p->n_shard : 1);
}

static int priced(const plan_opts *p, const char *gpu) {
    for (int i = 0; i < p->n_price; i++)
        if (!strcasecmp(p->price_gpu[i], gpu)) return 1;
    return 0;
}

// --fail-rate and --ckpt-interval as lists: each value checked by dtsim's row of the option
// (sim/dtsim_faults.c); each given adds
static int fault_list(const dt_opt *d, const char *what, const char *s, void *v,
                      dt_error *err) {
    plan_opts *p = v;
    int ck = !strcmp(d->name, "ckpt-interval"), *n = ck ? &p->n_ckint : &p->n_frate;
    char(*out)[24] = ck ? p->ckint_l : p->frate_l;
    char buf[512];
    dt_opt_table ft = dtsim_fault_table(NULL, NULL, NULL);
    dtsim_opts *scratch = calloc(1, sizeof *scratch);
    DT_ASSERT(scratch);
    int rc = 0;
    snprintf(buf, sizeof buf, "%s", s);
    for (char *t = strtok(buf, ","); t && !rc; t = strtok(NULL, ",")) {
        if (*n == PLAN_MAX_LIST || strlen(t) >= 24)
            rc = dt_opt_bad(err, what, s, "a list of at most 32 values");
        else if (!(rc = dt_opt_set(&ft.opts[dt_opt_find(&ft, d->name)], what, t, scratch, err)))
            snprintf(out[(*n)++], 24, "%s", t);
    }
    free(scratch);
    return rc ? rc : *n ? 0 : dt_opt_bad(err, what, s, "a comma-separated list");
}

static int no_straggler(const dt_opt *d, const char *what, const char *s, void *v,
                        dt_error *err) {
    (void)d, (void)s, (void)v;
    return dt_fail(err, DT_EXIT_USAGE, "%s is simulated, not searched: try the plan's answer "
                   "with `dtsim --straggler ...`", what);
}

static const char *want_gpu(char *b, size_t n) {
    return snprintf(b, n, "a list of GPU types (%s)", dt_gpu_names()), b;
}
static const char *want_algo(char *b, size_t n) {
    return snprintf(b, n, "a list of simulated algorithms (%s)", DT_ALGO_VALID), b;
}
static const char *want_fusion(char *b, size_t n) {
    return snprintf(b, n, "a list of fusion specs (" DT_FUSION_VALID ")"), b;
}
static const char *want_prec(char *b, size_t n) {
    return snprintf(b, n, "a list of fp32, tf32, fp16"), b;
}
static const char *want_topo(char *b, size_t n) {
    return snprintf(b, n, "a list of flat, fat-tree, torus, dragonfly"), b;
}
static const char *want_shard(char *b, size_t n) {
    return snprintf(b, n, "a list of ZeRO stages (0-3, or none, optimizer, gradients, "
                    "parameters)"), b;
}

#define AT(member) DT_OPT_AT(plan_opts, member)
#define LIST(field, max, lo, hi) \
    &(plan_list){offsetof(plan_opts, field##_n), offsetof(plan_opts, n_##field), max, 0, lo, hi, \
                 NULL, NULL}
#define WORDS(field, max, ok, want)                                                          \
    &(plan_list){offsetof(plan_opts, field##_l), offsetof(plan_opts, n_##field), max,        \
                 (int)sizeof(((plan_opts *)0)->field##_l[0]), 0, 0, ok, want}
// A list's row: the whole plan_opts is its field (the list and its count)
#define LIST_ROW(nm, a, d, h) \
    {.name = nm, .arg = a, .type = DT_OPT_CUSTOM, .size = sizeof(plan_opts), .parse = list, \
     .data = d, .help = h}

static const dt_opt plan_head[] = {
    {.type = DT_OPT_SECTION, .help =
        "usage: dtsim plan --price TYPE=USD,... [--deadline HOURS] [--budget USD] [options]\n"
        "  Searches every combination below with the analytic model (dtsim --analytic),\n"
        "  rejects those that cannot train (with the reason), ranks the rest by cost among\n"
        "  those meeting the deadline and budget (by time-to-train under a budget alone),\n"
        "  and confirms the top K with the SimGrid simulation.\n"
        "       dtsim plan --model GPT [--batch B] [--top N] [--confirm K] [--json]\n"
        "                  [--sequence-parallel] [dtsim's cluster options]\n"
        "  Without prices, a transformer's layouts on that cluster: every feasible\n"
        "  tensor x pipeline x data-parallel degree, micro-batch, schedule, recomputation\n"
        "  and ZeRO stage 1, ranked by time per step (docs/parallelism.md); the first K (3)\n"
        "  that the trainer runs are simulated by SimGrid (dtsim --simgrid)."},
    {.name = "price", .arg = "LIST", .type = DT_OPT_CUSTOM, .size = sizeof(plan_opts),
     .parse = prices, .want = "TYPE=USD,... (at most 8 types)",
     .help = "USD per GPU-hour per GPU type, e.g. h100=6,a100=3.5,v100=2"},
    {.name = "price-node", .arg = "LIST", .type = DT_OPT_CUSTOM, .size = sizeof(plan_opts),
     .parse = prices, .data = "node", .want = "TYPE=USD or TYPE:GPUS_PER_NODE=USD,... (at most 8)",
     .help = "or USD per node-hour: h100=98 (a node of any size), or\nh100:8=98,h100:4=52 "
     "(nodes of that many GPUs; others rejected)"},
    {.name = "deadline", .arg = "HOURS", .type = DT_OPT_REAL, AT(deadline_h), .lo = 1e-6,
     .hi = 1e7, .want = "hours > 0", .help = "time-to-train to meet"},
    {.name = "budget", .arg = "USD", .type = DT_OPT_REAL, AT(budget), .lo = 1e-6, .hi = 1e15,
     .want = "USD > 0", .help = "cost-to-train to meet"},
};

static const dt_opt plan_ranges[] = {
    {.type = DT_OPT_SECTION, .help = "candidate ranges (comma-separated lists):"},
    LIST_ROW("gpu", "LIST", WORDS(gpu, 8, ok_gpu, want_gpu),
             "GPU types (default: the priced ones)"),
    LIST_ROW("gpus", "LIST", LIST(gpus, PLAN_MAX_LIST, 1, 1 << 20),
             "GPU counts (8,16,32,64,128,256,512,1024)"),
    LIST_ROW("gpus-per-node", "LIST", LIST(gpn, PLAN_MAX_LIST, 1, 1024), "(8)"),
    LIST_ROW("nics", "LIST", LIST(nics, 8, 1, 64), "NICs per node (1)"),
    LIST_ROW("algos", "LIST", WORDS(algo, 8, ok_algo, want_algo), "(ring,rhd,hier,dbtree)"),
    LIST_ROW("fusion", "LIST", WORDS(fusion, 8, ok_fusion, want_fusion), "(segments:2)"),
    LIST_ROW("per-gpu-batch", "LIST", LIST(pgb, PLAN_MAX_LIST, 1, 1 << 20), "(32,64,128)"),
    LIST_ROW("precision", "LIST", WORDS(prec, 4, ok_prec, want_prec),
             "(fp16: mixed precision)"),
    LIST_ROW("topology", "LIST", WORDS(topo, 4, ok_topo, want_topo),
             "flat, fat-tree, torus, dragonfly (dtsim's: fat-tree)"),
    {.name = "fail-rate", .arg = "LIST", .type = DT_OPT_CUSTOM, .size = sizeof(plan_opts),
     .parse = fault_list, .help = "failures per GPU-hour, e.g. 1e-5,2e-5 (time-to-train with "
     "goodput)"},
    {.name = "ckpt-interval", .arg = "LIST", .type = DT_OPT_CUSTOM, .size = sizeof(plan_opts),
     .parse = fault_list, .help = "minutes between checkpoints, or auto, e.g. 30,60,auto"},
    LIST_ROW("shard", "LIST", WORDS(shard, 4, ok_shard, want_shard),
             "ZeRO stages, e.g. 0,1,3 (gpt models: memory per GPU decides)"),
    {.type = DT_OPT_SECTION, .help = "failures, the same for every candidate (dtsim's):"},
};

static const dt_opt plan_out[] = {
    {.name = "straggler", .arg = "SPEC", .type = DT_OPT_CUSTOM, .parse = no_straggler},
    {.type = DT_OPT_SECTION, .help = "the offers a buyer holds, instead of a search:"},
    {.name = "offer", .arg = "NAME=FLAGS", .type = DT_OPT_CUSTOM, .parse = dtsim_offer_shape,
     .want = "NAME=FLAGS: a name (under 32 characters), then dtsim's options for that offer",
     .help = "one offer, as dtsim's flags (give it again for each offer):\ne.g. "
     "h100=\"--gpu h100 --gpus 1024 --price-gpu-hour 6\"; the flags\noutside --offer go to "
     "every offer. Each is answered by dtsim\n(--analytic), with its time-to-train and cost, "
     "their held-out\nbands, and whether two offers are tied within them"},
    {.name = "simulate", .type = DT_OPT_SWITCH, AT(simulate),
     .help = "--offer: answer each offer with SimGrid, not --analytic"},
    {.type = DT_OPT_SECTION, .help = "output:"},
    {.name = "confirm", .arg = "K", .type = DT_OPT_INT, AT(confirm), .lo = 0, .hi = 64,
     .want = "0..64", .help = "simulate the top K with SimGrid (3; 0: none)"},
    {.name = "top", .arg = "N", .type = DT_OPT_INT, AT(top), .lo = 1, .hi = 100000,
     .want = "a positive count", .help = "rows in the table (10)"},
    {.name = "plot", .arg = "FILE.png", .type = DT_OPT_STRING, AT(plot),
     .help = "the top rows' time and cost with their bands, the SimGrid\nconfirmations, the "
     "deadline and the budget"},
};

#define ROWS(a) ((int)(sizeof(a) / sizeof *(a)))
// dtsim's rows that `dtsim plan` takes as they are (sim/dtsim_opts.c, sim/dtsim_faults.c)
#define PLAN_DTSIM_ROWS "model,dataset-size,epochs"
#define PLAN_OUT_ROWS "csv,json,quiet"
#define PLAN_FAULT_ROWS "mtbf,job-mtbf,node-fail-rate,ckpt-async,storage-bw,fs-bw,restart"
#define PLAN_TABLES DTSIM_PLAN_TABLES

// The tables in --help's order: p's own rows, dtsim's into scratch, the job rows into p->par
static void tables(plan_opts *p, dtsim_opts *scratch, unsigned char *fgiven,
                   const char **ftyped, dt_opt_table *t) {
    t[0] = (dt_opt_table){.opts = plan_head, .n = ROWS(plan_head), .base = p};
    t[1] = dtsim_opts_table(scratch, PLAN_DTSIM_ROWS);
    t[2] = (dt_opt_table){.opts = plan_ranges, .n = ROWS(plan_ranges), .base = p};
    t[3] = dtsim_fault_table(scratch, fgiven, ftyped);
    t[3].only = PLAN_FAULT_ROWS;
    t[4] = (dt_opt_table){.opts = plan_out, .n = ROWS(plan_out), .base = p};
    t[5] = dtsim_opts_table(scratch, PLAN_OUT_ROWS);
    t[6] = dtsim_jobs_table(p ? &p->par : NULL, NULL);
}

int dtsim_plan_tables(dt_opt_table *t) {
    tables(NULL, NULL, NULL, NULL, t);
    return PLAN_TABLES;
}

static void usage(FILE *f) {
    dt_opt_table t[PLAN_TABLES];
    for (int i = 0, n = dtsim_plan_tables(t); i < n; i++) dt_opts_usage(f, &t[i]);
}

// The lists' defaults, read by their rows as if typed
static const char *const list_defaults[][2] = {
    {"gpus", "8,16,32,64,128,256,512,1024"}, {"gpus-per-node", "8"}, {"nics", "1"},
    {"per-gpu-batch", "32,64,128"}, {"algos", "ring,rhd,hier,dbtree"},
    {"fusion", "segments:2"}, {"precision", "fp16"}};

static int parse(int argc, char **argv, plan_opts *p) {
    memset(p, 0, sizeof *p);
    p->confirm = 3, p->top = 10, p->par.jobs = 1;
    dtsim_opts scratch;  // dtsim's rows read as dtsim reads them, then copied into p
    memset(&scratch, 0, sizeof scratch);
    scratch.restart_s = -1;
    snprintf(scratch.model, sizeof scratch.model, "resnet50");
    unsigned char fgiven[DTSIM_FAULT_ROWS] = {0};
    const char *ftyped[DTSIM_FAULT_ROWS] = {0};
    dt_opt_table t[PLAN_TABLES];
    tables(p, &scratch, fgiven, ftyped, t);
    for (size_t i = 0; i < sizeof list_defaults / sizeof *list_defaults; i++) {
        dt_error err;
        DT_ASSERT(!dt_opt_set(&plan_ranges[dt_opt_find(&t[2], list_defaults[i][0])], "default",
                              list_defaults[i][1], p, &err));
    }
    int rc = dt_opts_parse(argc, argv, t, PLAN_TABLES, "dtsim plan", 0);
    if (rc == 1) usage(stdout);
    if (rc) return rc;
    snprintf(p->model, sizeof p->model, "%s", scratch.model);
    p->dataset = scratch.dataset, p->epochs = scratch.epochs;
    snprintf(p->csv, sizeof p->csv, "%s", scratch.csv);
    p->csv_stdout = !strcmp(p->csv, "-"), p->json = scratch.json, p->quiet = scratch.quiet;
    // the failure options for every candidate as typed, in the order typed
    for (int k = 1; k < 256; k++)
        for (int i = 0; i < DTSIM_FAULT_ROWS; i++)
            if (fgiven[i] == k) {
                snprintf(p->fault_args[p->n_fault][0], 64, "--%s", t[3].opts[i].name);
                snprintf(p->fault_args[p->n_fault++][1], 64, "%s", ftyped[i] ? ftyped[i] : "");
            }
    // the lists' last values stand for them in the checks between failure options
    dt_opt_table ft = dtsim_fault_table(&scratch, NULL, NULL);
    dt_error err;
    if (p->n_frate)
        dt_opt_set(&ft.opts[dt_opt_find(&ft, "fail-rate")], "", p->frate_l[p->n_frate - 1],
                   &scratch, &err);
    if (p->n_ckint)
        dt_opt_set(&ft.opts[dt_opt_find(&ft, "ckpt-interval")], "", p->ckint_l[p->n_ckint - 1],
                   &scratch, &err);
    if (dtsim_faults_check(&scratch) || dtsim_jobs_check(&p->par, "dtsim plan")) return 2;
    if (!p->n_price) {
        fprintf(stderr, "dtsim plan: --price TYPE=USD,... or --price-node TYPE=USD,... is "
                        "needed (the cost of a GPU-hour, or of a node-hour, of each GPU type to "
                        "consider, e.g. --price h100=6,a100=3.5)\n");
        return 2;
    }
    if (p->n_gpu) {
        for (int i = 0; i < p->n_gpu; i++)
            if (!priced(p, p->gpu_l[i])) {
                fprintf(stderr, "dtsim plan: --gpu %s has no price: add %s=USD to --price\n",
                        p->gpu_l[i], p->gpu_l[i]);
                return 2;
            }
    } else {
        for (int i = 0; i < p->n_price; i++)  // each priced type once
            if (!p->n_gpu || !priced_before(p, i))
                snprintf(p->gpu_l[p->n_gpu++], 16, "%s", p->price_gpu[i]);
    }
    double points = plan_points(p);
    if (points > PLAN_MAX_POINTS) {
        fprintf(stderr, "dtsim plan: the search space has %.0f candidates, more than %d: "
                        "narrow the lists (%d GPU types x %d counts x %d GPUs per node x %d NIC "
                        "counts x %d algorithms x %d fusions x %d batches x %d precisions x %d "
                        "topologies x %d failure rates x %d checkpoint intervals)\n", points,
                PLAN_MAX_POINTS, p->n_gpu, p->n_gpus, p->n_gpn, p->n_nics, p->n_algo,
                p->n_fusion, p->n_pgb, p->n_prec, p->n_topo ? p->n_topo : 1,
                p->n_frate ? p->n_frate : 1, p->n_ckint ? p->n_ckint : 1);
        return 2;
    }
    if (p->json && p->csv_stdout) {
        fprintf(stderr, "dtsim plan: --json and --csv - both print on stdout: give --csv a file\n");
        return 2;
    }
    const char *outs[2][2] = {{p->csv_stdout ? "" : p->csv, "--csv"}, {p->plot, "--plot"}};
    for (int i = 0; i < 2; i++) {  // creatable before the search, not after
        dt_atomic_file a;
        dt_error err;
        if (!outs[i][0][0]) continue;
        if (dt_atomic_open(&a, outs[i][0], outs[i][1], &err))
            return fprintf(stderr, "dtsim plan: %s\n", err.msg), 2;
        dt_atomic_abort(&a);
    }
    return 0;
}

int plan_argv(const plan_opts *p, const plan_cand *c, int analytic, char store[][64],
              char **argv) {
    int n = 0;
#define ARG(...) (snprintf(store[n], 64, __VA_ARGS__), argv[n] = store[n], n++)
    ARG("dtsim");
    ARG("--model"), ARG("%s", p->model);
    ARG("--gpu"), ARG("%s", c->gpu);
    ARG("--gpus"), ARG("%d", c->gpus);
    ARG("--gpus-per-node"), ARG("%d", c->gpn);
    ARG("--nics"), ARG("%d", c->nics);
    ARG("--algo"), ARG("%s", c->algo);
    ARG("--fusion"), ARG("%s", c->fusion);
    ARG("--per-gpu-batch"), ARG("%d", c->pgb);
    ARG("--precision"), ARG("%s", c->prec);
    if (p->dataset > 0) ARG("--dataset-size"), ARG("%.17g", p->dataset);
    if (p->epochs > 0) ARG("--epochs"), ARG("%.17g", p->epochs);
    if (c->topo[0]) ARG("--topology"), ARG("%s", c->topo);
    if (c->shard[0]) ARG("--shard"), ARG("%s", c->shard);
    double price = price_of(p, c, NULL, 0);
    if (price > 0) ARG("--price-gpu-hour"), ARG("%.17g", price);
    if (c->frate[0]) ARG("--fail-rate"), ARG("%s", c->frate);
    if (c->ckint[0]) ARG("--ckpt-interval"), ARG("%s", c->ckint);
    for (int i = 0; i < p->n_fault; i++) {
        ARG("%s", p->fault_args[i][0]);
        if (p->fault_args[i][1][0]) ARG("%s", p->fault_args[i][1]);
    }
    if (analytic) ARG("--analytic"), ARG("--no-memory-check");
    ARG("--quiet");
#undef ARG
    argv[n] = NULL;
    DT_ASSERT(n < PLAN_MAX_ARGS);
    return n;
}

// The analytic answer of row's candidate, or the reason it cannot train
static void evaluate(const plan_opts *p, plan_row *row) {
    const plan_cand *c = &row->c;
    char store[PLAN_MAX_ARGS][64], *argv[PLAN_MAX_ARGS];
    int argc = plan_argv(p, c, 0, store, argv);
    size_t at = 0;  // the flags a user reruns it with: dtsim's, less --quiet
    for (int i = 1; i < argc - 1; i++)
        at += (size_t)snprintf(row->flags + at, sizeof row->flags - at, "%s%s", i > 1 ? " " : "",
                               argv[i]);
    argc = plan_argv(p, c, 1, store, argv);
    row->price = price_of(p, c, row->reason, sizeof row->reason);
    if (!(row->price > 0)) return;  // the reason: no price for its node size
    const dt_gpu_profile *g = dt_gpu_find(c->gpu);
    if (c->gpus % c->gpn) {
        snprintf(row->reason, sizeof row->reason, "not a whole number of nodes (%d GPUs, %d per "
                 "node)", c->gpus, c->gpn);
        return;
    }
    dtsim_opts o;
    memset(&o, 0, sizeof o);
    snprintf(o.model, sizeof o.model, "%s", p->model);
    o.lars = 1;  // dtsim's default optimizer
    if (dtsim_batch_beyond(&o, (long long)c->gpus * c->pgb)) {
        snprintf(row->reason, sizeof row->reason, "global batch %lld beyond the largest "
                 "published to reach accuracy (LARS: 64K)", (long long)c->gpus * c->pgb);
        return;
    }
    fflush(stderr);
    int rc = dtsim_parse(argc, argv, &o);
    o.plan_row = 1;
    if (rc || dtsim_prepare(&o, &row->a)) {
        snprintf(row->reason, sizeof row->reason, "refused by dtsim (its message above)");
        return;
    }
    double need = row->a.has_mem ? row->a.mem_total : row->a.device_bytes;  // ZeRO's, or all
    if (g && need > g->mem_bytes) {
        snprintf(row->reason, sizeof row->reason, "needs %.1f GiB per GPU, the %s has %.0f",
                 need / 1073741824.0, c->gpu, g->mem_bytes / 1073741824.0);
        return;
    }
    if (dtsim_simulate(&o, &row->a) || dtsim_faults_run(&o, &row->a)) {
        snprintf(row->reason, sizeof row->reason, "refused by dtsim (its message above)");
        return;
    }
    row->time_s = row->a.has_goodput ? row->a.wall_train_s : row->a.train_s;
    row->cost = row->time_s / 3600 * c->gpus * row->price;
    row->meets = (!(p->deadline_h > 0) || row->time_s <= 3600 * p->deadline_h) &&
                 (!(p->budget > 0) || row->cost <= p->budget);
}

// The next digit of *r in base len (and *r without it)
static int digit(int *r, int len) {
    int v = *r % len;
    *r /= len;
    return v;
}

int dtsim_plan_main(int argc, char **argv) {
    int offers = 0, help = 0;  // the offers a buyer holds, not a search
    for (int i = 1; i < argc; i++) {
        offers |= !strcmp(argv[i], "--offer");
        help |= !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
    }
    if (offers && !help) return dtsim_offers_main(argc, argv);
    int priced = 0, gpt = 0;  // no prices, a transformer: its layouts on the cluster given
    for (int i = 1; i < argc; i++) {
        priced |= !strcmp(argv[i], "--price") || !strcmp(argv[i], "--price-node");
        gpt |= i + 1 < argc && !strcmp(argv[i], "--model") && !strncmp(argv[i + 1], "gpt", 3);
    }
    if (!priced && gpt && !help) return dtsim_layouts_main(argc, argv);
    plan_opts p;
    int rc = parse(argc, argv, &p);
    if (rc) return rc == 1 ? 0 : rc;
    int n = (int)plan_points(&p);
    plan_row *rows = calloc((size_t)n, sizeof *rows);
    if (!rows) return fprintf(stderr, "dtsim plan: out of memory\n"), 1;
    for (int i = 0; i < n; i++) {  // candidate i: its index in each list, the last fastest
        plan_cand *x = &rows[i].c;
        int r = i, nt = p.n_topo ? p.n_topo : 1, nf = p.n_frate ? p.n_frate : 1;
        int nk = p.n_ckint ? p.n_ckint : 1, ns = p.n_shard ? p.n_shard : 1;
        int z = digit(&r, ns), k = digit(&r, p.n_fusion), h = digit(&r, p.n_algo), ck = digit(&r, nk);
        int fr = digit(&r, nf), to = digit(&r, nt), f = digit(&r, p.n_gpus);
        int e = digit(&r, p.n_nics), d = digit(&r, p.n_gpn), c = digit(&r, p.n_pgb);
        int b = digit(&r, p.n_prec), a = digit(&r, p.n_gpu);
        snprintf(x->gpu, sizeof x->gpu, "%s", p.gpu_l[a]);
        snprintf(x->prec, sizeof x->prec, "%s", p.prec_l[b]);
        x->pgb = p.pgb_n[c], x->gpn = p.gpn_n[d], x->nics = p.nics_n[e], x->gpus = p.gpus_n[f];
        snprintf(x->algo, sizeof x->algo, "%s", p.algo_l[h]);
        snprintf(x->fusion, sizeof x->fusion, "%s", p.fusion_l[k]);
        if (p.n_topo) snprintf(x->topo, sizeof x->topo, "%s", p.topo_l[to]);
        if (p.n_frate) snprintf(x->frate, sizeof x->frate, "%s", p.frate_l[fr]);
        if (p.n_ckint) snprintf(x->ckint, sizeof x->ckint, "%s", p.ckint_l[ck]);
        if (p.n_shard) snprintf(x->shard, sizeof x->shard, "%s", p.shard_l[z]);
        evaluate(&p, &rows[i]);
    }
    int i;
    plan_rank(&p, rows, n);
    int feasible = 0, meeting = 0;
    for (i = 0; i < n; i++) feasible += !rows[i].reason[0], meeting += rows[i].meets;
    if (!feasible) {
        fprintf(stderr, "dtsim plan: none of the %d candidates can train; the first one's "
                        "reason: %s (%s)\n", n, rows[0].reason, rows[0].flags);
        free(rows);
        return 2;
    }
    if (!meeting && (p.deadline_h > 0 || p.budget > 0)) {
        fprintf(stderr, "dtsim plan: none of the %d feasible candidates meets %s; the nearest:\n",
                feasible, p.deadline_h > 0 && p.budget > 0 ? "the deadline and the budget"
                          : p.deadline_h > 0 ? "the deadline" : "the budget");
        for (i = 0; i < feasible && i < 3; i++) {
            const plan_row *r = &rows[i];
            double over_t = r->time_s / 3600 - p.deadline_h, over_c = r->cost - p.budget;
            fprintf(stderr, "  %d. %.3f h", i + 1, r->time_s / 3600);
            if (p.deadline_h > 0 && over_t > 0)
                fprintf(stderr, ", %.3f h (%.0f %%) over the deadline", over_t,
                        100 * over_t / p.deadline_h);
            else if (p.deadline_h > 0)
                fprintf(stderr, " (meets the deadline)");
            fprintf(stderr, "; %.2f USD", r->cost);
            if (p.budget > 0 && over_c > 0)
                fprintf(stderr, ", %.2f USD (%.0f %%) over the budget", over_c,
                        100 * over_c / p.budget);
            else if (p.budget > 0)
                fprintf(stderr, " (within the budget)");
            fprintf(stderr, ":\n     dtsim %s\n", r->flags);
        }
        free(rows);
        return 2;
    }
    int k = p.confirm < feasible ? p.confirm : feasible;
    if (k > p.top) k = p.top;
    if (p.par.slurm[0]) {  // the confirmations as a job array; nothing simulated here
        rc = k ? dtsim_slurm_write(&p.par, "plan", argc, argv, k)
               : (fprintf(stderr, "dtsim plan: --slurm with nothing to confirm (--confirm "
                                  "0)\n"), 2);
        free(rows);
        return rc;
    }
    rc = plan_confirm(&p, rows, k);
    if (p.par.slice_n) {  // a slice saved its confirmations; --gather prints the table
        free(rows);
        return rc;
    }
    FILE *out = p.json || p.csv_stdout ? (p.quiet ? NULL : stderr) : stdout;
    if (!rc && out) plan_print(out, &p, rows, feasible, n);
    if (!rc && p.csv[0] && plan_write_csv(&p, rows, feasible, n)) rc = 1;
    if (!rc && p.json) plan_print_json(&p, rows, feasible, n);
    if (!rc && p.plot[0]) rc = plan_plot(&p, rows, feasible);
    free(rows);
    return rc;
}
