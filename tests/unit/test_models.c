// test_models.c — the model zoo (nn/models*.c) against published constants: torchvision's
// parameter counts (ResNet-18/34/50/101/152, AlexNet), He et al. 2016 Table 6 (CIFAR
// ResNets), the 4.09 G multiply-adds of ResNet-50, and against closed forms (parameter
// counts of AlexNet-BN and smallcnn, tensor counts). Also: zero-init of the last BN of each
// residual block (Goyal et al. 2017), parameter names unique and in torchvision state_dict
// order, the parameter table tiling the buffers, inputs of any allowed size, and bad input
// reported with code 2. Not here: layer math (test_layers*), the name-by-name comparison
// with torchvision itself (tests/ref/, needs Python + torchvision).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net.h"
#include "testutil.h"

// Test-program state, set up once (not library code). g_dev is the cpu device, for tests
// that read parameters or run a forward pass. g_nodata is a cpu device renamed "model":
// dt_net_finalize skips initialisation for the model device (it holds no data, nn/net.c), so
// the tests of shapes, names, counts and FLOPs build ResNet-152 in milliseconds, not seconds.
static dt_device *g_dev, *g_nodata;
static dt_net *g_shared;  // see shared()

static int setup(void **state) {
    (void)state;
    tu_seed();  // printed; the models' seed is fixed by cfg, inputs below are constant
    g_dev = dt_device_cpu_create(2);
    g_nodata = dt_device_cpu_create(1);
    if (!g_dev || !g_nodata) return -1;
    g_nodata->name = "model";
    return 0;
}
static int teardown(void **state) {
    (void)state;
    dt_net_free(g_shared);
    g_dev->destroy(g_dev);
    g_nodata->destroy(g_nodata);
    return 0;
}

static dt_model_config cfg_of(int c, int h, int w, int classes) {
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = 1;  // tests that need more set it
    cfg.in_c = c;
    cfg.in_h = h;
    cfg.in_w = w;
    cfg.num_classes = classes;
    return cfg;
}

// Builds a model that must build; fails the test with the library's message otherwise.
// make() is batch 1 on g_nodata (no initialisation); make_on(g_dev, ...) initialises.
static dt_net *make_on(dt_device *dev, const char *name, int batch, int c, int h, int w,
                       int classes) {
    dt_model_config cfg = cfg_of(c, h, w, classes);
    cfg.batch = batch;
    dt_error err;
    dt_error_clear(&err);
    dt_net *net = dt_model_create(name, dev, &cfg, &err);
    if (!net)
        fail_msg("%s at %dx%dx%d batch %d: %s (code %d)", name, c, h, w, batch, err.msg,
                 err.code);
    return net;
}
static dt_net *make(const char *name, int c, int h, int w, int classes) {
    return make_on(g_nodata, name, 1, c, h, w, classes);
}

// One uninitialised network kept between tests that read the same model at the same size
// (the tests below are ordered so that they follow each other); the caller must not free
// it. Asking for another model frees the one held, so at most one is alive.
static dt_net *shared(const char *name, int c, int h, int w, int classes) {
    if (g_shared && strcmp(g_shared->model, name) == 0 && g_shared->in_c == c &&
        g_shared->in_h == h && g_shared->in_w == w && g_shared->num_classes == classes)
        return g_shared;
    dt_net_free(g_shared);
    g_shared = NULL;
    g_shared = make(name, c, h, w, classes);
    return g_shared;
}

// Builds a model that must fail; returns the error.
static dt_error make_fails(const char *name, const dt_model_config *cfg) {
    dt_error err;
    dt_error_clear(&err);
    dt_net *net = dt_model_create(name, g_nodata, cfg, &err);
    if (net) {
        dt_net_free(net);
        fail_msg("%s at %dx%dx%d batch %d classes %d built but should fail",
                 name ? name : "(null)", cfg->in_c,
                 cfg->in_h, cfg->in_w, cfg->batch, cfg->num_classes);
    }
    return err;
}

static int n_trainable_tensors(const dt_net *net) {
    int n = 0;
    for (int i = 0; i < net->n_params; i++) n += net->params_table[i].trainable;
    return n;
}

