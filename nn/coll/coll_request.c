// coll_request.c — one allreduce in flight: the API of coll.h (blocking dt_allreduce, and
// start / progress / wait, which is how backward compute and communication overlap: MPI
// makes progress only inside MPI calls, so the trainer polls between kernels). A request
// builds the schedule from the registry (coll_algos.c), gives each lane a core runner
// (coll_run.c) and composes the extensions the call needs into the runners' hooks: fp16 on the
// wire (coll_fp16.c), device memory (coll_stage.c), coarsened rounds (coll_coarsen.c), the
// libraries' own allreduce (coll_native.c), polling under SMPI (coll_sweep.c).
// A plain call (host memory, one lane, nothing else in flight) is dt_run_all and nothing
// more. Not here: which messages an algorithm sends (coll_sched.c and its neighbours).
#include <sched.h>
#include <string.h>

#include "coll_internal.h"

// ---- the extensions, composed into the runners' hooks ----

static int hook_ready(dt_run *x) {
    dt_coll_req *r = x->ctx;
    return dt_stage_round_ready(&r->stage, x) &&
           (!r->native || dt_native_ready(&r->c->native, r->native_seq));
}

static void hook_before_post(dt_run *x) {
    dt_coll_req *r = x->ctx;
    dt_coarsen_delay(x, r->c->dev);
    if (r->wire16) dt_fp16_before_post(x);
    dt_stage_sync(x);
}

static void hook_after_round(dt_run *x) { dt_stage_sync(x); }


// Does this request need any extension? (else its runners run bare)
static int needs_hooks(const dt_coll_req *r) {
    return r->wire16 || r->stage.dbuf || r->native || (r->ldev && r->ldev->device_memory) ||
           r->c->o.coarsen > 1 || r->c->o.coarsen_tree > 1 || r->c->o.sharp;
}

// ---- the libraries' own allreduce, called as a whole ----

// Checked mode (opts.checked): did every rank pass the same count and type? 0, or -1 with
// err set on every rank.
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

// dt_allreduce with algo mpi on host-addressable data: the library's blocking call (its
// MPI_Iallreduce measured 0.4-0.6x as fast at 1-64 MB). 1 when taken, *rc its result.
static int native_blocking(dt_coll *c, void *buf, size_t count, dt_dtype dtype, int *rc,
                           dt_error *err) {
    if (c->o.algo != DT_ALGO_MPI || c->o.wire_f16 ||
        dt_stage_needed(c->dev, c->o.gpu_direct, DT_F32))
        return 0;
    *rc = 0;
    if (c->o.checked && check_counts(c, count, dtype, err)) {
        *rc = -1;
        return 1;
    }
    if (c->dev) c->dev->sync(c->dev);
    size_t es = dtype == DT_F64 ? sizeof(double) : sizeof(float);
    for (size_t done = 0; done < count; done += DT_MSG_MAX) {
        size_t n = count - done < DT_MSG_MAX ? count - done : DT_MSG_MAX;
        PMPI_Allreduce(MPI_IN_PLACE, (char *)buf + done * es, (int)n,
                       dtype == DT_F64 ? MPI_DOUBLE : MPI_FLOAT, MPI_SUM, c->comms[DT_COMM_ALL]);
    }
    return 1;
}

// nccl: NCCL has queued the allreduce on the device's stream; it progresses by itself.
static int ext_progress(dt_coll_req *r, int blocking) {
    while (!r->c->ext.test(r->c->ext.ctx, r->ext))
        if (!blocking) return 0;
    r->ext = NULL;
    r->stage.back = 2;
    return 1;
}

// ---- building a request ----

// One lane's largest round: elements received into tmp, elements staged for sending (fp16
// sends, or the largest QUANT range), MPI requests.
static void size_lane(const dt_coll_req *r, const dt_lane *l, size_t *tmp, size_t *stage,
                      int *reqs) {
    dt_run probe = {.copy_via_tmp = r->wire16};
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
            n += (int)((op->count + DT_MSG_MAX - 1) / DT_MSG_MAX);
            if (dt_run_recv_to_tmp(&probe, op)) t += op->count;
            if (op->kind == DT_OP_SEND && r->wire16) s += op->count;
        }
        if (q > s) s = q;
        if (t > *tmp) *tmp = t;
        if (s > *stage) *stage = s;
        if (n > *reqs) *reqs = n;
    }
}

