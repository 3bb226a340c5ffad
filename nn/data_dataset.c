// data_dataset.c — what every dataset shares: fetching one example (dispatching to the
// dataset's own producer, or normalising in-memory uint8 pixels), filling a batch, the
// augmentation seed, pixel statistics and freeing. Not here: any particular file format
// (data_idx.c, data_folder.c, data_synthetic.c) or the shuffle (data_shard.c).
#include <math.h>
#include <string.h>

#include "dataset.h"
#include "kernels.h"

// Three rounds of splitmix64 (nn/kernels.h), one per word, so (seed, epoch, index) triples
// that differ in any word give unrelated streams.
uint64_t dt_aug_seed(uint64_t seed, int64_t epoch, int64_t index) {
    uint64_t h = dt_mix64(seed ^ 0x6175676d656e7400ull);  // "augment"
    h = dt_mix64(h ^ (uint64_t)epoch);
    return dt_mix64(h ^ (uint64_t)index);
}

// x is (c,h,w): x = (p/255 - mean[c]) / std[c] for the uint8 pixels of example index
static void pixels_get(const dt_dataset *ds, int64_t index, float *x) {
    size_t hw = (size_t)ds->h * ds->w;
    const uint8_t *p = ds->pixels + (size_t)index * ds->c * hw;
    for (int c = 0; c < ds->c; c++) {
        float scale = 1.0f / (255.0f * ds->std[c]), shift = ds->mean[c] / ds->std[c];
        for (size_t k = 0; k < hw; k++) x[c * hw + k] = (float)p[c * hw + k] * scale - shift;
    }
}

int dt_dataset_get(const dt_dataset *ds, int64_t index, uint64_t aug_seed, float *x,
                   int32_t *label, dt_error *err) {
    if (!ds) return dt_fail(err, DT_EXIT_USAGE, "dt_dataset_get: dataset is NULL");
    if (index < 0 || index >= ds->n) {
        return dt_fail(err, DT_EXIT_USAGE, "dataset %s: example index %lld out of range [0, %lld)",
                       ds->name, (long long)index, (long long)ds->n);
    }
    if (ds->ops.get) {
        if (ds->ops.get(ds, index, aug_seed, x, err) != 0) return -1;
    } else if (ds->pixels) {
        pixels_get(ds, index, x);
    } else {
        return dt_fail(err, DT_EXIT_RUNTIME, "dataset %s: has neither pixels nor a producer",
                       ds->name);
    }
    if (label) *label = ds->labels[index];
    return 0;
}

int dt_dataset_fill(const dt_dataset *ds, const int64_t *idx, int b, uint64_t seed,
                    int64_t epoch, int threads, float *x, int32_t *labels, dt_error *err) {
    if (!ds) return dt_fail(err, DT_EXIT_USAGE, "dt_dataset_fill: dataset is NULL");
    if (b < 0) return dt_fail(err, DT_EXIT_USAGE, "dt_dataset_fill: batch size %d < 0", b);
    size_t per = (size_t)ds->c * ds->h * ds->w;
    // Each example records its own failure; the first failing example (in batch order) wins,
    // so the reported error does not depend on thread timing either.
    int first_bad = b;
    dt_error first_err = {0, ""};
    if (threads > 1 && b > 1) {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
        for (int j = 0; j < b; j++) {
            dt_error e = {0, ""};
            if (dt_dataset_get(ds, idx[j], dt_aug_seed(seed, epoch, idx[j]), x + j * per,
                               &labels[j], &e) != 0) {
#pragma omp critical(dt_dataset_fill_err)
                if (j < first_bad) {
                    first_bad = j;
                    first_err = e;
                }
            }
        }
    } else {
        for (int j = 0; j < b && first_bad == b; j++) {
            if (dt_dataset_get(ds, idx[j], dt_aug_seed(seed, epoch, idx[j]), x + j * per,
                               &labels[j], &first_err) != 0) {
                first_bad = j;
            }
        }
    }
    if (first_bad < b) {
        if (err) *err = first_err;
        return -1;
    }
    return 0;
}

int dt_dataset_pixel_stats(const dt_dataset *ds, double *mean, double *std, dt_error *err) {
    if (!ds || !ds->pixels) {
        return dt_fail(err, DT_EXIT_USAGE, "dataset %s: pixel statistics need in-memory pixels",
                       ds ? ds->name : "(null)");
    }
    size_t hw = (size_t)ds->h * ds->w;
    for (int c = 0; c < ds->c; c++) {
        double s = 0.0, s2 = 0.0;
        for (int64_t i = 0; i < ds->n; i++) {
            const uint8_t *p = ds->pixels + ((size_t)i * ds->c + c) * hw;
            uint64_t a = 0, a2 = 0;  // exact integer sums per example
            for (size_t k = 0; k < hw; k++) {
                a += p[k];
                a2 += (uint64_t)p[k] * p[k];
            }
            s += (double)a;
            s2 += (double)a2;
        }
        double cnt = (double)ds->n * (double)hw;
        double m = s / cnt / 255.0;
        double var = s2 / cnt / (255.0 * 255.0) - m * m;
        mean[c] = m;
        std[c] = sqrt(var > 0.0 ? var : 0.0);
    }
    return 0;
}

void dt_dataset_free(dt_dataset *ds) {
    if (!ds) return;
    if (ds->ops.destroy) ds->ops.destroy(ds);
    free(ds->labels);
    free(ds->pixels);
    free(ds);
}
