// coll_ring.c — the ring allreduce (Patarasuk & Yuan 2009; Baidu's allreduce) as a schedule:
// its reduce-scatter and allgather halves, which hier's "rs" variant and torus2d reuse
// (coll_hier.c), and the registry's builder (coll_algos.c). Lesson 04 builds it
// (lessons/04-ring-allreduce): a student handout ships this file compiled, not as source
// (lessons/components.txt). Its cost, term by term: coll_cost.c.
#include "coll_cost.h"
#include "coll_sched.h"

static int mod(int a, int p) { return ((a % p) + p) % p; }

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
