// optim_norms.c — the global norms that AdamW/LAMB and clipping need (optim.h, "Norms from
// pieces"), summed the same way whether the gradient and the optimizer state are whole
// (plain data parallel) or sharded over the ranks (ZeRO, Rajbhandari et al. 2020 §5).
// Clipping by global norm (Pascanu et al. 2013) needs |g| of the whole gradient, LAMB's
// trust ratio (You et al. 2019, Alg. 2) |w| and |r| of each whole weight tensor; a ZeRO rank
// holds only its piece of each unit. Each norm is therefore cut into segments: the unit
// pieces of every rank (coll.h dt_shard_lo: the ring's split), cut again at the tensors'
// boundaries. A segment's |x|^2 is one device sumsq (deterministic in its length and data),
// so the rank that holds it and a plain run that holds everything compute the same double;
// the sharded ranks exchange them in one allreduce of a vector, each segment nonzero on its
// owner only (x + 0 is exact in any order), and every rank adds them in ascending order, as
// the plain run does. Hence the same bits sharded and whole. Also here: AdamW and LAMB over
// the segments (dt_optim_step_plan), the element-wise kernels of optim.c on each segment.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "optim.h"

typedef struct {
    size_t cap;
    dt_norm_plan *pl;
} grow_ctx;

static void *grow(void *p, size_t bytes) {
    void *q = realloc(p, bytes);
    if (!q) {
        fprintf(stderr, "dtlab: out of memory (%zu bytes for the norm segments)\n", bytes);
        abort();
    }
    return q;
}

static void add_segment(grow_ctx *g, size_t lo, size_t hi, int param, int owner, size_t at) {
    dt_norm_plan *pl = g->pl;
    if ((size_t)pl->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 64;
        pl->lo = grow(pl->lo, g->cap * sizeof(size_t));
        pl->hi = grow(pl->hi, g->cap * sizeof(size_t));
        pl->at = grow(pl->at, g->cap * sizeof(size_t));
        pl->param = grow(pl->param, g->cap * sizeof(int));
        pl->owner = grow(pl->owner, g->cap * sizeof(int));
    }
    int s = pl->n++;
    pl->lo[s] = lo, pl->hi[s] = hi, pl->at[s] = at, pl->param[s] = param, pl->owner[s] = owner;
}

dt_norm_plan *dt_norm_plan_create(const dt_net *net, int n_units, const size_t *unit_lo,
                                  int P) {
    DT_ASSERT(net && unit_lo && n_units >= 0 && P >= 1);
    // the trainable tensors by offset
    int nt = 0;
    int *idx = mallocCheck(((size_t)net->n_params + 1) * sizeof(int));
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        if (!p->trainable || p->count == 0) continue;
        int j = nt++;
        while (j > 0 && net->params_table[idx[j - 1]].offset > p->offset) idx[j] = idx[j - 1], j--;
        idx[j] = i;
    }
    dt_norm_plan *pl = callocCheck(1, sizeof *pl);
    pl->P = P;
    grow_ctx g = {0, pl};
    size_t *pos = callocCheck((size_t)P, sizeof(size_t));  // each rank's compact length so far
    int t0 = 0;
    for (int k = 0; k < n_units; k++) {
        size_t ulo = unit_lo[k], len = unit_lo[k + 1] - unit_lo[k];
        for (int r = 0; r < P; r++) {
            size_t a = ulo + dt_shard_lo(len, P, r), b = ulo + dt_shard_lo(len, P, r + 1);
            while (t0 < nt && net->params_table[idx[t0]].offset +
                                  net->params_table[idx[t0]].count <= a)
                t0++;
            for (int t = t0; t < nt && net->params_table[idx[t]].offset < b; t++) {
                const dt_param *p = &net->params_table[idx[t]];
                size_t lo = p->offset > a ? p->offset : a;
                size_t hi = p->offset + p->count < b ? p->offset + p->count : b;
                if (lo < hi) add_segment(&g, lo, hi, idx[t], r, pos[r] + (lo - a));
            }
            pos[r] += b - a;
        }
    }
    free(pos);
    free(idx);
    return pl;
}

void dt_norm_plan_free(dt_norm_plan *pl) {
    if (!pl) return;
    free(pl->lo), free(pl->hi), free(pl->at), free(pl->param), free(pl->owner);
    free(pl);
}

// Where segment s of x lies: compact (its owner's buffer) or at its global offset.
static size_t where(const dt_norm_plan *pl, int s, int compact) {
    return compact ? pl->at[s] : pl->lo[s];
}

static int mine(const dt_norm_plan *pl, int s, int rank) {
    return rank < 0 || pl->owner[s] == rank;
}

