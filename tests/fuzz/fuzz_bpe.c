// fuzz_bpe.c — nn/bpe*.c, the readers of a tokenizer's files and of any text: the input's
// first byte picks what its rest is. 0: merges.txt (read; then the rest of the input is
// also checked as its vocab.json); 1: vocab.json against a tokenizer of two merges; else a
// corpus to learn (256 + the byte's value) tokens from. Whatever is read or learned then
// encodes the input, and the tokens' bytes must be the input again (lossless). A rejection
// is DT_EXIT_USAGE with a message naming the file; never a crash or a read past the input.
#include <stdlib.h>
#include <string.h>

#include "bpe.h"
#include "fuzz.h"

static void lossless(const dt_bpe *b, const uint8_t *t, size_t n) {
    int32_t *ids = malloc((n ? n : 1) * sizeof *ids);
    size_t k = dt_bpe_encode(b, t, n, ids), at = 0;
    for (size_t i = 0; i < k; i++) {
        int len = 0;
        const uint8_t *tok = dt_bpe_token(b, ids[i], &len);
        if (!tok || at + (size_t)len > n || memcmp(tok, t + at, (size_t)len)) abort();
        at += (size_t)len;
    }
    if (at != n) abort();
    free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 1 << 16) return 0;
    const uint8_t *rest = data + 1;
    size_t n = size - 1;
    dt_error err = {0, ""};
    dt_bpe *b = NULL;
    if (data[0] == 0) {
        b = dt_bpe_from_merges((const char *)rest, n, "merges.txt", &err);
        fuzz_verdict("merges.txt", b ? 0 : -1, &err, "merges.txt");
        if (b) {
            int rc = dt_bpe_check_vocab_json(b, (const char *)rest, n, "vocab.json", &err);
            fuzz_verdict("vocab.json", rc, &err, "vocab.json");
        }
    } else if (data[0] == 1) {
        static const char two[] = "#version: 0.2\nh e\nhe y\n";
        b = dt_bpe_from_merges(two, sizeof two - 1, "two", &err);
        if (!b) abort();
        int rc = dt_bpe_check_vocab_json(b, (const char *)rest, n, "vocab.json", &err);
        fuzz_verdict("vocab.json", rc, &err, "vocab.json");
    } else {
        b = dt_bpe_train(rest, n, 256 + data[0], &err);
        if (!b && (err.code != DT_EXIT_USAGE || !strstr(err.msg, "BPE"))) abort();
    }
    if (b) {
        lossless(b, rest, n);
        char *m = dt_bpe_merges_text(b);  // and its own files read back
        dt_bpe *again = dt_bpe_from_merges(m, strlen(m), "own merges", &err);
        if (!again || dt_bpe_vocab(again) != dt_bpe_vocab(b)) abort();
        dt_bpe_free(again);
        free(m);
    }
    dt_bpe_free(b);
    return 0;
}
