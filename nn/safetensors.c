// safetensors.c — reading the safetensors format (huggingface/safetensors, docs "Format"): an
// 8-byte little-endian header length N, N bytes of JSON (padded with spaces), then the tensor
// bytes, each tensor at [begin, end) relative to the start of the data. The reader validates
// everything (sizes, JSON, dtypes, shapes, offsets) before handing a tensor out, and names the
// file and the tensor in every rejection. Also the dtype table shared with the writer.
// Not here: writing (nn/safetensors_write.c), a network's weights (nn/safetensors_weights.c),
// the JSON grammar (nn/json.c), mmap, sharded files. Holes between tensors and bytes after the
// last one are tolerated (they cannot make a tensor wrong); overlaps are not.
#include "safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors.c assumes a little-endian host (the format stores little-endian data)"
#endif

static const struct {
    char name[8];
    size_t size;
} DTYPES[DT_ST_NDTYPES] = {
    [DT_ST_F32] = {"F32", 4}, [DT_ST_F16] = {"F16", 2}, [DT_ST_BF16] = {"BF16", 2},
    [DT_ST_I64] = {"I64", 8}, [DT_ST_I32] = {"I32", 4}, [DT_ST_U8] = {"U8", 1},
};

const char *dt_st_dtype_name(dt_st_dtype t) {
    return (unsigned)t < DT_ST_NDTYPES ? DTYPES[t].name : "?";
}
size_t dt_st_dtype_size(dt_st_dtype t) { return (unsigned)t < DT_ST_NDTYPES ? DTYPES[t].size : 0; }

int64_t dt_st_shape_bytes(int ndim, const int64_t *shape, dt_st_dtype dtype) {
    int64_t n = (int64_t)dt_st_dtype_size(dtype);
    if (n == 0 || ndim < 0 || ndim > 8 || (ndim > 0 && !shape)) return -1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) return -1;
        if (shape[d] != 0 && n > INT64_MAX / shape[d]) return -1;
        n *= shape[d];
    }
    return n;
}

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *c = mallocCheck(n);
    memcpy(c, s, n);
    return c;
}

struct dt_st_file {
    char *path;
    unsigned char *data;  // the data section (after the header)
    size_t data_size;
    dt_st_tensor *t;
    int n;
    char **mkey, **mval;
    int nmeta;
};

int dt_st_count(const dt_st_file *f) { return f->n; }
const dt_st_tensor *dt_st_get(const dt_st_file *f, int i) {
    return i >= 0 && i < f->n ? &f->t[i] : NULL;
}
const dt_st_tensor *dt_st_find(const dt_st_file *f, const char *name) {
    for (int i = 0; i < f->n; i++) {
        if (strcmp(f->t[i].name, name) == 0) return &f->t[i];
    }
    return NULL;
}
const char *dt_st_metadata(const dt_st_file *f, const char *key) {
    for (int i = 0; i < f->nmeta; i++) {
        if (strcmp(f->mkey[i], key) == 0) return f->mval[i];
    }
    return NULL;
}

void dt_st_close(dt_st_file *f) {
    if (!f) return;
    for (int i = 0; i < f->nmeta; i++) {
        free(f->mkey[i]);
        free(f->mval[i]);
    }
    free(f->mkey);
    free(f->mval);
    free(f->t);
    free(f->data);
    free(f->path);
    free(f);
}

// Reads n bytes, or records why not (a short read means the file changed under us).
static int read_exact(FILE *fp, void *p, size_t n, const char *path, dt_error *err) {
    if (n && fread(p, 1, n, fp) != n) {
        if (ferror(fp)) return dt_fail(err, DT_EXIT_RUNTIME, "%.200s: read failed: %s", path,
                                       strerror(errno));
        return dt_fail(err, DT_EXIT_USAGE, "%.200s: file ended early (truncated?)", path);
    }
    return 0;
}

__attribute__((format(printf, 3, 4))) static int tensor_fail(dt_error *err, const char *path,
                                                             const char *fmt, ...) {
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return dt_fail(err, DT_EXIT_USAGE, "%.100s: %s", path, what);
}

