// crosscheck.c — compares dtlab's network with PyTorch's on the files torch_crosscheck.py
// writes: torchvision weights (F32, F16, BF16 copies) loaded strictly, as `dtrain --weights`
// loads them (dt_weights_load_opts: every tensor of torchvision's state_dict known), into
// dt_model_create's network, then eval-mode logits, and for ResNets one training-mode step
// (loss, logits, gradients of a few tensors, running statistics of the first batchnorm),
// against PyTorch computed in float64. Errors are max|ours - torch| / max|torch| over each
// tensor, printed next to the same error of PyTorch's own fp32 computation.
// Not a test of the file format (tests/unit/test_safetensors.c).
// usage: dt_crosscheck MODEL REF.safetensors W_F32 W_F16 W_BF16; exit 0 when all agree.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "net.h"
#include "safetensors.h"

// Base tolerances, relative to the largest magnitude of the reference tensor
// (docs/conventions.md, "Reference implementations and tolerances": fp32 ~1e-5 relative on
// logits, gradients looser). Our arithmetic is fp32, the reference float64. Raised to 10x
// PyTorch's own fp32 error where that is larger (see compare()).
#define TOL_LOGITS 1e-5
#define TOL_LOSS 1e-5
#define TOL_GRAD 1e-4
#define TOL_STATS 1e-5

static int g_failures;

// A reference tensor as floats (copied out: file data may be unaligned).
static float *ref_f32(const dt_st_file *ref, const char *name, size_t count) {
    const dt_st_tensor *t = dt_st_find(ref, name);
    if (!t || t->dtype != DT_ST_F32 || t->nbytes != count * sizeof(float)) {
        fprintf(stderr, "crosscheck: reference lacks F32 '%s' of %zu elements\n", name, count);
        exit(DT_EXIT_USAGE);
    }
    float *p = malloc(t->nbytes ? t->nbytes : 1);
    memcpy(p, t->data, t->nbytes);
    return p;
}

static double rel_err(const float *a, const float *ref, size_t n, double *maxdiff,
                      double *maxref) {
    *maxdiff = 0.0;
    *maxref = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)ref[i]);
        if (!(d <= *maxdiff)) *maxdiff = d;  // NaN counts as the worst
        if (fabs(ref[i]) > *maxref) *maxref = fabs(ref[i]);
    }
    return *maxdiff / (*maxref > 0 ? *maxref : 1.0);
}

// ours vs the float64 reference `key`; returns max|ours - ref|. The tolerance is base_tol,
// or 10x the error of PyTorch's own fp32 result ("torch32.<key>") where that is larger: a
// badly conditioned quantity loses digits in any fp32 implementation, and we ask to stay
// within an order of magnitude of PyTorch. abs_slack > 0 also accepts max|diff| <= abs_slack.
static double compare(const dt_st_file *ref, const char *key, const char *label,
                      const float *ours, size_t n, double base_tol, double abs_slack) {
    float *want = ref_f32(ref, key, n);
    char k32[200];
    snprintf(k32, sizeof k32, "torch32.%s", key);
    double maxdiff, maxref, d32, r32, rel32 = 0.0;
    double rel = rel_err(ours, want, n, &maxdiff, &maxref);
    if (dt_st_find(ref, k32)) {
        float *t32 = ref_f32(ref, k32, n);
        rel32 = rel_err(t32, want, n, &d32, &r32);
        free(t32);
    }
    double tol = 10.0 * rel32 > base_tol ? 10.0 * rel32 : base_tol;
    int ok = rel <= tol || maxdiff <= abs_slack;
    printf("  %-42s n=%-7zu max|torch| %.2e  rel err: ours %.2e, torch fp32 %.2e (tol %.1e) %s\n",
           label, n, maxref, rel, rel32, tol, ok ? "ok" : "FAIL");
    g_failures += !ok;
    free(want);
    return maxdiff;
}

static float *download(dt_net *net, const float *dev_ptr, size_t n) {
    float *h = malloc(n * sizeof(float));
    net->dev->to_host(net->dev, h, dev_ptr, n * sizeof(float));
    return h;
}

static int meta_int(const dt_st_file *ref, const char *key) {
    const char *v = dt_st_metadata(ref, key);
    if (!v) {
        fprintf(stderr, "crosscheck: reference metadata lacks '%s'\n", key);
        exit(DT_EXIT_USAGE);
    }
    return atoi(v);
}

static void load_or_die(dt_net *net, const char *path) {
    dt_error err = {0};
    dt_weights_opts strict = {1, 0, 0};  // dtrain --weights's loader
    if (dt_weights_load_opts(net, path, &strict, &err)) {
        fprintf(stderr, "crosscheck: %s\n", err.msg);
        exit(err.code ? err.code : DT_EXIT_RUNTIME);
    }
}