// out[s] = |x_s|^2 for the segments of `rank` that pass `want` (NULL: all), 0 elsewhere; one
// device synchronisation (sumsq_many).
static void sumsq_where(const dt_norm_plan *pl, dt_device *d, int rank, const float *x,
                        int compact, const dt_net *net, int weights_only, double *out) {
    int m = 0;
    const float **px = mallocCheck(((size_t)pl->n + 1) * sizeof *px);
    size_t *pn = mallocCheck(((size_t)pl->n + 1) * sizeof *pn);
    int *slot = mallocCheck(((size_t)pl->n + 1) * sizeof *slot);
    double *got = mallocCheck(((size_t)pl->n + 1) * sizeof *got);
    for (int s = 0; s < pl->n; s++) {
        out[s] = 0.0;
        if (!mine(pl, s, rank)) continue;
        if (weights_only && net->params_table[pl->param[s]].kind != DT_PARAM_WEIGHT) continue;
        px[m] = x + where(pl, s, compact), pn[m] = pl->hi[s] - pl->lo[s], slot[m++] = s;
    }
    if (m) d->sumsq_many(d, m, px, pn, got);
    for (int j = 0; j < m; j++) out[slot[j]] = got[j];
    free(px), free(pn), free(slot), free(got);
}

void dt_norm_plan_sumsq(const dt_norm_plan *pl, dt_device *d, int rank, const float *x,
                        int compact, double *out) {
    DT_ASSERT(pl && d && out && (x || pl->n == 0));
    if (pl->n) sumsq_where(pl, d, rank, x, compact, NULL, 0, out);
}

double dt_norm_plan_total(const dt_norm_plan *pl, const double *v) {
    double s = 0.0;
    for (int k = 0; k < pl->n; k++) s += v[k];
    return s;
}

// ---- AdamW and LAMB over the segments ----

// Weight decay and LAMB's trust ratio on weights only, as optim.c's decays().
static int decays(const dt_param *p) { return p->kind == DT_PARAM_WEIGHT; }

void dt_optim_step_plan(dt_optim *opt, dt_net *net, const dt_norm_plan *pl, int rank,
                        float *w, int w_compact, const float *g, int g_compact, float lr,
                        dt_sum_fn sum, void *ctx) {
    DT_ASSERT(opt && net && pl && w && g && net->dev == opt->dev);
    DT_ASSERT(opt->cfg.kind == DT_OPT_ADAMW || opt->cfg.kind == DT_OPT_LAMB);
    DT_ASSERT(rank >= 0 || !opt->sharded);  // (a sharded state holds one rank's segments)
    const dt_optim_config *c = &opt->cfg;
    dt_device *d = opt->dev;
    int s_compact = opt->sharded;  // the state: compact when sharded (stage 1: its shard)
    double t = (double)(opt->step + 1);  // bias corrections in double, as optim.c
    double bc1 = 1.0 - pow(c->beta1, t), bc2 = 1.0 - pow(c->beta2, t);
    for (int s = 0; s < pl->n; s++) {  // LAMB: every direction first, then the norms
        if (!mine(pl, s, rank)) continue;
        const dt_param *p = &net->params_table[pl->param[s]];
        size_t n = pl->hi[s] - pl->lo[s], st = where(pl, s, s_compact);
        float *ws = w + where(pl, s, w_compact), *m = opt->velocity + st, *v = opt->second + st;
        const float *gs = g + where(pl, s, g_compact);
        float wd = decays(p) ? c->weight_decay : 0.0f;
        if (c->kind == DT_OPT_ADAMW)
            d->adamw_update(d, ws, gs, m, v, n, lr, c->beta1, c->beta2, c->eps, wd,
                            (float)((double)lr / bc1), (float)sqrt(bc2));
        else
            d->lamb_direction(d, ws, gs, m, v, opt->direction + st, n, c->beta1, c->beta2,
                              c->eps, wd, (float)bc1, (float)bc2);
    }
    if (c->kind == DT_OPT_LAMB && pl->n) {
        // |w|^2 and |r|^2 of each segment of a weight tensor, then summed over the ranks
        size_t n2 = 2 * (size_t)pl->n;
        double *sq = mallocCheck(n2 * sizeof(double));
        sumsq_where(pl, d, rank, w, w_compact, net, 1, sq);
        sumsq_where(pl, d, rank, opt->direction, s_compact, net, 1, sq + pl->n);
        if (sum) sum(ctx, sq, n2);
        double wsq = 0.0, rsq = 0.0;  // the current tensor's, in ascending segment order
        for (int s = 0; s < pl->n; s++) {
            const dt_param *p = &net->params_table[pl->param[s]];
            if (s == 0 || pl->param[s] != pl->param[s - 1]) {
                wsq = rsq = 0.0;
                for (int e = s; e < pl->n && pl->param[e] == pl->param[s]; e++)
                    wsq += sq[e], rsq += sq[pl->n + e];
            }
            if (!mine(pl, s, rank)) continue;
            double ratio = 1.0;  // phi(|w|)/|r| with phi the identity; 1 where a norm is 0
            if (decays(p)) {
                double wn = sqrt(wsq), rn = sqrt(rsq);
                if (wn > 0.0 && rn > 0.0) ratio = wn / rn;
            }
            d->axpy(d, (float)(-(double)lr * ratio), opt->direction + where(pl, s, s_compact),
                    w + where(pl, s, w_compact), pl->hi[s] - pl->lo[s]);
        }
        free(sq);
    }
    opt->step++;
}
