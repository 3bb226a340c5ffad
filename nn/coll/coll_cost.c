// coll_cost.c — the α-β-γ model of coll_cost.h, one function per schedule. Each term names
// the rounds it counts; `chunk(b, k)` is the largest of k nearly equal pieces of b bytes
// (the schedules split by elements, so the slowest message carries the rounded-up piece).
#include "coll_cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll_btree.h"

static double wire_bytes(const dt_coll_opts *o) { return o->wire_f16 ? 2.0 : 4.0; }

static double chunk(const dt_coll_opts *o, double bytes, int k) {
    double w = wire_bytes(o), n = ceil(bytes / w);
    return ceil(n / k) * w;
}

static int lg_ceil(int p) {
    int k = 0;
    while ((1 << k) < p) k++;
    return k;
}

typedef struct { double a, b, g; } link_t;

// ring: p-1 reduce-scatter steps (send + receive + add one chunk), p-1 allgather steps
static double ring_rs(const dt_coll_opts *o, int p, double bytes, link_t L) {
    if (p <= 1) return 0.0;
    double c = chunk(o, bytes, p);
    return (p - 1) * (L.a + c * L.b + c * L.g);
}
static double ring_ag(const dt_coll_opts *o, int p, double bytes, link_t L) {
    if (p <= 1) return 0.0;
    return (p - 1) * (L.a + chunk(o, bytes, p) * L.b);
}
static double ring(const dt_coll_opts *o, int p, double bytes, link_t L) {
    return ring_rs(o, p, bytes, L) + ring_ag(o, p, bytes, L);
}

// rhd: lg p' halving steps (window/2 sent, window/2 added), lg p' doubling steps, and for
// p != p' one whole-buffer message (+ add) before and one after. A step whose partner is
// `mask` ranks away runs on `near` while mask < span (the partner is on the same node: ranks
// fill nodes in order), else on `far`; the fold pairs neighbours (near when span >= 2).
typedef struct {
    link_t far, near;
    int span;
} steps_t;
static link_t step_link(const steps_t *S, int mask) { return mask < S->span ? S->near : S->far; }

static int pow2_floor(int p) {
    int pp = 1;
    while (pp * 2 <= p) pp *= 2;
    return pp;
}
static double rhd_fold(int p, int pp, double bytes, const steps_t *S) {
    link_t L = step_link(S, 1);
    return pp != p ? 2 * L.a + 2 * bytes * L.b + bytes * L.g : 0.0;
}
static double rhd_halving(const dt_coll_opts *o, int p, double bytes, const steps_t *S) {
    if (p <= 1) return 0.0;
    int pp = pow2_floor(p);
    double t = 0.0, c = chunk(o, bytes, pp);
    for (int cnt = pp / 2; cnt >= 1; cnt /= 2) {
        link_t L = step_link(S, cnt);
        t += L.a + cnt * c * (L.b + L.g);
    }
    for (int cnt = 1; cnt < pp; cnt *= 2) {
        link_t L = step_link(S, cnt);
        t += L.a + cnt * c * L.b;
    }
    return t + rhd_fold(p, pp, bytes, S);
}
// rhd's short-message path: lg p' whole-buffer swaps, each added, and the same fold-in and
// fold-out (coll_sched.c)
static double rhd_doubling(int p, double bytes, const steps_t *S) {
    if (p <= 1) return 0.0;
    int pp = pow2_floor(p);
    double t = 0.0;
    for (int mask = 1; mask < pp; mask *= 2) {
        link_t L = step_link(S, mask);
        t += L.a + bytes * (L.b + L.g);
    }
    return t + rhd_fold(p, pp, bytes, S);
}
static int rhd_whole(const dt_coll_opts *o, int p, double bytes, const steps_t *S) {
    // fp16 on the wire with extra ranks: their copy of the result would be rounded once
    // more than everyone else's; halving-doubling rounds every finished block for them
    if (p <= 1 || (o->wire_f16 && pow2_floor(p) != p)) return 0;
    return rhd_doubling(p, bytes, S) < rhd_halving(o, p, bytes, S);
}
static double rhd(const dt_coll_opts *o, int p, double bytes, const steps_t *S) {
    return rhd_whole(o, p, bytes, S) ? rhd_doubling(p, bytes, S) : rhd_halving(o, p, bytes, S);
}

