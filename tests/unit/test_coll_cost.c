// test_coll_cost.c — the allreduce library's pure parts: the double binary tree's shape
// (nn/coll/coll_tree.c) and the α-β-γ cost model (nn/coll/coll_cost.c) against the closed forms
// of docs/formulas.md, "Collective costs" (Thakur, Rabenseifner & Gropp 2005), written out
// independently here, with fresh random machines (α, β, γ) and sizes from tu_seed(). Relative
// tolerance 1e-12 (the same few float64 operations in another order).
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_cost.h"
#include "coll/coll_btree.h"
#include "coll/coll_sched.h"
#include "testutil.h"

static void assert_rel(double got, double want, const char *what) {
    if (!(fabs(got - want) <= 1e-12 * fabs(want) + 1e-300)) {
        fprintf(stderr, "%s: got %.17g, want %.17g\n", what, got, want);
        fail();
    }
}

static dt_coll_opts random_opts(tu_rng *r) {
    dt_coll_opts o = dt_coll_opts_default();
    o.cost.alpha = tu_uniform(r, 1e-7, 1e-4);
    o.cost.beta = tu_uniform(r, 1e-11, 1e-8);
    o.cost.gamma = tu_uniform(r, 1e-12, 1e-9);
    o.cost.alpha_intra = o.cost.alpha, o.cost.beta_intra = o.cost.beta;
    return o;
}

// Every rank of both trees has one parent (but the root), its parent lists it as a child,
// the root reaches everyone, and the depth is at most ⌈lg p⌉ + 1.
static void test_double_binary_tree_spans_every_rank_with_consistent_links(void **state) {
    (void)state;
    for (int p = 1; p <= 600; p += (p < 70 ? 1 : 37)) {
        for (int tree = 0; tree < 2; tree++) {
            int roots = 0;
            int *seen = calloc((size_t)p, sizeof(int));
            for (int r = 0; r < p; r++) {
                int up, c0, c1;
                dt_dtree(tree, r, p, &up, &c0, &c1);
                if (up < 0) roots++;
                else {
                    int pu, pc0, pc1;
                    dt_dtree(tree, up, p, &pu, &pc0, &pc1);
                    assert_true(pc0 == r || pc1 == r);
                }
                if (c0 >= 0) assert_true(c0 < p && c0 != r), seen[c0]++;
                if (c1 >= 0) assert_true(c1 < p && c1 != r && c1 != c0), seen[c1]++;
            }
            assert_int_equal(roots, 1);
            for (int r = 0, root_seen = 0; r < p; r++) {  // every non-root is one's child
                if (seen[r] == 0) root_seen++;
                else assert_int_equal(seen[r], 1);
                assert_true(root_seen <= 1);
            }
            free(seen);
        }
        int lg = 0;
        while ((1 << lg) < p) lg++;
        assert_true(dt_dtree_depth(p) <= lg + 1);
    }
}

// dt_dtree_depth's closed form against the walk it replaces: every rank of both trees
// followed to its root, the longest path, for every p up to 2100 and a few up to 70,000
// (the simulation's GPU counts and odd ones around them).
static void test_dtree_depth_is_the_longest_walk_to_the_root(void **state) {
    (void)state;
    int big[] = {4095, 4096, 4097, 6000, 8191, 8192, 8193, 16383, 16384, 16385, 65537};
    for (int i = 0; i < 2100 + (int)(sizeof big / sizeof *big); i++) {
        int p = i < 2100 ? i + 1 : big[i - 2100], want = 0;
        for (int tree = 0; tree < 2; tree++)
            for (int r = 0; r < p; r++) {
                int d = 0, up, c0, c1;
                for (int x = r;; x = up, d++) {
                    dt_dtree(tree, x, p, &up, &c0, &c1);
                    if (up < 0) break;
                }
                if (d > want) want = d;
            }
        if (dt_dtree_depth(p) != want) {
            fprintf(stderr, "p %d: dt_dtree_depth %d, the longest walk %d\n", p,
                    dt_dtree_depth(p), want);
            fail();
        }
    }
}

