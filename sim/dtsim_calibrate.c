// dtsim_calibrate.c — the validation loop's two ends in dtsim (docs/formulas.md, "Calibration
// from your measurements"): `dtsim calibrate` turns what a user measured on their own
// hardware — one rank's training step per layer kind (`dtrain --profile`) and allreduce
// tables between two ranks (`dtcoll-bench --csv`) inside a node and across nodes — into one
// profile (sim/profile.h), and `dtsim --profile FILE` makes that profile the run's defaults:
// the model and batch it was measured at, and the links' latency and bandwidth. The kernel
// factors themselves are computed per run (sim/dtsim_run.c), against the roofline.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dtsim.h"

#define MAX_STEPS 64  // --step files

// The mean of several profiles of the same step, each kind weighted by its timed steps.
static int mean_profile(const char **paths, int n, dt_profile *p, dt_error *err) {
    dt_profile q;
    double sum[DT_N_KINDS] = {0};
    long steps = 0;
    for (int i = 0; i < n; i++) {
        if (dt_profile_read(paths[i], i ? &q : p, err)) return -1;
        const dt_profile *x = i ? &q : p;
        if (i && (strcmp(q.model, p->model) || q.batch != p->batch || q.image_size != p->image_size ||
                  q.channels != p->channels || q.classes != p->classes ||
                  strcmp(q.precision, p->precision)))
            return dt_fail(err, DT_EXIT_USAGE, "%s: %s at batch %d in %s, but %s has %s at batch "
                           "%d in %s: every --step must profile the same step", paths[i], q.model,
                           q.batch, q.precision, paths[0], p->model, p->batch, p->precision);
        for (int k = 0; k < DT_N_KINDS; k++) {
            if (i && (q.kind_s[k] < 0) != (p->kind_s[k] < 0))
                return dt_fail(err, DT_EXIT_USAGE, "%s and %s do not have the same layer kinds",
                               paths[i], paths[0]);
            if (x->kind_s[k] > 0) sum[k] += x->kind_s[k] * x->steps;
        }
        steps += x->steps;
    }
    p->steps = steps, p->step_s = 0;
    for (int k = 0; k < DT_N_KINDS; k++)
        if (p->kind_s[k] >= 0) p->kind_s[k] = sum[k] / steps, p->step_s += p->kind_s[k];
    return 0;
}

// What the command line names: files, some of them given more than once
typedef struct {
    const char *steps[MAX_STEPS], *traces[MAX_STEPS];
    int n_steps, n_traces;
    const char *intra, *inter, *out, *algo;
} calib_args;

// --step, --intra-trace: each given adds a file
static int more(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err) {
    calib_args *a = v;
    int trace = d->data != NULL, *n = trace ? &a->n_traces : &a->n_steps;
    if (*n == MAX_STEPS)
        return dt_fail(err, DT_EXIT_USAGE, "more than %d %s files", MAX_STEPS, what);
    (trace ? a->traces : a->steps)[(*n)++] = s;
    return 0;
}

#define AT(member) DT_OPT_AT(calib_args, member)

