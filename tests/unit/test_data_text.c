// test_data_text.c — byte-level text for the gpt models (nn/data_text.c) against the file's
// own bytes: a file of fresh random bytes (every value 0..255) and a random sequence length;
// the split sizes (the last 10 % held out), and for every window of both splits its tokens
// are the file's bytes from i*T and its targets the same bytes shifted by one (next-token
// prediction), never reading past its split. Bad input (a missing, empty or too short file,
// a vocabulary under 256) is refused with code 2 and a message naming the file. Random
// offsets and a directory read as its files (below).
#include "test_data_util.h"

// dt_dataset_text on bytes: sequence length T, a model of vocab tokens, val_fraction held out
static int text_bytes(const char *path, int T, int vocab, double val_fraction,
                      dt_dataset **train, dt_dataset **val, dt_error *err) {
    dt_text_opts o = {.seq_len = T, .vocab = vocab, .val_fraction = val_fraction};
    return dt_dataset_text(path, &o, train, val, err);
}

// A file of len fresh random bytes (every value 0..255) in a new scratch directory dir,
// split with sequence length T: the bytes (malloc'ed), *train and *val
static unsigned char *random_corpus(tu_rng *r, char *dir, size_t n, int len, int T,
                                    dt_dataset **train, dt_dataset **val) {
    char path[600];
    td_mkdtemp(dir, n);
    snprintf(path, sizeof path, "%s/corpus.txt", dir);
    unsigned char *bytes = malloc((size_t)len);
    for (int i = 0; i < len; i++) bytes[i] = (unsigned char)tu_int(r, 0, 255);
    td_write(path, bytes, (size_t)len);
    dt_error err = {0, ""};
    assert_int_equal(text_bytes(path, T, 256, 0.1, train, val, &err), 0);
    return bytes;
}

static void test_windows_are_the_files_bytes_and_targets_shift_by_one(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    char dir[512];
    int len = tu_int(&r, 200, 5000), T = tu_int(&r, 1, 19);
    dt_dataset *train, *val;
    unsigned char *bytes = random_corpus(&r, dir, sizeof dir, len, T, &train, &val);
    dt_error err = {0, ""};
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
    assert_int_equal(text_bytes(path, 8, 256, 0.1, &train, &val, &err), -1);
    td_assert_error(err, path, "cannot open it");
    snprintf(path, sizeof path, "%s/empty.txt", dir);
    td_write(path, "", 0);
    assert_int_equal(text_bytes(path, 8, 256, 0.1, &train, &val, &err), -1);
    td_assert_error(err, path, "is empty");
    snprintf(path, sizeof path, "%s/short.txt", dir);
    td_write(path, "0123456789abcdefghijklmnopqrstuvwxyzABCD", 40);  // 36 + 4 bytes
    assert_int_equal(text_bytes(path, 3, 256, 0.1, &train, &val, &err), 0);  // fits
    dt_dataset_free(train);
    dt_dataset_free(val);
    assert_int_equal(text_bytes(path, 4, 256, 0.1, &train, &val, &err), -1);
    td_assert_error(err, path, "a sequence of 4 tokens needs 5 bytes");
    assert_int_equal(text_bytes(path, 2, 255, 0.1, &train, &val, &err), -1);
    td_assert_error(err, path, "vocabulary of 256 or more");
    assert_null(train);
    assert_null(val);
    td_rmtree(dir);
}

