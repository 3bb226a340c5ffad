// subject07.c — the process that runs lesson 07's student_fusion.c (lessons/kit/subject.h):
// a server that answers the grader's calls of plan_bytes, plan_segments, overlap_ready and
// overlap_finish. The student's code reaches the grader's cost model and allreduce library
// only through the functions below, which ask the grader (callbacks, subject07.h): the
// gradient buffer here is an address range no memory backs (its offsets are what travels),
// a request is a handle that names the grader's id. Of dtlab's library nothing is linked
// in (these four calls are the ones calls.txt allows).
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "../kit/subject.h"
#include "student_fusion.h"
#include "subject07.h"

// ---- the cost model: the grader's, from the table sent with the request, else asked ----
static struct {
    uint64_t n, *size;  // ascending
    double *cost;
} table;

static double remote_cost(void *ctx, size_t bytes) {
    (void)ctx;
    for (uint64_t lo = 0, hi = table.n; lo < hi;) {
        uint64_t mid = (lo + hi) / 2;
        if (table.size[mid] == bytes) return table.cost[mid];
        if (table.size[mid] < bytes) lo = mid + 1;
        else hi = mid;
    }
    subject_buf q = {0}, a = {0};
    sb_u64(&q, bytes);
    subject_callback(CB07_COST, &q, &a);
    double c;
    sb_get(&a, &c, sizeof c);
    sb_free(&q), sb_free(&a);
    return c;
}

static void serve_plan(subject_buf *req, subject_buf *rep, int segments) {
    uint64_t n_ev = sb_get_u64(req), elem = sb_get_u64(req), arg = sb_get_u64(req);
    if (req->bad || n_ev > (1u << 24)) exit(2);
    dt_grad_event *ev = malloc((n_ev + 1) * sizeof *ev);
    dt_bucket *out = malloc((n_ev + 1) * sizeof *out);
    sb_get(req, ev, n_ev * sizeof *ev), sb_get(req, out, n_ev * sizeof *out);
    table.n = sb_get_u64(req);
    if (req->bad || table.n > (1u << 26)) exit(2);
    table.size = malloc((table.n + 1) * sizeof *table.size);
    table.cost = malloc((table.n + 1) * sizeof *table.cost);
    sb_get(req, table.size, table.n * sizeof *table.size);
    sb_get(req, table.cost, table.n * sizeof *table.cost);
    int nb = segments ? plan_segments(ev, (int)n_ev, elem, (int)(int64_t)arg, remote_cost, NULL,
                                      out)
                      : plan_bytes(ev, (int)n_ev, elem, arg, out);
    sb_u64(rep, (uint64_t)(int64_t)nb);
    sb_put(rep, out, n_ev * sizeof *out);
    free(ev), free(out), free(table.size), free(table.cost);
    memset(&table, 0, sizeof table);
}
static void serve_plan_bytes(subject_buf *req, subject_buf *rep) { serve_plan(req, rep, 0); }
static void serve_plan_segments(subject_buf *req, subject_buf *rep) { serve_plan(req, rep, 1); }

// ---- the allreduce library: the grader's, asked for each call ----
static float *grads_base;  // the gradient buffer's stand-in (PROT_NONE: reading it faults)
static size_t grads_len;

static dt_coll_req *handle(uint64_t id) {
    return id ? (dt_coll_req *)(SUBJECT07_HANDLE_BASE + id * 64) : NULL;
}
static uint64_t id_of(const dt_coll_req *q) {
    uintptr_t h = (uintptr_t)q;
    if (!q) return 0;
    if (h < SUBJECT07_HANDLE_BASE || (h - SUBJECT07_HANDLE_BASE) % 64) return UINT64_MAX;
    return (h - SUBJECT07_HANDLE_BASE) / 64;
}

dt_coll_req *dt_allreduce_start(dt_coll *c, void *buf, size_t count, dt_dtype dtype,
                                dt_error *err) {
    (void)c;
    subject_buf q = {0}, a = {0};
    sb_u64(&q, (uint64_t)((float *)buf - grads_base)), sb_u64(&q, count);
    sb_u64(&q, (uint64_t)dtype);
    subject_callback(CB07_START, &q, &a);
    uint64_t id = sb_get_u64(&a);
    if (!id && err) {
        memset(err, 0, sizeof *err);
        size_t n = a.len - a.at < sizeof err->msg - 1 ? a.len - a.at : sizeof err->msg - 1;
        sb_get(&a, err->msg, n);
    }
    sb_free(&q), sb_free(&a);
    return handle(id);
}
static uint64_t ask_about(int cb, const dt_coll_req *r) {
    subject_buf q = {0}, a = {0};
    sb_u64(&q, id_of(r));
    subject_callback((uint32_t)cb, &q, &a);
    uint64_t v = a.len ? sb_get_u64(&a) : 0;
    sb_free(&q), sb_free(&a);
    return v;
}
int dt_allreduce_progress(dt_coll_req *r) { return (int)ask_about(CB07_PROGRESS, r); }
void dt_allreduce_wait(dt_coll_req *r) { ask_about(CB07_WAIT, r); }
void dt_coll_progress_all(dt_coll *c) {
    (void)c;
    subject_buf q = {0}, a = {0};
    subject_callback(CB07_PROGRESS_ALL, &q, &a);
    sb_free(&a);
}

static void serve_overlap(subject_buf *req, subject_buf *rep, int finish) {
    int event = (int)(int64_t)sb_get_u64(req);
    uint64_t nb = sb_get_u64(req), len = sb_get_u64(req);
    if (req->bad || nb > OVERLAP_MAX_BUCKETS || len > ((uint64_t)1 << 40)) exit(2);
    if (len + 1 > grads_len) {  // a stand-in as long as the plan's buffer
        if (grads_base) munmap(grads_base, (grads_len + 1) * sizeof(float));
        grads_len = len + 1;
        grads_base = mmap(NULL, (grads_len + 1) * sizeof(float), PROT_NONE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (grads_base == MAP_FAILED) exit(3);
    }
    static dt_bucket plan[OVERLAP_MAX_BUCKETS];
    overlap_state s;
    memset(&s, 0, sizeof s);
    s.coll = (dt_coll *)(SUBJECT07_HANDLE_BASE - 4096);  // opaque: the grader's
    s.grads = grads_base, s.plan = plan, s.n_buckets = (int)nb;
    s.next = (int)(int64_t)sb_get_u64(req);
    sb_get(req, plan, nb * sizeof *plan);
    for (int j = 0; j < OVERLAP_MAX_BUCKETS; j++) s.req[j] = handle(sb_get_u64(req));
    if (finish) overlap_finish(&s);
    else overlap_ready(&s, event);
    sb_u64(rep, (uint64_t)(int64_t)s.next);
    for (int j = 0; j < OVERLAP_MAX_BUCKETS; j++) sb_u64(rep, id_of(s.req[j]));
}
static void serve_ready(subject_buf *req, subject_buf *rep) { serve_overlap(req, rep, 0); }
static void serve_finish(subject_buf *req, subject_buf *rep) { serve_overlap(req, rep, 1); }

int main(void) {
    const subject_handler h[] = {serve_plan_bytes, serve_plan_segments, serve_ready,
                                 serve_finish};
    return subject_serve(h, 4);
}