static const dt_opt calib_rows[] = {
    {.type = DT_OPT_SECTION, .help =
        "usage: dtsim calibrate --step STEP.json [--intra A.csv | --intra-trace T.json]\n"
        "                       [--inter B.csv] --out FILE.json"},
    {.name = "step", .arg = "STEP.json", .type = DT_OPT_CUSTOM, .size = sizeof(calib_args),
     .parse = more, .help = "one rank's step per layer kind: `mpirun -np 1 dtrain ...\n"
     "--profile STEP.json --max-steps 20` on the device to model; give\nit again for more runs "
     "(the same network and batch): their mean\nis taken. Profile under the job's load: on a "
     "CPU, one\nsingle-rank run per core at the same time (they share memory\nbandwidth and "
     "caches)"},
    {.name = "intra", .arg = "A.csv", .type = DT_OPT_TEXT, AT(intra),
     .help = "`mpirun -np 2 dtcoll-bench --algos ring --csv A.csv` with both\nranks on one "
     "node: the intra-node link's latency and bandwidth"},
    {.name = "intra-trace", .arg = "T.json", .type = DT_OPT_CUSTOM, .size = sizeof(calib_args),
     .parse = more, .data = "trace", .help = "instead of --intra: the link as dtrain's own "
     "allreduce sees it,\nfrom `mpirun -np 2 dtrain ... --no-overlap --trace T.json` (its\n"
     "fusion buckets, each step's shortest of the ranks' times: the\nothers' include waiting "
     "for the last one); give it again for\nmore runs (each bucket's median over all their "
     "steps)"},
    {.name = "inter", .arg = "B.csv", .type = DT_OPT_TEXT, AT(inter),
     .help = "the same with the ranks on two nodes: the network's"},
    {.name = "algo", .arg = "NAME", .type = DT_OPT_TEXT, AT(algo),
     .help = "the table's rows to fit (default ring)"},
    {.name = "out", .arg = "FILE.json", .type = DT_OPT_TEXT, AT(out),
     .help = "the profile for `dtsim --profile FILE.json` (written atomically)"},
    {.type = DT_OPT_SECTION, .help =
        "Fits t = 2(P-1)·alpha + 2(P-1)/P·bytes·beta (the ring allreduce) to each table: beta\n"
        "over its large end (sizes >= 1/16 of the largest: sweep up to your fusion buckets' size,\n"
        "--max-bytes), alpha from its two smallest sizes (Hockney's r-infinity and t0); a\n"
        "trace's buckets are fitted the same way (one size only: alpha 0)."},
};

int dtsim_calibrate_tables(dt_opt_table *t) {
    *t = (dt_opt_table){.opts = calib_rows, .n = (int)(sizeof calib_rows / sizeof *calib_rows)};
    return 1;
}

int dtsim_calibrate_main(int argc, char **argv) {
    calib_args a = {.algo = "ring"};
    dt_opt_table t;
    dtsim_calibrate_tables(&t);
    t.base = &a;
    int rc = dt_opts_parse(argc, argv, &t, 1, "dtsim calibrate", 0);
    if (rc == 1) dt_opts_usage(stdout, &t);
    if (rc) return rc == 1 ? 0 : rc;
    const char **steps = a.steps, **traces = a.traces, *intra = a.intra, *inter = a.inter;
    const char *out = a.out, *algo = a.algo;
    int n_steps = a.n_steps, n_traces = a.n_traces;
    if (!n_steps || !out) {
        fprintf(stderr, "dtsim calibrate: --step and --out are required (see dtsim calibrate "
                        "--help)\n");
        return 2;
    }
    if (intra && n_traces) {
        fprintf(stderr, "dtsim calibrate: --intra %s and --intra-trace %s both measure the "
                        "intra-node link: give one of them\n", intra, traces[0]);
        return 2;
    }
    dt_profile p;
    dt_error err = {0};
    if (mean_profile(steps, n_steps, &p, &err) ||
        (intra && dt_profile_fit_links(intra, algo, &p.intra, &err)) ||
        (n_traces && dt_profile_fit_traces(traces, n_traces, &p.intra, &err)) ||
        (inter && dt_profile_fit_links(inter, algo, &p.inter, &err))) {
        fprintf(stderr, "dtsim calibrate: %s\n", err.msg);
        return 2;
    }
    snprintf(p.source, sizeof p.source, "dtsim calibrate --step %.40s%s%s%.40s%s%.40s", steps[0],
             n_steps > 1 ? " ..." : "",
             intra ? " --intra " : n_traces ? " --intra-trace " : "",
             intra ? intra : n_traces ? traces[0] : "", inter ? " --inter " : "",
             inter ? inter : "");
    if (dt_profile_write(out, &p, &err)) {
        fprintf(stderr, "dtsim calibrate: --out %s\n", err.msg);
        return 2;
    }
    printf("dtsim calibrate: %s: %s, %d per rank, %.3f ms per step (%d run%s, %ld timed steps)",
           out, p.model, p.batch, 1e3 * p.step_s, n_steps, n_steps > 1 ? "s" : "", p.steps);
    const dt_link_fit *l[2] = {&p.intra, &p.inter};
    const char *name[2] = {"intra", "inter"};
    for (int i = 0; i < 2; i++)
        if (l[i]->beta > 0)
            printf("; %s: alpha %.2f us, %.3f GB/s (fitted over %.0f-%.0f bytes)", name[i],
                   1e6 * l[i]->alpha, 1e-9 / l[i]->beta, l[i]->fit_from, l[i]->fit_to);
    printf("\n");
    return 0;
}

