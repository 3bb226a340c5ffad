// coll_rsag.c — reduce-scatter and allgather as collectives of their own (coll.h): the two
// halves every bandwidth-optimal allreduce is made of (Patarasuk & Yuan 2009; Thakur,
// Rabenseifner & Gropp 2005), which sharded data parallelism calls separately: reduce-scatter
// the gradient, step each rank's shard of the optimizer state, allgather the parameters
// (ZeRO stage 1, Rajbhandari et al. 2020 §5.1). Each builds a schedule (coll_sched.h) and
// runs it as a request of coll_request.c, so fp16 on the wire, device memory, coarsening and
// nonblocking progress work as for the allreduce. Not here: the allreduce's own schedules
// (coll_sched.c), running them (coll_run.c).
#include <limits.h>
#include <string.h>

#include "coll_internal.h"

size_t dt_shard_lo(size_t count, int p, int i) { return dt_chunk_lo(count, p, i); }

static int mod(int a, int p) { return ((a % p) + p) % p; }

// ---- the ring's halves over any shard bounds lo[0..p] (MPI_Reduce_scatter's recvcounts):
// dt_sched_ring_rs / dt_sched_ring_ag with chunk c = [lo[c], lo[c+1]). The even split uses
// those functions themselves, so that the sums keep the allreduce's order bit for bit.
static void ring_rs_v(dt_lane *l, int comm, int r, int p, const size_t *lo) {
    if (p == 1) return;
    int right = mod(r + 1, p), left = mod(r - 1, p), phase = ++l->phases;
    for (int s = 0; s < p - 1; s++) {  // after step s, chunk r-s-2 holds s+2 contributions
        int cs = mod(r - s - 1, p), cr = mod(r - s - 2, p);
        l->next_key = phase << 20 | s;
        dt_lane_round(l);
        dt_lane_op(l, DT_OP_SEND, comm, right, lo[cs], lo[cs + 1] - lo[cs]);
        dt_lane_op(l, DT_OP_RECV_ADD, comm, left, lo[cr], lo[cr + 1] - lo[cr]);
    }
    l->next_key = 0;
    dt_lane_close(l);
}

static void ring_ag_v(dt_lane *l, int comm, int r, int p, const size_t *lo, int quant) {
    if (p == 1) return;
    int right = mod(r + 1, p), left = mod(r - 1, p), phase = ++l->phases;
    for (int s = 0; s < p - 1; s++) {
        int cs = mod(r - s, p), cr = mod(r - s - 1, p);
        l->next_key = phase << 20 | s;
        dt_lane_round(l);
        if (s == 0 && quant) dt_lane_op(l, DT_OP_QUANT, comm, 0, lo[cs], lo[cs + 1] - lo[cs]);
        dt_lane_op(l, DT_OP_SEND, comm, right, lo[cs], lo[cs + 1] - lo[cs]);
        dt_lane_op(l, DT_OP_RECV_COPY, comm, left, lo[cr], lo[cr + 1] - lo[cr]);
    }
    l->next_key = 0;
    dt_lane_close(l);
}

// ---- Rabenseifner's halves for p = 2^k (dt_sched_rhd's long-message path without the
// folding of extra ranks): recursive halving leaves block r of p summed on rank r (lg p
// steps, each swapping half of the current window with the partner at distance mask), and
// recursive doubling mirrors it. lg p·α + n(p-1)/p·(β + γ) and lg p·α + n(p-1)/p·β.
static void rhd_rs(dt_lane *l, int comm, int r, int p, size_t n) {
    int lo = 0, cnt = p;  // the window of blocks this rank is still responsible for
    for (int mask = p / 2; mask >= 1; mask /= 2) {
        int half = cnt / 2, keep = (r & mask) ? lo + half : lo, give = (r & mask) ? lo : lo + half;
        size_t klo = dt_chunk_lo(n, p, keep), khi = dt_chunk_lo(n, p, keep + half);
        size_t glo = dt_chunk_lo(n, p, give), ghi = dt_chunk_lo(n, p, give + half);
        dt_lane_round(l);
        dt_lane_op(l, DT_OP_SEND, comm, r ^ mask, glo, ghi - glo);
        dt_lane_op(l, DT_OP_RECV_ADD, comm, r ^ mask, klo, khi - klo);
        lo = keep, cnt = half;
    }
    dt_lane_close(l);  // block r (== lo) is the sum over all p ranks
}

