// test_data_idx.c — the idx reader (real/data_idx.c) on files this test writes with zlib:
// random small images and labels read back exactly and normalise as (p/255 - mean)/std
// (float64 reference); every kind of damage (wrong magic, truncated or corrupted gzip,
// bad CRC, short header, zero dimension, count mismatch, label >= 10, trailing bytes, a
// missing file, a bad split name) is an error with code 2 naming the file. And the real
// Fashion-MNIST files, if installed: 60000/10000 balanced 28x28 images whose pixel
// statistics are the constants data.h normalises with.
#include "test_data_util.h"

#include <math.h>
#include <zlib.h>

typedef struct {
    int n, rows, cols;
    uint8_t *pixels, *labels;
} idx_data;

static idx_data random_idx(tu_rng *r) {
    idx_data d;
    d.n = tu_int(r, 1, 200);
    d.rows = tu_int(r, 1, 40);
    d.cols = tu_int(r, 1, 40);
    size_t np = (size_t)d.n * d.rows * d.cols;
    d.pixels = malloc(np);
    d.labels = malloc((size_t)d.n);
    for (size_t i = 0; i < np; i++) d.pixels[i] = (uint8_t)tu_int(r, 0, 255);
    for (int i = 0; i < d.n; i++) d.labels[i] = (uint8_t)tu_int(r, 0, 9);
    return d;
}

static void put_be32(unsigned char *b, uint32_t v) {
    b[0] = (unsigned char)(v >> 24);
    b[1] = (unsigned char)(v >> 16);
    b[2] = (unsigned char)(v >> 8);
    b[3] = (unsigned char)v;
}

// header (magic, dims...) then payload, gzip'd when gz, else plain
static void write_idx(const char *path, uint32_t magic, const uint32_t *dims, int ndims,
                      const uint8_t *payload, size_t bytes, int gz) {
    unsigned char head[16];
    put_be32(head, magic);
    for (int d = 0; d < ndims; d++) put_be32(head + 4 * (d + 1), dims[d]);
    if (gz) {
        gzFile f = gzopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(gzwrite(f, head, 4u * (1 + ndims)), 4 * (1 + ndims));
        if (bytes) assert_int_equal(gzwrite(f, payload, (unsigned)bytes), (int)bytes);
        assert_int_equal(gzclose(f), Z_OK);
    } else {
        FILE *f = fopen(path, "wb");
        fwrite(head, 1, 4u * (1 + ndims), f);
        fwrite(payload, 1, bytes, f);
        fclose(f);
    }
}

static void write_split(const char *dir, const char *split, const idx_data *d, int gz) {
    char p[512];
    uint32_t idims[3] = {(uint32_t)d->n, (uint32_t)d->rows, (uint32_t)d->cols};
    uint32_t ldims[1] = {(uint32_t)d->n};
    snprintf(p, sizeof p, "%s/%s-images-idx3-ubyte%s", dir, split, gz ? ".gz" : "");
    write_idx(p, 0x803, idims, 3, d->pixels, (size_t)d->n * d->rows * d->cols, gz);
    snprintf(p, sizeof p, "%s/%s-labels-idx1-ubyte%s", dir, split, gz ? ".gz" : "");
    write_idx(p, 0x801, ldims, 1, d->labels, (size_t)d->n, gz);
}

static void check_matches(const dt_dataset *ds, const idx_data *d) {
    assert_int_equal(ds->n, d->n);
    assert_int_equal(ds->c, 1);
    assert_int_equal(ds->h, d->rows);
    assert_int_equal(ds->w, d->cols);
    assert_int_equal(ds->num_classes, 10);
    size_t per = (size_t)d->rows * d->cols;
    assert_memory_equal(ds->pixels, d->pixels, per * d->n);
    float *x = malloc(sizeof(float) * per);
    double *ref = malloc(sizeof(double) * per);
    for (int i = 0; i < d->n; i++) {
        int32_t label = -1;
        dt_error err = {0, ""};
        assert_int_equal(dt_dataset_get(ds, i, 0, x, &label, &err), 0);
        assert_int_equal(label, d->labels[i]);
        for (size_t k = 0; k < per; k++) {
            ref[k] = (d->pixels[i * per + k] / 255.0 - (double)DT_FASHION_MNIST_MEAN) /
                     (double)DT_FASHION_MNIST_STD;
        }
        tu_assert_close("normalised idx pixels", x, ref, per, 1e-6, 1.0);
    }
    free(x);
    free(ref);
}