static int ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

// Invariants of any model's table: names unique and suffixed by their kind; count = product
// of the shape; tensors in layer order; trainable tensors tile [0, n_trainable) and running
// statistics tile [n_trainable, n_total), each in table order (state_dict order).
static void check_table(const dt_net *net) {
    size_t next_trainable = 0, next_running = net->n_trainable;
    int last_layer = -1;
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        for (int j = 0; j < i; j++)
            if (strcmp(p->name, net->params_table[j].name) == 0)
                fail_msg("%s: name %s appears twice", net->model, p->name);
        static const char *SUFFIX[] = {".weight", ".bias", ".weight", ".bias", ".running_mean",
                                       ".running_var", ".weight", ".bias"};
        assert_true(p->kind >= 0 && p->kind < (int)(sizeof SUFFIX / sizeof SUFFIX[0]));
        if (!ends_with(p->name, SUFFIX[p->kind]))
            fail_msg("%s: %s is a %s", net->model, p->name, dt_param_kind_name(p->kind));
        size_t prod = 1;
        for (int d = 0; d < p->ndim; d++) prod *= (size_t)p->shape[d];
        assert_int_equal(prod, p->count);
        assert_true(p->layer >= last_layer && p->layer < net->n_layers);
        last_layer = p->layer;
        int want_trainable = p->kind != DT_PARAM_RUNNING_MEAN && p->kind != DT_PARAM_RUNNING_VAR;
        assert_int_equal(p->trainable, want_trainable);
        size_t *next = p->trainable ? &next_trainable : &next_running;
        if (p->offset != *next)
            fail_msg("%s: %s at offset %zu, expected %zu (gap or overlap)", net->model, p->name,
                     p->offset, *next);
        *next += p->count;
    }
    assert_int_equal(next_trainable, net->n_trainable);
    assert_int_equal(next_running, net->n_total);
}

// ---- parameter counts: published constants (torchvision, docs/hardware.md "Models") ----

static void test_resnet_imagenet_parameter_counts_equal_torchvision_published(void **state) {
    (void)state;
    // torchvision.models: ResNet{18,34,50,101,152}_Weights meta "num_params"; trainable
    // tensors: docs/hardware.md "Models" for 50 (161) and 101 (314), else one weight per conv
    // and a BN (gamma, beta) after it, plus fc weight and bias: 3 * convs + 2.
    static const struct { const char *name; size_t params; int tensors; } CASES[] = {
        {"resnet18", 11689512, 3 * (17 + 3) + 2},  {"resnet34", 21797672, 3 * (33 + 3) + 2},
        {"resnet101", 44549160, 314},              {"resnet152", 60192808, 3 * (151 + 4) + 2},
        {"resnet50", 25557032, 161},  // last: the next tests read the same network
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        // The count does not depend on the input size (global average pool before fc), so
        // all but resnet50 (224, kept for the next tests) are built at 64x64: a third of the
        // activation memory to allocate.
        int size = strcmp(CASES[i].name, "resnet50") == 0 ? 224 : 64;
        dt_net *net = shared(CASES[i].name, 3, size, size, 1000);
        printf("# %s: %zu parameters, %d trainable tensors\n", CASES[i].name, net->n_trainable,
               n_trainable_tensors(net));
        assert_int_equal(net->n_trainable, CASES[i].params);
        assert_int_equal(dt_net_count_trainable(net), CASES[i].params);
        assert_int_equal(n_trainable_tensors(net), CASES[i].tensors);
        check_table(net);
    }
}

static void test_resnet50_has_53_conv_106_bn_tensors_and_fc(void **state) {
    (void)state;
    // docs/hardware.md "Models": ResNet-50 161 tensors (53 conv, 106 BN, fc w+b)
    dt_net *net = shared("resnet50", 3, 224, 224, 1000);
    int convs = 0, bn = 0, fc = 0;
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        convs += p->kind == DT_PARAM_WEIGHT && p->ndim == 4;
        bn += p->kind == DT_PARAM_BN_GAMMA || p->kind == DT_PARAM_BN_BETA;
        fc += strncmp(p->name, "fc.", 3) == 0;
    }
    assert_int_equal(convs, 53);
    assert_int_equal(bn, 106);
    assert_int_equal(fc, 2);
}

