// bpe_train.c — learning byte-level BPE merges from a corpus (Sennrich et al. 2016, Algorithm
// 1, on bytes as GPT-2 does, Radford et al. 2019 §2.2): cut the text into GPT-2's pieces
// (nn/bpe.c), count each distinct piece once with its frequency, then repeatedly join the most
// frequent adjacent pair of tokens (ties: the smallest pair of ids, so the result is one and
// the same on every machine) inside every piece, left to right, until the vocabulary is full.
// The pair counts are kept up to date per piece that changed, and the most frequent pair is
// found through a heap whose stale entries are dropped when they surface.
#include <stdlib.h>
#include <string.h>

#include "bpe.h"

typedef struct {
    uint64_t *key;  // (a << 32 | b) + 1; 0 = empty
    int64_t *val;
    size_t cap, used;
} pairmap;

static uint64_t mix64(uint64_t x) {
    x ^= x >> 30, x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27, x *= 0x94D049BB133111EBull;
    return x ^ x >> 31;
}

static size_t pm_slot(const pairmap *m, uint64_t key) {
    size_t i = mix64(key) & (m->cap - 1);
    while (m->key[i] && m->key[i] != key) i = (i + 1) & (m->cap - 1);
    return i;
}

static void pm_grow(pairmap *m) {
    pairmap old = *m;
    m->cap = old.cap ? old.cap * 2 : 1 << 12;
    m->key = callocCheck(m->cap, sizeof *m->key);
    m->val = mallocCheck(m->cap * sizeof *m->val);
    for (size_t i = 0; i < old.cap; i++)
        if (old.key[i]) {
            size_t j = pm_slot(m, old.key[i]);
            m->key[j] = old.key[i], m->val[j] = old.val[i];
        }
    free(old.key), free(old.val);
}

// Adds d to the pair's count; returns the new count.
static int64_t pm_add(pairmap *m, uint64_t key, int64_t d) {
    if (2 * (m->used + 1) > m->cap) pm_grow(m);
    size_t i = pm_slot(m, key);
    if (!m->key[i]) m->key[i] = key, m->val[i] = 0, m->used++;
    return m->val[i] += d;
}

static int64_t pm_get(const pairmap *m, uint64_t key) {
    size_t i = pm_slot(m, key);
    return m->key[i] ? m->val[i] : 0;
}

// A max-heap of (count, key): larger count first, then the smaller key.
typedef struct {
    int64_t count;
    uint64_t key;
} entry;

typedef struct {
    entry *e;
    size_t n, cap;
} heap;

static int above(entry a, entry b) {
    return a.count > b.count || (a.count == b.count && a.key < b.key);
}