static size_t align64(size_t b) { return (b + 63) & ~(size_t)63; }

// The scratch (the host copy first when staged, then per lane tmp and stage) and a runner
// per lane.
static void setup_runners(dt_coll_req *r, int stage) {
    dt_coll *c = r->c;
    size_t tmp_off[DT_MAX_LANES], stage_off[DT_MAX_LANES], stage_n[DT_MAX_LANES];
    size_t bytes = stage ? align64(r->count * r->esize) : 0;
    for (int lane = 0; lane < r->s.n_lanes; lane++) {
        size_t t;
        int q;
        size_lane(r, &r->s.lanes[lane], &t, &stage_n[lane], &q);
        tmp_off[lane] = bytes;
        bytes += align64(t * r->wsize);
        stage_off[lane] = bytes;
        bytes += align64(stage_n[lane] * r->wsize);
        if (q > r->max_reqs) r->max_reqs = q;
    }
    r->scratch = dt_scratch_get(stage ? &c->hscratch : &c->scratch, c->dev, bytes,
                                &r->scratch_bytes);
    r->reqs = mallocCheck((size_t)(r->s.n_lanes * r->max_reqs + 1) * sizeof(MPI_Request));
    for (int i = 0; i < r->s.n_lanes * r->max_reqs; i++) r->reqs[i] = MPI_REQUEST_NULL;
    if (stage) {  // the copies are ordered after the device's work: no sync needed
        r->stage = (dt_stage){.dev = c->dev, .dbuf = r->buf, .host = r->scratch,
                              .count = r->count, .esize = r->esize};
        r->buf = r->scratch;
    }
    const dt_run_hooks *hooks = NULL;
    if (needs_hooks(r)) {  // the hooks this request needs, composed
        r->hooks = (dt_run_hooks){hook_ready, hook_before_post, dt_native_post,
                                  r->wire16 ? dt_fp16_land : NULL, hook_after_round};
        hooks = &r->hooks;
    }
    MPI_Datatype type = r->wire16 ? MPI_UINT16_T : r->dtype == DT_F64 ? MPI_DOUBLE : MPI_FLOAT;
    for (int lane = 0; lane < r->s.n_lanes; lane++)
        r->run[lane] = (dt_run){
            .lane = &r->s.lanes[lane], .buf = r->buf, .esize = r->esize, .type = type,
            .wsize = r->wsize, .comms = c->comms, .tag = r->tag + lane,
            .first = c->o.one_comm ? c->first : NULL, .stride = c->stride,
            .reqs = r->reqs + (size_t)lane * r->max_reqs, .max_reqs = r->max_reqs,
            .tmp = r->scratch + tmp_off[lane],
            .stage = r->wire16 ? r->scratch + stage_off[lane] : NULL,
            .copy_via_tmp = r->wire16, .dev = r->ldev, .hooks = hooks, .ctx = r,
            .sent = &c->sent};
}

