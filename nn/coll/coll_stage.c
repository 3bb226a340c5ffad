// coll_stage.c — device memory the host cannot read (dev->device_memory: the cuda device),
// a layer on the core runner (coll_run.h). Without a CUDA-aware MPI the buffer is staged:
// copied into pinned host memory in chunks, each round posted as soon as the chunks it
// touches have arrived (so the copies overlap the first ring steps), reduced on the host,
// and copied back. With gpu_direct (a CUDA-aware MPI) device pointers go to MPI as they
// are and the device adds; it then finishes each round's work before MPI touches the bytes.
#include "coll_internal.h"

// Device memory goes through pinned host memory unless a CUDA-aware MPI takes it (float64
// sums are host loops: always staged). The one place that decides.
int dt_stage_needed(const dt_coll *c, dt_dtype dtype) {
    return c->dev && c->dev->device_memory && (!c->o.gpu_direct || dtype == DT_F64);
}

// Smallest staging chunk: below this a copy costs more in latency than it overlaps.
#define DT_STAGE_MIN_BYTES ((size_t)256 << 10)

// The copies leave in chunks of about one ring step (count/P elements, at least 256 KiB),
// starting with the chunk the schedule's first round touches and wrapping around, so the
// first sends can leave while later chunks are still crossing PCIe.
void dt_stage_start(dt_coll_req *r) {
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
static int chunks_ready(dt_coll_req *r, size_t off, size_t count) {
    if (r->staged || count == 0) return 1;
    dt_device *d = r->c->dev;
    for (size_t c = off / r->chunk; c <= (off + count - 1) / r->chunk; c++)
        if (!d->done(d, r->ready[c])) return 0;
    return 1;
}

int dt_stage_round_ready(dt_coll_req *r, const dt_run *x) {
    if (!r->dbuf) return 1;
    const dt_lane *l = x->lane;
    for (int i = l->round_start[x->cur]; i < l->round_start[x->cur + 1]; i++)
        if (!chunks_ready(r, l->ops[i].off, l->ops[i].count)) return 0;
    return 1;
}

// Staged requests end with the sum copied back into the device buffer: 1 once it is there.
int dt_stage_back(dt_coll_req *r) {
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

// gpu_direct: the device's conversions must be done before MPI reads the bytes, and its
// adds before the next round receives into tmp.
void dt_stage_sync(dt_coll_req *r) {
    if (r->ldev && r->ldev->device_memory) r->ldev->sync(r->ldev);
}
