// test_lr_schedule.c — learning-rate schedules (linear warm-up, then constant, step or
// polynomial decay) against their closed forms at chosen and random steps, the linear
// scaling rule (Goyal et al. 2017), the lr schedule validator, and dynamic loss scaling
// (Micikevicius et al. 2018): skip + halve on NaN/Inf, never below 1, unscale by 1/S, double
// after growth_interval good steps. Random bases, lengths and milestones from tu_seed().
// Tolerance: the lr schedule returns a float computed in double, so 1e-6 relative (fp32 has
// 6e-8); unscaled gradients 1e-6 relative to a float64 reference.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optim.h"
#include "testutil.h"

#define TOL 1e-6

static void expect_lr(const dt_lr_schedule *s, double t, double want) {
    double got = dt_lr_at(s, t);
    double err = fabs(got - want);
    if (!(err <= TOL * fabs(want) + 1e-30))
        fail_msg("lr at t=%.9g: got %.9g, expected %.9g", t, got, want);
}

static dt_lr_schedule random_lr_schedule(tu_rng *r, dt_lr_schedule_kind kind) {
    dt_lr_schedule s;
    memset(&s, 0, sizeof s);
    s.kind = kind;
    s.base_lr = (float)tu_uniform(r, 0.05, 30.0);
    s.warmup_steps = (double)tu_int(r, 10, 5000);
    s.warmup_start = (float)tu_uniform(r, 0.0, 0.5);
    s.total_steps = s.warmup_steps + (double)tu_int(r, 100, 100000);
    s.power = 2.0f;
    s.gamma = (float)tu_uniform(r, 0.05, 0.5);
    s.n_milestones = tu_int(r, 1, 8);
    double m = s.warmup_steps;
    for (int i = 0; i < s.n_milestones; i++) {
        m += (double)tu_int(r, 1, 3000);
        s.milestones[i] = m;
    }
    return s;
}

// warm-up closed form (Goyal et al. 2017 sec. 2.2)
static double warm(const dt_lr_schedule *s, double t) {
    return s->base_lr * (s->warmup_start + (1.0 - s->warmup_start) * t / s->warmup_steps);
}

static void test_warmup_is_linear_from_start_fraction_to_base_lr(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int kind = DT_LR_CONST; kind <= DT_LR_POLY; kind++) {
        dt_lr_schedule s = random_lr_schedule(&r, (dt_lr_schedule_kind)kind);
        assert_int_equal(dt_lr_schedule_check(&s, NULL), 0);
        double w = s.warmup_steps;
        expect_lr(&s, 0.0, (double)s.base_lr * s.warmup_start);        // start
        expect_lr(&s, w / 2, s.base_lr * (s.warmup_start + 1.0) / 2);  // middle
        expect_lr(&s, w, s.base_lr);                                   // end: peak
        expect_lr(&s, w - 1.0, warm(&s, w - 1.0));
        for (int k = 0; k < 20; k++) {
            double t = tu_uniform(&r, 0.0, w);
            expect_lr(&s, t, warm(&s, t));
        }
        expect_lr(&s, -5.0, (double)s.base_lr * s.warmup_start);  // before 0 reads as 0
    }
}

static void test_no_warmup_starts_at_base_lr(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    dt_lr_schedule s = random_lr_schedule(&r, DT_LR_CONST);
    s.warmup_steps = 0;
    assert_int_equal(dt_lr_schedule_check(&s, NULL), 0);
    expect_lr(&s, 0.0, s.base_lr);
    expect_lr(&s, 0.5, s.base_lr);
}

static void test_const_after_warmup_stays_at_base_lr(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    dt_lr_schedule s = random_lr_schedule(&r, DT_LR_CONST);
    for (int k = 0; k < 20; k++) expect_lr(&s, s.warmup_steps + tu_uniform(&r, 0, 1e6), s.base_lr);
}

