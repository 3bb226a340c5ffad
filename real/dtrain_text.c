// dtrain_text.c — dtrain's language-model path: the gpt models (nn/models_gpt.c) trained
// on text (nn/data_text.c: bytes, or byte-level BPE, nn/bpe.h) through the same loader,
// sharded shuffle and trainer as images; here are the pieces that differ: the corpus a
// --data names and its tokenizer, a batch of windows turned into token ids and targets, and
// the validation loss.
// Not here: the step (nn/train.c dt_train_step_tokens), the model.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dtrain.h"
#include "models.h"
#include "safetensors.h"

int dtrain_text_path(const dtrain_opts *o, char *path, size_t n) {
    const char *file = !strcmp(o->data, "fortunes") ? DT_FORTUNES_FILE
                       : !strcmp(o->data, "fortunes-all") ? DT_FORTUNES_DIR
                       : !strncmp(o->data, "text:", 5) ? o->data + 5
                       : !strncmp(o->data, "tokens:", 7) ? o->data + 7 : NULL;
    if (file && path) snprintf(path, n, "%s", file);
    return file != NULL;
}

int dtrain_text_seq_len(const dtrain_opts *o) {
    const dt_gpt_shape *s = dt_gpt_find(o->model);
    return o->seq_len > 0 ? o->seq_len : s ? s->context : 0;
}

// The validation split's bytes per token: the lengths of its tokens' bytes, averaged
static double bytes_per_token(const dt_bpe *bpe, const int32_t *ids, int64_t n) {
    double bytes = 0;
    for (int64_t i = 0; i < n; i++) {
        int len = 0;
        dt_bpe_token(bpe, ids[i], &len);
        bytes += len;
    }
    return n > 0 && bytes > 0 ? bytes / (double)n : 1.0;
}

// --data tokens:DIR: dttok prepare's shards, read once, and DIR's tokenizer
static int load_shards(const char *dir, int T, dt_dataset **train,
                       dt_dataset **val, dt_bpe **bpe, double *bpt, dt_error *err) {
    if (!(*bpe = dt_bpe_load_dir(dir, err))) return err->code ? err->code : DT_EXIT_USAGE;
    int V = dt_bpe_vocab(*bpe);
    char path[700];
    int64_t n[2] = {0, 0};
    int32_t *ids[2] = {NULL, NULL};
    for (int s = 0; s < 2; s++) {
        snprintf(path, sizeof path, "%s/%s", dir, s ? "val.bin" : "train.bin");
        if (!(ids[s] = dt_tokens_read(path, V, &n[s], err))) break;
        if (n[s] < T + 1) {
            dt_fail(err, DT_EXIT_USAGE, "%s: %lld tokens; a sequence of %d tokens needs %d "
                    "(a shorter --seq-len)", path, (long long)n[s], T, T + 1);
            break;
        }
    }
    if (!ids[0] || !ids[1] || err->code) {
        free(ids[0]), free(ids[1]);
        dt_bpe_free(*bpe), *bpe = NULL;
        return err->code ? err->code : DT_EXIT_USAGE;
    }
    *bpt = bytes_per_token(*bpe, ids[1], n[1]);
    *train = dt_dataset_tokens(dir, "train", ids[0], n[0], T, V);
    *val = dt_dataset_tokens(dir, "val", ids[1], n[1], T, V);
    return 0;
}

int dtrain_load_text(const dtrain_opts *o, dt_dataset **train, dt_dataset **val, dt_bpe **bpe,
                     double *bpt, dt_error *err) {
    char path[600];
    dtrain_text_path(o, path, sizeof path);
    const dt_gpt_shape *s = dt_gpt_find(o->model);
    int T = dtrain_text_seq_len(o);
    *bpe = NULL, *bpt = 1.0;
    int rc = 0;
    if (!strncmp(o->data, "tokens:", 7)) {
        rc = load_shards(path, T, train, val, bpe, bpt, err);
    } else if (o->tokenizer[0] && !(*bpe = dt_bpe_load_dir(o->tokenizer, err))) {
        rc = err->code ? err->code : DT_EXIT_USAGE;
    } else {
        dt_text_opts to = {.seq_len = T, .vocab = s ? s->vocab : 256,
                           .val_fraction = DTRAIN_VAL_FRACTION, .bpe = bpe,
                           .bpe_vocab = o->vocab};
        if (*bpe || o->vocab) to.vocab = *bpe ? dt_bpe_vocab(*bpe) : o->vocab;
        if (dt_dataset_text(path, &to, train, val, err)) {
            size_t len = strlen(err->msg);
            if (!strncmp(o->data, "fortunes", 8) && len + 120 < sizeof err->msg)
                snprintf(err->msg + len, sizeof err->msg - len, "; --data fortunes reads "
                         "Debian's fortunes-min package (apt-get install fortunes-min), or "
                         "give --data text:FILE");
            dt_bpe_free(*bpe), *bpe = NULL;
            return err->code ? err->code : DT_EXIT_USAGE;
        }
        if (*bpe) *bpt = to.val_bytes_per_token;
    }
    if (rc) return rc;
    if (!o->windows_fixed) dt_text_random_offsets(*train, 1);  // nanoGPT's random windows
    return 0;
}

