// profile_trace.c — the link as dtrain's own allreduce sees it (sim/profile.h:
// dt_profile_fit_traces): α and β fitted to the fusion buckets a training run really sent,
// read from its Chrome trace (`dtrain --trace`, nn/train_trace.c: one "allreduce bucket k"
// event per bucket and step on each rank, with its bytes). A table from dtcoll-bench times
// power-of-two sizes in a loop of their own; these are the buckets' sizes, in the buffer
// backward has just written, between the steps' compute: what dtsim's prediction of that
// run must reproduce.
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "profile.h"

#define MAX_TRACE ((size_t)256 << 20)  // bytes: 1000 traced steps of a deep network
#define MAX_RANKS 1024

typedef struct {
    double bytes, dur;  // dur: seconds
} ar_event;

typedef struct {
    ar_event *ev;
    int n, cap;
} rank_events;

static int by_double(const void *a, const void *b) {
    double u = *(const double *)a, v = *(const double *)b;
    return (u > v) - (u < v);
}

static char *slurp(const char *path, size_t *len, dt_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) return dt_fail(err, DT_EXIT_USAGE, "%s: cannot open it: %s", path, strerror(errno)), NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (size < 0 || (size_t)size > MAX_TRACE) {
        fclose(f);
        return dt_fail(err, DT_EXIT_USAGE, "%s: not a dtrain trace of at most %zu MB", path,
                       MAX_TRACE >> 20), NULL;
    }
    char *buf = mallocCheck((size_t)size + 1);
    *len = fread(buf, 1, (size_t)size, f);
    int bad = ferror(f) || *len != (size_t)size;
    fclose(f);
    if (bad) {
        free(buf);
        return dt_fail(err, DT_EXIT_USAGE, "%s: read error", path), NULL;
    }
    return buf;
}

static double number(const dt_json *v) {
    return v && (v->type == DT_JSON_INT || v->type == DT_JSON_REAL) ? v->d : NAN;
}

// The allreduce events of one trace, per rank (pid) in the order written (step by step,
// bucket by bucket). The number of ranks, or -1 with err.
static int read_trace(const char *path, rank_events *rk, dt_error *err) {
    size_t len = 0;
    char *text = slurp(path, &len, err), msg[160];
    if (!text) return -1;
    dt_json *root = dt_json_parse_flags(text, len, DT_JSON_REALS, msg, sizeof msg);
    free(text);
    if (!root) return dt_fail(err, DT_EXIT_USAGE, "%s: not JSON (%s): expected a dtrain --trace "
                              "file", path, msg);
    const dt_json *other = dt_json_get(root, "otherData"), *evs = dt_json_get(root, "traceEvents");
    const dt_json *prog = other ? dt_json_get(other, "program") : NULL;
    int P = 0;
    const char *bad = NULL;
    if (root->type != DT_JSON_OBJECT || !evs || evs->type != DT_JSON_ARRAY || !prog ||
        prog->type != DT_JSON_STRING || strcmp(prog->s, "dtrain"))
        bad = "expected a dtrain --trace file (otherData.program \"dtrain\", traceEvents)";
    for (const dt_json *e = bad ? NULL : evs->child; e && !bad; e = e->next) {
        const dt_json *name = dt_json_get(e, "name");
        if (e->type != DT_JSON_OBJECT || !name || name->type != DT_JSON_STRING ||
            strncmp(name->s, "allreduce bucket ", 17))
            continue;
        const dt_json *args = dt_json_get(e, "args");
        double pid = number(dt_json_get(e, "pid")), dur = number(dt_json_get(e, "dur"));
        double bytes = args ? number(dt_json_get(args, "bytes")) : NAN;
        if (!(pid >= 0 && pid < MAX_RANKS && pid == floor(pid)) || !(dur > 0) || !isfinite(dur) ||
            !(bytes > 0) || !isfinite(bytes)) {
            bad = "an allreduce event without pid (a rank < 1024), dur > 0 and args.bytes > 0 "
                  "(a trace of an older dtrain?)";
            break;
        }
        int r = (int)pid;
        if (r >= P) P = r + 1;
        rank_events *q = &rk[r];
        if (q->n == q->cap) {
            q->cap = q->cap ? 2 * q->cap : 64;
            q->ev = realloc(q->ev, (size_t)q->cap * sizeof *q->ev);
            DT_ASSERT(q->ev);
        }
        q->ev[q->n++] = (ar_event){bytes, dur * 1e-6};
    }
    dt_json_free(root);
    if (!bad && P < 2) bad = "allreduce events of fewer than 2 ranks: expected a trace of "
                             "mpirun -np 2 (or more) dtrain --trace";
    for (int r = 0; r < P && !bad; r++) {
        if (rk[r].n != rk[0].n) bad = "the ranks traced different numbers of allreduces";
        for (int k = 0; k < rk[r].n && !bad; k++)
            if (rk[r].ev[k].bytes != rk[0].ev[k].bytes) bad = "the ranks' buckets differ";
    }
    if (bad) return dt_fail(err, DT_EXIT_USAGE, "%s: %s", path, bad);
    return P;
}

int dt_profile_fit_traces(const char *const *paths, int n_paths, dt_link_fit *fit, dt_error *err) {
    memset(fit, 0, sizeof *fit);
    rank_events *rk = callocCheck(MAX_RANKS, sizeof *rk);
    ar_event *all = NULL;  // per traced allreduce: its bytes, the shortest of the ranks' times
    int n_all = 0, cap = 0, P = 0, rc = 0;
    for (int f = 0; f < n_paths && !rc; f++) {
        for (int r = 0; r < MAX_RANKS; r++) rk[r].n = 0;
        int p = read_trace(paths[f], rk, err);
        if (p < 0) rc = -1;
        else if (P && p != P)
            rc = dt_fail(err, DT_EXIT_USAGE, "%s: %d ranks, but %s has %d: one link per rank "
                         "count", paths[f], p, paths[0], P);
        for (int k = 0; !rc && k < rk[0].n; k++) {
            double t = INFINITY;
            for (int r = 0; r < p; r++) t = fmin(t, rk[r].ev[k].dur);
            if (n_all == cap) {
                cap = cap ? 2 * cap : 256;
                all = realloc(all, (size_t)cap * sizeof *all);
                DT_ASSERT(all);
            }
            all[n_all++] = (ar_event){rk[0].ev[k].bytes, t};
        }
        P = p > 0 ? p : P;
    }
    for (int r = 0; r < MAX_RANKS; r++) free(rk[r].ev);
    free(rk);
    if (rc) {
        free(all);
        return -1;
    }
    // one row per bucket size: the median of its times (a VM's hiccups are outliers)
    dt_fit_row *row = mallocCheck((size_t)n_all * sizeof *row);
    double *t = mallocCheck((size_t)n_all * sizeof *t);
    char *used = callocCheck((size_t)n_all, 1);
    int n_rows = 0;
    for (int i = 0; i < n_all; i++) {
        if (used[i]) continue;
        int m = 0;
        for (int j = i; j < n_all; j++)
            if (!used[j] && all[j].bytes == all[i].bytes) used[j] = 1, t[m++] = all[j].dur;
        qsort(t, (size_t)m, sizeof *t, by_double);
        double med = m % 2 ? t[m / 2] : 0.5 * (t[m / 2 - 1] + t[m / 2]);
        row[n_rows++] = (dt_fit_row){2.0 * (P - 1) / P * all[i].bytes, med};
    }
    rc = dt_profile_fit_rows(row, n_rows, P, paths[0], "dtrain's buckets", fit, err);
    free(all), free(row), free(t), free(used);
    return rc;
}
