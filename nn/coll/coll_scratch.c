// coll_scratch.c — scratch blocks for the requests in flight (where their messages arrive
// and their fp16 sends wait), cached per communicator and reused across calls.
#include "coll_internal.h"

// Scratch blocks come from a small cache: the smallest free block that fits, else a new
// one; returned blocks go back to the cache (the largest kept when it is full). On the model
// device free() is a no-op, so without the cache every bucket of every step would take new
// arena memory.
// host = 1: pinned host memory for staging (dev->alloc_host), a cache of its own.
void *dt_scratch_get(dt_coll *c, size_t bytes, size_t *got, int host) {
    void **blk = host ? c->hscratch : c->scratch;
    size_t *sz = host ? c->hscratch_bytes : c->scratch_bytes;
    *got = bytes;
    if (bytes == 0) return NULL;
    int best = -1;
    for (int i = 0; i < DT_SCRATCH_SLOTS; i++)
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

void dt_scratch_put(dt_coll *c, void *p, size_t bytes, int host) {
    void **blk = host ? c->hscratch : c->scratch;
    size_t *sz = host ? c->hscratch_bytes : c->scratch_bytes;
    if (!p) return;
    int slot = -1;
    for (int i = 0; i < DT_SCRATCH_SLOTS && slot < 0; i++)
        if (!blk[i]) slot = i;
    if (slot < 0) {  // full: evict the smallest if this one is larger
        slot = 0;
        for (int i = 1; i < DT_SCRATCH_SLOTS; i++)
            if (sz[i] < sz[slot]) slot = i;
        if (sz[slot] >= bytes) {
            scratch_release(c, p, host);
            return;
        }
        scratch_release(c, blk[slot], host);
    }
    blk[slot] = p, sz[slot] = bytes;
}

void dt_scratch_release_all(dt_coll *c) {
    for (int i = 0; i < DT_SCRATCH_SLOTS; i++) {
        if (c->scratch[i]) scratch_release(c, c->scratch[i], 0);
        if (c->hscratch[i]) scratch_release(c, c->hscratch[i], 1);
        c->scratch[i] = c->hscratch[i] = NULL;
        c->scratch_bytes[i] = c->hscratch_bytes[i] = 0;
    }
}
