// test_gpt.c — the GPT-2 decoder (nn/models_gpt.c) on the cpu device:
//  - logits and loss of a small random model against an independent float64 forward
//    written here from GPT-2's definition (Radford et al. 2019; llm.c's layout), and EVERY
//    element of every gradient against central finite differences of that float64 forward;
//  - parameter counts against the closed form V*C + n_ctx*C + L*(12C^2 + 13C) + 2C and the
//    published ones (GPT-2 124M: 124,439,808 with the tied head; GPT-3's table 2.1), and the
//    forward FLOPs per token against Kaplan et al. 2020's 2N + 2*n_layer*n_ctx*d_model;
//  - one rank of tensor parallelism over a shape of the test's own: its weights' shapes and
//    its parameter count against the closed form of its share;
//  - bad input: a sequence longer than the context, a device without the transformer
//    primitives, half precision, a weights file of another vocabulary (all DT_EXIT_USAGE).
// Fresh random weights, tokens and sizes each run (seed printed). Tolerances: logits 1e-5 of
// the largest logit, loss 1e-5 relative, gradients 1e-4 of the tensor's largest
// finite-difference element, or of 1% of the model's largest for a tensor whose gradient
// nearly vanishes (fp32 against float64; errors seen stay under 2e-6 relative).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models.h"
#include "safetensors.h"
#include "testutil.h"

#define TOL_FWD 1e-5
#define TOL_GRAD 1e-4

typedef struct {
    int L, C, NH, V, ctx, B, T;
    const dt_net *net;
    double *p;           // the parameters in double, at the network's offsets
    const int32_t *tok, *tgt;
} ref_ctx;

static const double *P(const ref_ctx *r, const char *fmt, int i) {
    char name[96];
    snprintf(name, sizeof name, fmt, i);
    const dt_param *q = dt_net_find_param(r->net, name);
    if (!q) fail_msg("no parameter %s", name);
    return r->p + q->offset;
}

static void ref_layernorm(const double *x, const double *g, const double *b, int C, double *y) {
    double m = 0, v = 0;
    for (int c = 0; c < C; c++) m += x[c];
    m /= C;
    for (int c = 0; c < C; c++) v += (x[c] - m) * (x[c] - m);
    v /= C;
    for (int c = 0; c < C; c++) y[c] = (x[c] - m) / sqrt(v + 1e-5) * g[c] + b[c];
}

// y (out) = W (out,in) x + b
static void ref_linear(const double *x, const double *W, const double *b, int in, int out,
                       double *y) {
    for (int o = 0; o < out; o++) {
        double s = b ? b[o] : 0.0;
        for (int i = 0; i < in; i++) s += W[(size_t)o * in + i] * x[i];
        y[o] = s;
    }
}

