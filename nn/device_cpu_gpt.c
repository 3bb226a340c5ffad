// device_cpu_gpt.c — the cpu device's transformer primitives (nn/device.h, "transformer
// primitives"): token + position embedding, layer norm, causal multi-head self-attention,
// GELU, and the AdamW / LAMB element updates. The loops follow llm.c's reference CPU
// implementation (train_gpt2.c): attention materialises the (T,T) probabilities per head,
// which is what a GPT-2 with T <= 1024 needs and what the backward reuses.
// Not here: the per-element formulas (nn/kernels.h), the layers that call these
// (nn/layer_embed.c, layer_layernorm.c, layer_attention.c, layer_simple.c).
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "device_cpu_internal.h"
#include "dt.h"
#include "kernels.h"

static void cpu_embed_forward(dt_device *d, const int32_t *tokens, const float *wte,
                              const float *wpe, int B, int T, int C, float *out) {
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if ((long)B * T * C > DT_CPU_PAR_MIN)
    for (long bt = 0; bt < (long)B * T; bt++) {
        const float *e = wte + (size_t)tokens[bt] * C, *p = wpe + (size_t)(bt % T) * C;
        float *o = out + (size_t)bt * C;
        for (int c = 0; c < C; c++) o[c] = e[c] + p[c];
    }
}

// Serial over tokens: two tokens of one batch may share a row of dwte (a scatter-add).
static void cpu_embed_backward(dt_device *d, const float *dout, const int32_t *tokens, int B,
                               int T, int C, float *dwte, float *dwpe) {
    (void)d;
    for (long bt = 0; bt < (long)B * T; bt++) {
        const float *g = dout + (size_t)bt * C;
        float *e = dwte + (size_t)tokens[bt] * C, *p = dwpe + (size_t)(bt % T) * C;
        for (int c = 0; c < C; c++) e[c] += g[c], p[c] += g[c];
    }
}

// Row statistics in double (a two-pass mean and variance), outputs in fp32.
static void cpu_layernorm_forward(dt_device *d, const float *x, const float *gamma,
                                  const float *beta, int N, int C, float eps, float *mean,
                                  float *rstd, float *y) {
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if ((long)N * C > DT_CPU_PAR_MIN)
    for (int i = 0; i < N; i++) {
        const float *xi = x + (size_t)i * C;
        double s = 0.0, ss = 0.0;
        for (int c = 0; c < C; c++) s += xi[c];
        double m = s / C;
        for (int c = 0; c < C; c++) ss += (xi[c] - m) * (xi[c] - m);
        float r = (float)(1.0 / sqrt(ss / C + (double)eps));
        float *yi = y + (size_t)i * C;
        for (int c = 0; c < C; c++) yi[c] = ((xi[c] - (float)m) * r) * gamma[c] + beta[c];
        mean[i] = (float)m;
        rstd[i] = r;
    }
}

static void cpu_layernorm_backward(dt_device *d, const float *dy, const float *x,
                                   const float *gamma, const float *mean, const float *rstd,
                                   int N, int C, float *dx, float *dgamma, float *dbeta) {
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if ((long)N * C > DT_CPU_PAR_MIN)
    for (int i = 0; i < N; i++) {
        const float *xi = x + (size_t)i * C, *gi = dy + (size_t)i * C;
        float m = mean[i], r = rstd[i];
        double sg = 0.0, sgx = 0.0;
        for (int c = 0; c < C; c++) {
            float g = gi[c] * gamma[c];
            sg += g;
            sgx += (double)g * ((xi[c] - m) * r);
        }
        float mg = (float)(sg / C), mgx = (float)(sgx / C);
        float *dxi = dx + (size_t)i * C;
        for (int c = 0; c < C; c++)
            dxi[c] += r * (gi[c] * gamma[c] - mg - ((xi[c] - m) * r) * mgx);
    }
    // the parameters' sums run over rows, so split the channels between threads instead
#pragma omp parallel for num_threads(d->threads) schedule(static) \
    if ((long)N * C > DT_CPU_PAR_MIN)
    for (int c = 0; c < C; c++) {
        double sg = 0.0, sb = 0.0;
        for (int i = 0; i < N; i++) {
            float g = dy[(size_t)i * C + c];
            sb += g;
            sg += (double)g * ((x[(size_t)i * C + c] - mean[i]) * rstd[i]);
        }
        dgamma[c] += (float)sg;
        dbeta[c] += (float)sb;
    }
}

