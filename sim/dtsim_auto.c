// dtsim_auto.c — `dtsim --algo auto`: the allreduce that makes the simulated step fastest.
// The library's own `auto` (nn/coll/coll_algos.c: dt_coll_cheapest) takes the algorithm the
// α-β-γ cost model prices cheapest for each allreduce on its own; a step is more than that:
// buckets overlap backward, a node's GPUs contend for its NICs, a rank advances its
// allreduce only when it polls between layers. On the grid of bench/AUTO.md the model's
// choice is the simulated best in only some of the configurations, and up to 2x slower in
// others. So dtsim simulates every algorithm the model does not rule out (priced within
// AUTO_KEEP times the cheapest, the bound bench/AUTO.md measured to keep the simulated best
// on its whole grid) and keeps the fastest step; the result lists what it simulated and
// what the model alone would have chosen.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "coll/coll_cost.h"
#include "coll/coll_sched.h"
#include "dtsim.h"

#define AUTO_KEEP 4.0

int dtsim_auto(const dtsim_opts *o, dtsim_result *r) {
    dt_coll_opts co = dtsim_coll_for(o, &o->cluster);
    double bytes = 4.0 * (double)r->params;  // the fp32 gradients, as the rank program prices
    dt_algo cand[8];
    double cost[8], best = INFINITY;
    int n = 0;
    for (int i = 0, m = dt_algo_count(); i < m && n < 8; i++) {
        dt_algo_def d;
        if (dt_algo_get((dt_algo)i, &d) || !d.cost || (d.in_auto && !d.in_auto(&co, o->gpus)))
            continue;
        double t = d.cost(&co, o->gpus, bytes);
        if (!isfinite(t)) continue;
        cand[n] = (dt_algo)i, cost[n++] = t;
        if (t < best) best = t;
    }
    snprintf(r->auto_model_pick, sizeof r->auto_model_pick, "%s",
             dt_algo_name(dt_coll_cheapest(&co, o->gpus, bytes)));
    const dtsim_result prepared = *r;
    dtsim_result keep = prepared;
    double wall = 0;
    int kept = 0, k = 0;
    char names[8][16];
    double iters[8];
    for (int i = 0; i < n; i++) {
        if (cost[i] > AUTO_KEEP * best) continue;
        dtsim_opts p = *o;
        p.coll.algo = cand[i];
        dtsim_result t = prepared;
        if (!o->quiet) fprintf(stderr, "[dtsim] auto: simulating %s\n", dt_algo_name(cand[i]));
        int rc = dtsim_simulate(&p, &t);
        if (rc) return rc;
        wall += t.wall_s;
        snprintf(names[k], sizeof names[k], "%s", dt_algo_name(cand[i]));
        iters[k++] = t.iter_s;
        if (!kept || t.iter_s < keep.iter_s) keep = t, kept = 1;
    }
    *r = keep;
    r->wall_s = wall;
    r->auto_n = k;
    for (int i = 0; i < k; i++) {
        snprintf(r->auto_algo[i], sizeof r->auto_algo[i], "%s", names[i]);
        r->auto_iter_s[i] = iters[i];
    }
    snprintf(r->auto_model_pick, sizeof r->auto_model_pick, "%s", prepared.auto_model_pick);
    return 0;
}
