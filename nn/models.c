// models.c — the model zoo's front door: the list of model names, the default
// configuration, validation of a configuration, and dispatch to the builders in
// models_resnet.c, models_alexnet.c and models_gpt.c. Not here: any layer arithmetic
// (nn/net.c and the layers compute shapes and record an input too small), nor any
// architecture (the builders).
#include <string.h>

#include "models.h"

typedef enum {
    FAMILY_RESNET_IMAGENET, FAMILY_RESNET_CIFAR, FAMILY_ALEXNET, FAMILY_SMALLCNN, FAMILY_GPT
} family;

typedef struct {
    char name[16];  // an array, not a pointer: the table stays in read-only memory
    family fam;
    int arg;  // resnet: depth; alexnet: with batchnorm
} model_entry;

static const model_entry MODELS[] = {
    {"resnet18", FAMILY_RESNET_IMAGENET, 18},   {"resnet34", FAMILY_RESNET_IMAGENET, 34},
    {"resnet50", FAMILY_RESNET_IMAGENET, 50},   {"resnet101", FAMILY_RESNET_IMAGENET, 101},
    {"resnet152", FAMILY_RESNET_IMAGENET, 152}, {"resnet8", FAMILY_RESNET_CIFAR, 8},
    {"resnet14", FAMILY_RESNET_CIFAR, 14},      {"resnet20", FAMILY_RESNET_CIFAR, 20},
    {"resnet32", FAMILY_RESNET_CIFAR, 32},      {"resnet44", FAMILY_RESNET_CIFAR, 44},
    {"resnet56", FAMILY_RESNET_CIFAR, 56},      {"resnet110", FAMILY_RESNET_CIFAR, 110},
    {"alexnet", FAMILY_ALEXNET, 0},             {"alexnet-bn", FAMILY_ALEXNET, 1},
    {"smallcnn", FAMILY_SMALLCNN, 0},           {"gpt2-tiny", FAMILY_GPT, 0},
    {"gpt2", FAMILY_GPT, 0},                    {"gpt2-medium", FAMILY_GPT, 0},
    {"gpt2-large", FAMILY_GPT, 0},              {"gpt2-xl", FAMILY_GPT, 0},
    {"gpt3-small", FAMILY_GPT, 0},              {"gpt3-medium", FAMILY_GPT, 0},
    {"gpt3-large", FAMILY_GPT, 0},              {"gpt3-xl", FAMILY_GPT, 0},
    {"gpt3-2.7b", FAMILY_GPT, 0},               {"gpt3-6.7b", FAMILY_GPT, 0},
    {"gpt3-13b", FAMILY_GPT, 0},                {"gpt3-175b", FAMILY_GPT, 0},
};
#define N_MODELS ((int)(sizeof MODELS / sizeof MODELS[0]))

// Kept in the order of MODELS (tests/unit/test_models.c checks that they agree).
const char *dt_model_names(void) {
    return "resnet18, resnet34, resnet50, resnet101, resnet152, resnet8, resnet14, resnet20, "
           "resnet32, resnet44, resnet56, resnet110, alexnet, alexnet-bn, smallcnn, gpt2-tiny, "
           "gpt2, gpt2-medium, gpt2-large, gpt2-xl, gpt3-small, gpt3-medium, gpt3-large, "
           "gpt3-xl, gpt3-2.7b, gpt3-6.7b, gpt3-13b, gpt3-175b";
}

dt_model_config dt_model_config_default(void) {
    dt_model_config c;
    memset(&c, 0, sizeof c);
    c.batch = 32;
    c.in_c = 3;
    c.in_h = 224;
    c.in_w = 224;
    c.num_classes = 1000;
    c.zero_init_residual = 1;
    c.dropout = 0.5f;  // torchvision AlexNet
    c.seed = 42;
    return c;
}

static const model_entry *find_model(const char *name) {
    for (int i = 0; name && i < N_MODELS; i++)
        if (strcmp(MODELS[i].name, name) == 0) return &MODELS[i];
    return NULL;
}

