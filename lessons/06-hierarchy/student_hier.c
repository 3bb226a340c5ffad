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
    // TODO(student): the contract (student_hier.h, README "What you write"): this rank's
    //   rounds of the hierarchical allreduce of [off, off+n) (Jia et al. 2018) — the sum
    //   of each group reaches its rank 0 over DT_COMM_GROUP by a binomial tree (one message
    //   a round, ceil(lg gs) rounds on the leader), the leaders allreduce those sums over
    //   DT_COMM_LEADERS with the ring (2(ls-1) rounds), and the result goes back down the
    //   same tree. Cost on the leader: 2·ceil(lg g)·(α' + nβ') + 2(L-1)α + 2(L-1)/L·nβ.
    //   Every rank ends with the same bits; any group size, any n >= 0. Stuck: HINTS.md.
}

void student_torus2d(dt_lane *l, int x, int X, int y, int Y, size_t off, size_t n) {
    (void)l, (void)x, (void)X, (void)y, (void)Y, (void)off, (void)n;
    // TODO(student): the contract: this rank's rounds of the 2-D torus allreduce
    //   (Mikami et al. 2018) on X×Y ranks — the row (DT_COMM_ROW, rank x of X) and the
    //   column (DT_COMM_COL, rank y of Y) — 2(X-1) + 2(Y-1) rounds; along the row each rank
    //   moves 2n(X-1)/X elements each way, along the column only the n/X it owns:
    //   2(n/X)(Y-1)/Y. Every rank ends with the same bits. Stuck: HINTS.md.
}
