// coll_stage.c — device memory the host cannot read (dev->device_memory: the cuda device),
// an extension of the core runner (coll_run.h). Without a CUDA-aware MPI the buffer is staged:
// copied into pinned host memory in chunks, each round posted as soon as the chunks it
// touches have arrived (so the copies overlap the first ring steps), reduced on the host,
// and copied back. With gpu_direct (a CUDA-aware MPI) device pointers go to MPI as they
// are and the device adds; it then finishes each round's work before MPI touches the bytes.
#include <stdlib.h>

#include "coll_hooks.h"

// Device memory goes through pinned host memory unless a CUDA-aware MPI takes it (float64
// sums are host loops: always staged). The one place that decides.
int dt_stage_needed(const dt_device *dev, int gpu_direct, dt_dtype dtype) {
    return dev && dev->device_memory && (!gpu_direct || dtype == DT_F64);
}

// Smallest staging chunk: below this a copy costs more in latency than it overlaps.
#define DT_STAGE_MIN_BYTES ((size_t)256 << 10)

// The copies leave in chunks of about one ring step (count/P elements, at least 256 KiB),
// starting with the chunk the schedule's first round touches and wrapping around, so the
// first sends can leave while later chunks are still crossing PCIe.
void dt_stage_start(dt_stage *st, size_t first, int p) {
    dt_device *d = st->dev;
    size_t n = st->count;
    size_t min_el = DT_STAGE_MIN_BYTES / st->esize;
    st->chunk = n / (size_t)(p ? p : 1);
    if (st->chunk < min_el) st->chunk = min_el;
    st->n_chunks = (int)((n + st->chunk - 1) / st->chunk);
    st->ready = callocCheck((size_t)(st->n_chunks > 0 ? st->n_chunks : 1), sizeof(uint64_t));
    int c0 = st->chunk ? (int)(first / st->chunk) : 0;
    for (int k = 0; k < st->n_chunks; k++) {
        int c = (c0 + k) % st->n_chunks;
        size_t lo = (size_t)c * st->chunk, m = n - lo < st->chunk ? n - lo : st->chunk;
        d->to_host_async(d, st->host + lo * st->esize, st->dbuf + lo * st->esize,
                         m * st->esize);
        st->ready[c] = d->mark(d);
    }
    st->staged = st->n_chunks == 0;
}

// Have the chunks holding elements [off, off+count) reached the host?
static int chunks_ready(dt_stage *st, size_t off, size_t count) {
    if (st->staged || count == 0) return 1;
    for (size_t c = off / st->chunk; c <= (off + count - 1) / st->chunk; c++)
        if (!st->dev->done(st->dev, st->ready[c])) return 0;
    return 1;
}

int dt_stage_round_ready(dt_stage *st, const dt_run *x) {
    if (!st->dbuf) return 1;
    const dt_lane *l = x->lane;
    for (int i = l->round_start[x->cur]; i < l->round_start[x->cur + 1]; i++)
        if (!chunks_ready(st, l->ops[i].off, l->ops[i].count)) return 0;
    return 1;
}

// Staged requests end with the sum copied back into the device buffer: 1 once it is there.
int dt_stage_back(dt_stage *st) {
    if (!st->dbuf || st->back == 2) return 1;
    dt_device *d = st->dev;
    if (st->back == 0) {
        d->from_host_async(d, st->dbuf, st->host, st->count * st->esize);
        st->back_ticket = d->mark(d);
        st->back = 1;
    }
    if (d->done(d, st->back_ticket)) st->back = 2;
    return st->back == 2;
}

void dt_stage_free(dt_stage *st) {
    free(st->ready);
    st->ready = NULL;
}

// gpu_direct: the device's conversions must be done before MPI reads the bytes, and its
// adds before the next round receives into tmp.
void dt_stage_sync(const dt_run *x) {
    if (x->dev && x->dev->device_memory) x->dev->sync(x->dev);
}