// rhd is the cheaper of its two paths (MPICH: recursive doubling for short messages), and
// dt_rhd_whole names the one it took: `halving` and `doubling` are the closed forms.
static void assert_rhd(const dt_coll_opts *o, int p, double n, double halving, double doubling,
                       const char *what) {
    int whole = doubling < halving;
    assert_rel(dt_coll_cost(DT_ALGO_RHD, o, p, n), whole ? doubling : halving, what);
    if (dt_rhd_whole(o, DT_ALGO_RHD, p, n) != whole) {
        fprintf(stderr, "%s: p %d, %g bytes: dt_rhd_whole %d, closed forms say %d\n", what, p, n,
                dt_rhd_whole(o, DT_ALGO_RHD, p, n), whole);
        fail();
    }
}

// Ring and Rabenseifner on p = 2^k with n divisible by p: the closed forms of docs/formulas.md,
// "Collective costs"; rhd's short-message path: k·(α + nβ + nγ). Sizes from 4p bytes up, so
// both paths are taken.
static void test_ring_and_rhd_match_reference_closed_forms_power_of_two(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int t = 0; t < 200; t++) {
        dt_coll_opts o = random_opts(&r);
        int k = tu_int(&r, 1, 10), p = 1 << k;
        double n = 4.0 * p * floor(exp(tu_uniform(&r, 0, log(100000))));  // divisible by 4p
        double a = o.cost.alpha, b = o.cost.beta, g = o.cost.gamma;
        assert_rel(dt_coll_cost(DT_ALGO_RING, &o, p, n),
                   2 * (p - 1) * a + 2 * n * (p - 1) / p * b + n * (p - 1) / p * g, "ring");
        assert_rhd(&o, p, n, 2 * k * a + 2 * n * (p - 1) / p * b + n * (p - 1) / p * g,
                   k * (a + n * b + n * g), "rhd");
        o.wire_f16 = 1;  // fp16 on the wire: the same choice, in 2-byte elements
        n /= 2;
        assert_rhd(&o, p, n, 2 * k * a + 2 * n * (p - 1) / p * b + n * (p - 1) / p * g,
                   k * (a + n * b + n * g), "rhd fp16");
    }
}

// Rabenseifner on other p: two more whole-buffer messages and one more add than on p', on
// either path.
static void test_rhd_other_p_adds_the_fold_in_and_out(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int t = 0; t < 200; t++) {
        dt_coll_opts o = random_opts(&r);
        int k = tu_int(&r, 1, 9), pp = 1 << k, p = pp + tu_int(&r, 1, pp - 1 > 0 ? pp - 1 : 1);
        if (p == 2 * pp) p--;
        double n = 4.0 * pp * floor(exp(tu_uniform(&r, 0, log(100000))));
        double a = o.cost.alpha, b = o.cost.beta, g = o.cost.gamma;
        double fold = 2 * a + 2 * n * b + n * g;
        double halving = 2 * k * a + 2 * n * (pp - 1) / pp * b + n * (pp - 1) / pp * g + fold;
        assert_rhd(&o, p, n, halving, k * (a + n * b + n * g) + fold, "rhd other p");
        // fp16 on the wire with extra ranks: always halving-doubling (see coll_cost.c)
        o.wire_f16 = 1;
        n /= 2;
        halving = 2 * k * a + 2 * n * (pp - 1) / pp * b + n * (pp - 1) / pp * g +
                  2 * a + 2 * n * b + n * g;
        assert_rel(dt_coll_cost(DT_ALGO_RHD, &o, p, n), halving, "rhd other p, fp16");
        assert_int_equal(dt_rhd_whole(&o, DT_ALGO_RHD, p, n), 0);
    }
}

