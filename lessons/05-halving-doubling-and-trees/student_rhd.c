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
// The built-in ring, dt_sched_ring_rs / dt_sched_ring_ag in nn/coll/coll_sched.c, is a
// worked example of the same tools (docs/architecture.md, "Reading the ring allreduce").
#include "student_rhd.h"

void student_rhd(dt_lane *l, int comm, int r, int p, size_t off, size_t n) {
    (void)l, (void)comm, (void)r, (void)p, (void)off, (void)n;
    // Let p' = 2^⌊lg p⌋ (the largest power of two <= p) and rem = p - p'.

    // TODO(student): 1. fold in. Of the first 2·rem ranks, each even rank r sends its whole
    //   range to r+1, which receives and adds it; the even ranks then sit out until step 4.
    //   The others get a new rank nr among the p' survivors: r/2 for the odd ones, r - rem
    //   for r >= 2·rem. (Write the inverse too: the real rank of new rank nr.)

    // TODO(student): 2. reduce-scatter by recursive halving, lg p' rounds. Think of the
    //   range as p' blocks (dt_chunk_lo(n, p', b)) and keep a window of blocks, at first all
    //   of them. For mask = p'/2, p'/4, ..., 1: the partner is new rank nr ^ mask; keep the
    //   half of the window on your side of mask (upper half if nr & mask), send the other
    //   half to the partner and receive-and-add the partner's copy of the kept half. At the
    //   end the window is block nr alone, summed over all p ranks.

    // TODO(student): 3. allgather by recursive doubling, lg p' rounds: for mask = 1, 2, ...,
    //   p'/2, send your window to partner nr ^ mask and receive-and-copy its window (the
    //   other half of the doubled window). At the end every survivor holds the whole sum.

    // TODO(student): 4. fold out. Each odd rank of the first 2·rem sends the whole result
    //   back to its even partner, which receives-and-copies it.
}
