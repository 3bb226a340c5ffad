// dttok.c — the byte-level BPE tokenizer of the gpt models (nn/bpe.h) as a program, for the
// steps nanoGPT's prepare.py and Hugging Face's tokenizers do before training:
//   dttok train   --vocab N --out DIR CORPUS   learn N tokens; DIR/vocab.json, merges.txt
//   dttok prepare --vocab N --out DIR CORPUS   the same from CORPUS's first 90 %, and its
//                                              token shards DIR/train.bin and DIR/val.bin
//                                              (dtrain --data tokens:DIR reads them)
//   dttok encode DIR [FILE]                    token ids of FILE (or stdin), one line
//   dttok decode DIR [FILE]                    the text of ids (whitespace-separated)
//   dttok pieces [FILE]                        how GPT-2's pattern cuts FILE (or stdin)
//                                              before any merge: each piece's bytes
// CORPUS is a file or a directory (its files in name order), as dtrain's --data text:.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpe.h"
#include "dataset.h"

#define VAL_FRACTION 0.1  // dtrain's: the corpus's last 10 % validates

static void usage(FILE *f) {
    fprintf(f, "usage: dttok train   --vocab N --out DIR CORPUS\n"
               "       dttok prepare --vocab N --out DIR CORPUS\n"
               "       dttok encode DIR [FILE]\n"
               "       dttok decode DIR [FILE]\n"
               "       dttok pieces [FILE]\n"
               "GPT-2's byte-level BPE for dtrain's gpt models (docs/dtrain.md).\n"
               "  train    learn N tokens (258 .. %d: 256 bytes, N - 257 merges and\n"
               "           <|endoftext|>) from CORPUS (a file, or a directory's files in name\n"
               "           order); write DIR/vocab.json and DIR/merges.txt (Hugging Face's)\n"
               "  prepare  the same from CORPUS's first 90 %%, and the token shards\n"
               "           DIR/train.bin and DIR/val.bin (uint16, nanoGPT's; N <= 65536)\n"
               "           that dtrain --data tokens:DIR reads\n"
               "  encode   FILE's (or stdin's) token ids, one line\n"
               "  decode   the text of token ids (FILE or stdin, whitespace-separated)\n"
               "  pieces   how GPT-2's pattern cuts the text before any merge: the bytes of\n"
               "           each piece, one line of numbers\n", DT_BPE_MAX_VOCAB);
}

static int fail(const dt_error *err) {
    fprintf(stderr, "dttok: %s\n", err->msg);
    return err->code ? err->code : 2;
}

static int learn(int argc, char **argv, int prepare) {
    int vocab = 0;
    const char *out = NULL, *corpus = NULL;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--vocab") && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            vocab = *end || v < 258 || v > (prepare ? 65536 : DT_BPE_MAX_VOCAB) ? -1 : (int)v;
        } else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
            out = argv[++i];
        } else if (argv[i][0] != '-' && !corpus) {
            corpus = argv[i];
        } else {
            fprintf(stderr, "dttok %s: unknown or incomplete option '%s'\n", argv[1], argv[i]);
            return 2;
        }
    }
    if (vocab <= 0 || !out || !corpus) {
        fprintf(stderr, "dttok %s: needs --vocab N (258 .. %d), --out DIR and a CORPUS\n",
                argv[1], prepare ? 65536 : DT_BPE_MAX_VOCAB);
        return 2;
    }
    dt_error err = {0, ""};
    uint8_t *text = NULL;
    size_t len = 0;
    if (dt_text_read(corpus, &text, &len, &err)) return fail(&err);
    size_t n_val = prepare ? (size_t)((double)len * VAL_FRACTION) : 0, n_train = len - n_val;
    double t0 = dt_now_s();
    dt_bpe *b = dt_bpe_train(text, n_train, vocab, &err);
    double learned = dt_now_s() - t0;
    int rc = b ? dt_bpe_save_dir(b, out, &err) : -1;
    int64_t counts[2] = {0, 0};
    for (int s = 0; prepare && !rc && s < 2; s++) {  // each split encoded on its own
        const uint8_t *p = text + (s ? n_train : 0);
        size_t n = s ? n_val : n_train;
        int32_t *ids = mallocCheck((n ? n : 1) * sizeof *ids);
        counts[s] = (int64_t)dt_bpe_encode(b, p, n, ids);
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", out, s ? "val.bin" : "train.bin");
        rc = dt_tokens_write(path, ids, (size_t)counts[s], &err);
        free(ids);
    }
    free(text);
    dt_bpe_free(b);
    if (rc) return fail(&err);
    printf("dttok: %d tokens learned from %zu bytes of %s in %.1f s; %s/vocab.json, "
           "merges.txt\n", vocab, n_train, corpus, learned, out);
    if (prepare)
        printf("dttok: %s/train.bin %lld tokens (%.2f bytes per token), val.bin %lld tokens\n",
               out, (long long)counts[0], counts[0] ? (double)n_train / (double)counts[0] : 0,
               (long long)counts[1]);
    return 0;
}

