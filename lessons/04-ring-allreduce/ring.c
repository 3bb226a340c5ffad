// ring.c — lesson 04: the ring allreduce as a schedule (student_ring.h has the contract;
// README.md explains it). Patarasuk & Yuan 2009, "Bandwidth optimal all-reduce algorithms
// for clusters of workstations"; Baidu's allreduce. Every rank sends 2(p-1) messages of n/p
// elements: 2(p-1)α + 2(p-1)/p·nβ + (p-1)/p·nγ (docs/formulas.md, "Collective costs").
// Grade with `lessons/grade 04`; then run it in dtrain and dtsim (README.md).
#include "student_ring.h"

void student_ring(dt_lane *l, int comm, int r, int p, size_t off, size_t n) {
    // TODO(student): append the 2(p-1) rounds of the ring allreduce of [off, off+n) to l.
    //   right = r+1 and left = r-1, modulo p (careful: in C, -1 % p is -1).
    //   chunk c of the range is [off + dt_chunk_lo(n, p, c), off + dt_chunk_lo(n, p, c+1)).
    //   reduce-scatter, p-1 rounds (dt_lane_round(l) opens one): in step s,
    //     dt_lane_op(l, DT_OP_SEND, comm, right, <chunk r-s-1>) and
    //     dt_lane_op(l, DT_OP_RECV_ADD, comm, left, <chunk r-s-2>);
    //   allgather, p-1 rounds: in step s, send chunk r-s to the right and receive chunk
    //     r-s-1 from the left with DT_OP_RECV_COPY.
    // As it stands, the schedule is empty: every rank keeps its own values.
    (void)l, (void)comm, (void)r, (void)p, (void)off, (void)n;
}
