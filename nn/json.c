// json.c — a strict recursive-descent JSON parser (RFC 8259 grammar, see json.h) for the
// headers dtlab reads. It is small on purpose: every rule of the grammar is one function,
// and every rejection says at which byte and why.
// Not here: serialisation (json_write.c), error recovery.
#include "json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt.h"

typedef struct {
    const char *t;  // text
    size_t len, pos;
    int depth;
    unsigned flags;  // DT_JSON_REALS
    char *err;
    size_t errlen;
    int failed;
} parser;

static dt_json *parse_value(parser *p);

__attribute__((format(printf, 2, 3))) static void fail(parser *p, const char *fmt, ...) {
    if (p->failed) return;  // keep the first (innermost) reason
    p->failed = 1;
    if (!p->err || !p->errlen) return;
    int k = snprintf(p->err, p->errlen, "at byte %zu: ", p->pos);
    if (k < 0 || (size_t)k >= p->errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + k, p->errlen - (size_t)k, fmt, ap);
    va_end(ap);
}

static void skip_ws(parser *p) {
    while (p->pos < p->len) {
        char c = p->t[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static int peek(const parser *p) { return p->pos < p->len ? (unsigned char)p->t[p->pos] : -1; }

static const char *describe(int c, char *buf, size_t n) {
    if (c < 0) return "end of input";
    if (c >= 0x20 && c < 0x7f) {
        snprintf(buf, n, "'%c'", c);
    } else {
        snprintf(buf, n, "byte 0x%02x", (unsigned)c);
    }
    return buf;
}

static dt_json *new_node(dt_json_type type) {
    dt_json *v = callocCheck(1, sizeof *v);
    v->type = type;
    return v;
}

void dt_json_free(dt_json *v) {
    while (v) {  // siblings iteratively, children recursively (depth is bounded)
        dt_json *next = v->next;
        dt_json_free(v->child);
        free(v->s);
        free(v->key);
        free(v);
        v = next;
    }
}

// ---- UTF-8 (RFC 3629, Table 3-7 of the Unicode standard: well-formed byte sequences) ----
int dt_json_utf8_valid(const char *str, size_t len) {
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        unsigned lo = 0x80, hi = 0xBF;  // range of the second byte
        if (c >= 0xC2 && c <= 0xDF) {
            n = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 3;
            if (c == 0xE0) lo = 0xA0;        // no overlongs
            if (c == 0xED) hi = 0x9F;        // no surrogates
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 4;
            if (c == 0xF0) lo = 0x90;        // no overlongs
            if (c == 0xF4) hi = 0x8F;        // <= U+10FFFF
        } else {
            return 0;
        }
        if (len - i < n) return 0;
        if (s[i + 1] < lo || s[i + 1] > hi) return 0;
        for (size_t k = 2; k < n; k++) {
            if (s[i + k] < 0x80 || s[i + k] > 0xBF) return 0;
        }
        i += n;
    }
    return 1;
}

static size_t put_utf8(char *out, uint32_t cp) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static int hex4(parser *p, uint32_t *out) {
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
        int c = peek(p);
        int d;
        if (c >= '0' && c <= '9') {
            d = c - '0';
        } else if (c >= 'a' && c <= 'f') {
            d = c - 'a' + 10;
        } else if (c >= 'A' && c <= 'F') {
            d = c - 'A' + 10;
        } else {
            fail(p, "expected 4 hex digits after \\u");
            return -1;
        }
        v = v * 16 + (uint32_t)d;
        p->pos++;
    }
    *out = v;
    return 0;
}

// string = '"' *char '"'; p->pos is at the opening quote. Decoded text goes to *out.
static int parse_string(parser *p, char **out, size_t *outlen) {
    p->pos++;  // the opening quote
    size_t start = p->pos, end = start;
    while (end < p->len && p->t[end] != '"') end += (p->t[end] == '\\') ? 2 : 1;
    if (end >= p->len) {
        fail(p, "unterminated string");
        return -1;
    }
    // decoded text is never longer than its source: \uXXXX (6) -> <= 3 bytes, a pair (12) -> 4
    char *buf = mallocCheck(end - start + 1);
    size_t n = 0;
    while (p->pos < end) {
        unsigned char c = (unsigned char)p->t[p->pos];
        if (c < 0x20) {
            fail(p, "control character 0x%02x in string (must be escaped)", c);
            goto bad;
        }
        if (c != '\\') {
            buf[n++] = (char)c;
            p->pos++;
            continue;
        }
        p->pos++;
        char e = p->t[p->pos];
        const char *plain = "\"\\/bfnrt";
        const char *decoded = "\"\\/\b\f\n\r\t";
        const char *hit = e ? strchr(plain, e) : NULL;
        if (hit) {
            buf[n++] = decoded[hit - plain];
            p->pos++;
            continue;
        }
        if (e != 'u') {
            fail(p, "invalid escape '\\%c'", e >= 0x20 && e < 0x7f ? e : '?');
            goto bad;
        }
        p->pos++;
        uint32_t cp;
        if (hex4(p, &cp)) goto bad;
        if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail(p, "lone low surrogate \\u%04X", (unsigned)cp);
            goto bad;
        }
        if (cp >= 0xD800 && cp <= 0xDBFF) {  // a high surrogate must be followed by a low one
            uint32_t lo;
            if (p->pos + 2 > end || p->t[p->pos] != '\\' || p->t[p->pos + 1] != 'u') {
                fail(p, "high surrogate \\u%04X not followed by a low surrogate", (unsigned)cp);
                goto bad;
            }
            p->pos += 2;
            if (hex4(p, &lo)) goto bad;
            if (lo < 0xDC00 || lo > 0xDFFF) {
                fail(p, "high surrogate \\u%04X followed by \\u%04X", (unsigned)cp,
                     (unsigned)lo);
                goto bad;
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        n += put_utf8(buf + n, cp);
    }
    if (!dt_json_utf8_valid(buf, n)) {
        p->pos = start;
        fail(p, "string is not valid UTF-8");
        goto bad;
    }
    buf[n] = '\0';
    p->pos = end + 1;  // the closing quote
    *out = buf;
    *outlen = n;
    return 0;
bad:
    free(buf);
    return -1;
}

static int skip_digits(parser *p) {  // 1*DIGIT; how many
    int n = 0;
    while (peek(p) >= '0' && peek(p) <= '9') p->pos++, n++;
    return n;
}

// frac = '.' 1*DIGIT;  exp = ( 'e' / 'E' ) [ '-' / '+' ] 1*DIGIT;  p->pos is past the
// integer part of the number that began at `start`.
static dt_json *parse_real(parser *p, size_t start) {
    if (peek(p) == '.') {
        p->pos++;
        if (!skip_digits(p)) {
            fail(p, "expected a digit after the decimal point");
            return NULL;
        }
    }
    if (peek(p) == 'e' || peek(p) == 'E') {
        p->pos++;
        if (peek(p) == '-' || peek(p) == '+') p->pos++;
        if (!skip_digits(p)) {
            fail(p, "expected a digit in the exponent");
            return NULL;
        }
    }
    size_t n = p->pos - start;
    char *text = mallocCheck(n + 1);  // strtod needs the number NUL-terminated
    memcpy(text, p->t + start, n);
    text[n] = '\0';
    errno = 0;
    double d = strtod(text, NULL);
    free(text);
    if (errno == ERANGE && isinf(d)) {  // underflow to 0 or a subnormal is fine
        p->pos = start;
        fail(p, "number out of the double range");
        return NULL;
    }
    dt_json *v = new_node(DT_JSON_REAL);
    v->d = d;
    return v;
}

// number = [ '-' ] ( '0' / [1-9] *DIGIT ) [ frac ] [ exp ]: integers that fit int64, and
// with DT_JSON_REALS the others too
static dt_json *parse_number(parser *p) {
    size_t start = p->pos;
    int neg = 0;
    if (peek(p) == '-') {
        neg = 1;
        p->pos++;
    }
    int c = peek(p);
    if (c < '0' || c > '9') {
        fail(p, "expected a digit");
        return NULL;
    }
    uint64_t mag = 0;
    const uint64_t limit = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    if (c == '0') {
        p->pos++;
        c = peek(p);
        if (c >= '0' && c <= '9') {
            fail(p, "leading zero in number");
            return NULL;
        }
    } else {
        while ((c = peek(p)) >= '0' && c <= '9') {
            uint64_t d = (uint64_t)(c - '0');
            if (mag > (limit - d) / 10) {
                skip_digits(p);
                c = peek(p);  // a real's integer part may be larger
                if ((p->flags & DT_JSON_REALS) && (c == '.' || c == 'e' || c == 'E'))
                    return parse_real(p, start);
                p->pos = start;
                fail(p, "integer out of the int64 range");
                return NULL;
            }
            mag = mag * 10 + d;
            p->pos++;
        }
    }
    if (c == '.' || c == 'e' || c == 'E') {
        if (p->flags & DT_JSON_REALS) return parse_real(p, start);
        fail(p, "non-integer number (only integers are accepted)");
        return NULL;
    }
    dt_json *v = new_node(DT_JSON_INT);
    v->i = neg ? (mag == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)mag) : (int64_t)mag;
    v->d = (double)v->i;
    return v;
}

static dt_json *parse_literal(parser *p, const char *word, dt_json_type type, int64_t value) {
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->t + p->pos, word, n) != 0) {
        char b[16];
        fail(p, "unexpected %s", describe(peek(p), b, sizeof b));
        return NULL;
    }
    p->pos += n;
    dt_json *v = new_node(type);
    v->i = value;
    return v;
}