static double ref_gelu(double x) {
    return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

// Mean next-token cross-entropy over B*T tokens; logits (B,T,V) if non-NULL.
static double ref_forward(const ref_ctx *r, double *logits) {
    int C = r->C, T = r->T, V = r->V, hs = C / r->NH;
    double *x = malloc(sizeof(double) * T * C), *h = malloc(sizeof(double) * T * C);
    double *qkv = malloc(sizeof(double) * T * 3 * C), *a = malloc(sizeof(double) * T * C);
    double *f = malloc(sizeof(double) * 4 * C), *o = malloc(sizeof(double) * C);
    double *z = malloc(sizeof(double) * V), *s = malloc(sizeof(double) * T);
    double loss = 0.0;
    const double *wte = P(r, "transformer.wte.weight", 0);
    const double *wpe = P(r, "transformer.wpe.weight", 0);
    for (int b = 0; b < r->B; b++) {
        for (int t = 0; t < T; t++)
            for (int c = 0; c < C; c++)
                x[t * C + c] = wte[(size_t)r->tok[b * T + t] * C + c] + wpe[t * C + c];
        for (int l = 0; l < r->L; l++) {
            for (int t = 0; t < T; t++) {
                ref_layernorm(x + t * C, P(r, "transformer.h.%d.ln_1.weight", l),
                              P(r, "transformer.h.%d.ln_1.bias", l), C, h + t * C);
                ref_linear(h + t * C, P(r, "transformer.h.%d.attn.c_attn.weight", l),
                           P(r, "transformer.h.%d.attn.c_attn.bias", l), C, 3 * C,
                           qkv + t * 3 * C);
            }
            for (int t = 0; t < T; t++)
                for (int hd = 0; hd < r->NH; hd++) {
                    double mx = -INFINITY, sum = 0.0;
                    for (int u = 0; u <= t; u++) {
                        double d = 0.0;
                        for (int i = 0; i < hs; i++)
                            d += qkv[t * 3 * C + hd * hs + i] * qkv[u * 3 * C + C + hd * hs + i];
                        s[u] = d / sqrt((double)hs);
                        if (s[u] > mx) mx = s[u];
                    }
                    for (int u = 0; u <= t; u++) sum += (s[u] = exp(s[u] - mx));
                    for (int i = 0; i < hs; i++) {
                        double y = 0.0;
                        for (int u = 0; u <= t; u++)
                            y += s[u] / sum * qkv[u * 3 * C + 2 * C + hd * hs + i];
                        a[t * C + hd * hs + i] = y;
                    }
                }
            for (int t = 0; t < T; t++) {
                ref_linear(a + t * C, P(r, "transformer.h.%d.attn.c_proj.weight", l),
                           P(r, "transformer.h.%d.attn.c_proj.bias", l), C, C, o);
                for (int c = 0; c < C; c++) x[t * C + c] += o[c];
                ref_layernorm(x + t * C, P(r, "transformer.h.%d.ln_2.weight", l),
                              P(r, "transformer.h.%d.ln_2.bias", l), C, h + t * C);
                ref_linear(h + t * C, P(r, "transformer.h.%d.mlp.c_fc.weight", l),
                           P(r, "transformer.h.%d.mlp.c_fc.bias", l), C, 4 * C, f);
                for (int c = 0; c < 4 * C; c++) f[c] = ref_gelu(f[c]);
                ref_linear(f, P(r, "transformer.h.%d.mlp.c_proj.weight", l),
                           P(r, "transformer.h.%d.mlp.c_proj.bias", l), 4 * C, C, o);
                for (int c = 0; c < C; c++) x[t * C + c] += o[c];
            }
        }
        for (int t = 0; t < T; t++) {
            ref_layernorm(x + t * C, P(r, "transformer.ln_f.weight", 0),
                          P(r, "transformer.ln_f.bias", 0), C, h + t * C);
            ref_linear(h + t * C, wte, NULL, C, V, z);  // the head tied to wte
            double mx = -INFINITY, sum = 0.0;
            for (int v = 0; v < V; v++) mx = z[v] > mx ? z[v] : mx;
            for (int v = 0; v < V; v++) sum += exp(z[v] - mx);
            loss += log(sum) + mx - z[r->tgt[b * T + t]];
            if (logits) memcpy(logits + ((size_t)b * T + t) * V, z, sizeof(double) * V);
        }
    }
    free(x), free(h), free(qkv), free(a), free(f), free(o), free(z), free(s);
    return loss / (r->B * T);
}

// A GPT of the given shape through the real builder (dt_build_gpt), seq T, batch B.
static dt_net *small_gpt(dt_device *dev, const dt_gpt_shape *s, int B, int T, uint64_t seed,
                         dt_error *err) {
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = B, cfg.seq_len = T, cfg.vocab = s->vocab, cfg.seed = seed;
    cfg.in_c = 1, cfg.in_h = 1, cfg.in_w = T, cfg.num_classes = s->vocab;
    dt_net *net = dt_net_new(dev, "gpt-test", &cfg);
    dt_build_gpt(net, &cfg, s);
    if (dt_net_finalize(net, err) != 0) {
        dt_net_free(net);
        return NULL;
    }
    return net;
}

static void test_forward_and_every_gradient_against_float64(void **state) {
    tu_fixture *f = *state;
    dt_gpt_shape s = {"t", tu_int(&f->rng, 1, 2), 0, 0, 0, tu_int(&f->rng, 5, 29)};
    s.heads = tu_int(&f->rng, 1, 3);
    s.width = s.heads * tu_int(&f->rng, 4, 6);  // C >= 4: layer norm of 2 features is +-1
    int B = tu_int(&f->rng, 1, 2), T = tu_int(&f->rng, 2, 6);
    s.context = T + tu_int(&f->rng, 0, 3);
    printf("L %d C %d heads %d V %d context %d B %d T %d\n", s.layers, s.width, s.heads,
           s.vocab, s.context, B, T);
    dt_error err;
    dt_net *net = small_gpt(f->dev, &s, B, T, 7, &err);
    if (!net) fail_msg("build: %s", err.msg);
    assert_int_equal(net->n_trainable, (size_t)dt_gpt_param_count(&s, 0));
    // random parameters of a size that makes every path matter (GPT-2's init is too small:
    // attention would be nearly uniform)
    size_t n = net->n_trainable;
    float *pf = malloc(n * sizeof(float));
    for (int t = 0; t < net->n_params; t++) {
        const dt_param *q = &net->params_table[t];
        double lo = -0.5, hi = 0.5;
        if (q->kind == DT_PARAM_LN_GAMMA) lo = 0.5, hi = 1.5;
        tu_fill_uniform(&f->rng, pf + q->offset, q->count, lo, hi);
    }
    f->dev->from_host(f->dev, net->params, pf, n * sizeof(float));
    int32_t *tok = malloc(sizeof(int32_t) * B * T), *tgt = malloc(sizeof(int32_t) * B * T);
    for (int i = 0; i < B * T; i++)
        tok[i] = tu_int(&f->rng, 0, s.vocab - 1), tgt[i] = tu_int(&f->rng, 0, s.vocab - 1);
    dt_net_set_tokens(net, tok, tgt);
    dt_net_forward(net, 1);
    float loss = dt_net_loss(net);
    dt_net_backward(net, 1.0f, NULL, NULL);
    const dt_layer *last = net->layers[net->n_layers - 1];
    size_t nl = (size_t)B * T * s.vocab;
    float *logits = malloc(nl * sizeof(float)), *g = malloc(n * sizeof(float));
    tu_dev_download(f->dev, logits, last->out, nl);
    tu_dev_download(f->dev, g, net->grads, n);

    ref_ctx r = {s.layers, s.width, s.heads, s.vocab, s.context, B, T, net, NULL, tok, tgt};
    r.p = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) r.p[i] = pf[i];
    double *rl = malloc(nl * sizeof(double));
    double rloss = ref_forward(&r, rl);
    double lmax = 0, ldiff = 0;
    for (size_t i = 0; i < nl; i++)
        lmax = fmax(lmax, fabs(rl[i])), ldiff = fmax(ldiff, fabs(logits[i] - rl[i]));
    printf("logits max|ours - float64| %.2e of max %.3g; loss %.9g, float64 %.9g\n", ldiff,
           lmax, (double)loss, rloss);
    if (!(ldiff <= TOL_FWD * lmax)) fail_msg("logits off by %.3g (max %.3g)", ldiff, lmax);
    if (fabs(loss - rloss) > TOL_FWD * fabs(rloss))
        fail_msg("loss %.9g, float64 %.9g", (double)loss, rloss);
    // every element: central differences of the float64 forward, h = 1e-5 (truncation
    // error ~h^2 * third derivative, far below the tolerance)
    double *fd = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        double keep = r.p[i], h = 1e-5;
        r.p[i] = keep + h;
        double up = ref_forward(&r, NULL);
        r.p[i] = keep - h;
        double dn = ref_forward(&r, NULL);
        r.p[i] = keep;
        fd[i] = (up - dn) / (2 * h);
    }
    double gmax = 0;  // a tensor whose gradient nearly vanishes is held to 1% of the largest
    for (size_t i = 0; i < n; i++) gmax = fmax(gmax, fabs(fd[i]));
    for (int t = 0; t < net->n_params; t++) {
        const dt_param *q = &net->params_table[t];
        double mx = 0, worst = 0;
        for (size_t i = q->offset; i < q->offset + q->count; i++) mx = fmax(mx, fabs(fd[i]));
        for (size_t i = q->offset; i < q->offset + q->count; i++)
            worst = fmax(worst, fabs(g[i] - fd[i]));
        printf("  %-36s max|grad| %.3e  max|ours - fd| %.2e\n", q->name, mx, worst);
        if (!(worst <= TOL_GRAD * fmax(mx, 0.01 * gmax)))
            fail_msg("gradient of %s off by %.3g (largest element %.3g)", q->name, worst, mx);
    }
    free(fd), free(rl), free(r.p), free(logits), free(g), free(tok), free(tgt), free(pf);
    dt_net_free(net);
}