// Every size must be positive; the message names the field (DT_EXIT_USAGE).
static int validate_config(const dt_model_config *cfg, dt_error *err) {
    const struct { const char *field; int value; } sizes[] = {
        {"batch", cfg->batch}, {"in_c", cfg->in_c}, {"in_h", cfg->in_h},
        {"in_w", cfg->in_w},   {"num_classes", cfg->num_classes},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].value <= 0)
            return dt_fail(err, DT_EXIT_USAGE,
                           "model config: %s must be a positive integer (got %d)",
                           sizes[i].field, sizes[i].value);
    if (!(cfg->dropout >= 0.0f && cfg->dropout < 1.0f))
        return dt_fail(err, DT_EXIT_USAGE,
                       "model config: dropout must be in [0, 1) (got %g)", (double)cfg->dropout);
    return 0;
}

// Batch statistics need at least two values per channel: with one, the variance is 0 and
// the running variance's unbiased factor n/(n-1) divides by zero (PyTorch refuses too:
// "Expected more than 1 value per channel when training"). Checked at build time because
// the per-rank batch is fixed then, and so an input that leaves 1x1 maps at batch 1 fails
// here with a message instead of giving NaN running statistics later.
static int check_bn_values_per_channel(dt_net *net) {
    for (int i = 0; i < net->n_layers; i++) {
        const dt_layer *l = net->layers[i];
        if (l->type == DT_LAYER_BN && (long)l->B * l->oh * l->ow < 2)
            return dt_fail(&net->build_err, DT_EXIT_USAGE,
                           "model '%s': input %dx%dx%d at batch %d leaves batchnorm '%s' one "
                           "value per channel (%dx%d maps); batch x height x width must be at "
                           "least 2 there: use a larger input or batch",
                           net->model, net->in_c, net->in_h, net->in_w, net->B, l->name, l->oh,
                           l->ow);
    }
    return 0;
}

static int build(dt_net *net, const model_entry *m, const dt_model_config *cfg) {
    switch (m->fam) {
    case FAMILY_RESNET_IMAGENET: return dt_build_resnet_imagenet(net, cfg, m->arg);
    case FAMILY_RESNET_CIFAR: return dt_build_resnet_cifar(net, cfg, m->arg);
    case FAMILY_ALEXNET: return dt_build_alexnet(net, cfg, m->arg);
    case FAMILY_SMALLCNN: return dt_build_smallcnn(net, cfg);
    case FAMILY_GPT: {
        dt_gpt_shape s = dt_gpt_shape_of(dt_gpt_find(m->name), cfg);
        return dt_build_gpt(net, cfg, &s);
    }
    }
    return -1;
}

// A gpt model's configuration: the input is (1, 1, T) tokens, T = seq_len or the context,
// the classes are the vocabulary; any precision (nn/net_half.c); vocab and seq_len must not be
// negative.
static int gpt_config(const model_entry *m, const dt_model_config *in, dt_model_config *out,
                      dt_error *err) {
    dt_gpt_shape own = dt_gpt_shape_of(dt_gpt_find(m->name), in);
    const dt_gpt_shape *s = &own;
    *out = *in;
    if (in->layers < 0 || in->width < 0 || in->heads < 0 || s->width % s->heads)
        return dt_fail(err, DT_EXIT_USAGE, "model %s: %d blocks of width %d and %d heads: the "
                       "width must be a multiple of the heads (0: the model's)", m->name,
                       s->layers, s->width, s->heads);
    if (in->seq_len < 0 || in->vocab < 0)
        return dt_fail(err, DT_EXIT_USAGE, "model %s: sequence length %d and vocabulary %d "
                       "must not be negative (0: the model's)", m->name, in->seq_len,
                       in->vocab);
    if (in->seq_len > s->context)
        return dt_fail(err, DT_EXIT_USAGE, "model %s: a sequence of %d tokens is longer than "
                       "the model's context of %d", m->name, in->seq_len, s->context);
    int tp = in->tp > 1 ? in->tp : 1;
    if (in->tp < 0 || in->blocks < 0 || in->blocks > s->layers || s->heads % tp ||
        in->block0 < 0 || in->block0 + (in->blocks ? in->blocks : s->layers) > s->layers ||
        (in->ends & ~(DT_GPT_NO_EMBED | DT_GPT_NO_HEAD)))
        return dt_fail(err, DT_EXIT_USAGE, "model %s: tensor-parallel degree %d and %d blocks "
                       "from block %d: the degree must divide the %d attention heads and the "
                       "blocks be 0 (all) to %d, within the model", m->name, in->tp, in->blocks,
                       in->block0, s->heads, s->layers);
    out->seq_len = in->seq_len > 0 ? in->seq_len : s->context;
    out->vocab = in->vocab > 0 ? in->vocab : s->vocab;
    out->in_c = 1, out->in_h = 1, out->in_w = out->seq_len;
    if (in->ends & DT_GPT_NO_EMBED)  // a later pipeline stage: its first block's input
        out->in_h = out->seq_len, out->in_w = s->width;
    out->num_classes = in->tp_vocab_whole ? out->vocab  // a rank's vocabulary shard
                                          : (out->vocab + tp - 1) / tp;
    return 0;
}

