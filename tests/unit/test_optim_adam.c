// test_optim_adam.c — AdamW (Loshchilov & Hutter 2019, Alg. 2: decoupled weight decay),
// LAMB (You et al. 2019, Alg. 2: Adam's direction with weight decay, scaled per tensor by the
// trust ratio |w|/|r|; biases and layer norms with neither decay nor trust ratio), clipping
// by global norm (torch.nn.utils.clip_grad_norm_) and the warm-up + cosine schedule, each
// against a float64 reference written here from the published rule, over several steps
// of a small GPT from the real builder (weights, embeddings, biases, layer norms) with fresh
// random weights and gradients. torch.optim.AdamW itself: tests/ref/gpt_crosscheck.py.
// Tolerance: 1e-6 of |w| + the summed step sizes (fp32 against float64; errors seen stay
// under a quarter of it). Hyperparameters are exaggerated (decay 0.05-0.2, lr 1e-2) so that every
// term moves the weights by far more than the tolerance.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models.h"
#include "optim.h"
#include "testutil.h"

#define TOL 1e-6
#define STEPS 5

static dt_net *small_gpt(tu_fixture *f) {
    dt_gpt_shape s = {"t", 1, 8, 2, 6, 11};
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = 1, cfg.seq_len = 4, cfg.vocab = s.vocab;
    cfg.in_c = 1, cfg.in_h = 1, cfg.in_w = 4, cfg.num_classes = s.vocab;
    dt_net *net = dt_net_new(f->dev, "gpt-test", &cfg);
    dt_build_gpt(net, &cfg, &s);
    dt_error err;
    if (dt_net_finalize(net, &err) != 0) fail_msg("finalize: %s", err.msg);
    return net;
}

static int decays(const dt_param *p) { return p->kind == DT_PARAM_WEIGHT; }

// One step of the published rule in float64 on w, m, v (n_trainable each), step t >= 1.
static void ref_step(const dt_net *net, dt_opt_kind kind, double *w, double *m, double *v,
                     const float *g, double lr, double b1, double b2, double eps, double wd,
                     int t) {
    double bc1 = 1 - pow(b1, t), bc2 = 1 - pow(b2, t);
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        size_t a = p->offset, e = p->offset + p->count;
        double d = decays(p) ? wd : 0.0;
        double *r = malloc(p->count * sizeof(double)), wn = 0, rn = 0;
        for (size_t j = a; j < e; j++) {
            m[j] = b1 * m[j] + (1 - b1) * g[j];
            v[j] = b2 * v[j] + (1 - b2) * (double)g[j] * g[j];
            double adam = (m[j] / bc1) / (sqrt(v[j] / bc2) + eps);
            r[j - a] = adam + d * w[j];  // AdamW: w -= lr*(adam + wd*w), the same direction
            wn += w[j] * w[j], rn += r[j - a] * r[j - a];
        }
        double ratio = 1.0;
        if (kind == DT_OPT_LAMB && decays(p) && wn > 0 && rn > 0) ratio = sqrt(wn) / sqrt(rn);
        for (size_t j = a; j < e; j++) w[j] -= lr * ratio * r[j - a];
        free(r);
    }
}