static void test_step_decay_multiplies_by_gamma_at_each_milestone_boundary(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    dt_lr_schedule s = random_lr_schedule(&r, DT_LR_STEP);
    assert_int_equal(dt_lr_schedule_check(&s, NULL), 0);
    double b = s.base_lr, g = s.gamma;
    expect_lr(&s, s.warmup_steps, b);
    for (int i = 0; i < s.n_milestones; i++) {
        double m = s.milestones[i];
        expect_lr(&s, m - 0.25, b * pow(g, i));      // just before: i decays so far
        expect_lr(&s, m, b * pow(g, i + 1));         // at the milestone (MultiStepLR)
        expect_lr(&s, m + 0.5, b * pow(g, i + 1));   // just after
    }
    expect_lr(&s, s.milestones[s.n_milestones - 1] + 1e7, b * pow(g, s.n_milestones));
    // Goyal et al. 2017's ImageNet schedule in steps: x0.1 at epochs 30, 60, 80
    dt_lr_schedule goyal = {.kind = DT_LR_STEP, .base_lr = 3.2f, .warmup_steps = 5,
                            .warmup_start = 0.1f / 3.2f, .n_milestones = 3,
                            .milestones = {30, 60, 80}, .gamma = 0.1f};
    assert_int_equal(dt_lr_schedule_check(&goyal, NULL), 0);
    expect_lr(&goyal, 0, 0.1);
    expect_lr(&goyal, 29.9, 3.2);
    expect_lr(&goyal, 45, 0.32);
    expect_lr(&goyal, 70, 0.032);
    expect_lr(&goyal, 89, 0.0032);
}

static void test_poly_decay_power2_closed_form_midpoint_end_and_past_end(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    dt_lr_schedule s = random_lr_schedule(&r, DT_LR_POLY);
    assert_int_equal(dt_lr_schedule_check(&s, NULL), 0);
    double w = s.warmup_steps, T = s.total_steps, b = s.base_lr;
    expect_lr(&s, w, b);
    expect_lr(&s, (w + T) / 2, b / 4);  // midpoint: (1/2)^2
    expect_lr(&s, T, 0.0);
    expect_lr(&s, T + 1.0, 0.0);        // clamped past the end
    expect_lr(&s, T * 10, 0.0);
    for (int k = 0; k < 20; k++) {
        double t = tu_uniform(&r, w, T);
        double x = 1.0 - (t - w) / (T - w);
        expect_lr(&s, t, b * x * x);
    }
    s.power = (float)tu_uniform(&r, 0.5, 4.0);  // any power
    for (int k = 0; k < 20; k++) {
        double t = tu_uniform(&r, w, T);
        expect_lr(&s, t, b * pow(1.0 - (t - w) / (T - w), s.power));
    }
}

static void test_linear_scaling_rule_lr_per_256_times_batch_over_256(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    assert_true(fabs(dt_linear_scaling_lr(0.1f, 8192) - 3.2) <= 1e-6 * 3.2);  // Goyal et al.
    assert_true(fabs(dt_linear_scaling_lr(0.1f, 256) - 0.1) <= 1e-6 * 0.1);
    for (int k = 0; k < 20; k++) {
        float lr = (float)tu_uniform(&r, 0.01, 1.0);
        int batch = tu_int(&r, 1, 65536);
        double want = (double)lr * batch / 256.0;
        assert_true(fabs(dt_linear_scaling_lr(lr, batch) - want) <= 1e-6 * want);
    }
}

static void expect_bad(dt_lr_schedule s, const char *word) {
    dt_error err;
    dt_error_clear(&err);
    assert_int_equal(dt_lr_schedule_check(&s, &err), -1);
    assert_int_equal(err.code, DT_EXIT_USAGE);
    if (!strstr(err.msg, word)) fail_msg("message '%s' does not name '%s'", err.msg, word);
}

