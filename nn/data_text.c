// data_text.c — a text file as next-token training data for the gpt models, byte-level
// (each byte is one token, ids 0..255, as GPT-2's byte-level BPE starts from bytes before
// merging, Radford et al. 2019 §2.2; here nothing is merged). The file is split once: its
// first part trains and its last val_fraction is held out for validation, contiguous, as
// nanoGPT's character-level Shakespeare does (90 / 10). Each split is cut into
// non-overlapping windows of T tokens: example i holds the T+1 tokens starting at i*T, the
// first T the model's input and the last T its targets (the same tokens shifted by one),
// delivered as floats (1, 1, T+1) so that the image pipeline (the seeded shuffle sharded
// over the ranks, nn/data_shard.c, and real/loader.c's prefetching) carries them unchanged.
// A directory is read as one text: its regular files in name order (symbolic links and
// fortune's *.dat indexes skipped), each followed by a newline. The training split may
// start each window at a random offset (dt_text_random_offsets: nanoGPT samples its
// windows at random; here window i moves by a seeded 0..T-1 tokens each epoch, so an epoch
// still covers the split once and every rank count draws the same windows).
// With a byte-level BPE tokenizer (nn/bpe.h: given, or learned from the training split
// alone) each split is encoded on its own and the windows are of tokens, not bytes.
// Not here: documents of their own (a window may span two texts).
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bpe.h"
#include "dataset.h"
#include "kernels.h"

typedef struct {
    int32_t *tok;    // this split's token ids (owned)
    int64_t len;
    int T;           // tokens per example (the targets add one)
    int random;      // training windows at a seeded random offset (dt_text_random_offsets)
} text_split;

static int text_get(const dt_dataset *ds, int64_t index, uint64_t aug_seed, float *x,
                    dt_error *err) {
    (void)aug_seed;
    (void)err;
    const text_split *s = ds->impl;
    int64_t at = index * s->T;  // index < n = (len - 1) / T: in range
    if (s->random && s->T > 1) {  // moved by 0..T-1 tokens, kept inside the split
        at += (int64_t)(dt_mix64(aug_seed ^ 0x7E47ull) % (uint64_t)s->T);
        if (at + s->T + 1 > s->len) at = s->len - s->T - 1;
    }
    const int32_t *p = s->tok + at;
    for (int k = 0; k <= s->T; k++) x[k] = (float)p[k];
    return 0;
}

static void text_destroy(dt_dataset *ds) {
    text_split *s = ds->impl;
    if (s) free(s->tok);
    free(s);
}


dt_dataset *dt_dataset_tokens(const char *name, const char *which, int32_t *tok, int64_t len,
                              int T, int vocab) {
    dt_dataset *ds = callocCheck(1, sizeof *ds);
    const char *base = strrchr(name, '/');
    snprintf(ds->name, sizeof ds->name, "%.80s/%s", base && base[1] ? base + 1 : name, which);
    ds->n = (len - 1) / T;
    ds->c = 1, ds->h = 1, ds->w = T + 1;
    ds->num_classes = vocab;
    ds->labels = callocCheck((size_t)ds->n, sizeof(int32_t));  // unused: the targets are in x
    for (int k = 0; k < 3; k++) ds->mean[k] = 0.0f, ds->std[k] = 1.0f;
    text_split *s = callocCheck(1, sizeof *s);
    s->tok = tok, s->len = len, s->T = T;
    ds->impl = s;
    ds->ops = (dt_dataset_ops){text_get, text_destroy};
    return ds;
}

// A split of the text: its bytes as ids, or encoded by bpe; *len its tokens
static int32_t *tokens_of(const uint8_t *bytes, int64_t n, const dt_bpe *bpe, int64_t *len) {
    int32_t *tok = mallocCheck((size_t)(n > 0 ? n : 1) * sizeof *tok);
    if (bpe) {
        *len = (int64_t)dt_bpe_encode(bpe, bytes, (size_t)n, tok);
    } else {
        for (int64_t i = 0; i < n; i++) tok[i] = bytes[i];
        *len = n;
    }
    return tok;
}

