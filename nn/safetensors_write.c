// safetensors_write.c — writing the safetensors format (see safetensors.c for the layout),
// atomically: the file is written to PATH.tmp.<pid>, flushed, fsync'ed and renamed over PATH,
// so a reader sees the old file or the whole new one; on any failure the temporary file is
// removed and an existing PATH is left untouched (docs/conventions.md, "Never a partial file").
// The metadata carries the data section's CRC-32 (DT_ST_CRC_KEY), which the reader checks.
// Not here: reading and validation (safetensors.c), a network's weights.
#include "safetensors.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "atomic_file.h"
#include "json.h"

static char *strdup_check(const char *s) {
    size_t n = strlen(s) + 1;
    char *c = mallocCheck(n);
    memcpy(c, s, n);
    return c;
}

typedef struct {
    char *key, *value;
} st_meta;

struct dt_st_writer {
    dt_st_tensor *t;
    int n, cap;
    st_meta *meta;
    int nmeta, capmeta;
    dt_error err;  // the first bad dt_st_add / dt_st_add_metadata, reported by dt_st_write
    int failed;
};

dt_st_writer *dt_st_writer_new(void) { return callocCheck(1, sizeof(dt_st_writer)); }

void dt_st_writer_free(dt_st_writer *w) {
    if (!w) return;
    for (int i = 0; i < w->nmeta; i++) {
        free(w->meta[i].key);
        free(w->meta[i].value);
    }
    free(w->meta);
    free(w->t);
    free(w);
}

__attribute__((format(printf, 2, 3))) static void writer_fail(dt_st_writer *w, const char *fmt,
                                                              ...) {
    if (w->failed) return;
    w->failed = 1;
    w->err.code = DT_EXIT_USAGE;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->err.msg, sizeof w->err.msg, fmt, ap);
    va_end(ap);
}

void dt_st_add(dt_st_writer *w, const char *name, dt_st_dtype dtype, int ndim,
               const int64_t *shape, const void *data) {
    if (!name || !*name) {
        writer_fail(w, "a tensor has an empty name");
        return;
    }
    size_t len = strlen(name);
    if (len >= sizeof w->t->name) {
        writer_fail(w, "tensor '%.100s...': name longer than %zu bytes", name,
                    sizeof w->t->name - 1);
        return;
    }
    if (!dt_json_utf8_valid(name, len)) {
        writer_fail(w, "tensor '%s': name is not valid UTF-8", name);
        return;
    }
    if (strcmp(name, "__metadata__") == 0) {
        writer_fail(w, "tensor '__metadata__': the name is reserved for metadata");
        return;
    }
    if ((unsigned)dtype >= DT_ST_NDTYPES) {
        writer_fail(w, "tensor '%s': unknown dtype %d", name, (int)dtype);
        return;
    }
    if (ndim < 0 || ndim > 8 || (ndim > 0 && !shape)) {
        writer_fail(w, "tensor '%s': ndim %d (expected 0..8 with a shape)", name, ndim);
        return;
    }
    int64_t nbytes = dt_st_shape_bytes(ndim, shape, dtype);
    if (nbytes < 0) {
        writer_fail(w, "tensor '%s': shape has a negative entry or overflows", name);
        return;
    }
    if (nbytes > 0 && !data) {
        writer_fail(w, "tensor '%s': data is NULL", name);
        return;
    }
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 64;
        w->t = realloc(w->t, (size_t)w->cap * sizeof *w->t);
        DT_ASSERT(w->t);
    }
    dt_st_tensor *t = &w->t[w->n++];
    memset(t, 0, sizeof *t);
    memcpy(t->name, name, len + 1);
    t->dtype = dtype;
    t->ndim = ndim;
    for (int d = 0; d < ndim; d++) t->shape[d] = shape[d];
    t->nbytes = (size_t)nbytes;
    t->data = data;
}

