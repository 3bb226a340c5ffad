// test_data_folder.c — the ImageNet-style folder dataset (real/data_folder.c) on a tree this
// test writes: classes are the sorted subdirectory names whatever the creation order,
// hidden entries and non-images are ignored, files are in name order; evaluation gives the
// centre crop and training a crop window and flip that are some valid window of the
// float64 reference, fixed by (seed, epoch, index) and varying across epochs; a corrupt
// image is an error with code 2 naming the file; bad roots and options are rejected.
#include "test_data_util.h"

#define NCLASS 3
static const char *const class_created[NCLASS] = {"n03_zebra", "n01_apple", "n02_mango"};
static const char *const class_sorted[NCLASS] = {"n01_apple", "n02_mango", "n03_zebra"};

typedef struct {
    char root[256];
    int n;
    int h[16], w[16], label[16];
    uint8_t *rgb[16];
} tree;

// 2..4 PNG images per class (random sizes, named so that name order differs from creation
// order), plus a hidden directory, a README and a hidden file, which must be ignored.
static void make_tree(tree *t, tu_rng *r) {
    td_mkdtemp(t->root, sizeof t->root);
    char p[512];
    snprintf(p, sizeof p, "%s/.cache", t->root);
    td_mkdir(p);
    t->n = 0;
    for (int k = 0; k < NCLASS; k++) {
        snprintf(p, sizeof p, "%s/%s", t->root, class_created[k]);
        td_mkdir(p);
    }
    for (int c = 0; c < NCLASS; c++) {
        int m = tu_int(r, 2, 4);
        snprintf(p, sizeof p, "%s/%s/README.txt", t->root, class_sorted[c]);
        td_write(p, "not an image", 12);
        snprintf(p, sizeof p, "%s/%s/.hidden.png", t->root, class_sorted[c]);
        td_write(p, "x", 1);
        for (int i = m - 1; i >= 0; i--) {  // written in reverse name order
            int j = t->n + i;
            t->h[j] = tu_int(r, 20, 70);
            t->w[j] = tu_int(r, 20, 70);
            t->label[j] = c;
            t->rgb[j] = malloc((size_t)t->h[j] * t->w[j] * 3);
            for (size_t q = 0; q < (size_t)t->h[j] * t->w[j] * 3; q++) t->rgb[j][q] = (uint8_t)tu_int(r, 0, 255);
            snprintf(p, sizeof p, "%s/%s/img_%d.%s", t->root, class_sorted[c], i, i % 2 ? "PNG" : "png");
            td_write_png_rgb8(p, t->rgb[j], t->h[j], t->w[j]);
        }
        t->n += m;
    }
}
static void free_tree(tree *t) {
    for (int i = 0; i < t->n; i++) free(t->rgb[i]);
    td_rmtree(t->root);
}

// float64 reference of resize + crop at (oy,ox) + flip + normalise (dense weights)
static double tri(double t) {
    t = fabs(t);
    return t < 1.0 ? 1.0 - t : 0.0;
}
static double resized_at(const uint8_t *rgb, int h, int w, int rh, int rw, int y, int x, int c) {
    double sy = (double)h / rh, sx = (double)w / rw, fy = sy > 1 ? sy : 1, fx = sx > 1 ? sx : 1;
    double v = 0, wsy = 0, wsx = 0;
    for (int i = 0; i < h; i++) wsy += tri((i + 0.5 - (y + 0.5) * sy) / fy);
    for (int j = 0; j < w; j++) wsx += tri((j + 0.5 - (x + 0.5) * sx) / fx);
    for (int i = 0; i < h; i++) {
        double a = tri((i + 0.5 - (y + 0.5) * sy) / fy);
        if (a == 0) continue;
        for (int j = 0; j < w; j++) v += a * tri((j + 0.5 - (x + 0.5) * sx) / fx) * rgb[((size_t)i * w + j) * 3 + c];
    }
    return v / (wsy * wsx);
}
static void reference(const uint8_t *rgb, int h, int w, int resize, int crop, int oy, int ox,
                      int flip, const float *mean, const float *std, double *out) {
    int rh = h <= w ? resize : (int)((int64_t)resize * h / w);
    int rw = h <= w ? (int)((int64_t)resize * w / h) : resize;
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < crop; y++)
            for (int x = 0; x < crop; x++) {
                double v = resized_at(rgb, h, w, rh, rw, oy + y, ox + (flip ? crop - 1 - x : x), c);
                out[((size_t)c * crop + y) * crop + x] = (v / 255.0 - mean[c]) / std[c];
            }
}

