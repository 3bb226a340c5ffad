// net.c — building a network (nn/net.h "building"): dt_net_new, the dt_net_add_* layer
// constructors, the parameter table with torchvision state_dict names, and dt_net_finalize,
// which lays out the one parameter buffer, allocates every device buffer and initialises
// the parameters. Not here: the plan of activation and gradient buffers (nn/net_plan.c),
// running the network (nn/net_run.c), the layers' math (nn/layer_*.c), the model zoo
// (nn/models*.c).
//
// Parameter layout (net.h): trainable tensors first, in the order layers register them
// (torchvision's state_dict order), then the running statistics. While building, a running
// statistic's offset counts from the start of the running block; finalize shifts it by
// n_trainable once the trainable total is known.
#include "net.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels.h"
#include "layers.h"

const char *dt_param_kind_name(dt_param_kind kind) {
    switch (kind) {
    case DT_PARAM_WEIGHT: return "weight";
    case DT_PARAM_BIAS: return "bias";
    case DT_PARAM_BN_GAMMA: return "bn_gamma";
    case DT_PARAM_BN_BETA: return "bn_beta";
    case DT_PARAM_RUNNING_MEAN: return "running_mean";
    case DT_PARAM_RUNNING_VAR: return "running_var";
    case DT_PARAM_LN_GAMMA: return "ln_gamma";
    case DT_PARAM_LN_BETA: return "ln_beta";
    }
    return "unknown";
}

dt_net *dt_net_new(dt_device *dev, const char *model, const dt_model_config *cfg) {
    DT_ASSERT(dev != NULL);
    dt_net *net = callocCheck(1, sizeof *net);
    net->dev = dev;
    snprintf(net->model, sizeof net->model, "%s", model ? model : "net");
    if (!cfg) {
        dt_fail(&net->build_err, DT_EXIT_USAGE, "model '%s': no configuration given",
                net->model);
        return net;
    }
    net->cfg = *cfg;
    net->B = cfg->batch;
    net->in_c = cfg->in_c;
    net->in_h = cfg->in_h;
    net->in_w = cfg->in_w;
    net->num_classes = cfg->num_classes;
    net->seq = cfg->seq_len > 0 ? cfg->seq_len : 0;
    net->dropout_seed = dt_mix64(cfg->seed ^ 0xD20F0D20F0D20F0Dull);
    net->amp = cfg->amp;
    if (cfg->amp != DT_AMP_FP32 && cfg->amp != DT_AMP_FP16 && cfg->amp != DT_AMP_BF16)
        dt_fail(&net->build_err, DT_EXIT_USAGE, "model '%s': unknown precision %d (fp32, fp16 "
                "or bf16)", net->model, (int)cfg->amp);
    else if ((cfg->amp == DT_AMP_FP16 && (!dev->f32_to_f16 || !dev->f16_to_f32)) ||
             (cfg->amp == DT_AMP_BF16 && (!dev->f32_to_bf16 || !dev->bf16_to_f32)))
        dt_fail(&net->build_err, DT_EXIT_USAGE, "model '%s': the %s device has no %s casts",
                net->model, dev->name ? dev->name : "?", dt_amp_name(cfg->amp));
    if (cfg->batch <= 0 || cfg->in_c <= 0 || cfg->in_h <= 0 || cfg->in_w <= 0) {
        dt_fail(&net->build_err, DT_EXIT_USAGE,
                "model '%s': batch %d and input %dx%dx%d must all be positive", net->model,
                cfg->batch, cfg->in_c, cfg->in_h, cfg->in_w);
    }
    return net;
}

// ---- layer construction: new_layer -> shape checks -> register params -> append ----

// A layer reading `in`, with its input shape filled in; NULL (error recorded) if the net
// is already in error, already finalized, or `in` is not an earlier layer.
static dt_layer *new_layer(dt_net *net, dt_layer_type type, const char *name,
                           const char *kind, int in) {
    if (!net || net->build_err.code) return NULL;
    if (net->finalized) {
        dt_fail(&net->build_err, DT_EXIT_USAGE,
                "model '%s': cannot add a %s layer after dt_net_finalize", net->model, kind);
        return NULL;
    }
    char label[64];
    if (name && *name) {
        snprintf(label, sizeof label, "%s", name);
    } else {
        snprintf(label, sizeof label, "%s#%d", kind, net->n_layers);
    }
    if (in < -1 || in >= net->n_layers) {
        dt_fail(&net->build_err, DT_EXIT_USAGE,
                "model '%s': layer '%s' reads layer %d, which is neither the input (-1) nor "
                "one of the %d layers added so far",
                net->model, label, in, net->n_layers);
        return NULL;
    }
    dt_layer *l = callocCheck(1, sizeof *l);
    l->type = type;
    snprintf(l->name, sizeof l->name, "%s", label);
    l->index = net->n_layers;
    l->in = in;
    l->in2 = -1;
    l->B = net->B;
    if (in < 0) {
        l->c = net->in_c, l->h = net->in_h, l->w = net->in_w;
    } else {
        const dt_layer *src = net->layers[in];
        l->c = src->oc, l->h = src->oh, l->w = src->ow;
    }
    l->w_off = l->b_off = l->rm_off = l->rv_off = -1;
    return l;
}

