// test_safetensors_reject.c — the safetensors reader (nn/safetensors.c) on malformed files:
// every one, cut, with an absurd header length, a malformed JSON header, a bad entry or random
// corruptions, must be rejected with DT_EXIT_USAGE and a message naming the file (and the
// tensor where there is one), or accepted with every tensor inside its data. The files are
// assembled by hand (st_files.h), independently of the writer.
#include "st_files.h"

static void test_safetensors_truncated_files_are_rejected_at_every_cut(void **state) {
    (void)state;
    float x[6] = {1, 2, 3, 4, 5, 6};
    int64_t shape[2] = {2, 3};
    dt_st_writer *w = dt_st_writer_new();
    dt_st_add(w, "first", DT_ST_F32, 1, shape, x);
    dt_st_add(w, "last.weight", DT_ST_F32, 2, shape, x);
    char path[128], cut[128];
    path_in(path, sizeof path, "whole.safetensors");
    path_in(cut, sizeof cut, "cut.safetensors");
    dt_error err = {0};
    assert_int_equal(dt_st_write(w, path, &err), 0);
    dt_st_writer_free(w);
    size_t n;
    unsigned char *b = read_bytes(path, &n);
    uint64_t hlen = 0;
    for (int k = 0; k < 8; k++) hlen |= (uint64_t)b[k] << (8 * k);
    size_t cuts[] = {0, 1, 7, 8, 9, 8 + hlen / 2, 8 + hlen - 1, 8 + hlen, 8 + hlen + 5, n - 1};
    const char *needles[] = {"shorter than", "shorter than", "shorter than", "past the end",
                             "past the end", "past the end", "past the end", "'first'",
                             "'first'", "'last.weight'"};
    for (size_t c = 0; c < sizeof cuts / sizeof *cuts; c++) {
        write_bytes(cut, b, cuts[c]);
        expect_reject(cut, DT_EXIT_USAGE, needles[c]);
    }
    write_bytes(cut, b, n);  // and the whole file is fine
    dt_st_file *f = dt_st_open(cut, &err);
    assert_non_null(f);
    dt_st_close(f);
    free(b);
    unlink(path);
    unlink(cut);
}

static void test_safetensors_absurd_or_overlong_header_length_rejected(void **state) {
    (void)state;
    char path[128];
    path_in(path, sizeof path, "hlen.safetensors");
    const char *h = "{}";
    write_st_raw(path, (uint64_t)1 << 40, h, NULL, 0);
    expect_reject(path, DT_EXIT_USAGE, "absurd");
    write_st_raw(path, UINT64_MAX, h, NULL, 0);
    expect_reject(path, DT_EXIT_USAGE, "absurd");
    write_st_raw(path, 3, h, NULL, 0);  // one byte beyond EOF
    expect_reject(path, DT_EXIT_USAGE, "past the end");
    write_st_raw(path, 2, h, NULL, 0);  // exactly right: an empty file
    dt_error err = {0};
    dt_st_file *f = dt_st_open(path, &err);
    assert_non_null(f);
    assert_int_equal(dt_st_count(f), 0);
    dt_st_close(f);
    char missing[128];
    path_in(missing, sizeof missing, "does-not-exist.safetensors");
    expect_reject(missing, DT_EXIT_USAGE, "cannot open");
    expect_reject(g_dir, DT_EXIT_USAGE, "not a regular file");
    unlink(path);
}