static void test_idx_reader_returns_the_pixels_and_labels_written_with_zlib(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    char dir[256];
    td_mkdtemp(dir, sizeof dir);
    for (int gz = 1; gz >= 0; gz--) {  // .gz files, then plain files (the fallback name)
        idx_data tr = random_idx(&r), te = random_idx(&r);
        write_split(dir, "train", &tr, gz);
        write_split(dir, "t10k", &te, gz);
        dt_error err = {0, ""};
        dt_dataset *a = dt_dataset_load_idx(dir, "train", &err);
        if (!a) fail_msg("load failed: %s", err.msg);
        check_matches(a, &tr);
        dt_dataset *b = dt_dataset_load_idx(dir, "t10k", &err);
        if (!b) fail_msg("load failed: %s", err.msg);
        check_matches(b, &te);
        dt_dataset_free(a);
        dt_dataset_free(b);
        td_rmtree(dir);
        td_mkdir(dir);
        free(tr.pixels);
        free(tr.labels);
        free(te.pixels);
        free(te.labels);
    }
    td_rmtree(dir);
}

// Writes a good split, lets `damage` spoil it, and expects code 2 naming `file` with `phrase`.
typedef void (*damage_fn)(const char *dir, const idx_data *d, tu_rng *r);

static void expect_failure(tu_rng *r, damage_fn damage, const char *file, const char *phrase) {
    char dir[256];
    td_mkdtemp(dir, sizeof dir);
    idx_data d = random_idx(r);
    if (d.n * d.rows * d.cols < 2000) {  // room for mid-stream damage: make it bigger
        free(d.pixels);
        d.rows = d.cols = 28;
        d.pixels = malloc((size_t)d.n * 28 * 28);
        for (size_t i = 0; i < (size_t)d.n * 28 * 28; i++) d.pixels[i] = (uint8_t)tu_int(r, 0, 255);
    }
    write_split(dir, "train", &d, 1);
    damage(dir, &d, r);
    dt_error err = {0, ""};
    dt_dataset *ds = dt_dataset_load_idx(dir, "train", &err);
    assert_null(ds);
    td_assert_error(err, file, phrase);
    td_rmtree(dir);
    free(d.pixels);
    free(d.labels);
}

static void path_of(char *p, size_t cap, const char *dir, const char *kind) {
    snprintf(p, cap, "%s/train-%s-ubyte.gz", dir, kind);
}

static void wrong_image_magic(const char *dir, const idx_data *d, tu_rng *r) {
    (void)r;
    char p[512];
    path_of(p, sizeof p, dir, "images-idx3");
    uint32_t dims[3] = {(uint32_t)d->n, (uint32_t)d->rows, (uint32_t)d->cols};
    write_idx(p, 0x801, dims, 3, d->pixels, (size_t)d->n * d->rows * d->cols, 1);
}
static void wrong_label_magic(const char *dir, const idx_data *d, tu_rng *r) {
    (void)r;
    char p[512];
    path_of(p, sizeof p, dir, "labels-idx1");
    uint32_t dims[1] = {(uint32_t)d->n};
    write_idx(p, 0x803, dims, 1, d->labels, (size_t)d->n, 1);
}
static void truncated_gz(const char *dir, const idx_data *d, tu_rng *r) {
    (void)d;
    char p[512];
    path_of(p, sizeof p, dir, "images-idx3");
    size_t n;
    unsigned char *b = td_read(p, &n);
    td_write(p, b, (size_t)tu_int(r, 30, (int)n - 9));  // cut somewhere in the deflate data
    free(b);
}
static void corrupted_gz(const char *dir, const idx_data *d, tu_rng *r) {
    (void)d;
    char p[512];
    path_of(p, sizeof p, dir, "images-idx3");
    size_t n;
    unsigned char *b = td_read(p, &n);
    // garble the second half of the deflate data: near its start, damage can decode into
    // other idx dimensions, which the reader rightly refuses with that message instead
    for (int k = 0; k < 8; k++) b[tu_int(r, (int)n / 2, (int)n - 9)] ^= 0x5a;
    td_write(p, b, n);
    free(b);
}
static void bad_crc(const char *dir, const idx_data *d, tu_rng *r) {
    (void)d;
    (void)r;
    char p[512];
    path_of(p, sizeof p, dir, "labels-idx1");
    size_t n;
    unsigned char *b = td_read(p, &n);
    b[n - 8] ^= 0xff;  // the gzip trailer's CRC-32
    td_write(p, b, n);
    free(b);
}
static void short_header(const char *dir, const idx_data *d, tu_rng *r) {
    (void)d;
    (void)r;
    char p[512];
    path_of(p, sizeof p, dir, "images-idx3");
    gzFile f = gzopen(p, "wb");
    gzwrite(f, "\0\0\x08\x03\0\0", 6);
    gzclose(f);
}
static void zero_rows(const char *dir, const idx_data *d, tu_rng *r) {
    (void)r;
    char p[512];
    path_of(p, sizeof p, dir, "images-idx3");
    uint32_t dims[3] = {(uint32_t)d->n, 0, (uint32_t)d->cols};
    write_idx(p, 0x803, dims, 3, NULL, 0, 1);
}
static void count_mismatch(const char *dir, const idx_data *d, tu_rng *r) {
    (void)r;
    char p[512];
    path_of(p, sizeof p, dir, "labels-idx1");
    uint32_t dims[1] = {(uint32_t)d->n + 1};
    uint8_t *lab = calloc((size_t)d->n + 1, 1);
    write_idx(p, 0x801, dims, 1, lab, (size_t)d->n + 1, 1);
    free(lab);
}
static void label_ten(const char *dir, const idx_data *d, tu_rng *r) {
    char p[512];
    path_of(p, sizeof p, dir, "labels-idx1");
    uint32_t dims[1] = {(uint32_t)d->n};
    uint8_t *lab = malloc((size_t)d->n);
    memcpy(lab, d->labels, (size_t)d->n);
    lab[tu_int(r, 0, d->n - 1)] = (uint8_t)tu_int(r, 10, 255);
    write_idx(p, 0x801, dims, 1, lab, (size_t)d->n, 1);
    free(lab);
}
static void trailing_bytes(const char *dir, const idx_data *d, tu_rng *r) {
    (void)r;
    char p[512];
    path_of(p, sizeof p, dir, "labels-idx1");
    uint32_t dims[1] = {(uint32_t)d->n};
    uint8_t *lab = calloc((size_t)d->n + 3, 1);
    write_idx(p, 0x801, dims, 1, lab, (size_t)d->n + 3, 1);  // header says n, file has n+3
    free(lab);
}
static void missing_labels(const char *dir, const idx_data *d, tu_rng *r) {
    (void)d;
    (void)r;
    char p[512];
    path_of(p, sizeof p, dir, "labels-idx1");
    remove(p);
}

