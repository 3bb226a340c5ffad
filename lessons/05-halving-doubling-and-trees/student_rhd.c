// student_rhd.c — lesson 05: Rabenseifner's allreduce as a schedule (the contract is in
// student_rhd.h; the idea and the grading in README.md). Thakur, Rabenseifner & Gropp 2005,
// "Optimization of collective communication operations in MPICH", §4.5 and Fig. 2.
//
// You do not send anything yourself: you *describe* this rank's rounds, and dtlab's runner
// (nn/coll/coll_run.c) posts each round's messages at once, waits for all of them, then
// adds what arrived. Your tools (nn/coll/coll_sched.h):
//   dt_lane_round(l)                          open the next round
//   dt_lane_op(l, DT_OP_SEND, comm, peer, o, k)      send elements [o, o+k) to peer
//   dt_lane_op(l, DT_OP_RECV_ADD, comm, peer, o, k)  receive k elements, add them into [o, o+k)
//   dt_lane_op(l, DT_OP_RECV_COPY, comm, peer, o, k) receive k elements into [o, o+k)
//   dt_chunk_lo(n, q, b)                      where block b of n elements split in q starts
// Offsets are absolute (add `off`); an op of 0 elements is dropped, on both ends alike.
// The built-in ring, dt_sched_ring_rs / dt_sched_ring_ag in nn/coll/coll_ring.c, is a
// worked example of the same tools (docs/architecture.md, "Reading the ring allreduce").
#include "student_rhd.h"

void student_rhd(dt_lane *l, int comm, int r, int p, size_t off, size_t n) {
    (void)l, (void)comm, (void)r, (void)p, (void)off, (void)n;
    // TODO(student): the contract (student_rhd.h, README "What you write"): append rank r's
    //   rounds of Rabenseifner's allreduce of [off, off+n) over p ranks to l. With p' the
    //   largest power of two <= p and rem = p - p':
    //   - result: every element summed over the p ranks, once, on one rank, then copied:
    //     the same bits on every rank;
    //   - shape: 2·lg p' rounds on the longest rank, +2 when p is not a power of two (the
    //     rem extra ranks fold their data into partners before, and get the result back
    //     after);
    //   - cost: through one rank at most 2n(p'-1)/p' elements each way (+n for a rank of the
    //     fold): 2·lg p'·α + 2(p'-1)/p'·nβ, plus 2(α + nβ) with the fold;
    //   - any p >= 1, any n >= 0 (some blocks empty); ops on `comm` only.
    //   Stuck: HINTS.md, one hint at a time.
}