static void test_safetensors_malformed_json_headers_rejected(void **state) {
    (void)state;
    static const struct {
        const char *text;
        size_t len;  // 0: strlen(text)
        const char *needle;
    } bad[] = {
        {"", 0, "malformed JSON"},
        {"{", 0, "malformed JSON"},
        {"{\"a\":}", 0, "malformed JSON"},
        {"{\"a\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[0,1]},}", 0,
         "expected a string key"},
        {"{'a':1}", 0, "expected a string key"},
        {"{\"a\" 1}", 0, "expected ':'"},
        {"{\"a\":01}", 0, "leading zero"},
        {"{\"a\":[1,]}", 0, "expected a value"},
        {"{\"a\":\"x\ny\"}", 0, "control character"},
        {"{\"a\":\"\\ud800\"}", 0, "surrogate"},
        {"{\"a\":\"\\x41\"}", 0, "invalid escape"},
        {"{\"a\":\"\xc3\x28\"}", 0, "UTF-8"},
        {"{\"a\":tru}", 0, "malformed JSON"},
        {"{\"a\":1}{}", 0, "after the JSON value"},
        {"{\"a\":1}\0\0", 9, "after the JSON value"},  // NUL padding is not whitespace
        {"[]", 0, "expected an object"},
        {"\"str\"", 0, "expected an object"},
        {"{\"a\":99999999999999999999}", 0, "int64"},
        {"{\"a\":1.5}", 0, "non-integer"},
        {"{\"a\":{\"b\":1},\"a\":{\"b\":2}}", 0, "duplicate key"},
    };
    char path[128];
    path_in(path, sizeof path, "json.safetensors");
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint64_t hlen = bad[i].len ? bad[i].len : strlen(bad[i].text);
        unsigned char buf[128];
        for (int k = 0; k < 8; k++) buf[k] = (unsigned char)(hlen >> (8 * k));
        memcpy(buf + 8, bad[i].text, hlen);
        write_bytes(path, buf, 8 + hlen);
        expect_reject(path, DT_EXIT_USAGE, bad[i].needle);
    }
    // nesting beyond the parser's limit is refused, not a stack overflow
    size_t depth = 100000;
    char *deep = malloc(2 * depth + 16);
    size_t k = 0;
    k += (size_t)sprintf(deep, "{\"a\":");
    for (size_t i = 0; i < depth; i++) deep[k++] = '[';
    for (size_t i = 0; i < depth; i++) deep[k++] = ']';
    deep[k++] = '}';
    deep[k] = '\0';
    write_st(path, deep, NULL, 0);
    expect_reject(path, DT_EXIT_USAGE, "nesting");
    free(deep);
    unlink(path);
}

static void test_safetensors_bad_entries_rejected_naming_the_tensor(void **state) {
    (void)state;
    static const struct {
        const char *header, *needle;
    } cases[] = {
        {"{\"w.x\":{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[0,16]}}", "unknown dtype"},
        {"{\"w.x\":{\"dtype\":\"f32\",\"shape\":[4],\"data_offsets\":[0,16]}}", "unknown dtype"},
        {"{\"w.x\":{\"dtype\":7,\"shape\":[4],\"data_offsets\":[0,16]}}", "dtype"},
        {"{\"w.x\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,16]}}", "need 12"},
        {"{\"w.x\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,20]}}", "outside"},
        {"{\"w.x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", "negative"},
        {"{\"w.x\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,4]}}", "end before begin"},
        {"{\"w.x\":{\"dtype\":\"F32\",\"shape\":[-4],\"data_offsets\":[0,16]}}", "shape entry"},
        {"{\"w.x\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,16]}}",
         "overflows"},
        {"{\"w.x\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,16],\"data_offsets\":[0,16]}}",
         "at most 8"},
        {"{\"w.x\":{\"dtype\":\"F32\",\"shape\":[4]}}", "missing \"data_offsets\""},
        {"{\"w.x\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0]}}", "[begin, end]"},
        {"{\"w.x\":[1,2]}", "expected an object"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"w.x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", "overlap"},
    };
    unsigned char data[16] = {0};
    char path[128];
    path_in(path, sizeof path, "entries.safetensors");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_st(path, cases[i].header, data, sizeof data);
        expect_reject(path, DT_EXIT_USAGE, cases[i].needle);
        expect_reject(path, DT_EXIT_USAGE, "'w.x'");
    }
    write_st(path, "{\"__metadata__\":{\"k\":1}}", NULL, 0);
    expect_reject(path, DT_EXIT_USAGE, "__metadata__ 'k'");
    unlink(path);
}

