// test_fusion.c — the gradient-fusion planner (nn/coll/fusion.h) against independent
// references: SEGMENTS K and AUTO against brute-force enumeration of every partition of
// the events into buckets (n <= 10 events, so at most 2^9 partitions), BYTES against a
// simple threshold loop and the "closed as soon as it holds >= threshold" property, the
// bucket layout (tiles the buffer, backward order, empty events placed below), the modelled
// schedule and exposed time against a float64 recomputation, bad input, and --fusion
// parsing. Inputs: random sizes, empty events, ready times and α + bytes·β costs from
// tu_seed(). Tolerance: 1e-12 relative for times (the same few float64 additions in a
// possibly different order).
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/fusion.h"
#include "testutil.h"

#define MAXEV 10
#define TOL 1e-12

typedef struct { double alpha, beta; } ab_cost;  // seconds, seconds per byte

static double cost_ab(void *ctx, size_t bytes) {
    const ab_cost *c = ctx;
    return c->alpha + (double)bytes * c->beta;
}

typedef struct {
    int n;
    dt_grad_event ev[400];
    size_t size[400];  // elements of each event, as drawn (the reference's bytes)
    size_t elem_bytes;
    ab_cost cost;
} instance;

// n events in backward order, each empty with probability p_empty, else 1..1000 elements;
// ready times a nondecreasing walk with some equal steps.
static void random_instance(tu_rng *r, instance *in, int n, double p_empty) {
    in->n = n;
    static const size_t eb[3] = {2, 4, 8};
    in->elem_bytes = eb[tu_int(r, 0, 2)];
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        in->size[i] = tu_uniform(r, 0, 1) < p_empty ? 0 : (size_t)tu_int(r, 1, 1000);
        total += in->size[i];
    }
    double t = tu_uniform(r, 0.0, 1e-3);
    size_t hi = total;
    for (int i = 0; i < n; i++) {
        if (tu_uniform(r, 0, 1) > 0.2) t += tu_uniform(r, 0.0, 2e-3);
        in->ev[i].ready = t;
        in->ev[i].hi = hi;
        in->ev[i].lo = hi - in->size[i];
        hi = in->ev[i].lo;
    }
    in->cost.alpha = tu_uniform(r, 0.0, 1e-3);
    in->cost.beta = tu_uniform(r, 0.0, 2e-7);
}

static void close_to(const char *what, double got, double want) {
    if (!(fabs(got - want) <= TOL * fmax(1.0, fabs(want))))
        fail_msg("%s: got %.17g, expected %.17g", what, got, want);
}

// The reference model, written from fusion.h's formulas: buckets given by `last[k]`, the
// index of each bucket's last event. Returns the finish of the last bucket, or NAN when
// some bucket holds no element.
static double ref_finish(const instance *in, const int *last, int nb) {
    double finish = -INFINITY;
    int first = 0;
    for (int k = 0; k < nb; k++) {
        size_t elems = 0;
        for (int i = first; i <= last[k]; i++) elems += in->size[i];
        if (elems == 0) return NAN;
        double start = fmax(in->ev[last[k]].ready, finish);
        finish = start + in->cost.alpha + (double)(elems * in->elem_bytes) * in->cost.beta;
        first = last[k] + 1;
    }
    return finish;
}

// best[k] = the smallest last finish over every partition into k nonempty buckets
// (INFINITY when none), by enumerating the 2^(n-1) sets of split points.
static void brute_force(const instance *in, double *best) {
    for (int k = 0; k <= in->n; k++) best[k] = INFINITY;
    for (unsigned mask = 0; mask < (1u << (in->n - 1)); mask++) {
        int last[MAXEV], nb = 0;
        for (int i = 0; i < in->n - 1; i++)
            if (mask >> i & 1) last[nb++] = i;
        last[nb++] = in->n - 1;
        double f = ref_finish(in, last, nb);
        if (!isnan(f) && f < best[nb]) best[nb] = f;
    }
}

static int count_nonempty(const instance *in) {
    int m = 0;
    for (int i = 0; i < in->n; i++) m += in->size[i] > 0;
    return m;
}

static int plan(const instance *in, dt_fusion_opts o, dt_bucket *out) {
    dt_error err = {0};
    int nb = dt_fusion_plan(in->ev, in->n, in->elem_bytes, &o, cost_ab, (void *)&in->cost,
                            out, &err);
    if (nb < 0) fail_msg("dt_fusion_plan failed: %s", err.msg);
    return nb;
}