static void test_alexnet_parameter_count_equals_torchvision_published(void **state) {
    (void)state;
    dt_net *net = shared("alexnet", 3, 224, 224, 1000);
    assert_int_equal(net->n_trainable, 61100840);  // torchvision AlexNet_Weights num_params
    assert_int_equal(n_trainable_tensors(net), 16);
    assert_int_equal(net->n_total, net->n_trainable);  // no running statistics
    const dt_param *fc6 = dt_net_find_param(net, "classifier.1.weight");
    assert_non_null(fc6);
    assert_int_equal(fc6->count, (size_t)4096 * 256 * 6 * 6);  // "fc6 alone 37.7M"
}

// AlexNet-BN: torchvision's AlexNet minus the 5 conv biases, plus gamma and beta for the
// 64+192+384+256+256 conv channels and for the 256 channels after pool5.
static void test_alexnet_bn_parameter_count_closed_form(void **state) {
    (void)state;
    dt_net *net = shared("alexnet-bn", 3, 224, 224, 1000);
    size_t expect = 61100840 - (64 + 192 + 384 + 256 + 256) +
                    2 * (64 + 192 + 384 + 256 + 256) + 2 * 256;
    assert_int_equal(net->n_trainable, expect);
    static const char *BNS[] = {"features.1", "features.5", "features.9", "features.12",
                                "features.15", "features.18"};
    static const int CH[] = {64, 192, 384, 256, 256, 256};
    char name[96];
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "%s.running_var", BNS[i]);
        const dt_param *p = dt_net_find_param(net, name);
        if (!p) fail_msg("alexnet-bn has no %s", name);
        assert_int_equal(p->count, CH[i]);
    }
    assert_null(dt_net_find_param(net, "features.0.bias"));
    assert_non_null(dt_net_find_param(net, "classifier.6.bias"));
}

static size_t conv_params(int cin, int cout, int k, int bias) {
    return (size_t)cin * cout * k * k + (bias ? (size_t)cout : 0);
}

static void test_smallcnn_parameter_count_closed_form_28x28_grey(void **state) {
    (void)state;
    dt_net *net = make("smallcnn", 1, 28, 28, 10);
    size_t expect = conv_params(1, 32, 5, 1) + conv_params(32, 64, 5, 1) +
                    (size_t)64 * 7 * 7 * 1024 + 1024 + 1024 * 10 + 10;
    assert_int_equal(net->n_trainable, expect);  // 3,274,634
    const dt_layer *last = net->layers[dt_net_last(net)];
    assert_int_equal(last->oc * last->oh * last->ow, 10);
    dt_net_free(net);
}

