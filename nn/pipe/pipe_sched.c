// pipe_sched.c — see pipe_sched.h: the pipeline schedules as data, and one run of a
// schedule against its ops' costs (the stages' clocks, as max-plus: an op starts when its
// stage is free and its input has arrived).
#include "pipe/pipe_sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char NAMES[][12] = {"gpipe", "1f1b", "interleaved"};  // no pointers: read-only

int dt_pipe_kind_parse(const char *name) {
    for (int k = 0; name && k < 3; k++)
        if (!strcmp(name, NAMES[k])) return k;
    return -1;
}

const char *dt_pipe_kind_name(dt_pipe_kind k) {
    return (int)k >= 0 && (int)k < 3 ? NAMES[k] : "?";
}

void dt_pipe_free(dt_pipe_sched *s) {
    free(s->ops), free(s->start);
    memset(s, 0, sizeof *s);
}

static void push(dt_pipe_sched *s, int *n, int bwd, int chunk, int micro) {
    s->ops[(*n)++] = (dt_pipe_op){bwd, chunk, micro};
}

// The k-th forward (or backward) of a stage under interleaving, as Megatron-LM orders them
// (Narayanan et al. 2021, §2.2.2): p micro-batches through chunk 0, the same p through chunk
// 1, ... through chunk v-1, then the next p micro-batches; backwards run the chunks from the
// last.
static void interleaved_op(const dt_pipe_sched *s, int k, int bwd, int *chunk, int *micro) {
    int p = s->p, v = s->v;
    int c = (k % (p * v)) / p;
    *chunk = bwd ? v - 1 - c : c;
    *micro = (k / (p * v)) * p + k % p;
}

int dt_pipe_build(dt_pipe_sched *s, dt_pipe_kind k, int p, int m, int v, dt_error *err) {
    memset(s, 0, sizeof *s);
    if (p < 1 || p > 4096)
        return dt_fail(err, DT_EXIT_USAGE, "pipeline stages: %d, expected 1 to 4096", p);
    if (m < 1 || m > 1 << 20)
        return dt_fail(err, DT_EXIT_USAGE, "micro-batches: %d, expected 1 to 1048576", m);
    if (k == DT_PIPE_INTERLEAVED) {
        if (v < 2 || v > 64)
            return dt_fail(err, DT_EXIT_USAGE, "interleaved pipeline: %d chunks per stage, "
                           "expected 2 to 64 (1 is the plain 1f1b)", v);
        if (m % p)
            return dt_fail(err, DT_EXIT_USAGE, "interleaved pipeline: %d micro-batches is not "
                           "a multiple of the %d stages (Megatron-LM's schedule needs one)", m, p);
    } else if (v != 1) {
        return dt_fail(err, DT_EXIT_USAGE, "%d chunks per stage: only the interleaved "
                       "schedule runs more than one", v);
    }
    s->p = p, s->m = m, s->v = v;
    s->ops = callocCheck((size_t)p * 2 * m * v, sizeof *s->ops);
    s->start = callocCheck((size_t)p + 1, sizeof *s->start);
    int n = 0;
    for (int st = 0; st < p; st++) {
        s->start[st] = n;
        if (k == DT_PIPE_GPIPE) {
            for (int j = 0; j < m; j++) push(s, &n, 0, 0, j);
            for (int j = 0; j < m; j++) push(s, &n, 1, 0, j);
            continue;
        }
        int total = m * v;
        int warm = k == DT_PIPE_1F1B ? p - st - 1 : (p - st - 1) * 2 + (v - 1) * p;
        if (warm > total || (k == DT_PIPE_INTERLEAVED && m == p)) warm = total;
        int c, j;
        for (int i = 0; i < warm; i++) {
            if (v > 1) interleaved_op(s, i, 0, &c, &j); else c = 0, j = i;
            push(s, &n, 0, c, j);
        }
        for (int i = 0; i < total - warm; i++) {
            if (v > 1) interleaved_op(s, warm + i, 0, &c, &j); else c = 0, j = warm + i;
            push(s, &n, 0, c, j);
            if (v > 1) interleaved_op(s, i, 1, &c, &j); else c = 0, j = i;
            push(s, &n, 1, c, j);
        }
        for (int i = total - warm; i < total; i++) {
            if (v > 1) interleaved_op(s, i, 1, &c, &j); else c = 0, j = i;
            push(s, &n, 1, c, j);
        }
    }
    s->start[p] = n;
    return 0;
}

