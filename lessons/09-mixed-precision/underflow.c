// underflow.c — lesson 09's experiment: why fp16 training needs loss scaling. One training
// step of a real network (nn/'s cpu device, fp32, random images and labels) and, as backward
// reaches each layer, every element of the gradient flowing into it rounded to half with
// YOUR to_half, at loss scales 1, 2^8 and 2^16: how many nonzero gradients become 0
// (lost), how many land among the subnormals (< 2^-14: fewer than 11 significant bits),
// and how many overflow to Inf. Micikevicius et al. 2018 (Fig. 3) made this histogram for
// SSD; this is yours.
//
// usage: build/lessons/09/student/underflow [MODEL] [BATCH] [SEED]   (resnet20 32 1)
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kit/net_step.h"
#include "half.h"
#include "layers.h"

#define NS 3
static const double scales[NS] = {1.0, 256.0, 65536.0};

typedef struct {
    double n;                          // nonzero gradient elements seen
    double zero[NS], sub[NS], inf[NS]; // of them: 0, subnormal, Inf after to_half(S * g)
    double smallest, largest;          // the smallest nonzero |g|, the largest
} tally;

// Before layer `layer`'s backward its dout (the gradient w.r.t. its output) is final.
static void count(void *ctx, const dt_net *net, int layer, int phase) {
    if (phase != DT_PHASE_BACKWARD || layer < 0) return;
    tally *t = ctx;
    const dt_layer *l = net->layers[layer];
    size_t n = (size_t)l->B * dt_layer_out_size(l);
    for (size_t i = 0; i < n; i++) {
        float g = l->dout[i];
        if (g == 0.0f) continue;
        t->n++;
        if (fabsf(g) < t->smallest) t->smallest = fabsf(g);
        if (fabsf(g) > t->largest) t->largest = fabsf(g);
        for (int s = 0; s < NS; s++) {
            uint16_t h = to_half((float)(g * scales[s]));
            if ((h & 0x7fff) == 0) t->zero[s]++;
            else if ((h & 0x7c00) == 0) t->sub[s]++;
            else if ((h & 0x7fff) == 0x7c00) t->inf[s]++;
        }
    }
}

int main(int argc, char **argv) {
    const char *model = argc > 1 ? argv[1] : "resnet20";
    int batch = argc > 2 ? atoi(argv[2]) : 32;
    unsigned seed = argc > 3 ? (unsigned)atoi(argv[3]) : 1;
    tally t = {.smallest = INFINITY};
    lesson_net ln;
    if (lesson_net_step(&ln, "underflow", model, batch, seed, 1, count, &t)) return 2;
    printf("%s, batch %d, loss %.3f: %.0f nonzero activation gradients, |g| from %.3g to %.3g\n",
           model, batch, ln.loss, t.n, t.smallest, t.largest);
    printf("%12s %14s %14s %14s\n", "loss scale", "lost (0)", "subnormal", "Inf");
    for (int s = 0; s < NS; s++)
        printf("%12.0f %13.2f%% %13.2f%% %13.4f%%\n", scales[s], 100 * t.zero[s] / t.n,
               100 * t.sub[s] / t.n, 100 * t.inf[s] / t.n);
    lesson_net_free(&ln);
    return 0;
}
