// large_batch.h — lesson 08's contract: the learning-rate schedule of large-batch SGD (the
// linear scaling rule with gradual warm-up, Goyal et al. 2017 §2.1-2.2, then the
// polynomial decay of You et al. 2017) and one tensor's LARS update (You, Gitman & Ginsburg
// 2017, Alg. 1, in MLPerf's form: docs/formulas.md, "LARS"). You write the bodies in
// large_batch.c.
#ifndef LESSON08_LARGE_BATCH_H
#define LESSON08_LARGE_BATCH_H

#include <stddef.h>

typedef struct {
    double lr_per_256;    // the rate for a batch of 256 (Goyal et al.: 0.1)
    int batch;            // the global batch
    long warmup_steps;    // w
    double warmup_start;  // s: the warm-up starts at s x the scaled rate
    long total_steps;     // T > w
    double power;         // of the decay (2)
} schedule;

// The rate at step t (0-based): lr0 = lr_per_256 x batch / 256 (the linear scaling rule);
// lr0 x (s + (1 - s) x t / w) for t < w; lr0 x (1 - (t - w) / (T - w))^power for
// w <= t < T; 0 from T on.
double lr_at(const schedule *s, long t);

typedef struct {
    float momentum;  // m (0.9)
    float wd;        // weight decay (5e-4)
    float trust;     // eta (0.001)
    float eps;       // (1e-9)
} lars_config;

// One LARS step of a tensor w (n elements) with gradient g and momentum buffer v:
//   is_weight (conv/linear weight): ||w|| and ||g|| accumulated in double,
//     local = trust x ||w|| / (||g|| + wd x ||w|| + eps), or 1 when ||w|| or ||g|| is 0;
//     v = m v + lr x local x (g + wd w);  w = w - v
//   otherwise (a bias, batch norm's gamma or beta): no trust ratio, no weight decay:
//     v = m v + lr x g;  w = w - v   (local = 1)
// Returns local. Touches only elements 0 .. n-1 of w and v; g is read only.
double lars_step(float *w, const float *g, float *v, size_t n, int is_weight, float lr,
                 const lars_config *c);

#endif
