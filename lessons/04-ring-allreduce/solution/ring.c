// ring.c — lesson 04: the ring allreduce as a schedule (student_ring.h has the contract).
// Patarasuk & Yuan 2009, "Bandwidth optimal all-reduce algorithms for clusters of
// workstations"; Baidu's allreduce. Every rank sends 2(p-1) messages of n/p elements, so
// one allreduce costs 2(p-1)α + 2(p-1)/p·nβ + (p-1)/p·nγ (docs/formulas.md, "Collective
// costs"): the bytes per rank hardly grow with p, the latencies do.
#include "student_ring.h"

// One message of chunk c of [off, off+n) (the p chunks of dt_chunk_lo) to or from peer.
static void chunk_op(dt_lane *l, int kind, int comm, int peer, size_t off, size_t n, int p,
                     int c) {
    size_t lo = dt_chunk_lo(n, p, c), hi = dt_chunk_lo(n, p, c + 1);
    dt_lane_op(l, kind, comm, peer, off + lo, hi - lo);
}

void student_ring(dt_lane *l, int comm, int r, int p, size_t off, size_t n) {
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    // reduce-scatter: after step s, chunk r-s-2 holds the sum of s+2 ranks' values
    for (int s = 0; s < p - 1; s++) {
        dt_lane_round(l);
        chunk_op(l, DT_OP_SEND, comm, right, off, n, p, (r - s - 1 + p) % p);
        chunk_op(l, DT_OP_RECV_ADD, comm, left, off, n, p, (r - s - 2 + 2 * p) % p);
    }
    // rank r now holds chunk r summed over all p ranks; allgather: pass the sums around
    for (int t = 0; t < p - 1; t++) {
        dt_lane_round(l);
        chunk_op(l, DT_OP_SEND, comm, right, off, n, p, (r - t + p) % p);
        chunk_op(l, DT_OP_RECV_COPY, comm, left, off, n, p, (r - t - 1 + p) % p);
    }
    dt_lane_close(l);
}
