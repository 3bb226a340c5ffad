// rank_result.c — the rank program's result (rank_result.h): one table of its keys, the
// writer and the reader that walk it.
#include "rank_result.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "json.h"

// Significant digits of the times in the result: 9, the digits dtsim's CSV and JSON print
// (and derive images/s from), so the report is the same whichever way the result travels.
#define DT_RANK_RESULT_DIGITS 9

typedef enum { RESULT_INT, RESULT_I64, RESULT_REAL, RESULT_STRING } result_type;

static const struct {
    const char *key;
    result_type type;
    size_t offset, size;
} fields[] = {
#define FIELD(key, type) \
    {#key, type, offsetof(dt_rank_result, key), sizeof(((dt_rank_result *)0)->key)}
    FIELD(gpus, RESULT_INT),       FIELD(iter_s, RESULT_REAL),   FIELD(compute_s, RESULT_REAL),
    FIELD(comm_s, RESULT_REAL),    FIELD(exposed_s, RESULT_REAL), FIELD(buckets, RESULT_INT),
    FIELD(algo, RESULT_STRING),    FIELD(params, RESULT_I64),    FIELD(arena_used, RESULT_I64),
    FIELD(model_comm_s, RESULT_REAL), FIELD(iter_p50_s, RESULT_REAL),
    FIELD(iter_p95_s, RESULT_REAL), FIELD(iter_max_s, RESULT_REAL),
    FIELD(comm_bytes, RESULT_REAL),
#undef FIELD
};
#define N_FIELDS (sizeof fields / sizeof *fields)

static void write_fields(FILE *f, const dt_rank_result *r) {
    dt_json_writer w;
    dt_json_writer_init(&w, f);
    w.digits = DT_RANK_RESULT_DIGITS;
    dt_json_begin_object(&w, NULL);
    for (size_t i = 0; i < N_FIELDS; i++) {
        const void *v = (const char *)r + fields[i].offset;
        switch (fields[i].type) {
        case RESULT_INT: dt_json_write_int(&w, fields[i].key, *(const int *)v); break;
        case RESULT_I64: dt_json_write_int(&w, fields[i].key, *(const int64_t *)v); break;
        case RESULT_REAL: dt_json_write_real(&w, fields[i].key, *(const double *)v); break;
        case RESULT_STRING: dt_json_write_string(&w, fields[i].key, v); break;
        }
    }
    dt_json_end_object(&w);
}

int dt_rank_result_write(const char *path, const dt_rank_result *r, dt_error *err) {
    if (!path[0]) {
        write_fields(stdout, r);
        fflush(stdout);
        return 0;
    }
    dt_atomic_file a;
    if (dt_atomic_open(&a, path, "--result", err)) return -1;
    write_fields(a.f, r);
    return dt_atomic_finish(&a, err) || dt_atomic_commit(&a, err) ? -1 : 0;
}

static char *read_all(const char *path, size_t *len, dt_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        dt_fail(err, DT_EXIT_RUNTIME, "the rank program's result %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1024, n = 0, k;
    char *buf = mallocCheck(cap);
    while ((k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n < cap) continue;
        cap *= 2;
        buf = realloc(buf, cap);
        DT_ASSERT(buf);
    }
    fclose(f);
    *len = n;
    return buf;
}

// Whether a parsed value can fill a field of type t (a real may be null: not finite).
static int fits(result_type t, const dt_json *v) {
    switch (t) {
    case RESULT_INT:
    case RESULT_I64: return v->type == DT_JSON_INT;
    case RESULT_REAL:
        return v->type == DT_JSON_REAL || v->type == DT_JSON_INT || v->type == DT_JSON_NULL;
    case RESULT_STRING: return v->type == DT_JSON_STRING;
    }
    return 0;
}

// One field of the table from the parsed object.
static int read_field(const dt_json *root, size_t i, dt_rank_result *r, dt_error *err) {
    const dt_json *v = dt_json_get(root, fields[i].key);
    if (!v || !fits(fields[i].type, v))
        return dt_fail(err, DT_EXIT_RUNTIME, "the rank program's result: \"%s\" is %s",
                       fields[i].key, v ? dt_json_type_name(v->type) : "missing");
    void *out = (char *)r + fields[i].offset;
    switch (fields[i].type) {
    case RESULT_INT: *(int *)out = (int)v->i; break;
    case RESULT_I64: *(int64_t *)out = v->i; break;
    case RESULT_REAL: *(double *)out = v->type == DT_JSON_NULL ? NAN : v->d; break;
    case RESULT_STRING: snprintf(out, fields[i].size, "%s", v->s); break;
    }
    return 0;
}

int dt_rank_result_read(const char *path, dt_rank_result *r, dt_error *err) {
    memset(r, 0, sizeof *r);
    size_t len;
    char *text = read_all(path, &len, err), jerr[160];
    if (!text) return -1;
    dt_json *root = dt_json_parse_flags(text, len, DT_JSON_REALS, jerr, sizeof jerr);
    free(text);
    int rc = 0;
    if (!root || root->type != DT_JSON_OBJECT)
        rc = dt_fail(err, DT_EXIT_RUNTIME, "the rank program's result %s: %s", path,
                     root ? "not a JSON object" : jerr);
    for (size_t i = 0; i < N_FIELDS && !rc; i++) rc = read_field(root, i, r, err);
    dt_json_free(root);
    return rc;
}