// rhd on nodes of g = 2^j ranks that share the network (cost.share = s): the j steps whose
// partner is on the same node run on the intra link, the k - j others at s·β; p = 2^k.
static void test_rhd_with_shared_network_costs_node_steps_intra_and_the_rest_shared(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int t = 0; t < 200; t++) {
        dt_coll_opts o = random_opts(&r);
        int k = tu_int(&r, 2, 10), j = tu_int(&r, 1, k - 1), p = 1 << k, g = 1 << j;
        o.group = g;
        o.cost.share = tu_uniform(&r, 1.5, 16);
        o.cost.alpha_intra = tu_uniform(&r, 1e-7, 1e-5);
        o.cost.beta_intra = tu_uniform(&r, 1e-12, 1e-9);
        double n = 4.0 * p * floor(exp(tu_uniform(&r, 0, log(100000))));
        double a = o.cost.alpha, b = o.cost.beta * o.cost.share, ga = o.cost.gamma;
        double ai = o.cost.alpha_intra, bi = o.cost.beta_intra, c = n / p;
        double halving = 2 * j * ai + 2 * (k - j) * a + (g - 1) * c * (2 * bi + ga) +
                         (p - g) * c * (2 * b + ga);
        double doubling = j * (ai + n * (bi + ga)) + (k - j) * (a + n * (b + ga));
        assert_rhd(&o, p, n, halving, doubling, "rhd, shared network");
        // hier's inner rhd among the leaders (one per node) has the network to itself
        o.algo = DT_ALGO_HIER, o.inner = DT_ALGO_RHD;
        o.cost.share = 1;
        double alone = dt_coll_cost(DT_ALGO_HIER, &o, p, n);
        o.cost.share = tu_uniform(&r, 1.5, 16);
        assert_rel(dt_coll_cost(DT_ALGO_HIER, &o, p, n), alone, "hier's leaders ignore share");
    }
}

// dbtree on nodes of g ranks sharing the network (cost.share > 1), from the schedules
// themselves: each rank's schedule (dt_sched_dbtree, S = 1) names its parent in each tree
// (the broadcast's RECV_COPY) and its children (the reduction's RECV_ADDs). The busiest
// node's edges to other nodes and the slowest leaf-to-root path (2 segments a hop; network
// hop if it leaves the node) give
//   2(S-1)·max(α + k·seg·β, α' + 2·seg·β') + 2·fill + (S-1+D)·2·seg·γ.
static void test_dbtree_with_shared_network_from_the_schedules(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int t = 0; t < 40; t++) {
        dt_coll_opts o = random_opts(&r);
        int p = tu_int(&r, 5, 300), g = tu_int(&r, 2, 12);
        if (g >= p) g = p - 1;
        o.group = g;
        o.cost.share = tu_uniform(&r, 1.5, 16);
        o.cost.alpha_intra = tu_uniform(&r, 1e-8, 1e-5);
        o.cost.beta_intra = tu_uniform(&r, 1e-13, 1e-9);
        int *parent = malloc(2 * (size_t)p * sizeof(int)), edges = 0;
        int *out = calloc((size_t)p, sizeof(int)), *in = calloc((size_t)p, sizeof(int));
        for (int x = 0; x < p; x++) {
            dt_sched s;
            memset(&s, 0, sizeof s);
            dt_sched_dbtree(&s, 0, x, p, 0, 1000, 1, 0);
            for (int tree = 0; tree < 2; tree++) {
                const dt_lane *l = &s.lanes[tree];
                parent[tree * p + x] = -1;
                for (int i = 0; l->n_rounds > 0 && i < l->round_start[l->n_rounds]; i++) {
                    const dt_op *op = &l->ops[i];
                    int cross = op->peer / g != x / g;
                    if (op->kind == DT_OP_RECV_COPY)
                        parent[tree * p + x] = op->peer, out[x / g] += cross;
                    if (op->kind == DT_OP_RECV_ADD) in[x / g] += cross;
                }
            }
            dt_sched_free(&s);
        }
        for (int n = 0; n < p; n++) edges = out[n] > edges ? out[n] : in[n] > edges ? in[n] : edges;
        for (int i = 0; i < 6; i++) {
            double n = 4.0 * floor(exp(tu_uniform(&r, log(64), log(3e7))));
            int S = dt_dbtree_segments(&o, p, n), D = dt_dtree_depth(p);
            double seg = ceil(ceil(n / 8.0) / S) * 4.0;
            double a = o.cost.alpha, b = o.cost.beta, ai = o.cost.alpha_intra;
            double bi = o.cost.beta_intra, ga = o.cost.gamma, fill = 0.0;
            for (int tree = 0; tree < 2; tree++)
                for (int x = 0; x < p; x++) {
                    double path = 0.0;
                    for (int y = x; parent[tree * p + y] >= 0; y = parent[tree * p + y])
                        path += parent[tree * p + y] / g != y / g ? a + 2 * seg * b
                                                                  : ai + 2 * seg * bi;
                    fill = path > fill ? path : fill;
                }
            double net = a + edges * seg * b, local = ai + 2 * seg * bi;
            double busy = net > local ? net : local;
            double want = 2 * (S - 1) * busy + 2 * fill + (S - 1 + D) * 2 * seg * ga;
            assert_rel(dt_coll_cost(DT_ALGO_DBTREE, &o, p, n), want, "dbtree, shared network");
            dt_cost_params c = o.cost;  // the shape cached in the options gives the same
            dt_dbtree_links_of(&c, p, g);
            dt_coll_opts oc = o;
            oc.cost = c;
            assert_rel(dt_coll_cost(DT_ALGO_DBTREE, &oc, p, n), want, "dbtree, cached shape");
        }
        free(parent), free(out), free(in);
    }
}