// One training step as torch's model.train(); logits = model(x); loss.backward().
static void check_training(dt_net *net, const dt_st_file *ref, const char *w_f32, int B,
                           int K) {
    const char *grads = dt_st_metadata(ref, "grads"), *bn = dt_st_metadata(ref, "bn");
    if (!grads || !*grads || !bn || !*bn) return;
    load_or_die(net, w_f32);  // fresh running statistics and counter
    dt_net_forward(net, 1);
    float loss = dt_net_loss(net);
    float *logits = download(net, net->layers[dt_net_last(net)]->out, (size_t)B * K);
    double dz = compare(ref, "logits_train", "train: logits (batch statistics)", logits,
                        (size_t)B * K, TOL_LOGITS, 0.0);
    free(logits);
    // the mean of logsumexp(z) - z_label moves by at most 2 max|dz|: the loss is right if it
    // is as close as the logits it came from allow
    compare(ref, "loss_train", "train: loss (or within 2 max|d logits|)", &loss, 1, TOL_LOSS,
            2.0 * dz);
    dt_net_backward(net, 1.0f, NULL, NULL);

    char list[512], key[160], label[256];
    snprintf(list, sizeof list, "%s", grads);
    for (char *name = strtok(list, ","); name; name = strtok(NULL, ",")) {
        const dt_param *p = dt_net_find_param(net, name);
        if (!p || !p->trainable) {
            printf("  grad %s: not a trainable parameter of ours  FAIL\n", name);
            g_failures++;
            continue;
        }
        float *g = download(net, net->grads + p->offset, p->count);
        snprintf(key, sizeof key, "grad.%s", name);
        snprintf(label, sizeof label, "train: dloss/d %s", name);
        compare(ref, key, label, g, p->count, TOL_GRAD, 0.0);
        free(g);
    }
    static const char *const stats[] = {"running_mean", "running_var"};
    for (int s = 0; s < 2; s++) {
        snprintf(key, sizeof key, "%s.%s", bn, stats[s]);
        const dt_param *p = dt_net_find_param(net, key);
        if (!p) {
            printf("  %s: missing  FAIL\n", key);
            g_failures++;
            continue;
        }
        float *r = download(net, net->params + p->offset, p->count);
        char rkey[200];
        snprintf(rkey, sizeof rkey, "after.%s", key);
        snprintf(label, sizeof label, "train: %s after", key);
        compare(ref, rkey, label, r, p->count, TOL_STATS, 0.0);
        free(r);
    }
    const dt_st_tensor *nbt = dt_st_find(ref, "after.num_batches_tracked");
    int64_t want_nbt = -1;
    if (nbt && nbt->dtype == DT_ST_I64 && nbt->nbytes == 8) memcpy(&want_nbt, nbt->data, 8);
    int ok = want_nbt == (int64_t)net->bn_batches_tracked;
    printf("  %-42s ours %ld, torch %lld %s\n", "train: num_batches_tracked",
           net->bn_batches_tracked, (long long)want_nbt, ok ? "ok" : "FAIL");
    g_failures += !ok;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s MODEL REF.safetensors W_F32 W_F16 W_BF16\n", argv[0]);
        return DT_EXIT_USAGE;
    }
    dt_error err = {0};
    dt_st_file *ref = dt_st_open(argv[2], &err);
    if (!ref) {
        fprintf(stderr, "crosscheck: %s\n", err.msg);
        return err.code;
    }
    int B = meta_int(ref, "batch"), S = meta_int(ref, "size"), K = meta_int(ref, "classes");
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = B;
    cfg.in_h = cfg.in_w = S;
    cfg.num_classes = K;
    cfg.zero_init_residual = 0;
    dt_device *dev = dt_device_cpu_create(0);
    dt_net *net = dt_model_create(argv[1], dev, &cfg, &err);
    if (!net) {
        fprintf(stderr, "crosscheck: %s\n", err.msg);
        return err.code;
    }
    printf("%s: batch %d, %dx%d, %d classes, %zu parameters\n", argv[1], B, S, S, K,
           net->n_trainable);
    float *x = ref_f32(ref, "x", (size_t)B * 3 * S * S);
    const dt_st_tensor *lt = dt_st_find(ref, "labels");
    int32_t *labels = calloc((size_t)B, sizeof(int32_t));
    if (!lt || lt->dtype != DT_ST_I32 || lt->nbytes != (size_t)B * 4) {
        fprintf(stderr, "crosscheck: reference lacks I32 labels\n");
        return DT_EXIT_USAGE;
    }
    memcpy(labels, lt->data, lt->nbytes);
    dt_net_set_batch(net, x, labels);

    static const char *const tags[3] = {"", "_f16", "_bf16"};
    for (int w = 0; w < 3; w++) {  // eval mode: running statistics, no dropout
        load_or_die(net, argv[3 + w]);
        dt_net_forward(net, 0);
        float *logits = download(net, net->layers[dt_net_last(net)]->out, (size_t)B * K);
        char key[64], label[96];
        snprintf(key, sizeof key, "logits_eval%s", tags[w]);
        snprintf(label, sizeof label, "eval: logits, %s weights", w == 0 ? "F32" : tags[w] + 1);
        compare(ref, key, label, logits, (size_t)B * K, TOL_LOGITS, 0.0);
        free(logits);
    }
    check_training(net, ref, argv[3], B, K);
    printf("%s: %s\n", argv[1], g_failures ? "FAILED" : "all within tolerance");
    free(x);
    free(labels);
    dt_net_free(net);
    dev->destroy(dev);
    dt_st_close(ref);
    return g_failures ? 1 : 0;
}