// Published: GPT-2 124M counts 124,439,808 with the tied head (llm.c; HF's gpt2 minus its
// 1024x1024 attention masks), GPT-2 XL 1,557,611,200 ("1558M"); GPT-3's table 2.1 rounds
// (125M ... 175.0B): within 2.5 %.
static void test_parameter_counts_closed_form_and_published(void **state) {
    tu_fixture *f = *state;
    static const struct { const char *name; double published, rel; } P[] = {
        {"gpt2", 124439808, 0},       {"gpt2-medium", 354823168, 0},
        {"gpt2-xl", 1557611200, 0},   {"gpt3-small", 125e6, 0.025},
        {"gpt3-medium", 350e6, 0.025}, {"gpt3-large", 760e6, 0.025},
        {"gpt3-xl", 1.3e9, 0.025},    {"gpt3-2.7b", 2.7e9, 0.025},
        {"gpt3-6.7b", 6.7e9, 0.025},  {"gpt3-13b", 13.0e9, 0.025},
        {"gpt3-175b", 175.0e9, 0.025},
    };
    for (size_t i = 0; i < sizeof P / sizeof P[0]; i++) {
        dt_model_config cfg = dt_model_config_default();
        cfg.batch = 1;
        double np, fwd, step;
        dt_error err;
        if (dt_model_describe(P[i].name, f->dev, &cfg, &np, &fwd, &step, &err) != 0)
            fail_msg("%s: %s", P[i].name, err.msg);
        const dt_gpt_shape *s = dt_gpt_find(P[i].name);
        assert_true(s != NULL);
        double closed = dt_gpt_param_count(s, 0);
        // Kaplan et al. 2020 table 1: C_fwd = 2N + 2 n_layer n_ctx d per token, N without
        // the embeddings, plus 2 d V for the (tied) output head
        double C = s->width, L = s->layers, T = s->context;
        double kaplan = 2.0 * 12.0 * L * C * C + 2.0 * L * T * C + 2.0 * C * s->vocab;
        double per_token = fwd / T;
        printf("%-12s params %.0f (closed form %.0f, published %.4g)  forward GFLOP/token "
               "%.4f (Kaplan %.4f)  step/forward %.3f\n", P[i].name, np, closed,
               P[i].published, per_token / 1e9, kaplan / 1e9, step / fwd);
        assert_true(np == closed);
        if (P[i].rel == 0) assert_true(np == P[i].published);
        else assert_true(fabs(np - P[i].published) <= P[i].rel * P[i].published);
        assert_true(fabs(per_token - kaplan) <= 0.01 * kaplan);
        assert_true(step / fwd > 2.9 && step / fwd < 3.1);  // backward ~ 2x forward
    }
}

