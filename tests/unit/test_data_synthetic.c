// test_data_synthetic.c — the synthetic dataset (nn/data_synthetic.c): a pure function of
// its seed (same seed, same bytes; another seed, other data), labels in range and roughly
// balanced, unit-variance noise around +-0.5 class patterns (closed form: E[x^2] = 1.25),
// and a class signal a nearest-class-mean classifier learns from 2000 examples and
// applies at >= 90 % (chance is 10 %) to 1000 others — of another seed, since a dataset with
// another seed must be a held-out set of the same task.
#include "test_data_util.h"

static void test_synthetic_is_a_pure_function_of_its_seed(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    uint64_t seed = r.s;
    int c = tu_int(&r, 1, 3), h = tu_int(&r, 1, 20), w = tu_int(&r, 1, 20);
    dt_error err = {0, ""};
    dt_dataset *a = dt_dataset_synthetic(100, c, h, w, 7, seed, &err);
    dt_dataset *b = dt_dataset_synthetic(100, c, h, w, 7, seed, &err);
    dt_dataset *o = dt_dataset_synthetic(100, c, h, w, 7, seed + 1, &err);
    assert_true(a && b && o);
    assert_memory_equal(a->labels, b->labels, sizeof(int32_t) * 100);
    size_t per = (size_t)c * h * w;
    float *xa = malloc(sizeof(float) * per), *xb = malloc(sizeof(float) * per),
          *xo = malloc(sizeof(float) * per);
    int differ = 0;
    for (int i = 0; i < 100; i++) {
        assert_int_equal(dt_dataset_get(a, i, (uint64_t)i, xa, NULL, &err), 0);
        assert_int_equal(dt_dataset_get(b, i, 12345, xb, NULL, &err), 0);  // aug seed unused
        assert_int_equal(dt_dataset_get(o, i, (uint64_t)i, xo, NULL, &err), 0);
        assert_memory_equal(xa, xb, sizeof(float) * per);
        differ += memcmp(xa, xo, sizeof(float) * per) != 0;
    }
    assert_int_equal(differ, 100);
    free(xa);
    free(xb);
    free(xo);
    dt_dataset_free(a);
    dt_dataset_free(b);
    dt_dataset_free(o);
}

static void test_synthetic_classes_are_learnable_by_nearest_class_mean(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    const int K = 10, ntrain = 2000, ntest = 1000, c = 1, h = 28, w = 28;
    const size_t per = (size_t)c * h * w;
    dt_error err = {0, ""};
    dt_dataset *ds = dt_dataset_synthetic(ntrain, c, h, w, K, r.s, &err);
    dt_dataset *held_out = dt_dataset_synthetic(ntest, c, h, w, K, r.s + 1, &err);
    assert_true(ds && held_out);
    double *mean = calloc((size_t)K * per, sizeof(double));
    int count[10] = {0};
    float *x = malloc(sizeof(float) * per);
    double sumsq = 0.0;
    for (int i = 0; i < ntrain; i++) {
        int32_t y;
        assert_int_equal(dt_dataset_get(ds, i, 0, x, &y, &err), 0);
        assert_true(y >= 0 && y < K);
        count[y]++;
        for (size_t k = 0; k < per; k++) {
            mean[y * per + k] += x[k];
            sumsq += (double)x[k] * x[k];
        }
    }
    double ex2 = sumsq / ((double)ntrain * per);  // 0.5^2 signal + 1 noise
    printf("# E[x^2] = %.4f (expected 1.25)\n", ex2);
    assert_true(fabs(ex2 - 1.25) < 0.02);
    for (int k = 0; k < K; k++) {
        assert_true(count[k] > ntrain / K / 2);  // roughly balanced (expected 200)
        for (size_t q = 0; q < per; q++) mean[k * per + q] /= count[k];
    }
    int correct = 0;
    for (int i = 0; i < ntest; i++) {
        int32_t y;
        assert_int_equal(dt_dataset_get(held_out, i, 0, x, &y, &err), 0);
        int best = -1;
        double bestd = 1e300;
        for (int k = 0; k < K; k++) {
            double d = 0.0;
            for (size_t q = 0; q < per; q++) d += (x[q] - mean[k * per + q]) * (x[q] - mean[k * per + q]);
            if (d < bestd) {
                bestd = d;
                best = k;
            }
        }
        correct += best == y;
    }
    printf("# nearest-class-mean accuracy %.3f on %d examples of another seed\n", (double)correct / ntest, ntest);
    assert_true(correct >= 0.9 * ntest);
    free(mean);
    free(x);
    dt_dataset_free(ds);
    dt_dataset_free(held_out);
}

static void test_synthetic_rejects_nonpositive_sizes_with_code_2(void **state) {
    (void)state;
    dt_error err = {0, ""};
    assert_null(dt_dataset_synthetic(0, 3, 8, 8, 10, 1, &err));
    td_assert_error(err, "synthetic", "expected all > 0");
    err.code = 0;
    assert_null(dt_dataset_synthetic(10, 3, 8, 8, 0, 1, &err));
    td_assert_error(err, "classes=0", "expected all > 0");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_synthetic_is_a_pure_function_of_its_seed),
        cmocka_unit_test(test_synthetic_classes_are_learnable_by_nearest_class_mean),
        cmocka_unit_test(test_synthetic_rejects_nonpositive_sizes_with_code_2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