static void test_folder_lists_sorted_classes_and_files_and_ignores_the_rest(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    tree t;
    make_tree(&t, &r);
    dt_error err = {0, ""};
    dt_folder_opts o = {.resize = 24, .crop = 16};
    dt_dataset *ds = dt_dataset_folder(t.root, &o, &err);
    if (!ds) fail_msg("%s", err.msg);
    assert_int_equal(ds->n, t.n);
    assert_int_equal(ds->num_classes, NCLASS);
    assert_true(ds->c == 3 && ds->h == 16 && ds->w == 16 && ds->train == 0);
    const float imean[3] = DT_IMAGENET_MEAN, istd[3] = DT_IMAGENET_STD;
    assert_memory_equal(ds->mean, imean, sizeof imean);
    assert_memory_equal(ds->std, istd, sizeof istd);
    for (int i = 0; i < t.n; i++) assert_int_equal(ds->labels[i], t.label[i]);
    dt_dataset_free(ds);
    free_tree(&t);
}

static void test_folder_eval_gives_the_centre_crop_of_the_float64_reference(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    tree t;
    make_tree(&t, &r);
    dt_error err = {0, ""};
    int resize = tu_int(&r, 12, 40);
    dt_folder_opts o = {.resize = resize, .crop = tu_int(&r, 4, resize), .train = 0,
                        .mean = {0.5f, 0.4f, 0.3f}, .std = {0.2f, 0.25f, 0.3f}};
    dt_dataset *ds = dt_dataset_folder(t.root, &o, &err);
    if (!ds) fail_msg("%s", err.msg);
    size_t no = (size_t)3 * o.crop * o.crop;
    float *x = malloc(sizeof(float) * no);
    double *ref = malloc(sizeof(double) * no);
    for (int i = 0; i < t.n; i++) {
        int32_t label;
        assert_int_equal(dt_dataset_get(ds, i, dt_aug_seed(7, 0, i), x, &label, &err), 0);
        assert_int_equal(label, t.label[i]);
        int rh, rw;
        dt_image_resized_size(t.h[i], t.w[i], resize, &rh, &rw);
        reference(t.rgb[i], t.h[i], t.w[i], resize, o.crop, (rh - o.crop) / 2, (rw - o.crop) / 2,
                  0, o.mean, o.std, ref);
        tu_assert_close("centre crop", x, ref, no, 2e-5, 1.0);
    }
    free(x);
    free(ref);
    dt_dataset_free(ds);
    free_tree(&t);
}

