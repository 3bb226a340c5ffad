// coll_btree.c — the shapes of NCCL's double binary tree (coll_btree.h): who is whose parent
// and children, and how deep the trees go. Read by the schedule that runs them (coll_tree.c)
// and by the cost model that prices them (coll_cost.c), neither of which the other calls for
// it.
#include "coll_btree.h"

// The in-order binary tree of ncclGetBtree: a rank's height is its lowest set bit; rank 0
// is the root, with the highest power of two below p as its one child.
void dt_btree(int r, int p, int *parent, int *child0, int *child1) {
    *parent = *child0 = *child1 = -1;
    if (r == 0) {
        int top = 1;
        while (top * 2 < p) top *= 2;
        if (p > 1) *child0 = top;
        return;
    }
    int bit = r & -r;
    int up = (r ^ bit) | (bit << 1);  // the neighbour at distance bit with the next bit set
    *parent = up < p ? up : (r ^ bit);
    for (int h = bit >> 1; h > 0; h >>= 1) {
        if (*child0 < 0) *child0 = r - h;  // always in range
        if (r + h < p) {
            *child1 = r + h;
            break;
        }
    }
}

// Tree 1: tree 0 mirrored (p even) or shifted by one rank (p odd), as NCCL's ncclGetDtree.
void dt_dtree(int tree, int r, int p, int *parent, int *child0, int *child1) {
    if (tree == 0) {
        dt_btree(r, p, parent, child0, child1);
        return;
    }
    int pos = p % 2 == 0 ? p - 1 - r : (r + p - 1) % p;
    int t[3];
    dt_btree(pos, p, &t[0], &t[1], &t[2]);
    for (int i = 0; i < 3; i++)
        if (t[i] >= 0) t[i] = p % 2 == 0 ? p - 1 - t[i] : (t[i] + 1) % p;
    *parent = t[0], *child0 = t[1], *child1 = t[2];
}

// The depth in closed form, ⌈lg p⌉ for p ≥ 2 (0 for p = 1), not by walking every rank to the
// root (O(P lg P), which every rank of a simulation paid once: O(P² lg P) in all). Tree 1 is
// tree 0 relabelled (mirrored or shifted), so both have tree 0's depth. In tree 0 a rank r
// with lowest set bit b has a parent whose lowest set bit is at least 2b (its (r^b)|2b has
// lowest bit 2b, its r^b a higher one), so a path doubles its lowest bit each hop until it
// reaches `top` (the highest power of two below p, the only rank whose lowest bit is top)
// and then the root: at most lg top + 1 = ⌈lg p⌉ hops. Rank 1's path 1, 2, 4, ..., top, 0
// takes every one of them. (tests/unit/test_coll_cost.c checks it against the walk.)
int dt_dtree_depth(int p) {
    int depth = 0;
    while (p > 1 && (1L << depth) < p) depth++;
    return depth;
}
