// bpe.c — GPT-2's byte-level BPE (nn/bpe.h): the pre-tokenizer's pattern, the byte-to-unicode
// alphabet of its files, encoding by merge rank as GPT-2's encoder.py does it (in a piece,
// join every occurrence of the lowest-ranked pair, left to right, until no pair has a rank),
// and merges.txt / vocab.json in and out. Learning the merges: nn/bpe_train.c.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpe.h"
#include "json.h"

struct dt_bpe {
    int m;                // merges; the vocabulary is 256 + m + 1 (<|endoftext|>)
    int32_t (*pairs)[2];  // merge r joins ids pairs[r][0], pairs[r][1] into 256 + r
    uint32_t *off, *len;  // token id's bytes: pool[off[id] .. off[id] + len[id])
    uint8_t *pool;
    uint64_t *rank_key;   // open addressing: (a << 32 | b) + 1 -> rank_val; 0 = empty
    int32_t *rank_val;
    size_t rank_cap;      // a power of two, at least twice m
};

// ---- the pre-tokenizer: GPT-2's pattern, by hand ----

// The code point at s[i] and its length in bytes; an invalid or truncated sequence is one
// byte of no class (0xFFFFFFFF).
static uint32_t utf8_at(const uint8_t *s, size_t n, size_t i, int *len) {
    uint8_t c = s[i];
    int k = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3
            : (c & 0xF8) == 0xF0 ? 4 : 0;
    *len = 1;
    if (k == 1) return c;
    if (k == 0 || i + (size_t)k > n) return 0xFFFFFFFFu;
    uint32_t cp = c & (0x7F >> k);
    for (int j = 1; j < k; j++) {
        if ((s[i + j] & 0xC0) != 0x80) return 0xFFFFFFFFu;
        cp = cp << 6 | (s[i + j] & 0x3F);
    }
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};  // no overlong forms
    if (cp < least[k] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0xFFFFFFFFu;
    *len = k;
    return cp;
}

static dt_uni_class class_at(const uint8_t *s, size_t n, size_t i, int *len) {
    uint32_t cp = utf8_at(s, n, i, len);
    return cp == 0xFFFFFFFFu ? DT_UNI_OTHER : dt_uni_class_of(cp);
}

// The end of the run of class c that starts at i.
static size_t run_end(const uint8_t *s, size_t n, size_t i, dt_uni_class c) {
    int len;
    while (i < n && class_at(s, n, i, &len) == c) i += (size_t)len;
    return i;
}

size_t dt_bpe_piece_end(const uint8_t *s, size_t n, size_t at) {
    if (s[at] == '\'' && at + 1 < n) {  // 's|'t|'re|'ve|'m|'ll|'d
        uint8_t a = s[at + 1], b = at + 2 < n ? s[at + 2] : 0;
        if (a == 's' || a == 't' || a == 'm' || a == 'd') return at + 2;
        if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
            return at + 3;
    }
    int len;
    size_t j = s[at] == ' ' && at + 1 < n ? at + 1 : at;  // ' ?' before a run of a class
    dt_uni_class c = class_at(s, n, j, &len);
    if (c != DT_UNI_SPACE) return run_end(s, n, j, c);
    size_t end = run_end(s, n, at, DT_UNI_SPACE);  // \s+(?!\S) | \s+
    if (end == n) return end;
    size_t last = at;  // the start of the run's last character
    for (size_t i = at; i < end; i += (size_t)len) {
        last = i;
        class_at(s, n, i, &len);
    }
    return last > at ? last : end;
}

// ---- GPT-2's byte-to-unicode alphabet (encoder.py bytes_to_unicode) ----

static int byte_printable(int b) {
    return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
}

static uint32_t byte_cp(int b) {
    if (byte_printable(b)) return (uint32_t)b;
    int k = 0;
    for (int x = 0; x < b; x++) k += !byte_printable(x);
    return 256u + (uint32_t)k;
}

