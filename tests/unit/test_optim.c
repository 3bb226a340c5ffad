// test_optim.c — SGD (momentum, Nesterov, weight decay on weights only) and LARS (trust
// ratio on weights; plain momentum on biases and BN parameters; local_lr = 1 for a zero
// weight tensor or a zero gradient) against an independent float64 reference written here,
// over several steps with fresh random weights and gradients. Most networks are filled by
// hand (a parameter table over device buffers); one test uses the builder (dt_net_add_*),
// none the model zoo.
// Tolerance: fp32 against float64, 1e-6 of the magnitude of the terms that make each value
// (see ref_state; errors seen stay under 2.5e-7). Hyperparameters are exaggerated (weight
// decay 0.01-0.1, trust 0.05-0.5) so that every term of every formula moves the result by
// far more than the tolerance.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "optim.h"
#include "testutil.h"

#define TOL 1e-6
#define STEPS 6
#define MAXP 8

// A hand-built network: trainable tensors first (conv weight, conv bias, BN gamma, BN beta,
// linear weight, linear bias), then the BN running statistics, as nn/net.h lays them out.
typedef struct {
    dt_net net;
    dt_param table[MAXP];
    dt_device *dev;
} hand_net;

static void add_param(hand_net *h, const char *name, dt_param_kind kind, size_t count,
                      size_t *off) {
    dt_param *p = &h->table[h->net.n_params++];
    snprintf(p->name, sizeof p->name, "%s", name);
    p->kind = kind;
    p->ndim = 1;
    p->shape[0] = (int)count;
    p->offset = *off;
    p->count = count;
    p->trainable = kind != DT_PARAM_RUNNING_MEAN && kind != DT_PARAM_RUNNING_VAR;
    *off += count;
}

// Random sizes: a conv weight (oc,c,3,3), its bias, BN(oc), a linear weight (k, oc) and bias.
static hand_net *hand_net_new(dt_device *dev, tu_rng *r) {
    hand_net *h = calloc(1, sizeof *h);
    h->dev = dev;
    h->net.dev = dev;
    h->net.params_table = h->table;
    h->net.cap_params = MAXP;
    snprintf(h->net.model, sizeof h->net.model, "hand");
    int oc = tu_int(r, 2, 9), c = tu_int(r, 1, 4), k = tu_int(r, 2, 12);
    size_t off = 0;
    add_param(h, "conv.weight", DT_PARAM_WEIGHT, (size_t)oc * c * 9, &off);
    add_param(h, "conv.bias", DT_PARAM_BIAS, (size_t)oc, &off);
    add_param(h, "bn.weight", DT_PARAM_BN_GAMMA, (size_t)oc, &off);
    add_param(h, "bn.bias", DT_PARAM_BN_BETA, (size_t)oc, &off);
    add_param(h, "fc.weight", DT_PARAM_WEIGHT, (size_t)k * oc, &off);
    add_param(h, "fc.bias", DT_PARAM_BIAS, (size_t)k, &off);
    h->net.n_trainable = off;
    add_param(h, "bn.running_mean", DT_PARAM_RUNNING_MEAN, (size_t)oc, &off);
    add_param(h, "bn.running_var", DT_PARAM_RUNNING_VAR, (size_t)oc, &off);
    h->net.n_total = off;
    h->net.params = dev->alloc(dev, off * sizeof(float));
    h->net.grads = dev->alloc(dev, h->net.n_trainable * sizeof(float));
    h->net.finalized = 1;
    return h;
}

static void hand_net_free(hand_net *h) {
    h->dev->free(h->dev, h->net.params);
    h->dev->free(h->dev, h->net.grads);
    free(h);
}

