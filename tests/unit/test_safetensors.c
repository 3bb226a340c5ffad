// test_safetensors.c — the safetensors writer and validating reader (nn/safetensors.c,
// nn/safetensors_write.c; the JSON parser's own tests are in test_json.c): round trips, the
// bytes of the format, the data's CRC-32, and the writer's refusals and failures, which leave
// nothing behind (docs/conventions.md, "Never a partial file"). References are independent:
// the bytes of the format assembled by hand in this file, the source buffers of a round trip.
// Malformed files are test_safetensors_reject.c's.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "json.h"
#include "st_files.h"

// ---------------------------------------------------------------- round trips

static void test_safetensors_round_trip_every_dtype_scalar_empty_and_metadata(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    enum { NT = 9 };
    dt_st_dtype dts[NT] = {DT_ST_F32, DT_ST_F16, DT_ST_BF16, DT_ST_I64, DT_ST_I32,
                           DT_ST_U8,  DT_ST_U8,  DT_ST_I64,  DT_ST_F32};
    int ndims[NT] = {4, 2, 3, 1, 2, 1, 5, 0, 2};  // 7: a scalar; 8: an empty (0, k) tensor
    int64_t shapes[NT][8];
    unsigned char *bufs[NT];
    char names[NT][32];
    dt_st_writer *w = dt_st_writer_new();
    for (int i = 0; i < NT; i++) {
        size_t count = 1;
        for (int d = 0; d < ndims[i]; d++) {
            shapes[i][d] = (i == 8 && d == 0) ? 0 : tu_int(&r, 1, 5);
            count *= (size_t)shapes[i][d];
        }
        size_t nb = count * dt_st_dtype_size(dts[i]);
        bufs[i] = malloc(nb + 1);
        for (size_t b = 0; b < nb; b++) bufs[i][b] = (unsigned char)tu_int(&r, 0, 255);
        snprintf(names[i], sizeof names[i], "t%d.%s", i, dt_st_dtype_name(dts[i]));
        dt_st_add(w, names[i], dts[i], ndims[i], shapes[i], bufs[i]);
    }
    dt_st_add_metadata(w, "format", "pt");
    const char *odd = "quote\" backslash\\ newline\n tab\t caf\xc3\xa9 \xf0\x9f\x98\x80 \x01";
    dt_st_add_metadata(w, "odd \"key\"", odd);
    char path[128];
    path_in(path, sizeof path, "round.safetensors");
    dt_error err = {0};
    assert_int_equal(dt_st_write(w, path, &err), 0);
    dt_st_writer_free(w);

    dt_st_file *f = dt_st_open(path, &err);
    if (!f) fail_msg("open failed: %s", err.msg);
    assert_int_equal(dt_st_count(f), NT);
    for (int i = 0; i < NT; i++) {
        const dt_st_tensor *t = dt_st_find(f, names[i]);
        assert_non_null(t);
        assert_int_equal(t->dtype, dts[i]);
        assert_int_equal(t->ndim, ndims[i]);
        size_t count = 1;
        for (int d = 0; d < ndims[i]; d++) {
            assert_int_equal(t->shape[d], shapes[i][d]);
            count *= (size_t)shapes[i][d];
        }
        assert_int_equal(t->nbytes, count * dt_st_dtype_size(dts[i]));
        if (t->nbytes) assert_memory_equal(t->data, bufs[i], t->nbytes);
        // the writer aligns every tensor to its element size (header padded to 8 bytes, the
        // largest elements first), and the reader's data buffer comes from malloc
        assert_int_equal((uintptr_t)t->data % dt_st_dtype_size(dts[i]), 0);
        free(bufs[i]);
    }
    assert_null(dt_st_find(f, "absent"));
    assert_string_equal(dt_st_metadata(f, "format"), "pt");
    assert_string_equal(dt_st_metadata(f, "odd \"key\""), odd);
    assert_null(dt_st_metadata(f, "absent"));
    dt_st_close(f);
    assert_int_equal(count_dir_entries(g_dir, ".tmp."), 0);
    unlink(path);
}

