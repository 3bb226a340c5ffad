// test_weights.c — dt_weights_save / dt_weights_load (nn/safetensors_weights.c) on a real
// torchvision-named network (resnet18 from the zoo, small input). References are independent
// of the code under test: torchvision's resnet18 state_dict enumerated in this file from
// torchvision/models/resnet.py (names, shapes, 122 entries), a file assembled byte by byte
// here, and F16/BF16 values decoded with the closed-form IEEE formulas in double.
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "net.h"
#include "safetensors.h"
#include "testutil.h"

enum { CLASSES = 10, MAXT = 160 };

// ---- torchvision resnet18 state_dict, independently enumerated ----
typedef struct {
    char name[128];
    int ndim;
    int64_t shape[4];
    int nbt;  // 1: a num_batches_tracked buffer (I64 scalar)
} tv_entry;

static int tv_add(tv_entry *e, int n, const char *name, int ndim, int64_t a, int64_t b,
                  int64_t c, int64_t d) {
    snprintf(e[n].name, sizeof e[n].name, "%s", name);
    e[n].ndim = ndim;
    int64_t s[4] = {a, b, c, d};
    memcpy(e[n].shape, s, sizeof s);
    e[n].nbt = 0;
    return n + 1;
}

static int tv_bn(tv_entry *e, int n, const char *prefix, int64_t c) {
    static const char *const parts[] = {"weight", "bias", "running_mean", "running_var"};
    char name[128];
    for (int k = 0; k < 4; k++) {
        snprintf(name, sizeof name, "%s.%s", prefix, parts[k]);
        n = tv_add(e, n, name, 1, c, 0, 0, 0);
    }
    snprintf(name, sizeof name, "%s.num_batches_tracked", prefix);
    n = tv_add(e, n, name, 0, 0, 0, 0, 0);
    e[n - 1].nbt = 1;
    return n;
}

// torchvision.models.resnet18(num_classes=CLASSES).state_dict(): BasicBlock (conv1 3x3,
// bn1, conv2 3x3, bn2, downsample = conv1x1 + BN where the shape changes), fc last.
static int tv_resnet18(tv_entry *e) {
    int n = tv_add(e, 0, "conv1.weight", 4, 64, 3, 7, 7);
    n = tv_bn(e, n, "bn1", 64);
    int64_t inplanes = 64;
    for (int L = 1; L <= 4; L++) {
        int64_t planes = 64 << (L - 1);
        for (int b = 0; b < 2; b++) {
            char p[32], q[128];
            snprintf(p, sizeof p, "layer%d.%d", L, b);
            int64_t cin = b == 0 ? inplanes : planes;
            snprintf(q, sizeof q, "%s.conv1.weight", p);
            n = tv_add(e, n, q, 4, planes, cin, 3, 3);
            snprintf(q, sizeof q, "%s.bn1", p);
            n = tv_bn(e, n, q, planes);
            snprintf(q, sizeof q, "%s.conv2.weight", p);
            n = tv_add(e, n, q, 4, planes, planes, 3, 3);
            snprintf(q, sizeof q, "%s.bn2", p);
            n = tv_bn(e, n, q, planes);
            if (b == 0 && L > 1) {
                snprintf(q, sizeof q, "%s.downsample.0.weight", p);
                n = tv_add(e, n, q, 4, planes, inplanes, 1, 1);
                snprintf(q, sizeof q, "%s.downsample.1", p);
                n = tv_bn(e, n, q, planes);
            }
        }
        inplanes = planes;
    }
    n = tv_add(e, n, "fc.weight", 2, CLASSES, 512, 0, 0);
    return tv_add(e, n, "fc.bias", 1, CLASSES, 0, 0, 0);
}

static size_t tv_count(const tv_entry *t) {
    size_t c = 1;
    for (int d = 0; d < t->ndim; d++) c *= (size_t)t->shape[d];
    return c;
}

// ---- fixtures ----
static dt_device *g_dev;
static char g_dir[64];

static dt_net *make_net(uint64_t seed) {
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = 2;  // layer4 maps are 1x1 at 32x32: batchnorm needs 2 values per channel
    cfg.in_h = cfg.in_w = 32;
    cfg.num_classes = CLASSES;
    cfg.seed = seed;
    dt_error err = {0};
    dt_net *net = dt_model_create("resnet18", g_dev, &cfg, &err);
    if (!net) fail_msg("dt_model_create: %s", err.msg);
    return net;
}

static float *download(const dt_net *net) {
    float *h = malloc(net->n_total * sizeof(float));
    g_dev->to_host(g_dev, h, net->params, net->n_total * sizeof(float));
    return h;
}

