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
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "dtsim_plan.h"
#include "opt_table.h"
#include "zero.h"

static void usage(FILE *f) {
    fprintf(f,
        "usage: dtsim plan --price TYPE=USD,... [--deadline HOURS] [--budget USD] [options]\n"
        "  Searches every combination below with the analytic model (dtsim --analytic),\n"
        "  rejects those that cannot train (with the reason), ranks the rest by cost among\n"
        "  those meeting the deadline and budget (by time-to-train under a budget alone),\n"
        "  and confirms the top K with the SimGrid simulation.\n"
        "  --price LIST         USD per GPU-hour per GPU type, e.g. h100=6,a100=3.5,v100=2\n"
        "  --price-node LIST    or USD per node-hour: h100=98 (a node of any size), or\n"
        "                       h100:8=98,h100:4=52 (nodes of that many GPUs; others rejected)\n"
        "  --deadline HOURS     time-to-train to meet   --budget USD  cost-to-train to meet\n"
        "  --model NAME (resnet50)  --dataset-size N --epochs N (dtsim's: ImageNet, 90)\n"
        "candidate ranges (comma-separated lists):\n"
        "  --gpu LIST           GPU types (default: the priced ones)\n"
        "  --gpus LIST          GPU counts (8,16,32,64,128,256,512,1024)\n"
        "  --gpus-per-node LIST (8)   --nics LIST  NICs per node (1)\n"
        "  --algos LIST         (ring,rhd,hier,dbtree)   --fusion LIST  (segments:2)\n"
        "  --per-gpu-batch LIST (32,64,128)   --precision LIST  (fp16: mixed precision)\n"
        "  --topology LIST      flat, fat-tree, torus, dragonfly (dtsim's: fat-tree)\n"
        "  --fail-rate LIST     failures per GPU-hour, e.g. 1e-5,2e-5 (time-to-train with goodput)\n"
        "  --ckpt-interval LIST minutes between checkpoints, or auto, e.g. 30,60,auto\n"
        "  --shard LIST         ZeRO stages, e.g. 0,1,3 (gpt models: memory per GPU decides)\n"
        "failures, the same for every candidate: --mtbf, --node-fail-rate, --ckpt-async,\n"
        "  --storage-bw, --fs-bw, --restart (as dtsim's; dtsim --help)\n"
        "output:\n"
        "  --confirm K          simulate the top K with SimGrid (3; 0: none)\n"
        "  -j N                 N simulations at a time (1); the same output\n"
        "  --slurm DIR [--slurm-tasks N] [--submit]   the confirmations as a Slurm job array,\n"
        "                       gathered with --gather DIR (docs/dtsim.md, \"Many runs\")\n"
        "  --top N              rows in the table (10)\n"
        "  --csv FILE|-  --json (stdout: nothing else)  --quiet\n"
        "  --plot FILE.png      the top rows' time and cost with their bands, the SimGrid\n"
        "                       confirmations, the deadline and the budget\n");
}

static int bad(const char *opt, const char *val, const char *want) {
    dt_error err;
    dt_opt_bad(&err, opt, val, want);
    fprintf(stderr, "dtsim plan: %s (see dtsim plan --help)\n", err.msg);
    return 2;
}

// The command lines' number parsers (nn/opt_table.h), into an int or a double
static int to_int(const char *s, long lo, long hi, int *out) {
    long long v;
    if (dt_parse_int(s, lo, hi, &v)) return -1;
    *out = (int)v;
    return 0;
}

static int to_double(const char *s, double lo, double hi, double *out) {
    return dt_parse_real(s, lo, hi, out);
}

// A comma-separated list of integers in [lo, hi] into out: its length, or -1 with a message
static int int_list(const char *opt, const char *s, int lo, int hi, int *out, int max) {
    char buf[512];
    int n = 0;
    snprintf(buf, sizeof buf, "%s", s);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        if (n == max || to_int(t, lo, hi, &out[n])) {
            char want[96];
            snprintf(want, sizeof want, "a list of at most %d integers in %d..%d", max, lo, hi);
            return bad(opt, s, want), -1;
        }
        n++;
    }
    return n ? n : (bad(opt, s, "a comma-separated list"), -1);
}

