// data_decode.c — image files to 8-bit RGB: PNG through libpng (any bit depth and colour
// type; palette and grey expanded, alpha dropped as PIL's convert("RGB") does, 16-bit
// rounded to 8 bits) and JPEG through libjpeg-turbo's TurboJPEG API (grey, YCbCr, and Adobe
// CMYK converted as PIL does). The format is recognised by its signature, not its name
// (ImageNet has a PNG named .JPEG). Not here: resizing or cropping (data_transform.c).
//
// Error policy: any decoding error names the file (code 2). libjpeg's warnings (e.g.
// "extraneous bytes before marker", which a few ImageNet files raise and PIL accepts) are
// accepted, except a premature end of data: a truncated file is an error, never grey pixels.
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include "data.h"

#if DT_HAVE_PNG
#include <png.h>
#endif
#if DT_HAVE_TURBOJPEG
#include <turbojpeg.h>
#endif

#define MAX_PIXELS (1 << 28)       // 268 M pixels: larger is a corrupt header, not a photo
#define MAX_FILE_BYTES (1l << 31)  // 2 GiB

static int read_file(const char *path, unsigned char **buf, size_t *size, dt_error *err) {
    *buf = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return dt_fail(err, DT_EXIT_USAGE, "%s: cannot open: %s", path, strerror(errno));
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0) len = ftell(f);
    if (len < 0 || len > MAX_FILE_BYTES || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return dt_fail(err, DT_EXIT_USAGE, "%s: cannot determine the file size (or over 2 GiB)",
                       path);
    }
    *buf = mallocCheck((size_t)len + 1);
    size_t got = fread(*buf, 1, (size_t)len, f);
    fclose(f);
    if (got != (size_t)len) {
        free(*buf);
        *buf = NULL;
        return dt_fail(err, DT_EXIT_USAGE, "%s: read %zu of %ld bytes", path, got, len);
    }
    *size = (size_t)len;
    return 0;
}

#if DT_HAVE_PNG
typedef struct {
    const unsigned char *data;
    size_t size, pos;
    char msg[200];
    jmp_buf jump;
} png_source;

static void png_on_error(png_structp png, png_const_charp msg) {
    png_source *s = png_get_error_ptr(png);
    snprintf(s->msg, sizeof s->msg, "%s", msg);
    longjmp(s->jump, 1);
}
static void png_on_warning(png_structp png, png_const_charp msg) {
    (void)png;  // ancillary-chunk complaints (e.g. "iCCP: known incorrect sRGB profile")
    (void)msg;
}
static void png_read_memory(png_structp png, png_bytep out, png_size_t len) {
    png_source *s = png_get_io_ptr(png);
    if (len > s->size - s->pos) png_error(png, "unexpected end of file (truncated)");
    memcpy(out, s->data + s->pos, len);
    s->pos += len;
}

static int decode_png(const char *path, const unsigned char *data, size_t size, uint8_t **rgb,
                      int *h, int *w, dt_error *err) {
    png_source src;
    memset(&src, 0, sizeof src);
    src.data = data;
    src.size = size;
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, png_on_error,
                                             png_on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_read_struct(&png, &info, NULL);
        return dt_fail(err, DT_EXIT_RUNTIME, "%s: libpng could not start", path);
    }
    uint8_t *volatile pixels = NULL;
    png_bytep *volatile rows = NULL;
    if (setjmp(src.jump)) {
        png_destroy_read_struct(&png, &info, NULL);
        free(pixels);
        free(rows);
        return dt_fail(err, DT_EXIT_USAGE, "%s: corrupt PNG: %s", path, src.msg);
    }
    png_set_read_fn(png, &src, png_read_memory);
    // Skip the ancillary chunks the decoder never uses (as PIL's convert("RGB"), no gamma,
    // colour profile or background is applied). libpng reads a chunk it handles whole, into a
    // buffer of the size the chunk claims (its 8 MB limit is only a warning: a fuzzed 100-byte
    // file's sPLT asked for 1 GiB); a skipped chunk is read in small pieces.
    static const png_byte unused[] = "bKGD\0cHRM\0eXIf\0gAMA\0hIST\0iCCP\0iTXt\0oFFs\0pCAL\0"
                                     "pHYs\0sBIT\0sCAL\0sPLT\0sRGB\0tEXt\0tIME\0zTXt";
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, unused, (int)(sizeof unused / 5));
    png_read_info(png, info);
    png_uint_32 pw = png_get_image_width(png, info), ph = png_get_image_height(png, info);
    if ((uint64_t)pw * ph > MAX_PIXELS) png_error(png, "image larger than 2^28 pixels");
    png_set_expand(png);        // palette -> RGB, grey < 8 bits -> 8, tRNS -> alpha
    png_set_scale_16(png);      // 16 -> 8 bits, rounded: (v*255 + 32895) >> 16
    png_set_strip_alpha(png);   // dropped, not composited (PIL's convert("RGB"))
    png_set_gray_to_rgb(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)pw * 3) {
        png_error(png, "unexpected row size after conversion to RGB8");
    }
    pixels = mallocCheck((size_t)pw * ph * 3);
    rows = mallocCheck(sizeof(png_bytep) * ph);
    for (png_uint_32 y = 0; y < ph; y++) rows[y] = pixels + (size_t)y * pw * 3;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    *rgb = pixels;
    *h = (int)ph;
    *w = (int)pw;
    return 0;
}
#endif