// The layers of `name` on dev without allocating anything (the builder alone): what a
// simulator or a planner needs to know about a model too large for this machine.
int dt_model_describe(const char *name, dt_device *dev, const dt_model_config *cfg,
                      double *n_trainable, double *fwd_flops, double *step_flops,
                      dt_error *err) {
    const model_entry *m = find_model(name);
    if (!m)
        return dt_fail(err, DT_EXIT_USAGE, "unknown model '%s'; valid models: %s",
                       name ? name : "(null)", dt_model_names());
    if (!dev) return dt_fail(err, DT_EXIT_USAGE, "model %s: no device given", name);
    dt_model_config def = dt_model_config_default(), c;
    if (!cfg) cfg = &def;
    c = *cfg;
    if (m->fam == FAMILY_GPT && gpt_config(m, cfg, &c, err) != 0) return -1;
    if (validate_config(&c, err) != 0) return -1;
    dt_net *net = dt_net_new(dev, m->name, &c);
    if (build(net, m, &c) != 0 || net->build_err.code) {
        if (err) *err = net->build_err;
        dt_net_free(net);
        return -1;
    }
    *n_trainable = (double)net->n_trainable;
    *fwd_flops = dt_net_forward_flops(net);
    *step_flops = dt_net_step_flops(net);
    dt_net_free(net);
    return 0;
}

// The transformer primitives a gpt model runs on (nn/device.h); the message lists them.
static int gpt_device_ok(const char *name, const dt_device *d, dt_error *err) {
    if (d->embed_forward && d->embed_backward && d->layernorm_forward &&
        d->layernorm_backward && d->attention_forward && d->attention_backward &&
        d->gelu_forward && d->gelu_backward)
        return 0;
    return dt_fail(err, DT_EXIT_USAGE, "model %s: the %s device has no transformer primitives "
                   "(embedding, layer norm, attention, GELU); gpt models run on the cpu "
                   "device", name, d->name ? d->name : "?");
}

dt_net *dt_model_create(const char *name, dt_device *dev, const dt_model_config *cfg,
                        dt_error *err) {
    const model_entry *m = find_model(name);
    if (!m) {
        dt_fail(err, DT_EXIT_USAGE, "unknown model '%s'; valid models: %s",
                name ? name : "(null)", dt_model_names());
        return NULL;
    }
    if (!dev) {
        dt_fail(err, DT_EXIT_USAGE, "model %s: no device given", name);
        return NULL;
    }
    dt_model_config def = dt_model_config_default(), gcfg;
    if (!cfg) cfg = &def;
    if (m->fam == FAMILY_GPT) {
        if (gpt_config(m, cfg, &gcfg, err) != 0 || gpt_device_ok(m->name, dev, err) != 0)
            return NULL;
        cfg = &gcfg;
    }
    if (validate_config(cfg, err) != 0) return NULL;

    dt_net *net = dt_net_new(dev, m->name, cfg);
    if (!net) {
        dt_fail(err, DT_EXIT_USAGE, "model %s: cannot create the network", name);
        return NULL;
    }
    if (build(net, m, cfg) != 0) {
        if (net->build_err.code == 0)
            dt_fail(&net->build_err, DT_EXIT_RUNTIME, "model %s: builder failed", name);
    } else {
        check_bn_values_per_channel(net);
    }
    // finalize reports the first error the builder met (an input too small, ...)
    if (dt_net_finalize(net, err) != 0) {
        dt_net_free(net);
        return NULL;
    }
    if (cfg->zero_init_residual && (m->fam == FAMILY_RESNET_IMAGENET ||
                                    m->fam == FAMILY_RESNET_CIFAR))
        dt_resnet_zero_init_residual(net);
    return net;
}