// Record an error about layer l, free it and return -1.
static int reject(dt_net *net, dt_layer *l, const char *fmt, const char *detail) {
    dt_fail(&net->build_err, DT_EXIT_USAGE, "model '%s': layer '%s': %s%s", net->model,
            l->name, fmt, detail ? detail : "");
    free(l);
    return -1;
}

// The common output check: every layer must produce at least 1x1 per channel.
static int check_output(dt_net *net, dt_layer *l) {
    if (l->oh >= 1 && l->ow >= 1) return 0;
    dt_fail(&net->build_err, DT_EXIT_USAGE,
            "model '%s': input %dx%dx%d too small: layer '%s' would output %dx%d (from its "
            "input %dx%dx%d)",
            net->model, net->in_c, net->in_h, net->in_w, l->name, l->oh < 0 ? 0 : l->oh,
            l->ow < 0 ? 0 : l->ow, l->c, l->h, l->w);
    free(l);
    return -1;
}

// Output size of a sliding window, 0 when the padded input is smaller than the kernel
// (C's division truncates toward zero, so dt_conv_out alone would say 1 there).
static int window_out(int size, int k, int stride, int pad) {
    if (size + 2 * pad < k) return 0;
    return dt_conv_out(size, k, stride, pad);
}

static int append_layer(dt_net *net, dt_layer *l) {
    if (net->n_layers == net->cap_layers) {
        int cap = net->cap_layers ? 2 * net->cap_layers : 16;
        dt_layer **grown = callocCheck((size_t)cap, sizeof *grown);
        if (net->n_layers) memcpy(grown, net->layers, (size_t)net->n_layers * sizeof *grown);
        free(net->layers);
        net->layers = grown;
        net->cap_layers = cap;
    }
    net->layers[net->n_layers++] = l;
    return l->index;
}

// Append "<layer name>.<suffix>" to the parameter table; returns its offset (see the layout
// note at the top: provisional for running statistics until finalize).
static ssize_t add_param(dt_net *net, dt_layer *l, const char *suffix, dt_param_kind kind,
                         int ndim, int s0, int s1, int s2, int s3) {
    if (net->n_params == net->cap_params) {
        int cap = net->cap_params ? 2 * net->cap_params : 32;
        dt_param *grown = callocCheck((size_t)cap, sizeof *grown);
        if (net->n_params) memcpy(grown, net->params_table, (size_t)net->n_params * sizeof *grown);
        free(net->params_table);
        net->params_table = grown;
        net->cap_params = cap;
    }
    dt_param *p = &net->params_table[net->n_params++];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s.%s", l->name, suffix);
    p->kind = kind;
    p->ndim = ndim;
    int shape[4] = {s0, s1, s2, s3};
    p->count = 1;
    for (int i = 0; i < ndim; i++) {
        p->shape[i] = shape[i];
        p->count *= (size_t)shape[i];
    }
    p->trainable = kind != DT_PARAM_RUNNING_MEAN && kind != DT_PARAM_RUNNING_VAR;
    p->layer = l->index;
    if (p->trainable) {
        p->offset = net->n_trainable;
        net->n_trainable += p->count;
        l->n_trainable += p->count;
    } else {
        p->offset = net->n_total - net->n_trainable;
    }
    net->n_total += p->count;
    return (ssize_t)p->offset;
}

