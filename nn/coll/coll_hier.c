// coll_hier.c — the two-level algorithms.
//   hier, variant "reduce" (Goyal et al. 2017 §4: "reduce within a server, allreduce across
//   servers, broadcast within a server"; Jia et al. 2018's hierarchical allreduce): a
//   binomial reduce to the group leader over the fast intra-node links, the leaders'
//   allreduce (ring or rhd) over the network, a binomial broadcast back. Only 1/s of the
//   ranks touch the network, so its latency term shrinks from ~p to ~p/s messages.
//   hier, variant "rs" (Cho et al. 2017's multi-ring, Horovod's hierarchical allreduce):
//   reduce-scatter in the group, allreduce of shard i among the ranks of local rank i of
//   every group, allgather in the group: every NIC carries 1/s of the buffer.
//   torus2d (Mikami et al. 2018 §3.2): the same three phases on an X×Y grid, the rings
//   along X (a row: X consecutive ranks) and the allreduce along Y (a column).
//   The binomial reduce and broadcast (MPICH's) that hier runs inside a group are here too.
// Lesson 06 builds this file (lessons/06-hierarchy): a student handout ships it compiled, not
// as source (lessons/components.txt). Not here: the flat algorithms (coll_sched.c,
// coll_ring.c, coll_rhd.c), the trees (coll_tree.c).
#include <string.h>

#include "coll_cost.h"
#include "coll_sched.h"

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

// rhd's short-message path where the cost model takes it, on the links it costs rhd with
// as `outer`'s part (coll_cost.c)
static void rhd(const dt_build_ctx *x, dt_algo outer, dt_lane *l, int comm, int r, int p,
                size_t off, size_t n, int quant) {
    int whole = dt_rhd_whole(x->o, outer, p, (double)n * (quant ? 2 : 4));
    dt_sched_rhd(l, comm, r, p, off, n, quant, whole);
}

static void inner(const dt_build_ctx *x, dt_algo outer, dt_lane *l, int comm, size_t off,
                  size_t n, int quant) {
    int r = x->rank[comm], p = x->size[comm];
    if (x->o->sharp)  // in the switches (coll_sharp.c), timing only
        dt_sched_sharp(l, comm, r, p, off, n,
                       dt_sharp_wire_s(x->o, outer, (double)n * (quant ? 2 : 4)));
    else if (x->o->inner == DT_ALGO_RHD) rhd(x, outer, l, comm, r, p, off, n, quant);
    else dt_sched_ring(l, comm, r, p, off, n, quant);
}

// reduce-scatter along `rows`, allreduce of the owned chunk along `cols`, allgather back
static void three_phase(const dt_build_ctx *x, dt_algo outer, dt_lane *l, int rows, int cols,
                        size_t n, int quant) {
    int r = x->rank[rows], p = x->size[rows];
    dt_sched_ring_rs(l, rows, r, p, 0, n);
    size_t lo = dt_chunk_lo(n, p, r), hi = dt_chunk_lo(n, p, r + 1);
    inner(x, outer, l, cols, lo, hi - lo, quant);
    dt_sched_ring_ag(l, rows, r, p, 0, n, quant);
}

static void hier_reduce(const dt_build_ctx *x, dt_lane *l, size_t n, int quant) {
    int g = DT_COMM_GROUP, r = x->rank[g], s = x->size[g];
    dt_sched_binomial_reduce(l, g, r, s, 0, n);
    if (r == 0) inner(x, DT_ALGO_HIER, l, DT_COMM_LEADERS, 0, n, quant);
    // fp16 on the wire: the broadcast's root rounds its own copy to the bits it sends, so its
    // group ends equal. Every leader must then round, a leader alone in a shorter last group
    // (P not a multiple of the group size) too: groups of opts.group ranks, the last one
    // shorter, so rounding is needed exactly when opts.group > 1.
    int round_root = quant && x->o->group > 1;
    dt_sched_binomial_bcast(l, g, r, s, 0, n, round_root);
}

void dt_build_hier(const dt_build_ctx *x, size_t n, int quant, dt_sched *s) {
    if (x->o->hier_rs)
        three_phase(x, DT_ALGO_HIER, &s->lanes[0], DT_COMM_GROUP, DT_COMM_CROSS, n, quant);
    else hier_reduce(x, &s->lanes[0], n, quant);
}

void dt_build_torus2d(const dt_build_ctx *x, size_t n, int quant, dt_sched *s) {
    three_phase(x, DT_ALGO_TORUS2D, &s->lanes[0], DT_COMM_ROW, DT_COMM_COL, n, quant);
}

// hier's groups of s consecutive ranks (the last may be short), their leaders (rank % s ==
// 0), and for the rs variant the cross-group sets (rank % s equal; only with p % s == 0).
// Made on every communicator, whatever its algorithm: auto may take hier.
int dt_comms_hier(const dt_coll_opts *o, int r, int p, dt_comm_span *out) {
    int s = o->group, g = r / s, k = 0;
    out[k++] = (dt_comm_span){DT_COMM_GROUP, g * s, 1, (g + 1) * s <= p ? s : p - g * s};
    if (r % s == 0) out[k++] = (dt_comm_span){DT_COMM_LEADERS, 0, s, (p + s - 1) / s};
    if (o->hier_rs && p % s == 0)  // only hier's rs variant talks across the groups
        out[k++] = (dt_comm_span){DT_COMM_CROSS, r % s, s, p / s};
    return k;
}

// torus2d's rows (X consecutive ranks) and columns, where a grid is set (opts.tx)
int dt_comms_torus2d(const dt_coll_opts *o, int r, int p, dt_comm_span *out) {
    int tx = o->tx;
    if (tx <= 0) return 0;
    out[0] = (dt_comm_span){DT_COMM_ROW, r / tx * tx, 1, tx};
    out[1] = (dt_comm_span){DT_COMM_COL, r % tx, tx, p / tx};
    return 2;
}