static void test_lr_schedule_check_rejects_bad_fields(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    dt_lr_schedule s = random_lr_schedule(&r, DT_LR_STEP), b;
    b = s, b.base_lr = 0;
    expect_bad(b, "base lr");
    b = s, b.base_lr = NAN;
    expect_bad(b, "base lr");
    b = s, b.warmup_steps = -1;
    expect_bad(b, "warm-up steps");
    b = s, b.warmup_start = 1.5f;
    expect_bad(b, "warm-up start");
    b = s, b.n_milestones = 9;
    expect_bad(b, "milestones");
    b = s, b.gamma = 0;
    expect_bad(b, "gamma");
    b = s, b.milestones[0] = s.warmup_steps - 1;
    expect_bad(b, "warm-up");
    if (s.n_milestones >= 2) {
        b = s, b.milestones[1] = b.milestones[0] - 0.5;
        expect_bad(b, "decrease");
    }
    b = s, b.kind = (dt_lr_schedule_kind)9;
    expect_bad(b, "kind");
    s = random_lr_schedule(&r, DT_LR_POLY);
    b = s, b.total_steps = s.warmup_steps;
    expect_bad(b, "total steps");
    b = s, b.power = 0;
    expect_bad(b, "power");
}

// ---- dynamic loss scaling: a network that is only a gradient buffer ----
typedef struct {
    dt_net net;
    float *host;  // the gradients as uploaded
} grad_net;

static grad_net make_grads(dt_device *d, tu_rng *r, float scale) {
    grad_net g;
    memset(&g, 0, sizeof g);
    g.net.dev = d;
    g.net.n_trainable = (size_t)tu_int(r, 1, 5000);
    g.net.grads = d->alloc(d, g.net.n_trainable * sizeof(float));
    g.host = malloc(g.net.n_trainable * sizeof(float));
    for (size_t i = 0; i < g.net.n_trainable; i++)
        g.host[i] = (float)(tu_normal(r) * 1e-3 * scale);
    d->from_host(d, g.net.grads, g.host, g.net.n_trainable * sizeof(float));
    return g;
}

static void free_grads(grad_net *g) {
    g->net.dev->free(g->net.dev, g->net.grads);
    free(g->host);
}

static void test_loss_scaler_default_is_2_to_16_growth_2000(void **state) {
    (void)state;
    dt_loss_scaler ls = dt_loss_scaler_default();
    assert_true(ls.scale == 65536.0f);
    assert_int_equal(ls.growth_interval, 2000);
    assert_int_equal(ls.good_steps, 0);
    assert_int_equal(ls.skipped, 0);
}

static void test_loss_scaler_finite_grads_are_multiplied_by_one_over_scale(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    dt_device *d = dt_device_cpu_create(1);
    dt_loss_scaler ls = dt_loss_scaler_default();
    ls.scale = (float)tu_uniform(&r, 100.0, 70000.0);  // not a power of two on purpose
    grad_net g = make_grads(d, &r, ls.scale);
    size_t n = g.net.n_trainable;
    assert_int_equal(dt_loss_scaler_unscale(&ls, &g.net), 1);
    float *out = malloc(n * sizeof(float));
    double *want = malloc(n * sizeof(double));
    tu_dev_download(d, out, g.net.grads, n);
    for (size_t i = 0; i < n; i++) want[i] = (double)g.host[i] / ls.scale;
    tu_assert_close("unscaled gradients", out, want, n, TOL, 1e-30);
    assert_int_equal(ls.good_steps, 1);
    assert_int_equal(ls.skipped, 0);
    free(out);
    free(want);
    free_grads(&g);
    d->destroy(d);
}

static void test_loss_scaler_nan_or_inf_halves_scale_skips_and_keeps_grads(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    dt_device *d = dt_device_cpu_create(1);
    const float bad[3] = {NAN, INFINITY, -INFINITY};
    dt_loss_scaler ls = dt_loss_scaler_default();
    ls.good_steps = 17;  // an overflow restarts the count of good steps
    for (int k = 0; k < 3; k++) {
        grad_net g = make_grads(d, &r, 1.0f);
        size_t n = g.net.n_trainable, at = (size_t)tu_int(&r, 0, (int)n - 1);
        g.host[at] = bad[k];
        d->from_host(d, g.net.grads, g.host, n * sizeof(float));
        float before = ls.scale;
        assert_int_equal(dt_loss_scaler_unscale(&ls, &g.net), 0);
        assert_true(ls.scale == before / 2);
        assert_int_equal(ls.skipped, k + 1);
        assert_int_equal(ls.good_steps, 0);
        float *out = malloc(n * sizeof(float));
        tu_dev_download(d, out, g.net.grads, n);
        assert_memory_equal(out, g.host, n * sizeof(float));  // skipped: grads untouched
        free(out);
        free_grads(&g);
    }
    d->destroy(d);
}

