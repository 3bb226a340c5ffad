// data_idx.c — the idx format of MNIST and Fashion-MNIST (LeCun et al., "THE MNIST DATABASE",
// file formats section): a big-endian magic 0x00000800 | (type 0x08 = ubyte) << 8 | ndims,
// so 0x803 for images (n, rows, cols) and 0x801 for labels (n), then the bytes. Read through
// zlib's gz* functions, so .gz and plain files both work. Everything is checked: magic, dims,
// matching counts, labels < 10, short files, gzip CRC (read to the end) and trailing bytes.
// Not here: normalisation (nn/data_dataset.c) or any augmentation.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "data.h"

#define IDX_MAX_DIM 65536      // a sanity bound on rows/cols, not a format limit
#define IDX_MAX_N 100000000    // 1e8 examples
#define IDX_CLASSES 10

// zlib's message without the "path: " prefix gzerror puts in front
static const char *gz_message(gzFile f, const char *path, int *code) {
    const char *msg = gzerror(f, code);
    size_t len = strlen(path);
    if (strncmp(msg, path, len) == 0 && msg[len] == ':' && msg[len + 1] == ' ') msg += len + 2;
    return msg;
}

// Reads exactly `bytes` bytes, the part of `total` after the first `before`; a short read
// is a truncated or corrupt file.
static int gz_read_exact(gzFile f, const char *path, void *buf, size_t bytes, const char *what,
                         size_t before, size_t total, dt_error *err) {
    size_t got = 0;
    while (got < bytes) {
        size_t chunk = bytes - got > (1u << 30) ? (1u << 30) : bytes - got;
        int r = gzread(f, (char *)buf + got, (unsigned)chunk);
        if (r < 0) {
            int code;
            const char *msg = gz_message(f, path, &code);
            return dt_fail(err, DT_EXIT_USAGE, "%s: corrupt gzip stream (reading %s): %s", path,
                           what, msg);
        }
        if (r == 0) {
            int code;
            const char *msg = gz_message(f, path, &code);
            return dt_fail(err, DT_EXIT_USAGE,
                           "%s: truncated: expected %zu bytes of %s, got %zu%s%s", path, total,
                           what, before + got, code != Z_OK ? ": " : "", code != Z_OK ? msg : "");
        }
        got += (size_t)r;
    }
    return 0;
}

// After the payload the stream must end cleanly: reading on verifies the gzip CRC and size.
static int gz_expect_end(gzFile f, const char *path, size_t payload, dt_error *err) {
    char extra;
    int r = gzread(f, &extra, 1);
    int code;
    const char *msg = gz_message(f, path, &code);
    if (r < 0 || (code != Z_OK && code != Z_BUF_ERROR)) {
        return dt_fail(err, DT_EXIT_USAGE, "%s: corrupt gzip stream (at its end): %s",
                       path, msg);
    }
    if (r > 0) {
        return dt_fail(err, DT_EXIT_USAGE,
                       "%s: unexpected bytes after the %zu bytes the header announces", path,
                       payload);
    }
    if (code == Z_BUF_ERROR) {
        return dt_fail(err, DT_EXIT_USAGE, "%s: truncated gzip stream: %s", path, msg);
    }
    return 0;
}

