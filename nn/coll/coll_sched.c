// coll_sched.c — building schedules (coll_sched.h), and the parameter server, the baseline
// the landmark runs left. Each algorithm states its rounds; the cost of each is in
// coll_cost.c, term by term, and its entry in the registry is in coll_algos.c. Not here:
// running them (coll_run.c), the ring (coll_ring.c), Rabenseifner's halving-doubling
// (coll_rhd.c), the trees (coll_tree.c), the binomial trees and the two-level algorithms
// (coll_hier.c). The ring, rhd and hier are lessons 04-06's components: a student handout
// ships their files compiled (lessons/components.txt).
#include <string.h>

#include "coll_cost.h"
#include "coll_sched.h"

void dt_lane_round(dt_lane *l) {
    if (l->n_rounds > 0 && l->round_start[l->n_rounds - 1] == l->n_ops) {  // still empty
        l->key[l->n_rounds - 1] = l->next_key;
        return;
    }
    if (l->n_rounds + 2 > l->cap_rounds) {
        l->cap_rounds = l->cap_rounds ? 2 * l->cap_rounds : 16;
        l->round_start = realloc(l->round_start, (size_t)l->cap_rounds * sizeof(int));
        l->key = realloc(l->key, (size_t)l->cap_rounds * sizeof(int));
        if (l->delay) {
            l->delay = realloc(l->delay, (size_t)l->cap_rounds * sizeof(double));
            DT_ASSERT(l->delay);
        }
        DT_ASSERT(l->round_start && l->key);
    }
    if (l->n_rounds == 0) l->round_start[0] = l->n_ops;
    l->key[l->n_rounds] = l->next_key;
    if (l->delay) l->delay[l->n_rounds] = 0.0;
    l->n_rounds++;
    l->round_start[l->n_rounds] = l->n_ops;
}

void dt_lane_op(dt_lane *l, int kind, int comm, int peer, size_t off, size_t count) {
    if (count == 0) return;  // both ends skip it: they compute the same count
    DT_ASSERT(l->n_rounds > 0);
    if (l->n_ops == l->cap_ops) {
        l->cap_ops = l->cap_ops ? 2 * l->cap_ops : 32;
        l->ops = realloc(l->ops, (size_t)l->cap_ops * sizeof(dt_op));
        DT_ASSERT(l->ops);
    }
    l->ops[l->n_ops++] = (dt_op){(uint8_t)kind, (uint8_t)comm, peer, off, count};
    l->round_start[l->n_rounds] = l->n_ops;
}

void dt_lane_wait(dt_lane *l, double seconds) {
    DT_ASSERT(l->n_rounds > 0 && seconds >= 0);
    if (!l->delay) l->delay = callocCheck((size_t)l->cap_rounds, sizeof(double));
    l->delay[l->n_rounds - 1] += seconds;
}

// Drop a trailing empty round (dt_lane_round opened it, nothing was added).
void dt_lane_close(dt_lane *l) {
    while (l->n_rounds > 0 && l->round_start[l->n_rounds - 1] == l->round_start[l->n_rounds])
        l->n_rounds--;
}

void dt_sched_free(dt_sched *s) {
    for (int i = 0; i < DT_MAX_LANES; i++) {
        free(s->lanes[i].ops);
        free(s->lanes[i].round_start);
        free(s->lanes[i].delay);
        free(s->lanes[i].key);
    }
    memset(s, 0, sizeof *s);
}

// ---- parameter server (the "ps" baseline): p-1 receives at the root, one after the
// other, then p-1 sends. Root time (p-1)(α + nβ + nγ) + (p-1)(α + nβ): the root's link is
// the bottleneck, which is why the landmark runs left it (Goyal et al. 2017 §4).
void dt_sched_ps(dt_lane *l, int comm, int r, int p, size_t off, size_t n, int quant) {
    if (p == 1) return;
    if (r == 0) {
        for (int i = 1; i < p; i++) {
            dt_lane_round(l);
            dt_lane_op(l, DT_OP_RECV_ADD, comm, i, off, n);
        }
        dt_lane_round(l);
        if (quant) dt_lane_op(l, DT_OP_QUANT, comm, 0, off, n);
        for (int i = 1; i < p; i++) dt_lane_op(l, DT_OP_SEND, comm, i, off, n);
    } else {
        dt_lane_round(l);
        dt_lane_op(l, DT_OP_SEND, comm, 0, off, n);
        dt_lane_round(l);
        dt_lane_op(l, DT_OP_RECV_COPY, comm, 0, off, n);
    }
    dt_lane_close(l);
}

void dt_build_ps(const dt_build_ctx *x, size_t n, int quant, dt_sched *s) {
    dt_sched_ps(&s->lanes[0], DT_COMM_ALL, x->rank[DT_COMM_ALL], x->size[DT_COMM_ALL], 0, n,
                quant);
}
