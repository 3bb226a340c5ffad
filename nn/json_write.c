// json_write.c — the writer of json.h: compact JSON to a FILE, one value (and its members)
// per call, the separators and quoting done here so that callers never print JSON by hand.
// What it writes, dt_json_parse_flags(..., DT_JSON_REALS, ...) reads back: reals with
// w->digits significant digits (17 by default: every double exactly), strings escaped.
// Not here: pretty-printing, validating UTF-8 (the caller's strings are written as given).
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dt.h"
#include "json.h"

// 17 significant digits tell every double apart (IEEE 754 binary64: 53-bit significand)
#define DT_JSON_EXACT_DIGITS 17

void dt_json_writer_init(dt_json_writer *w, FILE *f) {
    memset(w, 0, sizeof *w);
    w->f = f;
    w->digits = DT_JSON_EXACT_DIGITS;
}

static void put_string(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        switch (*c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*c < 0x20) fprintf(f, "\\u%04x", *c);  // the other control characters
            else fputc(*c, f);
        }
    }
    fputc('"', f);
}

// What comes before every value: the comma after the previous one, then the key.
static void begin_value(dt_json_writer *w, const char *key) {
    if (w->count[w->depth]++) fputs(", ", w->f);
    if (key) {
        put_string(w->f, key);
        fputs(": ", w->f);
    }
}

// After a value: the newline that ends the outermost one.
static void end_value(dt_json_writer *w) {
    if (w->depth == 0) fputc('\n', w->f);
}

static void open_container(dt_json_writer *w, const char *key, char bracket) {
    DT_ASSERT(w->depth < DT_JSON_MAX_DEPTH);
    begin_value(w, key);
    fputc(bracket, w->f);
    w->count[++w->depth] = 0;
}

static void close_container(dt_json_writer *w, char bracket) {
    DT_ASSERT(w->depth > 0);
    w->depth--;
    fputc(bracket, w->f);
    end_value(w);
}

void dt_json_begin_object(dt_json_writer *w, const char *key) { open_container(w, key, '{'); }
void dt_json_end_object(dt_json_writer *w) { close_container(w, '}'); }
void dt_json_begin_array(dt_json_writer *w, const char *key) { open_container(w, key, '['); }
void dt_json_end_array(dt_json_writer *w) { close_container(w, ']'); }

void dt_json_write_string(dt_json_writer *w, const char *key, const char *s) {
    begin_value(w, key);
    put_string(w->f, s);
    end_value(w);
}

void dt_json_write_int(dt_json_writer *w, const char *key, int64_t v) {
    begin_value(w, key);
    fprintf(w->f, "%" PRId64, v);
    end_value(w);
}

void dt_json_write_bool(dt_json_writer *w, const char *key, int v) {
    begin_value(w, key);
    fputs(v ? "true" : "false", w->f);
    end_value(w);
}

void dt_json_write_real(dt_json_writer *w, const char *key, double v) {
    begin_value(w, key);
    if (isfinite(v)) fprintf(w->f, "%.*g", w->digits, v);
    else fputs("null", w->f);  // JSON has no infinity and no NaN
    end_value(w);
}