// A comma-separated list of words, each checked by ok() (NULL: any): its length, or -1
static int word_list(const char *opt, const char *s, char *out, size_t width, int max,
                     int (*ok)(const char *), const char *want) {
    char buf[512];
    int n = 0;
    snprintf(buf, sizeof buf, "%s", s);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        if (n == max || strlen(t) >= width || (ok && !ok(t))) return bad(opt, t, want), -1;
        snprintf(out + (size_t)n * width, width, "%s", t);
        n++;
    }
    return n ? n : (bad(opt, s, want), -1);
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

// --price h100=6,a100=3.5 (node 0) or --price-node h100=98,a100:4=40 (node 1): 0, or 2
static int prices(const char *opt, const char *s, int node, plan_opts *p) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        char *eq = strchr(t, '='), *colon = strchr(t, ':');
        int gpn = 0;
        if (!eq || p->n_price == 8)
            return bad(opt, s, node ? "TYPE=USD or TYPE:GPUS_PER_NODE=USD,... (at most 8)"
                                    : "TYPE=USD,... (at most 8 types)");
        *eq = 0;
        if (colon && node) {
            *colon = 0;
            if (to_int(colon + 1, 1, 1024, &gpn))
                return bad(opt, colon + 1, "a count of GPUs per node (TYPE:GPUS=USD)");
        }
        if (!dt_gpu_find(t)) {
            fprintf(stderr, "dtsim plan: option %s: unknown GPU '%s' (valid: %s)\n", opt, t,
                    dt_gpu_names());
            return 2;
        }
        for (int i = 0; i < p->n_price; i++)
            if (!strcasecmp(p->price_gpu[i], t) && (p->price_node[i] != node ||
                                                     p->node_gpn[i] == gpn)) {
                fprintf(stderr, "dtsim plan: option %s: %s is priced twice (give a GPU type "
                        "one price: per GPU-hour with --price, or per node-hour with "
                        "--price-node)\n", opt, t);
                return 2;
            }
        if (to_double(eq + 1, 1e-6, 1e6, &p->price[p->n_price]))
            return bad(opt, eq + 1, node ? "a price per node-hour > 0 in USD"
                                         : "a price per GPU-hour > 0 in USD");
        p->price_node[p->n_price] = node, p->node_gpn[p->n_price] = gpn;
        snprintf(p->price_gpu[p->n_price++], sizeof p->price_gpu[0], "%s", t);
    }
    return 0;
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

// --fail-rate and --ckpt-interval as lists: each value checked as dtsim checks it; 0, or 2
static int fault_list(const char *opt, int code, const char *s, dtsim_opts *scratch,
                      char out[][24], int *n) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        if (*n == PLAN_MAX_LIST || strlen(t) >= 24)
            return bad(opt, s, "a list of at most 32 values");
        int rc = dtsim_fault_option(code, t, scratch);
        if (rc) return rc;
        snprintf(out[(*n)++], 24, "%s", t);
    }
    return *n ? 0 : bad(opt, s, "a comma-separated list");
}

enum { P_PRICE = 300, P_PRICE_NODE, P_TOPO, P_DEADLINE, P_BUDGET, P_MODEL, P_DATASET, P_EPOCHS, P_GPU, P_GPUS, P_GPN,
       P_NICS, P_ALGOS, P_FUSION, P_PGB, P_PREC, P_CONFIRM, P_TOP, P_CSV, P_JSON, P_QUIET,
       P_PLOT, P_HELP, P_SHARD };