static void test_loss_scaler_never_halves_below_one(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    dt_device *d = dt_device_cpu_create(1);
    grad_net g = make_grads(d, &r, 1.0f);
    g.host[0] = INFINITY;
    d->from_host(d, g.net.grads, g.host, g.net.n_trainable * sizeof(float));
    dt_loss_scaler ls = dt_loss_scaler_default();
    ls.scale = 1.5f;
    assert_int_equal(dt_loss_scaler_unscale(&ls, &g.net), 0);
    assert_true(ls.scale == 1.0f);
    assert_int_equal(dt_loss_scaler_unscale(&ls, &g.net), 0);
    assert_true(ls.scale == 1.0f);
    assert_int_equal(ls.skipped, 2);
    free_grads(&g);
    d->destroy(d);
}

static void test_loss_scaler_doubles_after_growth_interval_good_steps(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    dt_device *d = dt_device_cpu_create(1);
    dt_loss_scaler ls = dt_loss_scaler_default();
    ls.growth_interval = tu_int(&r, 2, 6);
    float s0 = ls.scale;
    grad_net g = make_grads(d, &r, 1.0f);
    for (int k = 1; k < ls.growth_interval; k++) {
        assert_int_equal(dt_loss_scaler_unscale(&ls, &g.net), 1);
        assert_true(ls.scale == s0);
        assert_int_equal(ls.good_steps, k);
    }
    assert_int_equal(dt_loss_scaler_unscale(&ls, &g.net), 1);
    assert_true(ls.scale == 2 * s0);  // the interval-th good step doubles S
    assert_int_equal(ls.good_steps, 0);
    // an overflow in the middle of an interval restarts it
    for (int k = 1; k < ls.growth_interval; k++) dt_loss_scaler_unscale(&ls, &g.net);
    grad_net bad = make_grads(d, &r, 1.0f);
    bad.host[bad.net.n_trainable - 1] = NAN;
    d->from_host(d, bad.net.grads, bad.host, bad.net.n_trainable * sizeof(float));
    assert_int_equal(dt_loss_scaler_unscale(&ls, &bad.net), 0);
    assert_true(ls.scale == s0);
    for (int k = 1; k < ls.growth_interval; k++) dt_loss_scaler_unscale(&ls, &g.net);
    assert_true(ls.scale == s0);
    dt_loss_scaler_unscale(&ls, &g.net);
    assert_true(ls.scale == 2 * s0);
    // growth_interval <= 0: S never grows
    ls.growth_interval = 0;
    for (int k = 0; k < 5; k++) dt_loss_scaler_unscale(&ls, &g.net);
    assert_true(ls.scale == 2 * s0);
    free_grads(&g);
    free_grads(&bad);
    d->destroy(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_warmup_is_linear_from_start_fraction_to_base_lr),
        cmocka_unit_test(test_no_warmup_starts_at_base_lr),
        cmocka_unit_test(test_const_after_warmup_stays_at_base_lr),
        cmocka_unit_test(test_step_decay_multiplies_by_gamma_at_each_milestone_boundary),
        cmocka_unit_test(test_poly_decay_power2_closed_form_midpoint_end_and_past_end),
        cmocka_unit_test(test_linear_scaling_rule_lr_per_256_times_batch_over_256),
        cmocka_unit_test(test_lr_schedule_check_rejects_bad_fields),
        cmocka_unit_test(test_loss_scaler_default_is_2_to_16_growth_2000),
        cmocka_unit_test(test_loss_scaler_finite_grads_are_multiplied_by_one_over_scale),
        cmocka_unit_test(test_loss_scaler_nan_or_inf_halves_scale_skips_and_keeps_grads),
        cmocka_unit_test(test_loss_scaler_never_halves_below_one),
        cmocka_unit_test(test_loss_scaler_doubles_after_growth_interval_good_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
