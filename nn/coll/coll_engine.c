// coll_engine.c — runs a schedule (coll_sched.h): posts a round's messages, tests or waits
// for them, does the round's local reductions, posts the next round. One engine serves the
// blocking call (run to completion) and the nonblocking one (advance what has arrived and
// return), which is what lets backward compute and communication overlap: MPI makes
// progress only inside MPI calls, so the trainer polls between kernels (DESIGN.md).
// Not here: which messages an algorithm sends (coll_flat.c, coll_tree.c, coll_hier.c).
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels.h"
#include "coll_sched.h"

// A message longer than this many elements goes as several (MPI counts are int).
#define DT_MSG_MAX ((size_t)1 << 30)

struct dt_coll_req {
    dt_coll *c;
    char *buf;
    size_t count;
    dt_dtype dtype;
    int wire16;          // fp16 on the wire (float32 data)
    size_t esize, wsize; // bytes per element in the buffer, on the wire
    int tag;
    dt_sched s;
    int cur[DT_MAX_LANES];      // the round in flight (n_rounds once the lane is done)
    int posted[DT_MAX_LANES];
    MPI_Request *reqs;          // max_reqs per lane
    int max_reqs;
    char *scratch;              // per lane: tmp (received messages) then stage (fp16 sends)
    size_t scratch_bytes;
    size_t tmp_off[DT_MAX_LANES], stage_off[DT_MAX_LANES];
    dt_coll_req *next;          // c->inflight list
};

static size_t pieces(size_t count) { return (count + DT_MSG_MAX - 1) / DT_MSG_MAX; }

static MPI_Datatype wire_type(const dt_coll_req *r) {
    if (r->wire16) return MPI_UINT16_T;
    return r->dtype == DT_F64 ? MPI_DOUBLE : MPI_FLOAT;
}

// ---- local work: the device's primitives for float32, host loops otherwise ----

static void local_add(dt_coll_req *r, char *y, const char *x, size_t n) {
    dt_device *d = r->c->dev;
    if (r->dtype == DT_F64) {
        double *yy = (double *)y;
        const double *xx = (const double *)x;
        for (size_t i = 0; i < n; i++) yy[i] += xx[i];
    } else if (r->wire16) {
        if (d) d->add_f16(d, (float *)y, (const uint16_t *)x, n);
        else for (size_t i = 0; i < n; i++) ((float *)y)[i] += dt_f16_to_f32(((const uint16_t *)x)[i]);
    } else {
        if (d) d->add(d, (float *)y, (const float *)x, n);
        else for (size_t i = 0; i < n; i++) ((float *)y)[i] += ((const float *)x)[i];
    }
}

static void to_f16(dt_coll_req *r, uint16_t *y, const float *x, size_t n) {
    dt_device *d = r->c->dev;
    if (d) d->f32_to_f16(d, x, y, n);
    else for (size_t i = 0; i < n; i++) y[i] = dt_f32_to_f16(x[i]);
}

static void from_f16(dt_coll_req *r, float *y, const uint16_t *x, size_t n) {
    dt_device *d = r->c->dev;
    if (d) d->f16_to_f32(d, x, y, n);
    else for (size_t i = 0; i < n; i++) y[i] = dt_f16_to_f32(x[i]);
}

// ---- sizing the scratch ----

static int recv_to_tmp(const dt_coll_req *r, const dt_op *op) {
    return op->kind == DT_OP_RECV_ADD || (op->kind == DT_OP_RECV_COPY && r->wire16);
}

static void size_lane(const dt_coll_req *r, const dt_lane *l, size_t *tmp, size_t *stage,
                      int *reqs) {
    *tmp = *stage = 0;
    *reqs = 0;
    for (int k = 0; k < l->n_rounds; k++) {
        size_t t = 0, s = 0, q = 0;
        int n = 0;
        for (int i = l->round_start[k]; i < l->round_start[k + 1]; i++) {
            const dt_op *op = &l->ops[i];
            if (op->kind == DT_OP_QUANT) {
                q = op->count > q ? op->count : q;
                continue;
            }
            n += (int)pieces(op->count);
            if (recv_to_tmp(r, op)) t += op->count;
            if (op->kind == DT_OP_SEND && r->wire16) s += op->count;
        }
        if (q > s) s = q;
        if (t > *tmp) *tmp = t;
        if (s > *stage) *stage = s;
        if (n > *reqs) *reqs = n;
    }
}