// The plan's layout: buckets tile the events and the buffer, top down, each nonempty; an
// empty event never ends a bucket but the last; start/finish follow the model.
static void check_layout(const instance *in, const dt_bucket *b, int nb) {
    int m = count_nonempty(in);
    if (m == 0) { assert_int_equal(nb, 0); return; }
    assert_true(nb >= 1 && nb <= m);
    assert_int_equal(b[0].first_event, 0);
    assert_int_equal(b[nb - 1].last_event, in->n - 1);
    assert_true(b[0].hi == in->ev[0].hi);
    assert_true(b[nb - 1].lo == 0);
    double finish = -INFINITY;
    for (int k = 0; k < nb; k++) {
        assert_true(b[k].first_event <= b[k].last_event);
        assert_true(b[k].lo < b[k].hi);
        assert_true(b[k].hi == in->ev[b[k].first_event].hi);
        assert_true(b[k].lo == in->ev[b[k].last_event].lo);
        if (k > 0) {
            assert_int_equal(b[k].first_event, b[k - 1].last_event + 1);
            assert_true(b[k].hi == b[k - 1].lo);
        }
        if (k < nb - 1) assert_true(in->size[b[k].last_event] > 0);
        size_t elems = 0;
        for (int i = b[k].first_event; i <= b[k].last_event; i++) elems += in->size[i];
        assert_true(elems == b[k].hi - b[k].lo);
        double start = fmax(in->ev[b[k].last_event].ready, finish);
        finish = start + in->cost.alpha + (double)(elems * in->elem_bytes) * in->cost.beta;
        close_to("bucket start", b[k].start, start);
        close_to("bucket finish", b[k].finish, finish);
    }
}

static double plan_finish(const dt_bucket *b, int nb) { return nb ? b[nb - 1].finish : 0.0; }

static void test_segments_dp_matches_brute_force_over_all_split_points(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int rep = 0; rep < 400; rep++) {
        instance in;
        random_instance(&r, &in, tu_int(&r, 1, MAXEV), rep % 4 == 0 ? 0.0 : 0.3);
        double best[MAXEV + 1];
        brute_force(&in, best);
        int m = count_nonempty(&in);
        for (int k = 1; k <= in.n + 1; k++) {
            dt_bucket b[MAXEV];
            int nb = plan(&in, (dt_fusion_opts){DT_FUSION_SEGMENTS, 0, k}, b);
            int want_nb = k < m ? k : m;
            assert_int_equal(nb, want_nb);
            check_layout(&in, b, nb);
            if (m == 0) continue;
            close_to("SEGMENTS finish vs brute force", plan_finish(b, nb), best[want_nb]);
        }
    }
}

static void test_auto_matches_best_over_all_bucket_counts_by_brute_force(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    int chose_middle = 0;  // plans strictly between 1 and m buckets: the search mattered
    for (int rep = 0; rep < 400; rep++) {
        instance in;
        random_instance(&r, &in, tu_int(&r, 1, MAXEV), rep % 4 == 0 ? 0.0 : 0.3);
        double best[MAXEV + 1], all = INFINITY;
        brute_force(&in, best);
        for (int k = 1; k <= in.n; k++) all = fmin(all, best[k]);
        dt_bucket b[MAXEV];
        int nb = plan(&in, (dt_fusion_opts){DT_FUSION_AUTO, 0, 0}, b);
        check_layout(&in, b, nb);
        if (count_nonempty(&in) == 0) continue;
        close_to("AUTO finish vs brute force", plan_finish(b, nb), all);
        chose_middle += nb > 1 && nb < count_nonempty(&in);
    }
    assert_true(chose_middle > 0);
}

// The reference threshold loop, in event space: a bucket closes at the nonempty event that
// brings it to >= threshold bytes; the rest (with trailing empty events) is the last one.
static int ref_bytes_plan(const instance *in, size_t thr, int *last) {
    int nb = 0;
    size_t held = 0;
    for (int i = 0; i < in->n; i++) {
        if (in->size[i] == 0) continue;
        held += in->size[i] * in->elem_bytes;
        if (held >= thr) last[nb++] = i, held = 0;
    }
    if (held > 0) last[nb++] = in->n - 1;  // the rest
    else if (nb > 0) last[nb - 1] = in->n - 1;  // only empty events left: they join it
    return nb;
}