static int cmp_keys(const void *a, const void *b) {
    const dt_json *x = *(const dt_json *const *)a, *y = *(const dt_json *const *)b;
    size_t n = x->keylen < y->keylen ? x->keylen : y->keylen;
    int c = memcmp(x->key, y->key, n);
    if (c) return c;
    return (x->keylen > y->keylen) - (x->keylen < y->keylen);
}

// Duplicate keys make a header ambiguous (which tensor is meant?): reject them, in
// O(n log n) so that a huge header cannot make the check quadratic.
static int check_unique_keys(parser *p, const dt_json *obj) {
    if (obj->n < 2) return 0;
    const dt_json **keys = mallocCheck(obj->n * sizeof *keys);
    size_t k = 0;
    for (const dt_json *m = obj->child; m; m = m->next) keys[k++] = m;
    qsort(keys, k, sizeof *keys, cmp_keys);
    int rc = 0;
    for (size_t i = 1; i < k; i++) {
        if (cmp_keys(&keys[i - 1], &keys[i]) == 0) {
            fail(p, "duplicate key \"%.100s\" in object", keys[i]->key);
            rc = -1;
            break;
        }
    }
    free(keys);
    return rc;
}

// array = '[' [ value *( ',' value ) ] ']';  object = '{' [ member *( ',' member ) ] '}'
static dt_json *parse_container(parser *p, int is_object) {
    char close = is_object ? '}' : ']';
    dt_json *v = new_node(is_object ? DT_JSON_OBJECT : DT_JSON_ARRAY);
    dt_json **tail = &v->child;
    if (++p->depth > DT_JSON_MAX_DEPTH) {
        fail(p, "nesting deeper than %d", DT_JSON_MAX_DEPTH);
        goto bad;
    }
    p->pos++;  // the opening bracket
    skip_ws(p);
    if (peek(p) == close) {
        p->pos++;
        p->depth--;
        return v;
    }
    for (;;) {
        char *key = NULL;
        size_t keylen = 0;
        char b[16];
        skip_ws(p);
        if (is_object) {
            if (peek(p) != '"') {
                fail(p, "expected a string key, found %s", describe(peek(p), b, sizeof b));
                goto bad;
            }
            if (parse_string(p, &key, &keylen)) goto bad;
            skip_ws(p);
            if (peek(p) != ':') {
                free(key);
                fail(p, "expected ':' after object key, found %s",
                     describe(peek(p), b, sizeof b));
                goto bad;
            }
            p->pos++;
        }
        dt_json *elem = parse_value(p);
        if (!elem) {
            free(key);
            goto bad;
        }
        elem->key = key;
        elem->keylen = keylen;
        *tail = elem;
        tail = &elem->next;
        v->n++;
        skip_ws(p);
        int c = peek(p);
        if (c == ',') {
            p->pos++;
            continue;
        }
        if (c == close) {
            p->pos++;
            break;
        }
        fail(p, "expected ',' or '%c', found %s", close, describe(c, b, sizeof b));
        goto bad;
    }
    if (is_object && check_unique_keys(p, v)) goto bad;
    p->depth--;
    return v;
bad:
    dt_json_free(v);
    return NULL;
}