// CIFAR ResNet 6n+2 with option-B projections, counted from the architecture of He et al.
// §4.2; and the paper's Table 6 counts (option A, no projection parameters), recovered by
// subtracting the two projections: 1x1 16->32 + BN(32) and 1x1 32->64 + BN(64) = 2,752.
static void test_cifar_resnet_parameter_counts_match_he2016_table6(void **state) {
    (void)state;
    static const struct { const char *name; int n; double paper_m, half_ulp; } CASES[] = {
        {"resnet20", 3, 0.27, 0.005}, {"resnet32", 5, 0.46, 0.005},
        {"resnet44", 7, 0.66, 0.005}, {"resnet56", 9, 0.85, 0.005},
        {"resnet110", 18, 1.7, 0.05},
    };
    const size_t projections = conv_params(16, 32, 1, 0) + 2 * 32 + conv_params(32, 64, 1, 0) +
                               2 * 64;
    assert_int_equal(projections, 2752);
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        int n = CASES[i].n;
        // stem 3x3 conv 16 + BN; per block two 3x3 convs + 2 BN; fc 64 -> 10
        size_t expect = conv_params(3, 16, 3, 0) + 2 * 16;
        for (int s = 0, cin = 16; s < 3; s++) {
            int planes = 16 << s;
            for (int b = 0; b < n; b++, cin = planes)
                expect += conv_params(cin, planes, 3, 0) + conv_params(planes, planes, 3, 0) +
                          4 * (size_t)planes;
        }
        expect += projections + 64 * 10 + 10;
        dt_net *net = make(CASES[i].name, 3, 32, 32, 10);
        printf("# %s: %zu parameters (option A: %zu)\n", CASES[i].name, net->n_trainable,
               net->n_trainable - projections);
        assert_int_equal(net->n_trainable, expect);
        double option_a_m = (double)(net->n_trainable - projections) / 1e6;
        if (fabs(option_a_m - CASES[i].paper_m) > CASES[i].half_ulp)
            fail_msg("%s: %.4fM without projections, paper says %.2fM", CASES[i].name,
                     option_a_m, CASES[i].paper_m);
        // 32 -> 32 -> 16 -> 8 before the global pool (He et al. §4.2)
        const dt_param *fc = dt_net_find_param(net, "fc.weight");
        assert_non_null(fc);
        const dt_layer *pool = net->layers[net->layers[fc->layer]->in];
        assert_int_equal(pool->h, 8);
        assert_int_equal(pool->c, 64);
        dt_net_free(net);
    }
}

// ---- forward cost ----

static void test_resnet50_forward_is_4_09_gmacs_per_image_at_224(void **state) {
    (void)state;
    dt_net *net = shared("resnet50", 3, 224, 224, 1000);
    double macs = dt_net_forward_flops(net) / 2.0 / net->B;  // 2 FLOPs per multiply-add
    printf("# resnet50: %.4f G multiply-adds per image (published 4.09)\n", macs / 1e9);
    assert_true(fabs(macs / 4.09e9 - 1.0) <= 0.02);
    assert_true(dt_net_step_flops(net) > 2.5 * dt_net_forward_flops(net));  // ~3x forward
}

static void test_alexnet_forward_is_0_71_gmacs_per_image_at_224(void **state) {
    (void)state;
    dt_net *net = shared("alexnet", 3, 224, 224, 1000);
    double macs = dt_net_forward_flops(net) / 2.0 / net->B;
    printf("# alexnet: %.4f G multiply-adds per image (published ~0.71)\n", macs / 1e9);
    assert_true(fabs(macs / 0.714e9 - 1.0) <= 0.02);
}

// ---- initialisation ----

// Goyal et al. 2017 §5.1: gamma = 0 in the last BN of every residual block (bn2 of a
// BasicBlock, bn3 of a Bottleneck), 1 in every other BN; every beta 0. Checked by name.
static void check_gammas(const char *model, const char *last_bn, int zero_init) {
    dt_model_config cfg = cfg_of(3, 64, 64, 10);  // 64: 2x2 maps in layer4 at batch 1
    cfg.zero_init_residual = zero_init;
    dt_error err;
    dt_net *net = dt_model_create(model, g_dev, &cfg, &err);
    if (!net) fail_msg("%s: %s", model, err.msg);
    float *host = mallocCheck(net->n_total * sizeof(float));
    tu_dev_download(g_dev, host, net->params, net->n_total);
    char suffix[32];
    snprintf(suffix, sizeof suffix, ".%s.weight", last_bn);
    int zeros = 0, blocks = 0;
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        if (p->kind == DT_PARAM_BN_BETA)
            for (size_t j = 0; j < p->count; j++)
                if (host[p->offset + j] != 0.0f) fail_msg("%s: %s != 0", model, p->name);
        if (p->kind != DT_PARAM_BN_GAMMA) continue;
        size_t nl = strlen(p->name), ns = strlen(suffix);
        int is_last = strncmp(p->name, "layer", 5) == 0 && nl > ns &&
                      strcmp(p->name + nl - ns, suffix) == 0;
        blocks += is_last;
        float want = is_last && zero_init ? 0.0f : 1.0f;
        for (size_t j = 0; j < p->count; j++)
            if (host[p->offset + j] != want)
                fail_msg("%s: %s[%zu] = %g, expected %g", model, p->name, j,
                         (double)host[p->offset + j], (double)want);
        zeros += want == 0.0f;
    }
    printf("# %s zero_init_residual=%d: %d residual blocks, %d zero gammas\n", model, zero_init,
           blocks, zeros);
    assert_int_equal(zeros, zero_init ? blocks : 0);
    free(host);
    dt_net_free(net);
}