static int cp_byte(uint32_t cp) {  // the inverse; -1 outside the alphabet
    if (cp < 256) return byte_printable((int)cp) ? (int)cp : -1;
    for (int b = 0, k = 0; b < 256; b++)
        if (!byte_printable(b) && 256u + (uint32_t)k++ == cp) return b;
    return -1;
}

// Appends token bytes p[0..n) in the alphabet to out (room for 2n + 1), NUL-terminated.
static size_t put_alphabet(const uint8_t *p, int n, char *out) {
    size_t o = 0;
    for (int i = 0; i < n; i++) {
        uint32_t cp = byte_cp(p[i]);
        if (cp < 0x80) out[o++] = (char)cp;
        else out[o++] = (char)(0xC0 | cp >> 6), out[o++] = (char)(0x80 | (cp & 0x3F));
    }
    out[o] = 0;
    return o;
}

// Text in the alphabet -> bytes (room for n); the count, or -1 at a foreign character.
static int from_alphabet(const char *s, size_t n, uint8_t *out) {
    int o = 0, len;
    for (size_t i = 0; i < n; i += (size_t)len) {
        int b = cp_byte(utf8_at((const uint8_t *)s, n, i, &len));
        if (b < 0) return -1;
        out[o++] = (uint8_t)b;
    }
    return o;
}

// ---- the tokenizer ----

static uint64_t mix(uint64_t x) {  // splitmix64's finalizer
    x ^= x >> 30, x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27, x *= 0x94D049BB133111EBull;
    return x ^ x >> 31;
}

static int32_t rank_of(const dt_bpe *b, int32_t x, int32_t y) {
    uint64_t key = ((uint64_t)(uint32_t)x << 32 | (uint32_t)y) + 1;
    for (size_t i = mix(key) & (b->rank_cap - 1);; i = (i + 1) & (b->rank_cap - 1)) {
        if (b->rank_key[i] == key) return b->rank_val[i];
        if (b->rank_key[i] == 0) return -1;
    }
}

dt_bpe *dt_bpe_from_pairs(const int32_t (*pairs)[2], int m, dt_error *err) {
    if (m < 1 || m > DT_BPE_MAX_VOCAB - 257)
        return dt_fail(err, DT_EXIT_USAGE, "BPE: %d merges, expected 1 .. %d", m,
                       DT_BPE_MAX_VOCAB - 257), NULL;
    dt_bpe *b = callocCheck(1, sizeof *b);
    int v = 256 + m + 1;
    b->m = m;
    b->pairs = mallocCheck((size_t)m * sizeof *b->pairs);
    b->off = mallocCheck((size_t)v * sizeof *b->off);
    b->len = mallocCheck((size_t)v * sizeof *b->len);
    for (b->rank_cap = 16; b->rank_cap < 2 * (size_t)m; b->rank_cap *= 2) {}
    b->rank_key = callocCheck(b->rank_cap, sizeof *b->rank_key);
    b->rank_val = mallocCheck(b->rank_cap * sizeof *b->rank_val);
    size_t total = 256 + sizeof DT_BPE_EOT;
    for (int r = 0; r < m; r++) {
        int32_t x = pairs[r][0], y = pairs[r][1];
        if (x < 0 || y < 0 || x >= 256 + r || y >= 256 + r) {
            dt_bpe_free(b);
            return dt_fail(err, DT_EXIT_USAGE, "BPE merge %d joins ids %d and %d: each must "
                           "be a token made before it (below %d)", r, x, y, 256 + r), NULL;
        }
        b->pairs[r][0] = x, b->pairs[r][1] = y;
        b->len[256 + r] = (x < 256 ? 1 : b->len[x]) + (y < 256 ? 1 : b->len[y]);
        total += b->len[256 + r];
        if (total > (1u << 31)) {
            dt_bpe_free(b);
            return dt_fail(err, DT_EXIT_USAGE, "BPE: tokens of more than 2 GB"), NULL;
        }
    }
    b->pool = mallocCheck(total);
    for (int i = 0; i < 256; i++) b->off[i] = (uint32_t)i, b->len[i] = 1, b->pool[i] = (uint8_t)i;
    uint32_t at = 256;
    for (int r = 0; r < m; r++) {
        int32_t x = pairs[r][0], y = pairs[r][1], id = 256 + r;
        b->off[id] = at;
        memcpy(b->pool + at, b->pool + b->off[x], b->len[x]);
        memcpy(b->pool + at + b->len[x], b->pool + b->off[y], b->len[y]);
        at += b->len[id];
        uint64_t key = ((uint64_t)(uint32_t)x << 32 | (uint32_t)y) + 1;
        size_t i = mix(key) & (b->rank_cap - 1);
        while (b->rank_key[i] && b->rank_key[i] != key) i = (i + 1) & (b->rank_cap - 1);
        if (b->rank_key[i]) {
            dt_bpe_free(b);
            return dt_fail(err, DT_EXIT_USAGE, "BPE merge %d joins ids %d and %d, which merge "
                           "%d joined already", r, x, y, b->rank_val[i]), NULL;
        }
        b->rank_key[i] = key, b->rank_val[i] = r;
    }
    b->off[v - 1] = at, b->len[v - 1] = sizeof DT_BPE_EOT - 1;
    memcpy(b->pool + at, DT_BPE_EOT, sizeof DT_BPE_EOT - 1);
    return b;
}

