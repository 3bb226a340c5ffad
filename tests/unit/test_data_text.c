// test_data_text.c — byte-level text for the gpt models (nn/data_text.c) against the file's
// own bytes: a file of fresh random bytes (every value 0..255) and a random sequence length;
// the split sizes (the last 10 % held out), and for every window of both splits its tokens
// are the file's bytes from i*T and its targets the same bytes shifted by one (next-token
// prediction), never reading past its split. Bad input (a missing, empty or too short file,
// a vocabulary under 256) is refused with code 2 and a message naming the file.
#include "test_data_util.h"

static void test_windows_are_the_files_bytes_and_targets_shift_by_one(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    char dir[512], path[600];
    td_mkdtemp(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/corpus.txt", dir);
    int len = tu_int(&r, 200, 5000), T = tu_int(&r, 1, 19);
    unsigned char *bytes = malloc((size_t)len);
    for (int i = 0; i < len; i++) bytes[i] = (unsigned char)tu_int(&r, 0, 255);
    td_write(path, bytes, (size_t)len);
    dt_error err = {0, ""};
    dt_dataset *train, *val;
    assert_int_equal(dt_dataset_text(path, T, 256, 0.1, &train, &val, &err), 0);
    int n_val = (int)(len * 0.1), n_train = len - n_val;
    assert_int_equal(train->n, (n_train - 1) / T);
    assert_int_equal(val->n, (n_val - 1) / T);
    assert_int_equal(train->w, T + 1);
    assert_int_equal(train->num_classes, 256);
    float *x = malloc(sizeof(float) * (size_t)(T + 1));
    int32_t *tok = malloc(sizeof(int32_t) * (size_t)T), *tgt = malloc(sizeof(int32_t) * (size_t)T);
    for (int s = 0; s < 2; s++) {
        const dt_dataset *ds = s ? val : train;
        int off = s ? n_train : 0, end = s ? len : n_train;
        for (int64_t i = 0; i < ds->n; i++) {
            int32_t label = -1;
            assert_int_equal(dt_dataset_get(ds, i, 0, x, &label, &err), 0);
            assert_int_equal(label, 0);
            dt_text_example_tokens(x, T, tok, tgt);
            int at = off + (int)i * T;
            assert_true(at + T < end);  // the last target is still inside the split
            for (int k = 0; k < T; k++) {
                assert_int_equal(tok[k], bytes[at + k]);
                assert_int_equal(tgt[k], bytes[at + k + 1]);
            }
        }
    }
    printf("#   %d bytes, T %d: %lld training and %lld validation windows\n", len, T,
           (long long)train->n, (long long)val->n);
    free(x), free(tok), free(tgt), free(bytes);
    dt_dataset_free(train);
    dt_dataset_free(val);
    td_rmtree(dir);
}

static void test_bad_corpora_are_refused_with_code_2(void **state) {
    (void)state;
    char dir[512], path[600];
    td_mkdtemp(dir, sizeof dir);
    dt_dataset *train = NULL, *val = NULL;
    dt_error err = {0, ""};
    snprintf(path, sizeof path, "%s/missing.txt", dir);
    assert_int_equal(dt_dataset_text(path, 8, 256, 0.1, &train, &val, &err), -1);
    td_assert_error(err, path, "cannot open it");
    snprintf(path, sizeof path, "%s/empty.txt", dir);
    td_write(path, "", 0);
    assert_int_equal(dt_dataset_text(path, 8, 256, 0.1, &train, &val, &err), -1);
    td_assert_error(err, path, "is empty");
    snprintf(path, sizeof path, "%s/short.txt", dir);
    td_write(path, "0123456789abcdefghijklmnopqrstuvwxyzABCD", 40);  // 36 + 4 bytes
    assert_int_equal(dt_dataset_text(path, 3, 256, 0.1, &train, &val, &err), 0);  // fits
    dt_dataset_free(train);
    dt_dataset_free(val);
    assert_int_equal(dt_dataset_text(path, 4, 256, 0.1, &train, &val, &err), -1);
    td_assert_error(err, path, "a sequence of 4 tokens needs 5 bytes");
    assert_int_equal(dt_dataset_text(path, 2, 255, 0.1, &train, &val, &err), -1);
    td_assert_error(err, path, "vocabulary of 256 or more");
    assert_null(train);
    assert_null(val);
    td_rmtree(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_windows_are_the_files_bytes_and_targets_shift_by_one),
        cmocka_unit_test(test_bad_corpora_are_refused_with_code_2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
