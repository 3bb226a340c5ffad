// coll_sched.c — building schedules (coll_sched.h), and the flat algorithms that run over
// one communicator: parameter server, ring, Rabenseifner's halving-doubling, and the
// binomial trees that hier uses inside a group. Each function states its rounds; the cost
// of each is in coll_cost.c, term by term, and its entry in the registry is in
// coll_algos.c. Not here: running them (coll_run.c), the trees (coll_tree.c), the
// two-level algorithms (coll_hier.c).
#include <string.h>

#include "coll_cost.h"
#include "coll_sched.h"

void dt_lane_round(dt_lane *l) {
    if (l->n_rounds > 0 && l->round_start[l->n_rounds - 1] == l->n_ops) {  // still empty
        l->key[l->n_rounds - 1] = l->next_key;
        return;
    }
    if (l->n_rounds + 2 > l->cap_rounds) {
        l->cap_rounds = l->cap_rounds ? 2 * l->cap_rounds : 16;
        l->round_start = realloc(l->round_start, (size_t)l->cap_rounds * sizeof(int));
        l->key = realloc(l->key, (size_t)l->cap_rounds * sizeof(int));
        DT_ASSERT(l->round_start && l->key);
    }
    if (l->n_rounds == 0) l->round_start[0] = l->n_ops;
    l->key[l->n_rounds] = l->next_key;
    l->n_rounds++;
    l->round_start[l->n_rounds] = l->n_ops;
}

void dt_lane_op(dt_lane *l, int kind, int comm, int peer, size_t off, size_t count) {
    if (count == 0) return;  // both ends skip it: they compute the same count
    DT_ASSERT(l->n_rounds > 0);
    if (l->n_ops == l->cap_ops) {
        l->cap_ops = l->cap_ops ? 2 * l->cap_ops : 32;
        l->ops = realloc(l->ops, (size_t)l->cap_ops * sizeof(dt_op));
        DT_ASSERT(l->ops);
    }
    l->ops[l->n_ops++] = (dt_op){(uint8_t)kind, (uint8_t)comm, peer, off, count};
    l->round_start[l->n_rounds] = l->n_ops;
}

// Drop a trailing empty round (dt_lane_round opened it, nothing was added).
void dt_lane_close(dt_lane *l) {
    while (l->n_rounds > 0 && l->round_start[l->n_rounds - 1] == l->round_start[l->n_rounds])
        l->n_rounds--;
}

void dt_sched_free(dt_sched *s) {
    for (int i = 0; i < DT_MAX_LANES; i++) {
        free(s->lanes[i].ops);
        free(s->lanes[i].round_start);
        free(s->lanes[i].delay);
        free(s->lanes[i].key);
    }
    memset(s, 0, sizeof *s);
}

static int mod(int a, int p) { return ((a % p) + p) % p; }

// ---- parameter server (the "ps" baseline): p-1 receives at the root, one after the
// other, then p-1 sends. Root time (p-1)(α + nβ + nγ) + (p-1)(α + nβ): the root's link is
// the bottleneck, which is why the landmark runs left it (Goyal et al. 2017 §4).
void dt_sched_ps(dt_lane *l, int comm, int r, int p, size_t off, size_t n, int quant) {
    if (p == 1) return;
    if (r == 0) {
        for (int i = 1; i < p; i++) {
            dt_lane_round(l);
            dt_lane_op(l, DT_OP_RECV_ADD, comm, i, off, n);
        }
        dt_lane_round(l);
        if (quant) dt_lane_op(l, DT_OP_QUANT, comm, 0, off, n);
        for (int i = 1; i < p; i++) dt_lane_op(l, DT_OP_SEND, comm, i, off, n);
    } else {
        dt_lane_round(l);
        dt_lane_op(l, DT_OP_SEND, comm, 0, off, n);
        dt_lane_round(l);
        dt_lane_op(l, DT_OP_RECV_COPY, comm, 0, off, n);
    }
    dt_lane_close(l);
}

void dt_build_ps(const dt_build_ctx *x, size_t n, int quant, dt_sched *s) {
    dt_sched_ps(&s->lanes[0], DT_COMM_ALL, x->rank[DT_COMM_ALL], x->size[DT_COMM_ALL], 0, n,
                quant);
}