// The attention layer's own count: 4*B*C*P + 5*B*H*P forward, P = T(T+1)/2 causal pairs.
static void test_attention_flops_closed_form(void **state) {
    tu_fixture *f = *state;
    int B = tu_int(&f->rng, 1, 4), T = tu_int(&f->rng, 8, 64);
    dt_gpt_shape s = {"t", 1, 32, 4, 64, 50};
    dt_error err;
    dt_net *net = small_gpt(f->dev, &s, B, T, 1, &err);
    if (!net) fail_msg("build: %s", err.msg);
    int seen = 0;
    for (int i = 0; i < net->n_layers; i++) {
        const dt_layer *l = net->layers[i];
        if (l->type != DT_LAYER_ATTENTION) continue;
        double P = T * (T + 1.0) / 2.0;
        assert_true(l->fwd_flops == 4.0 * B * 32 * P + 5.0 * B * 4 * P);
        assert_true(l->bwd_flops == 8.0 * B * 32 * P + 5.0 * B * 4 * P);
        seen++;
    }
    assert_int_equal(seen, 1);
    dt_net_free(net);
}

// One rank of tensor parallelism (dt_model_config.tp = t; Shoeybi et al. 2019, §3) over a
// shape of the test's own (layers, width, heads) and `blocks` of its blocks: c_attn and
// c_fc split by columns (3C/t and 4C/t rows of torch's (out, in) weights), the projections by
// rows ((C, C/t) and (C, 4C/t)), the embedding over ceil(V/t) tokens; parameters
//   blocks (12 C^2/t + 7C/t + 6C) + ceil(V/t) C + n_ctx C + 2C
// (t = 1: the closed form above). Random shapes, degrees and block counts.
static void test_tensor_parallel_rank_holds_its_share(void **state) {
    tu_fixture *f = *state;
    for (int rep = 0; rep < 12; rep++) {
        int heads = 1 << tu_int(&f->rng, 1, 3), hs = 4 * tu_int(&f->rng, 1, 4);
        int C = heads * hs, L = tu_int(&f->rng, 1, 5), t = 1 << tu_int(&f->rng, 0, 3);
        if (t > heads) t = heads;
        int blocks = tu_int(&f->rng, 1, L), V = tu_int(&f->rng, 50, 300);
        dt_model_config cfg = dt_model_config_default();
        cfg.batch = 1, cfg.seq_len = 8, cfg.vocab = V;
        cfg.layers = L, cfg.width = C, cfg.heads = heads, cfg.tp = t, cfg.blocks = blocks;
        dt_error err;
        dt_net *net = dt_model_create("gpt2-tiny", f->dev, &cfg, &err);
        if (!net) fail_msg("L %d C %d heads %d t %d blocks %d: %s", L, C, heads, t, blocks,
                           err.msg);
        double Vt = (V + t - 1) / t, ctx = 64;  // gpt2-tiny's context
        double want = blocks * (12.0 * C * C / t + 7.0 * C / t + 6.0 * C) + Vt * C + ctx * C +
                      2.0 * C;
        if ((double)net->n_trainable != want)
            fail_msg("L %d C %d t %d blocks %d V %d: %zu parameters, expected %.0f", L, C, t,
                     blocks, V, net->n_trainable, want);
        static const struct { const char *name; int out_per_t, out, in_per_t, in; } W[] = {
            {"transformer.h.%d.attn.c_attn.weight", 3, 0, 0, 1},
            {"transformer.h.%d.attn.c_proj.weight", 0, 1, 1, 0},
            {"transformer.h.%d.mlp.c_fc.weight", 4, 0, 0, 1},
            {"transformer.h.%d.mlp.c_proj.weight", 0, 1, 4, 0},
        };
        for (size_t k = 0; k < sizeof W / sizeof W[0]; k++) {
            char name[96];
            snprintf(name, sizeof name, W[k].name, blocks - 1);
            const dt_param *q = dt_net_find_param(net, name);
            if (!q) fail_msg("no %s", name);
            int out = W[k].out_per_t ? W[k].out_per_t * C / t : C;
            int in = W[k].in_per_t ? W[k].in_per_t * C / t : C;
            if (q->shape[0] != out || q->shape[1] != in)
                fail_msg("%s at t %d: (%d, %d), expected (%d, %d)", name, t, q->shape[0],
                         q->shape[1], out, in);
        }
        const dt_param *e = dt_net_find_param(net, "transformer.wte.weight");
        assert_non_null(e);
        assert_int_equal(e->shape[0], (int)Vt);
        char beyond[64];
        snprintf(beyond, sizeof beyond, "transformer.h.%d.ln_1.weight", blocks);
        assert_null(dt_net_find_param(net, beyond));
        dt_net_free(net);
    }
}