static void heap_push(heap *h, int64_t count, uint64_t key) {
    if (h->n == h->cap) {
        h->e = realloc(h->e, (h->cap = h->cap ? 2 * h->cap : 1 << 12) * sizeof *h->e);
        DT_ASSERT(h->e);
    }
    size_t i = h->n++;
    h->e[i] = (entry){count, key};
    while (i && above(h->e[i], h->e[(i - 1) / 2])) {
        entry t = h->e[i];
        h->e[i] = h->e[(i - 1) / 2], h->e[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static entry heap_pop(heap *h) {
    entry top = h->e[0];
    h->e[0] = h->e[--h->n];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, best = i;
        if (l < h->n && above(h->e[l], h->e[best])) best = l;
        if (r < h->n && above(h->e[r], h->e[best])) best = r;
        if (best == i) break;
        entry t = h->e[i];
        h->e[i] = h->e[best], h->e[best] = t;
        i = best;
    }
    return top;
}

#define KEY(a, b) (((uint64_t)(uint32_t)(a) << 32 | (uint32_t)(b)) + 1)

// The distinct pieces of the text: their bytes as the first ids, and how often each occurs.
typedef struct {
    int32_t *sym;   // every word's tokens, word w at sym[start[w] .. start[w] + len[w])
    size_t *start;
    int32_t *len;
    int64_t *freq;
    size_t n;
} words;

static void count_pieces(const uint8_t *text, size_t n, words *w) {
    size_t cap = 1 << 12, nw = 0, nsym = 0;
    size_t *slot = mallocCheck(cap * sizeof *slot);  // word index + 1; 0 = empty
    memset(slot, 0, cap * sizeof *slot);
    size_t *off = NULL, wcap = 0;  // each word's first occurrence in text
    w->len = NULL, w->freq = NULL;
    for (size_t at = 0; at < n;) {
        size_t end = dt_bpe_piece_end(text, n, at), k = end - at;
        uint64_t h = 0xCBF29CE484222325ull;
        for (size_t i = at; i < end; i++) h = (h ^ text[i]) * 0x100000001B3ull;
        size_t i = mix64(h) & (cap - 1);
        while (slot[i] && !((size_t)w->len[slot[i] - 1] == k &&
                            !memcmp(text + off[slot[i] - 1], text + at, k)))
            i = (i + 1) & (cap - 1);
        if (slot[i]) {
            w->freq[slot[i] - 1]++;
        } else {
            if (nw == wcap) {
                wcap = wcap ? 2 * wcap : 1024;
                off = realloc(off, wcap * sizeof *off);
                w->len = realloc(w->len, wcap * sizeof *w->len);
                w->freq = realloc(w->freq, wcap * sizeof *w->freq);
                DT_ASSERT(off && w->len && w->freq);
            }
            off[nw] = at, w->len[nw] = (int32_t)k, w->freq[nw] = 1, nsym += k;
            slot[i] = ++nw;
            if (2 * nw > cap) {  // rehash
                free(slot);
                cap *= 2;
                slot = callocCheck(cap, sizeof *slot);
                for (size_t j = 0; j < nw; j++) {
                    uint64_t g = 0xCBF29CE484222325ull;
                    for (size_t q = off[j]; q < off[j] + (size_t)w->len[j]; q++)
                        g = (g ^ text[q]) * 0x100000001B3ull;
                    size_t s = mix64(g) & (cap - 1);
                    while (slot[s]) s = (s + 1) & (cap - 1);
                    slot[s] = j + 1;
                }
            }
        }
        at = end;
    }
    w->n = nw;
    w->sym = mallocCheck((nsym + 1) * sizeof *w->sym);
    w->start = mallocCheck((nw + 1) * sizeof *w->start);
    for (size_t j = 0, s = 0; j < nw; s += (size_t)w->len[j], j++) {
        w->start[j] = s;
        for (int32_t q = 0; q < w->len[j]; q++) w->sym[s + (size_t)q] = text[off[j] + (size_t)q];
    }
    free(slot), free(off);
}

// Adds sign * freq for every adjacent pair of word j to the counts, pushing the new counts.
static void word_pairs(const words *w, size_t j, int64_t sign, pairmap *pm, heap *h) {
    const int32_t *s = w->sym + w->start[j];
    for (int32_t i = 0; i + 1 < w->len[j]; i++) {
        uint64_t key = KEY(s[i], s[i + 1]);
        int64_t c = pm_add(pm, key, sign * w->freq[j]);
        if (sign > 0) heap_push(h, c, key);
        else if (c > 0) heap_push(h, c, key);
    }
}

dt_bpe *dt_bpe_train(const uint8_t *text, size_t n, int vocab, dt_error *err) {
    if (vocab < 258 || vocab > DT_BPE_MAX_VOCAB)
        return dt_fail(err, DT_EXIT_USAGE, "BPE vocabulary of %d tokens: expected 258 .. %d "
                       "(256 bytes, at least one merge, and %s)", vocab, DT_BPE_MAX_VOCAB,
                       DT_BPE_EOT), NULL;
    int m = vocab - 257, done = 0;
    words w;
    count_pieces(text, n, &w);
    pairmap pm = {0};
    heap h = {0};
    for (size_t j = 0; j < w.n; j++) word_pairs(&w, j, +1, &pm, &h);
    int32_t (*pairs)[2] = mallocCheck((size_t)m * sizeof *pairs);
    while (done < m && h.n) {
        entry top = heap_pop(&h);
        if (top.count <= 0 || pm_get(&pm, top.key) != top.count) continue;  // stale
        int32_t a = (int32_t)((top.key - 1) >> 32), b = (int32_t)((top.key - 1) & 0xFFFFFFFF);
        int32_t id = 256 + done;
        pairs[done][0] = a, pairs[done][1] = b, done++;
        for (size_t j = 0; j < w.n; j++) {
            int32_t *s = w.sym + w.start[j], len = w.len[j], i = 0;
            while (i + 1 < len && !(s[i] == a && s[i + 1] == b)) i++;
            if (i + 1 >= len) continue;
            word_pairs(&w, j, -1, &pm, &h);
            int32_t o = 0;
            for (i = 0; i < len; i++) {
                if (i + 1 < len && s[i] == a && s[i + 1] == b) s[o++] = id, i++;
                else s[o++] = s[i];
            }
            w.len[j] = o;
            word_pairs(&w, j, +1, &pm, &h);
        }
    }
    dt_bpe *bpe = NULL;
    if (done < m)
        dt_fail(err, DT_EXIT_USAGE, "BPE: the corpus (%zu bytes) has only %d pairs to merge; "
                "a vocabulary of %d tokens needs %d (a larger corpus, or --vocab %d at most)",
                n, done, vocab, m, 257 + done);
    else
        bpe = dt_bpe_from_pairs((const int32_t(*)[2])pairs, m, err);
    free(pairs), free(pm.key), free(pm.val), free(h.e);
    free(w.sym), free(w.start), free(w.len), free(w.freq);
    return bpe;
}