static void test_bytes_mode_closes_bucket_at_threshold_like_simple_loop(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int rep = 0; rep < 400; rep++) {
        instance in;
        random_instance(&r, &in, tu_int(&r, 1, 300), 0.3);
        size_t total = in.ev[0].hi * in.elem_bytes, thr;
        switch (rep % 4) {
        case 0: thr = 0; break;
        case 1: thr = SIZE_MAX; break;
        case 2: thr = (size_t)tu_uniform(&r, 0.0, (double)total); break;
        default: {  // exactly the bytes of a prefix: the bucket must close there (>=, not >)
            int i = tu_int(&r, 0, in.n - 1);
            thr = (in.ev[0].hi - in.ev[i].lo) * in.elem_bytes;
        }
        }
        dt_bucket b[400];
        int nb = plan(&in, (dt_fusion_opts){DT_FUSION_BYTES, thr, 0}, b);
        check_layout(&in, b, nb);
        int last[400];
        int want = ref_bytes_plan(&in, thr, last);
        assert_int_equal(nb, want);
        for (int k = 0; k < nb; k++) {
            assert_int_equal(b[k].last_event, last[k]);
            size_t bytes = (b[k].hi - b[k].lo) * in.elem_bytes;
            int lastnz = b[k].last_event;
            while (in.size[lastnz] == 0) lastnz--;
            // closed as soon as full: without its last nonempty event it was below thr
            assert_true(bytes - in.size[lastnz] * in.elem_bytes < thr || thr == 0);
            if (k < nb - 1) assert_true(bytes >= thr);  // every bucket but the last is full
        }
        if (thr == 0) assert_int_equal(nb, count_nonempty(&in));
        if (thr == SIZE_MAX) assert_int_equal(nb, count_nonempty(&in) > 0);
    }
}

static void test_buckets_tile_buffer_in_backward_order_and_auto_beats_every_mode(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int rep = 0; rep < 60; rep++) {
        instance in;
        random_instance(&r, &in, tu_int(&r, 1, 300), tu_uniform(&r, 0.0, 0.6));
        if (rep == 0) in.ev[in.n - 1].ready += 1.0;  // a late empty-or-not last event
        dt_bucket b[400];
        int nb = plan(&in, (dt_fusion_opts){DT_FUSION_AUTO, 0, 0}, b);
        check_layout(&in, b, nb);
        double best = plan_finish(b, nb);
        dt_fusion_opts others[4] = {
            {DT_FUSION_NONE, 0, 0},
            {DT_FUSION_BYTES, (size_t)tu_int(&r, 0, 200000), 0},
            {DT_FUSION_SEGMENTS, 0, tu_int(&r, 1, in.n + 2)},
            {DT_FUSION_SEGMENTS, 0, 2},  // Jia et al. 2018
        };
        for (int i = 0; i < 4; i++) {
            nb = plan(&in, others[i], b);
            check_layout(&in, b, nb);
            assert_true(best <= plan_finish(b, nb) + TOL * fmax(1.0, best));
        }
    }
}

static void test_exposed_time_nonnegative_and_matches_float64_recomputation(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int rep = 0; rep < 200; rep++) {
        instance in;
        random_instance(&r, &in, tu_int(&r, 1, 300), 0.3);
        dt_fusion_opts o = {(dt_fusion_mode)(rep % 4), (size_t)tu_int(&r, 0, 100000),
                            tu_int(&r, 1, 8)};
        dt_bucket b[400];
        int nb = plan(&in, o, b);
        check_layout(&in, b, nb);  // start/finish of every bucket vs the float64 model
        double end = in.ev[in.n - 1].ready, e = dt_fusion_exposed(b, nb, end);
        assert_true(e >= 0.0);
        double want = nb ? b[nb - 1].finish - end : 0.0;  // the last bucket starts >= end
        close_to("exposed", e, want > 0 ? want : 0.0);
    }
    dt_bucket early = {0, 0, 0, 10, 1.0, 2.0};
    assert_true(dt_fusion_exposed(&early, 1, 3.0) == 0.0);  // done before backward ended
    assert_true(dt_fusion_exposed(&early, 1, 1.5) == 0.5);
    assert_true(dt_fusion_exposed(NULL, 0, 1.0) == 0.0);
}