// The exact bytes for a small file, written out by hand from the format description.
static void test_safetensors_writer_bytes_match_the_format_by_hand(void **state) {
    (void)state;
    float x[2] = {1.5f, -2.0f};
    int64_t s = 7, shape[1] = {2};
    dt_st_writer *w = dt_st_writer_new();
    dt_st_add(w, "x", DT_ST_F32, 1, shape, x);
    dt_st_add(w, "n", DT_ST_I64, 0, NULL, &s);
    char path[128];
    path_in(path, sizeof path, "bytes.safetensors");
    dt_error err = {0};
    assert_int_equal(dt_st_write(w, path, &err), 0);
    dt_st_writer_free(w);
    // I64 first (largest element first), then F32; JSON in insertion order, the metadata
    // (the data's CRC-32) first; padded to 8
    unsigned char data[16];
    memcpy(data, &s, 8);
    memcpy(data + 8, x, 8);
    char json[300];
    snprintf(json, sizeof json,
             "{\"__metadata__\":{\"dtlab.data_crc32\":\"%08x\"},"
             "\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]},"
             "\"n\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[0,8]}}",
             (unsigned)dt_st_crc32(0, data, sizeof data));
    size_t jn = strlen(json), hn = jn + (8 - (8 + jn) % 8) % 8;
    size_t n;
    unsigned char *b = read_bytes(path, &n);
    assert_int_equal(n, 8 + hn + 16);
    uint64_t hlen = 0;
    for (int k = 0; k < 8; k++) hlen |= (uint64_t)b[k] << (8 * k);
    assert_int_equal(hlen, hn);
    assert_memory_equal(b + 8, json, jn);
    for (size_t k = jn; k < hn; k++) assert_int_equal(b[8 + k], ' ');
    assert_memory_equal(b + 8 + hn, &s, 8);
    assert_memory_equal(b + 8 + hn + 8, x, 8);
    free(b);
    unlink(path);
}

// CRC-32 against the catalogue's check value (CRC-32/ISO-HDLC of "123456789" is 0xCBF43926,
// the value zlib's crc32 gives), chaining, and every single-bit flip of a written file's
// data refused by the reader with the checksum's message; a reserved key is refused.
static void test_safetensors_crc32_catches_every_flipped_data_bit(void **state) {
    (void)state;
    assert_int_equal(dt_st_crc32(0, "123456789", 9), 0xCBF43926u);
    assert_int_equal(dt_st_crc32(0, "", 0), 0);
    assert_int_equal(dt_st_crc32(dt_st_crc32(0, "1234", 4), "56789", 5), 0xCBF43926u);
    tu_rng r = tu_rng_new(tu_seed());
    float x[10];
    tu_fill_uniform(&r, x, 10, -1, 1);
    int64_t shape[1] = {10};
    dt_st_writer *w = dt_st_writer_new();
    dt_st_add(w, "w", DT_ST_F32, 1, shape, x);
    dt_st_add_metadata(w, DT_ST_CRC_KEY, "00000000");
    char path[128], bad[128];
    path_in(path, sizeof path, "crc-src.safetensors");
    path_in(bad, sizeof bad, "crc.safetensors");
    dt_error err = {0};
    assert_int_equal(dt_st_write(w, path, &err), -1);  // the reserved key
    assert_non_null(strstr(err.msg, "reserved"));
    dt_st_writer_free(w);
    w = dt_st_writer_new();
    dt_st_add(w, "w", DT_ST_F32, 1, shape, x);
    dt_error_clear(&err);
    assert_int_equal(dt_st_write(w, path, &err), 0);
    dt_st_writer_free(w);
    size_t n;
    unsigned char *orig = read_bytes(path, &n);
    size_t data0 = n - sizeof x;
    for (size_t at = data0; at < n; at++) {
        for (int bit = 0; bit < 8; bit++) {
            orig[at] ^= (unsigned char)(1u << bit);
            write_bytes(bad, orig, n);
            orig[at] ^= (unsigned char)(1u << bit);
            dt_error_clear(&err);
            dt_st_file *f = dt_st_open(bad, &err);
            if (f) fail_msg("byte %zu bit %d flipped: accepted", at, bit);
            assert_int_equal(err.code, DT_EXIT_USAGE);
            assert_non_null(strstr(err.msg, "CRC-32"));
        }
    }
    write_bytes(bad, orig, n);  // unflipped: accepted
    dt_st_file *f = dt_st_open(bad, &err);
    assert_non_null(f);
    dt_st_close(f);
    free(orig);
    unlink(path);
    unlink(bad);
}

