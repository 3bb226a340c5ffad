// safetensors_weights.c — a network's weights as a safetensors file with torchvision's
// state_dict names (conv1.weight, layer1.0.bn1.running_mean, fc.bias, ...), so that
// torch.save(model.state_dict()) and safetensors.torch.save_file/load_file move weights
// between PyTorch and dtlab. Saving writes every parameter-table entry as F32 plus the
// "<bn>.num_batches_tracked" I64 scalar of each batchnorm; loading validates the whole file
// against the table before touching the network, so a bad file leaves it unchanged.
// Not here: optimizer state and training position (checkpoints, real/), the format itself.
#include <string.h>

#include "kernels.h"
#include "safetensors.h"

// "layer1.0.bn1.weight" -> "layer1.0.bn1.num_batches_tracked" (the module prefix of a
// batchnorm's gamma, as torch.nn.BatchNorm2d registers the buffer).
static void batches_tracked_name(const dt_param *gamma, char *out, size_t n) {
    const char *dot = strrchr(gamma->name, '.');
    int prefix = dot ? (int)(dot - gamma->name) : (int)strlen(gamma->name);
    snprintf(out, n, "%.*s.num_batches_tracked", prefix, gamma->name);
}

static int check_net(const dt_net *net, const char *path, dt_error *err) {
    if (!path || !*path) return dt_fail(err, DT_EXIT_USAGE, "weights: empty file name");
    if (!net || !net->dev || !net->params || !net->params_table) {
        return dt_fail(err, DT_EXIT_USAGE, "%.200s: the network is not finalized", path);
    }
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        DT_ASSERT(p->offset + p->count <= net->n_total);
        DT_ASSERT(p->ndim >= 0 && p->ndim <= 4);
        size_t count = 1;
        for (int d = 0; d < p->ndim; d++) count *= (size_t)p->shape[d];
        DT_ASSERT(count == p->count);
    }
    return 0;
}

void dt_weights_add(dt_st_writer *w, const dt_net *net, const float *params_host,
                    const int64_t *tracked) {
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        int64_t shape[4];
        for (int d = 0; d < p->ndim; d++) shape[d] = p->shape[d];
        dt_st_add(w, p->name, DT_ST_F32, p->ndim, shape, params_host + p->offset);
    }
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        if (p->kind != DT_PARAM_BN_GAMMA) continue;
        char name[128];
        batches_tracked_name(p, name, sizeof name);
        dt_st_add(w, name, DT_ST_I64, 0, NULL, tracked);  // a 0-dim tensor, as in PyTorch
    }
}

int dt_weights_save(const dt_net *net, const char *path, dt_error *err) {
    return dt_weights_save_meta(net, path, NULL, NULL, err);
}

int dt_weights_save_meta(const dt_net *net, const char *path, const char *key,
                         const char *value, dt_error *err) {
    if (check_net(net, path, err)) return -1;
    dt_device *dev = net->dev;
    float *host = mallocCheck(net->n_total * sizeof(float));
    dev->to_host(dev, host, net->params, net->n_total * sizeof(float));
    int64_t tracked = net->bn_batches_tracked;

    dt_st_writer *w = dt_st_writer_new();
    dt_st_add_metadata(w, "format", "pt");  // as safetensors.torch.save_file writes it
    if (net->model[0]) dt_st_add_metadata(w, "model", net->model);
    if (key && value) dt_st_add_metadata(w, key, value);
    dt_weights_add(w, net, host, &tracked);
    int rc = dt_st_write(w, path, err);
    dt_st_writer_free(w);
    free(host);
    return rc;
}

static void format_shape(char *buf, size_t n, int ndim, const int64_t *shape) {
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int d = 0; d < ndim && k < n; d++) {
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? "," : "", (long long)shape[d]);
    }
    if (k < n) snprintf(buf + k, n - k, "]");
}

int dt_weights_head(const dt_net *net) {
    int i = net->n_params;
    while (i > 0 && net->params_table[i - 1].layer == net->params_table[net->n_params - 1].layer)
        i--;
    return i;
}

