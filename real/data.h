// data.h — training data in host memory for real runs (dtrain): datasets (Fashion-MNIST idx
// files, ImageNet-style image folders, deterministic synthetic data), the per-example
// transform (decode, resize, crop, flip, normalise), and the seeded per-epoch shuffle sharded
// over data-parallel ranks. The prefetching thread that turns these into batches is in
// real/loader.h.
//
// Not here: MPI (a rank only needs its rank number and the rank count), device memory, and
// any global state: every function is a pure function of its arguments or of the dataset
// it is given, so two ranks in one process, or two loader threads, never interfere.
//
// Conventions: images are NCHW float32, one example is (c,h,w) contiguous; labels are int32
// in [0, num_classes); indices are int64 in [0, n); every failure caused by the input (a
// file, a size, an option) returns an error with code DT_EXIT_USAGE (2) whose message names
// the file or argument and what was expected.
#ifndef DT_DATA_H
#define DT_DATA_H

#include <stdint.h>

#include "dt.h"

// Which optional image formats this build decodes (real/CMakeLists.txt defines them 0 or 1).
#ifndef DT_HAVE_PNG
#define DT_HAVE_PNG 0
#endif
#ifndef DT_HAVE_TURBOJPEG
#define DT_HAVE_TURBOJPEG 0
#endif

#define DT_FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"
// Pixel statistics of the Fashion-MNIST training set (values in [0,1]), used to normalise
// both splits; tests/unit/test_data_idx.c recomputes them from the files.
#define DT_FASHION_MNIST_MEAN 0.2860f
#define DT_FASHION_MNIST_STD 0.3530f
// ImageNet per-channel RGB statistics as torchvision's reference training scripts use them.
#define DT_IMAGENET_MEAN {0.485f, 0.456f, 0.406f}
#define DT_IMAGENET_STD {0.229f, 0.224f, 0.225f}

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
    const dt_dataset_ops *ops;
    void *impl;           // the implementation's own state
};

// ---- constructors (NULL and err set on failure); free with dt_dataset_free ----

// Fashion-MNIST (or MNIST) idx files: dir/<split>-images-idx3-ubyte.gz (magic 0x803, then
// big-endian n, rows, cols, then n*rows*cols uint8) and dir/<split>-labels-idx1-ubyte.gz
// (magic 0x801, n, then n uint8 labels < 10). The uncompressed names (no .gz) are tried when
// the .gz file is absent. dir NULL: DT_FASHION_MNIST_DIR. split: "train" or "t10k".
// Validates magic, dims, matching counts, labels < 10, truncation, gzip CRC and trailing data.
dt_dataset *dt_dataset_load_idx(const char *dir, const char *split, dt_error *err);

// ImageNet-style folder: root/<class>/<file>.png|.jpg|.jpeg (case-insensitive extension;
// other files ignored). Classes are the sorted subdirectory names (label = position); files
// are sorted by name within a class. Images are decoded on demand in dt_dataset_get.
typedef struct dt_folder_opts {
    int resize;       // shorter side after resizing, pixels (0: 256)
    int crop;         // square output side (0: 224); resize >= crop
    int train;        // 1: random crop + random horizontal flip; 0: center crop
    float mean[3], std[3];  // normalisation of RGB in [0,1]; all zero: ImageNet's
} dt_folder_opts;
dt_dataset *dt_dataset_folder(const char *root, const dt_folder_opts *opts, dt_error *err);

// Deterministic synthetic data with a learnable class signal: label i = a hash of (seed, i)
// mod classes; x = 0.5 * pattern(label) + uniform noise of unit variance, where pattern is a
// +-1 value per channel on a 4x4 grid of blocks (a nearest-class-mean classifier separates
// the classes; images smaller than 4x4 have fewer distinct blocks). The patterns depend on
// the class only: another seed draws other examples of the same task (a held-out set).
// Generated on demand, so (n, 3, 224, 224) costs no memory.
dt_dataset *dt_dataset_synthetic(int64_t n, int c, int h, int w, int classes, uint64_t seed,
                                 dt_error *err);

void dt_dataset_free(dt_dataset *ds);  // NULL is fine

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

// ---- the image transform (used by the folder dataset; exposed for tests and users) ----

// Decode a PNG (any bit depth, grey, palette, alpha: alpha is dropped, 16-bit is rounded to
// 8) or a JPEG (grey, YCbCr, CMYK) file, recognised by its signature, to 8-bit RGB (h,w,3)
// interleaved, malloc'd into *rgb. 0, or -1 with err naming the file (code 2).
int dt_image_decode(const char *path, uint8_t **rgb, int *h, int *w, dt_error *err);
// Output size of resizing (h,w) so that the shorter side is `resize` (torchvision's
// Resize(int): the longer side is truncated, int(resize * long / short)).
void dt_image_resized_size(int h, int w, int resize, int *rh, int *rw);
// rgb (h,w,3) uint8 -> out (3,crop,crop) float: resize to (rh,rw) = dt_image_resized_size
// with bilinear interpolation antialiased as PIL's Image.resize(BILINEAR) (a triangle
// filter widened by the scale factor when shrinking; no rounding between passes), take the
// crop x crop window at (oy,ox) of the resized image, mirror it left-right if flip, and
// normalise: (v/255 - mean[c]) / std[c]. Requires 0 <= oy <= rh-crop, 0 <= ox <= rw-crop.
void dt_image_transform(const uint8_t *rgb, int h, int w, int resize, int crop, int oy, int ox,
                        int flip, const float *mean, const float *std, float *out);

#endif
