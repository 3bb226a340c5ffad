// straggler.h — slow GPUs in the modelled cluster: ranks or nodes slower by a fixed factor,
// and a per-step, per-rank random slowdown of a given coefficient of variation. Synchronous
// SGD waits for the slowest rank every step, so the step grows with the expected maximum of
// P draws (order statistics). The model device takes longer (dt_device_model_set_slowdown):
// the unchanged trainer, allreduce and overlap code feel it.
// Not here: slow links (a platform's bandwidths), failures (sim/goodput.h).
//
// SPEC, comma-separated terms (dtsim --straggler):
//   rank:R:F   rank R's kernels take F times as long
//   node:N:F   every GPU of node N (ranks N*gpus_per_node ...) likewise
//   cv:X       every rank, every step: a lognormal factor of mean 1 and coefficient of
//              variation X, drawn from (seed, rank, step) alone — no state, the same draws
//              on every machine and in every order of evaluation
// e.g. "node:3:1.3,cv:0.05". Terms multiply.
#ifndef DT_SIM_STRAGGLER_H
#define DT_SIM_STRAGGLER_H

#include <stdint.h>

#include "dt.h"

#define DT_STRAGGLER_MAX_FIXED 16

typedef struct {
    int n_fixed;
    struct {
        int node;       // 1: index is a node, 0: a rank
        int index;
        double factor;  // > 0
    } fixed[DT_STRAGGLER_MAX_FIXED];
    double cv;          // the random slowdown's coefficient of variation (0: none)
} dt_straggler;

// Parses SPEC ("" or "none": no straggler). Bad terms: -1 with a message naming `what` (the
// option) and what was expected.
int dt_straggler_parse(const char *spec, const char *what, dt_straggler *s, dt_error *err);
// 1 if s slows anything.
int dt_straggler_any(const dt_straggler *s);
// The largest rank or node index the spec names, for the caller's range check (-1: none),
// in *rank and *node.
void dt_straggler_max_index(const dt_straggler *s, int *rank, int *node);
// The factor by which rank's kernels slow down in step `step`.
double dt_straggler_factor(const dt_straggler *s, uint64_t seed, int rank, int gpus_per_node,
                           int step);
// E[max of p independent lognormal draws of mean 1 and coefficient of variation cv], by
// quadrature of the integral of 1 - F(x)^p (order statistics); 1 for cv 0.
double dt_straggler_expected_max(double cv, int p);

#endif