// Scratch blocks come from a small cache: the smallest free block that fits, else a new
// one; returned blocks go back to the cache (the largest kept when it is full). On the model
// device free() is a no-op, so without the cache every bucket of every step would take new
// arena memory.
static void *scratch_get(dt_coll *c, size_t bytes, size_t *got) {
    *got = bytes;
    if (bytes == 0) return NULL;
    int best = -1;
    for (int i = 0; i < 8; i++)
        if (c->scratch[i] && c->scratch_bytes[i] >= bytes &&
            (best < 0 || c->scratch_bytes[i] < c->scratch_bytes[best]))
            best = i;
    if (best >= 0) {
        void *p = c->scratch[best];
        *got = c->scratch_bytes[best];
        c->scratch[best] = NULL;
        return p;
    }
    return c->dev ? c->dev->alloc(c->dev, bytes) : callocCheck(1, bytes);
}

static void scratch_release(dt_coll *c, void *p) {
    if (c->dev) c->dev->free(c->dev, p);
    else free(p);
}

static void scratch_put(dt_coll *c, void *p, size_t bytes) {
    if (!p) return;
    int slot = -1;
    for (int i = 0; i < 8 && slot < 0; i++)
        if (!c->scratch[i]) slot = i;
    if (slot < 0) {  // full: evict the smallest if this one is larger
        slot = 0;
        for (int i = 1; i < 8; i++)
            if (c->scratch_bytes[i] < c->scratch_bytes[slot]) slot = i;
        if (c->scratch_bytes[slot] >= bytes) {
            scratch_release(c, p);
            return;
        }
        scratch_release(c, c->scratch[slot]);
    }
    c->scratch[slot] = p, c->scratch_bytes[slot] = bytes;
}

// The `mpi` algorithm: the library's own allreduce. Under SMPI the blocking one: SMPI 3.32's
// MPI_Iallreduce ignores the smpi/allreduce algorithm selection that the simulator compares
// against, and returned wrong sums in place for 80 KB buffers in our tests.
static void native(dt_coll_req *r, void *p, size_t c, MPI_Comm comm, MPI_Request *q) {
#ifdef DT_SMPI
    PMPI_Allreduce(MPI_IN_PLACE, p, (int)c, wire_type(r), MPI_SUM, comm);
    *q = MPI_REQUEST_NULL;
#else
    PMPI_Iallreduce(MPI_IN_PLACE, p, (int)c, wire_type(r), MPI_SUM, comm, q);
#endif
}

// ---- one round ----

static void post_round(dt_coll_req *r, int lane) {
    dt_lane *l = &r->s.lanes[lane];
    int k = r->cur[lane];
    MPI_Request *q = r->reqs + (size_t)lane * r->max_reqs;
    char *tmp = r->scratch + r->tmp_off[lane];
    char *stage = r->scratch + r->stage_off[lane];
    int tag = r->tag + lane;
    int nq = 0;
    size_t tpos = 0, spos = 0;
    dt_device *d = r->c->dev;
    if (l->delay && l->delay[k] > 0 && d && d->delay) {  // a coarsened round's latencies
        d->delay(d, l->delay[k]);
        d->sync(d);
    }
    for (int i = l->round_start[k]; i < l->round_start[k + 1]; i++) {  // rounding first
        const dt_op *op = &l->ops[i];
        if (op->kind != DT_OP_QUANT) continue;
        float *x = (float *)(r->buf + op->off * r->esize);
        to_f16(r, (uint16_t *)stage, x, op->count);
        from_f16(r, x, (const uint16_t *)stage, op->count);
    }
    for (int pass = 0; pass < 2; pass++) {  // receives before sends
        for (int i = l->round_start[k]; i < l->round_start[k + 1]; i++) {
            const dt_op *op = &l->ops[i];
            MPI_Comm comm = r->c->comms[op->comm];
            int is_recv = op->kind == DT_OP_RECV_ADD || op->kind == DT_OP_RECV_COPY;
            if (op->kind == DT_OP_QUANT || is_recv != (pass == 0)) continue;
            if (op->kind == DT_OP_NATIVE && pass == 0) continue;
            char *p;
            size_t es = r->wsize;
            if (is_recv) {
                if (recv_to_tmp(r, op)) p = tmp + tpos * r->wsize, tpos += op->count;
                else p = r->buf + op->off * r->esize;
            } else if (op->kind == DT_OP_SEND && r->wire16) {
                p = stage + spos * r->wsize;
                to_f16(r, (uint16_t *)p, (const float *)(r->buf + op->off * r->esize), op->count);
                spos += op->count;
            } else {
                p = r->buf + op->off * r->esize;
            }
            for (size_t done = 0; done < op->count; done += DT_MSG_MAX) {
                size_t c = op->count - done < DT_MSG_MAX ? op->count - done : DT_MSG_MAX;
                void *pp = p + done * es;
                if (op->kind == DT_OP_NATIVE) native(r, pp, c, comm, &q[nq++]);
                else if (is_recv)
                    MPI_Irecv(pp, (int)c, wire_type(r), op->peer, tag, comm, &q[nq++]);
                else
                    MPI_Isend(pp, (int)c, wire_type(r), op->peer, tag, comm, &q[nq++]);
            }
        }
    }
    for (int i = nq; i < r->max_reqs; i++) q[i] = MPI_REQUEST_NULL;
    r->posted[lane] = 1;
}

