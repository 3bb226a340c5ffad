// student_hier.c — lesson 06: the hierarchical and the 2-D torus allreduce as schedules (the
// contract is in student_hier.h; the idea and the grading in README.md).
//   hier: Jia et al. 2018 §3.3; Goyal et al. 2017 §4 ("reduce within a server, allreduce
//   across servers, broadcast within a server").
//   torus2d: Mikami et al. 2018 §3.2.
//
// As in lesson 05 you describe this rank's rounds and dtlab's runner (nn/coll/coll_run.c)
// runs them. Your tools (nn/coll/coll_sched.h):
//   dt_lane_round(l)                              open the next round
//   dt_lane_op(l, DT_OP_SEND, comm, peer, o, k)       send elements [o, o+k) to peer
//   dt_lane_op(l, DT_OP_RECV_ADD, comm, peer, o, k)   receive k elements, add them into [o, o+k)
//   dt_lane_op(l, DT_OP_RECV_COPY, comm, peer, o, k)  receive k elements into [o, o+k)
//   dt_sched_ring(l, comm, r, p, o, k, 0)        a whole ring allreduce of [o, o+k) (lesson 04's)
//   dt_sched_ring_rs(l, comm, r, p, o, k)        its reduce-scatter half: rank r then owns
//                                                chunk r, [o + dt_chunk_lo(k, p, r), o + dt_chunk_lo(k, p, r+1))
//   dt_sched_ring_ag(l, comm, r, p, o, k, 0)     its allgather half
// comm is DT_COMM_GROUP / DT_COMM_LEADERS (hier) or DT_COMM_ROW / DT_COMM_COL (torus2d);
// a peer is a rank *in that communicator*. Offsets are absolute (add `off`).
#include "student_hier.h"

void student_hier(dt_lane *l, int gr, int gs, int lr, int ls, size_t off, size_t n) {
    (void)l, (void)gr, (void)gs, (void)lr, (void)ls, (void)off, (void)n;
    // TODO(student): 1. a binomial reduce to rank 0 inside the group (DT_COMM_GROUP): for
    //   mask = 1, 2, 4, ... < gs: a rank with that bit set sends its range to gr - mask and
    //   is done; the others receive-and-add from gr + mask when that rank exists. One round
    //   per op (dt_lane_round before each).

    // TODO(student): 2. the leaders (gr == 0) run one ring allreduce among themselves on
    //   DT_COMM_LEADERS (rank lr of ls): dt_sched_ring.

    // TODO(student): 3. a binomial broadcast from rank 0 inside the group, the reduce's tree
    //   walked back: for mask = (the largest power of two < gs), ..., 2, 1: a rank with
    //   gr % (2·mask) == mask receives-and-copies from gr - mask; one with gr % (2·mask) == 0
    //   sends to gr + mask when that rank exists.
}

void student_torus2d(dt_lane *l, int x, int X, int y, int Y, size_t off, size_t n) {
    (void)l, (void)x, (void)X, (void)y, (void)Y, (void)off, (void)n;
    // TODO(student): 1. along the row (DT_COMM_ROW, rank x of X): a ring reduce-scatter.

    // TODO(student): 2. along the column (DT_COMM_COL, rank y of Y): a ring allreduce of the
    //   chunk this rank owns after step 1 — that chunk only, not the whole range.

    // TODO(student): 3. along the row: a ring allgather.
}
