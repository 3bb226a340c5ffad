// coll_rhd.c — Rabenseifner's allreduce, recursive halving then doubling (Thakur,
// Rabenseifner & Gropp 2005), as a schedule, with MPICH's short-message path; and the
// registry's builder (coll_algos.c). Lesson 05 builds it (lessons/05-halving-doubling-and-
// trees): a student handout ships this file compiled, not as source (lessons/components.txt).
// Its cost, term by term: coll_cost.c.
#include "coll_cost.h"
#include "coll_sched.h"

// ---- Rabenseifner (Thakur, Rabenseifner & Gropp 2005, as MPICH's allreduce): with
// p' = 2^⌊lg p⌋ and rem = p - p', the first 2·rem ranks pair up and the even one hands its
// whole buffer to the odd one (1 message of n), leaving p' ranks; recursive halving
// (lg p' steps: swap half of the current window with the partner at distance mask, keep
// and add the other half) leaves block `newrank` of p' blocks summed; recursive doubling
// mirrors it back; the odd ranks finally return the result to their even partners.
// p = 2^k: 2·lg p·α + 2n(p-1)/p·β + n(p-1)/p·γ.
// Short messages (`whole`, chosen by the cost model: dt_rhd_whole) take MPICH's short-message
// path instead, recursive doubling: lg p' rounds in which partners swap their whole buffers
// and add (lg p'·(α + nβ + nγ): half the rounds). Both partners add the same two numbers,
// so every rank ends with the same bits; with fp16 on the wire each rounds its own copy
// first (QUANT), as its partner will see it.
static int rhd_real(int nr, int rem) { return nr < rem ? 2 * nr + 1 : nr + rem; }

void dt_sched_rhd(dt_lane *l, int comm, int r, int p, size_t off, size_t n, int quant,
                  int whole) {
    if (p == 1) return;
    int pp = 1;
    while (pp * 2 <= p) pp *= 2;
    int rem = p - pp, nr;
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
    if (nr >= 0 && whole) {
        for (int mask = 1; mask < pp; mask *= 2) {
            dt_lane_round(l);
            if (quant) dt_lane_op(l, DT_OP_QUANT, comm, 0, off, n);
            dt_lane_op(l, DT_OP_SEND, comm, rhd_real(nr ^ mask, rem), off, n);
            dt_lane_op(l, DT_OP_RECV_ADD, comm, rhd_real(nr ^ mask, rem), off, n);
        }
    } else if (nr >= 0) {
        int lo = 0, cnt = pp;  // the window of blocks this rank is still responsible for
        for (int mask = pp / 2; mask >= 1; mask /= 2) {
            int partner = rhd_real(nr ^ mask, rem), half = cnt / 2;
            int keep = (nr & mask) ? lo + half : lo, give = (nr & mask) ? lo : lo + half;
            size_t klo = dt_chunk_lo(n, pp, keep), khi = dt_chunk_lo(n, pp, keep + half);
            size_t glo = dt_chunk_lo(n, pp, give), ghi = dt_chunk_lo(n, pp, give + half);
            dt_lane_round(l);
            dt_lane_op(l, DT_OP_SEND, comm, partner, off + glo, ghi - glo);
            dt_lane_op(l, DT_OP_RECV_ADD, comm, partner, off + klo, khi - klo);
            lo = keep, cnt = half;
        }
        // block nr (== lo) is now the sum over all p ranks
        for (int mask = 1; mask < pp; mask *= 2) {
            int partner = rhd_real(nr ^ mask, rem);
            int other = (nr & mask) ? lo - cnt : lo + cnt;
            size_t mlo = dt_chunk_lo(n, pp, lo), mhi = dt_chunk_lo(n, pp, lo + cnt);
            size_t olo = dt_chunk_lo(n, pp, other), ohi = dt_chunk_lo(n, pp, other + cnt);
            dt_lane_round(l);
            if (mask == 1 && quant) dt_lane_op(l, DT_OP_QUANT, comm, 0, off + mlo, mhi - mlo);
            dt_lane_op(l, DT_OP_SEND, comm, partner, off + mlo, mhi - mlo);
            dt_lane_op(l, DT_OP_RECV_COPY, comm, partner, off + olo, ohi - olo);
            if (other < lo) lo = other;
            cnt *= 2;
        }
    }
    if (r < 2 * rem) {
        dt_lane_round(l);
        if (r % 2 == 0) dt_lane_op(l, DT_OP_RECV_COPY, comm, r + 1, off, n);
        else dt_lane_op(l, DT_OP_SEND, comm, r - 1, off, n);
    }
    dt_lane_close(l);
}

// rhd's short-message path where the cost model takes it (it costs rhd on its own links)
void dt_build_rhd(const dt_build_ctx *x, size_t n, int quant, dt_sched *s) {
    int p = x->size[DT_COMM_ALL];
    int whole = dt_rhd_whole(x->o, DT_ALGO_RHD, p, (double)n * (quant ? 2 : 4));
    dt_sched_rhd(&s->lanes[0], DT_COMM_ALL, x->rank[DT_COMM_ALL], p, 0, n, quant, whole);
}
