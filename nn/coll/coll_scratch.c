// coll_scratch.c — scratch blocks for the requests in flight (where their messages arrive
// and their fp16 sends wait), cached per communicator and reused across calls: the
// smallest free block that fits, else a new one; returned blocks go back to the cache (the
// largest kept when it is full). On the model device free() is a no-op, so without the
// cache every bucket of every step would take new arena memory. A host cache holds pinned
// host memory (dev->alloc_host) for staging device buffers.
#include <stdlib.h>

#include "coll_hooks.h"

void *dt_scratch_get(dt_scratch *s, dt_device *dev, size_t bytes, size_t *got) {
    *got = bytes;
    if (bytes == 0) return NULL;
    int best = -1;
    for (int i = 0; i < DT_SCRATCH_SLOTS; i++)
        if (s->blk[i] && s->bytes[i] >= bytes && (best < 0 || s->bytes[i] < s->bytes[best]))
            best = i;
    if (best >= 0) {
        void *p = s->blk[best];
        *got = s->bytes[best];
        s->blk[best] = NULL;
        return p;
    }
    if (s->host) return dev->alloc_host(dev, bytes);
    return dev ? dev->alloc(dev, bytes) : callocCheck(1, bytes);
}

static void release(dt_scratch *s, dt_device *dev, void *p) {
    if (s->host) dev->free_host(dev, p);
    else if (dev) dev->free(dev, p);
    else free(p);
}

void dt_scratch_put(dt_scratch *s, dt_device *dev, void *p, size_t bytes) {
    if (!p) return;
    int slot = -1;
    for (int i = 0; i < DT_SCRATCH_SLOTS && slot < 0; i++)
        if (!s->blk[i]) slot = i;
    if (slot < 0) {  // full: evict the smallest if this one is larger
        slot = 0;
        for (int i = 1; i < DT_SCRATCH_SLOTS; i++)
            if (s->bytes[i] < s->bytes[slot]) slot = i;
        if (s->bytes[slot] >= bytes) {
            release(s, dev, p);
            return;
        }
        release(s, dev, s->blk[slot]);
    }
    s->blk[slot] = p, s->bytes[slot] = bytes;
}

void dt_scratch_release_all(dt_scratch *s, dt_device *dev) {
    for (int i = 0; i < DT_SCRATCH_SLOTS; i++) {
        if (s->blk[i]) release(s, dev, s->blk[i]);
        s->blk[i] = NULL, s->bytes[i] = 0;
    }
}
