// dataset.h — the data core that real runs (dtrain, real/data.h's readers) and the
// simulator's cpu-device runs (dtsim --device cpu) share: the dataset type, deterministic
// synthetic data, examples and batches, and the seeded per-epoch shuffle sharded over
// data-parallel ranks (nn/data_dataset.c, nn/data_synthetic.c, nn/data_shard.c). The
// readers of files (Fashion-MNIST idx, image folders) and the image transform are real
// runs' alone: real/data.h.
//
// Not here: MPI (a rank only needs its rank number and the rank count), device memory, and
// any global state: every function is a pure function of its arguments or of the dataset
// it is given, so two ranks in one process, or two loader threads, never interfere.
// Conventions: images are NCHW float32, one example is (c,h,w) contiguous; labels are int32
// in [0, num_classes); indices are int64 in [0, n); every failure caused by the input
// returns an error with code DT_EXIT_USAGE (2) whose message names what was expected.
#ifndef DT_DATASET_H
#define DT_DATASET_H

#include <stdint.h>

#include "dt.h"

typedef struct dt_dataset dt_dataset;

// How a dataset produces example `index` into x (c,h,w). aug_seed drives the random
// augmentation (ignored where there is none). Must be safe to call from several threads.
typedef struct dt_dataset_ops {
    int (*get)(const dt_dataset *ds, int64_t index, uint64_t aug_seed, float *x, dt_error *err);
    void (*destroy)(dt_dataset *ds);  // frees ds->impl only
} dt_dataset_ops;

struct dt_dataset {
    char name[96];        // "fashion-mnist/train", "synthetic", "folder:/data/imagenet/train"
    int64_t n;            // number of examples
    int c, h, w;          // shape of one example as delivered (after any crop)
    int num_classes;
    int train;            // 1: random augmentation (folder: random crop + flip); 0: none
    int32_t *labels;      // (n), in [0, num_classes)
    // In-memory uint8 datasets (idx): pixels (n,c,h,w); delivered as (p/255 - mean[c])/std[c].
    // NULL for datasets produced on demand (folder, synthetic). mean/std may be changed by
    // the caller before use (e.g. MNIST's 0.1307/0.3081); the folder reader uses them too.
    uint8_t *pixels;
    float mean[3], std[3];
    dt_dataset_ops ops;   // by value: nn/ keeps no static table of pointers
    void *impl;           // the implementation's own state
};

// Deterministic synthetic data with a learnable class signal: label i = a hash of (seed, i)
// mod classes; x = 0.5 * pattern(label) + uniform noise of unit variance, where pattern is a
// +-1 value per channel on a 4x4 grid of blocks (a nearest-class-mean classifier separates
// the classes; images smaller than 4x4 have fewer distinct blocks). The patterns depend on
// the class only: another seed draws other examples of the same task (a held-out set).
// Generated on demand, so (n, 3, 224, 224) costs no memory.
dt_dataset *dt_dataset_synthetic(int64_t n, int c, int h, int w, int classes, uint64_t seed,
                                 dt_error *err);

void dt_dataset_free(dt_dataset *ds);  // NULL is fine

// Text for the gpt models (nn/data_text.c): the file at path (or a directory: its regular
// files in name order, symbolic links and *.dat skipped, each followed by a newline), its
// last val_fraction of bytes held out (contiguous) as *val and the rest as *train. Tokens are
// its bytes (ids 0..255) or, with a BPE tokenizer (nn/bpe.h), its byte-level BPE ids, each
// split encoded on its own. Example i of a split is the T+1 tokens from i*T (T = seq_len;
// (len-1)/T examples), delivered as floats (1, 1, T+1): the input is the first T, the
// targets the last T (dt_text_example_tokens); labels are 0. Returns 0, or -1 with err
// (DT_EXIT_USAGE) naming the file: unreadable, empty, or a split shorter than T+1 tokens.
struct dt_bpe;
typedef struct {
    int seq_len;            // T
    int vocab;              // the model's vocabulary (>= 256; >= the tokenizer's)
    double val_fraction;    // in (0, 1)
    struct dt_bpe **bpe;    // *bpe: encode with it; NULL *bpe and bpe_vocab > 0: learn one
    int bpe_vocab;          //   of bpe_vocab tokens from the training split into *bpe
    double val_bytes_per_token;  // out: the validation split's (1 for bytes)
} dt_text_opts;
int dt_dataset_text(const char *path, dt_text_opts *o, dt_dataset **train,
                    dt_dataset **val, dt_error *err);