// Appends the bytes of the file at path to *buf (*len bytes, *cap allocated). 0, or -1.
static int append_file(const char *path, uint8_t **buf, size_t *len, size_t *cap, dt_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return dt_fail(err, DT_EXIT_USAGE, "text corpus %s: cannot open it: %s (expected a "
                       "readable text file)", path, strerror(errno));
    int oom = 0;
    for (size_t got; !oom && (got = fread(*buf + *len, 1, *cap - *len, f)) > 0;) {
        *len += got;
        if (*len == *cap) {
            uint8_t *grown = realloc(*buf, *cap * 2);
            if (grown) *buf = grown, *cap *= 2;
            else oom = 1;
        }
    }
    int failed = ferror(f) || oom;
    fclose(f);
    if (failed)
        return dt_fail(err, DT_EXIT_USAGE, "text corpus %s: cannot read it (an I/O error, or "
                       "larger than memory?)", path);
    return 0;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int dt_text_read(const char *path, uint8_t **buf, size_t *len, dt_error *err) {
    size_t cap = 1 << 16;
    *buf = mallocCheck(cap), *len = 0;
    struct stat st;
    if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
        if (append_file(path, buf, len, &cap, err)) return free(*buf), *buf = NULL, -1;
        return 0;
    }
    DIR *d = opendir(path);
    if (!d) {
        free(*buf), *buf = NULL;
        return dt_fail(err, DT_EXIT_USAGE, "text corpus %s: cannot list the directory: %s",
                       path, strerror(errno));
    }
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t k = strlen(e->d_name);
        char full[4200];
        struct stat ls;
        snprintf(full, sizeof full, "%s/%s", path, e->d_name);
        if (e->d_name[0] == '.' || (k > 4 && !strcmp(e->d_name + k - 4, ".dat")) ||
            lstat(full, &ls) || !S_ISREG(ls.st_mode))
            continue;
        char **more = realloc(names, (n + 1) * sizeof *names);
        if (!more) break;  // (then read what was listed)
        names = more;
        if ((names[n] = strdup(full))) n++;
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, by_name);  // (names is NULL when n is 0)
    int rc = n ? 0 : dt_fail(err, DT_EXIT_USAGE, "text corpus %s: the directory holds no "
                             "regular file to read", path);
    for (size_t i = 0; i < n; i++) {
        if (!rc && (rc = append_file(names[i], buf, len, &cap, err)) == 0) {
            uint8_t *grown = *len == cap ? realloc(*buf, cap * 2) : *buf;
            if (!grown) rc = dt_fail(err, DT_EXIT_USAGE, "text corpus %s: larger than memory",
                                     path);
            else if (*len == cap) *buf = grown, cap *= 2;
            if (!rc) (*buf)[(*len)++] = '\n';
        }
        free(names[i]);
    }
    free(names);
    if (rc) free(*buf), *buf = NULL;
    return rc;
}

void dt_text_random_offsets(dt_dataset *train, int on) {
    ((text_split *)train->impl)->random = on;
}

int dt_dataset_text(const char *path, dt_text_opts *o, dt_dataset **train,
                    dt_dataset **val, dt_error *err) {
    *train = *val = NULL;
    int seq_len = o->seq_len;
    if (seq_len < 1 || seq_len > (1 << 24))
        return dt_fail(err, DT_EXIT_USAGE, "text corpus %s: sequence length %d, expected "
                       "1 .. 2^24 tokens", path, seq_len);
    if (o->vocab < 256)
        return dt_fail(err, DT_EXIT_USAGE, "text corpus %s: byte-level tokens need a "
                       "vocabulary of 256 or more; the model has %d", path, o->vocab);
    if (!(o->val_fraction > 0.0 && o->val_fraction < 1.0))
        return dt_fail(err, DT_EXIT_USAGE, "text corpus %s: validation fraction %g, expected "
                       "in (0, 1)", path, o->val_fraction);
    uint8_t *buf = NULL;
    size_t len = 0;
    if (dt_text_read(path, &buf, &len, err)) return -1;
    if (len == 0) {
        free(buf);
        return dt_fail(err, DT_EXIT_USAGE, "text corpus %s is empty (expected text to train "
                       "on)", path);
    }
    int64_t n_val = (int64_t)((double)len * o->val_fraction), n_train = (int64_t)len - n_val;
    dt_bpe *bpe = o->bpe ? *o->bpe : NULL;
    if (!bpe && o->bpe_vocab > 0) {  // learned from the training split only
        if (!(bpe = dt_bpe_train(buf, (size_t)n_train, o->bpe_vocab, err))) {
            size_t l = strlen(err->msg);
            snprintf(err->msg + l, sizeof err->msg - l, " (text corpus %s)", path);
            free(buf);
            return -1;
        }
        *o->bpe = bpe;
    }
    int64_t nt, nv;
    int32_t *tt = tokens_of(buf, n_train, bpe, &nt);
    int32_t *tv = tokens_of(buf + n_train, n_val, bpe, &nv);
    free(buf);
    if (nt < seq_len + 1 || nv < seq_len + 1) {
        free(tt), free(tv);
        return dt_fail(err, DT_EXIT_USAGE, "text corpus %s: %zu bytes split %lld%s for "
                       "training and %lld for validation; a sequence of %d tokens needs %d %s "
                       "in each (a longer text, or a shorter --seq-len)", path, len,
                       (long long)nt, bpe ? " tokens" : "", (long long)nv, seq_len,
                       seq_len + 1, bpe ? "tokens" : "bytes");
    }
    o->val_bytes_per_token = (double)n_val / (double)nv;
    *train = dt_dataset_tokens(path, "train", tt, nt, seq_len, o->vocab);
    *val = dt_dataset_tokens(path, "val", tv, nv, seq_len, o->vocab);
    return 0;
}

void dt_text_example_tokens(const float *x, int T, int32_t *tokens, int32_t *targets) {
    for (int k = 0; k < T; k++) {
        tokens[k] = (int32_t)x[k];
        targets[k] = (int32_t)x[k + 1];
    }
}