// Every parameter random (running_var positive), so nothing is left at its initial value.
static void randomize(dt_net *net, tu_rng *r) {
    float *h = download(net);
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        double lo = p->kind == DT_PARAM_RUNNING_VAR ? 0.5 : -1.0;
        tu_fill_uniform(r, h + p->offset, p->count, lo, 1.5);
    }
    g_dev->from_host(g_dev, net->params, h, net->n_total * sizeof(float));
    free(h);
    net->bn_batches_tracked = tu_int(r, 1, 1000000);
}

static void path_in(char *out, size_t n, const char *name) {
    snprintf(out, n, "%s/%s", g_dir, name);
}

// ---- tests ----

static void test_weights_save_then_load_into_other_net_is_bit_identical(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    dt_net *a = make_net(1), *b = make_net(2);
    randomize(a, &r);
    char path[128];
    path_in(path, sizeof path, "resnet18.safetensors");
    dt_error err = {0};
    if (dt_weights_save(a, path, &err)) fail_msg("save: %s", err.msg);
    float *ha = download(a), *hb = download(b);
    assert_true(memcmp(ha, hb, a->n_total * sizeof(float)) != 0);  // differ before loading
    free(hb);
    if (dt_weights_load(b, path, &err)) fail_msg("load: %s", err.msg);
    hb = download(b);
    assert_int_equal(a->n_total, b->n_total);
    assert_memory_equal(ha, hb, a->n_total * sizeof(float));
    assert_int_equal(b->bn_batches_tracked, a->bn_batches_tracked);

    // The file itself, against torchvision's state_dict: the same 122 names and shapes,
    // F32 holding our bytes, and an I64 0-dim num_batches_tracked for each batchnorm.
    tv_entry tv[MAXT];
    int ntv = tv_resnet18(tv);
    assert_int_equal(ntv, 122);
    dt_st_file *f = dt_st_open(path, &err);
    assert_non_null(f);
    assert_int_equal(dt_st_count(f), ntv);
    assert_string_equal(dt_st_metadata(f, "format"), "pt");
    for (int i = 0; i < ntv; i++) {
        const dt_st_tensor *t = dt_st_find(f, tv[i].name);
        if (!t) fail_msg("file lacks torchvision's '%s'", tv[i].name);
        assert_int_equal(t->ndim, tv[i].ndim);
        for (int d = 0; d < t->ndim; d++) assert_int_equal(t->shape[d], tv[i].shape[d]);
        if (tv[i].nbt) {
            int64_t v;
            assert_int_equal(t->dtype, DT_ST_I64);
            memcpy(&v, t->data, 8);
            assert_int_equal(v, a->bn_batches_tracked);
        } else {
            const dt_param *p = dt_net_find_param(a, tv[i].name);
            assert_non_null(p);
            assert_int_equal(t->dtype, DT_ST_F32);
            assert_memory_equal(t->data, ha + p->offset, p->count * sizeof(float));
        }
    }
    dt_st_close(f);
    free(ha);
    free(hb);
    dt_net_free(a);
    dt_net_free(b);
    unlink(path);
}

// IEEE binary16 and bfloat16, decoded by their closed forms (no bit tricks).
static double f16_value(uint16_t h) {
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e ? ldexp(1.0 + m / 1024.0, e - 15) : ldexp(m / 1024.0, -14);
    return s ? -v : v;
}
static double bf16_value(uint16_t h) {
    int s = h >> 15, e = (h >> 7) & 255, m = h & 127;
    double v = e ? ldexp(1.0 + m / 128.0, e - 127) : ldexp(m / 128.0, -126);
    return s ? -v : v;
}