// The links an rhd sees. On its own (DT_ALGO_RHD) with cost.share > 1, every rank of a node
// (group of them) crosses the network in the same step, so each moves its bytes at 1/share
// of the node's bandwidth, and the steps inside a node run on the intra link; as hier's
// inner allreduce among leaders (one per node) or along torus2d's columns: the network,
// alone; as hier rs's inner one: all `group` cross sets of a node at once (share).
// torus2d's columns on nodes of `share` ranks (ranks fill nodes in order): a rank's column
// neighbours are x ranks away, so min(share, x) ranks of a node cross the network in the
// same step, each at that fraction of it (with x >= share: the whole node, as hier rs).
static link_t torus_col_link(const dt_coll_opts *o, int x) {
    link_t out = {o->cost.alpha, o->cost.beta, o->cost.gamma};
    if (o->cost.share > 1) out.b *= fmin(o->cost.share, (double)x);
    return out;
}

static steps_t rhd_links(const dt_coll_opts *o, dt_algo outer) {
    link_t out = {o->cost.alpha, o->cost.beta, o->cost.gamma};
    link_t in = {o->cost.alpha_intra, o->cost.beta_intra, o->cost.gamma};
    double share = o->cost.share > 1 ? o->cost.share : 1.0;
    link_t shared = out;
    shared.b *= share;
    if (outer == DT_ALGO_RHD && share > 1 && o->group > 1) return (steps_t){shared, in, o->group};
    if (outer == DT_ALGO_HIER && o->hier_rs) return (steps_t){shared, shared, 1};
    if (outer == DT_ALGO_TORUS2D && share > 1 && o->tx > 0) {
        link_t col = torus_col_link(o, o->tx);
        return (steps_t){col, col, 1};
    }
    return (steps_t){out, out, 1};
}

int dt_rhd_whole(const dt_coll_opts *o, dt_algo outer, int p, double bytes) {
    steps_t S = rhd_links(o, outer);
    return rhd_whole(o, p, bytes, &S);
}

// ps: the root receives and adds p-1 whole buffers in turn, then sends p-1 at once
static double ps(int p, double bytes, link_t L) {
    if (p <= 1) return 0.0;
    return (p - 1) * (L.a + bytes * (L.b + L.g)) + L.a + (p - 1) * bytes * L.b;
}

// binomial reduce / broadcast: ⌈lg p⌉ whole-buffer steps on the critical path
static double binomial(int p, double bytes, link_t L, int reduce) {
    return lg_ceil(p) * (L.a + bytes * (L.b + (reduce ? L.g : 0.0)));
}

// How the two trees cross nodes of g ranks (ranks filling nodes in order): the most tree
// edges that leave or enter one node (in a round every edge carries a segment at once, and
// a node's edges to other nodes share its network link), and for each count c of
// cross-node hops on a path from a rank to its tree's root, the most intra-node hops of such
// a path. The in-order trees keep the low levels inside a node; each node still has a few
// edges out (its top ranks' parents and children).
void dt_dbtree_links_of(dt_cost_params *c, int p, int g) {
    if (c->dbt.p == p && c->dbt.g == g) return;
    c->dbt.p = p, c->dbt.g = g, c->dbt.edges = 0;
    memset(c->dbt.intra, -1, sizeof c->dbt.intra);
    int *nc = mallocCheck(2 * (size_t)p * sizeof(int)), *ni = nc + p;
    for (int tree = 0; tree < 2; tree++) {
        for (int r = 0; r < p; r++) nc[r] = -1;
        for (int r = 0; r < p; r++) {  // hops to the root, memoised along the chain
            int chain[64], n = 0, x = r, up, c0, c1;
            while (nc[x] < 0) {
                chain[n++] = x;
                dt_dtree(tree, x, p, &up, &c0, &c1);
                if (up < 0) {
                    nc[x] = ni[x] = 0, n--;
                    break;
                }
                x = up;
            }
            for (int j = n - 1; j >= 0; j--) {
                int y = chain[j];
                dt_dtree(tree, y, p, &up, &c0, &c1);
                int cross = up / g != y / g;
                nc[y] = nc[up] + cross, ni[y] = ni[up] + !cross;
            }
            if (nc[r] < 33 && ni[r] > c->dbt.intra[nc[r]]) c->dbt.intra[nc[r]] = (signed char)ni[r];
        }
    }
    for (int n0 = 0; n0 < p; n0 += g) {
        int out = 0, in = 0;
        for (int r = n0; r < n0 + g && r < p; r++)
            for (int tree = 0; tree < 2; tree++) {
                int up, c0, c1;
                dt_dtree(tree, r, p, &up, &c0, &c1);
                out += up >= 0 && up / g != r / g;
                in += (c0 >= 0 && c0 / g != r / g) + (c1 >= 0 && c1 / g != r / g);
            }
        if (out > c->dbt.edges) c->dbt.edges = out;
        if (in > c->dbt.edges) c->dbt.edges = in;
    }
    free(nc);
}

