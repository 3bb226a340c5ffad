// data.h — training data in host memory for real runs (dtrain): datasets (Fashion-MNIST idx
// files, ImageNet-style image folders, deterministic synthetic data), the per-example
// transform (decode, resize, crop, flip, normalise), and the seeded per-epoch shuffle sharded
// over data-parallel ranks. The prefetching thread that turns these into batches is in
// real/loader.h. The core both worlds share (the dataset type, synthetic data, batches and
// the sharded shuffle: dtsim --device cpu trains on them too) is nn/dataset.h.
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

#include "dataset.h"
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

// ---- constructors (NULL and err set on failure); free with dt_dataset_free (dataset.h) ----

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