// Training: for each example and epoch the output must equal the reference at SOME window
// (oy, ox) and flip — searched exhaustively, so the test does not re-derive the draw — and
// the same (seed, epoch, index) must give the same output; over 24 epochs both flips and
// several windows must occur.
static void test_folder_train_crop_and_flip_are_a_valid_window_fixed_by_seed_epoch_index(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    tree t;
    make_tree(&t, &r);
    dt_error err = {0, ""};
    dt_folder_opts o = {.resize = 14, .crop = 10, .train = 1};
    dt_dataset *ds = dt_dataset_folder(t.root, &o, &err);
    if (!ds) fail_msg("%s", err.msg);
    size_t no = (size_t)3 * o.crop * o.crop;
    float *x = malloc(sizeof(float) * no), *x2 = malloc(sizeof(float) * no);
    double *ref = malloc(sizeof(double) * no);
    uint64_t seed = r.s;
    for (int i = 0; i < 2; i++) {  // two examples, 24 epochs each
        int rh, rw, flips[2] = {0, 0}, windows = 0, last_oy = -1, last_ox = -1;
        dt_image_resized_size(t.h[i], t.w[i], o.resize, &rh, &rw);
        for (int e = 0; e < 24; e++) {
            uint64_t a = dt_aug_seed(seed, e, i);
            assert_int_equal(dt_dataset_get(ds, i, a, x, NULL, &err), 0);
            assert_int_equal(dt_dataset_get(ds, i, a, x2, NULL, &err), 0);
            assert_memory_equal(x, x2, sizeof(float) * no);
            int found = 0;
            for (int oy = 0; oy <= rh - o.crop && !found; oy++)
                for (int ox = 0; ox <= rw - o.crop && !found; ox++)
                    for (int f = 0; f < 2 && !found; f++) {
                        reference(t.rgb[i], t.h[i], t.w[i], o.resize, o.crop, oy, ox, f, ds->mean,
                                  ds->std, ref);
                        if (tu_max_rel_err(x, ref, no, 1.0) < 2e-5) {
                            found = 1;
                            flips[f]++;
                            if (oy != last_oy || ox != last_ox) windows++;
                            last_oy = oy;
                            last_ox = ox;
                        }
                    }
            if (!found) fail_msg("example %d epoch %d: output is no crop/flip of the reference", i, e);
        }
        printf("# example %d (%dx%d resized to %dx%d): flips %d/%d, window changes %d\n", i,
               t.h[i], t.w[i], rh, rw, flips[1], flips[0] + flips[1], windows);
        assert_true(flips[0] > 0 && flips[1] > 0);  // each misses with probability 2^-24
        assert_true(windows > 1);
    }
    free(x);
    free(x2);
    free(ref);
    dt_dataset_free(ds);
    free_tree(&t);
}

#if DT_HAVE_TURBOJPEG
static void test_folder_reads_jpeg_as_its_decoded_pixels_transformed(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    char root[256], p[512];
    td_mkdtemp(root, sizeof root);
    snprintf(p, sizeof p, "%s/only", root);
    td_mkdir(p);
    int h = tu_int(&r, 20, 60), w = tu_int(&r, 20, 60);
    uint8_t *src = td_smooth_rgb(&r, h, w), *dec;
    snprintf(p, sizeof p, "%s/only/a.JPEG", root);
    td_write_jpeg(p, src, h, w, TJPF_RGB, TJSAMP_420, 90);
    int dh, dw;
    dt_error err = {0, ""};
    assert_int_equal(dt_image_decode(p, &dec, &dh, &dw, &err), 0);
    dt_folder_opts o = {.resize = 16, .crop = 12};
    dt_dataset *ds = dt_dataset_folder(root, &o, &err);
    if (!ds) fail_msg("%s", err.msg);
    assert_int_equal(ds->n, 1);
    float x[3 * 12 * 12];
    double ref[3 * 12 * 12];
    assert_int_equal(dt_dataset_get(ds, 0, 0, x, NULL, &err), 0);
    int rh, rw;
    dt_image_resized_size(h, w, 16, &rh, &rw);
    reference(dec, h, w, 16, 12, (rh - 12) / 2, (rw - 12) / 2, 0, ds->mean, ds->std, ref);
    tu_assert_close("jpeg through the folder", x, ref, 3 * 12 * 12, 2e-5, 1.0);
    free(src);
    free(dec);
    dt_dataset_free(ds);
    td_rmtree(root);
}
#endif