static int parse(int argc, char **argv, plan_opts *p) {
    memset(p, 0, sizeof *p);
    snprintf(p->model, sizeof p->model, "resnet50");
    p->confirm = 3, p->top = 10, p->par.jobs = 1;
    static const struct option lo[] = {
        {"price", 1, 0, P_PRICE}, {"price-node", 1, 0, P_PRICE_NODE},
        {"topology", 1, 0, P_TOPO}, {"deadline", 1, 0, P_DEADLINE}, {"budget", 1, 0, P_BUDGET},
        {"model", 1, 0, P_MODEL}, {"dataset-size", 1, 0, P_DATASET}, {"epochs", 1, 0, P_EPOCHS},
        {"gpu", 1, 0, P_GPU}, {"gpus", 1, 0, P_GPUS}, {"gpus-per-node", 1, 0, P_GPN},
        {"nics", 1, 0, P_NICS}, {"algos", 1, 0, P_ALGOS}, {"fusion", 1, 0, P_FUSION},
        {"per-gpu-batch", 1, 0, P_PGB}, {"precision", 1, 0, P_PREC},
        {"confirm", 1, 0, P_CONFIRM}, {"top", 1, 0, P_TOP}, {"csv", 1, 0, P_CSV},
        {"json", 0, 0, P_JSON}, {"quiet", 0, 0, P_QUIET}, {"plot", 1, 0, P_PLOT},
        {"help", 0, 0, P_HELP}, {"shard", 1, 0, P_SHARD},
        {0, 0, 0, 0}};
    struct option all[sizeof lo / sizeof *lo + 32];
    DT_ASSERT(dtsim_fault_option_count < 16 && dtsim_jobs_option_count < 16);
    memcpy(all, lo, sizeof lo - sizeof *lo);
    memcpy(all + sizeof lo / sizeof *lo - 1, dtsim_fault_options,
           (size_t)dtsim_fault_option_count * sizeof *lo);
    memcpy(all + sizeof lo / sizeof *lo - 1 + dtsim_fault_option_count, dtsim_jobs_options,
           (size_t)(dtsim_jobs_option_count + 1) * sizeof *lo);
    const char *topo = NULL, *shard = NULL;
    const char *gpus = "8,16,32,64,128,256,512,1024", *gpn = "8", *nics = "1", *pgb = "32,64,128";
    const char *algos = "ring,rhd,hier,dbtree", *fusion = "segments:2", *prec = "fp16", *gpu = NULL;
    dtsim_opts scratch;  // the failure options checked as dtsim checks them
    memset(&scratch, 0, sizeof scratch);
    scratch.restart_s = -1;
    opterr = 0;
    optind = 1;
    for (int c; (c = getopt_long(argc, argv, "j:", all, NULL)) != -1;) {
        switch (c) {
        case P_PRICE: if (prices("--price", optarg, 0, p)) return 2; break;
        case P_PRICE_NODE: if (prices("--price-node", optarg, 1, p)) return 2; break;
        case P_TOPO: topo = optarg; break;
        case P_SHARD: shard = optarg; break;
        case P_DEADLINE: if (to_double(optarg, 1e-6, 1e7, &p->deadline_h)) return bad("--deadline", optarg, "hours > 0"); break;
        case P_BUDGET: if (to_double(optarg, 1e-6, 1e15, &p->budget)) return bad("--budget", optarg, "USD > 0"); break;
        case P_MODEL: snprintf(p->model, sizeof p->model, "%s", optarg); break;
        case P_DATASET: if (to_double(optarg, 1, 1e12, &p->dataset)) return bad("--dataset-size", optarg, "a positive count"); break;
        case P_EPOCHS: if (to_double(optarg, 1e-3, 1e6, &p->epochs)) return bad("--epochs", optarg, "a positive number"); break;
        case P_GPU: gpu = optarg; break;
        case P_GPUS: gpus = optarg; break;
        case P_GPN: gpn = optarg; break;
        case P_NICS: nics = optarg; break;
        case P_ALGOS: algos = optarg; break;
        case P_FUSION: fusion = optarg; break;
        case P_PGB: pgb = optarg; break;
        case P_PREC: prec = optarg; break;
        case P_CONFIRM: if (to_int(optarg, 0, 64, &p->confirm)) return bad("--confirm", optarg, "0..64"); break;
        case P_TOP: if (to_int(optarg, 1, 100000, &p->top)) return bad("--top", optarg, "a positive count"); break;
        case P_CSV: snprintf(p->csv, sizeof p->csv, "%s", optarg), p->csv_stdout = !strcmp(optarg, "-"); break;
        case P_JSON: p->json = 1; break;
        case P_PLOT: snprintf(p->plot, sizeof p->plot, "%s", optarg); break;
        case P_QUIET: p->quiet = 1; break;
        case P_HELP: usage(stdout); return 1;
        default: {
            const char *name = argv[optind - 1], *fault = NULL;
            int jr = dtsim_jobs_option(c, optarg, "dtsim plan", &p->par);
            if (jr > 0) return jr;
            if (!jr) break;
            for (int i = 0; c >= 512 && i < dtsim_fault_option_count; i++)
                if (dtsim_fault_options[i].val == c) fault = dtsim_fault_options[i].name;
            if (fault && !strcmp(fault, "straggler")) {
                fprintf(stderr, "dtsim plan: --straggler is simulated, not searched: try the "
                                "plan's answer with `dtsim --straggler ...`\n");
                return 2;
            }
            if (fault && (!strcmp(fault, "fail-rate") || !strcmp(fault, "ckpt-interval"))) {
                int ck = !strcmp(fault, "ckpt-interval");
                if (fault_list(ck ? "--ckpt-interval" : "--fail-rate", c, optarg, &scratch,
                               ck ? p->ckint_l : p->frate_l, ck ? &p->n_ckint : &p->n_frate))
                    return 2;
                break;
            }
            int fr = c >= 512 ? dtsim_fault_option(c, optarg, &scratch) : -1;
            if (fr > 0) return fr;
            if (fr < 0 || p->n_fault == 16) {
                fprintf(stderr, "dtsim plan: unknown option or missing value: %s (see dtsim "
                                "plan --help)\n", name);
                return 2;
            }
            snprintf(p->fault_args[p->n_fault][0], 64, "--%s", fault);
            snprintf(p->fault_args[p->n_fault++][1], 64, "%s", optarg ? optarg : "");
        }
        }
    }
    if (optind < argc) {
        fprintf(stderr, "dtsim plan: unexpected argument '%s' (see dtsim plan --help)\n",
                argv[optind]);
        return 2;
    }
    if (dtsim_faults_check(&scratch) || dtsim_jobs_check(&p->par, "dtsim plan")) return 2;
    if (!p->n_price) {
        fprintf(stderr, "dtsim plan: --price TYPE=USD,... or --price-node TYPE=USD,... is "
                        "needed (the cost of a GPU-hour, or of a node-hour, of each GPU type to "
                        "consider, e.g. --price h100=6,a100=3.5)\n");
        return 2;
    }
    if (topo && (p->n_topo = word_list("--topology", topo, p->topo_l[0], 16, 4, ok_topo,
                                       "a list of flat, fat-tree, torus, dragonfly")) < 0)
        return 2;
    if (shard && (p->n_shard = word_list("--shard", shard, p->shard_l[0], 12, 4, ok_shard,
                                         "a list of ZeRO stages (0-3, or none, optimizer, "
                                         "gradients, parameters)")) < 0)
        return 2;
    if ((p->n_gpus = int_list("--gpus", gpus, 1, 1 << 20, p->gpus_n, PLAN_MAX_LIST)) < 0 ||
        (p->n_gpn = int_list("--gpus-per-node", gpn, 1, 1024, p->gpn_n, PLAN_MAX_LIST)) < 0 ||
        (p->n_nics = int_list("--nics", nics, 1, 64, p->nics_n, 8)) < 0 ||
        (p->n_pgb = int_list("--per-gpu-batch", pgb, 1, 1 << 20, p->pgb_n, PLAN_MAX_LIST)) < 0)
        return 2;
    char want_gpu[160], want_algo[DT_ALGO_NAMES_MAX + 40];
    snprintf(want_gpu, sizeof want_gpu, "a list of GPU types (%s)", dt_gpu_names());
    snprintf(want_algo, sizeof want_algo, "a list of simulated algorithms (%s)", DT_ALGO_VALID);
    if ((p->n_algo = word_list("--algos", algos, p->algo_l[0], 16, 8, ok_algo,
                               want_algo)) < 0 ||
        (p->n_fusion = word_list("--fusion", fusion, p->fusion_l[0], 32, 8, ok_fusion,
                                 "a list of fusion specs (" DT_FUSION_VALID ")")) < 0 ||
        (p->n_prec = word_list("--precision", prec, p->prec_l[0], 8, 4, ok_prec,
                               "a list of fp32, tf32, fp16")) < 0)
        return 2;
    if (gpu) {
        if ((p->n_gpu = word_list("--gpu", gpu, p->gpu_l[0], 16, 8, ok_gpu, want_gpu)) < 0)
            return 2;
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
    if (dtsim_parse(argc, argv, &o) || dtsim_prepare(&o, &row->a)) {
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

// The next digit of *r in base len (and *r without it)
static int digit(int *r, int len) {
    int v = *r % len;
    *r /= len;
    return v;
}

int dtsim_plan_main(int argc, char **argv) {
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
    g_sort_plan = &p;
    qsort(rows, (size_t)n, sizeof *rows, by_rank);
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