// 2-D torus X×Y with inner ring and equal links: 2(X−1+Y−1)α + [2(X−1)/X + 2(Y−1)/(XY)]nβ
// + [(X−1)/X + (Y−1)/(XY)]nγ; hier (reduce) with s | p: binomial lg s each way around a
// ring over p/s leaders.
static void test_torus2d_and_hier_match_closed_forms(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int t = 0; t < 200; t++) {
        dt_coll_opts o = random_opts(&r);
        int X = tu_int(&r, 1, 32), Y = tu_int(&r, 1, 32), p = X * Y;
        double n = 4.0 * X * Y * tu_int(&r, 1, 10000);
        double a = o.cost.alpha, b = o.cost.beta, g = o.cost.gamma;
        o.tx = X, o.ty = Y;
        double want = 2 * (X - 1 + Y - 1) * a +
                      (2.0 * (X - 1) / X + 2.0 * (Y - 1) / (X * Y)) * n * b +
                      ((double)(X - 1) / X + (double)(Y - 1) / (X * Y)) * n * g;
        assert_rel(dt_coll_cost(DT_ALGO_TORUS2D, &o, p, n), want, "torus2d");
        int ls = tu_int(&r, 0, 4), s = 1 << ls, groups = tu_int(&r, 1, 64);
        o.group = s;
        double nh = 4.0 * groups * tu_int(&r, 1, 10000);
        double inner = 2 * (groups - 1) * a + 2 * nh * (groups - 1) / groups * b +
                       nh * (groups - 1) / groups * g;
        assert_rel(dt_coll_cost(DT_ALGO_HIER, &o, s * groups, nh),
                   ls * (a + nh * (b + g)) + inner + ls * (a + nh * b), "hier");
    }
}