// The round's messages have all arrived: reduce or install them, in op order.
static void finish_round(dt_coll_req *r, int lane) {
    dt_lane *l = &r->s.lanes[lane];
    int k = r->cur[lane];
    char *tmp = r->scratch + r->tmp_off[lane];
    size_t tpos = 0;
    for (int i = l->round_start[k]; i < l->round_start[k + 1]; i++) {
        const dt_op *op = &l->ops[i];
        if (!recv_to_tmp(r, op)) continue;
        char *src = tmp + tpos * r->wsize;
        tpos += op->count;
        char *dst = r->buf + op->off * r->esize;
        if (op->kind == DT_OP_RECV_ADD) local_add(r, dst, src, op->count);
        else from_f16(r, (float *)dst, (const uint16_t *)src, op->count);
    }
    r->posted[lane] = 0;
    r->cur[lane]++;
}

static int lane_idle(const dt_coll_req *r, int lane) {
    const MPI_Request *q = r->reqs + (size_t)lane * r->max_reqs;
    for (int i = 0; i < r->max_reqs; i++)
        if (q[i] != MPI_REQUEST_NULL) return 0;
    return 1;
}

// Advance every lane as far as the messages allow; blocking waits for at least one
// message whenever no lane can move. Returns 1 when every lane is done.
static int advance(dt_coll_req *r, int blocking) {
    for (;;) {
        int done = 1, moved = 0;
        for (int lane = 0; lane < r->s.n_lanes; lane++) {
            dt_lane *l = &r->s.lanes[lane];
            while (r->cur[lane] < l->n_rounds) {
                if (!r->posted[lane]) post_round(r, lane), moved = 1;
                MPI_Request *q = r->reqs + (size_t)lane * r->max_reqs;
                int flag = 1;
                if (r->max_reqs) MPI_Testall(r->max_reqs, q, &flag, MPI_STATUSES_IGNORE);
                if (!flag) break;
                finish_round(r, lane), moved = 1;
            }
            if (r->cur[lane] < l->n_rounds) done = 0;
        }
        if (done) return 1;
        if (!blocking) return 0;
        if (!moved) {  // nothing could move: sleep in MPI until something arrives
            int n_out = 0, total = r->s.n_lanes * r->max_reqs;
            int *idx = mallocCheck((size_t)(total > 0 ? total : 1) * sizeof(int));
            MPI_Waitsome(total, r->reqs, &n_out, idx, MPI_STATUSES_IGNORE);
            free(idx);
            for (int lane = 0; lane < r->s.n_lanes; lane++)
                if (r->posted[lane] && lane_idle(r, lane)) finish_round(r, lane);
        }
    }
}

// ---- the API (coll.h) ----

static int check_counts(dt_coll *c, size_t count, dt_dtype dtype, dt_error *err) {
    long long v[6] = {(long long)count, -(long long)count, dtype, -(long long)dtype,
                      c->o.wire_f16, -(long long)c->o.wire_f16};
    PMPI_Allreduce(MPI_IN_PLACE, v, 6, MPI_LONG_LONG, MPI_MAX, c->comms[DT_COMM_ALL]);
    if (v[0] != -v[1] || v[2] != -v[3] || v[4] != -v[5])
        return dt_fail(err, DT_EXIT_USAGE, "allreduce: the ranks passed different arguments: "
                       "count %lld..%lld (this rank %zu), dtype %lld..%lld, fp16 wire %lld..%lld "
                       "(every rank must pass the same count and type)", -v[1], v[0], count,
                       -v[3], v[2], -v[5], v[4]);
    return 0;
}