static void meta_push(dt_st_writer *w, const char *key, const char *value) {
    if (w->nmeta == w->capmeta) {
        w->capmeta = w->capmeta ? 2 * w->capmeta : 8;
        w->meta = realloc(w->meta, (size_t)w->capmeta * sizeof *w->meta);
        DT_ASSERT(w->meta);
    }
    w->meta[w->nmeta].key = strdup_check(key);
    w->meta[w->nmeta].value = strdup_check(value);
    w->nmeta++;
}

void dt_st_add_metadata(dt_st_writer *w, const char *key, const char *value) {
    if (!key || !value) {
        writer_fail(w, "metadata with a NULL key or value");
        return;
    }
    if (!dt_json_utf8_valid(key, strlen(key)) || !dt_json_utf8_valid(value, strlen(value))) {
        writer_fail(w, "metadata '%.100s': not valid UTF-8", key);
        return;
    }
    if (strcmp(key, DT_ST_CRC_KEY) == 0) {
        writer_fail(w, "metadata '%s': the key is reserved (the writer records the data's "
                    "CRC-32 under it)", key);
        return;
    }
    meta_push(w, key, value);
}

// A growable string for the header.
typedef struct {
    char *s;
    size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        while (b->n + n + 1 > b->cap) b->cap = b->cap ? 2 * b->cap : 1024;
        b->s = realloc(b->s, b->cap);
        DT_ASSERT(b->s);
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

__attribute__((format(printf, 2, 3))) static void sb_printf(sbuf *b, const char *fmt, ...) {
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    DT_ASSERT(k >= 0 && (size_t)k < sizeof tmp);
    sb_put(b, tmp, (size_t)k);
}

// a JSON string literal (RFC 8259 section 7): quote, backslash and control bytes escaped
static void sb_json_string(sbuf *b, const char *s) {
    sb_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char e[2] = {'\\', (char)*p};
            sb_put(b, e, 2);
        } else if (*p < 0x20) {
            sb_printf(b, "\\u%04x", *p);
        } else {
            sb_put(b, (const char *)p, 1);
        }
    }
    sb_put(b, "\"", 1);
}