// A new request for buf, its schedule built and its runners ready; nothing posted yet.
// pre: a schedule built by the caller (coll_rsag.c's reduce-scatter and allgather), which
// the request takes over; NULL: the algorithm's allreduce from the registry.
dt_coll_req *dt_coll_req_create(dt_coll *c, void *buf, size_t count, dt_dtype dtype,
                                dt_sched *pre, const dt_sched_key *pre_key, dt_error *err) {
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
    if (pre) a = DT_ALGO_RING;  // (any entry with a schedule: only the checks below read it)
    dt_algo_def def;
    dt_algo_get(a, &def);  // (resolved: a names an entry)
    int external = (def.flags & DT_ALGO_EXTERNAL) != 0;  // run by the attached extension
    if (external && !c->ext.start) {
        dt_fail(err, DT_EXIT_USAGE, "allreduce: algorithm %s needs NCCL on the cuda device "
                "(dtrain --device cuda, in a build with NCCL); not available here", def.name);
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
    r->next = c->inflight;
    c->inflight = r;
    if (external) {  // NCCL queues it on the device's stream
        r->ext = c->ext.start(c->ext.ctx, r->buf, r->count, r->dtype);
        return r;
    }
    int stage = dt_stage_needed(c->dev, c->o.gpu_direct, dtype);
    r->ldev = stage ? NULL : c->dev;
    r->s.n_lanes = 1;
    dt_build_ctx x = dt_coll_build_ctx(c);
    dt_sched_key key = {0, (int)a, r->wire16, count, NULL, 0};  // (coll_cache.c)
    if (pre) key = *pre_key, r->s = *pre, memset(pre, 0, sizeof *pre);
    else if (!dt_sched_cache_get(&c->built, &key, &r->s)) def.build(&x, count, r->wire16, &r->s);
    int ops = 0;  // (a round may be empty: count 0 records no op)
    for (int lane = 0; lane < r->s.n_lanes; lane++) {
        const dt_lane *l = &r->s.lanes[lane];
        for (int i = 0; l->n_rounds > 0 && i < l->round_start[l->n_rounds]; i++)
            ops++, r->native |= l->ops[i].kind == DT_OP_NATIVE;
    }
    if (r->native) r->native_seq = c->native.started++;
    if (!ops) stage = 0, r->ldev = c->dev;  // nothing to send (P = 1): nothing to stage
    if (!r->s.coarsened) {  // built now, not copied from c->built: coarsened and kept
        dt_sched_coarsen(&r->s, c->o.coarsen, c->o.coarsen_tree, c->o.cost.alpha,
                         c->o.cost.alpha_intra);
        dt_sched_cache_put(&c->built, &key, &r->s);
    }
    setup_runners(r, stage);
    if (stage) {  // from the chunk the first round touches
        const dt_lane *l = &r->s.lanes[0];
        size_t first = l->n_rounds > 0 && l->round_start[1] > 0 ? l->ops[0].off : 0;
        dt_stage_start(&r->stage, first, c->size[DT_COMM_ALL]);
    }
    else if (c->dev) c->dev->sync(c->dev);  // the data must be complete before MPI reads it
    return r;
}

// ---- progress: every lane as far as its messages allow ----

// Has lane's posted round arrived? Waiting only looks: MPI_Waitany / MPI_Waitall (in
// progress) complete the requests and null them. Polling sweeps (SMPI, coll_sweep.c) or
// tests.
static int lane_idle(const dt_run *x) {
    for (int i = 0; i < x->max_reqs; i++)
        if (x->reqs[i] != MPI_REQUEST_NULL) return 0;
    return 1;
}

// Under SMPI, a poll sweeps every request of the communicator in flight (coll_sweep.c).
static int sweep(dt_coll_req *r) {
    enum { ON_STACK = 64 };  // requests in flight (fusion buckets) that need no allocation
    MPI_Request *sets_stack[ON_STACK] = {0}, **sets = sets_stack;
    int lens_stack[ON_STACK] = {0}, *lens = lens_stack, n = 0;
    for (dt_coll_req *q = r->c->inflight; q; q = q->next) n++;
    if (n > ON_STACK) {
        sets = mallocCheck((size_t)n * sizeof *sets);
        lens = mallocCheck((size_t)n * sizeof *lens);
    }
    n = 0;
    for (dt_coll_req *q = r->c->inflight; q; q = q->next)
        sets[n] = q->reqs, lens[n++] = q->s.n_lanes * q->max_reqs;
    int swept = dt_sweep_poll(&r->c->sweep, r, n, sets, lens);
    if (sets != sets_stack) free(sets), free(lens);
    return swept;
}

static int round_arrived(dt_coll_req *r, dt_run *x, int blocking) {
    if (blocking) return lane_idle(x);
    if (r->c->o.sweep && sweep(r)) return lane_idle(x);
    int flag = 1;
    if (x->max_reqs) MPI_Testall(x->max_reqs, x->reqs, &flag, MPI_STATUSES_IGNORE);
    return flag;
}

// Advance every lane as far as the messages allow; blocking waits for at least one
// message whenever no lane can move. Returns 1 when every lane is done (and a staged sum
// is back on the device).
static int progress(dt_coll_req *r, int blocking) {
    if (r->ext) return ext_progress(r, blocking);
    if (r->stage.back == 2) return 1;
    for (;;) {
        int done = 1, moved = 0, copying = 0;
        for (int lane = 0; lane < r->s.n_lanes; lane++) {
            dt_run *x = &r->run[lane];
            while (x->cur < x->lane->n_rounds) {
                if (!x->posted) {
                    if (!dt_run_post(x)) {  // its chunks are still being staged
                        copying = 1;
                        break;
                    }
                    moved = 1;
                }
                if (!round_arrived(r, x, blocking)) break;
                dt_run_finish(x), moved = 1;
            }
            if (x->cur < x->lane->n_rounds) done = 0;
        }
        if (done) {
            if (dt_stage_back(&r->stage)) return 1;
            if (!blocking) return 0;
            r->c->dev->sync(r->c->dev);  // wait for the copy back
            continue;
        }
        if (!blocking) return 0;
        if (!moved && copying) {  // staged chunks still crossing: keep the others moving
            for (dt_coll_req *o = r->c->inflight; o; o = o->next)
                if (o != r) progress(o, 0);
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

dt_coll_req *dt_allreduce_start(dt_coll *c, void *buf, size_t count, dt_dtype dtype,
                                dt_error *err) {
    dt_coll_req *r = dt_coll_req_create(c, buf, count, dtype, NULL, NULL, err);
    if (r && !r->ext) progress(r, 0);  // post the first rounds
    return r;
}

int dt_allreduce_progress(dt_coll_req *r) { return progress(r, 0); }

void dt_allreduce_wait(dt_coll_req *r) {
    if (!r) return;
    dt_coll *c = r->c;
    progress(r, 1);
    if (c->dev) c->dev->sync(c->dev);
    for (dt_coll_req **p = &c->inflight; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            break;
        }
    dt_scratch_put(r->stage.dbuf ? &c->hscratch : &c->scratch, c->dev, r->scratch,
                   r->scratch_bytes);
    dt_sched_free(&r->s);
    dt_stage_free(&r->stage);
    free(r->reqs);
    free(r);
}

void dt_coll_progress_all(dt_coll *c) {
    for (dt_coll_req *r = c->inflight; r; r = r->next) progress(r, 0);
}

int dt_allreduce(dt_coll *c, void *buf, size_t count, dt_dtype dtype, dt_error *err) {
    int rc;
    if (native_blocking(c, buf, count, dtype, &rc, err)) return rc;
    dt_coll_req *r = dt_coll_req_create(c, buf, count, dtype, NULL, NULL, err);
    if (!r) return -1;
    // the plain case: one lane on host memory, alone — the core runner, round by round
    if (!r->ext && !r->stage.dbuf && r->s.n_lanes == 1 && c->inflight == r && !r->next)
        dt_run_all(&r->run[0]);
    dt_allreduce_wait(r);
    return 0;
}

// The end of a communicator (coll.h): every request still in flight completed first, then
// its scratch, its polls, the extension and the communicators it made.
void dt_coll_free(dt_coll *c) {
    if (!c) return;
    while (c->inflight) dt_allreduce_wait(c->inflight);
    dt_scratch_release_all(&c->scratch, c->dev);
    dt_scratch_release_all(&c->hscratch, c->dev);
    dt_sweep_end(&c->sweep);
    dt_sched_cache_free(&c->built);
    if (c->ext.destroy) c->ext.destroy(c->ext.ctx);
    for (int i = 0; i < DT_COMM_COUNT; i++) {
        if (i == DT_COMM_ALL && c->o.share_comm) continue;  // the caller's to free
        if (c->comms[i] != MPI_COMM_NULL) MPI_Comm_free(&c->comms[i]);
    }
    free(c);
}