static dt_json *parse_value(parser *p) {
    skip_ws(p);
    int c = peek(p);
    char b[16];
    switch (c) {
    case '{': return parse_container(p, 1);
    case '[': return parse_container(p, 0);
    case '"': {
        char *s;
        size_t n;
        if (parse_string(p, &s, &n)) return NULL;
        dt_json *v = new_node(DT_JSON_STRING);
        v->s = s;
        v->slen = n;
        return v;
    }
    case 't': return parse_literal(p, "true", DT_JSON_BOOL, 1);
    case 'f': return parse_literal(p, "false", DT_JSON_BOOL, 0);
    case 'n': return parse_literal(p, "null", DT_JSON_NULL, 0);
    default:
        if (c == '-' || (c >= '0' && c <= '9')) return parse_number(p);
        fail(p, "expected a value, found %s", describe(c, b, sizeof b));
        return NULL;
    }
}

dt_json *dt_json_parse(const char *text, size_t len, char *errbuf, size_t errlen) {
    return dt_json_parse_flags(text, len, 0, errbuf, errlen);
}

dt_json *dt_json_parse_flags(const char *text, size_t len, unsigned flags, char *errbuf,
                             size_t errlen) {
    parser p = {text, len, 0, 0, flags, errbuf, errlen, 0};
    if (errbuf && errlen) errbuf[0] = '\0';
    if (!text) len = p.len = 0;
    dt_json *v = parse_value(&p);
    if (!v) return NULL;
    skip_ws(&p);
    if (p.pos != len) {
        char b[16];
        fail(&p, "unexpected %s after the JSON value", describe(peek(&p), b, sizeof b));
        dt_json_free(v);
        return NULL;
    }
    return v;
}

const dt_json *dt_json_get(const dt_json *obj, const char *key) {
    if (!obj || obj->type != DT_JSON_OBJECT) return NULL;
    size_t n = strlen(key);
    for (const dt_json *m = obj->child; m; m = m->next) {
        if (m->keylen == n && memcmp(m->key, key, n) == 0) return m;
    }
    return NULL;
}

const char *dt_json_type_name(dt_json_type t) {
    switch (t) {
    case DT_JSON_NULL: return "null";
    case DT_JSON_BOOL: return "boolean";
    case DT_JSON_INT: return "integer";
    case DT_JSON_STRING: return "string";
    case DT_JSON_ARRAY: return "array";
    case DT_JSON_OBJECT: return "object";
    case DT_JSON_REAL: return "real number";
    }
    return "?";
}
