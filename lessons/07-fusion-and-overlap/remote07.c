// remote07.c — lesson 07's grader asks the student's code instead of calling it (the judge's
// side of the split grader, lessons/kit/subject.h): linked in place of student_fusion.c,
// into the grader and into the lesson's dtsim rank program (dtsim_planner.c), so that no
// process that checks, simulates or prints a verdict holds the student's code.
//   plan_bytes, plan_segments  send the events (and the out array as the grader left it),
//       answer plan_segments' calls of the cost model (callback CB07_COST, in this process),
//       and copy back the buckets it wrote and its count.
//   overlap_ready, overlap_finish  send the state the student keeps (next, the requests in
//       flight as ids, the plan), run each library call the student's code makes
//       (CB07_START ... CB07_WAIT) on this process's dt_coll and gradient buffer — the
//       grader's -Wl,--wrap=dt_allreduce_start watches them as before — and take back
//       next and the requests.
// Identical plan requests of one process are asked once (dtsim's 256 ranks plan the same
// events): the student's planner is a function of its arguments. The cost model's answers
// for the sizes a planner asks about travel with the request (a callback per size would
// cost a round trip each, and the dynamic programme asks for thousands).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kit/subject.h"
#include "student_fusion.h"
#include "subject07.h"

// ---- the planner ----
static struct {  // the call in progress (one at a time: the RPC does not yield)
    dt_comm_cost_fn cost;
    void *ctx;
} cur;

static void cb_cost(subject_buf *req, subject_buf *rep) {
    uint64_t bytes = sb_get_u64(req);
    double c = cur.cost ? cur.cost(cur.ctx, (size_t)bytes) : 0;
    sb_put(rep, &c, sizeof c);
}

typedef struct {  // one answered request: its bytes, and the reply
    subject_buf req, rep;
} memo;
static memo memos[16];
static int n_memos;

