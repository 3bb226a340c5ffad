// data_text.c — a text file as next-token training data for the gpt models, byte-level
// (each byte is one token, ids 0..255, as GPT-2's byte-level BPE starts from bytes before
// merging, Radford et al. 2019 §2.2; here nothing is merged). The file is split once: its
// first part trains and its last val_fraction is held out for validation, contiguous, as
// nanoGPT's character-level Shakespeare does (90 / 10). Each split is cut into
// non-overlapping windows of T tokens: example i holds the T+1 tokens starting at i*T, the
// first T the model's input and the last T its targets (the same tokens shifted by one),
// delivered as floats (1, 1, T+1) so that the image pipeline (the seeded shuffle sharded
// over the ranks, nn/data_shard.c, and real/loader.c's prefetching) carries them unchanged.
// Not here: a tokenizer with merges, documents of their own (a window may span two texts).
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset.h"

typedef struct {
    uint8_t *bytes;  // this split's tokens (owned)
    int64_t len;
    int T;           // tokens per example (the targets add one)
} text_split;

static int text_get(const dt_dataset *ds, int64_t index, uint64_t aug_seed, float *x,
                    dt_error *err) {
    (void)aug_seed;
    (void)err;
    const text_split *s = ds->impl;
    const uint8_t *p = s->bytes + index * s->T;  // index < n = (len - 1) / T: in range
    for (int k = 0; k <= s->T; k++) x[k] = (float)p[k];
    return 0;
}

static void text_destroy(dt_dataset *ds) {
    text_split *s = ds->impl;
    if (s) free(s->bytes);
    free(s);
}


static dt_dataset *make_split(const char *path, const char *which, const uint8_t *bytes,
                              int64_t len, int T, int vocab) {
    dt_dataset *ds = callocCheck(1, sizeof *ds);
    const char *base = strrchr(path, '/');
    snprintf(ds->name, sizeof ds->name, "%.80s/%s", base ? base + 1 : path, which);
    ds->n = (len - 1) / T;
    ds->c = 1, ds->h = 1, ds->w = T + 1;
    ds->num_classes = vocab;
    ds->labels = callocCheck((size_t)ds->n, sizeof(int32_t));  // unused: the targets are in x
    for (int k = 0; k < 3; k++) ds->mean[k] = 0.0f, ds->std[k] = 1.0f;
    text_split *s = callocCheck(1, sizeof *s);
    s->bytes = mallocCheck((size_t)len);
    memcpy(s->bytes, bytes, (size_t)len);
    s->len = len, s->T = T;
    ds->impl = s;
    ds->ops = (dt_dataset_ops){text_get, text_destroy};
    return ds;
}

int dt_dataset_text(const char *path, int seq_len, int vocab, double val_fraction,
                    dt_dataset **train, dt_dataset **val, dt_error *err) {
    *train = *val = NULL;
    if (seq_len < 1 || seq_len > (1 << 24))
        return dt_fail(err, DT_EXIT_USAGE, "text corpus %s: sequence length %d, expected "
                       "1 .. 2^24 tokens", path, seq_len);
    if (vocab < 256)
        return dt_fail(err, DT_EXIT_USAGE, "text corpus %s: byte-level tokens need a "
                       "vocabulary of 256 or more; the model has %d", path, vocab);
    if (!(val_fraction > 0.0 && val_fraction < 1.0))
        return dt_fail(err, DT_EXIT_USAGE, "text corpus %s: validation fraction %g, expected "
                       "in (0, 1)", path, val_fraction);
    FILE *f = fopen(path, "rb");
    if (!f)
        return dt_fail(err, DT_EXIT_USAGE, "text corpus %s: cannot open it: %s (expected a "
                       "readable text file)", path, strerror(errno));
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = mallocCheck(cap);
    int oom = 0;
    for (size_t got; (got = fread(buf + len, 1, cap - len, f)) > 0;) {
        len += got;
        if (len == cap) {
            uint8_t *grown = realloc(buf, cap * 2);
            if (!grown) {
                oom = 1;
                break;
            }
            buf = grown, cap *= 2;
        }
    }
    int failed = ferror(f) || oom;
    fclose(f);
    if (failed) {
        free(buf);
        return dt_fail(err, DT_EXIT_USAGE, "text corpus %s: cannot read it (a directory, an "
                       "I/O error, or larger than memory?)", path);
    }
    if (len == 0) {
        free(buf);
        return dt_fail(err, DT_EXIT_USAGE, "text corpus %s is empty (expected text to train "
                       "on)", path);
    }
    int64_t n_val = (int64_t)((double)len * val_fraction), n_train = (int64_t)len - n_val;
    if (n_train < seq_len + 1 || n_val < seq_len + 1) {
        free(buf);
        return dt_fail(err, DT_EXIT_USAGE, "text corpus %s: %zu bytes split %lld for "
                       "training and %lld for validation; a sequence of %d tokens needs %d "
                       "bytes in each (a longer text, or a shorter --seq-len)", path, len,
                       (long long)n_train, (long long)n_val, seq_len, seq_len + 1);
    }
    *train = make_split(path, "train", buf, n_train, seq_len, vocab);
    *val = make_split(path, "val", buf + n_train, n_val, seq_len, vocab);
    free(buf);
    return 0;
}

void dt_text_example_tokens(const float *x, int T, int32_t *tokens, int32_t *targets) {
    for (int k = 0; k < T; k++) {
        tokens[k] = (int32_t)x[k];
        targets[k] = (int32_t)x[k + 1];
    }
}
