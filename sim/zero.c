// zero.c — ZeRO's stages, memory and communication volume (sim/zero.h; Rajbhandari et al.
// 2020, §5 and §7; docs/formulas.md, "ZeRO").
#include "zero.h"

#include <stdio.h>
#include <stdlib.h>

#include "net.h"

static const char *const NAMES[DT_ZERO_STAGES] = {"none", "optimizer", "gradients",
                                                  "parameters"};

int dt_zero_parse(const char *s, int *stage) {
    for (int i = 0; s && i < DT_ZERO_STAGES; i++) {
        char digit[2] = {(char)('0' + i), 0};
        if (!strcmp(s, digit) || !strcmp(s, NAMES[i])) return *stage = i, 0;
    }
    return -1;
}

const char *dt_zero_name(int stage) {
    return stage >= 0 && stage < DT_ZERO_STAGES ? NAMES[stage] : "?";
}

int dt_zero_moments(dt_opt_kind k) { return k == DT_OPT_ADAMW || k == DT_OPT_LAMB ? 2 : 1; }

// §5.1-5.3: stage 1 divides the optimizer state by N, stage 2 the gradients too, stage 3
// the parameters too. Mixed precision: 2 + 2 + K with K = 4 (master) + 4 per moment (Adam:
// K = 12, the paper's); fp32: 4 + 4 + 4 per moment (the weights are their own master copy).
dt_zero_mem dt_zero_memory(double psi, int stage, int N, int mixed, int moments,
                           double activation_bytes) {
    double w = mixed ? 2.0 : 4.0, k = (mixed ? 4.0 : 0.0) + 4.0 * moments;
    double n = N > 0 ? N : 1;
    dt_zero_mem m;
    m.optim = k * psi / (stage >= 1 ? n : 1.0);
    m.grads = w * psi / (stage >= 2 ? n : 1.0);
    m.params = w * psi / (stage >= 3 ? n : 1.0);
    m.activations = activation_bytes;
    m.total = m.params + m.grads + m.optim + m.activations;
    return m;
}

// §7.2: a ring allreduce is a reduce-scatter and an allgather, Ψ(N-1)/N each; stages 1 and 2
// run exactly those two; stage 3 gathers the parameters twice (forward and backward) and
// reduce-scatters the gradients once
double dt_zero_comm_elems(double psi, int stage, int N) {
    if (N <= 1) return 0.0;
    double f = (double)(N - 1) / N;
    return (stage >= 3 ? 3.0 : 2.0) * psi * f;
}

// The unit holding trainable element off, or -1 (nn/train_zero_setup.c unit_of)
static int unit_of(const size_t *lo, int n, const dt_net *net, ssize_t off) {
    if (off < 0 || (size_t)off >= net->n_trainable) return -1;
    int k = 0;
    while (k + 1 < n && lo[k + 1] <= (size_t)off) k++;
    return k;
}

// One pass over the layers with units in `order` (+1 forward, -1 backward): the trainer's
// rule, resident = the units of this layer and the next; gathered = what was not resident
static void pass(const int *lu, const int *seq, int m, const size_t *lo, int *gathers,
                 double *peak) {
    int res[4] = {-1, -1, -1, -1};
    for (int j = 0; j < m; j++) {
        int want[4] = {lu[2 * seq[j]], lu[2 * seq[j] + 1], j + 1 < m ? lu[2 * seq[j + 1]] : -1,
                       j + 1 < m ? lu[2 * seq[j + 1] + 1] : -1};
        double held = 0;
        for (int w = 0; w < 4; w++) {
            int u = want[w], dup = u < 0;
            for (int v = 0; v < w && !dup; v++) dup = want[v] == u;
            if (dup) continue;
            int had = 0;
            for (int r = 0; r < 4; r++) had |= res[r] == u;
            if (!had) gathers[u]++;
            held += (double)(lo[u + 1] - lo[u]);
        }
        if (held > *peak) *peak = held;
        for (int w = 0; w < 4; w++) res[w] = want[w];
    }
}

int dt_zero3_units(const dt_net *net, int blocks, size_t *lo, int *gathers, double *peak) {
    int n = 0, nl = net->n_layers;
    if (blocks) {
        n = dt_net_blocks(net, lo);
    } else {
        for (int i = 0; i < nl; i++)
            if (net->layers[i]->n_trainable) lo[n++] = (size_t)net->layers[i]->w_off;
        lo[n] = net->n_trainable;
    }
    int *lu = callocCheck(2 * (size_t)nl + 1, sizeof(int));
    int *seq = callocCheck((size_t)nl + 1, sizeof(int)), m = 0;
    for (int i = 0; i < nl; i++) {
        const dt_layer *l = net->layers[i];
        int a = unit_of(lo, n, net, l->w_off), b = unit_of(lo, n, net, l->b_off);
        if (a < 0) a = b, b = -1;
        lu[2 * i] = a, lu[2 * i + 1] = b == a ? -1 : b;
        if (a >= 0) seq[m++] = i;
    }
    for (int k = 0; k < n; k++) gathers[k] = 0;
    *peak = 0;
    pass(lu, seq, m, lo, gathers, peak);  // forward
    for (int j = 0; j < m / 2; j++) {     // backward: the same layers from the top
        int t = seq[j];
        seq[j] = seq[m - 1 - j], seq[m - 1 - j] = t;
    }
    pass(lu, seq, m, lo, gathers, peak);
    free(lu), free(seq);
    return n;
}