// The same tensors through the real builder (nn/net.c): conv (with bias) -> BN -> ReLU ->
// global average pool -> linear, so the parameter table that models produce is the one
// the optimizer walks.
static dt_net *builder_net(dt_device *dev, tu_rng *r) {
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = 2;
    cfg.in_c = tu_int(r, 1, 4);
    cfg.in_h = cfg.in_w = 5;
    cfg.num_classes = tu_int(r, 2, 12);
    dt_net *net = dt_net_new(dev, "optim-test", &cfg);
    int oc = tu_int(r, 2, 9);
    int x = dt_net_add_conv(net, "conv", -1, oc, 3, 1, 1, 1);
    x = dt_net_add_bn(net, "bn", x);
    x = dt_net_add_relu(net, x);
    x = dt_net_add_avgpool(net, x, 1, 1);
    dt_net_add_linear(net, "fc", x, cfg.num_classes, 1);
    dt_error err;
    if (dt_net_finalize(net, &err) != 0) fail_msg("dt_net_finalize: %s", err.msg);
    int seen[DT_PARAM_RUNNING_VAR + 1] = {0};  // every kind of tensor is there
    for (int i = 0; i < net->n_params; i++) seen[net->params_table[i].kind]++;
    assert_true(seen[DT_PARAM_WEIGHT] == 2 && seen[DT_PARAM_BIAS] == 2);
    assert_true(seen[DT_PARAM_BN_GAMMA] == 1 && seen[DT_PARAM_BN_BETA] == 1);
    assert_true(seen[DT_PARAM_RUNNING_MEAN] == 1 && seen[DT_PARAM_RUNNING_VAR] == 1);
    return net;
}

// ---- the float64 reference (written from the papers' formulas, not from optim.c) ----
// Beside each value it carries the sum of the magnitudes of the terms that made it (mw for
// w, mv for v): fp32 rounding errors are a few ulps of those terms (a forward error bound),
// so the check is |fp32 - ref| <= TOL*magnitude, with TOL = 1e-6 (about 16 ulps). A wrong
// formula is off by a whole term (lr*wd*w with wd >= 0.01, a trust ratio, m*v): 1e-3 or
// more of the magnitude.
typedef struct {
    double *w, *v;    // n_total and n_trainable
    double *mw, *mv;  // n_trainable each
} ref_state;

static void ref_sgd(const dt_net *net, ref_state *s, const float *g, double lr, double m,
                    double wd, int nesterov) {
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        if (!p->trainable) continue;
        double d = p->kind == DT_PARAM_WEIGHT ? wd : 0.0;  // Jia et al. 2018
        for (size_t j = p->offset; j < p->offset + p->count; j++) {
            double gp = g[j] + d * s->w[j], mg = fabs(g[j]) + fabs(d * s->w[j]);
            s->v[j] = m * s->v[j] + gp;
            s->mv[j] = m * s->mv[j] + mg;
            s->w[j] -= lr * (nesterov ? gp + m * s->v[j] : s->v[j]);
            s->mw[j] += lr * (nesterov ? mg + m * s->mv[j] : s->mv[j]);
        }
    }
}

static void ref_lars(const dt_net *net, ref_state *s, const float *g, double lr, double m,
                     double wd, double eta, double eps) {
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        if (!p->trainable) continue;
        size_t a = p->offset, b = p->offset + p->count;
        double local = 1.0, d = 0.0;  // biases and BN: plain momentum, no decay
        if (p->kind == DT_PARAM_WEIGHT) {
            double ww = 0, gg = 0;
            for (size_t j = a; j < b; j++) {
                ww += s->w[j] * s->w[j];
                gg += (double)g[j] * g[j];
            }
            double wn = sqrt(ww), gn = sqrt(gg);
            local = (wn > 0 && gn > 0) ? eta * wn / (gn + wd * wn + eps) : 1.0;
            d = wd;
        }
        for (size_t j = a; j < b; j++) {
            s->v[j] = m * s->v[j] + lr * local * (g[j] + d * s->w[j]);
            s->mv[j] = m * s->mv[j] + lr * local * (fabs(g[j]) + fabs(d * s->w[j]));
            s->w[j] -= s->v[j];
            s->mw[j] += s->mv[j];
        }
    }
}

// |a - b| <= tol * mag, element by element
static void check_tensor(const char *what, const char *name, const float *a, const double *b,
                         const double *mag, size_t n, double tol) {
    for (size_t j = 0; j < n; j++) {
        double e = fabs((double)a[j] - b[j]);
        if (!(e <= tol * mag[j]))
            fail_msg("%s of %s[%zu]: fp32 %.9g, float64 %.9g: error %.3g exceeds %.3g of the "
                     "terms' magnitude %.3g",
                     what, name, j, (double)a[j], b[j], e, tol, mag[j]);
    }
}

