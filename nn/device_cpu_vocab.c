// device_cpu_vocab.c — the cpu device's primitives of a vocabulary split over a
// tensor-parallel group (nn/device.h, "the vocabulary split"; Megatron-LM's
// VocabParallelEmbedding and vocab_parallel_cross_entropy, Shoeybi et al. 2019 §3): the
// embedding of a slice of the rows, and the loss's three passes between the group's
// allreduces (nn/train_tp.c). Rows are independent, so each runs on one thread in the
// serial order: the same bits whatever the threads.
#include <math.h>
#include <omp.h>

#include "device_cpu_internal.h"
#include "dt.h"

static void cpu_embed_part_forward(dt_device *d, const int32_t *tokens, const float *wte,
                                   const float *wpe, int lo, int n, int B, int T, int C,
                                   float *out) {
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if ((long)B * T * C > DT_CPU_PAR_MIN)
    for (long bt = 0; bt < (long)B * T; bt++) {
        int v = tokens[bt] - lo;
        const float *p = wpe ? wpe + (size_t)(bt % T) * C : NULL;
        float *o = out + (size_t)bt * C;
        for (int c = 0; c < C; c++)
            o[c] = (v >= 0 && v < n ? wte[(size_t)v * C + c] : 0.0f) + (p ? p[c] : 0.0f);
    }
}

// Serial over tokens: two tokens may share a row of dwte (a scatter-add).
static void cpu_embed_part_backward(dt_device *d, const float *dout, const int32_t *tokens,
                                    int lo, int n, int B, int T, int C, float *dwte,
                                    float *dwpe) {
    (void)d;
    for (long bt = 0; bt < (long)B * T; bt++) {
        int v = tokens[bt] - lo;
        const float *g = dout + (size_t)bt * C;
        float *p = dwpe + (size_t)(bt % T) * C;
        for (int c = 0; c < C; c++) p[c] += g[c];
        if (v >= 0 && v < n)
            for (int c = 0; c < C; c++) dwte[(size_t)v * C + c] += g[c];
    }
}

static void cpu_xent_part_max(dt_device *d, const float *z, int B, int K, float *row_max) {
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if ((long)B * K > DT_CPU_PAR_MIN)
    for (int b = 0; b < B; b++) {
        const float *zb = z + (size_t)b * K;
        float m = zb[0];
        for (int k = 1; k < K; k++) m = zb[k] > m ? zb[k] : m;
        row_max[b] = m;
    }
}

static void cpu_xent_part_exp(dt_device *d, const float *z, const int32_t *labels, int lo,
                              int B, int K, const float *row_max, float *p, double *row_sum,
                              double *row_tgt) {
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if ((long)B * K > DT_CPU_PAR_MIN)
    for (int b = 0; b < B; b++) {
        const float *zb = z + (size_t)b * K;
        float *pb = p + (size_t)b * K;
        double s = 0.0;
        for (int k = 0; k < K; k++) {
            pb[k] = expf(zb[k] - row_max[b]);
            s += pb[k];
        }
        int y = labels[b] - lo;
        row_sum[b] = s;
        row_tgt[b] = y >= 0 && y < K ? (double)zb[y] : 0.0;
    }
}

static void cpu_xent_part_scale(dt_device *d, float *p, const double *row_sum, int B, int K) {
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if ((long)B * K > DT_CPU_PAR_MIN)
    for (int b = 0; b < B; b++) {
        float inv = (float)(1.0 / row_sum[b]);
        float *pb = p + (size_t)b * K;
        for (int k = 0; k < K; k++) pb[k] *= inv;
    }
}

void dt_cpu_install_vocab(dt_device *d) {
    d->embed_part_forward = cpu_embed_part_forward;
    d->embed_part_backward = cpu_embed_part_backward;
    d->xent_part_max = cpu_xent_part_max;
    d->xent_part_exp = cpu_xent_part_exp;
    d->xent_part_scale = cpu_xent_part_scale;
}
