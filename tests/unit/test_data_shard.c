// test_data_shard.c — the per-epoch shuffle and its sharding over ranks (nn/data_shard.c):
// the permutation is a permutation, reproducible from (seed, epoch), different across
// epochs, uniform (chi-square over all 24 orders of 4 items); every index is used exactly
// once per epoch over 1, 2 and 3 ranks, in the closed-form positions
// perm[s*G + r*(G/P) + j]; drop_last skips exactly the remainder; keep-last splits it.
#include <math.h>
#include <string.h>

#include "data.h"
#include "testutil.h"

static void test_epoch_permutation_is_a_permutation_fixed_by_seed_and_epoch(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int trial = 0; trial < 20; trial++) {
        int64_t n = tu_int(&r, 2, 5000);
        uint64_t seed = (uint64_t)tu_int(&r, 0, 1 << 30) * 7919u;
        int64_t epoch = tu_int(&r, 0, 100);
        int64_t *p = malloc(sizeof(int64_t) * n), *q = malloc(sizeof(int64_t) * n);
        int *seen = calloc((size_t)n, sizeof(int));
        dt_epoch_permutation(seed, epoch, n, p);
        for (int64_t i = 0; i < n; i++) {
            assert_true(p[i] >= 0 && p[i] < n);
            seen[p[i]]++;
        }
        for (int64_t i = 0; i < n; i++) assert_int_equal(seen[i], 1);
        dt_epoch_permutation(seed, epoch, n, q);
        assert_memory_equal(p, q, sizeof(int64_t) * n);
        if (n >= 8) {  // two random orders of >= 8 items coincide with probability <= 1/40320
            dt_epoch_permutation(seed, epoch + 1, n, q);
            assert_true(memcmp(p, q, sizeof(int64_t) * n) != 0);
            dt_epoch_permutation(seed + 1, epoch, n, q);
            assert_true(memcmp(p, q, sizeof(int64_t) * n) != 0);
        }
        free(p);
        free(q);
        free(seen);
    }
}

// All 4! = 24 orders of 4 items should be equally likely: chi-square with 23 degrees of
// freedom over 48000 epochs; 80 is beyond the 1e-7 quantile (a biased shuffle such as
// "j uniform in [0,n)" scores in the hundreds).
static void test_epoch_permutation_is_uniform_chi_square_over_orders_of_4(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    uint64_t seed = (uint64_t)tu_int(&r, 0, 1 << 30);
    int counts[256] = {0};
    const int epochs = 48000;
    for (int e = 0; e < epochs; e++) {
        int64_t p[4];
        dt_epoch_permutation(seed, e, 4, p);
        counts[p[0] * 64 + p[1] * 16 + p[2] * 4 + p[3]]++;
    }
    double expected = epochs / 24.0, chi2 = 0.0;
    int orders = 0;
    for (int k = 0; k < 256; k++) {
        int a = k / 64, b = k / 16 % 4, c = k / 4 % 4, d = k % 4;
        int is_perm = a != b && a != c && a != d && b != c && b != d && c != d;
        if (!is_perm) {
            assert_int_equal(counts[k], 0);
            continue;
        }
        orders++;
        chi2 += (counts[k] - expected) * (counts[k] - expected) / expected;
    }
    assert_int_equal(orders, 24);
    printf("# chi-square %.1f (23 dof, mean 23)\n", chi2);
    assert_true(chi2 < 80.0);
}

// Shards of one epoch: checks positions against the closed form and counts uses.
static void check_epoch(int64_t n, int G, int P, int drop_last, const int64_t *perm) {
    int64_t steps = dt_steps_per_epoch(n, G, drop_last);
    int64_t expect_steps = drop_last ? n / G : (n + G - 1) / G;
    assert_int_equal(steps, expect_steps);
    int *uses = calloc((size_t)n, sizeof(int));
    int64_t *out = malloc(sizeof(int64_t) * (size_t)G);
    int local = G / P;
    for (int64_t s = 0; s < steps; s++) {
        int64_t total = 0;
        for (int rank = 0; rank < P; rank++) {
            dt_error err = {0, ""};
            int b = dt_shard_indices(perm, n, G, P, rank, drop_last, s, out, &err);
            assert_true(b >= 0);
            if ((s + 1) * G <= n) {  // full step: the closed form of the brief
                assert_int_equal(b, local);
                for (int j = 0; j < b; j++) assert_int_equal(out[j], perm[s * G + rank * local + j]);
            } else {  // partial last step: parts of R/P or R/P+1, in rank order
                int64_t R = n - s * G;
                assert_true(b == R / P || b == R / P + 1);
            }
            for (int j = 0; j < b; j++) uses[out[j]]++;
            total += b;
        }
        assert_int_equal(total, (s + 1) * G <= n ? G : n - s * G);
    }
    int64_t used_upto = drop_last ? steps * G : n;
    // the permutation position of an index decides: used once before the cut, never after
    for (int64_t pos = 0; pos < n; pos++) {
        assert_int_equal(uses[perm[pos]], pos < used_upto ? 1 : 0);
    }
    free(uses);
    free(out);
}

