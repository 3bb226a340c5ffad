// coll_cache.c — the schedules a communicator built, kept for the next request of the same
// shape (coll_internal.h dt_sched_cache). A schedule depends only on what built it (the
// algorithm or the half of one, the count, fp16 on the wire, uneven shards' bounds) and on
// the communicator's fixed options, so a request of the same shape takes a copy instead of
// building and coarsening 2(p-1) rounds again: ZeRO stage 3 starts the same gathers and
// reduce-scatters every step, which at 1,024 ranks was 14 % of a simulation's time
// (bench/DTSIM-SPEED.md). The copy is the same schedule, so the same bits.
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"
#include "dt.h"

static void *dup_of(const void *p, size_t bytes) {
    if (!p || !bytes) return NULL;
    void *q = mallocCheck(bytes);
    memcpy(q, p, bytes);
    return q;
}

static void lane_copy(dt_lane *dst, const dt_lane *src) {
    memset(dst, 0, sizeof *dst);
    int nr = src->n_rounds;
    dst->ops = dup_of(src->ops, (size_t)src->n_ops * sizeof(dt_op));
    dst->n_ops = dst->cap_ops = src->n_ops;
    dst->round_start = dup_of(src->round_start, nr > 0 ? (size_t)(nr + 1) * sizeof(int) : 0);
    dst->key = dup_of(src->key, (size_t)nr * sizeof(int));
    dst->delay = dup_of(src->delay, (size_t)nr * sizeof(double));
    dst->n_rounds = nr, dst->cap_rounds = nr > 0 ? nr + 1 : 0;
    dst->next_key = src->next_key, dst->phases = src->phases;
}

static void sched_copy(dt_sched *dst, const dt_sched *src) {
    memset(dst, 0, sizeof *dst);
    dst->n_lanes = src->n_lanes, dst->coarsened = src->coarsened;
    for (int i = 0; i < src->n_lanes; i++) lane_copy(&dst->lanes[i], &src->lanes[i]);
}

static int same_key(const dt_sched_key *a, const dt_sched_key *b) {
    return a->kind == b->kind && a->algo == b->algo && a->count == b->count &&
           a->quant == b->quant && a->n_lo == b->n_lo &&
           (a->n_lo == 0 || !memcmp(a->lo, b->lo, (size_t)a->n_lo * sizeof(size_t)));
}

int dt_sched_cache_get(dt_sched_cache *c, const dt_sched_key *k, dt_sched *out) {
    for (int i = 0; i < DT_SCHED_CACHE; i++)
        if (c->e[i].used && same_key(&c->e[i].key, k)) {
            sched_copy(out, &c->e[i].s);
            return 1;
        }
    return 0;
}

void dt_sched_cache_put(dt_sched_cache *c, const dt_sched_key *k, const dt_sched *s) {
    dt_sched_entry *e = &c->e[c->next];
    c->next = (c->next + 1) % DT_SCHED_CACHE;  // the oldest entry makes room
    if (e->used) free(e->key.lo), dt_sched_free(&e->s);
    e->key = *k;
    e->key.lo = dup_of(k->lo, (size_t)k->n_lo * sizeof(size_t));
    sched_copy(&e->s, s);
    e->used = 1;
}

void dt_sched_cache_free(dt_sched_cache *c) {
    for (int i = 0; i < DT_SCHED_CACHE; i++)
        if (c->e[i].used) free(c->e[i].key.lo), dt_sched_free(&c->e[i].s);
    memset(c, 0, sizeof *c);
}
