// data_shard.c — which examples each rank sees: one seeded permutation per epoch, cut into
// global batches of G, each split into P contiguous local batches of G/P (rank r takes the
// r-th), as in Goyal et al. 2017 §3 (each of the k workers takes n = G/k samples of the
// minibatch). Pure functions: every rank computes the same permutation independently, no
// communication. Not here: reading examples (data_dataset.c) or prefetching (loader.c).
#include "dataset.h"
#include "kernels.h"

// A uniform integer in [0, bound) from 64 random bits: Lemire's multiply-shift (2019); the
// bias is at most bound / 2^64, far below anything a training run could notice.
static int64_t below(uint64_t r, uint64_t bound) {
    return (int64_t)(((unsigned __int128)r * bound) >> 64);
}

// Fisher-Yates (Durstenfeld 1964; Knuth TAOCP vol. 2, 3.4.2 Algorithm P): for i = n-1..1,
// swap perm[i] with perm[j], j uniform in [0, i]. The random word for step i is a pure
// function of (seed, epoch, i), so the permutation is too.
void dt_epoch_permutation(uint64_t seed, int64_t epoch, int64_t n, int64_t *perm) {
    uint64_t key = dt_mix64(dt_mix64(seed ^ 0x7065726d75746500ull) ^ (uint64_t)epoch);  // "permute"
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = below(dt_mix64(key ^ (uint64_t)i), (uint64_t)i + 1);
        int64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

int64_t dt_steps_per_epoch(int64_t n, int global_batch, int drop_last) {
    if (n <= 0 || global_batch <= 0) return 0;
    return drop_last ? n / global_batch : (n + global_batch - 1) / global_batch;
}

int dt_shard_indices(const int64_t *perm, int64_t n, int global_batch, int ranks, int rank,
                     int drop_last, int64_t step, int64_t *out, dt_error *err) {
    if (global_batch <= 0 || ranks <= 0 || global_batch % ranks != 0) {
        return dt_fail(err, DT_EXIT_USAGE,
                       "global batch %d must be a positive multiple of the rank count %d",
                       global_batch, ranks);
    }
    if (rank < 0 || rank >= ranks) {
        return dt_fail(err, DT_EXIT_USAGE, "rank %d out of range [0, %d)", rank, ranks);
    }
    int64_t steps = dt_steps_per_epoch(n, global_batch, drop_last);
    if (step < 0 || step >= steps) {
        return dt_fail(err, DT_EXIT_USAGE,
                       "step %lld out of range [0, %lld) for %lld examples, global batch %d%s",
                       (long long)step, (long long)steps, (long long)n, global_batch,
                       drop_last ? " (last partial batch dropped)" : "");
    }
    int64_t local = global_batch / ranks;
    int64_t base = step * global_batch;
    int64_t start, count;
    if (base + global_batch <= n) {  // a full global batch
        start = base + rank * local;
        count = local;
    } else {  // the final partial batch (only without drop_last): balanced contiguous parts
        int64_t rem = n - base, q = rem / ranks, extra = rem % ranks;
        start = base + rank * q + (rank < extra ? rank : extra);
        count = q + (rank < extra ? 1 : 0);
    }
    for (int64_t j = 0; j < count; j++) out[j] = perm[start + j];
    return (int)count;
}
