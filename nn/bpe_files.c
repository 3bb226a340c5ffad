// bpe_files.c — a tokenizer directory as Hugging Face keeps GPT-2's (vocab.json and
// merges.txt, which GPT2TokenizerFast.from_pretrained reads), and shards of token ids as
// nanoGPT writes them (train.bin, val.bin: raw little-endian uint16, prepared once and read
// by every run). Every file is written atomically (nn/atomic_file.h).
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic_file.h"
#include "bpe.h"

// The whole file at path (at most max bytes) into *buf, NUL-terminated; 0, 1 if it does
// not exist (when optional), or -1 with err.
static int slurp(const char *path, size_t max, int optional, char **buf, size_t *len,
                 dt_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (optional && errno == ENOENT) return 1;
        return dt_fail(err, DT_EXIT_USAGE, "%.300s: cannot open: %s", path, strerror(errno));
    }
    size_t cap = 1 << 16, n = 0;
    char *b = mallocCheck(cap + 1);
    for (size_t got; (got = fread(b + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap && cap <= max) {
            b = realloc(b, (cap *= 2) + 1);
            DT_ASSERT(b);
        }
        if (n > max) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad || n > max) {
        free(b);
        return dt_fail(err, DT_EXIT_USAGE, "%.300s: %s", path,
                       bad ? "cannot read it" : "larger than a tokenizer file can be");
    }
    b[n] = 0;
    *buf = b, *len = n;
    return 0;
}

dt_bpe *dt_bpe_load_dir(const char *dir, dt_error *err) {
    char path[4200], *text = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/merges.txt", dir);
    if (slurp(path, (size_t)1 << 30, 0, &text, &len, err)) return NULL;
    dt_bpe *b = dt_bpe_from_merges(text, len, path, err);
    free(text);
    snprintf(path, sizeof path, "%s/vocab.json", dir);
    int rc = b ? slurp(path, (size_t)1 << 30, 1, &text, &len, err) : -1;
    if (rc == 0) {
        rc = dt_bpe_check_vocab_json(b, text, len, path, err);
        free(text);
    }
    if (rc < 0) dt_bpe_free(b), b = NULL;
    return b;
}

static int write_text(const char *dir, const char *name, const char *text, dt_error *err) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    dt_atomic_file a;
    if (dt_atomic_open(&a, path, name, err)) return -1;
    fputs(text, a.f);
    if (dt_atomic_finish(&a, err)) return -1;
    return dt_atomic_commit(&a, err);
}

int dt_bpe_save_dir(const dt_bpe *b, const char *dir, dt_error *err) {
    if (mkdir(dir, 0777) && errno != EEXIST)
        return dt_fail(err, DT_EXIT_USAGE, "%.300s: cannot make the directory: %s", dir,
                       strerror(errno));
    char *merges = dt_bpe_merges_text(b), *vocab = dt_bpe_vocab_json(b);
    char config[400];
    snprintf(config, sizeof config, "{\"tokenizer_class\": \"GPT2Tokenizer\", "
             "\"model_max_length\": 1024, \"add_prefix_space\": false, \"bos_token\": \"%s\", "
             "\"eos_token\": \"%s\", \"unk_token\": \"%s\"}\n", DT_BPE_EOT, DT_BPE_EOT,
             DT_BPE_EOT);
    int rc = write_text(dir, "merges.txt", merges, err) || write_text(dir, "vocab.json", vocab, err)
             || write_text(dir, "tokenizer_config.json", config, err) ? -1 : 0;
    free(merges), free(vocab);
    return rc;
}

int dt_tokens_write(const char *path, const int32_t *ids, size_t n, dt_error *err) {
    dt_atomic_file a;
    if (dt_atomic_open(&a, path, "token shard", err)) return -1;
    uint8_t buf[8192];
    for (size_t i = 0; i < n;) {
        size_t k = 0;
        for (; i < n && k < sizeof buf; i++) {
            if (ids[i] < 0 || ids[i] > 0xFFFF) {
                dt_atomic_abort(&a);
                return dt_fail(err, DT_EXIT_USAGE, "%.300s: token id %d does not fit a uint16 "
                               "shard (a vocabulary of at most 65,536)", path, (int)ids[i]);
            }
            buf[k++] = (uint8_t)(ids[i] & 0xFF), buf[k++] = (uint8_t)(ids[i] >> 8);
        }
        fwrite(buf, 1, k, a.f);
    }
    if (dt_atomic_finish(&a, err)) return -1;
    return dt_atomic_commit(&a, err);
}

int32_t *dt_tokens_read(const char *path, int vocab, int64_t *n, dt_error *err) {
    char *raw = NULL;
    size_t len = 0;
    if (slurp(path, (size_t)1 << 34, 0, &raw, &len, err)) return NULL;
    if (len % 2 || len < 4) {
        free(raw);
        return dt_fail(err, DT_EXIT_USAGE, "%.300s: %zu bytes: a shard holds uint16 token "
                       "ids, two bytes each, at least two of them", path, len), NULL;
    }
    int32_t *ids = mallocCheck(len / 2 * sizeof *ids);
    const uint8_t *p = (const uint8_t *)raw;
    for (size_t i = 0; i < len / 2; i++) {
        ids[i] = p[2 * i] | p[2 * i + 1] << 8;
        if (ids[i] >= vocab) {
            int32_t bad = ids[i];
            free(raw), free(ids);
            return dt_fail(err, DT_EXIT_USAGE, "%.300s: token %zu is id %d, outside the "
                           "tokenizer's vocabulary of %d (a shard of another tokenizer?)",
                           path, i, (int)bad, vocab), NULL;
        }
    }
    free(raw);
    *n = (int64_t)(len / 2);
    return ids;
}
