// loader.h — batches prefetched on a thread (darknet's load_data thread, double-buffered):
// a producer thread walks (epoch, step) in order, takes this rank's shard of the epoch's
// shuffled indices (data.h dt_shard_indices), fills a batch (dt_dataset_fill) and puts it in
// a bounded queue; the trainer takes batches with dt_loader_next, which says how long it
// waited (time the input pipeline cost the step). What comes out depends only on (dataset,
// config): never on thread timing, thread count or queue depth.
// Not here: MPI, device memory (copy x to the device yourself), evaluation metrics.
#ifndef DT_LOADER_H
#define DT_LOADER_H

#include <stdint.h>

#include "data.h"

typedef struct dt_loader_config {
    int global_batch;     // G: examples per step over all ranks
    int ranks, rank;      // P (G % P == 0) and this rank, 0 <= rank < P
    uint64_t seed;        // the shuffle and augmentation seed (same on every rank)
    int64_t first_epoch;  // first epoch produced (>= 0)
    int64_t epochs;       // epochs produced (>= 1)
    int64_t first_step;   // step of first_epoch to start at, to resume (0: from the start)
    int shuffle;          // 1: dt_epoch_permutation(seed, epoch); 0: index order (evaluation)
    int drop_last;        // 1: floor(n/G) full steps per epoch; 0: ceil, the last one partial
    int queue;            // batches kept ready ahead of the trainer (0: 2; at least 2)
    int threads;          // decoding threads per batch, OpenMP (0 or 1: the loader thread)
} dt_loader_config;

typedef struct dt_batch {
    int b;              // examples: G/P, fewer (maybe 0) in a final partial step
    int c, h, w;        // one example's shape
    float *x;           // (b,c,h,w)
    int32_t *labels;    // (b)
    int64_t *indices;   // (b) the dataset indices of the examples
    int64_t epoch, step;
} dt_batch;

typedef struct dt_loader dt_loader;

// Starts the producer thread. The dataset must outlive the loader. Memory: queue+1 batches
// of (G/P)*c*h*w floats. NULL with err (code 2) for a bad configuration.
dt_loader *dt_loader_create(const dt_dataset *ds, const dt_loader_config *cfg, dt_error *err);
// The next batch in (epoch, step) order; blocks until it is ready and stores the seconds it
// blocked in *wait_s (may be NULL). The batch's arrays belong to the loader and stay valid
// until the next dt_loader_next or dt_loader_destroy. Returns 1 with a batch, 0 when every
// epoch has been delivered, -1 with err when the producer failed (a corrupt image: the
// error names the file); after 0 or -1 it keeps returning the same.
int dt_loader_next(dt_loader *l, dt_batch *batch, double *wait_s, dt_error *err);
// Steps per epoch of this loader's configuration (dt_steps_per_epoch).
int64_t dt_loader_steps_per_epoch(const dt_loader *l);
// Stops the producer (mid-batch too: it checks between small groups of examples), joins it
// and frees everything. NULL is fine.
void dt_loader_destroy(dt_loader *l);

#endif
