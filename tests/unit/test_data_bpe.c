// test_data_bpe.c — the byte-level BPE (nn/bpe*.c) on what tests/ref/bpe_gpt2.py cannot give
// Python: fresh random bytes that are not UTF-8. Encoding loses nothing (the ids' bytes are
// the text), merges.txt and vocab.json read back to the same tokenizer, the shards round-trip,
// and every malformed file or size is refused with code 2 and a message naming it.
#include "test_data_util.h"  // first: it sets _GNU_SOURCE

#include "bpe.h"

// n random bytes: words of a small alphabet, spaces, and any byte at all now and then
static uint8_t *random_bytes(tu_rng *r, size_t n) {
    uint8_t *t = malloc(n);
    static const char alpha[] = "aabbcde  \n'";
    for (size_t i = 0; i < n; i++)
        t[i] = tu_int(r, 0, 9) ? (uint8_t)alpha[tu_int(r, 0, (int)sizeof alpha - 2)]
                               : (uint8_t)tu_int(r, 0, 255);
    return t;
}

static void assert_encodes_losslessly(const dt_bpe *b, const uint8_t *t, size_t n) {
    int32_t *ids = malloc((n + 1) * sizeof *ids);
    size_t k = dt_bpe_encode(b, t, n, ids), at = 0;
    assert_true(k <= n);
    for (size_t i = 0; i < k; i++) {
        int len;
        const uint8_t *tok = dt_bpe_token(b, ids[i], &len);
        assert_non_null(tok);
        assert_true(ids[i] != dt_bpe_eot(b));  // never made from text
        assert_true(at + (size_t)len <= n);
        assert_memory_equal(tok, t + at, (size_t)len);
        at += (size_t)len;
    }
    assert_int_equal(at, n);
    free(ids);
}

static void test_random_bytes_encode_losslessly_and_files_read_back(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    size_t n = (size_t)tu_int(&r, 2000, 20000);
    int vocab = tu_int(&r, 260, 320);
    uint8_t *t = random_bytes(&r, n);
    dt_error err = {0, ""};
    dt_bpe *b = dt_bpe_train(t, n, vocab, &err);
    assert_non_null(b);
    assert_int_equal(dt_bpe_vocab(b), vocab);
    assert_encodes_losslessly(b, t, n);
    char *merges = dt_bpe_merges_text(b), *vocab_json = dt_bpe_vocab_json(b);
    dt_bpe *back = dt_bpe_from_merges(merges, strlen(merges), "merges.txt", &err);
    assert_non_null(back);
    assert_int_equal(dt_bpe_check_vocab_json(back, vocab_json, strlen(vocab_json), "v", &err), 0);
    int32_t *a = malloc(n * sizeof *a), *c = malloc(n * sizeof *c);
    size_t ka = dt_bpe_encode(b, t, n, a), kc = dt_bpe_encode(back, t, n, c);
    assert_int_equal(ka, kc);
    assert_memory_equal(a, c, ka * sizeof *a);
    assert_true(ka < n);  // the merges did something
    // a vocabulary numbered another way: two ids swapped
    char *swap = strstr(vocab_json, "\": 256,");
    assert_non_null(swap);
    memcpy(swap, "\": 257,", 7);
    char *other = strstr(swap + 7, "\": 257,");
    if (other) memcpy(other, "\": 256,", 7);
    assert_int_equal(dt_bpe_check_vocab_json(back, vocab_json, strlen(vocab_json), "v.json",
                                             &err), -1);
    assert_non_null(strstr(err.msg, "v.json"));
    assert_non_null(strstr(err.msg, "not the id dtrain gives it"));
    free(a), free(c), free(merges), free(vocab_json), free(t);
    dt_bpe_free(b), dt_bpe_free(back);
}

