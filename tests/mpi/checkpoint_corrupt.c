// checkpoint_corrupt.c — a damaged checkpoint is refused, never half loaded (real/checkpoint.c,
// nn/safetensors.c). A resnet8 checkpoint with fresh random weights, momentum and position is
// written; then copies of it with one bit flipped (every bit of the 8-byte length, random
// bits of the JSON header and of the tensor data) and copies cut at random lengths are each
// loaded into a network and an optimizer that hold other values. Every load must fail with
// DT_EXIT_USAGE, name the file, and leave the network's parameters and the optimizer's
// momentum exactly as they were. The intact file loads and restores every value.
// usage: checkpoint_corrupt [DIR]    Prints "PASS checkpoint_corrupt".
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint.h"
#include "kernels.h"
#include "models.h"
#include "safetensors.h"

static unsigned char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*n);
    if (fread(b, 1, *n, f) != *n) *n = 0;
    fclose(f);
    return b;
}

static void spit(const char *path, const unsigned char *b, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b, 1, n, f) != n) abort();
    fclose(f);
}

typedef struct {
    dt_net *net;
    dt_optim *opt;
} model;

static model make(dt_device *d, uint64_t seed) {
    dt_model_config c = dt_model_config_default();
    c.batch = 2, c.in_c = 3, c.in_h = c.in_w = 16, c.num_classes = 4, c.seed = seed;
    dt_error err = {0};
    model m = {dt_model_create("resnet8", d, &c, &err), NULL};
    if (!m.net) fprintf(stderr, "model: %s\n", err.msg), exit(1);
    dt_optim_config oc = dt_optim_config_default(DT_OPT_SGD);
    m.opt = dt_optim_create(m.net, &oc, &err);
    for (size_t i = 0; i < m.opt->n; i++)  // momentum: anything but zero
        m.opt->velocity[i] = dt_uniform(seed, i) - 0.5f;
    return m;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
    if (getenv("DT_TEST_SEED")) seed = strtoull(getenv("DT_TEST_SEED"), NULL, 10);
    printf("# seed %llu (replay with DT_TEST_SEED=%llu)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    dt_device *d = dt_device_cpu_create(1);
    model a = make(d, seed), b = make(d, seed + 1);
    char good[600], bad[600];
    snprintf(good, sizeof good, "%s/ck-good-%d.safetensors", dir, (int)getpid());
    snprintf(bad, sizeof bad, "%s/ck-bad-%d.safetensors", dir, (int)getpid());
    dt_train_state st = {.epoch = 3, .step = 1234 + (int64_t)(seed % 1000), .seed = (int64_t)seed,
                         .global_batch = 64}, got;
    dt_error err = {0};
    if (dt_checkpoint_save(good, a.net, a.opt, &st, &err)) fprintf(stderr, "%s\n", err.msg), exit(1);
    size_t n = 0;
    unsigned char *orig = slurp(good, &n);
    uint64_t hlen = 0;
    for (int k = 0; k < 8; k++) hlen |= (uint64_t)orig[k] << (8 * k);
    size_t nb = b.net->n_total, nv = b.opt->n;
    float *before_p = malloc(nb * 4), *before_v = malloc(nv * 4);
    memcpy(before_p, b.net->params, nb * 4);
    memcpy(before_v, b.opt->velocity, nv * 4);
    uint64_t r = seed;
    int tries = 0, failures = 0;
    for (int t = 0; t < 64 + 1200 + 300 + 60; t++) {
        unsigned char *c = malloc(n);
        memcpy(c, orig, n);
        size_t len = n, at = 0;
        int bit = 0;
        r = dt_mix64(r);
        if (t < 64) at = (size_t)t / 8, bit = t % 8;  // every bit of the header length
        else if (t < 64 + 1200) at = 8 + r % hlen, bit = (int)(r >> 40) % 8;  // the JSON
        else if (t < 64 + 1500) at = 8 + hlen + r % (n - 8 - hlen), bit = (int)(r >> 40) % 8;
        else len = r % n;  // cut short
        if (len == n) c[at] ^= (unsigned char)(1u << bit);
        spit(bad, c, len);
        free(c);
        dt_error_clear(&err);
        tries++;
        int rc = dt_checkpoint_load(bad, b.net, b.opt, &got, &err);
        const char *what = len < n ? "cut" : "flip";
        if (rc == 0) {
            printf("FAIL: %s at byte %zu bit %d (length %zu of %zu): accepted\n", what, at, bit,
                   len, n);
            if (len == n && at >= 8 && at < 8 + hlen)
                printf("#   the header around it: ...%.60s...\n", (const char *)orig + (at > 38 ? at - 30 : 8));
            failures++;
            memcpy(b.net->params, before_p, nb * 4);  // so later loads are judged alone
            memcpy(b.opt->velocity, before_v, nv * 4);
        } else if (err.code != DT_EXIT_USAGE || !strstr(err.msg, bad)) {
            printf("FAIL: %s at byte %zu bit %d: code %d, message '%s' (want %d naming the "
                   "file)\n", what, at, bit, err.code, err.msg, DT_EXIT_USAGE);
            failures++;
        } else if (memcmp(before_p, b.net->params, nb * 4) || memcmp(before_v, b.opt->velocity, nv * 4)) {
            printf("FAIL: %s at byte %zu bit %d: refused, but the network or optimizer changed\n",
                   what, at, bit);
            failures++;
        }
        if (t % 300 == 0) printf("# e.g. %s at byte %zu: %s\n", what, at, err.msg);
    }
    // the intact file restores everything
    dt_error_clear(&err);
    if (dt_checkpoint_load(good, b.net, b.opt, &got, &err) != 0) {
        printf("FAIL: the intact checkpoint was refused: %s\n", err.msg);
        failures++;
    } else if (memcmp(a.net->params, b.net->params, nb * 4) ||
               memcmp(a.opt->velocity, b.opt->velocity, nv * 4) || got.step != st.step ||
               got.epoch != st.epoch || got.seed != st.seed) {
        printf("FAIL: the intact checkpoint did not restore every value\n");
        failures++;
    }
    unlink(good);
    unlink(bad);
    printf("# %d damaged copies of a %zu-byte checkpoint (header %llu bytes): %d accepted or "
           "mishandled\n", tries, n, (unsigned long long)hlen, failures);
    if (!failures) printf("PASS checkpoint_corrupt\n");
    free(orig), free(before_p), free(before_v);
    dt_optim_free(a.opt), dt_optim_free(b.opt);
    dt_net_free(a.net), dt_net_free(b.net);
    d->destroy(d);
    return failures != 0;
}