static void test_folder_corrupt_image_is_code_2_naming_the_file(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    tree t;
    make_tree(&t, &r);
    char bad[512];  // sorts last in the last class
    snprintf(bad, sizeof bad, "%s/%s/zz_broken.png", t.root, class_sorted[NCLASS - 1]);
    size_t n;
    char good[512];
    snprintf(good, sizeof good, "%s/%s/img_0.png", t.root, class_sorted[0]);
    unsigned char *b = td_read(good, &n);
    td_write(bad, b, n / 3);  // a truncated PNG
    free(b);
    char text[512];  // sorts after it: index t.n + 1
    snprintf(text, sizeof text, "%s/%s/zz_text.png", t.root, class_sorted[NCLASS - 1]);
    td_write(text, "plain text", 10);
    dt_error err = {0, ""};
    dt_folder_opts o = {.resize = 20, .crop = 16, .train = 1};
    dt_dataset *ds = dt_dataset_folder(t.root, &o, &err);
    if (!ds) fail_msg("%s", err.msg);
    assert_int_equal(ds->n, t.n + 2);
    float *x = malloc(sizeof(float) * 3 * 16 * 16);
    assert_int_equal(dt_dataset_get(ds, 0, 1, x, NULL, &err), 0);
    assert_int_equal(dt_dataset_get(ds, t.n, 1, x, NULL, &err), -1);
    td_assert_error(err, "zz_broken.png", "corrupt PNG");
    err.code = 0;
    assert_int_equal(dt_dataset_get(ds, t.n + 2, 1, x, NULL, &err), -1);  // past the end
    td_assert_error(err, "folder:", "out of range");
    // a batch holding both bad files reports the first in batch order, whatever the threads
    int64_t idx[4] = {0, t.n + 1, t.n, 1};
    float *xb = malloc(sizeof(float) * 4 * 3 * 16 * 16);
    int32_t lab[4];
    for (int threads = 1; threads <= 3; threads++) {
        err.code = 0;
        assert_int_equal(dt_dataset_fill(ds, idx, 4, 5, 0, threads, xb, lab, &err), -1);
        td_assert_error(err, "zz_text.png", "not a PNG or JPEG");
    }
    free(x);
    free(xb);
    dt_dataset_free(ds);
    free_tree(&t);
}

static void test_folder_rejects_missing_root_empty_class_and_bad_sizes(void **state) {
    (void)state;
    char root[256], p[512];
    td_mkdtemp(root, sizeof root);
    dt_error err = {0, ""};
    assert_null(dt_dataset_folder(root, NULL, &err));  // no class directories
    td_assert_error(err, root, "no class subdirectories");
    snprintf(p, sizeof p, "%s/empty_class", root);
    td_mkdir(p);
    snprintf(p, sizeof p, "%s/empty_class/notes.txt", root);
    td_write(p, "x", 1);
    err.code = 0;
    assert_null(dt_dataset_folder(root, NULL, &err));
    td_assert_error(err, "empty_class", "no .png/.jpg/.jpeg");
    snprintf(p, sizeof p, "%s/does_not_exist", root);
    err.code = 0;
    assert_null(dt_dataset_folder(p, NULL, &err));
    td_assert_error(err, "does_not_exist", "cannot open");
    dt_folder_opts o = {.resize = 100, .crop = 224};
    err.code = 0;
    assert_null(dt_dataset_folder(root, &o, &err));
    td_assert_error(err, root, "crop <= resize");
    dt_folder_opts o2 = {.mean = {0.5f, 0.5f, 0.5f}};  // std left 0
    err.code = 0;
    assert_null(dt_dataset_folder(root, &o2, &err));
    td_assert_error(err, root, "std[0]");
    td_rmtree(root);
}

int main(void) {
    if (!DT_HAVE_PNG) {
        printf("# SKIPPED: the folder tests write PNG files (built without libpng)\n");
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_folder_lists_sorted_classes_and_files_and_ignores_the_rest),
        cmocka_unit_test(test_folder_eval_gives_the_centre_crop_of_the_float64_reference),
        cmocka_unit_test(test_folder_train_crop_and_flip_are_a_valid_window_fixed_by_seed_epoch_index),
#if DT_HAVE_TURBOJPEG
        cmocka_unit_test(test_folder_reads_jpeg_as_its_decoded_pixels_transformed),
#endif
        cmocka_unit_test(test_folder_corrupt_image_is_code_2_naming_the_file),
        cmocka_unit_test(test_folder_rejects_missing_root_empty_class_and_bad_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
