// algo_reverse_ring.c — the throwaway algorithm of algo_reverse_ring.h: the ring allreduce
// run the other way round, each rank sending to its left neighbour and receiving from its
// right (a mirror image of dt_sched_ring: rank r of p plays rank p-1-r). Same messages,
// same cost (2(p-1)α + 2n(p-1)/p·β), different peers and chunk order.
#include "algo_reverse_ring.h"

void test_build_reverse_ring(const dt_build_ctx *x, size_t n, int quant, dt_sched *s) {
    int p = x->size[DT_COMM_ALL], r = x->rank[DT_COMM_ALL];
    dt_lane *l = &s->lanes[0];
    dt_lane tmp = {0};
    // the built-in ring for the mirrored rank, then its peers mapped back
    dt_sched_ring(&tmp, DT_COMM_ALL, p - 1 - r, p, 0, n, quant);
    for (int k = 0; k < tmp.n_rounds; k++) {
        dt_lane_round(l);
        for (int i = tmp.round_start[k]; i < tmp.round_start[k + 1]; i++) {
            dt_op op = tmp.ops[i];
            int peer = op.kind == DT_OP_QUANT ? 0 : p - 1 - op.peer;
            dt_lane_op(l, op.kind, op.comm, peer, op.off, op.count);
        }
    }
    dt_lane_close(l);
    dt_sched tmps = {.lanes = {tmp}, .n_lanes = 1};
    dt_sched_free(&tmps);
}