static void test_no_trainable_elements_gives_zero_buckets(void **state) {
    (void)state;
    dt_grad_event ev[3] = {{0.1, 0, 0}, {0.2, 0, 0}, {0.3, 0, 0}};
    ab_cost c = {1e-4, 1e-9};
    dt_bucket b[3];
    dt_error err = {0};
    for (int mode = DT_FUSION_NONE; mode <= DT_FUSION_AUTO; mode++) {
        dt_fusion_opts o = {(dt_fusion_mode)mode, 1000, 2};
        assert_int_equal(dt_fusion_plan(ev, 3, 4, &o, cost_ab, &c, b, &err), 0);
        assert_int_equal(dt_fusion_plan(ev, 0, 4, &o, cost_ab, &c, b, &err), 0);
    }
}

static double cost_nan(void *ctx, size_t bytes) { (void)ctx, (void)bytes; return NAN; }
static double cost_neg(void *ctx, size_t bytes) { (void)ctx, (void)bytes; return -1.0; }

static void expect_usage(const dt_grad_event *ev, int n, size_t eb, dt_fusion_opts o,
                         dt_comm_cost_fn f, const char *what) {
    ab_cost c = {1e-4, 1e-9};
    dt_bucket b[8];
    dt_error err = {0};
    int nb = dt_fusion_plan(ev, n, eb, &o, f, &c, b, &err);
    if (nb != -1 || err.code != DT_EXIT_USAGE || err.msg[0] == 0)
        fail_msg("%s: expected -1 with a usage error, got %d (code %d, '%s')", what, nb,
                 err.code, err.msg);
}

static void test_plan_rejects_bad_input_with_usage_error(void **state) {
    (void)state;
    dt_fusion_opts seg = {DT_FUSION_SEGMENTS, 0, 2}, aut = {DT_FUSION_AUTO, 0, 0};
    dt_grad_event ok[3] = {{0.1, 20, 30}, {0.2, 10, 20}, {0.3, 0, 10}};
    expect_usage(ok, -1, 4, seg, cost_ab, "n_ev < 0");
    expect_usage(ok, 3, 4, (dt_fusion_opts){DT_FUSION_SEGMENTS, 0, 0}, cost_ab, "segments 0");
    expect_usage(ok, 3, 4, (dt_fusion_opts){DT_FUSION_SEGMENTS, 0, -3}, cost_ab, "segments<0");
    expect_usage(ok, 3, 0, seg, cost_ab, "elem_bytes 0");
    expect_usage(ok, 3, 4, seg, NULL, "NULL cost");
    expect_usage(ok, 3, 4, aut, cost_nan, "cost NaN");
    expect_usage(ok, 3, 4, seg, cost_neg, "cost < 0");
    dt_grad_event gap[3] = {{0.1, 20, 30}, {0.2, 10, 19}, {0.3, 0, 10}};
    expect_usage(gap, 3, 4, seg, cost_ab, "gap between events");
    dt_grad_event up[3] = {{0.1, 0, 10}, {0.2, 10, 20}, {0.3, 20, 30}};
    expect_usage(up, 3, 4, seg, cost_ab, "ranges tiling upwards");
    dt_grad_event notzero[2] = {{0.1, 20, 30}, {0.2, 10, 20}};
    expect_usage(notzero, 2, 4, seg, cost_ab, "not reaching element 0");
    dt_grad_event inverted[2] = {{0.1, 10, 30}, {0.2, 20, 10}};
    expect_usage(inverted, 2, 4, seg, cost_ab, "lo > hi");
    dt_grad_event nan[3] = {{0.1, 20, 30}, {NAN, 10, 20}, {0.3, 0, 10}};
    expect_usage(nan, 3, 4, aut, cost_ab, "NaN ready time");
    dt_grad_event inf[3] = {{0.1, 20, 30}, {0.2, 10, 20}, {INFINITY, 0, 10}};
    expect_usage(inf, 3, 4, aut, cost_ab, "infinite ready time");
    dt_grad_event back[3] = {{0.1, 20, 30}, {0.3, 10, 20}, {0.2, 0, 10}};
    expect_usage(back, 3, 4, aut, cost_ab, "time going backwards");
    dt_grad_event huge[1] = {{0.1, 0, SIZE_MAX / 2}};
    expect_usage(huge, 1, 4, aut, cost_ab, "bytes overflow size_t");
    expect_usage(NULL, 3, 4, aut, cost_ab, "NULL events");
}