// One header entry "name": {"dtype": ..., "shape": [...], "data_offsets": [begin, end]},
// checked against the size of the data section.
static int parse_entry(const dt_st_file *f, const dt_json *m, dt_st_tensor *t, dt_error *err) {
    const char *path = f->path, *name = m->key;
    if (m->keylen >= sizeof t->name) {
        return tensor_fail(err, path, "tensor '%.100s...': name longer than %zu bytes", name,
                           sizeof t->name - 1);
    }
    if (strlen(name) != m->keylen || m->keylen == 0) {
        return tensor_fail(err, path, "a tensor name is empty or contains a NUL byte");
    }
    memcpy(t->name, name, m->keylen + 1);
    if (m->type != DT_JSON_OBJECT) {
        return tensor_fail(err, path, "tensor '%s': expected an object, found %s", name,
                           dt_json_type_name(m->type));
    }
    const dt_json *dtype = dt_json_get(m, "dtype"), *shape = dt_json_get(m, "shape"),
                  *offs = dt_json_get(m, "data_offsets");
    if (!dtype || !shape || !offs) {
        return tensor_fail(err, path, "tensor '%s': missing \"%s\"", name,
                           !dtype ? "dtype" : !shape ? "shape" : "data_offsets");
    }
    if (dtype->type != DT_JSON_STRING) {
        return tensor_fail(err, path, "tensor '%s': dtype is not a string (found %s)", name,
                           dt_json_type_name(dtype->type));
    }
    int found = -1;
    for (int k = 0; k < DT_ST_NDTYPES; k++) {
        if (strcmp(dtype->s, DTYPES[k].name) == 0) found = k;
    }
    if (found < 0) {
        return tensor_fail(err, path,
                           "tensor '%s': unknown dtype '%.20s' (expected F32, F16, BF16, I64, "
                           "I32 or U8)", name, dtype->s);
    }
    t->dtype = (dt_st_dtype)found;
    if (shape->type != DT_JSON_ARRAY || shape->n > 8) {
        return tensor_fail(err, path, "tensor '%s': shape must be an array of at most 8 "
                           "integers", name);
    }
    t->ndim = 0;
    for (const dt_json *d = shape->child; d; d = d->next) {
        if (d->type != DT_JSON_INT || d->i < 0) {
            return tensor_fail(err, path, "tensor '%s': shape entry %d is not an integer >= 0",
                               name, t->ndim);
        }
        t->shape[t->ndim++] = d->i;
    }
    int64_t nbytes = dt_st_shape_bytes(t->ndim, t->shape, t->dtype);
    if (nbytes < 0) return tensor_fail(err, path, "tensor '%s': shape overflows", name);
    if (offs->type != DT_JSON_ARRAY || offs->n != 2 || offs->child->type != DT_JSON_INT ||
        offs->child->next->type != DT_JSON_INT) {
        return tensor_fail(err, path, "tensor '%s': data_offsets must be [begin, end]", name);
    }
    int64_t b = offs->child->i, e = offs->child->next->i;
    if (b < 0 || e < 0) {
        return tensor_fail(err, path, "tensor '%s': negative data_offsets [%lld, %lld]", name,
                           (long long)b, (long long)e);
    }
    if (e < b) {
        return tensor_fail(err, path, "tensor '%s': data_offsets [%lld, %lld] end before begin",
                           name, (long long)b, (long long)e);
    }
    if ((uint64_t)e > f->data_size) {
        return tensor_fail(err, path,
                           "tensor '%s': data_offsets [%lld, %lld] outside the %zu bytes of data",
                           name, (long long)b, (long long)e, f->data_size);
    }
    if (e - b != nbytes) {
        return tensor_fail(err, path,
                           "tensor '%s': data_offsets [%lld, %lld] hold %lld bytes, but shape "
                           "and dtype %s need %lld", name, (long long)b, (long long)e,
                           (long long)(e - b), DTYPES[found].name, (long long)nbytes);
    }
    t->nbytes = (size_t)nbytes;
    t->data = f->data + b;
    return 0;
}

static int parse_metadata(dt_st_file *f, const dt_json *m, dt_error *err) {
    if (m->type != DT_JSON_OBJECT) {
        return tensor_fail(err, f->path, "__metadata__ is not an object (found %s)",
                           dt_json_type_name(m->type));
    }
    f->mkey = callocCheck(m->n + 1, sizeof *f->mkey);
    f->mval = callocCheck(m->n + 1, sizeof *f->mval);
    for (const dt_json *kv = m->child; kv; kv = kv->next) {
        if (kv->type != DT_JSON_STRING || strlen(kv->s) != kv->slen ||
            strlen(kv->key) != kv->keylen) {
            return tensor_fail(err, f->path, "__metadata__ '%.100s': values must be strings "
                               "(without NUL bytes)", kv->key);
        }
        f->mkey[f->nmeta] = dup_str(kv->key);
        f->mval[f->nmeta] = dup_str(kv->s);
        f->nmeta++;
    }
    return 0;
}

static int cmp_begin(const void *a, const void *b) {
    const dt_st_tensor *x = *(const dt_st_tensor *const *)a, *y = *(const dt_st_tensor *const *)b;
    return (x->data > y->data) - (x->data < y->data);
}

