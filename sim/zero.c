// zero.c — ZeRO's stages, memory and communication volume (sim/zero.h; Rajbhandari et al.
// 2020, §5 and §7; docs/formulas.md, "ZeRO").
#include "zero.h"

#include <stdio.h>

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