// Whether entry p is read transposed: a Conv1D weight of Hugging Face's layout
static int transposed(const dt_param *p, int conv1d) {
    return conv1d && p->ndim == 2 && dt_weights_is_conv1d(p->name);
}

// Pass 1: every table entry below `upto` is present with a float dtype and the model's shape
// (its transpose for a Conv1D weight when conv1d).
static int validate_params(const dt_net *net, const dt_st_file *f, const char *path, int upto,
                           int conv1d, dt_error *err) {
    for (int i = 0; i < upto; i++) {
        const dt_param *p = &net->params_table[i];
        const dt_st_tensor *t = dt_st_find(f, p->name);
        if (!t) {
            return dt_fail(err, DT_EXIT_USAGE, "%.200s: tensor '%s' is missing (model %s needs "
                           "it)", path, p->name, net->model[0] ? net->model : "?");
        }
        if (t->dtype != DT_ST_F32 && t->dtype != DT_ST_F16 && t->dtype != DT_ST_BF16) {
            return dt_fail(err, DT_EXIT_USAGE, "%.200s: tensor '%s' has dtype %s, expected "
                           "F32, F16 or BF16", path, p->name, dt_st_dtype_name(t->dtype));
        }
        int64_t want[4];
        int same = t->ndim == p->ndim, tr = transposed(p, conv1d);
        for (int d = 0; d < p->ndim; d++) {
            want[d] = p->shape[tr ? 1 - d : d];
            if (same && t->shape[d] != want[d]) same = 0;
        }
        if (!same) {
            char have_s[128], want_s[128];
            format_shape(have_s, sizeof have_s, t->ndim, t->shape);
            format_shape(want_s, sizeof want_s, p->ndim, want);
            int flipped = t->ndim == 2 && p->ndim == 2 && t->shape[0] == want[1] &&
                          t->shape[1] == want[0];
            const char *hint = !flipped ? ""
                : conv1d ? " (its transpose: this file holds nn.Linear's (out, in), dtlab's "
                           "own layout; give dtrain --weights the .safetensors file itself, "
                           "not a Hugging Face directory)"
                         : " (its transpose: this file holds Hugging Face's GPT-2 Conv1D "
                           "layout (in, out); give --weights the directory that "
                           "save_pretrained wrote, with its config.json, which is read in "
                           "that layout)";
            return dt_fail(err, DT_EXIT_USAGE, "%.200s: tensor '%s' has shape %s, model "
                           "expects %s%s", path, p->name, have_s, want_s, hint);
        }
    }
    return 0;
}

// Pass 1, batchnorm counters: each num_batches_tracked present must be one integer >= 0.
// *value is the first one found, or -1 if none is present.
static int validate_tracked(const dt_net *net, const dt_st_file *f, const char *path,
                            int64_t *value, dt_error *err) {
    *value = -1;
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        if (p->kind != DT_PARAM_BN_GAMMA) continue;
        char name[128];
        batches_tracked_name(p, name, sizeof name);
        const dt_st_tensor *t = dt_st_find(f, name);
        if (!t) continue;
        int64_t v = -1;
        size_t esize = dt_st_dtype_size(t->dtype);
        if ((t->dtype == DT_ST_I64 || t->dtype == DT_ST_I32) && t->nbytes == esize) {
            if (t->dtype == DT_ST_I64) {
                memcpy(&v, t->data, 8);
            } else {
                int32_t v32;
                memcpy(&v32, t->data, 4);
                v = v32;
            }
        } else {
            return dt_fail(err, DT_EXIT_USAGE, "%.200s: tensor '%s' must be one I64 (or I32), "
                           "found dtype %s with %zu bytes", path, name,
                           dt_st_dtype_name(t->dtype), t->nbytes);
        }
        if (v < 0) {
            return dt_fail(err, DT_EXIT_USAGE, "%.200s: tensor '%s' is %lld, expected >= 0",
                           path, name, (long long)v);
        }
        if (*value < 0) *value = v;
    }
    return 0;
}

