// trust.c — lesson 08's experiment: what LARS's trust ratio does per layer. One training
// step of a real network (nn/'s cpu device, fp32, random images and labels), then for
// every trainable tensor ||w||, ||g|| and the local rate YOUR lars_step returns (on copies:
// the network is not changed), with the default LARS configuration (momentum 0.9, weight
// decay 5e-4, trust 0.001). You et al. 2017 (Table 1) printed ||w||/||g|| for AlexNet's
// layers; these are ResNet's.
//
// usage: build/lessons/08/student/trust [MODEL] [BATCH] [SEED] [ZERO_INIT]   (resnet20 64 1 0)
// ZERO_INIT 1: the last BN gamma of every residual block starts at 0 (Goyal et al. §5.1)
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kit/net_step.h"
#include "large_batch.h"

static double norm(const float *x, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)x[i] * x[i];
    return sqrt(s);
}

int main(int argc, char **argv) {
    const char *model = argc > 1 ? argv[1] : "resnet20";
    int batch = argc > 2 ? atoi(argv[2]) : 64;
    unsigned seed = argc > 3 ? (unsigned)atoi(argv[3]) : 1;
    int zero_init = argc > 4 ? atoi(argv[4]) != 0 : 0;
    lesson_net ln;
    if (lesson_net_step(&ln, "trust", model, batch, seed, zero_init, NULL, NULL)) return 2;
    const dt_net *net = ln.net;
    lars_config c = {0.9f, 5e-4f, 0.001f, 1e-9f};
    printf("%s, batch %d, zero-init residual %s, loss %.3f; lr 1, so 'local' is the rate LARS "
           "gives each tensor\n", model, batch, zero_init ? "on" : "off", ln.loss);
    printf("%-34s %8s %10s %10s %10s\n", "tensor", "kind", "||w||", "||g||", "local");
    for (int p = 0; p < net->n_params; p++) {
        const dt_param *q = &net->params_table[p];
        if (q->kind == DT_PARAM_RUNNING_MEAN || q->kind == DT_PARAM_RUNNING_VAR) continue;
        size_t n = q->count;
        float *w = malloc(n * sizeof(float)), *v = calloc(n, sizeof(float));
        memcpy(w, net->params + q->offset, n * sizeof(float));
        const float *g = net->grads + q->offset;
        double wn = norm(w, n), gn = norm(g, n);
        double local = lars_step(w, g, v, n, q->kind == DT_PARAM_WEIGHT, 1.0f, &c);
        printf("%-34s %8s %10.4g %10.4g %10.4g\n", q->name, dt_param_kind_name(q->kind), wn, gn,
               local);
        free(w), free(v);
    }
    lesson_net_free(&ln);
    return 0;
}