// Another writer's choices: whitespace, key order, holes, unaligned data, no padding.
static void test_safetensors_reads_a_file_assembled_by_hand(void **state) {
    (void)state;
    unsigned char data[23];
    for (int i = 0; i < 23; i++) data[i] = (unsigned char)(i * 7 + 1);
    const char *h = " {\n \"__metadata__\" : {\"k\": \"v\\u00e9\\ud83d\\ude00\"},\r\n"
                    "\t\"b\": {\"data_offsets\": [3, 9], \"shape\": [3], \"dtype\": \"BF16\", "
                    "\"extra\": [1, {\"x\": null}]},\n"
                    "  \"a/\\\"q\\\"\": {\"dtype\":\"U8\",\"shape\":[1,2],\"data_offsets\":[0,2]},"
                    "\"z\": {\"dtype\": \"I32\", \"shape\": [0, 4], \"data_offsets\": [9, 9]},"
                    "\"i\": {\"dtype\": \"I32\", \"shape\": [2], \"data_offsets\": [11, 19]}} ";
    char path[128];
    path_in(path, sizeof path, "hand.safetensors");
    write_st(path, h, data, sizeof data);
    dt_error err = {0};
    dt_st_file *f = dt_st_open(path, &err);
    if (!f) fail_msg("open failed: %s", err.msg);
    assert_int_equal(dt_st_count(f), 4);
    const dt_st_tensor *b = dt_st_find(f, "b"), *a = dt_st_find(f, "a/\"q\"");
    const dt_st_tensor *z = dt_st_find(f, "z"), *i32 = dt_st_find(f, "i");
    assert_non_null(b);
    assert_non_null(a);
    assert_non_null(z);
    assert_non_null(i32);
    assert_int_equal(b->dtype, DT_ST_BF16);
    assert_int_equal(b->nbytes, 6);
    assert_memory_equal(b->data, data + 3, 6);
    assert_int_equal(a->ndim, 2);
    assert_memory_equal(a->data, data, 2);
    assert_int_equal(z->nbytes, 0);
    assert_memory_equal(i32->data, data + 11, 8);
    assert_string_equal(dt_st_metadata(f, "k"), "v\xc3\xa9\xf0\x9f\x98\x80");
    dt_st_close(f);
    unlink(path);
}


