// test_data_image.c — decoding and the ImageNet transform (real/data_decode.c,
// real/data_transform.c). PNG files written by libpng in every colour type the reader
// converts (RGB, RGBA, grey, 2-bit grey, palette, grey+alpha, 16-bit, interlaced) decode to
// exactly the expected RGB8; JPEG files written by tjCompress2 decode to within JPEG's
// error; damaged files are errors naming the file; the resize/crop/flip/normalise matches a
// float64 reference that builds the whole resized image from dense filter weights.
#include "test_data_util.h"

static int decode_ok(const char *path, uint8_t **rgb, int h, int w) {
    dt_error err = {0, ""};
    int dh = 0, dw = 0;
    if (dt_image_decode(path, rgb, &dh, &dw, &err) != 0) fail_msg("decode: %s", err.msg);
    assert_int_equal(dh, h);
    assert_int_equal(dw, w);
    return 0;
}

#if DT_HAVE_PNG
static void test_png_decodes_rgb_rgba_grey_and_interlaced_8bit_exactly(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    char dir[256], path[512];
    td_mkdtemp(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/x.png", dir);
    for (int trial = 0; trial < 6; trial++) {
        int h = tu_int(&r, 1, 50), w = tu_int(&r, 1, 50);
        size_t np = (size_t)h * w;
        uint8_t *src = malloc(np * 4), *expect = malloc(np * 3), *got;
        for (size_t i = 0; i < np * 4; i++) src[i] = (uint8_t)tu_int(&r, 0, 255);
        // RGB8, plain and Adam7-interlaced
        for (int inter = 0; inter < 2; inter++) {
            td_write_png(path, w, h, 8, PNG_COLOR_TYPE_RGB, src, (size_t)w * 3, NULL, 0, inter);
            decode_ok(path, &got, h, w);
            assert_memory_equal(got, src, np * 3);
            free(got);
        }
        // RGBA8: alpha dropped
        td_write_png(path, w, h, 8, PNG_COLOR_TYPE_RGBA, src, (size_t)w * 4, NULL, 0, 0);
        for (size_t i = 0; i < np; i++) memcpy(expect + 3 * i, src + 4 * i, 3);
        decode_ok(path, &got, h, w);
        assert_memory_equal(got, expect, np * 3);
        free(got);
        // grey 8: r = g = b
        td_write_png(path, w, h, 8, PNG_COLOR_TYPE_GRAY, src, (size_t)w, NULL, 0, 0);
        for (size_t i = 0; i < np; i++) memset(expect + 3 * i, src[i], 3);
        decode_ok(path, &got, h, w);
        assert_memory_equal(got, expect, np * 3);
        free(got);
        // grey + alpha 8
        td_write_png(path, w, h, 8, PNG_COLOR_TYPE_GRAY_ALPHA, src, (size_t)w * 2, NULL, 0, 0);
        for (size_t i = 0; i < np; i++) memset(expect + 3 * i, src[2 * i], 3);
        decode_ok(path, &got, h, w);
        assert_memory_equal(got, expect, np * 3);
        free(got);
        free(src);
        free(expect);
    }
    td_rmtree(dir);
}

static void test_png_decodes_2bit_grey_palette_and_16bit_to_rgb8(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    char dir[256], path[512];
    td_mkdtemp(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/x.png", dir);
    for (int trial = 0; trial < 6; trial++) {
        int h = tu_int(&r, 1, 40), w = tu_int(&r, 1, 40);
        size_t np = (size_t)h * w;
        uint8_t *expect = malloc(np * 3), *got;
        // 2-bit grey: 4 pixels a byte, most significant first; level v is 85*v in 8 bits
        size_t rb = ((size_t)w * 2 + 7) / 8;
        uint8_t *packed = calloc((size_t)h * rb, 1);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                int v = tu_int(&r, 0, 3);
                packed[y * rb + x / 4] |= (uint8_t)(v << (6 - 2 * (x % 4)));
                memset(expect + 3 * ((size_t)y * w + x), 85 * v, 3);
            }
        td_write_png(path, w, h, 2, PNG_COLOR_TYPE_GRAY, packed, rb, NULL, 0, 0);
        decode_ok(path, &got, h, w);
        assert_memory_equal(got, expect, np * 3);
        free(got);
        free(packed);
        // palette, 8-bit indices
        int npal = tu_int(&r, 1, 256);
        png_color pal[256];
        for (int k = 0; k < npal; k++) {
            pal[k].red = (png_byte)tu_int(&r, 0, 255);
            pal[k].green = (png_byte)tu_int(&r, 0, 255);
            pal[k].blue = (png_byte)tu_int(&r, 0, 255);
        }
        uint8_t *ind = malloc(np);
        for (size_t i = 0; i < np; i++) {
            ind[i] = (uint8_t)tu_int(&r, 0, npal - 1);
            expect[3 * i] = pal[ind[i]].red;
            expect[3 * i + 1] = pal[ind[i]].green;
            expect[3 * i + 2] = pal[ind[i]].blue;
        }
        td_write_png(path, w, h, 8, PNG_COLOR_TYPE_PALETTE, ind, (size_t)w, pal, npal, 0);
        decode_ok(path, &got, h, w);
        assert_memory_equal(got, expect, np * 3);
        free(got);
        free(ind);
        // RGB 16-bit, big-endian samples: 8-bit value is round(v * 255 / 65535)
        uint8_t *s16 = malloc(np * 6);
        for (size_t i = 0; i < np * 3; i++) {
            int v = tu_int(&r, 0, 65535);
            s16[2 * i] = (uint8_t)(v >> 8);
            s16[2 * i + 1] = (uint8_t)v;
            expect[i] = (uint8_t)floor(v * 255.0 / 65535.0 + 0.5);
        }
        td_write_png(path, w, h, 16, PNG_COLOR_TYPE_RGB, s16, (size_t)w * 6, NULL, 0, 0);
        decode_ok(path, &got, h, w);
        assert_memory_equal(got, expect, np * 3);
        free(got);
        free(s16);
        free(expect);
    }
    td_rmtree(dir);
}
#endif

#if DT_HAVE_TURBOJPEG
// JPEG is lossy: at quality 95 without chroma subsampling a smooth image comes back within
// a few levels (measured: mean ~1.7, max 7-11 levels; 4:2:0 max 10-15).
static void test_jpeg_decodes_rgb_and_grey_within_jpeg_tolerance(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    char dir[256], path[512];
    td_mkdtemp(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/x.jpg", dir);
    const int subsamp[2] = {TJSAMP_444, TJSAMP_420};
    const double max_tol[2] = {12, 24}, mean_tol[2] = {2.0, 3.0};
    for (int trial = 0; trial < 6; trial++) {
        int h = tu_int(&r, 8, 80), w = tu_int(&r, 8, 80), s = trial % 2;
        size_t np = (size_t)h * w;
        uint8_t *src = td_smooth_rgb(&r, h, w), *got;
        td_write_jpeg(path, src, h, w, TJPF_RGB, subsamp[s], 95);
        decode_ok(path, &got, h, w);
        double worst = 0, sum = 0;
        for (size_t i = 0; i < np * 3; i++) {
            double d = fabs((double)got[i] - src[i]);
            sum += d;
            if (d > worst) worst = d;
        }
        printf("# jpeg %dx%d %s: mean |err| %.2f, max %.0f levels\n", h, w, s ? "4:2:0" : "4:4:4",
               sum / (np * 3), worst);
        assert_true(worst <= max_tol[s] && sum / (np * 3) <= mean_tol[s]);
        free(got);
        // greyscale JPEG: the red channel as grey; r = g = b on decoding
        uint8_t *grey = malloc(np);
        for (size_t i = 0; i < np; i++) grey[i] = src[3 * i];
        td_write_jpeg(path, grey, h, w, TJPF_GRAY, TJSAMP_GRAY, 95);
        decode_ok(path, &got, h, w);
        worst = 0;
        for (size_t i = 0; i < np; i++) {
            assert_int_equal(got[3 * i], got[3 * i + 1]);
            assert_int_equal(got[3 * i], got[3 * i + 2]);
            double d = fabs((double)got[3 * i] - grey[i]);
            if (d > worst) worst = d;
        }
        assert_true(worst <= max_tol[0]);
        free(got);
        free(grey);
        free(src);
    }
    td_rmtree(dir);
}
#endif

static void expect_decode_error(const char *path, const char *phrase) {
    uint8_t *rgb = (uint8_t *)1;
    int h, w;
    dt_error err = {0, ""};
    assert_int_equal(dt_image_decode(path, &rgb, &h, &w, &err), -1);
    assert_null(rgb);
    td_assert_error(err, path, phrase);
}

static void test_damaged_and_unknown_image_files_fail_with_code_2_naming_the_file(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    char dir[256], path[512];
    td_mkdtemp(dir, sizeof dir);
    int h = tu_int(&r, 16, 60), w = tu_int(&r, 16, 60);
    uint8_t *src = td_smooth_rgb(&r, h, w);
    size_t n;
    unsigned char *b;
#if DT_HAVE_PNG
    snprintf(path, sizeof path, "%s/cut.png", dir);
    td_write_png_rgb8(path, src, h, w);
    b = td_read(path, &n);
    td_write(path, b, n / 2);
    expect_decode_error(path, "corrupt PNG");
    snprintf(path, sizeof path, "%s/flipped.png", dir);
    unsigned char *idat = NULL;
    for (size_t i = 8; i + 4 < n; i++)
        if (memcmp(b + i, "IDAT", 4) == 0) idat = b + i;
    assert_non_null(idat);
    uint32_t idat_len = (uint32_t)idat[-4] << 24 | (uint32_t)idat[-3] << 16 |
                        (uint32_t)idat[-2] << 8 | idat[-1];
    assert_true(idat_len > 24);
    // One bit of the deflate data flipped, at each of the first 21 bytes (zlib header, block
    // header, data). Which check trips first depends on the bit: zlib ("IDAT: invalid ..."),
    // the row filter ("bad adaptive filter value") or the chunk's CRC ("IDAT: CRC error");
    // every one must fail the decode, naming the file.
    int bit = tu_int(&r, 0, 7);
    for (int k = 0; k <= 20; k++) {
        idat[4 + k] ^= (unsigned char)(1u << bit);
        td_write(path, b, n);
        expect_decode_error(path, "corrupt PNG: ");
        idat[4 + k] ^= (unsigned char)(1u << bit);
    }
    free(b);
#endif
#if DT_HAVE_TURBOJPEG
    snprintf(path, sizeof path, "%s/cut.jpg", dir);
    td_write_jpeg(path, src, h, w, TJPF_RGB, TJSAMP_420, 90);
    b = td_read(path, &n);
    size_t sos = 0;  // the start-of-scan marker: cutting after it leaves the headers whole
    for (size_t i = 2; i + 1 < n && !sos; i++)
        if (b[i] == 0xFF && b[i + 1] == 0xDA) sos = i;
    assert_true(sos > 0 && sos + 40 < n);
    td_write(path, b, (size_t)tu_int(&r, (int)sos + 20, (int)n - 20));
    expect_decode_error(path, "Premature end");
    snprintf(path, sizeof path, "%s/cut_header.jpg", dir);
    td_write(path, b, (size_t)tu_int(&r, 4, (int)sos - 1));
    expect_decode_error(path, "corrupt JPEG");
    // A decompression bomb: the frame header claims W x H with W*H/512 bytes of scan data
    // more than the file holds (libjpeg would decode the missing scans as zeros, with a
    // warning). Any Huffman-coded JPEG spends a bit per 8x8 block at least.
    size_t sof = 0;
    for (size_t i = 2; i + 9 < n && !sof; i++)
        if (b[i] == 0xFF && b[i + 1] == 0xC0) sof = i;
    assert_true(sof > 0);
    int bw = tu_int(&r, 8000, 16000), bh = tu_int(&r, 8000, 16000);  // 1-4 M blocks
    uint8_t *bomb = malloc(n);
    memcpy(bomb, b, n);
    bomb[sof + 5] = (uint8_t)(bh >> 8), bomb[sof + 6] = (uint8_t)bh;
    bomb[sof + 7] = (uint8_t)(bw >> 8), bomb[sof + 8] = (uint8_t)bw;
    snprintf(path, sizeof path, "%s/bomb.jpg", dir);
    td_write(path, bomb, n);
    expect_decode_error(path, "(a bit per 8x8 block)");
    bomb[sof + 1] = 0xC9;  // the same frame, arithmetic-coded (extended sequential)
    td_write(path, bomb, n);
    expect_decode_error(path, "(1/8 bit, arithmetic-coded per 8x8 block)");
    free(bomb);
    // ... while the most compressible real file, one flat colour at quality 1, still decodes
    int fh = 1024, fw = tu_int(&r, 1000, 1100);
    uint8_t *flat = malloc((size_t)fh * fw * 3), *got = NULL;
    memset(flat, tu_int(&r, 0, 255), (size_t)fh * fw * 3);
    snprintf(path, sizeof path, "%s/flat.jpg", dir);
    td_write_jpeg(path, flat, fh, fw, TJPF_RGB, TJSAMP_420, 1);
    int gh = 0, gw = 0;
    dt_error ferr = {0, ""};
    assert_int_equal(dt_image_decode(path, &got, &gh, &gw, &ferr), 0);
    assert_true(gh == fh && gw == fw);
    free(got);
    free(flat);
    for (size_t i = 3; i < n; i++) b[i] = (unsigned char)tu_int(&r, 0, 255);  // SOI, then noise
    snprintf(path, sizeof path, "%s/noise.jpeg", dir);
    td_write(path, b, n);
    expect_decode_error(path, "corrupt JPEG");
    free(b);
#endif
    snprintf(path, sizeof path, "%s/text.png", dir);
    td_write(path, "hello, not an image\n", 20);
    expect_decode_error(path, "not a PNG or JPEG");
    snprintf(path, sizeof path, "%s/empty.jpg", dir);
    td_write(path, "", 0);
    expect_decode_error(path, "not a PNG or JPEG");
    snprintf(path, sizeof path, "%s/missing.jpg", dir);
    expect_decode_error(path, "cannot open");
    free(src);
    td_rmtree(dir);
}

// ---- the transform against a float64 reference ----

static double tri(double t) {
    t = fabs(t);
    return t < 1.0 ? 1.0 - t : 0.0;
}
// (out, in) dense weights of PIL's antialiased bilinear resize, each row normalised
static double *dense_weights(int in, int out) {
    double *m = calloc((size_t)in * out, sizeof(double));
    double s = (double)in / out, fs = s > 1.0 ? s : 1.0;
    for (int o = 0; o < out; o++) {
        double sum = 0.0;
        for (int k = 0; k < in; k++) sum += m[(size_t)o * in + k] = tri((k + 0.5 - (o + 0.5) * s) / fs);
        for (int k = 0; k < in; k++) m[(size_t)o * in + k] /= sum;
    }
    return m;
}
// The whole resized image in float64, then crop, flip and normalise: out (3,crop,crop)
static void reference_transform(const uint8_t *rgb, int h, int w, int rh, int rw, int crop,
                                int oy, int ox, int flip, const float *mean, const float *std,
                                double *out) {
    double *wy = dense_weights(h, rh), *wx = dense_weights(w, rw);
    double *tmp = calloc((size_t)h * rw * 3, sizeof(double));  // (h, rw, 3)
    for (int i = 0; i < h; i++)
        for (int x = 0; x < rw; x++)
            for (int j = 0; j < w; j++)
                for (int c = 0; c < 3; c++)
                    tmp[((size_t)i * rw + x) * 3 + c] += wx[(size_t)x * w + j] * rgb[((size_t)i * w + j) * 3 + c];
    for (int y = 0; y < crop; y++)
        for (int x = 0; x < crop; x++)
            for (int c = 0; c < 3; c++) {
                double v = 0.0;
                for (int i = 0; i < h; i++) v += wy[(size_t)(oy + y) * h + i] * tmp[((size_t)i * rw + ox + x) * 3 + c];
                int xo = flip ? crop - 1 - x : x;
                out[((size_t)c * crop + y) * crop + xo] = (v / 255.0 - mean[c]) / std[c];
            }
    free(wy);
    free(wx);
    free(tmp);
}

static void test_resized_size_is_torchvisions_shorter_side_rule(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    int rh, rw;
    dt_image_resized_size(375, 500, 256, &rh, &rw);  // a typical ImageNet photo
    assert_true(rh == 256 && rw == 341);
    dt_image_resized_size(500, 375, 256, &rh, &rw);
    assert_true(rh == 341 && rw == 256);
    for (int t = 0; t < 1000; t++) {
        int h = tu_int(&r, 1, 4000), w = tu_int(&r, 1, 4000), s = tu_int(&r, 1, 512);
        dt_image_resized_size(h, w, s, &rh, &rw);
        int sh = h <= w ? s : (int)floor((double)s * h / w + 1e-9);
        int sw = h <= w ? (int)floor((double)s * w / h + 1e-9) : s;
        assert_int_equal(rh, sh < 1 ? 1 : sh);
        assert_int_equal(rw, sw < 1 ? 1 : sw);
    }
}

static void test_transform_matches_float64_reference_resize_crop_flip_normalise(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    const float mean[3] = DT_IMAGENET_MEAN, std[3] = DT_IMAGENET_STD;
    for (int trial = 0; trial < 40; trial++) {
        int h = tu_int(&r, 1, 90), w = tu_int(&r, 1, 90);
        int resize = tu_int(&r, 1, 70);  // shrinking and enlarging, both axes
        int crop = tu_int(&r, 1, resize);
        int rh, rw;
        dt_image_resized_size(h, w, resize, &rh, &rw);
        int oy = tu_int(&r, 0, rh - crop), ox = tu_int(&r, 0, rw - crop), flip = tu_int(&r, 0, 1);
        uint8_t *rgb = malloc((size_t)h * w * 3);
        for (size_t i = 0; i < (size_t)h * w * 3; i++) rgb[i] = (uint8_t)tu_int(&r, 0, 255);
        size_t no = (size_t)3 * crop * crop;
        float *got = malloc(sizeof(float) * no);
        double *ref = malloc(sizeof(double) * no);
        dt_image_transform(rgb, h, w, resize, crop, oy, ox, flip, mean, std, got);
        reference_transform(rgb, h, w, rh, rw, crop, oy, ox, flip, mean, std, ref);
        char what[160];
        snprintf(what, sizeof what, "%dx%d -> %dx%d, crop %d at (%d,%d)%s", h, w, rh, rw, crop, oy,
                 ox, flip ? " flipped" : "");
        tu_assert_close(what, got, ref, no, 2e-5, 1.0);
        free(rgb);
        free(got);
        free(ref);
    }
}

// Closed form: resizing to the same size is the identity (the triangle's taps fall on
// pixel centres), so the crop is the source window, normalised.
static void test_transform_at_scale_one_is_the_identity_crop(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    const float mean[3] = {0.0f, 0.0f, 0.0f}, std[3] = {1.0f, 1.0f, 1.0f};
    int h = tu_int(&r, 4, 50), w = tu_int(&r, h, 60), crop = tu_int(&r, 1, h);
    int oy = tu_int(&r, 0, h - crop), ox = tu_int(&r, 0, w - crop);
    uint8_t *rgb = malloc((size_t)h * w * 3);
    for (size_t i = 0; i < (size_t)h * w * 3; i++) rgb[i] = (uint8_t)tu_int(&r, 0, 255);
    float *got = malloc(sizeof(float) * 3 * crop * crop);
    double *ref = malloc(sizeof(double) * 3 * crop * crop);
    dt_image_transform(rgb, h, w, h, crop, oy, ox, 0, mean, std, got);
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < crop; y++)
            for (int x = 0; x < crop; x++)
                ref[((size_t)c * crop + y) * crop + x] = rgb[((size_t)(oy + y) * w + ox + x) * 3 + c] / 255.0;
    tu_assert_close("identity resize", got, ref, (size_t)3 * crop * crop, 1e-6, 1.0);
    free(rgb);
    free(got);
    free(ref);
}

int main(void) {
    const struct CMUnitTest tests[] = {
#if DT_HAVE_PNG
        cmocka_unit_test(test_png_decodes_rgb_rgba_grey_and_interlaced_8bit_exactly),
        cmocka_unit_test(test_png_decodes_2bit_grey_palette_and_16bit_to_rgb8),
#endif
#if DT_HAVE_TURBOJPEG
        cmocka_unit_test(test_jpeg_decodes_rgb_and_grey_within_jpeg_tolerance),
#endif
        cmocka_unit_test(test_damaged_and_unknown_image_files_fail_with_code_2_naming_the_file),
        cmocka_unit_test(test_resized_size_is_torchvisions_shorter_side_rule),
        cmocka_unit_test(test_transform_matches_float64_reference_resize_crop_flip_normalise),
        cmocka_unit_test(test_transform_at_scale_one_is_the_identity_crop),
    };
    if (!DT_HAVE_PNG) printf("# SKIPPED: PNG tests (built without libpng)\n");
    if (!DT_HAVE_TURBOJPEG) printf("# SKIPPED: JPEG tests (built without libturbojpeg)\n");
    return cmocka_run_group_tests(tests, NULL, NULL);
}