// Random corruptions of a valid file: every one is either rejected with DT_EXIT_USAGE and a
// message naming the file, or accepted with every tensor inside the file's data section (run
// under AddressSanitizer this also shows that no byte outside the buffers is touched).
static void test_safetensors_random_corruptions_are_rejected_or_consistent(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    float x[12];
    tu_fill_uniform(&r, x, 12, -1, 1);
    int64_t s34[2] = {3, 4}, s2[1] = {2};
    uint16_t h[2] = {0x3c00, 0xbc00};
    dt_st_writer *w = dt_st_writer_new();
    dt_st_add(w, "layer1.0.conv1.weight", DT_ST_F32, 2, s34, x);
    dt_st_add(w, "h", DT_ST_F16, 1, s2, h);
    dt_st_add_metadata(w, "format", "pt");
    char path[128], bad[128];
    path_in(path, sizeof path, "fuzz-src.safetensors");
    path_in(bad, sizeof bad, "fuzz.safetensors");
    dt_error err = {0};
    assert_int_equal(dt_st_write(w, path, &err), 0);
    dt_st_writer_free(w);
    size_t n;
    unsigned char *orig = read_bytes(path, &n);
    unsigned char *b = malloc(n);
    int accepted = 0, rejected = 0;
    for (int it = 0; it < 3000; it++) {
        memcpy(b, orig, n);
        int flips = tu_int(&r, 1, 3);
        for (int k = 0; k < flips; k++) {
            size_t at = (size_t)tu_int(&r, 0, (int)n - 1);
            static const char pool[] = "{}[]\":,0123456789-. eEuF";
            b[at] = tu_int(&r, 0, 1) ? (unsigned char)tu_int(&r, 0, 255)
                                     : (unsigned char)pool[tu_int(&r, 0, (int)sizeof pool - 2)];
        }
        size_t len = tu_int(&r, 0, 9) == 0 ? (size_t)tu_int(&r, 0, (int)n) : n;
        write_bytes(bad, b, len);
        dt_error_clear(&err);
        dt_st_file *f = dt_st_open(bad, &err);
        if (!f) {
            assert_int_equal(err.code, DT_EXIT_USAGE);
            assert_non_null(strstr(err.msg, bad));
            rejected++;
            continue;
        }
        accepted++;
        for (int i = 0; i < dt_st_count(f); i++) {
            const dt_st_tensor *t = dt_st_get(f, i);
            int64_t nb = dt_st_shape_bytes(t->ndim, t->shape, t->dtype);
            assert_true(nb >= 0 && (size_t)nb == t->nbytes && t->nbytes <= len);
            volatile unsigned char sum = 0;
            for (size_t k = 0; k < t->nbytes; k++) sum ^= ((const unsigned char *)t->data)[k];
            (void)sum;
        }
        dt_st_close(f);
    }
    printf("# corruptions: %d rejected, %d accepted (e.g. a flipped data byte)\n", rejected,
           accepted);
    assert_true(rejected > 0);
    free(b);
    free(orig);
    unlink(path);
    unlink(bad);
}

// ---------------------------------------------------------------- the writer's checks
int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_safetensors_truncated_files_are_rejected_at_every_cut),
        cmocka_unit_test(test_safetensors_absurd_or_overlong_header_length_rejected),
        cmocka_unit_test(test_safetensors_malformed_json_headers_rejected),
        cmocka_unit_test(test_safetensors_bad_entries_rejected_naming_the_tensor),
        cmocka_unit_test(test_safetensors_random_corruptions_are_rejected_or_consistent),
    };
    return cmocka_run_group_tests(tests, st_setup, st_teardown);
}