static void rhd_ag(dt_lane *l, int comm, int r, int p, size_t n, int quant) {
    int lo = r, cnt = 1;
    for (int mask = 1; mask < p; mask *= 2) {
        int other = (r & mask) ? lo - cnt : lo + cnt;
        size_t mlo = dt_chunk_lo(n, p, lo), mhi = dt_chunk_lo(n, p, lo + cnt);
        size_t olo = dt_chunk_lo(n, p, other), ohi = dt_chunk_lo(n, p, other + cnt);
        dt_lane_round(l);
        if (mask == 1 && quant) dt_lane_op(l, DT_OP_QUANT, comm, 0, mlo, mhi - mlo);
        dt_lane_op(l, DT_OP_SEND, comm, r ^ mask, mlo, mhi - mlo);
        dt_lane_op(l, DT_OP_RECV_COPY, comm, r ^ mask, olo, ohi - olo);
        if (other < lo) lo = other;
        cnt *= 2;
    }
    dt_lane_close(l);
}

// ---- the MPI library's own (algo mpi): MPI_Reduce_scatter into a scratch shard (its
// in-place form leaves the result at the start of the buffer, not at the shard), and
// MPI_Allgatherv in place. Blocking; the `mpi` allreduces of this context still in flight
// complete first, so that every rank calls the library's collectives in one order.
static MPI_Datatype mpi_type(dt_dtype t) { return t == DT_F64 ? MPI_DOUBLE : MPI_FLOAT; }

static void native(dt_coll *c, char *buf, const size_t *lo, dt_dtype dtype, int ag) {
    int p = c->size[DT_COMM_ALL], r = c->rank[DT_COMM_ALL];
    size_t es = dtype == DT_F64 ? sizeof(double) : sizeof(float);
    int *cnt = mallocCheck((size_t)p * sizeof(int)), *disp = mallocCheck((size_t)p * sizeof(int));
    for (int i = 0; i < p; i++) cnt[i] = (int)(lo[i + 1] - lo[i]), disp[i] = (int)lo[i];
    while (c->inflight) dt_allreduce_wait(c->inflight);
    if (c->dev) c->dev->sync(c->dev);
    if (ag) {
        PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, cnt, disp, mpi_type(dtype),
                        c->comms[DT_COMM_ALL]);
    } else {
        char *mine = mallocCheck((size_t)cnt[r] * es + 1);
        PMPI_Reduce_scatter(buf, mine, cnt, mpi_type(dtype), MPI_SUM, c->comms[DT_COMM_ALL]);
        memcpy(buf + lo[r] * es, mine, (size_t)cnt[r] * es);
        free(mine);
    }
    free(cnt), free(disp);
}

// The shard bounds lo[0..p] (p+1 of them): counts, or the even split. 0, or -1 with err.
static int shard_bounds(size_t count, const size_t *counts, int p, size_t *lo, dt_error *err) {
    lo[0] = 0;
    for (int i = 0; i < p; i++) {
        lo[i + 1] = counts ? lo[i] + counts[i] : dt_chunk_lo(count, p, i + 1);
        if (counts && lo[i + 1] < lo[i])
            return dt_fail(err, DT_EXIT_USAGE, "reduce-scatter/allgather: shard sizes overflow");
    }
    if (lo[p] != count)
        return dt_fail(err, DT_EXIT_USAGE, "reduce-scatter/allgather: the %d shard sizes sum "
                       "to %zu elements, not the buffer's %zu (counts[i] is rank i's shard)",
                       p, lo[p], count);
    return 0;
}

static int pow2(int p) { return p > 0 && (p & (p - 1)) == 0; }