static int by_size(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

// The cost model's answers for every run of consecutive events (the sizes a planner asks
// about), sent with the request: u64 count, then the sizes ascending, then their costs. The
// subject asks (CB07_COST) only for a size outside the table.
static void cost_table(subject_buf *req, const dt_grad_event *ev, int n_ev, size_t elem,
                       dt_comm_cost_fn cost, void *ctx) {
    size_t n = cost && n_ev > 0 && n_ev <= 4096 ? (size_t)n_ev * ((size_t)n_ev + 1) / 2 : 0, m = 0;
    uint64_t *size = malloc((n + 1) * sizeof *size);
    for (int i = 0; i < n_ev && n; i++)
        for (int j = i; j < n_ev; j++)
            if (ev[i].hi >= ev[j].lo) size[m++] = (uint64_t)(ev[i].hi - ev[j].lo) * elem;
    qsort(size, m, sizeof *size, by_size);
    size_t k = 0;
    for (size_t i = 0; i < m; i++)
        if (!k || size[i] != size[k - 1]) size[k++] = size[i];
    sb_u64(req, k);
    sb_put(req, size, k * sizeof *size);
    for (size_t i = 0; i < k; i++) {
        double c = cost(ctx, (size_t)size[i]);
        sb_put(req, &c, sizeof c);
    }
    free(size);
}

static int plan(uint32_t fn, const dt_grad_event *ev, int n_ev, size_t elem_bytes, uint64_t arg,
                dt_comm_cost_fn cost, void *ctx, dt_bucket *out, const char *name) {
    subject_buf req = {0}, rep = {0};
    sb_u64(&req, (uint64_t)(n_ev > 0 ? n_ev : 0)), sb_u64(&req, elem_bytes), sb_u64(&req, arg);
    sb_put(&req, ev, (size_t)(n_ev > 0 ? n_ev : 0) * sizeof *ev);
    sb_put(&req, out, (size_t)(n_ev > 0 ? n_ev : 0) * sizeof *out);
    cost_table(&req, ev, n_ev, elem_bytes, cost, ctx);
    char what[120];
    snprintf(what, sizeof what, "%s(n_ev=%d, %s=%llu)", name, n_ev,
             fn == SUBJECT07_PLAN_BYTES ? "threshold" : "k", (unsigned long long)arg);
    const subject_buf *got = NULL;
    // a cost model other than the first's gives other costs: memoised only without one, or
    // for the same ctx and function (dtsim's ranks share theirs)
    static dt_comm_cost_fn memo_cost;
    static void *memo_ctx;
    if (memo_cost != cost || memo_ctx != ctx) n_memos = 0, memo_cost = cost, memo_ctx = ctx;
    for (int i = 0; i < n_memos && !got; i++)
        if (memos[i].req.len == req.len && !memcmp(memos[i].req.p, req.p, req.len))
            got = &memos[i].rep;
    if (!got) {
        cur.cost = cost, cur.ctx = ctx;
        const subject_handler cb[] = {cb_cost};
        subject_call_cb(0, fn, &req, &rep, what, cb, 1);
        cur.cost = NULL, cur.ctx = NULL;
        if (n_memos < (int)(sizeof memos / sizeof memos[0])) {
            memo *m = &memos[n_memos++];
            m->req = req, m->rep = rep;
            req = (subject_buf){0};
            got = &m->rep;
        } else {
            got = &rep;
        }
    }
    subject_buf r = *got;
    r.at = 0, r.bad = 0;
    int64_t nb = (int64_t)sb_get_u64(&r);
    if (nb > n_ev || nb < -1) subject_malformed(what);  // -1..n_ev: what out can hold
    sb_get(&r, out, (size_t)(n_ev > 0 ? n_ev : 0) * sizeof *out);
    if (r.bad || r.at != r.len) subject_malformed(what);
    sb_free(&req);
    if (got == &rep) sb_free(&rep);
    return (int)nb;
}

int plan_bytes(const dt_grad_event *ev, int n_ev, size_t elem_bytes, size_t threshold,
               dt_bucket *out) {
    return plan(SUBJECT07_PLAN_BYTES, ev, n_ev, elem_bytes, threshold, NULL, NULL, out,
                "plan_bytes");
}

int plan_segments(const dt_grad_event *ev, int n_ev, size_t elem_bytes, int k,
                  dt_comm_cost_fn cost, void *ctx, dt_bucket *out) {
    return plan(SUBJECT07_PLAN_SEGMENTS, ev, n_ev, elem_bytes, (uint64_t)(int64_t)k, cost, ctx,
                out, "plan_segments");
}

// ---- the overlap: the library calls the student's code makes, run here ----
#define MAX_REQS 65536
static struct {
    overlap_state *s;  // the state of the call in progress
    size_t len;        // elements of s->grads the plan covers
    dt_coll_req *live[MAX_REQS];  // id - 1 -> request
    int n_live;
    const char *what;
} ov;

static dt_coll_req *req_of(uint64_t id) {
    if (id == 0) return NULL;
    if (id > (uint64_t)ov.n_live) subject_malformed(ov.what);
    return ov.live[id - 1];
}
static uint64_t id_of(const dt_coll_req *q) {
    if (!q) return 0;
    for (int i = ov.n_live - 1; i >= 0; i--)
        if (ov.live[i] == q) return (uint64_t)i + 1;
    return 0;
}

static void cb_start(subject_buf *req, subject_buf *rep) {
    int64_t off = (int64_t)sb_get_u64(req);
    uint64_t count = sb_get_u64(req), dtype = sb_get_u64(req);
    if (req->bad || off < 0 || (uint64_t)off > ov.len || count > ov.len - (uint64_t)off ||
        ov.n_live == MAX_REQS) {
        sb_u64(rep, 0);
        const char *m = "dt_allreduce_start: the buffer is not inside the gradient buffer";
        sb_put(rep, m, strlen(m) + 1);
        return;
    }
    dt_error err = {0};
    dt_coll_req *q = dt_allreduce_start(ov.s->coll, ov.s->grads + off, (size_t)count,
                                        (dt_dtype)dtype, &err);
    if (q) ov.live[ov.n_live++] = q;
    sb_u64(rep, q ? (uint64_t)ov.n_live : 0);
    sb_put(rep, err.msg, strlen(err.msg) + 1);
}
static void cb_progress_all(subject_buf *req, subject_buf *rep) {
    (void)req, (void)rep;
    dt_coll_progress_all(ov.s->coll);
}
static void cb_progress(subject_buf *req, subject_buf *rep) {
    dt_coll_req *q = req_of(sb_get_u64(req));
    sb_u64(rep, q ? (uint64_t)dt_allreduce_progress(q) : 1);
}
static void cb_wait(subject_buf *req, subject_buf *rep) {
    (void)rep;
    dt_coll_req *q = req_of(sb_get_u64(req));
    if (q) dt_allreduce_wait(q);
}

static void overlap_call(uint32_t fn, overlap_state *s, int event, const char *name) {
    char what[80];
    snprintf(what, sizeof what, "%s(event %d)", name, event);
    ov.s = s, ov.what = what, ov.len = 0;
    int nb = s->n_buckets < 0 ? 0 : s->n_buckets > OVERLAP_MAX_BUCKETS ? OVERLAP_MAX_BUCKETS
                                                                           : s->n_buckets;
    for (int j = 0; j < nb; j++)
        if (s->plan[j].hi > ov.len) ov.len = s->plan[j].hi;
    subject_buf req = {0}, rep = {0};
    sb_u64(&req, (uint64_t)(int64_t)event), sb_u64(&req, (uint64_t)nb), sb_u64(&req, ov.len);
    sb_u64(&req, (uint64_t)(int64_t)s->next);
    sb_put(&req, s->plan, (size_t)nb * sizeof *s->plan);
    for (int j = 0; j < OVERLAP_MAX_BUCKETS; j++) sb_u64(&req, id_of(s->req[j]));
    const subject_handler cb[CB07_COUNT] = {cb_cost, cb_start, cb_progress_all, cb_progress,
                                            cb_wait};
    subject_call_cb(0, fn, &req, &rep, what, cb, CB07_COUNT);
    s->next = (int)(int64_t)sb_get_u64(&rep);
    for (int j = 0; j < OVERLAP_MAX_BUCKETS; j++) s->req[j] = req_of(sb_get_u64(&rep));
    if (rep.bad || rep.at != rep.len) subject_malformed(what);
    sb_free(&req), sb_free(&rep);
    ov.s = NULL;
}

void overlap_ready(overlap_state *s, int event) {
    overlap_call(SUBJECT07_READY, s, event, "overlap_ready");
}
void overlap_finish(overlap_state *s) { overlap_call(SUBJECT07_FINISH, s, -1, "overlap_finish"); }