static int cmp_name(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

// Duplicate tensor names or metadata keys would make an ambiguous file: report the first.
static const char *find_duplicate(const char **names, int n) {
    qsort(names, (size_t)n, sizeof *names, cmp_name);
    for (int i = 1; i < n; i++) {
        if (strcmp(names[i - 1], names[i]) == 0) return names[i];
    }
    return NULL;
}

// The data section is laid out without holes (the reference reader requires it), largest
// element size first, so that with a header padded to 8 bytes every tensor starts aligned.
// order[k] is the index of the k-th tensor in the data; begin[i] the offset of tensor i.
static void layout(const dt_st_writer *w, int *order, uint64_t *begin) {
    int k = 0;
    for (size_t sz = 8; sz >= 1; sz /= 2) {
        for (int i = 0; i < w->n; i++) {
            if (dt_st_dtype_size(w->t[i].dtype) == sz) order[k++] = i;
        }
    }
    DT_ASSERT(k == w->n);
    uint64_t off = 0;
    for (k = 0; k < w->n; k++) {
        begin[order[k]] = off;
        off += w->t[order[k]].nbytes;
    }
}

static void build_header(const dt_st_writer *w, const uint64_t *begin, sbuf *h) {
    sb_put(h, "{", 1);
    int first = 1;
    if (w->nmeta) {
        sb_put(h, "\"__metadata__\":{", 16);
        for (int i = 0; i < w->nmeta; i++) {
            if (i) sb_put(h, ",", 1);
            sb_json_string(h, w->meta[i].key);
            sb_put(h, ":", 1);
            sb_json_string(h, w->meta[i].value);
        }
        sb_put(h, "}", 1);
        first = 0;
    }
    for (int i = 0; i < w->n; i++) {  // in the order the tensors were added
        const dt_st_tensor *t = &w->t[i];
        if (!first) sb_put(h, ",", 1);
        first = 0;
        sb_json_string(h, t->name);
        sb_printf(h, ":{\"dtype\":\"%s\",\"shape\":[", dt_st_dtype_name(t->dtype));
        for (int d = 0; d < t->ndim; d++) {
            sb_printf(h, "%s%lld", d ? "," : "", (long long)t->shape[d]);
        }
        sb_printf(h, "],\"data_offsets\":[%llu,", (unsigned long long)begin[i]);
        sb_printf(h, "%llu]}", (unsigned long long)(begin[i] + t->nbytes));
    }
    sb_put(h, "}", 1);
    while ((8 + h->n) % 8) sb_put(h, " ", 1);  // pad so that the data starts 8-aligned
}

// Checks made once everything is added: unique names and metadata keys.
static int writer_check(dt_st_writer *w) {
    if (w->failed) return -1;
    int m = w->n > w->nmeta ? w->n : w->nmeta;
    const char **names = mallocCheck((size_t)(m ? m : 1) * sizeof *names);
    for (int i = 0; i < w->n; i++) names[i] = w->t[i].name;
    const char *dup = find_duplicate(names, w->n);
    if (dup) writer_fail(w, "tensor '%s' added twice", dup);
    for (int i = 0; i < w->nmeta; i++) names[i] = w->meta[i].key;
    dup = find_duplicate(names, w->nmeta);
    if (dup) writer_fail(w, "metadata key '%s' added twice", dup);
    free(names);
    return w->failed ? -1 : 0;
}

static int write_all(FILE *f, const void *p, size_t n) {
    return n == 0 || fwrite(p, 1, n, f) == n ? 0 : -1;
}

int dt_st_write(dt_st_writer *w, const char *path, dt_error *err) {
    if (!path || !*path) return dt_fail(err, DT_EXIT_USAGE, "safetensors: empty output path");
    if (writer_check(w)) return dt_fail(err, w->err.code, "%.200s: %s", path, w->err.msg);

    int *order = mallocCheck((size_t)(w->n ? w->n : 1) * sizeof *order);
    uint64_t *begin = mallocCheck((size_t)(w->n ? w->n : 1) * sizeof *begin);
    layout(w, order, begin);
    // the data section's CRC-32, which the reader checks (a flipped bit, a torn copy)
    uint32_t crc = 0;
    for (int k = 0; k < w->n; k++)
        crc = dt_st_crc32(crc, w->t[order[k]].data, w->t[order[k]].nbytes);
    char crc_hex[16];
    snprintf(crc_hex, sizeof crc_hex, "%08x", (unsigned)crc);
    meta_push(w, DT_ST_CRC_KEY, crc_hex);
    sbuf h = {0};
    build_header(w, begin, &h);
    free(w->meta[w->nmeta - 1].key);  // the writer may be written again
    free(w->meta[w->nmeta - 1].value);
    w->nmeta--;
    unsigned char len8[8];
    for (int k = 0; k < 8; k++) len8[k] = (unsigned char)((uint64_t)h.n >> (8 * k));

    // PATH.tmp.<pid>, written fully, flushed to disk, then renamed over PATH (nn/atomic_file.h:
    // a reader sees the old file or the new one, never a partial one)
    dt_atomic_file a;
    int rc = dt_atomic_open(&a, path, "safetensors", err);
    if (!rc) {
        int bad = write_all(a.f, len8, 8) || write_all(a.f, h.s, h.n);
        for (int k = 0; k < w->n && !bad; k++)
            bad = write_all(a.f, w->t[order[k]].data, w->t[order[k]].nbytes);
        if (bad) {
            int e = errno;
            dt_atomic_abort(&a);
            rc = dt_fail(err, DT_EXIT_RUNTIME, "%.300s: write failed: %s", path, strerror(e));
        } else {
            rc = dt_atomic_finish(&a, err);
        }
        if (!rc) rc = dt_atomic_commit(&a, err);
    }
    free(h.s);
    free(begin);
    free(order);
    return rc;
}