static void test_zero_init_residual_zeroes_last_bn_gamma_of_each_block_only(void **state) {
    (void)state;
    check_gammas("resnet18", "bn2", 1);  // 8 BasicBlocks
    check_gammas("resnet50", "bn3", 1);  // 16 Bottlenecks
    check_gammas("resnet20", "bn2", 1);  // 9 BasicBlocks
    check_gammas("resnet20", "bn2", 0);  // off: every gamma 1
}

// ---- the parameter table ----

static void test_every_model_builds_and_its_table_tiles_the_buffers(void **state) {
    (void)state;
    char names[512];
    snprintf(names, sizeof names, "%s", dt_model_names());
    int n = 0;
    for (char *tok = strtok(names, ", "); tok; tok = strtok(NULL, ", "), n++) {
        if (strncmp(tok, "gpt", 3) == 0 && strcmp(tok, "gpt2-tiny") != 0) {
            // up to 175B parameters: described from the layers alone (tests/unit/test_gpt.c
            // checks the counts), not allocated
            double np, fwd, step;
            dt_error err;
            dt_model_config cfg = cfg_of(1, 1, 1, 1);
            if (dt_model_describe(tok, g_nodata, &cfg, &np, &fwd, &step, &err) != 0)
                fail_msg("%s: %s", tok, err.msg);
            assert_true(np > 1e8 && fwd > 0 && step > fwd);
            continue;
        }
        // 64: enough for alexnet (>= 63); batch 2: alexnet-bn's pool5 BN is 1x1 there
        dt_net *net = make_on(g_nodata, tok, 2, 3, 64, 64, 10);
        assert_string_equal(net->model, tok);
        check_table(net);
        dt_net_free(net);
    }
    assert_int_equal(n, 28);  // every entry of the MODELS table
}

static void expect_names(const dt_net *net, int from, const char *const *names, int n) {
    for (int i = 0; i < n; i++) {
        if (from + i >= net->n_params) fail_msg("%s: table ends at %d", net->model, from + i);
        if (strcmp(net->params_table[from + i].name, names[i]) != 0)
            fail_msg("%s: entry %d is %s, torchvision has %s", net->model, from + i,
                     net->params_table[from + i].name, names[i]);
    }
}

// Entries copied from torchvision resnet18().state_dict() (num_batches_tracked left out).
static void test_resnet18_names_follow_torchvision_state_dict_order(void **state) {
    (void)state;
    dt_net *net = shared("resnet18", 3, 64, 64, 1000);  // names do not depend on the size
    check_table(net);
    static const char *const HEAD[] = {
        "conv1.weight", "bn1.weight", "bn1.bias", "bn1.running_mean", "bn1.running_var",
        "layer1.0.conv1.weight", "layer1.0.bn1.weight", "layer1.0.bn1.bias",
        "layer1.0.bn1.running_mean", "layer1.0.bn1.running_var", "layer1.0.conv2.weight"};
    expect_names(net, 0, HEAD, 11);
    static const char *const LAYER2_0[] = {
        "layer2.0.conv1.weight", "layer2.0.bn1.weight", "layer2.0.bn1.bias",
        "layer2.0.bn1.running_mean", "layer2.0.bn1.running_var", "layer2.0.conv2.weight",
        "layer2.0.bn2.weight", "layer2.0.bn2.bias", "layer2.0.bn2.running_mean",
        "layer2.0.bn2.running_var", "layer2.0.downsample.0.weight",
        "layer2.0.downsample.1.weight", "layer2.0.downsample.1.bias",
        "layer2.0.downsample.1.running_mean", "layer2.0.downsample.1.running_var",
        "layer2.1.conv1.weight"};
    const dt_param *p = dt_net_find_param(net, "layer2.0.conv1.weight");
    assert_non_null(p);
    expect_names(net, (int)(p - net->params_table), LAYER2_0, 16);
    static const char *const TAIL[] = {"layer4.1.bn2.running_var", "fc.weight", "fc.bias"};
    assert_int_equal(net->n_params, 102);  // 20 convs + 20 BN x 4 + fc x 2
    expect_names(net, net->n_params - 3, TAIL, 3);
    const dt_param *ds = dt_net_find_param(net, "layer2.0.downsample.0.weight");
    assert_int_equal(ds->ndim, 4);
    int want[4] = {128, 64, 1, 1};
    assert_memory_equal(ds->shape, want, sizeof want);
    const dt_param *fc = dt_net_find_param(net, "fc.weight");
    assert_int_equal(fc->shape[0], 1000);
    assert_int_equal(fc->shape[1], 512);
}

