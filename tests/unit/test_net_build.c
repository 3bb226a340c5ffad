// test_net_build.c — building a network (nn/net.c): the parameter table (torchvision
// state_dict names and order, shapes, the layout trainables-then-running-statistics),
// parameter initialisation (Kaiming normal fan_out for conv, U(-1/sqrt(in), 1/sqrt(in)) for
// linear, bn constants; deterministic in the seed) checked with sample statistics against
// the closed forms, and the usage errors: an input too small for the architecture (code 2,
// naming the layer and the sizes), bad layer arguments, finalize misuse.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layers.h"
#include "net.h"
#include "testutil.h"

typedef tu_fixture fixture;  // a cpu device (2 threads) and a freshly seeded rng

static dt_model_config config(int B, int C, int H, int W, uint64_t seed) {
    dt_model_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.batch = B, cfg.in_c = C, cfg.in_h = H, cfg.in_w = W, cfg.num_classes = 10;
    cfg.seed = seed;
    return cfg;
}

// conv1(bias) bn1 relu maxpool layer1.0.conv1 layer1.0.bn1 avgpool fc
static dt_net *table_net(fixture *f, uint64_t seed) {
    dt_model_config cfg = config(2, 3, 16, 16, seed);
    dt_net *net = dt_net_new(f->dev, "tbl", &cfg);
    int x = dt_net_add_conv(net, "conv1", -1, 4, 3, 1, 1, 1);
    x = dt_net_add_bn(net, "bn1", x);
    x = dt_net_add_relu(net, x);
    x = dt_net_add_maxpool(net, x, 3, 2, 1);
    x = dt_net_add_conv(net, "layer1.0.conv1", x, 6, 3, 1, 1, 0);
    x = dt_net_add_bn(net, "layer1.0.bn1", x);
    x = dt_net_add_avgpool(net, x, 1, 1);
    x = dt_net_add_linear(net, "fc", x, 10, 1);
    assert_int_equal(x, 7);
    return net;
}

static void test_param_table_has_state_dict_names_order_and_layout(void **state) {
    fixture *f = *state;
    dt_net *net = table_net(f, 1);
    dt_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(dt_net_finalize(net, &e), 0);
    static const struct {
        const char *name;
        dt_param_kind kind;
        size_t count;
    } want[] = {
        {"conv1.weight", DT_PARAM_WEIGHT, 4 * 3 * 9},
        {"conv1.bias", DT_PARAM_BIAS, 4},
        {"bn1.weight", DT_PARAM_BN_GAMMA, 4},
        {"bn1.bias", DT_PARAM_BN_BETA, 4},
        {"bn1.running_mean", DT_PARAM_RUNNING_MEAN, 4},
        {"bn1.running_var", DT_PARAM_RUNNING_VAR, 4},
        {"layer1.0.conv1.weight", DT_PARAM_WEIGHT, 6 * 4 * 9},
        {"layer1.0.bn1.weight", DT_PARAM_BN_GAMMA, 6},
        {"layer1.0.bn1.bias", DT_PARAM_BN_BETA, 6},
        {"layer1.0.bn1.running_mean", DT_PARAM_RUNNING_MEAN, 6},
        {"layer1.0.bn1.running_var", DT_PARAM_RUNNING_VAR, 6},
        {"fc.weight", DT_PARAM_WEIGHT, 10 * 6},
        {"fc.bias", DT_PARAM_BIAS, 10},
    };
    int n = (int)(sizeof want / sizeof want[0]);
    assert_int_equal(net->n_params, n);
    // trainables packed from 0 in table order, running statistics packed after them
    size_t next_trainable = 0, n_trainable = 0, n_total = 0;
    for (int t = 0; t < n; t++) {
        n_total += want[t].count;
        if (want[t].kind != DT_PARAM_RUNNING_MEAN && want[t].kind != DT_PARAM_RUNNING_VAR)
            n_trainable += want[t].count;
    }
    size_t next_running = n_trainable;
    for (int t = 0; t < n; t++) {
        const dt_param *p = &net->params_table[t];
        assert_string_equal(p->name, want[t].name);
        assert_int_equal(p->kind, want[t].kind);
        assert_int_equal(p->count, want[t].count);
        size_t prod = 1;
        for (int k = 0; k < p->ndim; k++) prod *= (size_t)p->shape[k];
        assert_int_equal(prod, p->count);
        int running = want[t].kind == DT_PARAM_RUNNING_MEAN || want[t].kind == DT_PARAM_RUNNING_VAR;
        assert_int_equal(p->trainable, !running);
        size_t *next = running ? &next_running : &next_trainable;
        assert_int_equal(p->offset, *next);
        *next += p->count;
        assert_ptr_equal(dt_net_find_param(net, want[t].name), p);
    }
    assert_int_equal(net->n_trainable, n_trainable);
    assert_int_equal(dt_net_count_trainable(net), n_trainable);
    assert_int_equal(net->n_total, n_total);
    const dt_param *w = dt_net_find_param(net, "layer1.0.conv1.weight");
    assert_int_equal(w->ndim, 4);
    assert_true(w->shape[0] == 6 && w->shape[1] == 4 && w->shape[2] == 3 && w->shape[3] == 3);
    const dt_param *fc = dt_net_find_param(net, "fc.weight");
    assert_true(fc->ndim == 2 && fc->shape[0] == 10 && fc->shape[1] == 6);
    assert_null(dt_net_find_param(net, "layer1.0.conv1.bias"));  // no bias requested
    assert_null(dt_net_find_param(net, "fc"));
    // the layers point at their tensors
    const dt_param *rm = dt_net_find_param(net, "bn1.running_mean");
    assert_int_equal(net->layers[1]->rm_off, (ssize_t)rm->offset);
    assert_int_equal(net->layers[4]->b_off, -1);
    assert_string_equal(dt_param_kind_name(DT_PARAM_WEIGHT), "weight");
    assert_string_equal(dt_param_kind_name(DT_PARAM_RUNNING_VAR), "running_var");
    dt_net_free(net);
}