dt_coll_req *dt_allreduce_start(dt_coll *c, void *buf, size_t count, dt_dtype dtype,
                                dt_error *err) {
    DT_ASSERT(c);
    if (count && !buf) {
        dt_fail(err, DT_EXIT_USAGE, "allreduce: NULL buffer for %zu elements", count);
        return NULL;
    }
    if (c->o.wire_f16 && dtype != DT_F32) {
        dt_fail(err, DT_EXIT_USAGE, "allreduce: fp16 on the wire needs float32 data");
        return NULL;
    }
    if (c->o.checked && check_counts(c, count, dtype, err)) return NULL;
    dt_coll_req *r = callocCheck(1, sizeof *r);
    r->c = c;
    r->buf = buf;
    r->count = count;
    r->dtype = dtype;
    r->esize = dtype == DT_F64 ? sizeof(double) : sizeof(float);
    r->wire16 = c->o.wire_f16;
    r->wsize = r->wire16 ? sizeof(uint16_t) : r->esize;
    int slots = c->tag_ub / DT_MAX_LANES - 1;
    r->tag = (int)(c->seq++ % (unsigned long)slots) * DT_MAX_LANES;
    dt_algo a = dt_coll_resolve(c, count * r->wsize);
    dt_sched_build(c, a, count, r->wire16, &r->s);
    if (c->o.coarsen > 1) dt_sched_coarsen(&r->s, c->o.coarsen, c->o.cost.alpha, c->o.cost.alpha_intra);

    size_t bytes = 0;
    for (int lane = 0; lane < r->s.n_lanes; lane++) {
        size_t t, s;
        int q;
        size_lane(r, &r->s.lanes[lane], &t, &s, &q);
        r->tmp_off[lane] = bytes;
        bytes += (t * r->wsize + 63) & ~(size_t)63;
        r->stage_off[lane] = bytes;
        bytes += (s * r->wsize + 63) & ~(size_t)63;
        if (q > r->max_reqs) r->max_reqs = q;
    }
    r->scratch = scratch_get(c, bytes, &r->scratch_bytes);
    r->reqs = mallocCheck((size_t)(r->s.n_lanes * r->max_reqs + 1) * sizeof(MPI_Request));
    for (int i = 0; i < r->s.n_lanes * r->max_reqs; i++) r->reqs[i] = MPI_REQUEST_NULL;
    if (c->dev) c->dev->sync(c->dev);  // the data must be complete before MPI reads it
    r->next = c->inflight;
    c->inflight = r;
    advance(r, 0);
    return r;
}

int dt_allreduce_progress(dt_coll_req *r) { return advance(r, 0); }

void dt_allreduce_wait(dt_coll_req *r) {
    if (!r) return;
    dt_coll *c = r->c;
    advance(r, 1);
    if (c->dev) c->dev->sync(c->dev);
    for (dt_coll_req **p = &c->inflight; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            break;
        }
    scratch_put(c, r->scratch, r->scratch_bytes);
    dt_sched_free(&r->s);
    free(r->reqs);
    free(r);
}

void dt_coll_progress_all(dt_coll *c) {
    for (dt_coll_req *r = c->inflight; r; r = r->next) advance(r, 0);
}

int dt_allreduce(dt_coll *c, void *buf, size_t count, dt_dtype dtype, dt_error *err) {
    if (c->o.algo == DT_ALGO_MPI && !c->o.wire_f16) {
        // the library's blocking call: its MPI_Iallreduce measured 0.4-0.6x as fast at 1-64 MB
        if (c->o.checked && check_counts(c, count, dtype, err)) return -1;
        if (c->dev) c->dev->sync(c->dev);
        size_t es = dtype == DT_F64 ? sizeof(double) : sizeof(float);
        for (size_t done = 0; done < count; done += DT_MSG_MAX) {
            size_t n = count - done < DT_MSG_MAX ? count - done : DT_MSG_MAX;
            PMPI_Allreduce(MPI_IN_PLACE, (char *)buf + done * es, (int)n,
                           dtype == DT_F64 ? MPI_DOUBLE : MPI_FLOAT, MPI_SUM,
                           c->comms[DT_COMM_ALL]);
        }
        return 0;
    }
    dt_coll_req *r = dt_allreduce_start(c, buf, count, dtype, err);
    if (!r) return -1;
    dt_allreduce_wait(r);
    return 0;
}

void dt_coll_release_scratch(dt_coll *c) {
    for (int i = 0; i < 8; i++) {
        if (c->scratch[i]) scratch_release(c, c->scratch[i]);
        c->scratch[i] = NULL;
        c->scratch_bytes[i] = 0;
    }
}
