// student_hier.c — lesson 06: the hierarchical and the 2-D torus allreduce as schedules (the
// contract is in student_hier.h; the idea and the grading in README.md).
//   hier: Jia et al. 2018 §3.3 ("Hierarchical all-reduce") and Goyal et al. 2017 §4 ("reduce
//   within a server, allreduce across servers, broadcast within a server").
//   torus2d: Mikami et al. 2018 §3.2 (reduce-scatter horizontally, allreduce vertically,
//   allgather horizontally).
#include "student_hier.h"

// Binomial reduce to rank 0 of the p ranks of `comm`: at distance mask = 1, 2, 4, ... a
// rank with that bit set hands its partial sum to rank r - mask and is done; the others
// add what rank r + mask sends (when it exists). ⌈lg p⌉ rounds on rank 0, n elements each.
static void binomial_reduce(dt_lane *l, int comm, int r, int p, size_t off, size_t n) {
    for (int mask = 1; mask < p; mask *= 2) {
        if (r & mask) {
            dt_lane_round(l);
            dt_lane_op(l, DT_OP_SEND, comm, r - mask, off, n);
            return;
        }
        if (r + mask < p) {
            dt_lane_round(l);
            dt_lane_op(l, DT_OP_RECV_ADD, comm, r + mask, off, n);
        }
    }
}

// Binomial broadcast from rank 0: the reduce's tree walked back, the largest distance
// first. A rank receives from r - mask at the lowest set bit of r, then sends to r + mask
// for every smaller mask.
static void binomial_bcast(dt_lane *l, int comm, int r, int p, size_t off, size_t n) {
    int top = 1;
    while (top < p) top *= 2;
    for (int mask = top / 2; mask >= 1; mask /= 2) {
        if (r % (2 * mask) == mask) {
            dt_lane_round(l);
            dt_lane_op(l, DT_OP_RECV_COPY, comm, r - mask, off, n);
        } else if (r % (2 * mask) == 0 && r + mask < p) {
            dt_lane_round(l);
            dt_lane_op(l, DT_OP_SEND, comm, r + mask, off, n);
        }
    }
}

void student_hier(dt_lane *l, int gr, int gs, int lr, int ls, size_t off, size_t n) {
    // 1. inside the group, over the fast links: the group's sum to its leader
    binomial_reduce(l, DT_COMM_GROUP, gr, gs, off, n);
    // 2. across the groups: only the leaders touch the network, one ring among them
    if (gr == 0) dt_sched_ring(l, DT_COMM_LEADERS, lr, ls, off, n, 0);
    // 3. inside the group again: the leader's result to everyone
    binomial_bcast(l, DT_COMM_GROUP, gr, gs, off, n);
}

void student_torus2d(dt_lane *l, int x, int X, int y, int Y, size_t off, size_t n) {
    // 1. along the row: a ring reduce-scatter; rank x then owns chunk x of X, summed over
    //    its row
    dt_sched_ring_rs(l, DT_COMM_ROW, x, X, off, n);
    // 2. along the column: the ranks at place x of every row own the same chunk; a ring
    //    allreduce of it sums it over everyone (n/X elements: the column's rings carry 1/X
    //    of the buffer each)
    size_t lo = dt_chunk_lo(n, X, x), hi = dt_chunk_lo(n, X, x + 1);
    dt_sched_ring(l, DT_COMM_COL, y, Y, off + lo, hi - lo, 0);
    // 3. along the row: a ring allgather of the finished chunks
    dt_sched_ring_ag(l, DT_COMM_ROW, x, X, off, n, 0);
}
