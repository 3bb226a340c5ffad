// safetensors_hf.c — the gpt models' weights in Hugging Face's GPT-2 layout: a directory
// with model.safetensors and config.json that transformers.GPT2LMHeadModel.from_pretrained
// loads with no code (as llm.c's export_hf.py and nanoGPT's from_pretrained move weights),
// and the same directory read back. The names are already GPT-2's (transformer.h.N.attn.
// c_attn.weight, ...); what differs is the four linear weights of each block, which GPT-2
// keeps in a Conv1D module as (in, out) where nn.Linear (dtlab) keeps (out, in).
// Not here: the safetensors format (nn/safetensors.c), the plain layout (safetensors_weights.c).
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "bpe.h"
#include "json.h"
#include "models.h"
#include "safetensors.h"

int dt_weights_is_conv1d(const char *name) {
    // characters, not pointers: no relocation, so nothing writable in a PIC build
    static const char tails[][24] = {".attn.c_attn.weight", ".attn.c_proj.weight",
                                     ".mlp.c_fc.weight", ".mlp.c_proj.weight"};
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof tails / sizeof *tails; i++) {
        size_t k = strlen(tails[i]);
        if (n > k && !strcmp(name + n - k, tails[i])) return 1;
    }
    return 0;
}

// The sizes config.json states, read off the model: layers (the largest N of
// transformer.h.N. plus one), width and vocabulary (wte), positions (wpe), heads (the
// registered shape)
typedef struct { int layers, width, heads, positions, vocab; } hf_sizes;

static int sizes_of(const dt_net *net, hf_sizes *z, dt_error *err) {
    const dt_gpt_shape *g = dt_gpt_find(net->model);
    memset(z, 0, sizeof *z);
    for (int i = 0; g && i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        int l;
        if (!strcmp(p->name, "transformer.wte.weight"))
            z->vocab = p->shape[0], z->width = p->shape[1];
        if (!strcmp(p->name, "transformer.wpe.weight")) z->positions = p->shape[0];
        if (sscanf(p->name, "transformer.h.%d.", &l) == 1 && l + 1 > z->layers) z->layers = l + 1;
    }
    if (!g || !z->vocab || !z->positions || !z->layers)
        return dt_fail(err, DT_EXIT_USAGE, "Hugging Face's GPT-2 layout is for the gpt models "
                       "(--model gpt2-tiny, ...), not %s", net->model[0] ? net->model : "?");
    z->heads = g->heads;
    return 0;
}

static int write_config(const char *path, const hf_sizes *z, int bpe, dt_error *err) {
    dt_atomic_file a;
    if (dt_atomic_open(&a, path, "config.json", err)) return -1;
    fprintf(a.f, "{\n  \"architectures\": [\"GPT2LMHeadModel\"],\n  \"model_type\": \"gpt2\",\n"
            "  \"vocab_size\": %d,\n  \"n_positions\": %d,\n  \"n_ctx\": %d,\n"
            "  \"n_embd\": %d,\n  \"n_layer\": %d,\n  \"n_head\": %d,\n  \"n_inner\": null,\n"
            "  \"activation_function\": \"gelu_new\",\n  \"layer_norm_epsilon\": 1e-05,\n"
            "  \"resid_pdrop\": 0.0,\n  \"embd_pdrop\": 0.0,\n  \"attn_pdrop\": 0.0,\n"
            "  \"initializer_range\": 0.02,\n  \"scale_attn_weights\": true,\n"
            "  \"tie_word_embeddings\": true,\n  \"bos_token_id\": null,\n"
            "  \"eos_token_id\": null,\n  \"torch_dtype\": \"float32\",\n"
            "  \"dtlab_tokens\": \"%s\"\n}\n",
            z->vocab, z->positions, z->positions, z->width, z->layers, z->heads,
            bpe ? "byte-level BPE: vocab.json and merges.txt in this directory"
                : "bytes: token id t is the byte t");
    if (dt_atomic_finish(&a, err)) return -1;
    return dt_atomic_commit(&a, err);
}