// Bottleneck v1.5: the stride sits on the 3x3 conv2 (torchvision), the 1x1 conv1 keeps
// the input size; the downsample comes after bn3.
static void test_resnet50_bottleneck_is_v1_5_with_stride_on_conv2(void **state) {
    (void)state;
    dt_net *net = shared("resnet50", 3, 224, 224, 1000);
    const dt_layer *c1 = net->layers[dt_net_find_param(net, "layer2.0.conv1.weight")->layer];
    const dt_layer *c2 = net->layers[dt_net_find_param(net, "layer2.0.conv2.weight")->layer];
    assert_int_equal(c1->stride, 1);
    assert_int_equal(c1->oh, 56);
    assert_int_equal(c2->stride, 2);
    assert_int_equal(c2->oh, 28);
    const dt_param *bn3 = dt_net_find_param(net, "layer2.0.bn3.running_var");
    const dt_param *ds = dt_net_find_param(net, "layer2.0.downsample.0.weight");
    assert_true(ds == bn3 + 1);
    int want[4] = {512, 256, 1, 1};
    assert_memory_equal(ds->shape, want, sizeof want);
    assert_int_equal(net->layers[ds->layer]->stride, 2);
    assert_non_null(dt_net_find_param(net, "layer1.0.downsample.0.weight"));  // 64 -> 256
}

// ---- input sizes ----

// Runs a training forward pass (batch statistics, dropout) and checks that the logits and
// every parameter (the running statistics were just updated) are finite.
static void forward_is_finite(dt_net *net) {
    size_t n = (size_t)net->B * net->in_c * net->in_h * net->in_w;
    float *x = mallocCheck(n * sizeof(float));
    int32_t *labels = callocCheck((size_t)net->B, sizeof(int32_t));
    for (size_t i = 0; i < n; i++) x[i] = (float)((i * 7919) % 255) / 255.0f;
    dt_net_set_batch(net, x, labels);
    dt_net_forward(net, 1);
    const dt_layer *last = net->layers[dt_net_last(net)];
    size_t k = (size_t)net->B * last->oc * last->oh * last->ow;
    assert_int_equal(k, (size_t)net->B * net->num_classes);
    float *host = mallocCheck((k > net->n_total ? k : net->n_total) * sizeof(float));
    tu_dev_download(net->dev, host, last->out, k);
    for (size_t i = 0; i < k; i++)
        if (!isfinite(host[i])) fail_msg("%s: logit %zu = %g", net->model, i, host[i]);
    tu_dev_download(net->dev, host, net->params, net->n_total);
    for (size_t i = 0; i < net->n_total; i++)
        if (!isfinite(host[i])) fail_msg("%s: parameter element %zu = %g", net->model, i, host[i]);
    free(host);
    free(labels);
    free(x);
}

