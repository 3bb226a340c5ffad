// test_sim_goodput.c — sim/goodput.c: the closed form of the expected time to train under
// failures and checkpoints against a Monte-Carlo of the same run (fresh random inputs, the
// mean within 3 of its 95 % half-widths plus 0.2 %), the exact no-failure answer, the
// asynchronous first-order form within 3 % where X << M (a write longer than a segment
// included: the next snapshot waits for it), and the best interval against a brute
// scan of the closed form, with Young's and Daly's estimates converging to it as C/M -> 0.
#include <math.h>
#include <stdio.h>

#include "goodput.h"
#include "testutil.h"

static dt_goodput_in random_run(tu_rng *r, int async) {
    dt_goodput_in in = {0};
    in.mtbf_s = 3600 * tu_uniform(r, 0.5, 20);
    in.work_s = 3600 * 24 * tu_uniform(r, 0.5, 10);
    in.interval_s = in.mtbf_s * tu_uniform(r, 0.05, 0.8);
    in.stall_s = tu_uniform(r, 5, 600);
    in.restart_s = tu_uniform(r, 60, 1800);
    in.async = async;
    in.save_s = async ? tu_uniform(r, 10, 900) : 0;
    return in;
}

static void test_blocking_closed_form_matches_monte_carlo(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int k = 0; k < 6; k++) {
        dt_goodput_in in = random_run(&r, 0);
        dt_goodput e = dt_goodput_expected(&in);
        double ci;
        dt_goodput m = dt_goodput_monte_carlo(&in, 400, tu_seed() + (uint64_t)k, &ci);
        double d = fabs(m.wall_s - e.wall_s);
        printf("# M %.2f h, tau %.0f s, C %.0f s, R %.0f s: closed %.1f h, MC %.1f h +- %.2f h"
               ", failures %.1f / %.1f\n", in.mtbf_s / 3600, in.interval_s, in.stall_s,
               in.restart_s, e.wall_s / 3600, m.wall_s / 3600, ci / 3600, e.failures,
               m.failures);
        if (d > 3 * ci + 2e-3 * e.wall_s)
            fail_msg("closed form %.6g s, Monte-Carlo %.6g s +- %.3g s (k %d)", e.wall_s,
                     m.wall_s, ci, k);
        if (fabs(m.failures - e.failures) > 0.05 * e.failures + 3)
            fail_msg("failures: closed form %.3f, Monte-Carlo %.3f", e.failures, m.failures);
        assert_true(e.goodput > 0 && e.goodput < 1);
        assert_true(fabs(e.ckpt_s + e.lost_s + in.work_s - e.wall_s) <= 1e-9 * e.wall_s);
    }
}

static void test_no_failures_costs_exactly_the_checkpoints(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    dt_goodput_in in = random_run(&r, 0);
    in.mtbf_s = INFINITY;
    double n = ceil(in.work_s / in.interval_s) - 1;  // no checkpoint after the last segment
    double want = in.work_s + n * in.stall_s;
    dt_goodput e = dt_goodput_expected(&in);
    double ci;
    dt_goodput m = dt_goodput_monte_carlo(&in, 3, 1, &ci);
    assert_true(fabs(e.wall_s - want) <= 1e-9 * want);
    assert_true(fabs(m.wall_s - want) <= 1e-9 * want);
    assert_true(e.failures == 0 && m.failures == 0 && ci <= 1e-9 * want);
}

static void test_async_first_order_matches_monte_carlo_when_failures_are_rare(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int k = 0; k < 4; k++) {
        dt_goodput_in in = random_run(&r, 1);
        in.mtbf_s = 3600 * tu_uniform(&r, 12, 48);
        in.interval_s = in.mtbf_s * tu_uniform(&r, 0.01, 0.04);  // X << M: first order holds
        // the last: a write that outlasts its segment, so the next snapshot waits for it
        if (k == 3) in.save_s = in.interval_s * tu_uniform(&r, 1.2, 2.0);
        dt_goodput e = dt_goodput_expected(&in);
        double ci;
        dt_goodput m = dt_goodput_monte_carlo(&in, 300, tu_seed() ^ (uint64_t)k, &ci);
        printf("# async M %.1f h, tau %.0f s, save %.0f s: first order %.2f h, MC %.2f h +- "
               "%.3f h\n", in.mtbf_s / 3600, in.interval_s, in.save_s, e.wall_s / 3600,
               m.wall_s / 3600, ci / 3600);
        if (fabs(m.wall_s - e.wall_s) > 0.03 * e.wall_s + 3 * ci)
            fail_msg("async: first order %.6g s, Monte-Carlo %.6g s +- %.3g", e.wall_s,
                     m.wall_s, ci);
        // a background write that outlasts the failure window loses more than none at all
        dt_goodput_in none = in;
        none.save_s = 0;
        assert_true(dt_goodput_expected(&none).wall_s < e.wall_s);
    }
}

static double per_work(dt_goodput_in in, double tau) {
    in.interval_s = tau;
    in.work_s = tau * 1000;  // whole segments: the remainder does not blur the optimum
    return dt_goodput_expected(&in).wall_s / in.work_s;
}

static void test_best_interval_beats_a_brute_scan_and_the_classic_estimates(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int k = 0; k < 4; k++) {
        dt_goodput_in in = random_run(&r, k % 2);
        in.work_s = 1e9;
        double best = dt_goodput_best_interval(&in), fbest = per_work(in, best);
        double scan = INFINITY;
        for (double t = in.stall_s / 10; t < 10 * in.mtbf_s; t *= 1.001)
            scan = fmin(scan, per_work(in, t));
        if (fbest > scan * (1 + 1e-6))
            fail_msg("best interval %.1f s: %.9f per second of work, a scan finds %.9f", best,
                     fbest, scan);
        double young = dt_goodput_young_interval(in.stall_s, in.mtbf_s);
        assert_true(fbest <= per_work(in, young) * (1 + 1e-12));
    }
    // as C/M -> 0 the classic estimates converge on the optimum (Young 1974, Daly 2006)
    dt_goodput_in in = {.mtbf_s = 1e7, .stall_s = 10, .restart_s = 0, .work_s = 1e12,
                        .interval_s = 1};
    double best = dt_goodput_best_interval(&in);
    double young = dt_goodput_young_interval(in.stall_s, in.mtbf_s);
    double daly = dt_goodput_daly_interval(in.stall_s, in.mtbf_s);
    printf("# C/M 1e-6: best %.1f s, Young %.1f s, Daly %.1f s\n", best, young, daly);
    assert_true(fabs(young - best) < 0.01 * best);
    assert_true(fabs(daly - best) < fabs(young - best) + 1e-9 * best);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocking_closed_form_matches_monte_carlo),
        cmocka_unit_test(test_no_failures_costs_exactly_the_checkpoints),
        cmocka_unit_test(test_async_first_order_matches_monte_carlo_when_failures_are_rare),
        cmocka_unit_test(test_best_interval_beats_a_brute_scan_and_the_classic_estimates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