static void test_idx_reader_rejects_damaged_files_with_code_2_naming_the_file(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    expect_failure(&r, wrong_image_magic, "train-images-idx3-ubyte.gz", "bad magic 0x00000801");
    expect_failure(&r, wrong_label_magic, "train-labels-idx1-ubyte.gz", "bad magic 0x00000803");
    expect_failure(&r, truncated_gz, "train-images-idx3-ubyte.gz", "truncated");
    expect_failure(&r, corrupted_gz, "train-images-idx3-ubyte.gz", "gzip");
    expect_failure(&r, bad_crc, "train-labels-idx1-ubyte.gz", "incorrect data check");
    expect_failure(&r, short_header, "train-images-idx3-ubyte.gz", "truncated");
    expect_failure(&r, zero_rows, "train-images-idx3-ubyte.gz", "dimension 1 is 0");
    expect_failure(&r, count_mismatch, "train-labels-idx1-ubyte.gz", "equal counts");
    expect_failure(&r, label_ten, "train-labels-idx1-ubyte.gz", "expected 0..9");
    expect_failure(&r, trailing_bytes, "train-labels-idx1-ubyte.gz", "unexpected bytes");
    expect_failure(&r, missing_labels, "train-labels-idx1-ubyte.gz", "cannot open");
    dt_error err = {0, ""};
    assert_null(dt_dataset_load_idx("/nonexistent", "validation", &err));
    td_assert_error(err, "validation", "\"t10k\"");
}

// Fashion-MNIST (Xiao, Rasul, Vollgraf 2017): 60000 training and 10000 test images, 28x28,
// 6000 and 1000 per class.
static void test_fashion_mnist_loads_60000_and_10000_balanced_28x28_images(void **state) {
    (void)state;
    char probe[512];
    snprintf(probe, sizeof probe, "%s/train-images-idx3-ubyte.gz", DT_FASHION_MNIST_DIR);
    if (access(probe, R_OK) != 0) {
        printf("# SKIPPED: %s not present (apt-get install dataset-fashion-mnist)\n", probe);
        skip();
    }
    const char *splits[2] = {"train", "t10k"};
    const int64_t counts[2] = {60000, 10000};
    for (int s = 0; s < 2; s++) {
        dt_error err = {0, ""};
        dt_dataset *ds = dt_dataset_load_idx(NULL, splits[s], &err);
        if (!ds) fail_msg("%s", err.msg);
        assert_int_equal(ds->n, counts[s]);
        assert_int_equal(ds->h, 28);
        assert_int_equal(ds->w, 28);
        int64_t per_class[10] = {0};
        for (int64_t i = 0; i < ds->n; i++) per_class[ds->labels[i]]++;
        for (int k = 0; k < 10; k++) assert_int_equal(per_class[k], counts[s] / 10);
        if (s == 0) {  // the constants of data.h are the training set's statistics
            double mean, std;
            assert_int_equal(dt_dataset_pixel_stats(ds, &mean, &std, &err), 0);
            printf("# train pixel mean %.5f std %.5f\n", mean, std);
            assert_true(fabs(mean - DT_FASHION_MNIST_MEAN) < 1e-4);
            assert_true(fabs(std - DT_FASHION_MNIST_STD) < 1e-4);
        }
        dt_dataset_free(ds);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idx_reader_returns_the_pixels_and_labels_written_with_zlib),
        cmocka_unit_test(test_idx_reader_rejects_damaged_files_with_code_2_naming_the_file),
        cmocka_unit_test(test_fashion_mnist_loads_60000_and_10000_balanced_28x28_images),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