int dt_net_add_conv(dt_net *net, const char *name, int in, int oc, int k, int stride, int pad,
                    int bias) {
    dt_layer *l = new_layer(net, DT_LAYER_CONV, name, "conv", in);
    if (!l) return -1;
    char detail[128];
    if (oc <= 0 || k <= 0 || stride <= 0 || pad < 0) {
        snprintf(detail, sizeof detail, "got out_channels %d, kernel %d, stride %d, padding %d",
                 oc, k, stride, pad);
        return reject(net, l,
                      "conv needs out_channels, kernel and stride >= 1 and padding >= 0; ",
                      detail);
    }
    l->oc = oc;
    l->kh = l->kw = k;
    l->stride = stride;
    l->pad = pad;
    l->has_bias = bias != 0;
    l->oh = window_out(l->h, k, stride, pad);
    l->ow = window_out(l->w, k, stride, pad);
    if (check_output(net, l)) return -1;
    l->w_off = add_param(net, l, "weight", DT_PARAM_WEIGHT, 4, oc, l->c, k, k);
    if (l->has_bias) l->b_off = add_param(net, l, "bias", DT_PARAM_BIAS, 1, oc, 0, 0, 0);
    l->forward = dt_conv_forward;
    l->backward = dt_conv_backward;
    dt_conv_setup(l, net->dev);
    return append_layer(net, l);
}

int dt_net_add_bn(dt_net *net, const char *name, int in) {
    dt_layer *l = new_layer(net, DT_LAYER_BN, name, "bn", in);
    if (!l) return -1;
    l->oc = l->c, l->oh = l->h, l->ow = l->w;
    l->eps = 1e-5f;      // torch.nn.BatchNorm2d defaults
    l->momentum = 0.1f;
    l->w_off = add_param(net, l, "weight", DT_PARAM_BN_GAMMA, 1, l->c, 0, 0, 0);
    l->b_off = add_param(net, l, "bias", DT_PARAM_BN_BETA, 1, l->c, 0, 0, 0);
    l->rm_off = add_param(net, l, "running_mean", DT_PARAM_RUNNING_MEAN, 1, l->c, 0, 0, 0);
    l->rv_off = add_param(net, l, "running_var", DT_PARAM_RUNNING_VAR, 1, l->c, 0, 0, 0);
    l->forward = dt_bn_forward;
    l->backward = dt_bn_backward;
    dt_bn_setup(l);
    return append_layer(net, l);
}

int dt_net_add_relu(dt_net *net, int in) {
    dt_layer *l = new_layer(net, DT_LAYER_RELU, NULL, "relu", in);
    if (!l) return -1;
    l->oc = l->c, l->oh = l->h, l->ow = l->w;
    l->forward = dt_relu_forward;
    l->backward = dt_relu_backward;
    dt_relu_setup(l);
    return append_layer(net, l);
}

int dt_net_add_maxpool(dt_net *net, int in, int k, int stride, int pad) {
    dt_layer *l = new_layer(net, DT_LAYER_MAXPOOL, NULL, "maxpool", in);
    if (!l) return -1;
    if (k <= 0 || stride <= 0 || pad < 0 || 2 * pad > k) {
        char detail[96];
        snprintf(detail, sizeof detail, "got kernel %d, stride %d, padding %d", k, stride, pad);
        return reject(net, l,
                      "maxpool needs kernel, stride >= 1 and 0 <= padding <= kernel/2 "
                      "(as torch.nn.MaxPool2d); ",
                      detail);
    }
    l->oc = l->c;
    l->kh = l->kw = k;
    l->stride = stride;
    l->pad = pad;
    l->oh = window_out(l->h, k, stride, pad);
    l->ow = window_out(l->w, k, stride, pad);
    if (check_output(net, l)) return -1;
    l->forward = dt_maxpool_forward;
    l->backward = dt_maxpool_backward;
    dt_maxpool_setup(l);
    return append_layer(net, l);
}

int dt_net_add_avgpool(dt_net *net, int in, int oh, int ow) {
    dt_layer *l = new_layer(net, DT_LAYER_AVGPOOL, NULL, "avgpool", in);
    if (!l) return -1;
    if (oh <= 0 || ow <= 0) {
        char detail[64];
        snprintf(detail, sizeof detail, "got %dx%d", oh, ow);
        return reject(net, l, "adaptive avgpool needs an output size >= 1x1; ", detail);
    }
    l->oc = l->c, l->oh = oh, l->ow = ow;
    l->forward = dt_avgpool_forward;
    l->backward = dt_avgpool_backward;
    dt_avgpool_setup(l);
    return append_layer(net, l);
}