static void sample_stats(const float *x, size_t n, double *mean, double *var) {
    double s = 0.0, ss = 0.0;
    for (size_t i = 0; i < n; i++) s += x[i];
    *mean = s / n;
    for (size_t i = 0; i < n; i++) ss += (x[i] - *mean) * (x[i] - *mean);
    *var = ss / n;
}

// Kaiming normal fan_out for a 64->96 3x3 conv (55296 samples): std sqrt(2/(96*9)); the
// sample std is within 2% (about 7 standard errors) and the mean within 5 standard errors.
// Linear 500 -> 200: all in [-b, b], b = 1/sqrt(500), variance b^2/3 within 2%.
static void test_init_matches_kaiming_fan_out_and_linear_uniform(void **state) {
    fixture *f = *state;
    uint64_t seed = (uint64_t)tu_int(&f->rng, 0, 1 << 30);
    dt_model_config cfg = config(1, 64, 5, 5, seed);
    dt_net *net = dt_net_new(f->dev, "init", &cfg);
    int x = dt_net_add_conv(net, "conv", -1, 96, 3, 1, 1, 1);
    x = dt_net_add_bn(net, "bn", x);
    x = dt_net_add_linear(net, "fc", x, 200, 1);  // in = 96*5*5 = 2400
    x = dt_net_add_linear(net, "fc2", x, 500, 1);
    x = dt_net_add_linear(net, "fc3", x, 200, 1);  // in = 500
    dt_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(dt_net_finalize(net, &e), 0);
    float *p = malloc(net->n_total * sizeof(float));
    f->dev->to_host(f->dev, p, net->params, net->n_total * sizeof(float));

    const dt_param *cw = dt_net_find_param(net, "conv.weight");
    double m, v;
    sample_stats(p + cw->offset, cw->count, &m, &v);
    double std = sqrt(2.0 / (96.0 * 9.0));
    if (fabs(sqrt(v) / std - 1.0) > 0.02) fail_msg("conv std %.5f, want %.5f", sqrt(v), std);
    if (fabs(m) > 5 * std / sqrt((double)cw->count)) fail_msg("conv mean %.5f", m);

    const dt_param *lw = dt_net_find_param(net, "fc3.weight");
    const dt_param *lb = dt_net_find_param(net, "fc3.bias");
    double b = 1.0 / sqrt(500.0);
    for (size_t i = 0; i < lw->count; i++)
        if (fabs(p[lw->offset + i]) > b)
            fail_msg("fc3.weight[%zu] = %g outside +-%g", i, p[lw->offset + i], b);
    for (size_t i = 0; i < lb->count; i++)
        if (fabs(p[lb->offset + i]) > b) fail_msg("fc3.bias[%zu] outside the bound", i);
    sample_stats(p + lw->offset, lw->count, &m, &v);
    if (fabs(v / (b * b / 3.0) - 1.0) > 0.02) fail_msg("fc3 var %.6g, want %.6g", v, b * b / 3.0);

    // constants: conv bias 0, gamma 1, beta 0, running mean 0, running var 1
    struct { const char *name; float value; } consts[] = {
        {"conv.bias", 0.0f}, {"bn.weight", 1.0f}, {"bn.bias", 0.0f},
        {"bn.running_mean", 0.0f}, {"bn.running_var", 1.0f}};
    for (size_t k = 0; k < sizeof consts / sizeof consts[0]; k++) {
        const dt_param *q = dt_net_find_param(net, consts[k].name);
        for (size_t i = 0; i < q->count; i++)
            if (p[q->offset + i] != consts[k].value)
                fail_msg("%s[%zu] = %g, want %g", consts[k].name, i, p[q->offset + i],
                         consts[k].value);
    }
    // tensors draw independent streams: fc2 and fc3 have the same bound but differ
    const dt_param *l2 = dt_net_find_param(net, "fc2.weight");
    assert_true(memcmp(p + l2->offset, p + lw->offset, 100 * sizeof(float)) != 0);
    free(p);
    dt_net_free(net);
}