// Each stage holds each of its 2 v m ops exactly once
static int well_formed(const dt_pipe_sched *s, char *why, size_t why_n) {
    int p = s->p, m = s->m, v = s->v;
    char *seen = callocCheck((size_t)2 * v * m, 1);
    int rc = 0;
    for (int st = 0; st < p && !rc; st++) {
        memset(seen, 0, (size_t)2 * v * m);
        for (int i = s->start[st]; i < s->start[st + 1] && !rc; i++) {
            const dt_pipe_op *o = &s->ops[i];
            if (o->bwd < 0 || o->bwd > 1 || o->chunk < 0 || o->chunk >= v || o->micro < 0 ||
                o->micro >= m) {
                snprintf(why, why_n, "stage %d, op %d: %s of chunk %d, micro-batch %d is "
                         "outside the %d chunks and %d micro-batches", st, i - s->start[st],
                         o->bwd ? "backward" : "forward", o->chunk, o->micro, v, m);
                rc = -1;
            } else if (seen[(o->bwd * v + o->chunk) * m + o->micro]++) {
                snprintf(why, why_n, "stage %d, op %d: the %s of chunk %d, micro-batch %d "
                         "runs twice", st, i - s->start[st], o->bwd ? "backward" : "forward",
                         o->chunk, o->micro);
                rc = -1;
            }
        }
        for (int q = 0; q < 2 * v * m && !rc; q++)
            if (!seen[q]) {
                snprintf(why, why_n, "stage %d never runs the %s of chunk %d, micro-batch %d",
                         st, q / (v * m) ? "backward" : "forward", q / m % v, q % m);
                rc = -1;
            }
    }
    free(seen);
    return rc;
}

int dt_pipe_run(const dt_pipe_sched *s, const dt_pipe_cost *c, int n_costs, dt_pipe_price *out,
                int *inflight, char *why, size_t why_n) {
    if (well_formed(s, why, why_n)) return -1;
    int p = s->p, m = s->m, v = s->v, V = p * v;
    if (n_costs != 1 && n_costs != V) {
        snprintf(why, why_n, "%d costs for %d virtual stages (1 or %d expected)", n_costs, V, V);
        return -1;
    }
#define COST(k) (&c[n_costs == 1 ? 0 : (k)])
    double *done = mallocCheck((size_t)2 * V * m * sizeof(double));  // [bwd][vstage][micro]
    for (size_t i = 0; i < (size_t)2 * V * m; i++) done[i] = -1;
#define DONE(b, k, j) done[((size_t)(b) * V + (k)) * m + (j)]
    int *next = callocCheck((size_t)p, sizeof(int)), *live = callocCheck((size_t)p, sizeof(int));
    double *free_at = callocCheck((size_t)p, sizeof(double));
    double *busy = callocCheck((size_t)p, sizeof(double));
    int *peak = callocCheck((size_t)p, sizeof(int));
    int progress = 1, left = s->start[p];
    while (progress && left) {
        progress = 0;
        for (int st = 0; st < p; st++)
            for (; s->start[st] + next[st] < s->start[st + 1]; next[st]++) {
                const dt_pipe_op *o = &s->ops[s->start[st] + next[st]];
                int k = o->chunk * p + st, j = o->micro;
                // the input: the previous virtual stage's activations, the next one's
                // gradient; the last virtual stage's backward starts from its own forward
                // (and every backward waits, through that chain, for its own forward)
                int dk = o->bwd ? (k == V - 1 ? k : k + 1) : k - 1, db = o->bwd && k < V - 1;
                double ready = 0;
                if (dk >= 0) {
                    if (DONE(db, dk, j) < 0) break;
                    ready = DONE(db, dk, j) + (dk % p != st ? COST(dk)->p2p : 0.0);
                }
                double dur = o->bwd ? COST(k)->recompute + COST(k)->bwd : COST(k)->fwd;
                double start = free_at[st] > ready ? free_at[st] : ready;
                free_at[st] = start + dur, busy[st] += dur;
                DONE(o->bwd, k, j) = free_at[st];
                live[st] += o->bwd ? -1 : 1;
                if (live[st] > peak[st]) peak[st] = live[st];
                progress = 1, left--;
            }
    }
    int rc = 0;
    if (left) {
        for (int st = 0; st < p; st++)
            if (s->start[st] + next[st] < s->start[st + 1]) {
                const dt_pipe_op *o = &s->ops[s->start[st] + next[st]];
                snprintf(why, why_n, "deadlock: stage %d waits at its op %d, the %s of chunk %d, "
                         "micro-batch %d, whose input never arrives", st, next[st],
                         o->bwd ? "backward" : "forward", o->chunk, o->micro);
                break;
            }
        rc = -1;
    } else if (out) {
        memset(out, 0, sizeof *out);
        for (int st = 0; st < p; st++) {
            out->step_s = free_at[st] > out->step_s ? free_at[st] : out->step_s;
            out->busy_s = busy[st] > out->busy_s ? busy[st] : out->busy_s;
        }
        for (int st = 0; st < p; st++)
            out->bubble += out->step_s > 0 ? (1.0 - busy[st] / out->step_s) / p : 0.0;
        for (int st = 0; st < p; st++)
            out->max_inflight = peak[st] > out->max_inflight ? peak[st] : out->max_inflight;
    }
    if (!rc && inflight) memcpy(inflight, peak, (size_t)p * sizeof(int));
#undef DONE
#undef COST
    free(done), free(next), free(live), free(free_at), free(busy), free(peak);
    return rc;
}
