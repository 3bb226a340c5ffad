// test_sim_straggler.c — sim/straggler.c: the expected maximum of P lognormal draws (the
// quadrature) against a Monte-Carlo of maxima in float64 here; the per-(rank, step) factor's
// mean 1 and coefficient of variation over many draws, the same factor for the same
// arguments, fixed rank and node factors; and bad specs refused with a message.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "straggler.h"
#include "testutil.h"

static void test_expected_max_matches_monte_carlo_of_maxima(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int k = 0; k < 4; k++) {
        double cv = tu_uniform(&r, 0.01, 0.5);
        int p = tu_int(&r, 2, 512);
        double s2 = log1p(cv * cv), sigma = sqrt(s2), mu = -s2 / 2, sum = 0;
        int trials = 4000;
        for (int t = 0; t < trials; t++) {
            double mx = 0;
            for (int i = 0; i < p; i++) mx = fmax(mx, exp(mu + sigma * tu_normal(&r)));
            sum += mx;
        }
        double mc = sum / trials, q = dt_straggler_expected_max(cv, p);
        printf("# cv %.3f, P %d: quadrature %.5f, Monte-Carlo %.5f\n", cv, p, q, mc);
        // the maximum's spread is below sigma; 4000 trials: well under 1 % of (E - 1)
        if (fabs(q - mc) > 0.05 * (q - 1) + 4 * sigma / sqrt(trials))
            fail_msg("cv %g, P %d: quadrature %.6f, Monte-Carlo %.6f", cv, p, q, mc);
    }
    assert_true(dt_straggler_expected_max(0, 1000) == 1.0);
    assert_true(fabs(dt_straggler_expected_max(0.2, 1) - 1.0) < 1e-9);
}

static void test_factor_has_mean_one_and_the_given_cv_and_is_a_pure_function(void **state) {
    (void)state;
    dt_straggler s;
    dt_error err;
    tu_rng r = tu_rng_new(tu_seed());
    double cv = tu_uniform(&r, 0.02, 0.3);
    char spec[64];
    snprintf(spec, sizeof spec, "cv:%.6f", cv);
    assert_int_equal(dt_straggler_parse(spec, "--straggler", &s, &err), 0);
    uint64_t seed = tu_seed();
    double sum = 0, sum2 = 0;
    int n = 0;
    for (int rank = 0; rank < 200; rank++)
        for (int step = 0; step < 200; step++, n++) {
            double f = dt_straggler_factor(&s, seed, rank, 8, step);
            assert_true(f == dt_straggler_factor(&s, seed, rank, 8, step));
            sum += f, sum2 += f * f;
        }
    double mean = sum / n, sd = sqrt(sum2 / n - mean * mean);
    printf("# cv %.4f: mean %.5f, cv %.5f over %d draws\n", cv, mean, sd / mean, n);
    assert_true(fabs(mean - 1) < 5 * cv / sqrt(n));
    assert_true(fabs(sd / mean - cv) < 0.05 * cv);
    assert_true(dt_straggler_factor(&s, seed, 3, 8, 4) != dt_straggler_factor(&s, seed + 1, 3, 8, 4));
    // fixed factors multiply, by rank and by node
    assert_int_equal(dt_straggler_parse("rank:3:1.5,node:1:2", "--straggler", &s, &err), 0);
    assert_true(dt_straggler_factor(&s, seed, 3, 8, 0) == 1.5);
    assert_true(dt_straggler_factor(&s, seed, 9, 8, 0) == 2.0);
    assert_true(dt_straggler_factor(&s, seed, 2, 8, 0) == 1.0);
    int mr, mn;
    dt_straggler_max_index(&s, &mr, &mn);
    assert_true(mr == 3 && mn == 1);
}

static void test_bad_specs_are_refused_naming_the_option(void **state) {
    (void)state;
    const char *bad[] = {"cv:", "cv:-1", "cv:2.5", "rank:1", "rank:-1:2", "rank:1:0",
                         "node:x:2", "slow:1:2", "rank:1:2:3", "rank:1:nan"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        dt_straggler s;
        dt_error err = {0};
        if (dt_straggler_parse(bad[i], "--straggler", &s, &err) == 0)
            fail_msg("'%s' was accepted", bad[i]);
        assert_int_equal(err.code, DT_EXIT_USAGE);
        assert_non_null(strstr(err.msg, "--straggler"));
        assert_non_null(strstr(err.msg, bad[i]));
    }
    dt_straggler s;
    dt_error err;
    assert_int_equal(dt_straggler_parse("", "--straggler", &s, &err), 0);
    assert_false(dt_straggler_any(&s));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expected_max_matches_monte_carlo_of_maxima),
        cmocka_unit_test(test_factor_has_mean_one_and_the_given_cv_and_is_a_pure_function),
        cmocka_unit_test(test_bad_specs_are_refused_naming_the_option),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