// A file as PyTorch would name it, written by an independent writer (this function, byte by
// byte), mixing F32, F16 and BF16, with unaligned tensors, shuffled header order, an extra
// tensor, and num_batches_tracked buffers: it must load exactly.
static void test_weights_torchvision_named_file_with_f16_bf16_loads_exactly(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    tv_entry tv[MAXT];
    int ntv = tv_resnet18(tv);
    static const char *const dtn[3] = {"F32", "F16", "BF16"};
    static const size_t dts[3] = {4, 2, 2};
    size_t total = 0, nvalues = 0;
    for (int i = 0; i < ntv; i++) {
        total += tv[i].nbt ? 8 : tv_count(&tv[i]) * 4;
        nvalues += tv_count(&tv[i]);
    }
    unsigned char *data = malloc(total + 16);
    double *expect = malloc(nvalues * sizeof(double));
    size_t *voff = malloc(MAXT * sizeof(size_t));
    size_t *begin = malloc(MAXT * sizeof(size_t)), *end = malloc(MAXT * sizeof(size_t));
    int *kind = malloc(MAXT * sizeof(int));
    size_t at = 0, v = 0;
    const int64_t tracked = 4242;
    for (int i = 0; i < ntv; i++) {
        begin[i] = at;
        voff[i] = v;
        if (tv[i].nbt) {
            memcpy(data + at, &tracked, 8);  // little-endian host, as the format
            at += 8;
            end[i] = at;
            continue;
        }
        kind[i] = i % 3;
        for (size_t k = 0; k < tv_count(&tv[i]); k++, v++) {
            if (kind[i] == 0) {
                float x = (float)tu_uniform(&r, -2, 2);
                memcpy(data + at, &x, 4);
                expect[v] = x;
            } else {
                uint16_t h;  // random finite bits (exponent field not all ones)
                do h = (uint16_t)tu_int(&r, 0, 65535);
                while (kind[i] == 1 ? ((h >> 10) & 31) == 31 : ((h >> 7) & 255) == 255);
                data[at] = (unsigned char)(h & 255);
                data[at + 1] = (unsigned char)(h >> 8);
                expect[v] = kind[i] == 1 ? f16_value(h) : bf16_value(h);
            }
            at += dts[kind[i]];
        }
        end[i] = at;
    }
    data[at] = 7;  // an extra tensor the model does not have
    size_t extra = at++;
    // header: entries in reverse order, spaces and newlines as another writer might put
    size_t cap = 64 * 1024, hn = 0;
    char *h = malloc(cap);
    hn += (size_t)snprintf(h + hn, cap - hn, "{\n  \"extra.unused\": {\"dtype\": \"U8\", "
                           "\"shape\": [1], \"data_offsets\": [%zu, %zu]}", extra, extra + 1);
    for (int i = ntv - 1; i >= 0; i--) {
        char shp[64] = "";
        for (int d = 0, k = 0; d < tv[i].ndim; d++) {
            k += snprintf(shp + k, sizeof shp - (size_t)k, "%s%lld", d ? ", " : "",
                          (long long)tv[i].shape[d]);
        }
        hn += (size_t)snprintf(h + hn, cap - hn, ",\n  \"%s\": {\"dtype\": \"%s\", \"shape\": "
                               "[%s], \"data_offsets\": [%zu, %zu]}", tv[i].name,
                               tv[i].nbt ? "I64" : dtn[kind[i]], shp, begin[i], end[i]);
    }
    hn += (size_t)snprintf(h + hn, cap - hn, ",\n  \"__metadata__\": {\"format\": \"pt\"}\n}");
    assert_true(hn < cap);
    char path[128];
    path_in(path, sizeof path, "torch-named.safetensors");
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    for (int k = 0; k < 8; k++) fputc((int)(((uint64_t)hn >> (8 * k)) & 255), fp);
    assert_int_equal(fwrite(h, 1, hn, fp), hn);
    assert_int_equal(fwrite(data, 1, at, fp), at);
    assert_int_equal(fclose(fp), 0);

    dt_net *net = make_net(3);
    dt_error err = {0};
    if (dt_weights_load(net, path, &err)) fail_msg("load: %s", err.msg);
    float *got = download(net);
    int matched = 0;
    for (int i = 0; i < ntv; i++) {
        if (tv[i].nbt) continue;
        const dt_param *p = dt_net_find_param(net, tv[i].name);
        if (!p) fail_msg("the model lacks torchvision's '%s'", tv[i].name);
        assert_int_equal(p->count, tv_count(&tv[i]));
        for (size_t k = 0; k < p->count; k++) {
            if ((double)got[p->offset + k] != expect[voff[i] + k]) {
                fail_msg("'%s' (%s) element %zu: got %.9g, want %.9g", tv[i].name,
                         dtn[kind[i]], k, (double)got[p->offset + k], expect[voff[i] + k]);
            }
        }
        matched++;
    }
    assert_int_equal(matched, net->n_params);  // and every table entry was in torchvision's
    assert_int_equal(net->bn_batches_tracked, tracked);
    free(got);
    dt_net_free(net);
    free(h);
    free(data);
    free(expect);
    free(voff);
    free(begin);
    free(end);
    free(kind);
    unlink(path);
}