// The pipeline's fill: the first segment climbs from a leaf to the root, each hop bringing
// two children's segments to a rank, on the network if the hop leaves the node, else on the
// intra link; the slowest path over both trees.
static double dbtree_fill(const dt_cost_params *c, double seg, link_t L, link_t in) {
    double worst = 0.0;
    for (int k = 0; k < 33; k++)
        if (c->dbt.intra[k] >= 0) {
            double t = k * (L.a + 2 * seg * L.b) + c->dbt.intra[k] * (in.a + 2 * seg * in.b);
            if (t > worst) worst = t;
        }
    return worst;
}

// dbtree: each tree's half in S segments of bytes/(2S); a round moves two segments through
// every rank's link (two children in one tree, the parent in the other) and adds two;
// S + D - 1 rounds up, S + D - 1 rounds down (coll_tree.c). With cost.share > 1 the ranks
// of a node (`group` of them, in rank order) share its network link: in the steady state a
// round's cross-node segments queue on the busiest node's link (dt_dbtree_links_of) while
// the others move on the intra links, S - 1 such rounds, plus the fill (dbtree_fill); each
// phase the same way (the broadcast runs the edges backwards).
static double dbtree(const dt_coll_opts *o, int p, double bytes, link_t L, link_t in) {
    if (p <= 1) return 0.0;
    int D = o->dbtree_depth > 0 ? o->dbtree_depth : dt_dtree_depth(p);
    int S = dt_dbtree_segments(o, p, bytes);
    double seg = chunk(o, ceil(bytes / 2.0 / wire_bytes(o)) * wire_bytes(o), S);
    double add = 2 * seg * L.g;
    if (dt_dbtree_shares_links(&o->cost, p, o->group)) {
        dt_cost_params c = o->cost;  // the caller's shape, else computed here
        dt_dbtree_links_of(&c, p, o->group);
        double net = L.a + c.dbt.edges * seg * L.b;
        double local = in.a + 2 * seg * in.b, busy = net > local ? net : local;
        double fill = dbtree_fill(&c, seg, L, in);
        return (S - 1) * (busy + add) + fill + D * add + (S - 1) * busy + fill;
    }
    double rounds = S + D - 1, move = L.a + 2 * seg * L.b;
    return rounds * (move + add) + rounds * move;
}

int dt_dbtree_segments(const dt_coll_opts *o, int p, double bytes) {
    if (o->segments > 0) return o->segments;
    int D = p <= 1 ? 1 : o->dbtree_depth > 0 ? o->dbtree_depth : dt_dtree_depth(p);
    double half = ceil(bytes / 2.0 / wire_bytes(o));  // elements per tree
    if (D <= 1 || o->cost.alpha <= 0 || half < 2) return 1;
    double s = sqrt((D - 1) * bytes * o->cost.beta / o->cost.alpha);
    if (s > half) s = half;
    if (s > 4096) s = 4096;
    return s < 1 ? 1 : (int)lround(s);
}

void dt_torus_shape(int p, int *x, int *y) {
    int best = 1;
    for (int d = 1; (long)d * d <= p; d++)
        if (p % d == 0) best = d;
    *y = best, *x = p / best;
}

// Reduction in the switches (coll_sharp.c): each member's bytes cross its link once each
// way, both directions at once, on the links the inner allreduce has (rhd_links' far link)
double dt_sharp_wire_s(const dt_coll_opts *o, dt_algo outer, double bytes) {
    return bytes * rhd_links(o, outer).far.b;
}