static void test_init_is_deterministic_in_the_seed(void **state) {
    fixture *f = *state;
    uint64_t seed = (uint64_t)tu_int(&f->rng, 0, 1 << 30);
    dt_net *a = table_net(f, seed), *b = table_net(f, seed), *c = table_net(f, seed + 1);
    dt_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(dt_net_finalize(a, &e), 0);
    assert_int_equal(dt_net_finalize(b, &e), 0);
    assert_int_equal(dt_net_finalize(c, &e), 0);
    size_t n = a->n_total;
    float *pa = malloc(n * 4), *pb = malloc(n * 4), *pc = malloc(n * 4);
    f->dev->to_host(f->dev, pa, a->params, n * 4);
    f->dev->to_host(f->dev, pb, b->params, n * 4);
    f->dev->to_host(f->dev, pc, c->params, n * 4);
    assert_memory_equal(pa, pb, n * 4);
    assert_true(memcmp(pa, pc, n * 4) != 0);
    free(pa), free(pb), free(pc);
    dt_net_free(a), dt_net_free(b), dt_net_free(c);
}

// A ResNet-like stem and stages on 3x16x16: 16 -> 8 (conv 7x7 s2) -> 4 (maxpool) -> 2 -> 1,
// then a 3x3 unpadded conv cannot fit.
static void test_too_small_input_names_the_layer_and_returns_code_2(void **state) {
    fixture *f = *state;
    dt_model_config cfg = config(2, 3, 16, 16, 1);
    dt_net *net = dt_net_new(f->dev, "tiny", &cfg);
    int x = dt_net_add_conv(net, "conv1", -1, 4, 7, 2, 3, 0);
    x = dt_net_add_maxpool(net, x, 3, 2, 1);
    x = dt_net_add_conv(net, "layer2.0.conv1", x, 4, 3, 2, 1, 0);
    x = dt_net_add_conv(net, "layer3.0.conv1", x, 4, 3, 2, 1, 0);
    assert_int_equal(x, 3);
    assert_int_equal(net->layers[3]->oh, 1);
    assert_int_equal(dt_net_add_conv(net, "layer4.0.conv1", x, 4, 3, 1, 0, 0), -1);
    assert_int_equal(dt_net_add_relu(net, x), -1);  // after an error every add is refused
    assert_int_equal(net->n_layers, 4);
    dt_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(dt_net_finalize(net, &e), -1);
    assert_int_equal(e.code, DT_EXIT_USAGE);
    assert_non_null(strstr(e.msg, "too small"));
    assert_non_null(strstr(e.msg, "input 3x16x16"));
    assert_non_null(strstr(e.msg, "'layer4.0.conv1'"));
    assert_non_null(strstr(e.msg, "0x0"));
    dt_net_free(net);

    // (2 - 3)/2 + 1 is 1 in C (division truncates toward zero): must still be refused
    cfg = config(1, 3, 2, 2, 1);
    net = dt_net_new(f->dev, "tiny", &cfg);
    assert_int_equal(dt_net_add_conv(net, "conv1", -1, 4, 3, 2, 0, 0), -1);
    memset(&e, 0, sizeof e);
    assert_int_equal(dt_net_finalize(net, &e), -1);
    assert_int_equal(e.code, DT_EXIT_USAGE);
    assert_non_null(strstr(e.msg, "'conv1' would output 0x0"));
    dt_net_free(net);
}

