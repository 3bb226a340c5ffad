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
// Not here: the flat algorithms (coll_sched.c), the trees (coll_tree.c).
#include <string.h>

#include "coll_cost.h"
#include "coll_sched.h"

// rhd's short-message path where the cost model takes it, on the links it costs rhd with
// as `outer`'s part (coll_cost.c)
static void rhd(const dt_coll *c, dt_algo outer, dt_lane *l, int comm, int r, int p,
                size_t off, size_t n, int quant) {
    int whole = dt_rhd_whole(dt_coll_get_opts(c), outer, p, (double)n * (quant ? 2 : 4));
    dt_sched_rhd(l, comm, r, p, off, n, quant, whole);
}

static void inner(const dt_coll *c, dt_algo outer, dt_lane *l, int comm, int r, int p,
                  size_t off, size_t n, int quant) {
    if (dt_coll_get_opts(c)->inner == DT_ALGO_RHD) rhd(c, outer, l, comm, r, p, off, n, quant);
    else dt_sched_ring(l, comm, r, p, off, n, quant);
}

// reduce-scatter along `rows`, allreduce of the owned chunk along `cols`, allgather back
static void three_phase(const dt_coll *c, dt_algo outer, dt_lane *l, int rows, int cols,
                        size_t n, int quant) {
    int r = dt_coll_rank_in(c, rows), p = dt_coll_size_of(c, rows);
    dt_sched_ring_rs(l, rows, r, p, 0, n);
    size_t lo = dt_chunk_lo(n, p, r), hi = dt_chunk_lo(n, p, r + 1);
    inner(c, outer, l, cols, dt_coll_rank_in(c, cols), dt_coll_size_of(c, cols), lo, hi - lo,
          quant);
    dt_sched_ring_ag(l, rows, r, p, 0, n, quant);
}

static void hier_reduce(const dt_coll *c, dt_lane *l, size_t n, int quant) {
    int g = DT_COMM_GROUP, r = dt_coll_rank_in(c, g), s = dt_coll_size_of(c, g);
    dt_sched_binomial_reduce(l, g, r, s, 0, n);
    if (r == 0)
        inner(c, DT_ALGO_HIER, l, DT_COMM_LEADERS, dt_coll_rank_in(c, DT_COMM_LEADERS),
              dt_coll_size_of(c, DT_COMM_LEADERS), 0, n, quant);
    // fp16 on the wire: the broadcast's root rounds its own copy to the bits it sends, so its
    // group ends equal. Every leader must then round, a leader alone in a shorter last group
    // (P not a multiple of the group size) too: groups of opts.group ranks, the last one
    // shorter, so rounding is needed exactly when opts.group > 1.
    int round_root = quant && dt_coll_get_opts(c)->group > 1;
    dt_sched_binomial_bcast(l, g, r, s, 0, n, round_root);
}

void dt_build_hier(const dt_coll *c, size_t n, int quant, dt_sched *s) {
    if (dt_coll_get_opts(c)->hier_rs)
        three_phase(c, DT_ALGO_HIER, &s->lanes[0], DT_COMM_GROUP, DT_COMM_CROSS, n, quant);
    else hier_reduce(c, &s->lanes[0], n, quant);
}

void dt_build_torus2d(const dt_coll *c, size_t n, int quant, dt_sched *s) {
    three_phase(c, DT_ALGO_TORUS2D, &s->lanes[0], DT_COMM_ROW, DT_COMM_COL, n, quant);
}