// bfloat16 is the top half of an IEEE binary32 (exactly representable: no rounding).
static float bf16_to_f32(uint16_t h) {
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

// t's elements as fp32 into dst (t->data may be unaligned: read through memcpy).
static void convert_to_f32(const dt_st_tensor *t, float *dst, size_t count) {
    const unsigned char *src = t->data;
    if (t->dtype == DT_ST_F32) {
        memcpy(dst, src, count * sizeof(float));
        return;
    }
    for (size_t i = 0; i < count; i++) {
        uint16_t h;
        memcpy(&h, src + 2 * i, 2);
        dst[i] = t->dtype == DT_ST_F16 ? dt_f16_to_f32(h) : bf16_to_f32(h);
    }
}

// strict: every tensor of the file is a table entry or a batchnorm's num_batches_tracked.
static int validate_known(const dt_net *net, const dt_st_file *f, const char *path,
                          dt_error *err) {
    int unknown = 0;
    const char *first = NULL;
    for (int k = 0; k < dt_st_count(f); k++) {
        const char *name = dt_st_get(f, k)->name;
        int known = 0;
        for (int i = 0; i < net->n_params && !known; i++) {
            const dt_param *p = &net->params_table[i];
            char nbt[128];
            known = !strcmp(name, p->name);
            if (!known && p->kind == DT_PARAM_BN_GAMMA) {
                batches_tracked_name(p, nbt, sizeof nbt);
                known = !strcmp(name, nbt);
            }
        }
        if (!known && !unknown++) first = name;
    }
    if (!unknown) return 0;
    return dt_fail(err, DT_EXIT_USAGE, "%.200s: tensor '%s' is not part of model %s (%d "
                   "unexpected tensor%s: a file for another model? names are torchvision's "
                   "state_dict names)", path, first, net->model[0] ? net->model : "?", unknown,
                   unknown == 1 ? "" : "s");
}

int dt_weights_load(dt_net *net, const char *path, dt_error *err) {
    dt_weights_opts o = {0, 0, 0};
    return dt_weights_load_opts(net, path, &o, err);
}

int dt_weights_load_opts(dt_net *net, const char *path, const dt_weights_opts *o,
                         dt_error *err) {
    if (check_net(net, path, err)) return -1;
    dt_st_file *f = dt_st_open(path, err);
    if (!f) return -1;
    int64_t tracked;
    int upto = o && o->new_head ? dt_weights_head(net) : net->n_params;
    if ((o && o->strict && validate_known(net, f, path, err)) ||
        validate_params(net, f, path, upto, o && o->conv1d, err) ||
        validate_tracked(net, f, path, &tracked, err)) {
        dt_st_close(f);
        return -1;
    }
    // Pass 2: only now is the network touched. Start from its current parameters so that
    // any element not covered by the table keeps its value.
    dt_device *dev = net->dev;
    size_t bytes = net->n_total * sizeof(float);
    float *host = mallocCheck(bytes);
    dev->to_host(dev, host, net->params, bytes);
    for (int i = 0; i < upto; i++) {
        const dt_param *p = &net->params_table[i];
        const dt_st_tensor *t = dt_st_find(f, p->name);
        DT_ASSERT(t && t->nbytes == p->count * dt_st_dtype_size(t->dtype));
        convert_to_f32(t, host + p->offset, p->count);
        if (transposed(p, o && o->conv1d)) {  // (in, out) -> (out, in)
            int rows = p->shape[1], cols = p->shape[0];  // the file's
            float *tmp = mallocCheck(p->count * sizeof(float));
            for (int r = 0; r < rows; r++)
                for (int c = 0; c < cols; c++)
                    tmp[(size_t)c * rows + r] = host[p->offset + (size_t)r * cols + c];
            memcpy(host + p->offset, tmp, p->count * sizeof(float));
            free(tmp);
        }
    }
    dev->from_host(dev, net->params, host, bytes);
    if (dev->sync) dev->sync(dev);
    if (tracked >= 0) net->bn_batches_tracked = (long)tracked;
    free(host);
    dt_st_close(f);
    return 0;
}