void dt_bpe_free(dt_bpe *b) {
    if (!b) return;
    free(b->pairs), free(b->off), free(b->len), free(b->pool);
    free(b->rank_key), free(b->rank_val);
    free(b);
}

int dt_bpe_vocab(const dt_bpe *b) { return 256 + b->m + 1; }
int dt_bpe_eot(const dt_bpe *b) { return 256 + b->m; }

const uint8_t *dt_bpe_token(const dt_bpe *b, int id, int *len) {
    if (id < 0 || id >= dt_bpe_vocab(b)) return NULL;
    *len = (int)b->len[id];
    return b->pool + b->off[id];
}

// One piece's ids in place: ids[0..n) hold its bytes; returns the count left.
static size_t merge_piece(const dt_bpe *b, int32_t *ids, size_t n) {
    while (n > 1) {
        int32_t best = -1;
        for (size_t i = 0; i + 1 < n; i++) {
            int32_t r = rank_of(b, ids[i], ids[i + 1]);
            if (r >= 0 && (best < 0 || r < best)) best = r;
        }
        if (best < 0) break;
        int32_t x = b->pairs[best][0], y = b->pairs[best][1];
        size_t o = 0;
        for (size_t i = 0; i < n; i++) {
            if (i + 1 < n && ids[i] == x && ids[i + 1] == y) ids[o++] = 256 + best, i++;
            else ids[o++] = ids[i];
        }
        n = o;
    }
    return n;
}

size_t dt_bpe_encode(const dt_bpe *b, const uint8_t *text, size_t n, int32_t *ids) {
    size_t out = 0;
    for (size_t at = 0; at < n;) {
        size_t end = dt_bpe_piece_end(text, n, at);
        for (size_t i = at; i < end; i++) ids[out + i - at] = text[i];
        out += merge_piece(b, ids + out, end - at);
        at = end;
    }
    return out;
}

// ---- the files ----

char *dt_bpe_merges_text(const dt_bpe *b) {
    size_t cap = 32;
    for (int r = 0; r < b->m; r++) cap += 2 * (size_t)b->len[256 + r] + 2;
    char *s = mallocCheck(cap), *p = s;
    p += sprintf(p, "#version: 0.2\n");
    for (int r = 0; r < b->m; r++) {
        for (int k = 0; k < 2; k++) {
            int id = b->pairs[r][k];
            p += put_alphabet(b->pool + b->off[id], (int)b->len[id], p);
            *p++ = k ? '\n' : ' ';
        }
    }
    *p = 0;
    return s;
}

