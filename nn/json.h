// json.h — a small, strict JSON parser (RFC 8259) for file headers that dtlab reads, such as
// the safetensors header: objects, arrays, strings (with every escape, \uXXXX surrogate pairs
// included, and UTF-8 validated), integers, true, false and null. Anything malformed is
// rejected with a message giving the byte offset: trailing commas, leading zeros, control
// characters in strings, lone surrogates, duplicate object keys, nesting deeper than
// DT_JSON_MAX_DEPTH, integers outside int64, trailing garbage.
// Not here: fractions and exponents (no dtlab header needs them; they are rejected as
// "non-integer number"), writing JSON, streaming, comments.
#ifndef DT_JSON_H
#define DT_JSON_H

#include <stddef.h>
#include <stdint.h>

#define DT_JSON_MAX_DEPTH 64

typedef enum {
    DT_JSON_NULL,
    DT_JSON_BOOL,
    DT_JSON_INT,
    DT_JSON_STRING,
    DT_JSON_ARRAY,
    DT_JSON_OBJECT,
} dt_json_type;

// A parsed value. Arrays and objects keep their elements as a singly linked list of children
// (members of an object carry their key), in the order of the text.
typedef struct dt_json {
    dt_json_type type;
    int64_t i;             // DT_JSON_INT value; DT_JSON_BOOL 0 or 1
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
void dt_json_free(dt_json *v);

// The member of obj named key (keys are unique after parsing), or NULL.
const dt_json *dt_json_get(const dt_json *obj, const char *key);
const char *dt_json_type_name(dt_json_type t);  // "object", "string", ...

// 1 if s[0..len) is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
int dt_json_utf8_valid(const char *s, size_t len);

#endif