static void run_against_reference(tu_fixture *f, dt_opt_kind kind) {
    dt_net *net = small_gpt(f);
    size_t n = net->n_trainable;
    dt_optim_config oc = dt_optim_config_default(kind);
    oc.weight_decay = (float)tu_uniform(&f->rng, 0.05, 0.2);
    oc.beta1 = (float)tu_uniform(&f->rng, 0.8, 0.95);
    oc.beta2 = (float)tu_uniform(&f->rng, 0.9, 0.999);
    dt_error err;
    dt_optim *opt = dt_optim_create(net, &oc, &err);
    if (!opt) fail_msg("optimizer: %s", err.msg);
    float *wf = malloc(n * sizeof(float)), *g = malloc(n * sizeof(float));
    tu_fill_uniform(&f->rng, wf, n, -1.0, 1.0);
    f->dev->from_host(f->dev, net->params, wf, n * sizeof(float));
    double *w = malloc(n * sizeof(double)), *m = calloc(n, sizeof(double));
    double *v = calloc(n, sizeof(double));
    for (size_t i = 0; i < n; i++) w[i] = wf[i];
    dt_lr_schedule s = {0};
    s.kind = DT_LR_COSINE, s.base_lr = 1e-2f, s.warmup_steps = 2, s.warmup_start = 0.1f;
    s.total_steps = STEPS, s.final_frac = 0.1f;
    double lr_sum = 0;
    for (int t = 1; t <= STEPS; t++) {
        tu_fill_uniform(&f->rng, g, n, -1.0, 1.0);
        f->dev->from_host(f->dev, net->grads, g, n * sizeof(float));
        float lr = dt_lr_at(&s, t - 1);
        dt_optim_step(opt, net, lr);
        ref_step(net, kind, w, m, v, g, lr, oc.beta1, oc.beta2, oc.eps, oc.weight_decay, t);
        lr_sum += lr * 4.0;  // a LAMB step may exceed lr by the trust ratio (|w|/|r| < 4 here)
        tu_dev_download(f->dev, wf, net->params, n);
        double worst = 0, moved = 0;
        for (size_t i = 0; i < n; i++) {
            double tol = TOL * (fabs(w[i]) + lr_sum);
            worst = fmax(worst, fabs(wf[i] - w[i]) / tol);
        }
        for (size_t i = 0; i < n; i++) moved = fmax(moved, fabs(w[i] - wf[i]));
        printf("%s step %d lr %.4g: worst error %.3g of the tolerance\n",
               kind == DT_OPT_LAMB ? "lamb" : "adamw", t, (double)lr, worst);
        if (!(worst <= 1.0)) fail_msg("step %d: weights off the float64 reference", t);
    }
    free(wf), free(g), free(w), free(m), free(v);
    dt_optim_free(opt);
    dt_net_free(net);
}

static void test_adamw_matches_float64_reference(void **state) {
    run_against_reference(*state, DT_OPT_ADAMW);
}

static void test_lamb_matches_float64_reference(void **state) {
    run_against_reference(*state, DT_OPT_LAMB);
}

// Without decay, LAMB must differ from AdamW on a weight tensor (the trust ratio, > 1e-4)
// and agree on biases and layer norms (to rounding: the two round in different orders).
static void test_lamb_trust_ratio_only_on_weights(void **state) {
    tu_fixture *f = *state;
    dt_net *a = small_gpt(f), *b = small_gpt(f);
    size_t n = a->n_trainable;
    float *w = malloc(n * sizeof(float)), *g = malloc(n * sizeof(float));
    float *wa = malloc(n * sizeof(float)), *wb = malloc(n * sizeof(float));
    tu_fill_uniform(&f->rng, w, n, -1.0, 1.0);
    tu_fill_uniform(&f->rng, g, n, -1.0, 1.0);
    dt_net *nets[2] = {a, b};
    dt_opt_kind kinds[2] = {DT_OPT_ADAMW, DT_OPT_LAMB};
    for (int k = 0; k < 2; k++) {
        dt_optim_config oc = dt_optim_config_default(kinds[k]);
        oc.weight_decay = 0.0f, oc.eps = 1e-8f;
        dt_error err;
        dt_optim *o = dt_optim_create(nets[k], &oc, &err);
        nets[k]->dev->from_host(nets[k]->dev, nets[k]->params, w, n * sizeof(float));
        nets[k]->dev->from_host(nets[k]->dev, nets[k]->grads, g, n * sizeof(float));
        dt_optim_step(o, nets[k], 1e-2f);
        dt_optim_free(o);
    }
    tu_dev_download(f->dev, wa, a->params, n);
    tu_dev_download(f->dev, wb, b->params, n);
    int weights_differ = 0;
    for (int i = 0; i < a->n_params; i++) {
        const dt_param *p = &a->params_table[i];
        double d = 0;
        for (size_t j = p->offset; j < p->offset + p->count; j++)
            d = fmax(d, fabs(wa[j] - wb[j]));
        if (decays(p)) weights_differ += d > 1e-4;
        else if (d > 1e-6) fail_msg("%s: lamb and adamw differ (%g) without decay", p->name, d);
    }
    assert_true(weights_differ > 0);
    free(w), free(g), free(wa), free(wb);
    dt_net_free(a), dt_net_free(b);
}

