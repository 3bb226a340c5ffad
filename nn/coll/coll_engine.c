// coll_engine.c — runs a schedule (coll_sched.h): posts a round's messages, tests or waits
// for them, does the round's local reductions, posts the next round. One engine serves the
// blocking call (run to completion) and the nonblocking one (advance what has arrived and
// return), which is what lets backward compute and communication overlap: MPI makes
// progress only inside MPI calls, so the trainer polls between kernels (DESIGN.md).
// Device memory the host cannot read (the cuda device) is staged through pinned host
// memory in chunks (coll.h); a CUDA-aware MPI (gpu_direct) gets the device pointers.
// Not here: which messages an algorithm sends (coll_sched.c, coll_tree.c, coll_hier.c).
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels.h"
#include "coll_sched.h"

// A message longer than this many elements goes as several (MPI counts are int).
#define DT_MSG_MAX ((size_t)1 << 30)

static size_t pieces(size_t count) { return (count + DT_MSG_MAX - 1) / DT_MSG_MAX; }

static MPI_Datatype wire_type(const dt_coll_req *r) {
    if (r->wire16) return MPI_UINT16_T;
    return r->dtype == DT_F64 ? MPI_DOUBLE : MPI_FLOAT;
}

// ---- local work: the device's primitives for float32, host loops otherwise ----

static void local_add(dt_coll_req *r, char *y, const char *x, size_t n) {
    dt_device *d = r->ldev;
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
    dt_device *d = r->ldev;
    if (d) d->f32_to_f16(d, x, y, n);
    else for (size_t i = 0; i < n; i++) y[i] = dt_f32_to_f16(x[i]);
}