static dt_coll_req *start(dt_coll *c, void *buf, size_t count, const size_t *counts,
                          dt_dtype dtype, int ag, dt_error *err) {
    DT_ASSERT(c);
    int p = c->size[DT_COMM_ALL], r = c->rank[DT_COMM_ALL];
    // uneven shards' bounds (even ones: the ring's own chunks, built only for MPI's native
    // collective, whose counts they are: p divisions a request otherwise)
    size_t *lo = counts ? mallocCheck((size_t)(p + 1) * sizeof(size_t)) : NULL;
    if (counts && shard_bounds(count, counts, p, lo, err)) {
        free(lo);
        return NULL;
    }
    if (count && !buf) {
        free(lo);
        dt_fail(err, DT_EXIT_USAGE, "reduce-scatter/allgather: NULL buffer for %zu elements",
                count);
        return NULL;
    }
    int quant = c->o.wire_f16;
    size_t wbytes = count * (quant ? 2 : dtype == DT_F64 ? 8 : 4);
    dt_algo a = dt_coll_resolve(c, wbytes);
    dt_sched s;
    memset(&s, 0, sizeof s);
    s.n_lanes = 1;
    dt_lane *l = &s.lanes[0];
    dt_sched_key key = {ag ? 2 : 1, (int)a, quant, count, counts ? lo : NULL,
                        counts ? p + 1 : 0};  // (coll_cache.c)
    if (a == DT_ALGO_MPI && !quant && count <= INT_MAX &&
        !dt_stage_needed(c->dev, c->o.gpu_direct, dtype)) {
        if (!lo) {  // (even: cannot fail)
            lo = mallocCheck((size_t)(p + 1) * sizeof(size_t));
            shard_bounds(count, NULL, p, lo, err);
        }
        native(c, buf, lo, dtype, ag);  // (an empty schedule: a request already complete)
        s.coarsened = 1;                 // (nothing to coarsen, nor to keep)
    } else if (!dt_sched_cache_get(&c->built, &key, &s)) {
        if (a == DT_ALGO_RHD && !counts && pow2(p) && p > 1)
            ag ? rhd_ag(l, DT_COMM_ALL, r, p, count, quant)
               : rhd_rs(l, DT_COMM_ALL, r, p, count);
        else if (!counts)
            ag ? dt_sched_ring_ag(l, DT_COMM_ALL, r, p, 0, count, quant)
               : dt_sched_ring_rs(l, DT_COMM_ALL, r, p, 0, count);
        else
            ag ? ring_ag_v(l, DT_COMM_ALL, r, p, lo, quant)
               : ring_rs_v(l, DT_COMM_ALL, r, p, lo);
    }
    dt_coll_req *q = dt_coll_req_create(c, buf, count, dtype, &s, &key, err);  // (keeps it)
    free(lo);
    if (!q) dt_sched_free(&s);
    return q;
}

dt_coll_req *dt_reduce_scatter_start(dt_coll *c, void *buf, size_t count,
                                     const size_t *counts, dt_dtype dtype, dt_error *err) {
    dt_coll_req *q = start(c, buf, count, counts, dtype, 0, err);
    if (q) dt_allreduce_progress(q);  // post the first round
    return q;
}

dt_coll_req *dt_allgather_start(dt_coll *c, void *buf, size_t count, const size_t *counts,
                                dt_dtype dtype, dt_error *err) {
    dt_coll_req *q = start(c, buf, count, counts, dtype, 1, err);
    if (q) dt_allreduce_progress(q);
    return q;
}

int dt_reduce_scatter(dt_coll *c, void *buf, size_t count, const size_t *counts,
                      dt_dtype dtype, dt_error *err) {
    dt_coll_req *q = start(c, buf, count, counts, dtype, 0, err);
    if (!q) return -1;
    dt_allreduce_wait(q);
    return 0;
}

int dt_allgather(dt_coll *c, void *buf, size_t count, const size_t *counts, dt_dtype dtype,
                 dt_error *err) {
    dt_coll_req *q = start(c, buf, count, counts, dtype, 1, err);
    if (!q) return -1;
    dt_allreduce_wait(q);
    return 0;
}