// Output sizes (size + 2 pad - k)/stride + 1, floored, as torch.nn.Conv2d/MaxPool2d.
static void test_small_inputs_build_and_run_as_torchvision_allows(void **state) {
    (void)state;
    // resnet18 on 28x28 grey: 28 -> 14 (conv1) -> 7 (maxpool) -> 7 -> 4 -> 2 -> 1
    dt_net *net = make_on(g_dev, "resnet18", 2, 1, 28, 28, 10);
    const dt_layer *l4 = net->layers[dt_net_find_param(net, "layer4.1.conv2.weight")->layer];
    assert_int_equal(l4->oh, 1);
    assert_int_equal(net->layers[dt_net_find_param(net, "layer3.1.conv2.weight")->layer]->oh, 2);
    forward_is_finite(net);
    dt_net_free(net);
    // resnet50 on 8x8: 4, 2, 2, 1, 1, 1: every pad is k/2, so no map vanishes (torchvision
    // runs it too); the 3x5 non-square input likewise. Uninitialised weights (g_nodata):
    // this checks that every layer runs on 1x1 maps, not the values.
    net = make_on(g_nodata, "resnet50", 2, 3, 8, 8, 10);
    forward_is_finite(net);
    dt_net_free(net);
    dt_net_free(make_on(g_nodata, "resnet50", 2, 3, 3, 5, 10));
    // alexnet on 63x63: 15 -> 7 -> 7 -> 3 -> 3 -> 1, adaptive pool up to 6x6
    net = make_on(g_dev, "alexnet", 1, 3, 63, 63, 10);
    forward_is_finite(net);
    dt_net_free(net);
    net = make_on(g_dev, "smallcnn", 1, 1, 4, 4, 10);
    forward_is_finite(net);
    dt_net_free(net);
    net = make_on(g_dev, "resnet20", 1, 3, 32, 32, 10);
    forward_is_finite(net);
    dt_net_free(net);
}

static void test_input_too_small_fails_with_code_2(void **state) {
    (void)state;
    // alexnet 62: 14 -> 6 -> 6 -> 2 -> 2, pool5 (2-3)/2+1 = 0: torch says "too small"
    dt_model_config cfg = cfg_of(3, 62, 62, 10);
    dt_error err = make_fails("alexnet", &cfg);
    assert_int_equal(err.code, DT_EXIT_USAGE);
    printf("# alexnet 62x62: %s\n", err.msg);
    cfg.in_h = 224;  // one dimension suffices
    cfg.in_w = 62;
    err = make_fails("alexnet-bn", &cfg);
    assert_int_equal(err.code, DT_EXIT_USAGE);
    // smallcnn 3x3: 3 -> 1 -> 1 -> (1-2)/2+1 = 0
    cfg = cfg_of(1, 3, 3, 10);
    err = make_fails("smallcnn", &cfg);
    assert_int_equal(err.code, DT_EXIT_USAGE);
}

// A batchnorm seeing one value per channel (batch 1, 1x1 maps) cannot train: variance 0,
// unbiased running variance n/(n-1) = 1/0. PyTorch raises "Expected more than 1 value per
// channel when training"; the zoo refuses at build time, naming the layer.
static void test_batchnorm_with_one_value_per_channel_fails_with_code_2(void **state) {
    (void)state;
    static const struct { const char *name; int c, size; const char *bn; } CASES[] = {
        {"resnet50", 3, 8, "layer2.0.bn2"},   // 8 -> 4 -> 2 -> 1 at layer2's stride
        {"resnet18", 1, 28, "layer4.0.bn1"},  // 28 -> ... -> 1 at layer4
        {"alexnet-bn", 3, 63, "features.18"}, // pool5 is 1x1
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        dt_model_config cfg = cfg_of(CASES[i].c, CASES[i].size, CASES[i].size, 10);
        dt_error err = make_fails(CASES[i].name, &cfg);
        assert_int_equal(err.code, DT_EXIT_USAGE);
        if (!strstr(err.msg, CASES[i].bn))
            fail_msg("%s: message does not name %s: %s", CASES[i].name, CASES[i].bn, err.msg);
        cfg.batch = 2;  // two values per channel: builds
        dt_net_free(make_on(g_nodata, CASES[i].name, 2, CASES[i].c, CASES[i].size,
                            CASES[i].size, 10));
    }
}

// ---- bad input ----