static void test_shard_uses_every_index_once_per_epoch_over_1_2_3_ranks_n_divisible(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int P = 1; P <= 3; P++) {
        for (int trial = 0; trial < 5; trial++) {
            int G = P * tu_int(&r, 1, 16);
            int64_t n = (int64_t)G * tu_int(&r, 1, 40);
            int64_t *perm = malloc(sizeof(int64_t) * n);
            dt_epoch_permutation(r.s, trial, n, perm);
            check_epoch(n, G, P, 1, perm);
            check_epoch(n, G, P, 0, perm);  // same thing when G divides n
            free(perm);
        }
    }
}

static void test_shard_drop_last_skips_exactly_the_remainder_over_1_2_3_ranks(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int P = 1; P <= 3; P++) {
        for (int trial = 0; trial < 5; trial++) {
            int G = P * tu_int(&r, 1, 16);
            int64_t n = (int64_t)G * tu_int(&r, 1, 40) + tu_int(&r, 1, G) - 1;
            if (n % G == 0) n++;
            if (n % G == 0 || n < G) continue;
            int64_t *perm = malloc(sizeof(int64_t) * n);
            dt_epoch_permutation(r.s, trial, n, perm);
            check_epoch(n, G, P, 1, perm);
            free(perm);
        }
    }
}

static void test_shard_keep_last_splits_the_partial_batch_over_1_2_3_ranks(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int P = 1; P <= 3; P++) {
        for (int trial = 0; trial < 5; trial++) {
            int G = P * tu_int(&r, 1, 16);
            int64_t n = tu_int(&r, 1, 500);  // may be < G: one partial step
            int64_t *perm = malloc(sizeof(int64_t) * n);
            dt_epoch_permutation(r.s, trial, n, perm);
            check_epoch(n, G, P, 0, perm);
            free(perm);
        }
    }
}

static void test_shard_rejects_bad_batch_rank_and_step_with_code_2(void **state) {
    (void)state;
    int64_t perm[12], out[12];
    dt_epoch_permutation(1, 0, 12, perm);
    dt_error err;
    err.code = 0;
    assert_int_equal(dt_shard_indices(perm, 12, 5, 2, 0, 1, 0, out, &err), -1);  // 5 % 2
    assert_int_equal(err.code, DT_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "multiple"));
    err.code = 0;
    assert_int_equal(dt_shard_indices(perm, 12, 4, 2, 2, 1, 0, out, &err), -1);  // rank 2 of 2
    assert_int_equal(err.code, DT_EXIT_USAGE);
    err.code = 0;
    assert_int_equal(dt_shard_indices(perm, 12, 5, 1, 0, 1, 2, out, &err), -1);  // 12/5 = 2 steps
    assert_int_equal(err.code, DT_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "dropped"));
    assert_int_equal(dt_shard_indices(perm, 12, 5, 1, 0, 0, 2, out, &err), 2);   // keep last
    assert_int_equal(dt_steps_per_epoch(12, 5, 1), 2);
    assert_int_equal(dt_steps_per_epoch(12, 5, 0), 3);
    assert_int_equal(dt_steps_per_epoch(4, 5, 1), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_epoch_permutation_is_a_permutation_fixed_by_seed_and_epoch),
        cmocka_unit_test(test_epoch_permutation_is_uniform_chi_square_over_orders_of_4),
        cmocka_unit_test(test_shard_uses_every_index_once_per_epoch_over_1_2_3_ranks_n_divisible),
        cmocka_unit_test(test_shard_drop_last_skips_exactly_the_remainder_over_1_2_3_ranks),
        cmocka_unit_test(test_shard_keep_last_splits_the_partial_batch_over_1_2_3_ranks),
        cmocka_unit_test(test_shard_rejects_bad_batch_rank_and_step_with_code_2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