int dtrain_tokenizer_of(const dtrain_opts *o, dt_bpe **bpe, dt_error *err) {
    *bpe = NULL;
    if (o->tokenizer[0]) return (*bpe = dt_bpe_load_dir(o->tokenizer, err)) ? 0 : -1;
    struct stat st;
    char path[600];
    snprintf(path, sizeof path, "%s/merges.txt", o->weights);
    if (!stat(o->weights, &st) && S_ISDIR(st.st_mode))  // Hugging Face's directory
        return stat(path, &st) ? 0 : (*bpe = dt_bpe_load_dir(o->weights, err)) ? 0 : -1;
    dt_st_file *f = dt_st_open(o->weights, err);
    if (!f) return -1;
    const char *merges = dt_st_metadata(f, DTRAIN_BPE_KEY);
    if (merges) *bpe = dt_bpe_from_merges(merges, strlen(merges), o->weights, err);
    dt_st_close(f);
    return merges && !*bpe ? -1 : 0;
}

void dtrain_text_batch(const dt_batch *b, int T, int32_t *tokens, int32_t *targets) {
    for (int i = 0; i < b->b; i++)
        dt_text_example_tokens(b->x + (size_t)i * (T + 1), T, tokens + (size_t)i * T,
                               targets + (size_t)i * T);
}

double dtrain_evaluate_text(dt_net *net, const dt_dataset *ds, MPI_Comm comm,
                            double *mean_loss, dt_error *err) {
    int rank, ranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    // every window once, in order, split over the ranks; the last batch may be short
    dt_loader_config lc = {.global_batch = net->B * ranks, .ranks = ranks, .rank = rank,
                           .seed = 0, .first_epoch = 0, .epochs = 1, .shuffle = 0,
                           .drop_last = 0, .queue = 2, .threads = 1};
    dt_loader *ld = dt_loader_create(ds, &lc, err);
    int failed = ld == NULL, T = net->seq, V = net->num_classes;
    size_t rows = (size_t)net->B * T;
    int32_t *tok = calloc(rows, sizeof(int32_t)), *tgt = calloc(rows, sizeof(int32_t));
    float *probs = malloc(rows * (size_t)V * sizeof(float));
    double sums[3] = {0, 0, 0};  // tokens predicted right, loss sum, tokens
    dt_batch b;
    int got = 0;
    while (!failed && (got = dt_loader_next(ld, &b, NULL, err)) == 1) {
        if (b.b == 0) continue;
        memset(tok, 0, rows * sizeof(int32_t));  // padding of a short batch, not counted
        memset(tgt, 0, rows * sizeof(int32_t));
        dtrain_text_batch(&b, T, tok, tgt);
        dt_net_set_tokens(net, tok, tgt);
        dt_net_forward(net, 0);
        dt_net_loss(net);
        net->dev->to_host(net->dev, probs, net->probs, rows * (size_t)V * sizeof(float));
        for (size_t r = 0; r < (size_t)b.b * T; r++) {
            const float *p = probs + r * V;
            int best = 0;
            for (int k = 1; k < V; k++)
                if (p[k] > p[best]) best = k;
            sums[0] += best == tgt[r];
            sums[1] += -log(fmax((double)p[tgt[r]], 1e-30));
            sums[2] += 1;
        }
    }
    if (!failed && got < 0) failed = 1;
    dt_loader_destroy(ld);
    free(tok), free(tgt), free(probs);
    int any_failed = failed;  // agree first, so that no rank waits in the sum below
    MPI_Allreduce(MPI_IN_PLACE, &any_failed, 1, MPI_INT, MPI_MAX, comm);
    if (any_failed) {
        if (!failed) dt_fail(err, DT_EXIT_RUNTIME, "validation failed on another rank");
        return -1;
    }
    MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, comm);
    if (mean_loss) *mean_loss = sums[2] > 0 ? sums[1] / sums[2] : 0;
    return sums[2] > 0 ? sums[0] / sums[2] : 0;
}
