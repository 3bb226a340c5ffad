// student_rhd.c — Rabenseifner's allreduce as a schedule (lesson 05; the contract is in
// student_rhd.h). Thakur, Rabenseifner & Gropp 2005, "Optimization of collective
// communication operations in MPICH", §4.5 and Fig. 2: a reduce-scatter by recursive
// halving, then an allgather by recursive doubling, with the ranks beyond the largest power
// of two folded in before and out after. Cost (docs/formulas.md, "Collective costs"):
//   p = 2^k:  2·lg p·α + 2n(p-1)/p·β + n(p-1)/p·γ
//   other p:  the same over p' = 2^⌊lg p⌋ ranks, plus (α + nβ + nγ) in and (α + nβ) out.
#include "student_rhd.h"

// The rank that plays new rank nr among the p' = p - rem survivors of the fold: the odd one
// of each of the first rem pairs, then everyone from 2·rem on.
static int real_rank(int nr, int rem) { return nr < rem ? 2 * nr + 1 : nr + rem; }

void student_rhd(dt_lane *l, int comm, int r, int p, size_t off, size_t n) {
    if (p <= 1) return;
    int pp = 1;
    while (pp * 2 <= p) pp *= 2;  // p' = 2^⌊lg p⌋
    int rem = p - pp, nr;          // nr: this rank's place among the p' (-1: folded out)

    // 1. fold in: of the first 2·rem ranks, each even one hands its whole buffer to the odd
    //    one after it, which adds it (α + nβ + nγ)
    if (r < 2 * rem) {
        dt_lane_round(l);
        if (r % 2 == 0) {
            dt_lane_op(l, DT_OP_SEND, comm, r + 1, off, n);
            nr = -1;
        } else {
            dt_lane_op(l, DT_OP_RECV_ADD, comm, r - 1, off, n);
            nr = r / 2;
        }
    } else {
        nr = r - rem;
    }

    if (nr >= 0) {
        // The buffer as p' blocks, block b = [dt_chunk_lo(n, pp, b), dt_chunk_lo(n, pp, b+1));
        // this rank's window is the blocks [lo, lo + cnt).
        int lo = 0, cnt = pp;
        // 2. reduce-scatter by recursive halving: lg p' steps; at distance mask, keep the
        //    half of the window on this rank's side of mask, send the other half to the
        //    partner and add the partner's copy of the kept half (α + (cnt/2)·(n/p')·(β+γ))
        for (int mask = pp / 2; mask >= 1; mask /= 2) {
            int partner = real_rank(nr ^ mask, rem), half = cnt / 2;
            int keep = (nr & mask) ? lo + half : lo, give = (nr & mask) ? lo : lo + half;
            size_t klo = dt_chunk_lo(n, pp, keep), khi = dt_chunk_lo(n, pp, keep + half);
            size_t glo = dt_chunk_lo(n, pp, give), ghi = dt_chunk_lo(n, pp, give + half);
            dt_lane_round(l);
            dt_lane_op(l, DT_OP_SEND, comm, partner, off + glo, ghi - glo);
            dt_lane_op(l, DT_OP_RECV_ADD, comm, partner, off + klo, khi - klo);
            lo = keep, cnt = half;
        }
        // now lo == nr: block nr holds the sum over all p ranks
        // 3. allgather by recursive doubling: the same partners in reverse order; send the
        //    window, receive the partner's (the other half of the doubled window) in place
        for (int mask = 1; mask < pp; mask *= 2) {
            int partner = real_rank(nr ^ mask, rem);
            int other = (nr & mask) ? lo - cnt : lo + cnt;
            size_t mlo = dt_chunk_lo(n, pp, lo), mhi = dt_chunk_lo(n, pp, lo + cnt);
            size_t olo = dt_chunk_lo(n, pp, other), ohi = dt_chunk_lo(n, pp, other + cnt);
            dt_lane_round(l);
            dt_lane_op(l, DT_OP_SEND, comm, partner, off + mlo, mhi - mlo);
            dt_lane_op(l, DT_OP_RECV_COPY, comm, partner, off + olo, ohi - olo);
            if (other < lo) lo = other;
            cnt *= 2;
        }
    }

    // 4. fold out: each odd rank of the first 2·rem returns the result to its even partner
    if (r < 2 * rem) {
        dt_lane_round(l);
        if (r % 2 == 0) dt_lane_op(l, DT_OP_RECV_COPY, comm, r + 1, off, n);
        else dt_lane_op(l, DT_OP_SEND, comm, r - 1, off, n);
    }
    dt_lane_close(l);
}
