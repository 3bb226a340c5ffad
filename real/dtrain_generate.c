// dtrain_generate.c — text from a gpt model: `dtrain --generate N` (rank 0 loads --weights
// into a model of one sequence and samples) and `--sample-every N` while training, both
// through nn/gpt_sample.h's sampler with --prompt, --temperature, --top-k and --seed, in the
// model's tokens: bytes, or the BPE it was trained with (--tokenizer, or carried by --weights).
// Not here: the sampler and its loop (nn/gpt_sample.c), the model (nn/models_gpt.c).
#include <stdlib.h>
#include <string.h>

#include "dtrain.h"
#include "gpt_sample.h"
#include "models.h"
#include "safetensors.h"

static dt_sample_opts sample_opts(const dtrain_opts *o, uint64_t stream) {
    return (dt_sample_opts){.temperature = o->temperature, .top_k = o->top_k,
                            .seed = o->seed ^ (stream * 0xD1B54A32D192ED03ull)};
}

// The prompt as token ids (its bytes, or bpe's encoding), and n sampled after them: printed
// as text, or with --json one line {"prompt": [...], "tokens": [...], ...}; 0 or an error
static int sample_and_print(const dtrain_opts *o, dt_net *net, const dt_bpe *bpe, int n,
                            uint64_t stream, const char *label, dt_error *err) {
    size_t bytes = strlen(o->prompt);
    int32_t *prompt = malloc((bytes + 1) * sizeof *prompt), *out = malloc((size_t)n * sizeof *out);
    if (!prompt || !out) {
        free(prompt), free(out);
        return dt_fail(err, DT_EXIT_RUNTIME, "out of memory for a sample of %d tokens", n);
    }
    int np = (int)bytes;
    if (bpe) np = (int)dt_bpe_encode(bpe, (const uint8_t *)o->prompt, bytes, prompt);
    else
        for (int i = 0; i < np; i++) prompt[i] = (unsigned char)o->prompt[i];
    dt_sample_opts s = sample_opts(o, stream);
    int rc = dt_gpt_generate(net, prompt, np, n, &s, out, err);
    if (!rc && o->json && !label) {
        printf("{\"model\": \"%s\", \"tokenizer\": \"%s\", \"seed\": %llu, \"temperature\": %g, "
               "\"top_k\": %d, \"prompt\": [", o->model, bpe ? "bpe" : "bytes",
               (unsigned long long)o->seed, o->temperature, o->top_k);
        for (int i = 0; i < np; i++) printf("%s%d", i ? ", " : "", (int)prompt[i]);
        printf("], \"tokens\": [");
        for (int i = 0; i < n; i++) printf("%s%d", i ? ", " : "", (int)out[i]);
        printf("]}\n");
    } else if (!rc) {
        if (label) printf("%s\n", label);
        fwrite(o->prompt, 1, bytes, stdout);
        for (int i = 0; i < n; i++) {
            int len = 1;
            const uint8_t *tok = bpe ? dt_bpe_token(bpe, out[i], &len) : NULL;
            if (tok) fwrite(tok, 1, (size_t)len, stdout);
            else putchar(out[i] < 256 ? out[i] : '?');  // bytes
        }
        printf("%s", label ? "\n---\n" : "\n");
    }
    fflush(stdout);
    free(prompt), free(out);
    return rc;
}

int dtrain_generate(const dtrain_opts *o, int rank) {
    if (rank != 0) return 0;  // one sequence: nothing to share
    dt_error err = {0};
    dt_device *dev = NULL;
    dt_bpe *bpe = NULL;
    char desc[256];
    if (dtrain_tokenizer_of(o, &bpe, &err)) {
        fprintf(stderr, "dtrain: --generate %s %s: %s\n", o->tokenizer[0] ? "--tokenizer"
                : "--weights", o->tokenizer[0] ? o->tokenizer : o->weights, err.msg);
        return 2;
    }
    if (dtrain_make_device(o, o->threads ? o->threads : 1, &dev, desc, sizeof desc, &err)) {
        fprintf(stderr, "dtrain: %s\n", err.msg);
        dt_bpe_free(bpe);
        return 2;
    }
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = 1, cfg.seed = o->seed, cfg.seq_len = dtrain_text_seq_len(o);
    cfg.vocab = bpe ? dt_bpe_vocab(bpe) : 0;
    dt_net *net = dt_model_create(o->model, dev, &cfg, &err);
    dt_weights_opts wo = {1, 0, 0};  // strict, as --weights when training
    int rc = net ? dt_weights_load_path(net, o->weights, &wo, &err) : 1;
    if (rc && net && strstr(err.msg, "'transformer.wte.weight' has shape")) {
        size_t len = strlen(err.msg);
        snprintf(err.msg + len, sizeof err.msg - len, " (the tokenizer has %d tokens%s)",
                 cfg.vocab ? cfg.vocab : 256, bpe ? "" : ": bytes; --tokenizer DIR names a BPE");
    }
    if (!rc) rc = sample_and_print(o, net, bpe, o->generate, 0, NULL, &err);
    if (rc) fprintf(stderr, "dtrain: --generate --weights %s: %s\n", o->weights, err.msg);
    dt_net_free(net);
    dt_bpe_free(bpe);
    dev->destroy(dev);
    return rc ? (err.code ? err.code : 2) : 0;
}

void dtrain_sample_now(const dtrain_opts *o, dt_net *net, const dt_bpe *bpe, int64_t step) {
    char label[64];
    snprintf(label, sizeof label, "--- sample after step %lld:", (long long)step);
    dt_error err = {0};
    if (sample_and_print(o, net, bpe, o->sample_tokens, (uint64_t)step, label, &err))
        fprintf(stderr, "dtrain: --sample-every: %s\n", err.msg);
}