// Compares params, velocity, untouched gradients and running statistics with the reference.
static void check_all(dt_net *net, const dt_optim *opt, const ref_state *s, const float *g,
                      const float *running0) {
    dt_device *d = net->dev;
    size_t nt = net->n_trainable, n = net->n_total;
    float *w = malloc(n * sizeof(float)), *v = malloc(nt * sizeof(float));
    float *gd = malloc(nt * sizeof(float));
    tu_dev_download(d, w, net->params, n);
    tu_dev_download(d, v, opt->velocity, nt);
    tu_dev_download(d, gd, net->grads, nt);
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        if (!p->trainable) continue;
        size_t o = p->offset;
        check_tensor("weights", p->name, w + o, s->w + o, s->mw + o, p->count, TOL);
        check_tensor("velocity", p->name, v + o, s->v + o, s->mv + o, p->count, TOL);
    }
    assert_memory_equal(gd, g, nt * sizeof(float));                       // grads are read only
    assert_memory_equal(w + nt, running0, (n - nt) * sizeof(float));      // stats untouched
    free(w);
    free(v);
    free(gd);
}

// Runs STEPS steps of opt on h with fresh gradients (per-tensor scales 1e-2..10) and a
// changing lr, against the reference; zero_weight/zero_grad zero the first weight tensor or
// its gradient (every step).
static dt_optim_config random_config(tu_rng *r, dt_opt_kind kind, int nesterov);

static void run_case(dt_opt_kind kind, int nesterov, int zero_weight, int zero_grad,
                     int use_builder) {
    tu_rng r = tu_rng_new(tu_seed());
    dt_optim_config cfg = random_config(&r, kind, nesterov);
    dt_device *d = dt_device_cpu_create(1);
    hand_net *h = use_builder ? NULL : hand_net_new(d, &r);
    dt_net *net = use_builder ? builder_net(d, &r) : &h->net;
    size_t nt = net->n_trainable, n = net->n_total;
    float *w0 = malloc(n * sizeof(float)), *g = malloc(nt * sizeof(float));
    tu_fill_uniform(&r, w0, n, -1.0, 1.0);
    for (size_t j = nt; j < n; j++) w0[j] = (float)tu_uniform(&r, 0.5, 2.0);  // stats
    const dt_param *first = &net->params_table[0];
    if (zero_weight) memset(w0 + first->offset, 0, first->count * sizeof(float));
    d->from_host(d, net->params, w0, n * sizeof(float));

    ref_state s = {calloc(n, sizeof(double)), calloc(nt, sizeof(double)),
                   calloc(nt, sizeof(double)), calloc(nt, sizeof(double))};
    for (size_t j = 0; j < n; j++) s.w[j] = w0[j];
    for (size_t j = 0; j < nt; j++) s.mw[j] = fabs(w0[j]);

    dt_error err;
    dt_optim *opt = dt_optim_create(net, &cfg, &err);
    assert_non_null(opt);
    assert_int_equal(opt->n, nt);
    double lr0 = tu_uniform(&r, 0.05, 0.5);
    for (int step = 0; step < STEPS; step++) {
        for (int i = 0; i < net->n_params; i++) {
            const dt_param *p = &net->params_table[i];
            if (!p->trainable) continue;
            double scale = pow(10.0, tu_uniform(&r, -2.0, 1.0));
            tu_fill_uniform(&r, g + p->offset, p->count, -scale, scale);
        }
        if (zero_grad) memset(g + first->offset, 0, first->count * sizeof(float));
        d->from_host(d, net->grads, g, nt * sizeof(float));
        float lr = (float)(lr0 * (1.0 + 0.4 * step));  // lr changes every step
        dt_optim_step(opt, net, lr);
        if (cfg.kind == DT_OPT_SGD)
            ref_sgd(net, &s, g, lr, cfg.momentum, cfg.weight_decay, cfg.nesterov);
        else
            ref_lars(net, &s, g, lr, cfg.momentum, cfg.weight_decay, cfg.trust, cfg.eps);
        check_all(net, opt, &s, g, w0 + nt);
    }
    assert_int_equal(opt->step, STEPS);
    dt_optim_free(opt);
    free(s.w);
    free(s.v);
    free(s.mw);
    free(s.mv);
    free(w0);
    free(g);
    if (h)
        hand_net_free(h);
    else
        dt_net_free(net);
    d->destroy(d);
}

static dt_optim_config random_config(tu_rng *r, dt_opt_kind kind, int nesterov) {
    dt_optim_config c = dt_optim_config_default(kind);
    c.momentum = (float)tu_uniform(r, 0.5, 0.95);
    c.weight_decay = (float)tu_uniform(r, 0.01, 0.1);
    c.nesterov = nesterov;
    c.trust = (float)tu_uniform(r, 0.05, 0.5);
    c.eps = 1e-9f;
    return c;
}