// Random offsets: every training window is T+1 consecutive bytes of the split starting at
// i*T + 0..T-1 (or the split's last T+1 bytes), a function of the aug seed alone; over 200
// seeds every shift 0..T-1 occurs, each about 1/T of the time (a chi-square bound); the
// validation split stays at i*T.
static void test_random_offsets_move_each_window_within_the_split(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    char dir[512];
    int len = tu_int(&r, 400, 3000), T = tu_int(&r, 2, 12);
    dt_dataset *train, *val;
    unsigned char *bytes = random_corpus(&r, dir, sizeof dir, len, T, &train, &val);
    dt_error err = {0, ""};
    dt_text_random_offsets(train, 1);
    int n_train = len - (int)(len * 0.1), draws = 200 * T;
    long *seen = calloc((size_t)T, sizeof *seen);
    float *x = malloc(sizeof(float) * (size_t)(T + 1));
    float *y = malloc(sizeof(float) * (size_t)(T + 1));
    for (int d = 0; d < draws; d++) {
        int64_t i = tu_int(&r, 0, (int)train->n - 1);
        uint64_t seed = ((uint64_t)tu_int(&r, 0, 1 << 30) << 20) ^ (uint64_t)d;
        int32_t label;
        assert_int_equal(dt_dataset_get(train, i, seed, x, &label, &err), 0);
        assert_int_equal(dt_dataset_get(train, i, seed, y, &label, &err), 0);
        assert_memory_equal(x, y, sizeof(float) * (size_t)(T + 1));  // the seed's alone
        int found = -1;  // where in the split these T+1 bytes start
        for (int at = (int)i * T; at < (int)i * T + T && found < 0; at++) {
            int same = at + T < n_train;
            for (int k = 0; same && k <= T; k++) same = x[k] == bytes[at + k];
            if (same) found = at;
        }
        int last = n_train - T - 1, tail = 1;
        for (int k = 0; tail && k <= T; k++) tail = x[k] == bytes[last + k];
        if (found < 0 && !tail)
            fail_msg("window %lld (T %d) is not the split's bytes from %lld + 0..%d", (long long)i,
                     T, (long long)i * T, T - 1);
        if (found >= 0 && (int)i * T + T + 1 <= last) seen[found - (int)i * T]++;
    }
    double chi2 = 0, total = 0;
    for (int k = 0; k < T; k++) total += (double)seen[k];
    for (int k = 0; k < T; k++) {
        if (!seen[k]) fail_msg("shift %d of 0..%d never drawn in %.0f windows", k, T - 1, total);
        chi2 += ((double)seen[k] - total / T) * ((double)seen[k] - total / T) / (total / T);
    }
    if (chi2 > (T - 1) + 6 * sqrt(2.0 * (T - 1)))
        fail_msg("shifts not uniform over 0..%d: chi-square %.1f", T - 1, chi2);
    for (int64_t i = 0; i < val->n; i++) {  // validation: fixed windows whatever the seed
        int32_t label;
        uint64_t seed = (uint64_t)tu_int(&r, 1, 1 << 30);
        assert_int_equal(dt_dataset_get(val, i, seed, x, &label, &err), 0);
        for (int k = 0; k <= T; k++) assert_true(x[k] == bytes[n_train + i * T + k]);
    }
    free(seen), free(x), free(y), free(bytes);
    dt_dataset_free(train);
    dt_dataset_free(val);
    td_rmtree(dir);
}

// A directory is its regular files in name order, each followed by a newline; links, *.dat
// and dot files are skipped; an empty directory is refused.
static void test_a_directory_is_its_files_in_name_order(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    char dir[512], path[700], link[700];
    td_mkdtemp(dir, sizeof dir);
    dt_error err = {0, ""};
    dt_dataset *train = NULL, *val = NULL;
    assert_int_equal(text_bytes(dir, 4, 256, 0.1, &train, &val, &err), -1);
    td_assert_error(err, dir, "holds no regular file");
    const char *names[3] = {"b", "a", "c"};
    int lens[3];
    unsigned char *parts[3];
    for (int f = 0; f < 3; f++) {
        lens[f] = tu_int(&r, 50, 300);
        parts[f] = malloc((size_t)lens[f]);
        for (int i = 0; i < lens[f]; i++) parts[f][i] = (unsigned char)tu_int(&r, 32, 126);
        snprintf(path, sizeof path, "%s/%s", dir, names[f]);
        td_write(path, parts[f], (size_t)lens[f]);
    }
    snprintf(path, sizeof path, "%s/a.dat", dir);
    td_write(path, "INDEX", 5);
    snprintf(path, sizeof path, "%s/.hidden", dir);
    td_write(path, "HIDDEN", 6);
    snprintf(path, sizeof path, "%s/a", dir);
    snprintf(link, sizeof link, "%s/a.u8", dir);
    assert_int_equal(symlink(path, link), 0);
    // expected: a, b, c, each with a newline
    int order[3] = {1, 0, 2}, len = 0;
    unsigned char want[1000];
    for (int j = 0; j < 3; j++) {
        memcpy(want + len, parts[order[j]], (size_t)lens[order[j]]);
        len += lens[order[j]];
        want[len++] = '\n';
    }
    int T = 3;
    assert_int_equal(text_bytes(dir, T, 256, 0.1, &train, &val, &err), 0);
    int n_val = (int)(len * 0.1), n_train = len - n_val;
    assert_int_equal(train->n, (n_train - 1) / T);
    assert_int_equal(val->n, (n_val - 1) / T);
    float x[4];
    int32_t label;
    for (int64_t i = 0; i < train->n; i++) {
        assert_int_equal(dt_dataset_get(train, i, 0, x, &label, &err), 0);
        for (int k = 0; k <= T; k++) assert_true(x[k] == want[i * T + k]);
    }
    for (int64_t i = 0; i < val->n; i++) {
        assert_int_equal(dt_dataset_get(val, i, 0, x, &label, &err), 0);
        for (int k = 0; k <= T; k++) assert_true(x[k] == want[n_train + i * T + k]);
    }
    for (int f = 0; f < 3; f++) free(parts[f]);
    dt_dataset_free(train);
    dt_dataset_free(val);
    td_rmtree(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_windows_are_the_files_bytes_and_targets_shift_by_one),
        cmocka_unit_test(test_bad_corpora_are_refused_with_code_2),
        cmocka_unit_test(test_random_offsets_move_each_window_within_the_split),
        cmocka_unit_test(test_a_directory_is_its_files_in_name_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