// The text at path (a file, or a directory as above) into *buf (malloc'ed), *len bytes.
int dt_text_read(const char *path, uint8_t **buf, size_t *len, dt_error *err);
// A split of len token ids (tok, malloc'ed: the dataset owns it), windows as above.
dt_dataset *dt_dataset_tokens(const char *name, const char *which, int32_t *tok, int64_t len,
                              int T, int vocab);
// With on, window i of train starts at i*T plus 0..T-1 tokens drawn from its aug_seed (so
// from (seed, epoch, i): the same on every rank count), moved back where it would pass the
// split's end; off (the default), at i*T.
void dt_text_random_offsets(dt_dataset *train, int on);
// One example x (T+1 floats, as dt_dataset_text delivers it) into tokens[T] and targets[T].
void dt_text_example_tokens(const float *x, int T, int32_t *tokens, int32_t *targets);

// ---- examples and batches ----

// The augmentation seed of example `index` in `epoch` of a run seeded `seed`: results never
// depend on which thread produced them or when.
uint64_t dt_aug_seed(uint64_t seed, int64_t epoch, int64_t index);
// Example index into x (c,h,w) and *label. 0, or -1 with err (index out of range, bad image).
int dt_dataset_get(const dt_dataset *ds, int64_t index, uint64_t aug_seed, float *x,
                   int32_t *label, dt_error *err);
// A batch: x is (b,c,h,w), labels (b), example j = idx[j] with aug seed
// dt_aug_seed(seed, epoch, idx[j]). threads > 1 decodes examples in parallel (OpenMP);
// the result does not depend on threads. 0, or -1 with err (the first failing example).
int dt_dataset_fill(const dt_dataset *ds, const int64_t *idx, int b, uint64_t seed,
                    int64_t epoch, int threads, float *x, int32_t *labels, dt_error *err);
// Per-channel mean and standard deviation of an in-memory uint8 dataset's pixels, in [0,1]
// units, over all n examples (float64 sums). -1 with err if ds has no pixels.
int dt_dataset_pixel_stats(const dt_dataset *ds, double *mean, double *std, dt_error *err);

// ---- sampling: one seeded shuffle per epoch, sharded over ranks ----

// perm (n): a uniformly random permutation of 0..n-1 that depends only on (seed, epoch):
// Fisher-Yates (Knuth vol. 2, Alg. P) driven by nn/kernels.h dt_mix64 (no rand()).
void dt_epoch_permutation(uint64_t seed, int64_t epoch, int64_t n, int64_t *perm);
// Steps per epoch with global batch G: floor(n/G) when drop_last (the last n mod G examples
// of each epoch's permutation are not used that epoch; a different set every epoch), else
// ceil(n/G).
int64_t dt_steps_per_epoch(int64_t n, int global_batch, int drop_last);
// The indices rank `rank` of `ranks` uses at `step` of the epoch whose permutation is perm:
// out[j] = perm[step*G + rank*(G/P) + j], j < G/P (G % P == 0 is required). Without
// drop_last the final partial step splits its R = n - step*G examples into P contiguous
// parts of R/P or R/P+1 (the first R mod P ranks get one more; a part may be empty).
// Over all steps and ranks every index is used exactly once (drop_last: except the
// remainder). Returns the number of indices written (<= G/P), or -1 with err.
int dt_shard_indices(const int64_t *perm, int64_t n, int global_batch, int ranks, int rank,
                     int drop_last, int64_t step, int64_t *out, dt_error *err);

#endif