#if DT_HAVE_TURBOJPEG
// The frame marker's second byte (SOF0..SOF15, ITU T.81 Table B.1), 0 if a scan or the end
// comes first: the markers after SOI are walked by their lengths.
static int jpeg_frame_marker(const unsigned char *d, size_t n) {
    size_t i = 2;
    while (i + 4 <= n && d[i] == 0xFF) {
        int m = d[i + 1];
        if (m == 0xFF) {  // fill byte
            i++;
            continue;
        }
        if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) return m;
        if (m == 0xDA || m == 0xD9) return 0;
        i += 2 + ((size_t)d[i + 2] << 8 | d[i + 3]);
    }
    return 0;
}

// A decompression bomb, a small file that claims a large image (libjpeg decodes missing
// scans as zeros with only a warning: 144 fuzzed bytes made 2039x65390). Huffman coding
// spends at least one bit on each 8x8 block's DC difference (T.81 F.1.2.1, a code of length
// >= 1), so a w x h image needs ceil(w/8)*ceil(h/8)/8 bytes. Arithmetic coding (SOF9-11,
// 13-15) can spend less on a flat image; dtlab asks 1/8 bit per block of it, a bound only
// synthetic files miss (a 296-byte one claimed 3379x12049). The bytes needed, or 0 if the
// file has them.
static uint64_t jpeg_bytes_needed(const unsigned char *d, size_t n, int w, int h, int *arith) {
    *arith = jpeg_frame_marker(d, n) >= 0xC9;
    uint64_t blocks = (uint64_t)((w + 7) / 8) * (uint64_t)((h + 7) / 8);
    uint64_t need = *arith ? (blocks + 63) / 64 : (blocks + 7) / 8;
    return (uint64_t)n < need ? need : 0;
}

static int decode_jpeg(const char *path, const unsigned char *data, size_t size, uint8_t **rgb,
                       int *h, int *w, dt_error *err) {
    tjhandle tj = tjInitDecompress();
    if (!tj) return dt_fail(err, DT_EXIT_RUNTIME, "%s: TurboJPEG could not start", path);
    int jw = 0, jh = 0, subsamp = 0, cs = 0;
    if (size > ULONG_MAX ||
        tjDecompressHeader3(tj, data, (unsigned long)size, &jw, &jh, &subsamp, &cs) != 0) {
        dt_fail(err, DT_EXIT_USAGE, "%s: corrupt JPEG header: %s", path, tjGetErrorStr2(tj));
        tjDestroy(tj);
        return -1;
    }
    if (jw <= 0 || jh <= 0 || (uint64_t)jw * (uint64_t)jh > MAX_PIXELS) {
        dt_fail(err, DT_EXIT_USAGE, "%s: corrupt JPEG header: size %dx%d, expected 1..2^28 pixels", path, jw, jh);
        tjDestroy(tj);
        return -1;
    }
    int arith = 0;
    uint64_t need = jpeg_bytes_needed(data, size, jw, jh, &arith);
    if (need) {
        dt_fail(err, DT_EXIT_USAGE, "%s: corrupt JPEG: %dx%d pixels need at least %llu bytes "
                "(%s per 8x8 block), the file has %zu", path, jw, jh, (unsigned long long)need,
                arith ? "1/8 bit, arithmetic-coded" : "a bit", size);
        tjDestroy(tj);
        return -1;
    }
    int cmyk = cs == TJCS_CMYK || cs == TJCS_YCCK;
    int bpp = cmyk ? 4 : 3;
    uint8_t *out = mallocCheck((size_t)jw * jh * bpp);
    int flags = 0;
#ifdef TJFLAG_LIMITSCANS
    flags |= TJFLAG_LIMITSCANS;  // refuse progressive files with absurd scan counts
#endif
    if (tjDecompress2(tj, data, (unsigned long)size, out, jw, 0, jh, cmyk ? TJPF_CMYK : TJPF_RGB,
                      flags) != 0) {
        const char *msg = tjGetErrorStr2(tj);
        if (tjGetErrorCode(tj) == TJERR_FATAL || strstr(msg, "Premature end")) {
            dt_fail(err, DT_EXIT_USAGE, "%s: corrupt JPEG: %s", path, msg);
            free(out);
            tjDestroy(tj);
            return -1;
        }
    }
    tjDestroy(tj);
    if (cmyk) {  // Adobe stores CMYK inverted: R = C*K/255 on the stored values (as PIL)
        size_t np = (size_t)jw * jh;
        for (size_t i = 0; i < np; i++) {
            unsigned k = out[4 * i + 3];
            for (int c = 0; c < 3; c++) out[3 * i + c] = (uint8_t)((out[4 * i + c] * k + 127) / 255);
        }
    }
    *rgb = out;
    *h = jh;
    *w = jw;
    return 0;
}
#endif

int dt_image_decode(const char *path, uint8_t **rgb, int *h, int *w, dt_error *err) {
    *rgb = NULL;
    unsigned char *data;
    size_t size = 0;
    if (read_file(path, &data, &size, err) != 0) return -1;
    static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    int rc;
    if (size >= 8 && memcmp(data, png_sig, 8) == 0) {
#if DT_HAVE_PNG
        rc = decode_png(path, data, size, rgb, h, w, err);
#else
        rc = dt_fail(err, DT_EXIT_USAGE, "%s: PNG, but this build has no libpng "
                     "(apt-get install libpng-dev and reconfigure)", path);
#endif
    } else if (size >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF) {
#if DT_HAVE_TURBOJPEG
        rc = decode_jpeg(path, data, size, rgb, h, w, err);
#else
        rc = dt_fail(err, DT_EXIT_USAGE, "%s: JPEG, but this build has no libjpeg-turbo "
                     "(apt-get install libturbojpeg0-dev and reconfigure)", path);
#endif
    } else {
        rc = dt_fail(err, DT_EXIT_USAGE, "%s: not a PNG or JPEG file (unknown signature, %zu "
                     "bytes)", path, size);
    }
    free(data);
    return rc;
}