static void from_f16(dt_coll_req *r, float *y, const uint16_t *x, size_t n) {
    dt_device *d = r->ldev;
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
// host = 1: pinned host memory for staging (dev->alloc_host), a cache of its own.
static void *scratch_get(dt_coll *c, size_t bytes, size_t *got, int host) {
    void **blk = host ? c->hscratch : c->scratch;
    size_t *sz = host ? c->hscratch_bytes : c->scratch_bytes;
    *got = bytes;
    if (bytes == 0) return NULL;
    int best = -1;
    for (int i = 0; i < 8; i++)
        if (blk[i] && sz[i] >= bytes && (best < 0 || sz[i] < sz[best])) best = i;
    if (best >= 0) {
        void *p = blk[best];
        *got = sz[best];
        blk[best] = NULL;
        return p;
    }
    if (host) return c->dev->alloc_host(c->dev, bytes);
    return c->dev ? c->dev->alloc(c->dev, bytes) : callocCheck(1, bytes);
}

static void scratch_release(dt_coll *c, void *p, int host) {
    if (host) c->dev->free_host(c->dev, p);
    else if (c->dev) c->dev->free(c->dev, p);
    else free(p);
}

static void scratch_put(dt_coll *c, void *p, size_t bytes, int host) {
    void **blk = host ? c->hscratch : c->scratch;
    size_t *sz = host ? c->hscratch_bytes : c->scratch_bytes;
    if (!p) return;
    int slot = -1;
    for (int i = 0; i < 8 && slot < 0; i++)
        if (!blk[i]) slot = i;
    if (slot < 0) {  // full: evict the smallest if this one is larger
        slot = 0;
        for (int i = 1; i < 8; i++)
            if (sz[i] < sz[slot]) slot = i;
        if (sz[slot] >= bytes) {
            scratch_release(c, p, host);
            return;
        }
        scratch_release(c, blk[slot], host);
    }
    blk[slot] = p, sz[slot] = bytes;
}

// ---- staging device memory through pinned host memory ----

// Device memory goes through pinned host memory unless a CUDA-aware MPI takes it (float64
// sums are host loops: always staged). The one place that decides.
static int must_stage(const dt_coll *c, dt_dtype dtype) {
    return c->dev && c->dev->device_memory && (!c->o.gpu_direct || dtype == DT_F64);
}

// Smallest staging chunk: below this a copy costs more in latency than it overlaps.
#define DT_STAGE_MIN_BYTES ((size_t)256 << 10)

// The copies leave in chunks of about one ring step (count/P elements, at least 256 KiB),
// starting with the chunk the schedule's first round touches and wrapping around, so the
// first sends can leave while later chunks are still crossing PCIe.
static void stage_start(dt_coll_req *r) {
    dt_device *d = r->c->dev;
    size_t n = r->count, p = (size_t)r->c->size[DT_COMM_ALL];
    size_t min_el = DT_STAGE_MIN_BYTES / r->esize;
    r->chunk = n / (p ? p : 1);
    if (r->chunk < min_el) r->chunk = min_el;
    r->n_chunks = (int)((n + r->chunk - 1) / r->chunk);
    r->ready = callocCheck((size_t)(r->n_chunks > 0 ? r->n_chunks : 1), sizeof(uint64_t));
    size_t first = 0;
    const dt_lane *l = &r->s.lanes[0];
    if (l->n_rounds > 0 && l->round_start[1] > 0) first = l->ops[0].off;
    int c0 = r->chunk ? (int)(first / r->chunk) : 0;
    for (int k = 0; k < r->n_chunks; k++) {
        int c = (c0 + k) % r->n_chunks;
        size_t lo = (size_t)c * r->chunk, m = n - lo < r->chunk ? n - lo : r->chunk;
        d->to_host_async(d, r->buf + lo * r->esize, r->dbuf + lo * r->esize, m * r->esize);
        r->ready[c] = d->mark(d);
    }
    r->staged = r->n_chunks == 0;
}

// Have the chunks holding elements [off, off+count) reached the host?
static int stage_ready(dt_coll_req *r, size_t off, size_t count) {
    if (r->staged || count == 0) return 1;
    dt_device *d = r->c->dev;
    for (size_t c = off / r->chunk; c <= (off + count - 1) / r->chunk; c++)
        if (!d->done(d, r->ready[c])) return 0;
    return 1;
}

// Every op of lane's current round can run (its bytes are on the host)?
static int round_staged(dt_coll_req *r, int lane) {
    const dt_lane *l = &r->s.lanes[lane];
    int k = r->cur[lane];
    for (int i = l->round_start[k]; i < l->round_start[k + 1]; i++)
        if (!stage_ready(r, l->ops[i].off, l->ops[i].count)) return 0;
    return 1;
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

// Posts lane's current round; 0 when it must wait for staged chunks still in flight.
static int post_round(dt_coll_req *r, int lane) {
    dt_lane *l = &r->s.lanes[lane];
    int k = r->cur[lane];
    if (r->dbuf && !round_staged(r, lane)) return 0;
    // The library's own collective must start in the same order on every rank, but staged
    // chunks arrive at different times on different ranks: an `mpi` request waits until the
    // ones started before it have posted theirs.
    int has_native = 0;
    for (int i = l->round_start[k]; i < l->round_start[k + 1]; i++)
        has_native |= l->ops[i].kind == DT_OP_NATIVE;
    if (has_native && r->native_seq != r->c->native_posted) return 0;
    if (has_native) r->c->native_posted++;
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
    // fp16 sends are converted before anything is posted: an asynchronous device (gpu_direct
    // with cuda) must finish them before MPI reads the bytes
    for (int i = l->round_start[k]; r->wire16 && i < l->round_start[k + 1]; i++) {
        const dt_op *op = &l->ops[i];
        if (op->kind != DT_OP_SEND) continue;
        to_f16(r, (uint16_t *)(stage + spos * r->wsize),
               (const float *)(r->buf + op->off * r->esize), op->count);
        spos += op->count;
    }
    spos = 0;
    if (r->ldev && r->ldev->device_memory) r->ldev->sync(r->ldev);
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
                p = stage + spos * r->wsize;  // converted above
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
    return 1;
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
    // an asynchronous device must finish reading tmp before the next round receives into it
    if (r->ldev && r->ldev->device_memory) r->ldev->sync(r->ldev);
    r->posted[lane] = 0;
    r->cur[lane]++;
}

static int lane_idle(const dt_coll_req *r, int lane) {
    const MPI_Request *q = r->reqs + (size_t)lane * r->max_reqs;
    for (int i = 0; i < r->max_reqs; i++)
        if (q[i] != MPI_REQUEST_NULL) return 0;
    return 1;
}

// Has lane's posted round arrived? Waiting only looks: MPI_Waitany (in advance) completes
// the requests one by one and nulls them. Polling sweeps (SMPI, coll_sweep.c) or tests.
static int round_arrived(dt_coll_req *r, int lane, int blocking) {
    if (blocking) return lane_idle(r, lane);
    if (r->c->o.sweep && dt_coll_sweep(r->c, r)) return lane_idle(r, lane);
    int flag = 1;
    if (r->max_reqs)
        MPI_Testall(r->max_reqs, r->reqs + (size_t)lane * r->max_reqs, &flag, MPI_STATUSES_IGNORE);
    return flag;
}

// Staged requests end with the sum copied back into the device buffer: 1 once it is there.
static int stage_back(dt_coll_req *r) {
    if (!r->dbuf || r->back == 2) return 1;
    dt_device *d = r->c->dev;
    if (r->back == 0) {
        d->from_host_async(d, r->dbuf, r->buf, r->count * r->esize);
        r->back_ticket = d->mark(d);
        r->back = 1;
    }
    if (d->done(d, r->back_ticket)) r->back = 2;
    return r->back == 2;
}

// Advance every lane as far as the messages allow; blocking waits for at least one
// message whenever no lane can move. Returns 1 when every lane is done (and a staged sum
// is back on the device).
static int advance(dt_coll_req *r, int blocking) {
    if (r->ext) {  // another library's allreduce: it progresses by itself
        while (!r->c->ext.test(r->c->ext.ctx, r->ext))
            if (!blocking) return 0;
        r->ext = NULL;
        r->back = 2;
        return 1;
    }
    if (r->back == 2) return 1;
    for (;;) {
        int done = 1, moved = 0, copying = 0;
        for (int lane = 0; lane < r->s.n_lanes; lane++) {
            dt_lane *l = &r->s.lanes[lane];
            while (r->cur[lane] < l->n_rounds) {
                if (!r->posted[lane]) {
                    if (!post_round(r, lane)) {  // its chunks are still being staged
                        copying = 1;
                        break;
                    }
                    moved = 1;
                }
                if (!round_arrived(r, lane, blocking)) break;
                finish_round(r, lane), moved = 1;
            }
            if (r->cur[lane] < l->n_rounds) done = 0;
        }
        if (done) {
            if (stage_back(r)) return 1;
            if (!blocking) return 0;
            r->c->dev->sync(r->c->dev);  // wait for the copy back
            continue;
        }
        if (!blocking) return 0;
        if (!moved && copying) {  // staged chunks still crossing: keep the others moving
            for (dt_coll_req *o = r->c->inflight; o; o = o->next)
                if (o != r) advance(o, 0);
            sched_yield();
        } else if (!moved && r->s.n_lanes == 1 && r->c->inflight == r && !r->next) {
            // one lane, nothing else in flight: the round is all there is to wait for (one
            // MPI_Waitall costs less than a MPI_Waitany per request: np 2, 8 B, ~0.4 µs)
            MPI_Waitall(r->max_reqs, r->reqs, MPI_STATUSES_IGNORE);
        } else if (!moved) {  // nothing could move: sleep in MPI until a message arrives
            int idx;
            MPI_Waitany(r->s.n_lanes * r->max_reqs, r->reqs, &idx, MPI_STATUS_IGNORE);
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

// post = 0 (the blocking call): the wait that follows posts the first round; a test right
// after posting would only cost time (and under SMPI 3.32 leak the requests it completes).
static dt_coll_req *start(dt_coll *c, void *buf, size_t count, dt_dtype dtype, int post,
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
    dt_algo a = dt_coll_resolve(c, count * (c->o.wire_f16 ? 2 : (dtype == DT_F64 ? 8 : 4)));
    if (a == DT_ALGO_NCCL && !c->ext.start) {
        dt_fail(err, DT_EXIT_USAGE, "allreduce: algorithm nccl needs NCCL on the cuda device "
                "(dtrain --device cuda, in a build with NCCL); not available here");
        return NULL;
    }
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
    if (a == DT_ALGO_NCCL) {  // NCCL queues it on the device's stream
        r->ext = c->ext.start(c->ext.ctx, buf, count, dtype);
        r->next = c->inflight;
        c->inflight = r;
        return r;
    }
    int stage = must_stage(c, dtype);
    r->ldev = stage ? NULL : c->dev;
    dt_sched_build(c, a, count, r->wire16, &r->s);
    int ops = 0, natives = 0;  // (a round may be empty: count 0 records no op)
    for (int lane = 0; lane < r->s.n_lanes; lane++) {
        const dt_lane *l = &r->s.lanes[lane];
        for (int i = 0; l->n_rounds > 0 && i < l->round_start[l->n_rounds]; i++)
            ops++, natives += l->ops[i].kind == DT_OP_NATIVE;
    }
    if (natives) r->native_seq = c->native_started++;
    if (!ops) stage = 0, r->ldev = c->dev;  // nothing to send (P = 1): nothing to stage
    if (c->o.coarsen > 1) dt_sched_coarsen(&r->s, c->o.coarsen, c->o.cost.alpha, c->o.cost.alpha_intra);

    size_t bytes = stage ? (count * r->esize + 63) & ~(size_t)63 : 0;  // the host copy first
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
    r->scratch = scratch_get(c, bytes, &r->scratch_bytes, stage);
    r->reqs = mallocCheck((size_t)(r->s.n_lanes * r->max_reqs + 1) * sizeof(MPI_Request));
    for (int i = 0; i < r->s.n_lanes * r->max_reqs; i++) r->reqs[i] = MPI_REQUEST_NULL;
    if (stage) {  // the copies are ordered after the device's work: no sync needed
        r->dbuf = buf;
        r->buf = r->scratch;
        stage_start(r);
    } else if (c->dev) {
        c->dev->sync(c->dev);  // the data must be complete before MPI reads it
    }
    r->next = c->inflight;
    c->inflight = r;
    if (post) advance(r, 0);
    return r;
}

dt_coll_req *dt_allreduce_start(dt_coll *c, void *buf, size_t count, dt_dtype dtype,
                                dt_error *err) {
    return start(c, buf, count, dtype, 1, err);
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
    scratch_put(c, r->scratch, r->scratch_bytes, r->dbuf != NULL);
    dt_sched_free(&r->s);
    free(r->ready);
    free(r->reqs);
    free(r);
}

void dt_coll_progress_all(dt_coll *c) {
    for (dt_coll_req *r = c->inflight; r; r = r->next) advance(r, 0);
}

int dt_allreduce(dt_coll *c, void *buf, size_t count, dt_dtype dtype, dt_error *err) {
    if (c->o.algo == DT_ALGO_MPI && !c->o.wire_f16 && !must_stage(c, DT_F32)) {
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
    dt_coll_req *r = start(c, buf, count, dtype, 0, err);
    if (!r) return -1;
    dt_allreduce_wait(r);
    return 0;
}

void dt_coll_release_scratch(dt_coll *c) {
    for (int i = 0; i < 8; i++) {
        if (c->scratch[i]) scratch_release(c, c->scratch[i], 0);
        if (c->hscratch[i]) scratch_release(c, c->hscratch[i], 1);
        c->scratch[i] = c->hscratch[i] = NULL;
        c->scratch_bytes[i] = c->hscratch_bytes[i] = 0;
    }
}
