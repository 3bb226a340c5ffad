// dtsim.c — "how fast would this cluster train ResNet-50, and how well would it scale?"
// The launcher: reads the command line (dtsim_opts.c: the options, the cluster they describe,
// a preset of the landmark runs, a custom one or the user's SimGrid platform), runs the
// simulation (dtsim_run.c:
// SimGrid runs the same trainer step, allreduce and LARS code of nn/ on modeled GPUs) and
// reports (dtsim_report.c). `dtsim sweep` repeats it over GPU counts and algorithms.
// With no arguments: ResNet-50 on 1024 V100 (128 nodes × 8, NVLink, EDR InfiniBand, fat
// tree), hierarchical allreduce in 2 fusion segments overlapping backward, global batch 32K
// with LARS (You et al. 2017; Jia et al. 2018).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtsim.h"

// --device cpu: real numbers; the rank program's losses are the result (time is not modeled).
static int run_cpu(const dtsim_opts *o) {
    dtsim_result r;
    int rc = dtsim_run_one(o, &r);
    if (rc) return rc;
    if (!o->quiet)
        printf("dtsim --device cpu: %d ranks x batch %d of %s, real numbers on the cpu "
               "device (SimGrid carried the messages; compute time is not modeled)\n",
               o->gpus, o->per_gpu_batch, o->model);
    return 0;
}

// Where the human-readable report goes: stdout, or stderr when stdout carries the JSON or
// the CSV (--json, --csv -), and nowhere then with --quiet
static FILE *report_stream(const dtsim_opts *o) {
    if (o->json || o->csv_stdout) return o->quiet ? NULL : stderr;
    return stdout;
}

static int machine_output(const dtsim_opts *o, const dtsim_result *r, int n) {
    int rc = 0;
    if (o->csv[0] && dtsim_write_csv(o, o->csv, r, n)) rc = 1;
    if (o->json) dtsim_print_json(o, r, n);
    fflush(stdout);
    return rc;
}

// More than SimGrid can hold here (r->simgrid_refused says why): the cost model answers
// instead, with a warning on stderr and in the JSON; the run prepared again. 0, or an exit code
static int to_analytic(dtsim_opts *o, dtsim_result *r) {
    char w[512];
    int slow = strstr(r->simgrid_refused, "--max-sim-minutes") != NULL;
    snprintf(w, sizeof w, "%s: answered with --analytic instead (its error: bench/ANALYTIC.md); "
             "%s", r->simgrid_refused, slow ? "--max-sim-minutes 0 simulates it anyway"
                                             : "a machine with more memory simulates it");
    fprintf(stderr, "dtsim: warning: %s\n", w);
    dtsim_warn_json(o, w);
    o->analytic = 1, o->fallback = 0;
    return dtsim_prepare(o, r);
}

static int run_single(const dtsim_opts *given) {
    dtsim_result r;
    dtsim_opts *o = mallocCheck(sizeof *o);
    *o = *given;
    FILE *out = report_stream(o);
    o->fallback = !o->analytic && !o->cpu;
    int rc = dtsim_prepare(o, &r);  // every refusal before the header
    if (rc == 3) rc = to_analytic(o, &r);
    if (rc) return free(o), rc;
    if (out && !o->quiet) dtsim_print_header(out, o);
    rc = o->coll.algo == DT_ALGO_AUTO ? dtsim_auto(o, &r) : dtsim_simulate(o, &r);
    if (rc == 3 && !(rc = to_analytic(o, &r)))  // SimGrid outgrew this machine's memory
        rc = dtsim_simulate(o, &r);
    if (!rc) rc = dtsim_faults_run(o, &r);
    if (rc) return free(o), rc;
    if (out) dtsim_print_result(out, o, &r, 0);
    if (out) dtsim_faults_report(out, o, &r);
    if (out && o->analytic) dtsim_analytic_note(out, o);
    rc = machine_output(o, &r, 1);
    free(o);
    return rc;
}

// The sweep's configuration of g GPUs and algorithm a: o's cluster with g GPUs. 0, or 2 when
// g is not a whole number of nodes.
static int sweep_point(const dtsim_opts *o, int g, dt_algo a, dtsim_opts *p) {
    *p = *o;
    p->gpus = g;
    p->coll.algo = a;
    if (p->gpus % p->cluster.gpus_per_node && !p->platform_file[0]) {
        fprintf(stderr, "dtsim: --sweep-gpus %d is not a whole number of %d-GPU nodes\n",
                p->gpus, p->cluster.gpus_per_node);
        return 2;
    }
    p->cluster.nodes = p->gpus / p->cluster.gpus_per_node;
    p->cluster.topo_params[0] = 0;
    p->global_batch = p->per_gpu_batch * p->gpus;
    return 0;
}

// Every GPU count x algorithm, the per-GPU batch held fixed (weak scaling): every point
// prepared (its refusals) before the header, then simulated; one table, then the CSV, JSON
// and plots of all rows.
static int run_sweep(const dtsim_opts *o) {
    int n = o->n_sweep_gpus * o->n_sweep_algos, rc = 0;
    dtsim_result *res = calloc((size_t)n, sizeof *res);
    dtsim_opts *pts = calloc((size_t)n, sizeof *pts);
    FILE *out = report_stream(o);
    for (int a = 0, i = 0; a < o->n_sweep_algos && !rc; a++)
        for (int g = 0; g < o->n_sweep_gpus && !rc; g++, i++)
            if (!(rc = sweep_point(o, o->sweep_gpus[g], o->sweep_algos[a], &pts[i])))
                rc = dtsim_prepare(&pts[i], &res[i]);
    if (o->par.slice_n) out = NULL;  // a slice saves its results; --gather prints them
    if (!rc && out && !o->quiet) dtsim_print_header(out, o);
    if (!rc) rc = dtsim_sweep_points(o, pts, res, n, out);
    if (!rc && !o->par.slice_n) {  // a failed CSV still leaves the JSON and the plots
        if (out) dtsim_print_sweep_band(out, o, res, n);
        if (out && o->analytic) dtsim_analytic_note(out, o);
        rc = machine_output(o, res, n);
        if (o->plot[0] && dtsim_plot(o->plot, o, res, n)) rc = 1;
    }
    free(res);
    free(pts);
    return rc;
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "calibrate")) return dtsim_calibrate_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "plan")) return dtsim_plan_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "calibrations"))
        return dtsim_calibrations_main(argc - 1, argv + 1);
    dtsim_opts o;
    int rc = dtsim_parse(argc, argv, &o);
    if (rc) return rc == 1 ? 0 : rc;  // 1: --help was printed
    if (o.cpu) return run_cpu(&o);
    if (o.par.slurm[0])  // the slices' job script, nothing simulated here
        return dtsim_slurm_write(&o.par, "sweep", argc - 1, argv + 1,
                                 o.n_sweep_gpus * o.n_sweep_algos);
    return o.sweep ? run_sweep(&o) : run_single(&o);
}
