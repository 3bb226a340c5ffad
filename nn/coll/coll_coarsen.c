// coll_coarsen.c — timing-only simulation (the model device, whose buffers hold no data), a
// extension of the core runner (coll_run.h): merge up to k consecutive rounds that talk to the
// same peers into one round of one message k times longer, and let the device wait the
// (k-1)·α the merged messages would have cost first, so the simulated time is kept while
// SimGrid handles k times fewer messages (a ring over 1024 ranks: 2046 rounds become 64).
// The sums are then meaningless. dtsim turns it on for rings above 16 GPUs (coll.h,
// opts.coarsen); dbtree's pipeline only when asked (opts.coarsen_tree, dtsim
// --coarsen-dbtree), as it moves the simulated time on a shared fabric (bench/DTSIM-SPEED.md).
#include <string.h>

#include "coll_hooks.h"

// Windows of k consecutive steps of one ring phase become one round: every rank of the ring
// cuts its steps at the same step numbers, so what a rank sends right in window w is what
// its neighbour receives from the left in window w (the counts match even where some steps
// carry nothing). The ops of a window are summed per (kind, communicator, peer).
static void coarsen_lane(dt_lane *l, int k_ring, int k_tree, double alpha, double alpha_intra) {
    if (l->n_rounds < 2) return;
    dt_lane out = {0};
    double *delay = callocCheck((size_t)l->n_rounds, sizeof(double));
    dt_op *acc = mallocCheck((size_t)(l->n_ops + 1) * sizeof(dt_op));
    int n_out = 0;
    for (int a = 0; a < l->n_rounds;) {
        int key = l->key[a], b = a + 1, k = key & DT_KEY_TREE ? k_tree : k_ring;
        if (k < 1) k = 1;
        int phase = key >> 20, w = (key & 0xFFFFF) / k;
        while (key && b < l->n_rounds && l->key[b] >> 20 == phase &&
               (l->key[b] & 0xFFFFF) / k == w)
            b++;
        int n_acc = 0, intra = 0;
        for (int i = l->round_start[a]; i < l->round_start[b]; i++) {
            dt_op op = l->ops[i];
            intra |= op.comm == DT_COMM_GROUP || op.comm == DT_COMM_ROW;
            int j = 0;
            while (j < n_acc && !(acc[j].kind == op.kind && acc[j].comm == op.comm &&
                                  acc[j].peer == op.peer))
                j++;
            if (j == n_acc) acc[n_acc++] = op;
            else acc[j].count += op.count, acc[j].off = 0;  // a sum of chunks fits from 0
        }
        dt_lane_round(&out);
        for (int j = 0; j < n_acc; j++)
            dt_lane_op(&out, acc[j].kind, acc[j].comm, acc[j].peer, acc[j].off, acc[j].count);
        int steps = key ? (l->key[b - 1] & 0xFFFFF) - (key & 0xFFFFF) : 0;
        delay[n_out] = steps * (intra ? alpha_intra : alpha);
        for (int i = a; l->delay && i < b; i++) delay[n_out] += l->delay[i];  // merged before
        n_out++;
        a = b;
    }
    free(acc);
    free(l->ops), free(l->round_start), free(l->delay), free(l->key);
    *l = out;
    l->delay = delay;
}

void dt_sched_coarsen(dt_sched *s, int k_ring, int k_tree, double alpha, double alpha_intra) {
    if (s->coarsened) return;  // (a copy of a coarsened schedule: coll_cache.c)
    s->coarsened = 1;
    if (k_ring <= 1 && k_tree <= 1) return;
    for (int i = 0; i < s->n_lanes; i++)
        coarsen_lane(&s->lanes[i], k_ring, k_tree, alpha, alpha_intra);
}

// Before a merged round is posted: the latencies of the messages it stands for.
void dt_coarsen_delay(const dt_run *x, dt_device *d) {
    const dt_lane *l = x->lane;
    if (l->delay && l->delay[x->cur] > 0 && d && d->delay) {
        d->delay(d, l->delay[x->cur]);
        d->sync(d);
    }
}