static void test_safetensors_writer_rejects_bad_arguments_and_writes_nothing(void **state) {
    (void)state;
    float x[4] = {0};
    int64_t shape[1] = {4}, neg[1] = {-1};
    char path[128];
    path_in(path, sizeof path, "never.safetensors");
    char longname[200];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    struct {
        const char *name;
        int dtype, ndim;
        const int64_t *shape;
        const char *needle;
    } cases[] = {
        {"dup", DT_ST_F32, 1, shape, "'dup' added twice"},
        {"neg", DT_ST_F32, 1, neg, "'neg': shape"},
        {"dt", 99, 1, shape, "'dt': unknown dtype"},
        {longname, DT_ST_F32, 1, shape, "longer than"},
        {"__metadata__", DT_ST_F32, 1, shape, "reserved"},
        {"", DT_ST_F32, 1, shape, "empty name"},
        {"bad\xff", DT_ST_F32, 1, shape, "UTF-8"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        dt_st_writer *w = dt_st_writer_new();
        dt_st_add(w, "dup", DT_ST_F32, 1, shape, x);
        dt_st_add(w, cases[i].name, (dt_st_dtype)cases[i].dtype, cases[i].ndim, cases[i].shape,
                  x);
        dt_error err = {0};
        assert_int_equal(dt_st_write(w, path, &err), -1);
        dt_st_writer_free(w);
        printf("# writer: %s\n", err.msg);
        assert_int_equal(err.code, DT_EXIT_USAGE);
        assert_non_null(strstr(err.msg, path));
        if (!strstr(err.msg, cases[i].needle)) fail_msg("lacks '%s': %s", cases[i].needle,
                                                        err.msg);
        assert_int_equal(access(path, F_OK), -1);
        assert_int_equal(count_dir_entries(g_dir, "never"), 0);
    }
}

// ---------------------------------------------------------------- atomic writes

static dt_st_writer *one_tensor_writer(const float *x, int64_t n) {
    dt_st_writer *w = dt_st_writer_new();
    dt_st_add(w, "x", DT_ST_F32, 1, &n, x);
    return w;
}

static void test_safetensors_write_into_missing_directory_fails_and_leaves_nothing(void **state) {
    (void)state;
    float x[4] = {1, 2, 3, 4};
    char path[160];
    snprintf(path, sizeof path, "%s/no-such-dir/w.safetensors", g_dir);
    dt_st_writer *w = one_tensor_writer(x, 4);
    dt_error err = {0};
    int before = count_dir_entries(g_dir, NULL);
    assert_int_equal(dt_st_write(w, path, &err), -1);
    dt_st_writer_free(w);
    printf("# %s\n", err.msg);
    assert_int_equal(err.code, DT_EXIT_USAGE);  // a path that cannot be created: bad input
    assert_non_null(strstr(err.msg, path));
    assert_int_equal(count_dir_entries(g_dir, NULL), before);
}

// A write that fails half-way (the file-size limit makes write(2) fail with EFBIG) must
// remove its temporary file and leave the previous PATH byte for byte.
static void test_safetensors_failed_overwrite_keeps_the_old_file(void **state) {
    (void)state;
    char path[128];
    path_in(path, sizeof path, "keep.safetensors");
    float small[4] = {1, 2, 3, 4};
    dt_st_writer *w = one_tensor_writer(small, 4);
    dt_error err = {0};
    assert_int_equal(dt_st_write(w, path, &err), 0);
    dt_st_writer_free(w);
    size_t n_old;
    unsigned char *old = read_bytes(path, &n_old);

    size_t big_n = 1 << 20;
    float *big = calloc(big_n, sizeof(float));
    struct rlimit saved, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
    lim = saved;
    lim.rlim_cur = 64 * 1024;
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    w = one_tensor_writer(big, (int64_t)big_n);
    int rc = dt_st_write(w, path, &err);
    setrlimit(RLIMIT_FSIZE, &saved);
    signal(SIGXFSZ, old_handler);
    dt_st_writer_free(w);
    free(big);
    printf("# %s\n", err.msg);
    assert_int_equal(rc, -1);
    assert_int_equal(err.code, DT_EXIT_RUNTIME);
    assert_int_equal(count_dir_entries(g_dir, ".tmp."), 0);
    size_t n_now;
    unsigned char *now = read_bytes(path, &n_now);
    assert_int_equal(n_now, n_old);
    assert_memory_equal(now, old, n_old);
    free(now);
    free(old);

    // the rename itself failing (PATH is a directory) also cleans up
    char dirpath[128];
    path_in(dirpath, sizeof dirpath, "adir.safetensors");
    assert_int_equal(mkdir(dirpath, 0700), 0);
    w = one_tensor_writer(small, 4);
    assert_int_equal(dt_st_write(w, dirpath, &err), -1);
    dt_st_writer_free(w);
    printf("# %s\n", err.msg);
    assert_non_null(strstr(err.msg, "rename"));
    assert_int_equal(count_dir_entries(g_dir, ".tmp."), 0);
    rmdir(dirpath);
    unlink(path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_safetensors_round_trip_every_dtype_scalar_empty_and_metadata),
        cmocka_unit_test(test_safetensors_writer_bytes_match_the_format_by_hand),
        cmocka_unit_test(test_safetensors_crc32_catches_every_flipped_data_bit),
        cmocka_unit_test(test_safetensors_reads_a_file_assembled_by_hand),
        cmocka_unit_test(test_safetensors_writer_rejects_bad_arguments_and_writes_nothing),
        cmocka_unit_test(test_safetensors_write_into_missing_directory_fails_and_leaves_nothing),
        cmocka_unit_test(test_safetensors_failed_overwrite_keeps_the_old_file),
    };
    return cmocka_run_group_tests(tests, st_setup, st_teardown);
}
