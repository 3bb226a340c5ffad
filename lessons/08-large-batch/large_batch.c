// large_batch.c — lesson 08: write the bodies marked TODO(student) (contract:
// large_batch.h, README.md). As handed out it builds, runs, and fails its grader cleanly.
#include <math.h>

#include "large_batch.h"

double lr_at(const schedule *s, long t) {
    // TODO(student): the linear scaling rule, gradual warm-up, polynomial decay.
    (void)s, (void)t;
    return 0.0;
}

double lars_step(float *w, const float *g, float *v, size_t n, int is_weight, float lr,
                 const lars_config *c) {
    // TODO(student): the norms in double, the trust ratio, the momentum update.
    (void)w, (void)g, (void)v, (void)n, (void)is_weight, (void)lr, (void)c;
    return 1.0;
}