char *dt_bpe_vocab_json(const dt_bpe *b) {
    int v = dt_bpe_vocab(b);
    size_t cap = 64;
    for (int id = 0; id < v; id++) cap += 4 * (size_t)b->len[id] + 16;
    char *s = mallocCheck(cap), *p = s, *tok = mallocCheck(cap);
    *p++ = '{';
    for (int id = 0; id < v; id++) {
        if (id == v - 1) strcpy(tok, DT_BPE_EOT);
        else put_alphabet(b->pool + b->off[id], (int)b->len[id], tok);
        *p++ = '"';
        for (const char *c = tok; *c; c++) {  // only " and \ need escapes in the alphabet
            if (*c == '"' || *c == '\\') *p++ = '\\';
            *p++ = *c;
        }
        p += sprintf(p, "\": %d%s", id, id + 1 < v ? ", " : "}\n");
    }
    *p = 0;
    free(tok);
    return s;
}

// Token bytes -> id while merges.txt is read: open addressing over the tokens made so far.
typedef struct {
    uint8_t *pool;
    size_t used, pool_cap;
    uint32_t *off, *len;  // per id
    int32_t *slot;        // cap slots of ids, -1 empty
    size_t cap;
    int n;                // ids so far
} bytemap;

static uint64_t hash_bytes(const uint8_t *p, size_t n) {
    uint64_t h = 0xCBF29CE484222325ull;  // FNV-1a
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001B3ull;
    return mix(h);
}

static size_t bytemap_find(const bytemap *t, const uint8_t *p, size_t n) {
    size_t i = hash_bytes(p, n) & (t->cap - 1);
    for (; t->slot[i] >= 0; i = (i + 1) & (t->cap - 1)) {
        int32_t id = t->slot[i];
        if (t->len[id] == n && !memcmp(t->pool + t->off[id], p, n)) break;
    }
    return i;
}

static void bytemap_grow(bytemap *t) {
    int32_t *old = t->slot;
    size_t old_cap = t->cap;
    t->cap = old_cap ? old_cap * 2 : 1024;
    t->slot = mallocCheck(t->cap * sizeof *t->slot);
    memset(t->slot, 0xFF, t->cap * sizeof *t->slot);
    t->off = realloc(t->off, t->cap * sizeof *t->off);
    t->len = realloc(t->len, t->cap * sizeof *t->len);
    DT_ASSERT(t->off && t->len);
    for (size_t i = 0; i < old_cap; i++)
        if (old[i] >= 0)
            t->slot[bytemap_find(t, t->pool + t->off[old[i]], t->len[old[i]])] = old[i];
    free(old);
}

// The id of p[0..n), added as the next id when add is set and it is new; -1 if absent.
static int32_t bytemap_id(bytemap *t, const uint8_t *p, size_t n, int add) {
    size_t i = bytemap_find(t, p, n);
    if (t->slot[i] >= 0 || !add) return t->slot[i];
    if (2 * (size_t)(t->n + 1) > t->cap) bytemap_grow(t), i = bytemap_find(t, p, n);
    while (t->used + n > t->pool_cap) {
        t->pool = realloc(t->pool, t->pool_cap = 2 * t->pool_cap + n);
        DT_ASSERT(t->pool);
    }
    memcpy(t->pool + t->used, p, n);
    t->off[t->n] = (uint32_t)t->used, t->len[t->n] = (uint32_t)n;
    t->used += n;
    return t->slot[i] = t->n++;
}