static void test_sgd_momentum_matches_float64_reference_weight_decay_on_weights_only(
    void **state) {
    (void)state;
    run_case(DT_OPT_SGD, 0, 0, 0, 0);
}

static void test_sgd_nesterov_matches_float64_reference(void **state) {
    (void)state;
    run_case(DT_OPT_SGD, 1, 0, 0, 0);
}

static void test_lars_matches_float64_reference_trust_ratio_on_weights_plain_on_bias_bn(
    void **state) {
    (void)state;
    run_case(DT_OPT_LARS, 0, 0, 0, 0);
}

static void test_lars_zero_weight_tensor_takes_local_lr_one_then_trust_ratio(void **state) {
    (void)state;
    run_case(DT_OPT_LARS, 0, 1, 0, 0);
}

static void test_lars_zero_gradient_takes_local_lr_one(void **state) {
    (void)state;
    run_case(DT_OPT_LARS, 0, 0, 1, 0);
}

static void test_sgd_and_lars_on_builder_network_match_float64_reference(void **state) {
    (void)state;
    run_case(DT_OPT_SGD, 0, 0, 0, 1);
    run_case(DT_OPT_SGD, 1, 0, 0, 1);
    run_case(DT_OPT_LARS, 0, 0, 0, 1);
}

// One step from v = 0 with a zero gradient: SGD shrinks weights by exactly (1 - lr*wd) and
// leaves biases and BN gamma/beta bit-identical (no decay on them, Jia et al. 2018); LARS
// gives the same closed form for weights, since local_lr = 1 when |g| = 0.
static void one_step_zero_gradient(dt_opt_kind kind) {
    tu_rng r = tu_rng_new(tu_seed());
    dt_device *d = dt_device_cpu_create(1);
    hand_net *h = hand_net_new(d, &r);
    dt_net *net = &h->net;
    size_t n = net->n_total;
    float *w0 = malloc(n * sizeof(float)), *w1 = malloc(n * sizeof(float));
    tu_fill_uniform(&r, w0, n, -1.0, 1.0);
    d->from_host(d, net->params, w0, n * sizeof(float));  // grads are zero from alloc
    dt_optim_config cfg = dt_optim_config_default(kind);
    cfg.weight_decay = 0.05f;
    dt_optim *opt = dt_optim_create(net, &cfg, NULL);
    assert_non_null(opt);
    float lr = 0.3f;
    dt_optim_step(opt, net, lr);
    tu_dev_download(d, w1, net->params, n);
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        for (size_t j = p->offset; j < p->offset + p->count; j++) {
            if (p->kind == DT_PARAM_WEIGHT) {
                double want = w0[j] * (1.0 - (double)lr * cfg.weight_decay);
                if (!(fabs(w1[j] - want) <= 1e-6 * (fabs(want) + 1e-3)))
                    fail_msg("%s[%zu]: %.9g, expected w*(1-lr*wd) = %.9g", p->name,
                             j - p->offset, (double)w1[j], want);
            } else if (w1[j] != w0[j]) {
                fail_msg("%s[%zu] changed (%.9g -> %.9g): no decay expected on it", p->name,
                         j - p->offset, (double)w0[j], (double)w1[j]);
            }
        }
    }
    dt_optim_free(opt);
    free(w0);
    free(w1);
    hand_net_free(h);
    d->destroy(d);
}

static void test_sgd_zero_gradient_decays_weights_only_not_bias_or_bn(void **state) {
    (void)state;
    one_step_zero_gradient(DT_OPT_SGD);
}

static void test_lars_zero_gradient_decays_weights_only_not_bias_or_bn(void **state) {
    (void)state;
    one_step_zero_gradient(DT_OPT_LARS);
}

// dt_lars_local_lr (nn/kernels.h) against the closed form, and 1 for a zero norm.
static void test_lars_local_lr_closed_form_and_one_for_zero_norms(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int k = 0; k < 100; k++) {
        double wn = tu_uniform(&r, 1e-3, 100), gn = tu_uniform(&r, 1e-3, 100);
        double eta = tu_uniform(&r, 1e-4, 1), wd = tu_uniform(&r, 0, 1e-2), eps = 1e-9;
        double want = eta * wn / (gn + wd * wn + eps);
        double got = dt_lars_local_lr(wn, gn, eta, wd, eps);
        assert_true(fabs(got - want) <= 1e-15 * want);
    }
    assert_true(dt_lars_local_lr(0.0, 3.0, 0.001, 1e-4, 1e-9) == 1.0);
    assert_true(dt_lars_local_lr(3.0, 0.0, 0.001, 1e-4, 1e-9) == 1.0);
    assert_true(dt_lars_local_lr(0.0, 0.0, 0.001, 1e-4, 1e-9) == 1.0);
}

