// test_weights_head.c — dt_weights_load_opts (nn/safetensors_weights.c), dtrain --weights's
// loader: strict loading rejects a tensor the model does not have (PyTorch's
// load_state_dict(strict=True) "Unexpected key(s)") and leaves the network untouched; a new
// head keeps the classifier's own initialisation while every other tensor comes from the
// file, whatever the file's classifier shape. The reference is the other network's own
// parameter buffer, read back from the device, compared element for element.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net.h"
#include "safetensors.h"
#include "testutil.h"

static dt_device *g_dev;

static dt_net *smallcnn(int classes, uint64_t seed) {
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = 2, cfg.in_c = 1, cfg.in_h = cfg.in_w = 28, cfg.num_classes = classes;
    cfg.seed = seed;
    dt_error err = {0};
    dt_net *net = dt_model_create("smallcnn", g_dev, &cfg, &err);
    if (!net) fail_msg("smallcnn: %s", err.msg);
    return net;
}

static float *params(const dt_net *net) {
    float *h = malloc(net->n_total * sizeof *h);
    g_dev->to_host(g_dev, h, net->params, net->n_total * sizeof *h);
    return h;
}

static void tmp_path(char *p, size_t n, const char *name) {
    snprintf(p, n, "/tmp/dt_test_head_%d_%s", (int)getpid(), name);
}

static void test_head_is_the_last_layer_with_parameters(void **state) {
    (void)state;
    dt_net *net = smallcnn(10, tu_seed());
    int h = dt_weights_head(net);
    assert_true(h > 0 && h < net->n_params);
    for (int i = h; i < net->n_params; i++)
        assert_int_equal(net->params_table[i].layer, net->params_table[net->n_params - 1].layer);
    assert_int_not_equal(net->params_table[h - 1].layer, net->params_table[h].layer);
    // smallcnn's classifier is fc2 (nn/models_alexnet.c): out = classes
    assert_int_equal(strncmp(net->params_table[h].name, "fc2.", 4), 0);
    dt_net_free(net);
}

static void test_strict_rejects_a_tensor_the_model_lacks(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    dt_net *a = smallcnn(10, tu_seed() ^ 1), *b = smallcnn(10, tu_seed() ^ 2);
    float *ha = params(a), *before = params(b);
    int64_t tracked = 0;
    float extra[6];
    tu_fill_uniform(&r, extra, 6, -1, 1);
    char path[160], name[40];
    tmp_path(path, sizeof path, "extra.safetensors");
    snprintf(name, sizeof name, "decoder%d.weight", tu_int(&r, 0, 999));
    dt_st_writer *w = dt_st_writer_new();
    dt_weights_add(w, a, ha, &tracked);
    dt_st_add(w, name, DT_ST_F32, 2, (int64_t[]){2, 3}, extra);
    dt_error err = {0};
    if (dt_st_write(w, path, &err)) fail_msg("write: %s", err.msg);
    dt_st_writer_free(w);
    dt_weights_opts strict = {1, 0, 0};
    assert_int_equal(dt_weights_load_opts(b, path, &strict, &err), -1);
    printf("# %s\n", err.msg);
    assert_int_equal(err.code, DT_EXIT_USAGE);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, name));
    assert_non_null(strstr(err.msg, "not part of model smallcnn"));
    float *now = params(b);
    assert_memory_equal(now, before, b->n_total * sizeof(float));  // untouched
    free(now);
    // not strict (dt_weights_load): the extra is ignored, every model tensor is a's
    assert_int_equal(dt_weights_load(b, path, &err), 0);
    now = params(b);
    assert_memory_equal(now, ha, b->n_total * sizeof(float));
    free(now), free(ha), free(before);
    unlink(path);
    dt_net_free(a), dt_net_free(b);
}

static void test_new_head_keeps_the_classifier_and_loads_the_rest(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    int from = tu_int(&r, 2, 20), to = from + tu_int(&r, 1, 9);  // another number of classes
    dt_net *a = smallcnn(from, tu_seed() ^ 3), *b = smallcnn(to, tu_seed() ^ 4);
    char path[160];
    tmp_path(path, sizeof path, "head.safetensors");
    dt_error err = {0};
    if (dt_weights_save(a, path, &err)) fail_msg("save: %s", err.msg);
    float *ha = params(a), *before = params(b);
    // without it: the classifier's shape is an error naming it, and nothing changes
    dt_weights_opts strict = {1, 0, 0}, head = {1, 1, 0};
    assert_int_equal(dt_weights_load_opts(b, path, &strict, &err), -1);
    printf("# %s\n", err.msg);
    assert_non_null(strstr(err.msg, "fc2.weight' has shape"));
    float *now = params(b);
    assert_memory_equal(now, before, b->n_total * sizeof(float));
    free(now);
    // with it: every tensor before the head is a's, the head is b's own
    assert_int_equal(dt_weights_load_opts(b, path, &head, &err), 0);
    now = params(b);
    int h = dt_weights_head(b);
    for (int i = 0; i < b->n_params; i++) {
        const dt_param *p = &b->params_table[i];
        const float *want = i < h ? ha + a->params_table[i].offset : before + p->offset;
        if (memcmp(now + p->offset, want, p->count * sizeof(float)))
            fail_msg("%s: not the %s copy", p->name, i < h ? "file's" : "network's own");
    }
    free(now), free(ha), free(before);
    unlink(path);
    dt_net_free(a), dt_net_free(b);
}

static int setup(void **state) {
    (void)state;
    g_dev = dt_device_cpu_create(1);
    return g_dev ? 0 : -1;
}
static int teardown(void **state) {
    (void)state;
    g_dev->destroy(g_dev);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_head_is_the_last_layer_with_parameters),
        cmocka_unit_test(test_strict_rejects_a_tensor_the_model_lacks),
        cmocka_unit_test(test_new_head_keeps_the_classifier_and_loads_the_rest),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