// A bad file for `net`: `a`'s weights with one change. how: 0 drop the tensor, 1 give it
// the shape `shape`, 2 store it as I32, 3 store it as F32 (for num_batches_tracked).
static void write_variant(const dt_net *a, const float *ha, const char *path, const char *name,
                          int how, int ndim, const int64_t *shape) {
    dt_st_writer *w = dt_st_writer_new();
    int64_t tracked = a->bn_batches_tracked;
    float tracked_f = (float)tracked;
    for (int i = 0; i < a->n_params; i++) {
        const dt_param *p = &a->params_table[i];
        int64_t s[4];
        for (int d = 0; d < p->ndim; d++) s[d] = p->shape[d];
        if (strcmp(p->name, name) != 0) {
            dt_st_add(w, p->name, DT_ST_F32, p->ndim, s, ha + p->offset);
        } else if (how == 1) {
            dt_st_add(w, p->name, DT_ST_F32, ndim, shape, ha + p->offset);  // fewer elements
        } else if (how == 2) {
            dt_st_add(w, p->name, DT_ST_I32, p->ndim, s, ha + p->offset);
        }
        if (p->kind == DT_PARAM_BN_GAMMA) {
            char nb[128];
            snprintf(nb, sizeof nb, "%.*s.num_batches_tracked",
                     (int)(strrchr(p->name, '.') - p->name), p->name);
            if (strcmp(nb, name) != 0) {
                dt_st_add(w, nb, DT_ST_I64, 0, NULL, &tracked);
            } else if (how == 3) {
                dt_st_add(w, nb, DT_ST_F32, 0, NULL, &tracked_f);
            }
        }
    }
    dt_error err = {0};
    if (dt_st_write(w, path, &err)) fail_msg("%s", err.msg);
    dt_st_writer_free(w);
}

static void test_weights_bad_files_rejected_naming_file_and_tensor_net_unchanged(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    dt_net *a = make_net(11), *b = make_net(12);
    randomize(a, &r);
    randomize(b, &r);
    float *ha = download(a), *before = download(b);
    long tracked_before = b->bn_batches_tracked;
    int64_t s11[4] = {64, 64, 1, 1}, sfc[2] = {512, CLASSES};
    char path[128], want[400];
    path_in(path, sizeof path, "bad-weights.safetensors");
    struct {
        const char *name;
        int how, ndim;
        const int64_t *shape;
        const char *want;  // the message after "<path>: "
    } cases[] = {
        {"fc.bias", 0, 0, NULL, "tensor 'fc.bias' is missing (model resnet18 needs it)"},
        {"layer4.1.bn2.running_var", 0, 0, NULL, "tensor 'layer4.1.bn2.running_var' is missing"},
        {"layer1.0.conv1.weight", 1, 4, s11,
         "tensor 'layer1.0.conv1.weight' has shape [64,64,1,1], model expects [64,64,3,3]"},
        {"fc.weight", 1, 2, sfc, "tensor 'fc.weight' has shape [512,10], model expects [10,512]"},
        {"fc.bias", 2, 0, NULL, "tensor 'fc.bias' has dtype I32, expected F32, F16 or BF16"},
        {"layer4.1.bn2.num_batches_tracked", 3, 0, NULL,
         "tensor 'layer4.1.bn2.num_batches_tracked' must be one I64 (or I32), found dtype F32"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        write_variant(a, ha, path, cases[c].name, cases[c].how, cases[c].ndim, cases[c].shape);
        dt_error err = {0};
        assert_int_equal(dt_weights_load(b, path, &err), -1);
        printf("# %s\n", err.msg);
        assert_int_equal(err.code, DT_EXIT_USAGE);
        snprintf(want, sizeof want, "%s: %s", path, cases[c].want);
        if (strncmp(err.msg, want, strlen(want)) != 0) fail_msg("got: %s\nwant: %s", err.msg,
                                                                want);
        float *now = download(b);
        assert_memory_equal(now, before, b->n_total * sizeof(float));
        assert_int_equal(b->bn_batches_tracked, tracked_before);
        free(now);
    }
    // not a safetensors file at all
    FILE *fp = fopen(path, "wb");
    fputs("PK\3\4 this is a zip (a torch.save .pt file), not safetensors", fp);
    fclose(fp);
    dt_error err = {0};
    assert_int_equal(dt_weights_load(b, path, &err), -1);
    printf("# %s\n", err.msg);
    assert_int_equal(err.code, DT_EXIT_USAGE);
    assert_non_null(strstr(err.msg, path));
    float *now = download(b);
    assert_memory_equal(now, before, b->n_total * sizeof(float));
    free(now);
    free(ha);
    free(before);
    dt_net_free(a);
    dt_net_free(b);
    unlink(path);
}

static int setup(void **state) {
    (void)state;
    g_dev = dt_device_cpu_create(1);
    snprintf(g_dir, sizeof g_dir, "/tmp/dt_test_w_XXXXXX");
    return g_dev && mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    g_dev->destroy(g_dev);
    const char *left[] = {"resnet18.safetensors", "torch-named.safetensors",
                          "bad-weights.safetensors"};  // after a failed test
    char p[128];
    for (size_t i = 0; i < sizeof left / sizeof *left; i++) {
        path_in(p, sizeof p, left[i]);
        unlink(p);
    }
    return rmdir(g_dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weights_save_then_load_into_other_net_is_bit_identical),
        cmocka_unit_test(test_weights_torchvision_named_file_with_f16_bf16_loads_exactly),
        cmocka_unit_test(test_weights_bad_files_rejected_naming_file_and_tensor_net_unchanged),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