int dt_weights_save_hf(const dt_net *net, const char *dir, const dt_bpe *bpe, dt_error *err) {
    hf_sizes z;
    if (sizes_of(net, &z, err)) return -1;
    if (mkdir(dir, 0777) && errno != EEXIST)
        return dt_fail(err, DT_EXIT_USAGE, "%.300s: cannot make the directory: %s", dir,
                       strerror(errno));
    if (bpe && dt_bpe_vocab(bpe) != z.vocab)
        return dt_fail(err, DT_EXIT_RUNTIME, "%.300s: the tokenizer has %d tokens, the model "
                       "%d", dir, dt_bpe_vocab(bpe), z.vocab);
    if (bpe && dt_bpe_save_dir(bpe, dir, err)) return -1;
    static const char stale[][24] = {"vocab.json", "merges.txt", "tokenizer_config.json"};
    char path[4096];
    for (size_t i = 0; !bpe && i < sizeof stale / sizeof *stale; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, stale[i]);
        unlink(path);  // an earlier run's tokenizer: not this model's
    }
    float *host = mallocCheck(net->n_total * sizeof(float));
    net->dev->to_host(net->dev, host, net->params, net->n_total * sizeof(float));
    float *flip = mallocCheck(net->n_total * sizeof(float));  // the Conv1D copies
    dt_st_writer *w = dt_st_writer_new();
    dt_st_add_metadata(w, "format", "pt");  // from_pretrained refuses a file without it
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        int64_t shape[4];
        for (int d = 0; d < p->ndim; d++) shape[d] = p->shape[d];
        const float *src = host + p->offset;
        if (p->ndim == 2 && dt_weights_is_conv1d(p->name)) {  // (out, in) -> (in, out)
            int out = p->shape[0], in = p->shape[1];
            for (int o = 0; o < out; o++)
                for (int k = 0; k < in; k++)
                    flip[p->offset + (size_t)k * out + o] = src[(size_t)o * in + k];
            shape[0] = in, shape[1] = out, src = flip + p->offset;
        }
        dt_st_add(w, p->name, DT_ST_F32, p->ndim, shape, src);
    }
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    int rc = dt_st_write(w, path, err);
    dt_st_writer_free(w);
    free(host), free(flip);
    snprintf(path, sizeof path, "%s/config.json", dir);
    return rc ? rc : write_config(path, &z, bpe != NULL, err);
}

// DIR/config.json against the model: every size and the math it names
static int check_config(const char *path, const hf_sizes *z, dt_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) return dt_fail(err, DT_EXIT_USAGE, "%.300s: cannot open: %s (a Hugging Face "
                           "directory holds config.json beside model.safetensors)", path,
                           strerror(errno));
    char *text = mallocCheck(1 << 20);
    size_t n = fread(text, 1, 1 << 20, f);
    int too_long = !feof(f);
    fclose(f);
    char msg[160];
    dt_json *j = too_long ? NULL : dt_json_parse_flags(text, n, DT_JSON_REALS, msg, sizeof msg);
    free(text);
    if (too_long) return dt_fail(err, DT_EXIT_USAGE, "%.300s: over 1 MiB, not a config", path);
    if (!j || j->type != DT_JSON_OBJECT) {
        dt_json_free(j);
        return dt_fail(err, DT_EXIT_USAGE, "%.300s: not a JSON object (%s)", path,
                       j ? "another value" : msg);
    }
    const dt_json *t = dt_json_get(j, "model_type"), *act = dt_json_get(j, "activation_function"),
                  *eps = dt_json_get(j, "layer_norm_epsilon");
    struct { const char *key; int want; } ints[] = {
        {"n_embd", z->width}, {"n_layer", z->layers}, {"n_head", z->heads},
        {"vocab_size", z->vocab}, {"n_positions", z->positions}};
    int rc = 0;
    if (!t || t->type != DT_JSON_STRING || strcmp(t->s, "gpt2"))
        rc = dt_fail(err, DT_EXIT_USAGE, "%.300s: model_type is not \"gpt2\"", path);
    for (size_t i = 0; !rc && i < sizeof ints / sizeof *ints; i++) {
        const dt_json *v = dt_json_get(j, ints[i].key);
        if (!v || v->type != DT_JSON_INT || v->i != ints[i].want)
            rc = dt_fail(err, DT_EXIT_USAGE, "%.300s: %s is %lld, the model has %d", path,
                         ints[i].key, v && v->type == DT_JSON_INT ? (long long)v->i : -1LL,
                         ints[i].want);
    }
    if (!rc && act && (act->type != DT_JSON_STRING ||
                       (strcmp(act->s, "gelu_new") && strcmp(act->s, "gelu_pytorch_tanh"))))
        rc = dt_fail(err, DT_EXIT_USAGE, "%.300s: activation_function %s: dtlab's GELU is the "
                     "tanh approximation (gelu_new)", path,
                     act->type == DT_JSON_STRING ? act->s : "(not a string)");
    if (!rc && eps && ((eps->type != DT_JSON_REAL && eps->type != DT_JSON_INT) ||
                       fabs(eps->d - 1e-5) > 1e-12))
        rc = dt_fail(err, DT_EXIT_USAGE, "%.300s: layer_norm_epsilon %g: dtlab's layer norm "
                     "uses 1e-5", path, eps->d);
    dt_json_free(j);
    return rc ? -1 : 0;
}

int dt_weights_load_path(dt_net *net, const char *path, const dt_weights_opts *o,
                         dt_error *err) {
    struct stat st;
    if (stat(path, &st) || !S_ISDIR(st.st_mode)) return dt_weights_load_opts(net, path, o, err);
    hf_sizes z;
    if (sizes_of(net, &z, err)) return -1;
    char file[4096];
    snprintf(file, sizeof file, "%s/config.json", path);
    if (check_config(file, &z, err)) return -1;
    snprintf(file, sizeof file, "%s/model.safetensors", path);
    dt_weights_opts hf = o ? *o : (dt_weights_opts){0, 0, 0};
    hf.conv1d = 1;
    hf.strict = 0;  // older files keep buffers (attn.bias, attn.masked_bias) and lm_head
    return dt_weights_load_opts(net, file, &hf, err);
}
