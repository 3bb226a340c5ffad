// coll_cost.h — the α-β-γ cost model of every allreduce schedule (docs/formulas.md,
// "Collective costs"; Thakur, Rabenseifner & Gropp 2005; Hockney's model): the time of one
// allreduce of `bytes` bytes per rank on p ranks, counted message by message from the schedules that coll_sched.c,
// coll_tree.c and coll_hier.c build, so the simulator can check the two against each other.
// Not here: contention between concurrent allreduces, or any link the model is not told of.
#ifndef DT_COLL_COST_H
#define DT_COLL_COST_H

#include "coll_opts.h"

// Seconds for one allreduce; o gives the shape (group, hier_rs, inner, tx, ty, segments,
// wire_f16) and the machine (o->cost). The registry's cost of `a` (coll_algos.c): NaN for
// DT_ALGO_MPI (the library's own is unknown), for an algorithm without a cost, and for
// shapes the algorithm cannot take (hier rs with p % group != 0, tx*ty != p).
double dt_coll_cost(dt_algo a, const dt_coll_opts *o, int p, double bytes);
// The cheapest of the algorithms that auto may choose on p ranks (coll_algos.c): ps, ring,
// rhd, dbtree, and hier and torus2d where their shapes fit.
dt_algo dt_coll_cheapest(const dt_coll_opts *o, int p, double bytes);
// The cost of each algorithm (coll_cost.c), as the registry names them.
double dt_cost_ps(const dt_coll_opts *o, int p, double bytes);
double dt_cost_ring(const dt_coll_opts *o, int p, double bytes);
double dt_cost_rhd(const dt_coll_opts *o, int p, double bytes);
double dt_cost_dbtree(const dt_coll_opts *o, int p, double bytes);
double dt_cost_hier(const dt_coll_opts *o, int p, double bytes);
double dt_cost_torus2d(const dt_coll_opts *o, int p, double bytes);
// rhd: 1 where its short-message path (recursive doubling: whole buffers, half the rounds)
// costs less than halving-doubling; the schedule follows it. outer: DT_ALGO_RHD for rhd on
// its own, DT_ALGO_HIER or DT_ALGO_TORUS2D for their inner allreduce (their links differ)
int dt_rhd_whole(const dt_coll_opts *o, dt_algo outer, int p, double bytes);
// Reduction in the switches (opts.sharp, coll_sharp.c): the seconds `bytes` take on one link
// of the inner allreduce of `outer` (DT_ALGO_HIER or DT_ALGO_TORUS2D), both directions at once
double dt_sharp_wire_s(const dt_coll_opts *o, dt_algo outer, double bytes);
// dbtree's pipeline: the segment count that minimises 2(S + D - 1)(α + bytes·β/S)
int dt_dbtree_segments(const dt_coll_opts *o, int p, double bytes);
// dbtree's crossings of nodes of g ranks (o->cost.dbt) for p ranks, unless already there
void dt_dbtree_links_of(dt_cost_params *c, int p, int g);
// Does dbtree's cost need those crossings: nodes of g > 1 ranks (fewer than p) sharing a link?
static inline int dt_dbtree_shares_links(const dt_cost_params *c, int p, int g) {
    return c->share > 1 && g > 1 && g < p;
}
// torus2d's grid for p ranks: X*Y == p with Y the largest divisor <= sqrt(p)
void dt_torus_shape(int p, int *x, int *y);

#endif
