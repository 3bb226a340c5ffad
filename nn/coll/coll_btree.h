// coll_btree.h — inside the allreduce library: the shapes of the binary trees of dbtree
// (Sanders, Speck & Träff 2009; NCCL 2.4's ncclGetBtree and ncclGetDtree), apart from the
// schedule that runs them (coll_tree.c) and the cost model that prices them (coll_cost.c),
// so that both read them and neither calls the other. Not part of the API (coll.h is).
#ifndef DT_COLL_BTREE_H
#define DT_COLL_BTREE_H

// NCCL-style binary tree over p ranks (in-order numbering, ncclGetBtree's shape): the
// parent (-1 at the root) and up to two children (-1 if absent) of rank r; tree 1 of the
// double tree is tree 0 mirrored (p even) or shifted by one (p odd).
void dt_btree(int r, int p, int *parent, int *child0, int *child1);
void dt_dtree(int tree, int r, int p, int *parent, int *child0, int *child1);
int dt_dtree_depth(int p);  // edges from the root to the deepest leaf, over both trees

#endif