// ---- ring (Patarasuk & Yuan 2009; Baidu's allreduce): p-1 reduce-scatter steps, each
// sending one chunk of n/p to the right neighbour while receiving and adding one from the
// left, then p-1 allgather steps that pass the finished chunks on. 2(p-1) messages of n/p:
// 2(p-1)α + 2n(p-1)/p·β + n(p-1)/p·γ (docs/formulas.md). Chunk c is [lo(c), lo(c+1)).
void dt_sched_ring_rs(dt_lane *l, int comm, int r, int p, size_t off, size_t n) {
    if (p == 1) return;
    int right = mod(r + 1, p), left = mod(r - 1, p), phase = ++l->phases;
    for (int s = 0; s < p - 1; s++) {  // after step s, chunk r-s-2 holds s+2 contributions
        int cs = mod(r - s - 1, p), cr = mod(r - s - 2, p);
        l->next_key = phase << 20 | s;
        dt_lane_round(l);
        dt_lane_op(l, DT_OP_SEND, comm, right, off + dt_chunk_lo(n, p, cs),
                   dt_chunk_lo(n, p, cs + 1) - dt_chunk_lo(n, p, cs));
        dt_lane_op(l, DT_OP_RECV_ADD, comm, left, off + dt_chunk_lo(n, p, cr),
                   dt_chunk_lo(n, p, cr + 1) - dt_chunk_lo(n, p, cr));
    }
    l->next_key = 0;
    dt_lane_close(l);  // rank r now owns chunk r, summed over all p ranks
}

void dt_sched_ring_ag(dt_lane *l, int comm, int r, int p, size_t off, size_t n, int quant) {
    if (p == 1) return;
    int right = mod(r + 1, p), left = mod(r - 1, p), phase = ++l->phases;
    for (int s = 0; s < p - 1; s++) {
        int cs = mod(r - s, p), cr = mod(r - s - 1, p);
        l->next_key = phase << 20 | s;
        dt_lane_round(l);
        if (s == 0 && quant)
            dt_lane_op(l, DT_OP_QUANT, comm, 0, off + dt_chunk_lo(n, p, cs),
                       dt_chunk_lo(n, p, cs + 1) - dt_chunk_lo(n, p, cs));
        dt_lane_op(l, DT_OP_SEND, comm, right, off + dt_chunk_lo(n, p, cs),
                   dt_chunk_lo(n, p, cs + 1) - dt_chunk_lo(n, p, cs));
        dt_lane_op(l, DT_OP_RECV_COPY, comm, left, off + dt_chunk_lo(n, p, cr),
                   dt_chunk_lo(n, p, cr + 1) - dt_chunk_lo(n, p, cr));
    }
    l->next_key = 0;
    dt_lane_close(l);
}

void dt_sched_ring(dt_lane *l, int comm, int r, int p, size_t off, size_t n, int quant) {
    dt_sched_ring_rs(l, comm, r, p, off, n);
    dt_sched_ring_ag(l, comm, r, p, off, n, quant);
}

// The whole allreduce as the registry calls it (coll_algos.c): every rank, the whole buffer.
void dt_build_ring(const dt_build_ctx *x, size_t n, int quant, dt_sched *s) {
    dt_sched_ring(&s->lanes[0], DT_COMM_ALL, x->rank[DT_COMM_ALL], x->size[DT_COMM_ALL], 0, n,
                  quant);
}

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

// ---- binomial trees (MPICH's reduce and broadcast): ⌈lg p⌉ rounds of whole messages,
// lg p·(α + nβ) each way; the reduce adds lg p·nγ at the root.
void dt_sched_binomial_reduce(dt_lane *l, int comm, int r, int p, size_t off, size_t n) {
    for (int mask = 1; mask < p; mask <<= 1) {
        dt_lane_round(l);
        if (r & mask) {
            dt_lane_op(l, DT_OP_SEND, comm, r - mask, off, n);
            break;
        }
        if (r + mask < p) dt_lane_op(l, DT_OP_RECV_ADD, comm, r + mask, off, n);
    }
    dt_lane_close(l);
}

void dt_sched_binomial_bcast(dt_lane *l, int comm, int r, int p, size_t off, size_t n,
                             int quant) {
    int mask = 1;
    while (mask < p) {
        if (r & mask) {
            dt_lane_round(l);
            dt_lane_op(l, DT_OP_RECV_COPY, comm, r - mask, off, n);
            break;
        }
        mask <<= 1;
    }
    if (r == 0 && quant) {  // the root rounds its copy to what goes on the wire
        dt_lane_round(l);
        dt_lane_op(l, DT_OP_QUANT, comm, 0, off, n);
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (r + mask >= p) continue;
        dt_lane_round(l);
        dt_lane_op(l, DT_OP_SEND, comm, r + mask, off, n);
    }
    dt_lane_close(l);
}
