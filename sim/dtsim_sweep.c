// dtsim_sweep.c — `dtsim sweep`'s points as independent simulations (sim/dtsim_jobs.h): -j
// at a time in parallel processes, a slice of them on one task of a cluster, or gathered
// from the slices' results; the rows printed in the points' order, so the output is the
// same bytes whichever way they ran.
// Not here: the points and the report (dtsim.c, dtsim_report.c).
#include <stdio.h>

#include "dtsim.h"

typedef struct {
    const dtsim_opts *o, *pts;
    int n;
    FILE *out;
} sweep_ctx;

static int prepare(void *ctx, int i) {
    (void)ctx, (void)i;
    return 0;  // every point was prepared before the header
}

static int simulate(void *ctx, int i, void *r) {
    const dtsim_opts *p = &((sweep_ctx *)ctx)->pts[i];
    return p->coll.algo == DT_ALGO_AUTO ? dtsim_auto(p, r) : dtsim_simulate(p, r);
}

static void started(void *ctx, int i) {
    const sweep_ctx *s = ctx;
    const dtsim_opts *p = &s->pts[i];
    if (!p->quiet) fprintf(stderr, "[dtsim] sweep %d/%d: %d GPUs, %s\n", i + 1, s->n, p->gpus,
                           dt_algo_name(p->coll.algo));
}

static int done(void *ctx, int i, int rc, const void *r) {
    const sweep_ctx *s = ctx;
    if (!rc && s->out) dtsim_print_result(s->out, &s->pts[i], r, i > 0);
    return rc;
}

static void key(void *ctx, int i, char *buf, size_t n) {
    const dtsim_opts *p = &((sweep_ctx *)ctx)->pts[i];
    snprintf(buf, n, "%d GPUs, %s, %s, batch %d/GPU", p->gpus, dt_algo_name(p->coll.algo),
             p->model, p->per_gpu_batch);
}

int dtsim_sweep_points(const dtsim_opts *o, const dtsim_opts *pts, dtsim_result *res, int n,
                       FILE *out) {
    sweep_ctx c = {o, pts, n, out};
    dtsim_job_set set = {&c, "sweep", prepare, simulate, started, done, key};
    return dtsim_jobs_run(&o->par, n, &set, res, sizeof *res, sizeof *res);
}