// Each bad call gives -1 and a usage error that names what was wrong.
static void expect_error(fixture *f, int which, const char *needle) {
    dt_model_config cfg = config(2, 3, 8, 8, 1);
    dt_net *net = dt_net_new(f->dev, "bad", &cfg);
    int x = dt_net_add_relu(net, -1), r = 0;
    switch (which) {
    case 0: r = dt_net_add_conv(net, "c", x, 0, 3, 1, 1, 0); break;
    case 1: r = dt_net_add_conv(net, "c", x, 4, 3, 0, 1, 0); break;
    case 2: r = dt_net_add_maxpool(net, x, 3, 2, 2); break;
    case 3: r = dt_net_add_dropout(net, x, 1.0f); break;
    case 4: r = dt_net_add_avgpool(net, x, 0, 1); break;
    case 5: r = dt_net_add_linear(net, "fc", x, 0, 1); break;
    case 6: r = dt_net_add_relu(net, 5); break;
    case 7: {
        int y = dt_net_add_conv(net, "c", x, 4, 3, 1, 1, 0);
        r = dt_net_add_add(net, x, y);
        break;
    }
    }
    assert_int_equal(r, -1);
    dt_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(dt_net_finalize(net, &e), -1);
    assert_int_equal(e.code, DT_EXIT_USAGE);
    if (!strstr(e.msg, needle)) fail_msg("case %d: message '%s' lacks '%s'", which, e.msg, needle);
    dt_net_free(net);
}

static void test_bad_layer_arguments_are_usage_errors(void **state) {
    fixture *f = *state;
    expect_error(f, 0, "out_channels 0");
    expect_error(f, 1, "stride 0");
    expect_error(f, 2, "padding 2");
    expect_error(f, 3, "[0, 1)");
    expect_error(f, 4, "got 0x1");
    expect_error(f, 5, "out_features");
    expect_error(f, 6, "reads layer 5");
    expect_error(f, 7, "3x8x8 (layer 0) and 4x8x8 (layer 1)");
}

static void test_finalize_rejects_empty_twice_and_bad_config(void **state) {
    fixture *f = *state;
    dt_error e;
    memset(&e, 0, sizeof e);
    dt_model_config cfg = config(2, 3, 8, 8, 1);
    dt_net *net = dt_net_new(f->dev, "empty", &cfg);
    assert_int_equal(dt_net_finalize(net, &e), -1);
    assert_int_equal(e.code, DT_EXIT_USAGE);
    assert_non_null(strstr(e.msg, "no layers"));
    assert_int_equal(dt_net_add_relu(net, -1), 0);
    assert_int_equal(dt_net_finalize(net, &e), 0);
    assert_int_equal(dt_net_finalize(net, &e), -1);
    assert_non_null(strstr(e.msg, "twice"));
    dt_net_free(net);

    cfg.batch = 0;
    net = dt_net_new(f->dev, "zero", &cfg);
    assert_int_equal(dt_net_add_relu(net, -1), -1);
    memset(&e, 0, sizeof e);
    assert_int_equal(dt_net_finalize(net, &e), -1);
    assert_int_equal(e.code, DT_EXIT_USAGE);
    assert_non_null(strstr(e.msg, "batch 0"));
    dt_net_free(net);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_param_table_has_state_dict_names_order_and_layout),
        cmocka_unit_test(test_init_matches_kaiming_fan_out_and_linear_uniform),
        cmocka_unit_test(test_init_is_deterministic_in_the_seed),
        cmocka_unit_test(test_too_small_input_names_the_layer_and_returns_code_2),
        cmocka_unit_test(test_bad_layer_arguments_are_usage_errors),
        cmocka_unit_test(test_finalize_rejects_empty_twice_and_bad_config),
    };
    return cmocka_run_group_tests(tests, tu_fixture_setup, tu_fixture_teardown);
}