static void test_parse_accepts_sizes_auto_none_segments_and_rejects_the_rest(void **state) {
    (void)state;
    static const struct { const char *s; dt_fusion_mode mode; size_t bytes; int seg; } good[] = {
        {"64MB", DT_FUSION_BYTES, 64000000, 0},    {"512KiB", DT_FUSION_BYTES, 524288, 0},
        {"1000000", DT_FUSION_BYTES, 1000000, 0},  {"auto", DT_FUSION_AUTO, 0, 0},
        {"none", DT_FUSION_NONE, 0, 0},            {"NONE", DT_FUSION_NONE, 0, 0},
        {"25mib", DT_FUSION_BYTES, 26214400, 0},   {"1.5MiB", DT_FUSION_BYTES, 1572864, 0},
        {"2GB", DT_FUSION_BYTES, 2000000000, 0},   {"1GiB", DT_FUSION_BYTES, 1073741824, 0},
        {"3kb", DT_FUSION_BYTES, 3000, 0},         {"7B", DT_FUSION_BYTES, 7, 0},
        {"0", DT_FUSION_BYTES, 0, 0},              {"segments:2", DT_FUSION_SEGMENTS, 0, 2},
        {"segments:17", DT_FUSION_SEGMENTS, 0, 17},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        dt_fusion_opts o = {DT_FUSION_AUTO, 99, 99};
        dt_error err = {0};
        if (dt_fusion_parse(good[i].s, &o, &err) != 0) fail_msg("'%s': %s", good[i].s, err.msg);
        assert_int_equal(o.mode, good[i].mode);
        if (o.mode == DT_FUSION_BYTES) assert_true(o.bytes == good[i].bytes);
        if (o.mode == DT_FUSION_SEGMENTS) assert_int_equal(o.segments, good[i].seg);
    }
    static const char *bad[] = {"",         "abc",         "-5MB",         "64XB",
                                "64 MB",    " 64MB",       "64MB ",        "1e3",
                                "0x10",     "1.",          ".5MB",         "nan",
                                "inf",      "segments:0",  "segments:",    "segments:-1",
                                "segments:2x", "99999999999999999999999", "64M", "segments"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dt_fusion_opts o;
        dt_error err = {0};
        if (dt_fusion_parse(bad[i], &o, &err) != -1) fail_msg("'%s' was accepted", bad[i]);
        assert_int_equal(err.code, DT_EXIT_USAGE);
        assert_non_null(strstr(err.msg, "--fusion"));
        assert_non_null(strstr(err.msg, "64MB"));  // the message shows the accepted forms
        assert_non_null(strstr(err.msg, "segments:K"));
    }
    dt_error err = {0};
    assert_int_equal(dt_fusion_parse(NULL, NULL, &err), -1);
}

static void test_format_round_trips_through_parse(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    static const size_t units[] = {1, 1000, 1024, 1000000, 1048576, 1000000000, 1073741824};
    for (int rep = 0; rep < 300; rep++) {
        dt_fusion_opts o = {(dt_fusion_mode)(rep % 4), 0, 0};
        if (o.mode == DT_FUSION_BYTES)
            o.bytes = (size_t)tu_int(&r, 0, 5000) * units[tu_int(&r, 0, 6)];
        if (o.mode == DT_FUSION_SEGMENTS) o.segments = tu_int(&r, 1, 100000);
        char buf[64];
        dt_fusion_opts back;
        dt_error err = {0};
        if (dt_fusion_parse(dt_fusion_format(&o, buf, sizeof buf), &back, &err) != 0)
            fail_msg("'%s' does not parse: %s", buf, err.msg);
        assert_int_equal(back.mode, o.mode);
        assert_true(back.bytes == o.bytes);
        assert_int_equal(back.segments, o.segments);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_segments_dp_matches_brute_force_over_all_split_points),
        cmocka_unit_test(test_auto_matches_best_over_all_bucket_counts_by_brute_force),
        cmocka_unit_test(test_bytes_mode_closes_bucket_at_threshold_like_simple_loop),
        cmocka_unit_test(test_buckets_tile_buffer_in_backward_order_and_auto_beats_every_mode),
        cmocka_unit_test(test_exposed_time_nonnegative_and_matches_float64_recomputation),
        cmocka_unit_test(test_no_trainable_elements_gives_zero_buckets),
        cmocka_unit_test(test_plan_rejects_bad_input_with_usage_error),
        cmocka_unit_test(test_parse_accepts_sizes_auto_none_segments_and_rejects_the_rest),
        cmocka_unit_test(test_format_round_trips_through_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
