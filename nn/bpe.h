// bpe.h — GPT-2's byte-level BPE tokenizer (Sennrich et al. 2016, "Neural Machine
// Translation of Rare Words with Subword Units"; Radford et al. 2019 §2.2): trained on a
// corpus, saved and read as Hugging Face's vocab.json and merges.txt, encoding and decoding.
// Ids: byte b is id b (0..255), merge r makes id 256 + r, and the last id is GPT-2's
// <|endoftext|> (never produced by encoding text). Text is first cut by GPT-2's pattern
// (encoder.py): 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// and merges never cross a piece. Bytes that are not valid UTF-8 count as "other" characters.
// Not here: where the corpus comes from (nn/data_text.c), the model.
#ifndef DT_BPE_H
#define DT_BPE_H

#include <stddef.h>
#include <stdint.h>

#include "dt.h"

typedef enum { DT_UNI_OTHER, DT_UNI_LETTER, DT_UNI_NUMBER, DT_UNI_SPACE } dt_uni_class;
dt_uni_class dt_uni_class_of(uint32_t cp);  // nn/bpe_unicode.c (generated)

#define DT_BPE_MAX_VOCAB (1 << 20)
#define DT_BPE_EOT "<|endoftext|>"

typedef struct dt_bpe dt_bpe;

// The end of the pre-tokenizer's piece that starts at text[at] (at < n): > at.
size_t dt_bpe_piece_end(const uint8_t *text, size_t n, size_t at);

// Learns vocab - 257 merges from text (most frequent adjacent pair first, ties to the
// smallest pair of ids): NULL with err when vocab is outside 258 .. DT_BPE_MAX_VOCAB or the
// text has fewer distinct pairs to merge.
dt_bpe *dt_bpe_train(const uint8_t *text, size_t n, int vocab, dt_error *err);
// From merges.txt's text (the "#version" line optional, one "A B" pair a line, A and B in
// GPT-2's byte-to-unicode alphabet, each a token made before): NULL with err naming where.
dt_bpe *dt_bpe_from_merges(const char *merges, size_t len, const char *what, dt_error *err);
// From m merges, pairs[r] = the ids (each < 256 + r) that merge r joins (nn/bpe_train.c).
dt_bpe *dt_bpe_from_pairs(const int32_t (*pairs)[2], int m, dt_error *err);
void dt_bpe_free(dt_bpe *b);

int dt_bpe_vocab(const dt_bpe *b);  // ids 0 .. vocab - 1
int dt_bpe_eot(const dt_bpe *b);    // vocab - 1
// Token ids of text into ids[] (room for n: a token holds at least one byte); returns the count.
size_t dt_bpe_encode(const dt_bpe *b, const uint8_t *text, size_t n, int32_t *ids);
// The bytes of token id (DT_BPE_EOT for the last); NULL for an id out of range.
const uint8_t *dt_bpe_token(const dt_bpe *b, int id, int *len);

// merges.txt (with its "#version: 0.2" line) and vocab.json, as Hugging Face's GPT-2 files
// hold them; malloc'ed, NUL-terminated text.
char *dt_bpe_merges_text(const dt_bpe *b);
char *dt_bpe_vocab_json(const dt_bpe *b);
// 0 if vocab.json (len bytes) gives every token the id this tokenizer gives it, else -1 with
// err (dtrain reads its own files, not a vocabulary numbered another way).
int dt_bpe_check_vocab_json(const dt_bpe *b, const char *json, size_t len, const char *what,
                            dt_error *err);

// ---- files (nn/bpe_files.c) ----
// DIR/merges.txt, checked against DIR/vocab.json when that exists; NULL with err.
dt_bpe *dt_bpe_load_dir(const char *dir, dt_error *err);
// DIR (made if missing)/merges.txt, vocab.json and tokenizer_config.json; 0 or -1.
int dt_bpe_save_dir(const dt_bpe *b, const char *dir, dt_error *err);
// A shard of token ids: raw little-endian uint16 (nanoGPT's train.bin); 0 or -1 (an id
// outside 0..65535 writes nothing).
int dt_tokens_write(const char *path, const int32_t *ids, size_t n, dt_error *err);
// The shard at path, every id checked below vocab: malloc'ed ids and *n, or NULL with err.
int32_t *dt_tokens_read(const char *path, int vocab, int64_t *n, dt_error *err);

#endif
