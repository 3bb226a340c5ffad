// coll_tree.c — NCCL's double binary tree (Sanders, Speck & Träff 2009, "Two-tree
// algorithms for full bandwidth broadcast, reduction and scan"; NCCL 2.4): two binary trees
// over the same ranks, built so that a rank that is an inner node of one is (nearly
// always) a leaf of the other. Each tree reduces one half of the buffer to its root and
// broadcasts it back, in `segments` pipelined pieces, so every link carries about n bytes
// each way and the latency grows with lg p, not p. Not here: running them (coll_run.c; coll_request.c polls the two lanes).
#include "coll_btree.h"
#include "coll_cost.h"
#include "coll_sched.h"

// One tree over [off, off+n) in S segments. Reduce: in round k a rank receives segment k
// from its children and passes segment k-1 (complete since round k-1) to its parent; a leaf
// sends segment k in round k. Broadcast: in round k a rank receives segment k from its
// parent and passes segment k-1 to its children; the root sends segment k in round k.
//
// Coarsening (coll_coarsen.c, opts.coarsen_tree) needs each round's step on a clock that
// all ranks share, so that a message merged on one side is the message merged on the other.
// In the reduce, a leaf's round k meets its parent's round k and an inner node's round k its
// parent's round k-1: round k is step k - (the inner nodes from r up to the root, r included,
// the root not). In the broadcast, a child's round k meets its parent's round k+1 when that
// parent is not the root: round k is step k + (r's ancestors other than the root).
static void tree_lags(int tree, int r, int p, int *reduce, int *bcast) {
    int up, c0, c1;
    *reduce = *bcast = 0;
    for (int x = r, first = 1;; first = 0) {
        dt_dtree(tree, x, p, &up, &c0, &c1);
        if (up < 0) break;                      // x is the root
        if (c0 >= 0 || c1 >= 0) ++*reduce;      // x inner: one step behind its parent
        if (!first) ++*bcast;                   // x is r's non-root ancestor
        x = up;
    }
}

static void tree_lane(dt_lane *l, int tree, int comm, int r, int p, size_t off, size_t n,
                      int S, int quant) {
    int up, c0, c1, lag_reduce, lag_bcast;
    dt_dtree(tree, r, p, &up, &c0, &c1);
    tree_lags(tree, r, p, &lag_reduce, &lag_bcast);
    int leaf = c0 < 0 && c1 < 0, phase = DT_KEY_TREE | ++l->phases << 20;
    // steps: 64 + k - lag_reduce >= 0 (a tree over p ranks is less than 64 deep)
#define SEG(k) off + dt_chunk_lo(n, S, (k)), dt_chunk_lo(n, S, (k) + 1) - dt_chunk_lo(n, S, (k))
    for (int k = 0; k <= S; k++) {
        l->next_key = phase | (64 + k - lag_reduce);
        dt_lane_round(l);
        if (leaf) {
            if (k < S && up >= 0) dt_lane_op(l, DT_OP_SEND, comm, up, SEG(k));
            continue;
        }
        if (k < S && c0 >= 0) dt_lane_op(l, DT_OP_RECV_ADD, comm, c0, SEG(k));
        if (k < S && c1 >= 0) dt_lane_op(l, DT_OP_RECV_ADD, comm, c1, SEG(k));
        if (k >= 1 && up >= 0) dt_lane_op(l, DT_OP_SEND, comm, up, SEG(k - 1));
    }
    phase = DT_KEY_TREE | ++l->phases << 20;
    for (int k = 0; k <= S; k++) {
        l->next_key = phase | (k + lag_bcast);
        dt_lane_round(l);
        if (up < 0) {  // the root
            if (k < S && quant) dt_lane_op(l, DT_OP_QUANT, comm, 0, SEG(k));
            if (k < S && c0 >= 0) dt_lane_op(l, DT_OP_SEND, comm, c0, SEG(k));
            if (k < S && c1 >= 0) dt_lane_op(l, DT_OP_SEND, comm, c1, SEG(k));
            continue;
        }
        if (k < S) dt_lane_op(l, DT_OP_RECV_COPY, comm, up, SEG(k));
        if (k >= 1 && c0 >= 0) dt_lane_op(l, DT_OP_SEND, comm, c0, SEG(k - 1));
        if (k >= 1 && c1 >= 0) dt_lane_op(l, DT_OP_SEND, comm, c1, SEG(k - 1));
    }
#undef SEG
    l->next_key = 0;
    dt_lane_close(l);
}

void dt_sched_dbtree(dt_sched *s, int comm, int r, int p, size_t off, size_t n, int segments,
                     int quant) {
    if (p == 1) return;
    size_t half = n / 2;
    s->n_lanes = 2;
    tree_lane(&s->lanes[0], 0, comm, r, p, off, half, segments, quant);
    tree_lane(&s->lanes[1], 1, comm, r, p, off + half, n - half, segments, quant);
}

// The whole allreduce as the registry calls it (coll_algos.c): the cost model picks S.
void dt_build_dbtree(const dt_build_ctx *x, size_t n, int quant, dt_sched *s) {
    int p = x->size[DT_COMM_ALL];
    dt_sched_dbtree(s, DT_COMM_ALL, x->rank[DT_COMM_ALL], p, 0, n,
                    dt_dbtree_segments(x->o, p, (double)n * (quant ? 2 : 4)), quant);
}