dt_bpe *dt_bpe_from_merges(const char *text, size_t len, const char *what, dt_error *err) {
    bytemap t = {0};
    bytemap_grow(&t);
    for (int i = 0; i < 256; i++) {
        uint8_t c = (uint8_t)i;
        bytemap_id(&t, &c, 1, 1);
    }
    int cap = 1024, m = 0, line = 0, bad = 0;
    int32_t (*pairs)[2] = mallocCheck((size_t)cap * sizeof *pairs);
    uint8_t *bytes = NULL;
    for (size_t at = 0; at < len && !bad;) {
        const char *s = text + at, *nl = memchr(s, '\n', len - at);
        size_t n = nl ? (size_t)(nl - s) : len - at;
        at += n + 1, line++;
        if (n && s[n - 1] == '\r') n--;
        if (n == 0 || (line == 1 && n >= 8 && !strncmp(s, "#version", 8))) continue;
        const char *sp = memchr(s, ' ', n);
        int show = n < 40 ? (int)n : 40;  // the line in a message (not NUL-terminated)
        bytes = realloc(bytes, n + 1);
        DT_ASSERT(bytes);
        int la = sp ? from_alphabet(s, (size_t)(sp - s), bytes) : -1;
        int lb = sp && la > 0 ? from_alphabet(sp + 1, n - (size_t)(sp - s) - 1, bytes + la) : -1;
        int32_t x = lb > 0 ? bytemap_id(&t, bytes, (size_t)la, 0) : -1;
        int32_t y = lb > 0 ? bytemap_id(&t, bytes + la, (size_t)lb, 0) : -1;
        if (x < 0 || y < 0)
            bad = dt_fail(err, DT_EXIT_USAGE, "%s line %d: expected two tokens made before "
                          "it, in GPT-2's byte alphabet, separated by one space (\"%.*s\")",
                          what, line, show, s);
        else if (m + 258 > DT_BPE_MAX_VOCAB)
            bad = dt_fail(err, DT_EXIT_USAGE, "%s: more than %d merges", what,
                          DT_BPE_MAX_VOCAB - 258);
        else if (bytemap_id(&t, bytes, (size_t)(la + lb), 0) >= 0)
            bad = dt_fail(err, DT_EXIT_USAGE, "%s line %d: makes a token that an earlier line "
                          "or a byte made already (\"%.*s\")", what, line, show, s);
        if (bad) break;
        bytemap_id(&t, bytes, (size_t)(la + lb), 1);
        if (m == cap) pairs = realloc(pairs, (size_t)(cap *= 2) * sizeof *pairs);
        DT_ASSERT(pairs);
        pairs[m][0] = x, pairs[m][1] = y, m++;
    }
    dt_bpe *b = NULL;
    if (!bad && m == 0) dt_fail(err, DT_EXIT_USAGE, "%s holds no merge", what);
    else if (!bad) b = dt_bpe_from_pairs((const int32_t(*)[2])pairs, m, err);
    free(bytes), free(pairs);
    free(t.pool), free(t.off), free(t.len), free(t.slot);
    return b;
}

int dt_bpe_check_vocab_json(const dt_bpe *b, const char *json, size_t len, const char *what,
                            dt_error *err) {
    char msg[200];
    dt_json *root = dt_json_parse(json, len, msg, sizeof msg);
    if (!root) return dt_fail(err, DT_EXIT_USAGE, "%s: not JSON: %s", what, msg);
    int v = dt_bpe_vocab(b), rc = 0;
    if (root->type != DT_JSON_OBJECT || root->n != (size_t)v)
        rc = dt_fail(err, DT_EXIT_USAGE, "%s: expected an object of %d tokens (merges.txt's), "
                     "found %s of %zu", what, v, dt_json_type_name(root->type), root->n);
    uint8_t *bytes = mallocCheck(len + 1);
    for (const dt_json *e = root->child; !rc && e; e = e->next) {
        int n = strcmp(e->key, DT_BPE_EOT) ? from_alphabet(e->key, e->keylen, bytes) : -2;
        int want = n == -2 ? v - 1 : -1, tl = 0;
        const uint8_t *tok = n > 0 && e->type == DT_JSON_INT ? dt_bpe_token(b, (int)e->i, &tl)
                                                            : NULL;
        if (n > 0 && tok && tl == n && !memcmp(tok, bytes, (size_t)n) && e->i < v - 1) continue;
        if (want >= 0 && e->type == DT_JSON_INT && e->i == want) continue;
        rc = dt_fail(err, DT_EXIT_USAGE, "%s: token \"%.40s\" has id %lld, not the id dtrain "
                     "gives it (bytes 0..255 as ids 0..255, merge r as 256 + r, %s last): "
                     "a vocabulary numbered another way is not read", what, e->key,
                     (long long)e->i, DT_BPE_EOT);
    }
    free(bytes);
    dt_json_free(root);
    return rc;
}