// No two non-empty tensors may share a byte of the data section.
static int check_overlaps(const dt_st_file *f, dt_error *err) {
    const dt_st_tensor **s = mallocCheck((size_t)(f->n ? f->n : 1) * sizeof *s);
    int k = 0;
    for (int i = 0; i < f->n; i++) {
        if (f->t[i].nbytes) s[k++] = &f->t[i];
    }
    qsort(s, (size_t)k, sizeof *s, cmp_begin);
    int rc = 0;
    for (int i = 1; i < k && !rc; i++) {
        const unsigned char *prev_end = (const unsigned char *)s[i - 1]->data + s[i - 1]->nbytes;
        if ((const unsigned char *)s[i]->data < prev_end) {
            rc = tensor_fail(err, f->path, "tensors '%s' and '%s' overlap in the data",
                             s[i - 1]->name, s[i]->name);
        }
    }
    free(s);
    return rc;
}

// The JSON header -> the validated tensor table and metadata of f.
static int parse_header(dt_st_file *f, const char *text, size_t len, dt_error *err) {
    char jerr[200];
    dt_json *root = dt_json_parse(text, len, jerr, sizeof jerr);
    if (!root) return tensor_fail(err, f->path, "malformed JSON header: %s", jerr);
    int rc = -1;
    if (root->type != DT_JSON_OBJECT) {
        tensor_fail(err, f->path, "header is a JSON %s, expected an object",
                    dt_json_type_name(root->type));
        goto out;
    }
    f->t = callocCheck(root->n + 1, sizeof *f->t);
    for (const dt_json *m = root->child; m; m = m->next) {
        if (strcmp(m->key, "__metadata__") == 0 && m->keylen == 12) {
            if (parse_metadata(f, m, err)) goto out;
        } else {
            if (parse_entry(f, m, &f->t[f->n], err)) goto out;
            f->n++;
        }
    }
    rc = check_overlaps(f, err);
out:
    dt_json_free(root);
    return rc;
}

uint32_t dt_st_crc32(uint32_t crc, const void *p, size_t n) {
    uint32_t table[256];  // byte-at-a-time table, built per call (no mutable globals in nn/)
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
    const unsigned char *b = p;
    crc = ~crc;
    for (size_t i = 0; i < n; i++) crc = table[(crc ^ b[i]) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

// The data's CRC-32 against the header's record of it (when the writer left one).
static int check_crc(const dt_st_file *f, dt_error *err) {
    const char *want = dt_st_metadata(f, DT_ST_CRC_KEY);
    if (!want) return 0;
    char got[16];
    snprintf(got, sizeof got, "%08x", (unsigned)dt_st_crc32(0, f->data, f->data_size));
    if (strcmp(got, want) == 0) return 0;
    return dt_fail(err, DT_EXIT_USAGE, "%.200s: the tensor data's CRC-32 is %s but the header "
                   "records %.20s: the file is corrupt (a flipped bit, a torn or truncated "
                   "copy)", f->path, got, want);
}

dt_st_file *dt_st_open(const char *path, dt_error *err) {
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        dt_fail(err, DT_EXIT_USAGE, "%.200s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    dt_st_file *f = callocCheck(1, sizeof *f);
    f->path = dup_str(path);
    char *header = NULL;
    struct stat st;
    if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode)) {
        dt_fail(err, DT_EXIT_USAGE, "%.200s: not a regular file", path);
        goto bad;
    }
    uint64_t size = (uint64_t)st.st_size;
    if (size < 8) {
        dt_fail(err, DT_EXIT_USAGE,
                "%.200s: file is %llu bytes, shorter than the 8-byte safetensors header length",
                path, (unsigned long long)size);
        goto bad;
    }
    unsigned char len8[8];
    if (read_exact(fp, len8, 8, path, err)) goto bad;
    uint64_t hlen = 0;
    for (int k = 0; k < 8; k++) hlen |= (uint64_t)len8[k] << (8 * k);
    if (hlen > DT_ST_MAX_HEADER_BYTES) {
        dt_fail(err, DT_EXIT_USAGE,
                "%.200s: header length %llu bytes is absurd (limit %u; not a safetensors file?)",
                path, (unsigned long long)hlen, DT_ST_MAX_HEADER_BYTES);
        goto bad;
    }
    if (hlen > size - 8) {
        dt_fail(err, DT_EXIT_USAGE,
                "%.200s: header length %llu bytes runs past the end of the %llu-byte file",
                path, (unsigned long long)hlen, (unsigned long long)size);
        goto bad;
    }
    header = mallocCheck((size_t)hlen + 1);
    if (read_exact(fp, header, (size_t)hlen, path, err)) goto bad;
    f->data_size = (size_t)(size - 8 - hlen);
    f->data = mallocCheck(f->data_size ? f->data_size : 1);
    if (parse_header(f, header, (size_t)hlen, err)) goto bad;
    if (read_exact(fp, f->data, f->data_size, path, err)) goto bad;
    if (check_crc(f, err)) goto bad;
    free(header);
    fclose(fp);
    return f;
bad:
    free(header);
    fclose(fp);
    dt_st_close(f);
    return NULL;
}