static void test_unknown_model_name_fails_with_code_2_listing_valid_names(void **state) {
    (void)state;
    dt_model_config cfg = cfg_of(3, 32, 32, 10);
    dt_error err = make_fails("resnet51", &cfg);
    assert_int_equal(err.code, DT_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "resnet51"));
    assert_non_null(strstr(err.msg, "resnet50"));
    assert_non_null(strstr(err.msg, "alexnet-bn"));
    assert_non_null(strstr(err.msg, "smallcnn"));
    err = make_fails(NULL, &cfg);
    assert_int_equal(err.code, DT_EXIT_USAGE);
    err = make_fails("", &cfg);
    assert_int_equal(err.code, DT_EXIT_USAGE);
}

static void test_non_positive_sizes_fail_with_code_2_naming_the_field(void **state) {
    (void)state;
    static const char *FIELDS[] = {"batch", "in_c", "in_h", "in_w", "num_classes"};
    for (int f = 0; f < 5; f++) {
        for (int v = -1; v <= 0; v++) {
            dt_model_config cfg = cfg_of(3, 32, 32, 10);
            int *field[] = {&cfg.batch, &cfg.in_c, &cfg.in_h, &cfg.in_w, &cfg.num_classes};
            *field[f] = v;
            dt_error err = make_fails("resnet20", &cfg);
            assert_int_equal(err.code, DT_EXIT_USAGE);
            if (!strstr(err.msg, FIELDS[f]))
                fail_msg("message for %s = %d does not name it: %s", FIELDS[f], v, err.msg);
        }
    }
    dt_model_config cfg = cfg_of(3, 64, 64, 10);
    cfg.dropout = 1.0f;
    dt_error err = make_fails("alexnet", &cfg);
    assert_int_equal(err.code, DT_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "dropout"));
    dt_error_clear(&err);
    assert_null(dt_model_create("resnet18", NULL, &cfg, &err));
    assert_int_equal(err.code, DT_EXIT_USAGE);
}

static void test_config_default_is_imagenet_batch_32(void **state) {
    (void)state;
    dt_model_config c = dt_model_config_default();
    assert_int_equal(c.batch, 32);
    assert_int_equal(c.in_c, 3);
    assert_int_equal(c.in_h, 224);
    assert_int_equal(c.in_w, 224);
    assert_int_equal(c.num_classes, 1000);
    assert_int_equal(c.zero_init_residual, 1);
    assert_true(c.dropout == 0.5f);
}

int main(void) {
    // ordered so that tests reading the same shared() network follow each other
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resnet_imagenet_parameter_counts_equal_torchvision_published),
        cmocka_unit_test(test_resnet50_has_53_conv_106_bn_tensors_and_fc),
        cmocka_unit_test(test_resnet50_forward_is_4_09_gmacs_per_image_at_224),
        cmocka_unit_test(test_resnet50_bottleneck_is_v1_5_with_stride_on_conv2),
        cmocka_unit_test(test_alexnet_parameter_count_equals_torchvision_published),
        cmocka_unit_test(test_alexnet_forward_is_0_71_gmacs_per_image_at_224),
        cmocka_unit_test(test_alexnet_bn_parameter_count_closed_form),
        cmocka_unit_test(test_resnet18_names_follow_torchvision_state_dict_order),
        cmocka_unit_test(test_smallcnn_parameter_count_closed_form_28x28_grey),
        cmocka_unit_test(test_cifar_resnet_parameter_counts_match_he2016_table6),
        cmocka_unit_test(test_zero_init_residual_zeroes_last_bn_gamma_of_each_block_only),
        cmocka_unit_test(test_every_model_builds_and_its_table_tiles_the_buffers),
        cmocka_unit_test(test_small_inputs_build_and_run_as_torchvision_allows),
        cmocka_unit_test(test_input_too_small_fails_with_code_2),
        cmocka_unit_test(test_batchnorm_with_one_value_per_channel_fails_with_code_2),
        cmocka_unit_test(test_unknown_model_name_fails_with_code_2_listing_valid_names),
        cmocka_unit_test(test_non_positive_sizes_fail_with_code_2_naming_the_field),
        cmocka_unit_test(test_config_default_is_imagenet_batch_32),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