static uint32_t be32(const unsigned char *b) {
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

// dir/name.gz if it exists, else dir/name.
static void idx_path(char *out, size_t cap, const char *dir, const char *name) {
    struct stat st;
    snprintf(out, cap, "%s/%s.gz", dir, name);
    if (stat(out, &st) == 0) return;
    snprintf(out, cap, "%s/%s", dir, name);
    if (stat(out, &st) == 0) return;
    snprintf(out, cap, "%s/%s.gz", dir, name);  // neither: name the .gz in the error
}

// Reads one idx file: its ndims dims into dims[], the payload into a malloc'd *data.
static int idx_read(const char *path, uint32_t magic, int ndims, uint32_t *dims, uint8_t **data,
                    dt_error *err) {
    *data = NULL;
    errno = 0;
    gzFile f = gzopen(path, "rb");
    if (!f) {
        return dt_fail(err, DT_EXIT_USAGE, "%s: cannot open: %s", path,
                       errno ? strerror(errno) : "gzopen failed");
    }
    unsigned char head[16];
    int rc = -1;
    size_t payload = 1;
    size_t hbytes = 4u * (1 + ndims);
    if (gz_read_exact(f, path, head, hbytes, "the header", 0, hbytes, err) != 0) goto done;
    uint32_t m = be32(head);
    if (m != magic) {
        dt_fail(err, DT_EXIT_USAGE, "%s: bad magic 0x%08x, expected 0x%08x (idx %s)", path, m,
                magic, magic == 0x803 ? "images: ubyte, 3 dims" : "labels: ubyte, 1 dim");
        goto done;
    }
    for (int d = 0; d < ndims; d++) {
        dims[d] = be32(head + 4 * (d + 1));
        uint32_t lim = d == 0 ? IDX_MAX_N : IDX_MAX_DIM;
        if (dims[d] == 0 || dims[d] > lim) {
            dt_fail(err, DT_EXIT_USAGE, "%s: dimension %d is %u, expected 1..%u", path, d,
                    dims[d], lim);
            goto done;
        }
        payload *= dims[d];
    }
    if (payload > ((size_t)1 << 36)) {
        dt_fail(err, DT_EXIT_USAGE, "%s: the header announces %zu bytes, over 64 GiB: corrupt?",
                path, payload);
        goto done;
    }
    // The buffer grows with the bytes actually read (doubling, up to what the header
    // announces): a header that lies about its size cannot make us allocate that size.
    size_t cap = payload < ((size_t)1 << 20) ? payload : (size_t)1 << 20, got = 0;
    *data = mallocCheck(cap);
    while (got < payload) {
        if (got == cap) {
            cap = cap > payload / 2 ? payload : 2 * cap;
            uint8_t *more = realloc(*data, cap);
            DT_ASSERT(more);
            *data = more;
        }
        if (gz_read_exact(f, path, *data + got, cap - got, ndims == 1 ? "labels" : "pixels",
                          got, payload, err) != 0)
            goto done;
        got = cap;
    }
    if (gz_expect_end(f, path, payload, err) != 0) goto done;
    rc = 0;
done:
    gzclose(f);
    if (rc != 0) {
        free(*data);
        *data = NULL;
    }
    return rc;
}

dt_dataset *dt_dataset_load_idx(const char *dir, const char *split, dt_error *err) {
    if (!dir) dir = DT_FASHION_MNIST_DIR;
    if (!split || (strcmp(split, "train") != 0 && strcmp(split, "t10k") != 0)) {
        dt_fail(err, DT_EXIT_USAGE, "idx split '%s': expected \"train\" or \"t10k\"",
                split ? split : "(null)");
        return NULL;
    }
    char ipath[4096], lpath[4096], name[64];
    snprintf(name, sizeof name, "%s-images-idx3-ubyte", split);
    idx_path(ipath, sizeof ipath, dir, name);
    snprintf(name, sizeof name, "%s-labels-idx1-ubyte", split);
    idx_path(lpath, sizeof lpath, dir, name);

    uint32_t idims[3] = {0, 0, 0}, ldims[1] = {0};
    uint8_t *pixels = NULL, *lab8 = NULL;
    if (idx_read(ipath, 0x803, 3, idims, &pixels, err) != 0) return NULL;
    if (idx_read(lpath, 0x801, 1, ldims, &lab8, err) != 0) {
        free(pixels);
        return NULL;
    }
    if (idims[0] != ldims[0]) {
        dt_fail(err, DT_EXIT_USAGE, "%s holds %u labels but %s holds %u images: expected equal "
                "counts", lpath, ldims[0], ipath, idims[0]);
        free(pixels);
        free(lab8);
        return NULL;
    }
    for (uint32_t i = 0; i < ldims[0]; i++) {
        if (lab8[i] >= IDX_CLASSES) {
            dt_fail(err, DT_EXIT_USAGE, "%s: label %u of example %u, expected 0..%d", lpath,
                    lab8[i], i, IDX_CLASSES - 1);
            free(pixels);
            free(lab8);
            return NULL;
        }
    }
    dt_dataset *ds = callocCheck(1, sizeof *ds);
    snprintf(ds->name, sizeof ds->name, "idx:%.80s/%s", dir, split);
    ds->n = idims[0];
    ds->c = 1;
    ds->h = (int)idims[1];
    ds->w = (int)idims[2];
    ds->num_classes = IDX_CLASSES;
    ds->pixels = pixels;
    ds->labels = mallocCheck(sizeof(int32_t) * ds->n);
    for (int64_t i = 0; i < ds->n; i++) ds->labels[i] = lab8[i];
    free(lab8);
    for (int c = 0; c < 3; c++) {
        ds->mean[c] = DT_FASHION_MNIST_MEAN;
        ds->std[c] = DT_FASHION_MNIST_STD;
    }
    return ds;
}