int dt_net_add_linear(dt_net *net, const char *name, int in, int out, int bias) {
    dt_layer *l = new_layer(net, DT_LAYER_LINEAR, name, "linear", in);
    if (!l) return -1;
    if (out <= 0) {
        char detail[64];
        snprintf(detail, sizeof detail, "got %d", out);
        return reject(net, l, "linear needs out_features >= 1; ", detail);
    }
    size_t in_features = dt_layer_in_size(l);
    if (in_features > (size_t)INT32_MAX) {
        return reject(net, l, "linear input has more than 2^31 features", NULL);
    }
    l->oc = out, l->oh = 1, l->ow = 1;
    l->has_bias = bias != 0;
    l->w_off = add_param(net, l, "weight", DT_PARAM_WEIGHT, 2, out, (int)in_features, 0, 0);
    if (l->has_bias) l->b_off = add_param(net, l, "bias", DT_PARAM_BIAS, 1, out, 0, 0, 0);
    l->forward = dt_linear_forward;
    l->backward = dt_linear_backward;
    dt_linear_setup(l);
    return append_layer(net, l);
}

int dt_net_add_dropout(dt_net *net, int in, float p) {
    dt_layer *l = new_layer(net, DT_LAYER_DROPOUT, NULL, "dropout", in);
    if (!l) return -1;
    if (!(p >= 0.0f && p < 1.0f)) {
        char detail[64];
        snprintf(detail, sizeof detail, "got %g", (double)p);
        return reject(net, l, "dropout probability must be in [0, 1); ", detail);
    }
    l->oc = l->c, l->oh = l->h, l->ow = l->w;
    l->p = p;
    l->forward = dt_dropout_forward;
    l->backward = dt_dropout_backward;
    dt_dropout_setup(l);
    return append_layer(net, l);
}

int dt_net_add_add(dt_net *net, int a, int b) {
    dt_layer *l = new_layer(net, DT_LAYER_ADD, NULL, "add", a);
    if (!l) return -1;
    if (b < -1 || b >= net->n_layers) {
        char detail[96];
        snprintf(detail, sizeof detail, "second input %d, with %d layers added so far", b,
                 net->n_layers);
        return reject(net, l, "residual add reads a layer that does not exist yet: ", detail);
    }
    int c2 = b < 0 ? net->in_c : net->layers[b]->oc;
    int h2 = b < 0 ? net->in_h : net->layers[b]->oh;
    int w2 = b < 0 ? net->in_w : net->layers[b]->ow;
    if (c2 != l->c || h2 != l->h || w2 != l->w) {
        char detail[160];
        snprintf(detail, sizeof detail, "%dx%dx%d (layer %d) and %dx%dx%d (layer %d)", l->c,
                 l->h, l->w, a, c2, h2, w2, b);
        return reject(net, l, "residual add needs inputs of one shape, got ", detail);
    }
    l->in2 = b;
    l->oc = l->c, l->oh = l->h, l->ow = l->w;
    l->forward = dt_add_forward;
    l->backward = dt_add_backward;
    dt_add_setup(l);
    return append_layer(net, l);
}

// ---- finalize: layout, buffers, initialisation ----

// The stream of tensor t of the table: independent of every other tensor and of the device.
static uint64_t tensor_seed(uint64_t seed, int t) {
    return dt_mix64(seed ^ dt_mix64(0x7E45011000000000ull + (uint64_t)t));
}

// Standard normal number i of `stream` (Box–Muller on two counter-based uniforms).
static float normal_at(uint64_t stream, uint64_t i) {
    double u1 = 1.0 - (double)dt_uniform(stream, 2 * i);  // (0, 1]: log is finite
    double u2 = (double)dt_uniform(stream, 2 * i + 1);
    return (float)(sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2));
}