static void expect_usage(dt_net *net, const dt_error *err, const char *needle) {
    if (net) fail_msg("built a network that should be refused (%s)", needle);
    assert_int_equal(err->code, DT_EXIT_USAGE);
    if (!strstr(err->msg, needle)) fail_msg("message '%s' lacks '%s'", err->msg, needle);
    printf("refused: %s\n", err->msg);
}

static void test_bad_input_is_refused(void **state) {
    tu_fixture *f = *state;
    dt_error err;
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = 1;
    cfg.seq_len = 65;  // gpt2-tiny's context is 64
    expect_usage(dt_model_create("gpt2-tiny", f->dev, &cfg, &err), &err, "context of 64");
    cfg.seq_len = 8;
    cfg.tp = 3;  // gpt2-tiny has 4 heads
    expect_usage(dt_model_create("gpt2-tiny", f->dev, &cfg, &err), &err, "divide the 4");
    cfg.tp = 1, cfg.blocks = 3;  // and 2 blocks
    expect_usage(dt_model_create("gpt2-tiny", f->dev, &cfg, &err), &err, "0 (all) to 2");
    cfg.blocks = 0, cfg.width = 66;  // 66 / 4 heads
    expect_usage(dt_model_create("gpt2-tiny", f->dev, &cfg, &err), &err, "multiple of the heads");
    cfg.width = 0;
    dt_device lacking = *f->dev;  // a device without attention (as cuda and model)
    lacking.attention_forward = NULL;
    lacking.name = "lacking";
    expect_usage(dt_model_create("gpt2-tiny", &lacking, &cfg, &err), &err,
                 "no transformer primitives");
    // a weights file of another vocabulary: the embedding's shape is named, nothing loaded
    dt_net *a = dt_model_create("gpt2-tiny", f->dev, &cfg, &err);
    assert_non_null(a);
    char path[] = "/tmp/dt_test_gpt_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    if (dt_weights_save(a, path, &err) != 0) fail_msg("save: %s", err.msg);
    cfg.vocab = 300;
    dt_net *b = dt_model_create("gpt2-tiny", f->dev, &cfg, &err);
    assert_non_null(b);
    assert_int_not_equal(dt_weights_load(b, path, &err), 0);
    assert_int_equal(err.code, DT_EXIT_USAGE);
    if (!strstr(err.msg, "transformer.wte.weight")) fail_msg("message: %s", err.msg);
    printf("refused: %s\n", err.msg);
    unlink(path);
    dt_net_free(a), dt_net_free(b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forward_and_every_gradient_against_float64),
        cmocka_unit_test(test_parameter_counts_closed_form_and_published),
        cmocka_unit_test(test_attention_flops_closed_form),
        cmocka_unit_test(test_tensor_parallel_rank_holds_its_share),
        cmocka_unit_test(test_bad_input_is_refused),
    };
    return cmocka_run_group_tests(tests, tu_fixture_setup, tu_fixture_teardown);
}
