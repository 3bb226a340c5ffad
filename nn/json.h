// json.h — a small, strict JSON parser (RFC 8259) for file headers that dtlab reads, such as
// the safetensors header: objects, arrays, strings (with every escape, \uXXXX surrogate pairs
// included, and UTF-8 validated), integers, true, false and null. Anything malformed is
// rejected with a message giving the byte offset: trailing commas, leading zeros, control
// characters in strings, lone surrogates, duplicate object keys, nesting deeper than
// DT_JSON_MAX_DEPTH, integers outside int64, trailing garbage. Fractions and exponents are
// rejected as "non-integer number" (no header needs them) unless the caller asks for them
// (DT_JSON_REALS: dtsim's results, json_write.c below).
// And a small writer (nn/json_write.c): one line of compact JSON to a FILE.
// Not here: streaming, comments.
#ifndef DT_JSON_H
#define DT_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DT_JSON_MAX_DEPTH 64

typedef enum {
    DT_JSON_NULL,
    DT_JSON_BOOL,
    DT_JSON_INT,
    DT_JSON_STRING,
    DT_JSON_ARRAY,
    DT_JSON_OBJECT,
    DT_JSON_REAL,  // a number with a fraction or an exponent (only with DT_JSON_REALS)
} dt_json_type;

// A parsed value. Arrays and objects keep their elements as a singly linked list of children
// (members of an object carry their key), in the order of the text.
typedef struct dt_json {
    dt_json_type type;
    int64_t i;             // DT_JSON_INT value; DT_JSON_BOOL 0 or 1
    double d;              // DT_JSON_REAL value; DT_JSON_INT's value as a double
    char *s;               // DT_JSON_STRING: decoded UTF-8, NUL-terminated
    size_t slen;           // bytes in s (s may hold an escaped \u0000 before slen)
    char *key;             // member of an object: its decoded key, NUL-terminated
    size_t keylen;
    struct dt_json *child; // first element / member
    struct dt_json *next;  // next sibling
    size_t n;              // number of elements / members
} dt_json;

// Parses exactly len bytes (whitespace may surround the one value). Returns the root, or
// NULL with a message such as "at byte 17: expected ':' after object key" in errbuf.
dt_json *dt_json_parse(const char *text, size_t len, char *errbuf, size_t errlen);
// The same with options: DT_JSON_REALS accepts numbers with a fraction or an exponent
// (RFC 8259's whole number grammar) as DT_JSON_REAL, converted by strtod (in the C locale,
// which dtlab's programs keep); one outside the double range is rejected.
#define DT_JSON_REALS 1u
dt_json *dt_json_parse_flags(const char *text, size_t len, unsigned flags, char *errbuf,
                             size_t errlen);
void dt_json_free(dt_json *v);

// The member of obj named key (keys are unique after parsing), or NULL.
const dt_json *dt_json_get(const dt_json *obj, const char *key);
const char *dt_json_type_name(dt_json_type t);  // "object", "string", ...

// 1 if s[0..len) is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
int dt_json_utf8_valid(const char *s, size_t len);

// ---- the writer (nn/json_write.c) ----
// Compact JSON, `{"a": 1, "b": [2.5, "x"]}`, then a newline after the outermost value.
// Calls nest as the value does; `key` names the member inside an object and is NULL
// elsewhere. Strings are escaped as RFC 8259 requires and are expected to be UTF-8. A real
// that is not finite, which JSON cannot write, is written as null; a whole one ("5") reads
// back as DT_JSON_INT, whose d is the same double. Write errors show in ferror(f).
typedef struct {
    FILE *f;
    int depth;                          // containers open
    int count[DT_JSON_MAX_DEPTH + 1];   // values written so far in each open container
    int digits;                         // significant digits of a real (init: 17, exact)
} dt_json_writer;

void dt_json_writer_init(dt_json_writer *w, FILE *f);
void dt_json_begin_object(dt_json_writer *w, const char *key);
void dt_json_end_object(dt_json_writer *w);
void dt_json_begin_array(dt_json_writer *w, const char *key);
void dt_json_end_array(dt_json_writer *w);
void dt_json_write_string(dt_json_writer *w, const char *key, const char *s);
void dt_json_write_int(dt_json_writer *w, const char *key, int64_t v);
void dt_json_write_real(dt_json_writer *w, const char *key, double v);
void dt_json_write_bool(dt_json_writer *w, const char *key, int v);  // true or false

#endif