static void expect_rejected(const dt_net *net, dt_optim_config c, const char *word) {
    dt_error err;
    dt_error_clear(&err);
    dt_optim *opt = dt_optim_create(net, &c, &err);
    if (opt) {
        dt_optim_free(opt);
        fail_msg("a config with a bad %s was accepted", word);
    }
    assert_int_equal(err.code, DT_EXIT_USAGE);
    if (!strstr(err.msg, word)) fail_msg("message '%s' does not name '%s'", err.msg, word);
}

static void test_optim_create_rejects_bad_config_and_unfinalized_net(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    dt_device *d = dt_device_cpu_create(1);
    hand_net *h = hand_net_new(d, &r);
    dt_optim_config c = dt_optim_config_default(DT_OPT_SGD);
    c.momentum = -0.1f;
    expect_rejected(&h->net, c, "momentum");
    c.momentum = 1.0f;
    expect_rejected(&h->net, c, "momentum");
    c = dt_optim_config_default(DT_OPT_SGD);
    c.weight_decay = -1e-4f;
    expect_rejected(&h->net, c, "weight decay");
    c.weight_decay = NAN;
    expect_rejected(&h->net, c, "weight decay");
    c = dt_optim_config_default(DT_OPT_SGD);
    c.nesterov = 1;
    c.momentum = 0.0f;
    expect_rejected(&h->net, c, "nesterov");
    c = dt_optim_config_default(DT_OPT_LARS);
    c.nesterov = 1;
    expect_rejected(&h->net, c, "nesterov");
    c = dt_optim_config_default(DT_OPT_LARS);
    c.trust = 0.0f;
    expect_rejected(&h->net, c, "trust");
    c = dt_optim_config_default(DT_OPT_LARS);
    c.eps = -1.0f;
    expect_rejected(&h->net, c, "epsilon");
    c = dt_optim_config_default(DT_OPT_SGD);
    c.kind = (dt_opt_kind)7;
    expect_rejected(&h->net, c, "kind");
    h->net.finalized = 0;
    expect_rejected(&h->net, dt_optim_config_default(DT_OPT_SGD), "finalized");
    h->net.finalized = 1;
    dt_error err;
    assert_null(dt_optim_create(NULL, &c, &err));
    assert_int_equal(err.code, DT_EXIT_USAGE);
    // the defaults are accepted and are the published values
    dt_optim_config s = dt_optim_config_default(DT_OPT_SGD);
    dt_optim_config l = dt_optim_config_default(DT_OPT_LARS);
    assert_true(s.momentum == 0.9f && s.weight_decay == 1e-4f && !s.nesterov);
    assert_true(l.trust == 0.001f && l.eps == 1e-9f && l.momentum == 0.9f);
    dt_optim *o1 = dt_optim_create(&h->net, &s, &err), *o2 = dt_optim_create(&h->net, &l, &err);
    assert_non_null(o1);
    assert_non_null(o2);
    dt_optim_free(o1);
    dt_optim_free(o2);
    hand_net_free(h);
    d->destroy(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sgd_momentum_matches_float64_reference_weight_decay_on_weights_only),
        cmocka_unit_test(test_sgd_nesterov_matches_float64_reference),
        cmocka_unit_test(test_sgd_zero_gradient_decays_weights_only_not_bias_or_bn),
        cmocka_unit_test(test_lars_matches_float64_reference_trust_ratio_on_weights_plain_on_bias_bn),
        cmocka_unit_test(test_lars_zero_weight_tensor_takes_local_lr_one_then_trust_ratio),
        cmocka_unit_test(test_lars_zero_gradient_takes_local_lr_one),
        cmocka_unit_test(test_lars_zero_gradient_decays_weights_only_not_bias_or_bn),
        cmocka_unit_test(test_lars_local_lr_closed_form_and_one_for_zero_norms),
        cmocka_unit_test(test_sgd_and_lars_on_builder_network_match_float64_reference),
        cmocka_unit_test(test_optim_create_rejects_bad_config_and_unfinalized_net),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