// Fill tensor t's initial values on the host:
//  conv weight: Kaiming normal, fan_out, gain sqrt(2) (He et al. 2015; torchvision ResNet):
//    std = sqrt(2 / (OC*KH*KW));
//  linear weight and bias: U(-1/sqrt(in), 1/sqrt(in)) (torch.nn.Linear's reset_parameters);
//  conv bias 0; bn gamma 1, beta 0, running mean 0, running var 1.
static void init_tensor(const dt_net *net, int t, float *host) {
    const dt_param *p = &net->params_table[t];
    const dt_layer *l = net->layers[p->layer];
    uint64_t stream = tensor_seed(net->cfg.seed, t);
    float fill = 0.0f;
    if (l->init_std > 0.0f && p->kind == DT_PARAM_WEIGHT) {  // GPT-2: N(0, 0.02^2), ...
        for (size_t i = 0; i < p->count; i++) host[i] = l->init_std * normal_at(stream, i);
        return;
    }
    switch (p->kind) {
    case DT_PARAM_WEIGHT:
        if (l->type == DT_LAYER_CONV) {
            double std = sqrt(2.0 / ((double)l->oc * l->kh * l->kw));
            for (size_t i = 0; i < p->count; i++) host[i] = (float)std * normal_at(stream, i);
        } else {
            float bound = 1.0f / sqrtf((float)dt_layer_in_size(l));
            for (size_t i = 0; i < p->count; i++)
                host[i] = bound * (2.0f * dt_uniform(stream, i) - 1.0f);
        }
        return;
    case DT_PARAM_BIAS:
        if (l->type == DT_LAYER_LINEAR && l->init_std <= 0.0f) {
            float bound = 1.0f / sqrtf((float)dt_layer_in_size(l));
            for (size_t i = 0; i < p->count; i++)
                host[i] = bound * (2.0f * dt_uniform(stream, i) - 1.0f);
            return;
        }
        fill = 0.0f;
        break;
    case DT_PARAM_BN_GAMMA: fill = 1.0f; break;
    case DT_PARAM_BN_BETA: fill = 0.0f; break;
    case DT_PARAM_RUNNING_MEAN: fill = 0.0f; break;
    case DT_PARAM_RUNNING_VAR: fill = 1.0f; break;
    case DT_PARAM_LN_GAMMA: fill = 1.0f; break;
    case DT_PARAM_LN_BETA: fill = 0.0f; break;
    }
    for (size_t i = 0; i < p->count; i++) host[i] = fill;
}

// Initialise every parameter, one tensor at a time through a host buffer as large as the
// largest tensor. The model device (sim/) holds no data, so nothing is computed for it: the
// simulator runs every rank in one process and must not pay 25M normals per rank.
static void init_params(dt_net *net) {
    dt_device *d = net->dev;
    if (d->name && strcmp(d->name, "model") == 0) return;
    size_t largest = 0;
    for (int t = 0; t < net->n_params; t++)
        if (net->params_table[t].count > largest) largest = net->params_table[t].count;
    float *host = mallocCheck(largest * sizeof(float));
    for (int t = 0; t < net->n_params; t++) {
        const dt_param *p = &net->params_table[t];
        init_tensor(net, t, host);
        d->from_host(d, net->params + p->offset, host, p->count * sizeof(float));
    }
    free(host);
}

static float *alloc_floats(dt_device *d, size_t n) {
    return d->alloc(d, (n ? n : 1) * sizeof(float));
}

int dt_net_finalize(dt_net *net, dt_error *err) {
    if (!net) return dt_fail(err, DT_EXIT_USAGE, "dt_net_finalize: no network given");
    if (net->build_err.code) {
        if (err) *err = net->build_err;
        return -1;
    }
    if (net->finalized)
        return dt_fail(err, DT_EXIT_USAGE, "model '%s': dt_net_finalize called twice",
                       net->model);
    if (net->n_layers == 0)
        return dt_fail(err, DT_EXIT_USAGE, "model '%s': the network has no layers",
                       net->model);

    // Running statistics go after every trainable tensor.
    for (int t = 0; t < net->n_params; t++)
        if (!net->params_table[t].trainable) net->params_table[t].offset += net->n_trainable;
    for (int i = 0; i < net->n_layers; i++) {
        dt_layer *l = net->layers[i];
        if (l->rm_off >= 0) l->rm_off += (ssize_t)net->n_trainable;
        if (l->rv_off >= 0) l->rv_off += (ssize_t)net->n_trainable;
    }

    dt_device *d = net->dev;
    size_t in_elems = (size_t)net->B * net->in_c * net->in_h * net->in_w;
    const dt_layer *last = net->layers[net->n_layers - 1];
    size_t rows = net->seq > 0 ? (size_t)net->seq : 1;  // loss rows per sample
    net->num_classes = (int)(dt_layer_out_size(last) / rows);  // K of the loss
    net->params = alloc_floats(d, net->n_total);
    net->grads = alloc_floats(d, net->n_trainable);
    net->input = alloc_floats(d, in_elems);
    net->dinput = alloc_floats(d, in_elems);
    net->labels = d->alloc(d, (size_t)net->B * rows * sizeof(int32_t));
    if (net->seq > 0) net->tokens = d->alloc(d, (size_t)net->B * rows * sizeof(int32_t));
    net->probs = alloc_floats(d, (size_t)net->B * dt_layer_out_size(last));
    net->workspace_floats = 0;
    for (int i = 0; i < net->n_layers; i++) {
        dt_layer *l = net->layers[i];
        if (l->aux_bytes) l->aux = d->alloc(d, l->aux_bytes);
        if (l->workspace_floats > net->workspace_floats)
            net->workspace_floats = l->workspace_floats;
    }
    dt_net_plan_buffers(net);  // out and dout, in place where possible (nn/net_plan.c)
    if (net->workspace_floats) net->workspace = alloc_floats(d, net->workspace_floats);
    if (net->amp != DT_AMP_FP32) dt_net_half_alloc(net);  // nn/net_half.c
    init_params(net);
    net->finalized = 1;
    return 0;
}

