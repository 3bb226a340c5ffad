// subject11.c — the process that runs lesson 11's sharded.c (lessons/kit/subject.h): a
// server that answers the grader's shard_state_init, sharded_step and shard_state_free on
// a mirror of the grader's net (the parameter table, the parameters, this rank's gradient,
// sent with each step and sent back after it) and a cpu device of its own for the kernels.
// What reaches the grader is asked of it (callbacks, subject11.h): the device's alloc and
// free (the grader measures the momentum's bytes) and the collectives, which run there on
// its buffers (the bytes of this mirror's buffer copied over first, the result copied
// back). dtlab's own collectives and sharded optimizer are not linked in: the collectives
// below are the only ones, and the link keeps only what is called (--gc-sections).
#include <stdint.h>
#include <string.h>

#include "../kit/subject.h"
#include "coll/coll_sched.h"
#include "sharded.h"
#include "subject11.h"

// ---- the mirror of the grader's net and the call in progress ----
static dt_net net;
static int rank_, size_;
static dt_device *cpu;

#define MAX_STATES 16
static struct {
    uint64_t id;  // the grader's name for it
    shard_state s;
} states[MAX_STATES];

static shard_state *state(uint64_t id) {
    for (int i = 0; i < MAX_STATES; i++)
        if (states[i].id == id) return &states[i].s;
    for (int i = 0; i < MAX_STATES; i++)
        if (!states[i].id) {
            states[i].id = id;
            memset(&states[i].s, 0, sizeof states[i].s);
            return &states[i].s;
        }
    exit(2);
}

// ---- the device: cpu kernels here, allocations known to the grader ----
#define MAX_PTRS 64
static struct {
    void *p;
    uint64_t id;
} ptrs[MAX_PTRS];
static dt_device proxy;

static void *proxy_alloc(dt_device *d, size_t bytes) {
    (void)d;
    subject_buf q = {0}, a = {0};
    sb_u64(&q, bytes);
    subject_callback(CB11_ALLOC, &q, &a);
    uint64_t id = sb_get_u64(&a);
    void *p = cpu->alloc(cpu, bytes);
    for (int i = 0; i < MAX_PTRS; i++)
        if (!ptrs[i].p) {
            ptrs[i].p = p, ptrs[i].id = id;
            break;
        }
    sb_free(&q), sb_free(&a);
    return p;
}
static void proxy_free(dt_device *d, void *p) {
    (void)d;
    for (int i = 0; i < MAX_PTRS; i++)
        if (p && ptrs[i].p == p) {
            subject_buf q = {0}, a = {0};
            sb_u64(&q, ptrs[i].id);
            subject_callback(CB11_FREE, &q, &a);
            sb_free(&q), sb_free(&a);
            ptrs[i].p = NULL;
        }
    cpu->free(cpu, p);
}
static uint64_t ptr_id(const void *p) {
    for (int i = 0; i < MAX_PTRS; i++)
        if (p && ptrs[i].p == p) return ptrs[i].id;
    return 0;
}

// ---- the library's calls that sharded.c may make (calls.txt), answered by the grader ----
size_t dt_shard_lo(size_t count, int p, int i) { return dt_chunk_lo(count, p, i); }
int dt_coll_rank(const dt_coll *c) { return (void)c, rank_; }
int dt_coll_size(const dt_coll *c) { return (void)c, size_; }

static int which(const void *buf, size_t count) {  // the mirror's buffer it names, or -1
    if (buf == net.grads && count <= net.n_trainable) return BUF11_GRADS;
    if (buf == net.params && count <= net.n_total) return BUF11_PARAMS;
    return -1;
}
static int refuse(dt_error *err, const char *why) {
    if (err) memset(err, 0, sizeof *err), snprintf(err->msg, sizeof err->msg, "%s", why);
    return -1;
}
#define WHERE "in the grader the collectives run on net->grads or net->params (from element 0, even counts: counts NULL, DT_F32)"

// kind: COLL11_*; the reply's return value (or request id), the buffer's elements after
static int64_t coll(int kind, void *buf, size_t count, const size_t *counts, dt_dtype dtype,
                    dt_error *err) {
    int w = which(buf, count);
    if (w < 0 || counts || dtype != DT_F32) return refuse(err, WHERE);
    subject_buf q = {0}, a = {0};
    sb_u64(&q, (uint64_t)kind), sb_u64(&q, (uint64_t)w), sb_u64(&q, count);
    sb_u64(&q, (uint64_t)dtype);
    sb_put(&q, buf, count * sizeof(float));
    subject_callback(CB11_COLL, &q, &a);
    int64_t rc = (int64_t)sb_get_u64(&a);
    if (kind == COLL11_REDUCE_SCATTER || kind == COLL11_ALLGATHER)
        sb_get(&a, buf, count * sizeof(float));
    sb_free(&q), sb_free(&a);
    return rc;
}
int dt_reduce_scatter(dt_coll *c, void *buf, size_t count, const size_t *counts,
                      dt_dtype dtype, dt_error *err) {
    (void)c;
    return (int)coll(COLL11_REDUCE_SCATTER, buf, count, counts, dtype, err);
}
int dt_allgather(dt_coll *c, void *buf, size_t count, const size_t *counts, dt_dtype dtype,
                 dt_error *err) {
    (void)c;
    return (int)coll(COLL11_ALLGATHER, buf, count, counts, dtype, err);
}

