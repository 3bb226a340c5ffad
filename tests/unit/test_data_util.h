// test_data_util.h — what the tests of real/ (test_data_*.c) share: a scratch directory,
// whole-file reads and writes, and image writers that go through the libraries themselves
// (libpng's writer, TurboJPEG's tjCompress2), so the readers are checked against files made
// independently of them. Header-only (static functions), because the unit-test glob builds
// one program per test_*.c.
#ifndef DT_TEST_DATA_UTIL_H
#define DT_TEST_DATA_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE  // nftw, mkdtemp: include this header first
#endif
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data.h"
#include "testutil.h"

#if DT_HAVE_PNG
#include <png.h>
#endif
#if DT_HAVE_TURBOJPEG
#include <turbojpeg.h>
#endif

// A fresh directory under $TMPDIR (or /tmp), removed by td_rmtree.
static inline void td_mkdtemp(char *out, size_t cap) {
    const char *base = getenv("TMPDIR");
    snprintf(out, cap, "%s/dtdata_test_XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(out)) fail_msg("cannot create a scratch directory %s", out);
}
static inline int td_rm_one(const char *path, const struct stat *st, int flag, struct FTW *f) {
    (void)st;
    (void)flag;
    (void)f;
    return remove(path);
}
static inline void td_rmtree(const char *dir) { nftw(dir, td_rm_one, 16, FTW_DEPTH | FTW_PHYS); }

static inline void td_mkdir(const char *path) {
    if (mkdir(path, 0755) != 0) fail_msg("cannot create directory %s", path);
}

static inline void td_write(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) fail_msg("cannot write %s", path);
    if (n) assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}
static inline unsigned char *td_read(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)len + 1);
    assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return buf;
}

// err must be code 2 and its message must contain `what` (a file name) and `phrase`.
#define td_assert_error(err, what, phrase)                                                   \
    do {                                                                                     \
        assert_int_equal((err).code, DT_EXIT_USAGE);                                         \
        if (!strstr((err).msg, (what)) || !strstr((err).msg, (phrase)))                      \
            fail_msg("error message \"%s\" should name \"%s\" and say \"%s\"", (err).msg,   \
                     (what), (phrase));                                                      \
        printf("#   ok, error says: %s\n", (err).msg);                                       \
    } while (0)

#if DT_HAVE_PNG
// Writes a PNG through libpng: rows are the raw scanlines (bit depth and colour type as
// given, 16-bit samples big-endian as PNG stores them); palette/npal for colour type 3.
static inline void td_write_png(const char *path, int w, int h, int bit_depth, int color_type,
                                const unsigned char *data, size_t row_bytes,
                                const png_color *palette, int npal, int interlace) {
    FILE *f = fopen(path, "wb");
    if (!f) fail_msg("cannot write %s", path);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png))) fail_msg("libpng failed writing %s", path);
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, bit_depth, color_type,
                 interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    if (palette) png_set_PLTE(png, info, palette, npal);
    png_write_info(png, info);
    png_bytep *rows = malloc(sizeof(png_bytep) * (size_t)h);
    for (int y = 0; y < h; y++) rows[y] = (png_bytep)data + (size_t)y * row_bytes;
    png_write_image(png, rows);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(rows);
    fclose(f);
}
static inline void td_write_png_rgb8(const char *path, const uint8_t *rgb, int h, int w) {
    td_write_png(path, w, h, 8, PNG_COLOR_TYPE_RGB, rgb, (size_t)w * 3, NULL, 0, 0);
}
#endif

#if DT_HAVE_TURBOJPEG
// Writes a JPEG with TurboJPEG; pf is TJPF_RGB (data (h,w,3)) or TJPF_GRAY (data (h,w)).
static inline void td_write_jpeg(const char *path, const uint8_t *data, int h, int w, int pf,
                                 int subsamp, int quality) {
    tjhandle tj = tjInitCompress();
    unsigned char *jpeg = NULL;
    unsigned long size = 0;
    if (tjCompress2(tj, data, w, 0, h, pf, &jpeg, &size, subsamp, quality, 0) != 0) {
        fail_msg("tjCompress2: %s", tjGetErrorStr2(tj));
    }
    td_write(path, jpeg, size);
    tjFree(jpeg);
    tjDestroy(tj);
}
#endif

// A random smooth RGB image (h,w,3): low-frequency waves plus a little noise, the kind of
// content JPEG reproduces to within a few levels.
static inline uint8_t *td_smooth_rgb(tu_rng *r, int h, int w) {
    uint8_t *p = malloc((size_t)h * w * 3);
    double f[3][2], ph[3];
    for (int c = 0; c < 3; c++) {
        f[c][0] = tu_uniform(r, 0.01, 0.15);
        f[c][1] = tu_uniform(r, 0.01, 0.15);
        ph[c] = tu_uniform(r, 0, 6.28);
    }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++) {
                double v = 128 + 90 * sin(f[c][0] * y + f[c][1] * x + ph[c]) + tu_uniform(r, -3, 3);
                p[((size_t)y * w + x) * 3 + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
    return p;
}

#endif