void dt_net_free(dt_net *net) {
    if (!net) return;
    dt_device *d = net->dev;
    float *bufs[] = {net->params, net->grads, net->input, net->dinput, net->probs,
                     net->workspace, net->params_lp, net->half_scratch[0],
                     net->half_scratch[1], net->half_scratch[2]};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) d->free(d, bufs[i]);
    if (net->params_bf16) d->free(d, net->params_bf16);
    if (net->tied_grad) d->free(d, net->tied_grad);
    if (net->labels) d->free(d, net->labels);
    if (net->tokens) d->free(d, net->tokens);
    for (int i = 0; i < net->n_layers; i++) {  // douts are shared (plan_douts): free once
        float *g = net->layers[i]->dout;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = net->layers[j]->dout == g;
        if (g && !seen) d->free(d, g);
        uint16_t *gh = net->layers[i]->dout_h;
        seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = net->layers[j]->dout_h == gh;
        if (gh && !seen) d->free(d, gh);
    }
    for (int i = 0; i < net->n_layers; i++) {
        dt_layer *l = net->layers[i];
        if (l->out && !l->inplace) d->free(d, l->out);  // in place: its input's
        if (l->out_h && !l->inplace) d->free(d, l->out_h);
        if (l->aux) d->free(d, l->aux);
        free(l);
    }
    free(net->layers);
    free(net->params_table);
    free(net);
}

const dt_param *dt_net_find_param(const dt_net *net, const char *name) {
    if (!net || !name) return NULL;
    for (int t = 0; t < net->n_params; t++)
        if (strcmp(net->params_table[t].name, name) == 0) return &net->params_table[t];
    return NULL;
}

size_t dt_net_count_trainable(const dt_net *net) { return net ? net->n_trainable : 0; }

// A layer's block: its name up to its first part of digits alone ("transformer.h.3" of
// "transformer.h.3.attn.c_attn"), written into key; 0 when no part is digits (no block).
static int block_key(const char *name, char *key, size_t n) {
    for (const char *p = name, *part = name;; p++) {
        if (*p != '.' && *p) continue;
        int digits = p > part;
        for (const char *q = part; q < p && digits; q++) digits = *q >= '0' && *q <= '9';
        if (digits) {
            snprintf(key, n, "%.*s", (int)(p - name), name);
            return 1;
        }
        if (!*p) return 0;
        part = p + 1;
    }
}

int dt_net_blocks(const dt_net *net, size_t *lo) {
    int n = 0;
    char prev[sizeof net->layers[0]->name] = "", key[sizeof prev];
    for (int i = 0; i < net->n_layers; i++) {
        const dt_layer *l = net->layers[i];
        if (!l->n_trainable) continue;
        int in_block = block_key(l->name, key, sizeof key);
        if (in_block && n > 0 && !strcmp(key, prev)) continue;  // the block's next layer
        snprintf(prev, sizeof prev, "%s", in_block ? key : "");
        lo[n++] = (size_t)l->w_off;
    }
    lo[n] = net->n_trainable;
    return n;
}

// ---- the builder's steps, for the sequence layers' constructors (nn/net_seq.c) ----
dt_layer *dt_net_layer_new(dt_net *net, dt_layer_type type, const char *name,
                           const char *kind, int in) {
    return new_layer(net, type, name, kind, in);
}
int dt_net_layer_reject(dt_net *net, dt_layer *l, const char *what, const char *detail) {
    return reject(net, l, what, detail);
}
int dt_net_layer_append(dt_net *net, dt_layer *l) { return append_layer(net, l); }
ssize_t dt_net_layer_param(dt_net *net, dt_layer *l, const char *suffix, dt_param_kind kind,
                           int ndim, int s0, int s1) {
    return add_param(net, l, suffix, kind, ndim, s0, s1, 0, 0);
}