// One (batch, head) pair per iteration: heads own disjoint channels of qkv and y, so the
// iterations write disjoint memory in forward and backward alike.
static void cpu_attention_forward(dt_device *d, const float *qkv, int B, int T, int C, int NH,
                                  float *att, float *y) {
    int hs = C / NH;
    float scale = 1.0f / sqrtf((float)hs);
    size_t C3 = (size_t)3 * C;
#pragma omp parallel for num_threads(d->threads) schedule(dynamic, 1)
    for (int bh = 0; bh < B * NH; bh++) {
        int b = bh / NH, h = bh % NH;
        const float *base = qkv + (size_t)b * T * C3;
        for (int t = 0; t < T; t++) {
            const float *q = base + (size_t)t * C3 + (size_t)h * hs;
            float *a = att + ((size_t)bh * T + t) * T;
            float mx = -INFINITY;
            for (int t2 = 0; t2 <= t; t2++) {
                const float *k = base + (size_t)t2 * C3 + C + (size_t)h * hs;
                float s = 0.0f;
                for (int i = 0; i < hs; i++) s += q[i] * k[i];
                s *= scale;
                a[t2] = s;
                if (s > mx) mx = s;
            }
            double sum = 0.0;
            for (int t2 = 0; t2 <= t; t2++) {
                a[t2] = expf(a[t2] - mx);
                sum += a[t2];
            }
            float inv = (float)(1.0 / sum);
            for (int t2 = 0; t2 <= t; t2++) a[t2] *= inv;
            for (int t2 = t + 1; t2 < T; t2++) a[t2] = 0.0f;
            float *yo = y + ((size_t)b * T + t) * C + (size_t)h * hs;
            for (int i = 0; i < hs; i++) yo[i] = 0.0f;
            for (int t2 = 0; t2 <= t; t2++) {
                const float *v = base + (size_t)t2 * C3 + 2 * (size_t)C + (size_t)h * hs;
                for (int i = 0; i < hs; i++) yo[i] += a[t2] * v[i];
            }
        }
    }
}

// datt[t2] = dy_t . v_t2; dv_t2 += att[t2] dy_t; dscore = att * (datt - sum(att*datt));
// dq_t += scale * sum dscore k_t2; dk_t2 += scale * dscore q_t
static void cpu_attention_backward(dt_device *d, const float *dy, const float *qkv,
                                   const float *att, int B, int T, int C, int NH, float *dqkv) {
    int hs = C / NH;
    float scale = 1.0f / sqrtf((float)hs);
    size_t C3 = (size_t)3 * C;
#pragma omp parallel num_threads(d->threads)
    {
        float *datt = mallocCheck((size_t)(T ? T : 1) * sizeof(float));
#pragma omp for schedule(dynamic, 1)
        for (int bh = 0; bh < B * NH; bh++) {
            int b = bh / NH, h = bh % NH;
            const float *base = qkv + (size_t)b * T * C3;
            float *dbase = dqkv + (size_t)b * T * C3;
            for (int t = 0; t < T; t++) {
                const float *a = att + ((size_t)bh * T + t) * T;
                const float *g = dy + ((size_t)b * T + t) * C + (size_t)h * hs;
                const float *q = base + (size_t)t * C3 + (size_t)h * hs;
                float *dq = dbase + (size_t)t * C3 + (size_t)h * hs;
                double dot = 0.0;
                for (int t2 = 0; t2 <= t; t2++) {
                    const float *v = base + (size_t)t2 * C3 + 2 * (size_t)C + (size_t)h * hs;
                    float *dv = dbase + (size_t)t2 * C3 + 2 * (size_t)C + (size_t)h * hs;
                    float s = 0.0f;
                    for (int i = 0; i < hs; i++) s += g[i] * v[i], dv[i] += a[t2] * g[i];
                    datt[t2] = s;
                    dot += (double)a[t2] * s;
                }
                for (int t2 = 0; t2 <= t; t2++) {
                    float ds = a[t2] * (datt[t2] - (float)dot) * scale;
                    const float *k = base + (size_t)t2 * C3 + C + (size_t)h * hs;
                    float *dk = dbase + (size_t)t2 * C3 + C + (size_t)h * hs;
                    for (int i = 0; i < hs; i++) dq[i] += ds * k[i], dk[i] += ds * q[i];
                }
            }
        }
        free(datt);
    }
}

static void cpu_gelu_forward(dt_device *d, const float *x, float *y, size_t n) {
    DT_CPU_FOR(n, y[i] = dt_gelu(x[i]));
}

static void cpu_gelu_backward(dt_device *d, const float *x, const float *dy, float *dx,
                              size_t n) {
    DT_CPU_FOR(n, dx[i] += dy[i] * dt_gelu_grad(x[i]));
}

static void cpu_adamw_update(dt_device *d, float *w, const float *g, float *m, float *v,
                             size_t n, float lr, float b1, float b2, float eps, float wd,
                             float step, float bc2_sqrt) {
    DT_CPU_FOR(n, dt_adamw_elem(&w[i], g[i], &m[i], &v[i], lr, b1, b2, eps, wd, step,
                                bc2_sqrt));
}

static void cpu_lamb_direction(dt_device *d, const float *w, const float *g, float *m,
                               float *v, float *r, size_t n, float b1, float b2, float eps,
                               float wd, float bc1, float bc2) {
    DT_CPU_FOR(n, r[i] = dt_lamb_dir_elem(w[i], g[i], &m[i], &v[i], b1, b2, eps, wd, bc1, bc2));
}

void dt_cpu_install_gpt(dt_device *d) {
    d->embed_forward = cpu_embed_forward;
    d->embed_backward = cpu_embed_backward;
    d->layernorm_forward = cpu_layernorm_forward;
    d->layernorm_backward = cpu_layernorm_backward;
    d->attention_forward = cpu_attention_forward;
    d->attention_backward = cpu_attention_backward;
    d->gelu_forward = cpu_gelu_forward;
    d->gelu_backward = cpu_gelu_backward;
    d->adamw_update = cpu_adamw_update;
    d->lamb_direction = cpu_lamb_direction;
}
