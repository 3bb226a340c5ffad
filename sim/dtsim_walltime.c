// dtsim_walltime.c — how long SimGrid will take, said before it starts (issue 51): the wall
// time of bench/DTSIM-SPEED.md's measured runs (ResNet-50, 32 images per GPU, 1 warm-up and
// 1 timed iteration, the default cluster, jemalloc, the project's 2-core VM with nothing else
// running), interpolated in log-log between the GPU counts measured for the run's algorithm
// and extended beyond them by the last interval's growth; per iteration simulated, and for
// another model in proportion to its gradient buckets' messages (fusion segments are what
// SimGrid simulates). A single run that would take longer than --max-sim-minutes (120) is
// answered with --analytic, saying so; a sweep or a plan says the estimate and goes on.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dtsim.h"

typedef struct {
    dt_algo algo;
    int coarsened;        // dbtree with --coarsen-dbtree
    double gpus[5], s[5]; // measured: GPUs, wall seconds (ascending)
    int n;
} wall_row;

// bench/DTSIM-SPEED.md, "jemalloc" table (2026-12): the rows of each algorithm
static const wall_row rows[] = {
    {DT_ALGO_HIER, 0, {1024, 2048, 4096, 8192, 16384}, {5.27, 13.73, 30.71, 67.36, 179.63}, 5},
    {DT_ALGO_RING, 0, {1024, 2048, 4096, 8192, 16384}, {12.19, 21.81, 39.43, 90.06, 254.36}, 5},
    {DT_ALGO_RHD, 0, {1024, 4096}, {9.06, 51.81}, 2},
    {DT_ALGO_DBTREE, 0, {1024, 4096, 16384}, {51.67, 526.77, 7440}, 3},
    {DT_ALGO_DBTREE, 1, {1024, 4096}, {10.73, 60.81}, 2},
};

// Seconds of SimGrid for P GPUs of the measured run's kind (the ring's rows for an algorithm
// not measured); below the smallest count, in proportion to P.
static double measured(dt_algo a, int coarsened, double P) {
    const wall_row *w = &rows[1];
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i].algo == a && rows[i].coarsened == coarsened) w = &rows[i];
    if (P <= w->gpus[0]) return w->s[0] * P / w->gpus[0];
    int k = 1;
    while (k < w->n - 1 && P > w->gpus[k]) k++;
    double slope = log(w->s[k] / w->s[k - 1]) / log(w->gpus[k] / w->gpus[k - 1]);
    return w->s[k - 1] * exp(slope * log(P / w->gpus[k - 1]));
}

double dtsim_wall_estimate_s(const dtsim_opts *o, int buckets) {
    if (o->analytic || o->cpu || o->gpus < 2) return 0;
    dt_algo a = o->coll.algo == DT_ALGO_AUTO ? DT_ALGO_HIER : o->coll.algo;
    double s = measured(a, a == DT_ALGO_DBTREE && o->coll.coarsen_tree > 1, o->gpus);
    double iters = o->iters + o->warmup > 0 ? o->iters + o->warmup : 2;
    double msgs = buckets > 0 ? buckets / 2.0 : 1;  // ResNet-50's measured runs: 2 segments
    return s * (iters / 2) * (msgs > 1 ? msgs : 1);
}

int dtsim_wall_check(const dtsim_opts *o, int buckets, dtsim_result *r) {
    double s = dtsim_wall_estimate_s(o, buckets);
    if (s < 60) return 0;
    char t[32];
    dtsim_duration(s, t, sizeof t);
    double limit = o->max_sim_minutes * 60;
    if (o->fallback && limit > 0 && s > limit) {
        snprintf(r->simgrid_refused, sizeof r->simgrid_refused, "simulating %d GPUs with %s "
                 "would take about %s of SimGrid here (bench/DTSIM-SPEED.md's growth on a "
                 "2-core machine), beyond --max-sim-minutes %g", o->gpus,
                 dt_algo_name(o->coll.algo), t, o->max_sim_minutes);
        return 3;
    }
    if (!o->quiet)
        fprintf(stderr, "dtsim: about %s of SimGrid for %d GPUs here (bench/DTSIM-SPEED.md's "
                        "growth on a 2-core machine); --analytic answers at once\n", t, o->gpus);
    return 0;
}