// hier's and torus2d's inner allreduce, on the links rhd_links gives it. In the switches:
// the arrival and the release, a message each (2α), and the bytes' time on one link.
static double inner(const dt_coll_opts *o, dt_algo outer, int p, double bytes) {
    steps_t S = rhd_links(o, outer);
    if (o->sharp) return p > 1 && bytes > 0 ? 2 * S.far.a + dt_sharp_wire_s(o, outer, bytes) : 0;
    return o->inner == DT_ALGO_RHD ? rhd(o, p, bytes, &S) : ring(o, p, bytes, S.far);
}

// ---- one cost function per algorithm, as the registry names them (coll_algos.c) ----

static link_t outer_link(const dt_coll_opts *o) {
    return (link_t){o->cost.alpha, o->cost.beta, o->cost.gamma};
}

static link_t intra_link(const dt_coll_opts *o) {
    return (link_t){o->cost.alpha_intra, o->cost.beta_intra, o->cost.gamma};
}

double dt_cost_ps(const dt_coll_opts *o, int p, double bytes) {
    return ps(p, bytes, outer_link(o));
}

// A ring steps at its slowest edge's pace: inside one node (p <= group) every edge is the
// node's own link; across nodes some edges cross the network and the rest stay inside, so
// its link is the worse of the two (a DGX-1 with four EDR NICs: 50 GB/s out of the node,
// 25 GB/s over one NVLink 2.0 link inside it).
double dt_cost_ring(const dt_coll_opts *o, int p, double bytes) {
    link_t l = outer_link(o), in = intra_link(o);
    if (o->group > 1 && in.b > 0 && p <= o->group) return ring(o, p, bytes, in);
    if (o->group > 1 && p > o->group && in.b > l.b) l.b = in.b;
    if (o->group > 1 && p > o->group && in.a > l.a) l.a = in.a;
    return ring(o, p, bytes, l);
}

double dt_cost_rhd(const dt_coll_opts *o, int p, double bytes) {
    steps_t S = rhd_links(o, DT_ALGO_RHD);
    return rhd(o, p, bytes, &S);
}

double dt_cost_dbtree(const dt_coll_opts *o, int p, double bytes) {
    return dbtree(o, p, bytes, outer_link(o), intra_link(o));
}

double dt_cost_hier(const dt_coll_opts *o, int p, double bytes) {
    link_t in = intra_link(o);
    int s = o->group > 0 ? o->group : 1;
    if (s > p) return NAN;
    int g = (p + s - 1) / s;
    if (o->hier_rs) {
        if (p % s) return NAN;
        return ring_rs(o, s, bytes, in) + inner(o, DT_ALGO_HIER, g, chunk(o, bytes, s)) +
               ring_ag(o, s, bytes, in);
    }
    return binomial(s, bytes, in, 1) + inner(o, DT_ALGO_HIER, g, bytes) +
           binomial(s, bytes, in, 0);
}

// Mikami et al. 2018 §3.2: ring reduce-scatter along the rows, the inner allreduce of the
// owned chunk along the columns, ring allgather along the rows. Without nodes (share <= 1)
// the rows run on the intra link and the columns on the network. On nodes of `share` ranks
// (ranks filling them in order): a row lies inside a node when x divides the node's ranks,
// else its ring crosses nodes one rank of a node at a time (the network, unshared); the
// columns share each node's network as torus_col_link says.
double dt_cost_torus2d(const dt_coll_opts *o, int p, double bytes) {
    int x = o->tx, y = o->ty;
    if (x <= 0 || y <= 0) dt_torus_shape(p, &x, &y);
    if ((long)x * y != p) return NAN;
    link_t row = intra_link(o);
    if (o->cost.share > 1) {
        int node = (int)o->cost.share;
        if (!(x <= node && node % x == 0)) row = outer_link(o);
        link_t col = torus_col_link(o, x);
        steps_t S = {col, col, 1};
        double c = chunk(o, bytes, x);
        double mid = o->inner == DT_ALGO_RHD ? rhd(o, y, c, &S) : ring(o, y, c, col);
        return ring_rs(o, x, bytes, row) + mid + ring_ag(o, x, bytes, row);
    }
    return ring_rs(o, x, bytes, row) + inner(o, DT_ALGO_TORUS2D, y, chunk(o, bytes, x)) +
           ring_ag(o, x, bytes, row);
}
