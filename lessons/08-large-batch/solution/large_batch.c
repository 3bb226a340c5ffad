// large_batch.c — lesson 08's reference solution (contract: large_batch.h).
#include <math.h>

#include "large_batch.h"

double lr_at(const schedule *s, long t) {
    double lr0 = s->lr_per_256 * s->batch / 256.0;  // Goyal et al. §2.1
    long w = s->warmup_steps, T = s->total_steps;
    if (t < w) return lr0 * (s->warmup_start + (1.0 - s->warmup_start) * (double)t / w);
    if (t >= T) return 0.0;
    return lr0 * pow(1.0 - (double)(t - w) / (double)(T - w), s->power);
}

double lars_step(float *w, const float *g, float *v, size_t n, int is_weight, float lr,
                 const lars_config *c) {
    float m = c->momentum;
    if (!is_weight) {  // biases and batch norm: plain momentum SGD, no decay
        for (size_t i = 0; i < n; i++) {
            v[i] = m * v[i] + lr * g[i];
            w[i] -= v[i];
        }
        return 1.0;
    }
    double ww = 0, gg = 0;
    for (size_t i = 0; i < n; i++) ww += (double)w[i] * w[i], gg += (double)g[i] * g[i];
    double wn = sqrt(ww), gn = sqrt(gg);
    double local = (wn > 0 && gn > 0) ? c->trust * wn / (gn + c->wd * wn + c->eps) : 1.0;
    float step = (float)(lr * local);
    for (size_t i = 0; i < n; i++) {
        v[i] = m * v[i] + step * (g[i] + c->wd * w[i]);
        w[i] -= v[i];
    }
    return local;
}