static void assert_merges_refused(const char *text, const char *what) {
    dt_error err = {0, ""};
    assert_null(dt_bpe_from_merges(text, strlen(text), "m.txt", &err));
    assert_int_equal(err.code, DT_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "m.txt"));
    if (!strstr(err.msg, what)) fail_msg("'%s': message '%s' lacks '%s'", text, err.msg, what);
}

static void test_malformed_merges_are_refused_with_the_line(void **state) {
    (void)state;
    assert_merges_refused("#version: 0.2\nab\n", "line 2");           // no space
    assert_merges_refused("a b\nab c\nabc d\nx yz\n", "line 4");       // yz never made
    assert_merges_refused("a b\na b\n", "an earlier line");            // made twice
    assert_merges_refused("a \xce\xa9\n", "line 1");                   // Ω: not the alphabet
    assert_merges_refused("#version: 0.2\n\n", "no merge");
    assert_merges_refused("a  b\n", "line 1");                         // two spaces
    dt_error err = {0, ""};
    const char *ok = "#version: 0.2\r\n\xc4\xa0 t\r\n";  // CRLF, "Ġ t": space + t
    dt_bpe *b = dt_bpe_from_merges(ok, strlen(ok), "m.txt", &err);
    assert_non_null(b);
    int32_t ids[4];
    assert_int_equal(dt_bpe_encode(b, (const uint8_t *)" t", 2, ids), 1);
    assert_int_equal(ids[0], 256);
    dt_bpe_free(b);
}

static void test_sizes_are_refused(void **state) {
    (void)state;
    dt_error err = {0, ""};
    const uint8_t t[] = "abab abab";
    assert_null(dt_bpe_train(t, sizeof t - 1, 257, &err));
    assert_non_null(strstr(err.msg, "258"));
    assert_null(dt_bpe_train(t, sizeof t - 1, DT_BPE_MAX_VOCAB + 1, &err));
    assert_null(dt_bpe_train(t, sizeof t - 1, 1000, &err));  // only a few pairs exist
    assert_int_equal(err.code, DT_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "at most"));
    const int32_t bad[1][2] = {{256, 0}};  // a merge of a token not made yet
    assert_null(dt_bpe_from_pairs(bad, 1, &err));
}

static void test_shards_round_trip_and_bad_shards_are_refused(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    char dir[512], path[600];
    td_mkdtemp(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/train.bin", dir);
    size_t n = (size_t)tu_int(&r, 2, 5000);
    int32_t *ids = malloc(n * sizeof *ids);
    for (size_t i = 0; i < n; i++) ids[i] = tu_int(&r, 0, 65535);
    dt_error err = {0, ""};
    assert_int_equal(dt_tokens_write(path, ids, n, &err), 0);
    int64_t got = 0;
    int32_t *back = dt_tokens_read(path, 65536, &got, &err);
    assert_non_null(back);
    assert_int_equal(got, (int64_t)n);
    assert_memory_equal(back, ids, n * sizeof *ids);
    free(back);
    int max = 0;
    for (size_t i = 0; i < n; i++) max = ids[i] > max ? ids[i] : max;
    assert_null(dt_tokens_read(path, max, &got, &err));  // an id outside the vocabulary
    assert_non_null(strstr(err.msg, "outside the tokenizer's vocabulary"));
    td_write(path, "abc", 3);  // odd
    assert_null(dt_tokens_read(path, 65536, &got, &err));
    assert_non_null(strstr(err.msg, "two bytes each"));
    snprintf(path, sizeof path, "%s/big.bin", dir);
    ids[n / 2] = 65536;  // does not fit: nothing written
    assert_int_equal(dt_tokens_write(path, ids, n, &err), -1);
    assert_non_null(strstr(err.msg, "65,536"));
    FILE *f = fopen(path, "rb");
    assert_null(f);
    free(ids);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_bytes_encode_losslessly_and_files_read_back),
        cmocka_unit_test(test_malformed_merges_are_refused_with_the_line),
        cmocka_unit_test(test_sizes_are_refused),
        cmocka_unit_test(test_shards_round_trip_and_bad_shards_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