static void test_clip_grad_norm(void **state) {
    tu_fixture *f = *state;
    dt_net *net = small_gpt(f);
    size_t n = net->n_trainable;
    float *g = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
    tu_fill_uniform(&f->rng, g, n, -1.0, 1.0);
    double ss = 0;
    for (size_t i = 0; i < n; i++) ss += (double)g[i] * g[i];
    double norm = sqrt(ss), max_norm = norm * tu_uniform(&f->rng, 0.1, 0.9);
    f->dev->from_host(f->dev, net->grads, g, n * sizeof(float));
    double got = dt_clip_grad_norm(net, max_norm);
    assert_true(fabs(got - norm) <= 1e-9 * norm);
    tu_dev_download(f->dev, out, net->grads, n);
    double coef = max_norm / (norm + 1e-6), ss2 = 0;
    for (size_t i = 0; i < n; i++) {
        assert_true(fabs(out[i] - g[i] * coef) <= 1e-6 * fabs(g[i] * coef) + 1e-12);
        ss2 += (double)out[i] * out[i];
    }
    assert_true(fabs(sqrt(ss2) - max_norm) <= 1e-5 * max_norm);  // the norm is now max_norm
    // under the limit: untouched, bit for bit
    f->dev->from_host(f->dev, net->grads, g, n * sizeof(float));
    dt_clip_grad_norm(net, norm * 1.5);
    tu_dev_download(f->dev, out, net->grads, n);
    assert_memory_equal(out, g, n * sizeof(float));
    free(g), free(out);
    dt_net_free(net);
}

// Warm-up then cosine (Loshchilov & Hutter 2017 eq. 5, one cycle, eta_min = final):
// the closed form at random points, and its fixed points.
static void test_cosine_schedule(void **state) {
    tu_fixture *f = *state;
    dt_lr_schedule s = {0};
    s.kind = DT_LR_COSINE;
    s.base_lr = (float)tu_uniform(&f->rng, 1e-4, 1e-2);
    s.warmup_steps = tu_int(&f->rng, 0, 100);
    s.warmup_start = 0.0f;
    s.total_steps = s.warmup_steps + tu_int(&f->rng, 10, 1000);
    s.final_frac = (float)tu_uniform(&f->rng, 0.0, 0.2);
    dt_error err;
    assert_int_equal(dt_lr_schedule_check(&s, &err), 0);
    double base = s.base_lr, fin = base * s.final_frac, w = s.warmup_steps;
    for (int k = 0; k < 100; k++) {
        double t = tu_uniform(&f->rng, 0, s.total_steps * 1.2), want;
        if (t < w) want = base * t / w;
        else if (t >= s.total_steps) want = fin;
        else want = fin + 0.5 * (base - fin) * (1 + cos(M_PI * (t - w) / (s.total_steps - w)));
        assert_true(fabs(dt_lr_at(&s, t) - want) <= 1e-6 * base);
    }
    assert_true(fabs(dt_lr_at(&s, w) - base) <= 1e-7 * base);
    assert_true(fabs(dt_lr_at(&s, w + (s.total_steps - w) / 2) - (base + fin) / 2) <=
                1e-6 * base);
    s.total_steps = s.warmup_steps;  // no room to decay: refused, naming the field
    assert_int_not_equal(dt_lr_schedule_check(&s, &err), 0);
    assert_int_equal(err.code, DT_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "cosine total steps"));
    s.total_steps = s.warmup_steps + 1, s.final_frac = 1.5f;
    assert_int_not_equal(dt_lr_schedule_check(&s, &err), 0);
}

static void test_refusals(void **state) {
    tu_fixture *f = *state;
    dt_net *net = small_gpt(f);
    dt_error err;
    dt_optim_config oc = dt_optim_config_default(DT_OPT_ADAMW);
    oc.beta2 = 1.0f;
    assert_null(dt_optim_create(net, &oc, &err));
    assert_int_equal(err.code, DT_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "betas"));
    dt_device lacking = *f->dev;  // as the cuda and model devices
    lacking.name = "lacking", lacking.lamb_direction = NULL;
    dt_device *real = net->dev;
    net->dev = &lacking;
    oc = dt_optim_config_default(DT_OPT_LAMB);
    assert_null(dt_optim_create(net, &oc, &err));
    assert_non_null(strstr(err.msg, "no lamb update"));
    net->dev = real;
    dt_net_free(net);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adamw_matches_float64_reference),
        cmocka_unit_test(test_lamb_matches_float64_reference),
        cmocka_unit_test(test_lamb_trust_ratio_only_on_weights),
        cmocka_unit_test(test_clip_grad_norm),
        cmocka_unit_test(test_cosine_schedule),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, tu_fixture_setup, tu_fixture_teardown);
}