// The file at path (stdin when NULL) into a NUL-terminated buffer; NULL if it cannot be opened
static uint8_t *read_input(const char *cmd, const char *path, size_t *len) {
    FILE *f = path ? fopen(path, "rb") : stdin;
    if (!f) {
        fprintf(stderr, "dttok %s: %s: cannot open: %s\n", cmd, path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *text = mallocCheck(cap + 1);
    for (size_t got; (got = fread(text + n, 1, cap - n, f)) > 0;)
        if ((n += got) == cap) {
            text = realloc(text, (cap *= 2) + 1);
            DT_ASSERT(text);
        }
    if (f != stdin) fclose(f);
    text[n] = 0;
    *len = n;
    return text;
}

static int pieces(int argc, char **argv) {
    size_t n;
    uint8_t *text = argc <= 3 ? read_input(argv[1], argc == 3 ? argv[2] : NULL, &n) : NULL;
    if (!text) return argc <= 3 ? 2 : (usage(stderr), 2);
    for (size_t at = 0, end; at < n; at = end) {
        end = dt_bpe_piece_end(text, n, at);
        printf("%s%zu", at ? " " : "", end - at);
    }
    printf("\n");
    free(text);
    return 0;
}

static int code(int argc, char **argv, int decode) {
    if (argc < 3 || argc > 4) {
        usage(stderr);
        return 2;
    }
    dt_error err = {0, ""};
    dt_bpe *b = dt_bpe_load_dir(argv[2], &err);
    if (!b) return fail(&err);
    size_t n;
    uint8_t *text = read_input(argv[1], argc == 4 ? argv[3] : NULL, &n);
    if (!text) {
        dt_bpe_free(b);
        return 2;
    }
    int rc = 0;
    if (decode) {
        char *p = (char *)text, *end;
        for (long id; (id = strtol(p, &end, 10)), end != p; p = end) {
            int len;
            const uint8_t *tok = id >= 0 && id <= 0x7FFFFFFF ? dt_bpe_token(b, (int)id, &len)
                                                             : NULL;
            if (!tok) {
                fprintf(stderr, "dttok decode: id %ld is outside the vocabulary of %d\n", id,
                        dt_bpe_vocab(b));
                rc = 2;
                break;
            }
            fwrite(tok, 1, (size_t)len, stdout);
        }
        while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
        if (!rc && *p) {
            fprintf(stderr, "dttok decode: expected token ids, found \"%.20s\"\n", p);
            rc = 2;
        }
    } else {
        int32_t *ids = mallocCheck((n ? n : 1) * sizeof *ids);
        size_t k = dt_bpe_encode(b, text, n, ids);
        for (size_t i = 0; i < k; i++) printf("%s%d", i ? " " : "", (int)ids[i]);
        printf("\n");
        free(ids);
    }
    free(text);
    dt_bpe_free(b);
    return rc;
}

int main(int argc, char **argv) {
    const char *cmd = argc > 1 ? argv[1] : "";
    if (!strcmp(cmd, "train") || !strcmp(cmd, "prepare")) return learn(argc, argv, cmd[0] == 'p');
    if (!strcmp(cmd, "encode") || !strcmp(cmd, "decode")) return code(argc, argv, cmd[0] == 'd');
    if (!strcmp(cmd, "pieces")) return pieces(argc, argv);
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) return usage(stdout), 0;
    usage(stderr);
    return 2;
}
