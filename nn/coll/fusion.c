// fusion.c — the gradient-fusion planner of fusion.h: parsing --fusion, checking the
// events, and choosing bucket split points by byte threshold (Horovod / PyTorch DDP) or by
// dynamic programming over the one-channel cost model (Jia et al. 2018 "tensor fusion";
// Shi, Wang, Chu 2019 "MG-WFBP"). Not here: the allreduces themselves (coll.h), the α-β-γ
// cost figures (the caller's cost function), the trainer that measures ready times.
//
// Vocabulary. Only events with a nonempty range ("units") decide anything: an empty event
// carries no bytes, and by fusion.h's rule it sits at the start of the bucket below it (or
// at the end of the last bucket). Units are numbered 0..m-1 in backward order; a plan is a
// list of cuts 0 < c_0 < c_1 < ... < c_{nb-1} = m, bucket k holding units [c_{k-1}, c_k).
// Putting an empty event at the start of the next bucket rather than at the end of the one
// above never hurts: it leaves every bucket's bytes alone and can only lower (ready times
// never decrease) the ready time of the bucket above. So the best plan over cuts between
// units is the best plan over every partition of the events into nonempty buckets.
#include "fusion.h"
#include "../opt_table.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------- parsing --fusion

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

static int same_word(const char *a, const char *b) {  // ASCII case-insensitive equality
    for (; *a && *b; a++, b++)
        if (lower((unsigned char)*a) != lower((unsigned char)*b)) return 0;
    return *a == *b;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int bad_fusion(const char *s, dt_error *err) {
    return dt_opt_bad(err, "--fusion", s ? s : "(null)", "a fusion spec: " DT_FUSION_VALID);
}

// A unit suffix's size in bytes, or 0 when it is not one.
static double unit_bytes(const char *u) {
    static const struct { char name[4]; double bytes; } units[] = {  // no pointers: no relocated data
        {"", 1.0},          {"b", 1.0},           {"kb", 1e3},
        {"mb", 1e6},        {"gb", 1e9},          {"kib", 1024.0},
        {"mib", 1048576.0}, {"gib", 1073741824.0},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (same_word(u, units[i].name)) return units[i].bytes;
    return 0.0;
}

// "64MB", "1.5MiB", "1000000": digits, an optional fraction, an optional unit.
static int parse_bytes(const char *s, size_t *out) {
    const char *p = s;
    if (!is_digit(*p)) return -1;
    double whole = 0.0, frac = 0.0, scale = 1.0;
    for (; is_digit(*p); p++) whole = whole * 10.0 + (*p - '0');
    if (*p == '.') {
        p++;
        if (!is_digit(*p)) return -1;
        for (; is_digit(*p); p++) scale /= 10.0, frac += (*p - '0') * scale;
    }
    double unit = unit_bytes(p);
    if (unit == 0.0) return -1;
    double v = nearbyint((whole + frac) * unit);  // to the nearest byte
    // above 2^53 a double no longer holds every integer: the parse would not be exact
    if (!(v >= 0.0) || v > 9007199254740992.0 || v > (double)SIZE_MAX) return -1;
    *out = (size_t)v;
    return 0;
}

int dt_fusion_parse(const char *s, dt_fusion_opts *o, dt_error *err) {
    if (!s || !o) return bad_fusion(s, err);
    dt_fusion_opts r = {DT_FUSION_NONE, 0, 0};
    if (same_word(s, "none")) {
        r.mode = DT_FUSION_NONE;
    } else if (same_word(s, "auto")) {
        r.mode = DT_FUSION_AUTO;
    } else if (strncmp(s, "segments:", 9) == 0) {
        const char *p = s + 9;
        long k = 0;
        if (!is_digit(*p)) return bad_fusion(s, err);
        for (; is_digit(*p); p++) {
            k = k * 10 + (*p - '0');
            if (k > 1000000) return bad_fusion(s, err);
        }
        if (*p || k < 1) return bad_fusion(s, err);
        r.mode = DT_FUSION_SEGMENTS;
        r.segments = (int)k;
    } else {
        if (parse_bytes(s, &r.bytes) != 0) return bad_fusion(s, err);
        r.mode = DT_FUSION_BYTES;
    }
    *o = r;
    return 0;
}

char *dt_fusion_format(const dt_fusion_opts *o, char *buf, size_t n) {
    static const struct { char name[4]; size_t bytes; } units[] = {
        {"GiB", (size_t)1 << 30}, {"GB", 1000000000}, {"MiB", (size_t)1 << 20},
        {"MB", 1000000},          {"KiB", 1024},      {"KB", 1000},
    };
    if (!buf || n == 0) return buf;
    switch (o->mode) {
    case DT_FUSION_NONE: snprintf(buf, n, "none"); break;
    case DT_FUSION_AUTO: snprintf(buf, n, "auto"); break;
    case DT_FUSION_SEGMENTS: snprintf(buf, n, "segments:%d", o->segments); break;
    case DT_FUSION_BYTES:
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (o->bytes >= units[i].bytes && o->bytes % units[i].bytes == 0) {
                snprintf(buf, n, "%zu%s", o->bytes / units[i].bytes, units[i].name);
                return buf;
            }
        snprintf(buf, n, "%zuB", o->bytes);
        break;
    default: snprintf(buf, n, "?"); break;
    }
    return buf;
}

// ---------------------------------------------------------------- checking the input

static int check_events(const dt_grad_event *ev, int n_ev, size_t elem_bytes, dt_error *err) {
    if (n_ev < 0) return dt_fail(err, DT_EXIT_USAGE, "fusion plan: %d events (expected >= 0)", n_ev);
    if (n_ev > 0 && !ev) return dt_fail(err, DT_EXIT_USAGE, "fusion plan: NULL event array");
    if (elem_bytes == 0)
        return dt_fail(err, DT_EXIT_USAGE, "fusion plan: elem_bytes 0 (expected 2, 4 or 8)");
    for (int i = 0; i < n_ev; i++) {
        if (!isfinite(ev[i].ready))
            return dt_fail(err, DT_EXIT_USAGE,
                           "fusion plan: event %d has ready time %g (expected a finite number "
                           "of seconds)", i, ev[i].ready);
        if (i > 0 && ev[i].ready < ev[i - 1].ready)
            return dt_fail(err, DT_EXIT_USAGE,
                           "fusion plan: event %d is ready at %g s, before event %d (%g s): "
                           "events must come in backward order", i, ev[i].ready, i - 1,
                           ev[i - 1].ready);
        if (ev[i].lo > ev[i].hi)
            return dt_fail(err, DT_EXIT_USAGE, "fusion plan: event %d has range [%zu, %zu) "
                           "(expected lo <= hi)", i, ev[i].lo, ev[i].hi);
        if (i > 0 && ev[i].hi != ev[i - 1].lo)
            return dt_fail(err, DT_EXIT_USAGE,
                           "fusion plan: event %d ends at %zu but event %d starts at %zu: the "
                           "ranges must tile the gradient buffer downwards", i, ev[i].hi, i - 1,
                           ev[i - 1].lo);
    }
    if (n_ev > 0 && ev[n_ev - 1].lo != 0)
        return dt_fail(err, DT_EXIT_USAGE, "fusion plan: the last event ends at element %zu "
                       "(expected 0: the ranges must tile [0, n_trainable))", ev[n_ev - 1].lo);
    if (n_ev > 0 && ev[0].hi > SIZE_MAX / elem_bytes)
        return dt_fail(err, DT_EXIT_USAGE, "fusion plan: %zu elements of %zu bytes overflow "
                       "size_t", ev[0].hi, elem_bytes);
    return 0;
}

static int check_opts(const dt_fusion_opts *o, dt_comm_cost_fn cost, dt_bucket *out, int n_ev,
                      dt_error *err) {
    if (!o) return dt_fail(err, DT_EXIT_USAGE, "fusion plan: NULL options");
    if (o->mode != DT_FUSION_NONE && o->mode != DT_FUSION_BYTES &&
        o->mode != DT_FUSION_SEGMENTS && o->mode != DT_FUSION_AUTO)
        return dt_fail(err, DT_EXIT_USAGE, "fusion plan: unknown mode %d", (int)o->mode);
    if (o->mode == DT_FUSION_SEGMENTS && o->segments < 1)
        return dt_fail(err, DT_EXIT_USAGE, "--fusion segments:%d: expected K >= 1",
                       o->segments);
    if (!cost) return dt_fail(err, DT_EXIT_USAGE, "fusion plan: NULL cost function");
    if (n_ev > 0 && !out) return dt_fail(err, DT_EXIT_USAGE, "fusion plan: NULL bucket array");
    return 0;
}

// ---------------------------------------------------------------- units and costs

// What the planners share: the events, the units (indices of the nonempty events) and the
// cost model, whose answers are checked as they come.
typedef struct {
    const dt_grad_event *ev;
    int n_ev;
    const int *unit;  // unit[u] = index of the u-th nonempty event
    int m;
    size_t elem_bytes;
    dt_comm_cost_fn cost;
    void *ctx;
    dt_error *err;
} planner;

// Bytes of a bucket holding units [a, b), a < b.
static size_t units_bytes(const planner *p, int a, int b) {
    return (p->ev[p->unit[a]].hi - p->ev[p->unit[b - 1]].lo) * p->elem_bytes;
}

// Ready time of a bucket whose last unit is b-1: its last event is that unit's event, or
// the very last event for the last bucket (it also holds the trailing empty events).
static double units_ready(const planner *p, int b) {
    return b == p->m ? p->ev[p->n_ev - 1].ready : p->ev[p->unit[b - 1]].ready;
}

static int priced(const planner *p, size_t bytes, double *c) {
    *c = p->cost(p->ctx, bytes);
    if (!isfinite(*c) || *c < 0.0)
        return dt_fail(p->err, DT_EXIT_USAGE, "fusion plan: the cost model gave %g s for %zu "
                       "bytes (expected a finite time >= 0)", *c, bytes);
    return 0;
}

// ---------------------------------------------------------------- the planners
// Each fills cut[0..nb) (see the top of the file) and returns nb, or -1.

static int plan_none(const planner *p, int *cut) {
    for (int u = 0; u < p->m; u++) cut[u] = u + 1;
    return p->m;
}

// Horovod's fusion threshold / DDP's bucket_cap: close the bucket at the first unit that
// brings it to >= threshold bytes; whatever is left forms the last bucket.
static int plan_bytes(const planner *p, size_t threshold, int *cut) {
    int nb = 0;
    size_t held = 0;
    for (int u = 0; u < p->m; u++) {
        const dt_grad_event *e = &p->ev[p->unit[u]];
        held += (e->hi - e->lo) * p->elem_bytes;
        if (held >= threshold || u == p->m - 1) cut[nb++] = u + 1, held = 0;
    }
    return nb;
}

// Exactly k buckets (1 <= k <= m) minimising the finish of the last allreduce.
// F[j][b] = earliest finish of the j-th bucket when j buckets hold units [0, b):
//     F[j][b] = min over a in [j-1, b) of  max(ready(b), F[j-1][a]) + cost(bytes [a, b)),
//     F[0][0] = -inf (nothing before the first bucket), F[0][a > 0] = +inf (impossible).
// Exact (Bellman's principle): the last bucket's finish max(ready, f) + c is nondecreasing
// in the finish f of the bucket before it, so some optimal plan for [0, b) with j buckets
// ends with an optimal plan for [0, a) with j-1 buckets, and the minimum over a covers it.
static int plan_segments(const planner *p, int k, int *cut) {
    int m = p->m;
    size_t w = (size_t)m + 1;
    double *F = mallocCheck((size_t)(k + 1) * w * sizeof(double));
    int *arg = mallocCheck((size_t)(k + 1) * w * sizeof(int));
    for (size_t i = 0; i < (size_t)(k + 1) * w; i++) F[i] = INFINITY, arg[i] = -1;
    F[0] = -INFINITY;
    int rc = k;
    for (int b = 1; b <= m && rc >= 0; b++) {
        double ready = units_ready(p, b);
        for (int a = 0; a < b; a++) {  // the last bucket is units [a, b): price it once
            double c;
            if (priced(p, units_bytes(p, a, b), &c) != 0) { rc = -1; break; }
            int jmax = k < a + 1 ? k : a + 1;  // [0, a) makes at most a buckets
            for (int j = 1; j <= jmax; j++) {
                double prev = F[(size_t)(j - 1) * w + a];
                if (prev == INFINITY) continue;  // [0, a) cannot make j-1 buckets
                double f = fmax(ready, prev) + c;
                size_t at = (size_t)j * w + b;
                if (f < F[at]) F[at] = f, arg[at] = a;  // ties keep the smallest a
            }
        }
    }
    if (rc >= 0)
        for (int j = k, b = m; j >= 1; j--) {  // walk the choices back from F[k][m]
            cut[j - 1] = b;
            b = arg[(size_t)j * w + b];
            DT_ASSERT(b >= 0);
        }
    free(F), free(arg);
    return rc;
}

// Any number of buckets: G[b] = min over a < b of max(ready(b), G[a]) + cost(bytes [a, b)),
// G[0] = -inf; exact for the same reason as plan_segments.
static int plan_auto(const planner *p, int *cut) {
    int m = p->m;
    double *G = mallocCheck(((size_t)m + 1) * sizeof(double));
    int *arg = mallocCheck(((size_t)m + 1) * sizeof(int));
    G[0] = -INFINITY, arg[0] = -1;
    int rc = 0;
    for (int b = 1; b <= m && rc == 0; b++) {
        double ready = units_ready(p, b);
        G[b] = INFINITY, arg[b] = -1;
        for (int a = 0; a < b; a++) {
            double c;
            if (priced(p, units_bytes(p, a, b), &c) != 0) { rc = -1; break; }
            double f = fmax(ready, G[a]) + c;
            if (f < G[b]) G[b] = f, arg[b] = a;
        }
    }
    int nb = 0;
    if (rc == 0) {
        for (int b = m; b > 0; b = arg[b]) cut[nb++] = b;  // backwards: reverse below
        for (int i = 0; i < nb / 2; i++) {
            int t = cut[i];
            cut[i] = cut[nb - 1 - i], cut[nb - 1 - i] = t;
        }
    }
    free(G), free(arg);
    return rc == 0 ? nb : -1;
}

// Turn cuts into buckets: event ranges, element ranges, and the modelled schedule.
static int fill_buckets(const planner *p, const int *cut, int nb, dt_bucket *out) {
    double finish = -INFINITY;
    for (int k = 0; k < nb; k++) {
        int a = k == 0 ? 0 : cut[k - 1], b = cut[k];
        dt_bucket *bk = &out[k];
        bk->first_event = a == 0 ? 0 : p->unit[a - 1] + 1;
        bk->last_event = b == p->m ? p->n_ev - 1 : p->unit[b - 1];
        bk->hi = p->ev[bk->first_event].hi;
        bk->lo = p->ev[bk->last_event].lo;
        double c;
        if (priced(p, units_bytes(p, a, b), &c) != 0) return -1;
        bk->start = fmax(units_ready(p, b), finish);
        bk->finish = finish = bk->start + c;
    }
    return nb;
}

int dt_fusion_plan(const dt_grad_event *ev, int n_ev, size_t elem_bytes,
                   const dt_fusion_opts *o, dt_comm_cost_fn cost, void *ctx, dt_bucket *out,
                   dt_error *err) {
    if (check_events(ev, n_ev, elem_bytes, err) != 0) return -1;
    if (check_opts(o, cost, out, n_ev, err) != 0) return -1;
    int *unit = mallocCheck(((size_t)n_ev + 1) * sizeof(int));
    int m = 0;
    for (int i = 0; i < n_ev; i++)
        if (ev[i].lo < ev[i].hi) unit[m++] = i;
    planner p = {ev, n_ev, unit, m, elem_bytes, cost, ctx, err};
    int *cut = mallocCheck(((size_t)m + 1) * sizeof(int));
    int nb = 0;
    if (m > 0) {
        switch (o->mode) {
        case DT_FUSION_NONE: nb = plan_none(&p, cut); break;
        case DT_FUSION_BYTES: nb = plan_bytes(&p, o->bytes, cut); break;
        case DT_FUSION_SEGMENTS: nb = plan_segments(&p, o->segments < m ? o->segments : m, cut); break;
        case DT_FUSION_AUTO: nb = plan_auto(&p, cut); break;
        }
        if (nb >= 0) nb = fill_buckets(&p, cut, nb, out);
    }
    free(unit), free(cut);
    return nb;
}

double dt_fusion_exposed(const dt_bucket *b, int nb, double backward_end) {
    if (!b || nb <= 0) return 0.0;
    double e = b[nb - 1].finish - backward_end;
    return e > 0.0 ? e : 0.0;
}