int dtsim_apply_profile(dtsim_opts *o, dt_cluster *c, int model_set, int prec_set) {
    dt_error err = {0};
    dt_profile *p = &o->profile;
    if (dt_profile_read(o->profile_path, p, &err)) {
        fprintf(stderr, "dtsim: --profile %s\n", err.msg);
        return 2;
    }
    if (!model_set) snprintf(o->model, sizeof o->model, "%s", p->model);
    else if (strcmp(o->model, p->model)) {
        fprintf(stderr, "dtsim: --profile %s measured %s, not --model %s: each layer kind's "
                        "time is only known for the network it was measured on\n",
                o->profile_path, p->model, o->model);
        return 2;
    }
    // the network dtsim builds is the one measured: its input side and classes (the
    // gradients' size, each layer's shape; sim/dtsim_run.c: model_shape). Models take 3
    // channels (nn/models.h).
    if (p->channels != 3) {
        fprintf(stderr, "dtsim: --profile %s measured %s on %d-channel images; dtsim's "
                        "models take 3 channels\n", o->profile_path, p->model, p->channels);
        return 2;
    }
    o->model_side = p->image_size, o->model_classes = p->classes;
    // The cpu device is synchronous and its rank has one core: MPI's copies (CMA: the
    // receiver's CPU copies) and the reductions run between layers on the core that computes
    // backward, so dtrain's overlap hides nothing there (bench/VALIDATION.md: the step with
    // overlap within a few % of the step without, in every run). A GPU's copies and NIC
    // run beside its kernels, as dtsim's model device assumes; a cpu rank's do not.
    if (!strcmp(p->device, "cpu")) o->overlap = 0;
    if (!prec_set) o->prec = strcmp(p->precision, "fp32") ? DT_PREC_FP16 : DT_PREC_FP32, o->bf16 = 0;
    if (!prec_set) snprintf(o->src.prec, sizeof o->src.prec, "--profile");
    if (p->intra.beta > 0) {
        c->intra_lat = p->intra.alpha, c->intra_bw = 1 / p->intra.beta;
        snprintf(o->src.intra_bw, sizeof o->src.intra_bw, "--profile, measured");
        snprintf(o->src.intra_lat, sizeof o->src.intra_lat, "--profile, measured");
    }
    if (p->inter.beta > 0) {
        // α = net_lat × the mean links of a route (platform.c, dt_cluster_cost); β = 1/(nics·bw)
        double a, a1;
        dt_cluster one = *c;
        one.net_lat = 1.0;
        dt_cluster_cost(&one, &a1, NULL, NULL, NULL);
        a = p->inter.alpha;
        c->net_lat = isfinite(a1) && a1 > 0 ? a / a1 : a / 2;
        c->nic_bw = 1 / (p->inter.beta * c->nics);
        snprintf(o->src.nic_bw, sizeof o->src.nic_bw, "--profile, measured");
        snprintf(o->src.net_lat, sizeof o->src.net_lat, "--profile, measured");
    }
    return 0;
}
