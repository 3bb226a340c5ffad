// data_synthetic.c — deterministic synthetic images with a learnable class signal, for
// measuring throughput without a dataset on disk and for tests. Example i of a dataset
// seeded `seed`: label = hash(seed, i) mod classes; each element is
//   x[c,y,x] = 0.5 * pattern(label, c, 4y/h, 4x/w) + u,   u uniform in [-sqrt 3, sqrt 3)
// where pattern is +-1 per (class, channel, block) of a 4x4 grid: unit-variance noise around
// class means that a nearest-class-mean (or any small conv net) classifier separates. The
// patterns depend on the class only, never on the seed: every seed draws examples of the
// same task, so a dataset with another seed is a held-out test set.
// Everything is a hash of its coordinates, so nothing but the labels is stored.
// Not here: augmentation (the data are already random).
#include <math.h>
#include <string.h>

#include "dataset.h"
#include "kernels.h"

#define SYN_GRID 4
#define SYN_SIGNAL 0.5f

typedef struct {
    uint64_t seed;
} synthetic;

static int synthetic_get(const dt_dataset *ds, int64_t index, uint64_t aug_seed, float *x,
                         dt_error *err) {
    (void)aug_seed;
    (void)err;
    const synthetic *s = ds->impl;
    uint64_t noise = dt_mix64(s->seed ^ 0x6e6f697365000000ull) ^ dt_mix64((uint64_t)index);
    uint64_t cls = dt_mix64(0x636c617373000000ull) ^ (uint64_t)ds->labels[index];  // "class"
    const float amp = 1.7320508f;  // sqrt(3): uniform on [-amp, amp) has unit variance
    size_t k = 0;
    for (int c = 0; c < ds->c; c++) {
        for (int y = 0; y < ds->h; y++) {
            int by = y * SYN_GRID / ds->h;
            float sign[SYN_GRID];  // the row's 4 blocks (the same hash for each cell of one)
            for (int bx = 0; bx < SYN_GRID; bx++) {
                uint64_t cell = (uint64_t)(c * SYN_GRID + by) * SYN_GRID + (uint64_t)bx;
                sign[bx] = (dt_mix64(cls * 0x100000001b3ull + cell) >> 63) ? 1.0f : -1.0f;
            }
            for (int xx = 0; xx < ds->w; xx++, k++) {
                float u = dt_uniform(noise, k) * 2.0f - 1.0f;
                x[k] = SYN_SIGNAL * sign[xx * SYN_GRID / ds->w] + amp * u;
            }
        }
    }
    return 0;
}

static void synthetic_destroy(dt_dataset *ds) { free(ds->impl); }


dt_dataset *dt_dataset_synthetic(int64_t n, int c, int h, int w, int classes, uint64_t seed,
                                 dt_error *err) {
    if (n <= 0 || c <= 0 || h <= 0 || w <= 0 || classes <= 0 || n > ((int64_t)1 << 40) ||
        (int64_t)c * h * w > ((int64_t)1 << 28)) {
        dt_fail(err, DT_EXIT_USAGE,
                "synthetic dataset: n=%lld c=%d h=%d w=%d classes=%d, expected all > 0 (and "
                "c*h*w <= 2^28)", (long long)n, c, h, w, classes);
        return NULL;
    }
    dt_dataset *ds = callocCheck(1, sizeof *ds);
    snprintf(ds->name, sizeof ds->name, "synthetic(%lld,%d,%d,%d,%d,seed=%llu)", (long long)n, c,
             h, w, classes, (unsigned long long)seed);
    ds->n = n;
    ds->c = c;
    ds->h = h;
    ds->w = w;
    ds->num_classes = classes;
    ds->labels = mallocCheck(sizeof(int32_t) * (size_t)n);
    uint64_t lk = dt_mix64(seed ^ 0x6c6162656c000000ull);  // "label"
    for (int64_t i = 0; i < n; i++) {
        ds->labels[i] = (int32_t)(dt_mix64(lk ^ dt_mix64((uint64_t)i)) % (uint64_t)classes);
    }
    for (int k = 0; k < 3; k++) {
        ds->mean[k] = 0.0f;
        ds->std[k] = 1.0f;
    }
    synthetic *s = callocCheck(1, sizeof *s);
    s->seed = seed;
    ds->impl = s;
    ds->ops = (dt_dataset_ops){synthetic_get, synthetic_destroy};
    return ds;
}