// Reduction in the switches (opts.sharp; Graham et al. 2016): every member's bytes cross its
// link once each way, both at once, after an arrival and before a release (a message each):
// hier's allreduce between nodes costs 2α + xβ' whatever the node count g, x the bytes a
// member holds (rs: n/s, on the node's network shared by its s ranks, β' = share·β; reduce:
// the leader's n on the whole of it, β' = β). So p = s·g ranks cost one node's s ranks plus
// that, for every g > 1 (tolerance 1e-9: a difference of two sums).
static void test_sharp_between_nodes_is_two_latencies_and_one_crossing(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int t = 0; t < 200; t++) {
        dt_coll_opts o = random_opts(&r);
        int s = tu_int(&r, 1, 16), g = tu_int(&r, 2, 256);
        o.group = s, o.cost.share = s, o.sharp = 1;
        o.cost.alpha_intra = tu_uniform(&r, 1e-7, 1e-5), o.cost.beta_intra = o.cost.beta / 10;
        double n = 4.0 * s * tu_int(&r, 1, 100000), a = o.cost.alpha, b = o.cost.beta;
        for (int rs = 0; rs < 2; rs++) {
            o.hier_rs = rs;
            double one = dt_coll_cost(DT_ALGO_HIER, &o, s, n);
            double got = dt_coll_cost(DT_ALGO_HIER, &o, s * g, n) - one;
            double want = 2 * a + (rs ? n / s * (s > 1 ? s : 1) * b : n * b);
            if (!(fabs(got - want) <= 1e-9 * want)) {
                fprintf(stderr, "sharp, hier %s, %d x %d ranks, %g bytes: got %.17g more than "
                        "one node, want 2a + x b' = %.17g\n", rs ? "rs" : "reduce", g, s, n,
                        got, want);
                fail();
            }
        }
    }
}

// auto is the minimum over the candidates; dbtree's segment count is within 1 % of the best
// S for its own pipeline model (brute force over S).
static void test_auto_is_cheapest_and_dbtree_segments_near_optimal(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int t = 0; t < 100; t++) {
        dt_coll_opts o = random_opts(&r);
        int p = tu_int(&r, 2, 300);
        double n = 4.0 * tu_int(&r, 1, 1 << 24);
        o.group = tu_int(&r, 1, p);
        dt_algo best = dt_coll_cheapest(&o, p, n);
        double tb = dt_coll_cost(best, &o, p, n);
        // one group (or groups of one): hier is a reduce to one rank and a broadcast, slower
        // than the MPI library's allreduce (issue 52), never auto's choice
        if (o.group <= 1 || o.group >= p) assert_int_not_equal(best, DT_ALGO_HIER);
        const dt_algo all[] = {DT_ALGO_PS, DT_ALGO_RING, DT_ALGO_RHD, DT_ALGO_DBTREE,
                               DT_ALGO_HIER};
        for (int i = 0; i < 5; i++) {
            if (all[i] == DT_ALGO_HIER && (o.group <= 1 || o.group >= p)) continue;
            assert_true(tb <= dt_coll_cost(all[i], &o, p, n));
        }
        int D = dt_dtree_depth(p), S = dt_dbtree_segments(&o, p, n);
        double minf = INFINITY;
        for (int s = 1; s <= 4096 && s <= n / 8; s++) {
            double f = (s + D - 1) * (o.cost.alpha + n * o.cost.beta / s);
            if (f < minf) minf = f;
        }
        double fS = (S + D - 1) * (o.cost.alpha + n * o.cost.beta / S);
        if (isfinite(minf)) assert_true(fS <= 1.01 * minf);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_double_binary_tree_spans_every_rank_with_consistent_links),
        cmocka_unit_test(test_dtree_depth_is_the_longest_walk_to_the_root),
        cmocka_unit_test(test_ring_and_rhd_match_reference_closed_forms_power_of_two),
        cmocka_unit_test(test_rhd_other_p_adds_the_fold_in_and_out),
        cmocka_unit_test(test_rhd_with_shared_network_costs_node_steps_intra_and_the_rest_shared),
        cmocka_unit_test(test_dbtree_with_shared_network_from_the_schedules),
        cmocka_unit_test(test_torus2d_and_hier_match_closed_forms),
        cmocka_unit_test(test_sharp_between_nodes_is_two_latencies_and_one_crossing),
        cmocka_unit_test(test_auto_is_cheapest_and_dbtree_segments_near_optimal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
