// gpt_crosscheck.c — dtlab's gpt2-tiny and AdamW against the files gpt_crosscheck.py
// writes from a PyTorch reference module: the weights loaded strictly (dtrain --weights's
// loader: every name of the module's state_dict but the tied lm_head), one training step
// (logits, loss, the gradient of every parameter), then five AdamW steps from the same
// weights with the reference's gradients and learning rates, against torch.optim.AdamW.
// Errors are max|ours - torch| / max|torch| per tensor, against PyTorch in float64, printed
// beside PyTorch's own fp32 error; the tolerance is the base below or 10x that error.
// usage: dt_gpt_crosscheck B T WEIGHTS REF WD BETA1 BETA2 EPS; exit 0 when all agree.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optim.h"
#include "safetensors.h"

#define TOL_LOGITS 1e-5
#define TOL_LOSS 1e-5
#define TOL_GRAD 1e-4
#define TOL_ADAM 1e-6

static int g_failures;

static void *ref_get(const dt_st_file *ref, const char *name, size_t bytes) {
    const dt_st_tensor *t = dt_st_find(ref, name);
    if (!t || t->nbytes != bytes) {
        fprintf(stderr, "gpt_crosscheck: reference lacks '%s' of %zu bytes\n", name, bytes);
        exit(DT_EXIT_USAGE);
    }
    void *p = malloc(bytes ? bytes : 1);
    memcpy(p, t->data, bytes);
    return p;
}

static double rel_err(const float *a, const float *ref, size_t n) {
    double d = 0.0, m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - ref[i]);
        if (!(e <= d)) d = e;
        if (fabs(ref[i]) > m) m = fabs(ref[i]);
    }
    return d / (m > 0 ? m : 1.0);
}

static void compare(const dt_st_file *ref, const char *key, const float *ours, size_t n,
                    double base_tol) {
    float *want = ref_get(ref, key, n * sizeof(float));
    char k32[200];
    snprintf(k32, sizeof k32, "torch32.%s", key);
    float *t32 = ref_get(ref, k32, n * sizeof(float));
    double rel = rel_err(ours, want, n), rel32 = rel_err(t32, want, n);
    double tol = 10.0 * rel32 > base_tol ? 10.0 * rel32 : base_tol;
    int ok = rel <= tol;
    printf("  %-44s n=%-6zu rel err: ours %.2e, torch fp32 %.2e (tol %.1e) %s\n", key, n, rel,
           rel32, tol, ok ? "ok" : "FAIL");
    g_failures += !ok;
    free(want), free(t32);
}

static float *download(dt_net *net, const float *p, size_t n) {
    float *h = malloc(n * sizeof(float));
    net->dev->to_host(net->dev, h, p, n * sizeof(float));
    return h;
}

static void load_or_die(dt_net *net, const char *path) {
    dt_error err = {0};
    dt_weights_opts strict = {1, 0, 0};
    if (dt_weights_load_opts(net, path, &strict, &err)) {
        fprintf(stderr, "gpt_crosscheck: %s\n", err.msg);
        exit(err.code ? err.code : DT_EXIT_RUNTIME);
    }
}

int main(int argc, char **argv) {
    if (argc != 9) {
        fprintf(stderr, "usage: dt_gpt_crosscheck B T WEIGHTS REF WD BETA1 BETA2 EPS\n");
        return DT_EXIT_USAGE;
    }
    int B = atoi(argv[1]), T = atoi(argv[2]);
    dt_error err = {0};
    dt_st_file *ref = dt_st_open(argv[4], &err);
    if (!ref) return fprintf(stderr, "gpt_crosscheck: %s\n", err.msg), err.code;
    dt_device *dev = dt_device_cpu_create(0);
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = B, cfg.seq_len = T;
    dt_net *net = dt_model_create("gpt2-tiny", dev, &cfg, &err);
    if (!net) return fprintf(stderr, "gpt_crosscheck: %s\n", err.msg), err.code;
    load_or_die(net, argv[3]);
    size_t bt = (size_t)B * T, nl = bt * net->num_classes;
    int32_t *tok = ref_get(ref, "tokens", bt * sizeof(int32_t));
    int32_t *tgt = ref_get(ref, "targets", bt * sizeof(int32_t));
    dt_net_set_tokens(net, tok, tgt);
    dt_net_forward(net, 1);
    float loss = dt_net_loss(net);
    dt_net_backward(net, 1.0f, NULL, NULL);
    printf("gpt2-tiny, B %d T %d: one training step\n", B, T);
    float *logits = download(net, net->layers[dt_net_last(net)]->out, nl);
    compare(ref, "logits", logits, nl, TOL_LOGITS);
    compare(ref, "loss", &loss, 1, TOL_LOSS);
    float *g = download(net, net->grads, net->n_trainable);
    char key[160];
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        snprintf(key, sizeof key, "grad.%s", p->name);
        compare(ref, key, g + p->offset, p->count, TOL_GRAD);
    }

    // AdamW against torch.optim.AdamW: decay on the 2-D tensors (dtlab: weights) only
    load_or_die(net, argv[3]);
    dt_optim_config oc = dt_optim_config_default(DT_OPT_ADAMW);
    oc.weight_decay = (float)atof(argv[5]);
    oc.beta1 = (float)atof(argv[6]), oc.beta2 = (float)atof(argv[7]);
    oc.eps = (float)atof(argv[8]);
    dt_optim *opt = dt_optim_create(net, &oc, &err);
    if (!opt) return fprintf(stderr, "gpt_crosscheck: %s\n", err.msg), err.code;
    const dt_st_tensor *lrt = dt_st_find(ref, "adam.lr");
    int steps = lrt ? (int)lrt->shape[0] : 0;
    float *lr = ref_get(ref, "adam.lr", (size_t)steps * sizeof(float));
    for (int s = 0; s < steps; s++) {
        for (int i = 0; i < net->n_params; i++) {
            const dt_param *p = &net->params_table[i];
            snprintf(key, sizeof key, "adam.g%d.%s", s, p->name);
            float *gs = ref_get(ref, key, p->count * sizeof(float));
            dev->from_host(dev, net->grads + p->offset, gs, p->count * sizeof(float));
            free(gs);
        }
        dt_optim_step(opt, net, lr[s]);
    }
    printf("AdamW, %d steps (wd %g, betas %g %g, eps %g) against torch.optim.AdamW\n", steps,
           (double)oc.weight_decay, (double)oc.beta1, (double)oc.beta2, (double)oc.eps);
    float *w = download(net, net->params, net->n_trainable);
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        snprintf(key, sizeof key, "adam.w.%s", p->name);
        compare(ref, key, w + p->offset, p->count, TOL_ADAM);
    }
    printf("%s: %d comparison(s) failed\n", g_failures ? "FAIL" : "ok", g_failures);
    free(w), free(lr), free(g), free(logits), free(tok), free(tgt);
    dt_optim_free(opt);
    dt_net_free(net);
    dt_st_close(ref);
    dev->destroy(dev);
    return g_failures ? 1 : 0;
}