// a started collective: a handle that names the grader's id, and what to copy back on wait
#define HANDLE_BASE ((uintptr_t)0x7e5110000000ull)
static struct {
    float *buf;
    size_t count;
    int which;
} started[MAX_PTRS + 1];
static dt_coll_req *start(int kind, void *buf, size_t count, const size_t *counts,
                          dt_dtype dtype, dt_error *err) {
    int64_t id = coll(kind, buf, count, counts, dtype, err);
    if (id <= 0 || id > MAX_PTRS) return NULL;
    started[id].buf = buf, started[id].count = count, started[id].which = which(buf, count);
    return (dt_coll_req *)(HANDLE_BASE + (uintptr_t)id * 64);
}
dt_coll_req *dt_reduce_scatter_start(dt_coll *c, void *buf, size_t count, const size_t *counts,
                                     dt_dtype dtype, dt_error *err) {
    (void)c;
    return start(COLL11_REDUCE_SCATTER_START, buf, count, counts, dtype, err);
}
dt_coll_req *dt_allgather_start(dt_coll *c, void *buf, size_t count, const size_t *counts,
                                dt_dtype dtype, dt_error *err) {
    (void)c;
    return start(COLL11_ALLGATHER_START, buf, count, counts, dtype, err);
}
static uint64_t req_id(const dt_coll_req *r) {
    uintptr_t h = (uintptr_t)r;
    if (h <= HANDLE_BASE || (h - HANDLE_BASE) % 64 || (h - HANDLE_BASE) / 64 > MAX_PTRS) exit(2);
    return (h - HANDLE_BASE) / 64;
}
void dt_allreduce_wait(dt_coll_req *r) {
    uint64_t id = req_id(r);
    subject_buf q = {0}, a = {0};
    sb_u64(&q, id), sb_u64(&q, (uint64_t)started[id].which);
    subject_callback(CB11_WAIT, &q, &a);
    sb_get(&a, started[id].buf, started[id].count * sizeof(float));  // the elements it covered
    sb_free(&q), sb_free(&a);
}
int dt_allreduce_progress(dt_coll_req *r) {
    subject_buf q = {0}, a = {0};
    sb_u64(&q, req_id(r));
    subject_callback(CB11_PROGRESS, &q, &a);
    int done = (int)sb_get_u64(&a);
    sb_free(&q), sb_free(&a);
    return done;
}

// ---- the requests ----
static void serve_init(subject_buf *req, subject_buf *rep) {
    uint64_t id = sb_get_u64(req), n = sb_get_u64(req);
    int r = (int)sb_get_u64(req), p = (int)sb_get_u64(req);
    float m, wd;
    sb_get(req, &m, sizeof m), sb_get(req, &wd, sizeof wd);
    if (req->bad) exit(2);
    rank_ = r, size_ = p;
    memset(&net, 0, sizeof net);
    net.n_trainable = n;  // what init may read (contract: the shard's bounds)
    shard_state *s = state(id);
    shard_state_init(s, &net, &proxy, r, p, m, wd);
    sb_u64(rep, s->lo), sb_u64(rep, s->hi), sb_u64(rep, ptr_id(s->velocity));
    sb_put(rep, &s->momentum, sizeof s->momentum);
    sb_put(rep, &s->weight_decay, sizeof s->weight_decay);
}

static void serve_step(subject_buf *req, subject_buf *rep) {
    uint64_t id = sb_get_u64(req);
    float lr;
    sb_get(req, &lr, sizeof lr);
    rank_ = (int)sb_get_u64(req), size_ = (int)sb_get_u64(req);
    uint64_t nt = sb_get_u64(req), ntot = sb_get_u64(req), np = sb_get_u64(req);
    if (req->bad || nt > ntot || ntot > ((uint64_t)1 << 32) || np > (1u << 20)) exit(2);
    if (net.n_total != ntot || net.n_params != (int)np) {
        free(net.params), free(net.grads), free(net.params_table);
        net.params = malloc((ntot + 1) * sizeof(float));
        net.grads = malloc((nt + 1) * sizeof(float));
        net.params_table = malloc((np + 1) * sizeof *net.params_table);
    }
    net.n_trainable = nt, net.n_total = ntot, net.n_params = (int)np;
    sb_get(req, net.params_table, np * sizeof *net.params_table);
    sb_get(req, net.params, ntot * sizeof(float));
    sb_get(req, net.grads, nt * sizeof(float));
    if (req->bad) exit(2);
    shard_state *s = state(id);
    sharded_step(s, &net, (dt_coll *)(HANDLE_BASE - 4096), lr);
    sb_put(rep, net.params, ntot * sizeof(float));
    sb_put(rep, net.grads, nt * sizeof(float));
}

static void serve_free(subject_buf *req, subject_buf *rep) {
    (void)rep;
    shard_state *s = state(sb_get_u64(req));
    shard_state_free(s);
}

int main(void) {
    cpu = dt_device_cpu_create(1);
    proxy = *cpu;
    proxy.alloc = proxy_alloc, proxy.free = proxy_free;
    const subject_handler h[] = {serve_init, serve_step, serve_free};
    return subject_serve(h, 3);
}
