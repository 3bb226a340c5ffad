// checkpoint.c — see checkpoint.h. The file layout:
//   <torchvision names>                 F32   weights and running statistics (dt_weights_save)
//   <bn>.num_batches_tracked            I64   scalar
//   optimizer.velocity.<name>           F32   momentum buffer of each trainable tensor
//                                       (AdamW, LAMB: the first moment m)
//   optimizer.second.<name>             F32   AdamW, LAMB: the second moment v
//   optimizer.step                      I64   updates applied (Adam's bias corrections)
//   trainer.{epoch,step,seed,global_batch}   I64 scalars (each rank's dropout stream is a
//                                       function of seed, rank and step: dtrain replays it)
//   trainer.loss_scale                  F32 scalar, fp16 runs only, with the I64 scalars
//   trainer.{loss_scale_good_steps,skipped_steps}   (the dynamic loss scaler's state)
//   __metadata__ {"format": "dtlab-checkpoint-2", "model": "<name>",
//                 "optimizer": "sgd|lars|adamw|lamb", "dtlab.data_crc32": "<8 hex digits>"}
// "optimizer" and optimizer.step come together; a file with neither (written before AdamW's
// state was saved: SGD's or LARS's momentum) is read with the step from trainer.step.
// Format 2 requires the data's CRC-32 (nn/safetensors.h), which the reader checks; format 1
// (before 2026-11-25) had none and is still read. A file with any tensor this table does not
// name is refused: a checkpoint is ours, so a name we do not know is a damaged one.
#include "checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "safetensors.h"

#define VEL_PREFIX "optimizer.velocity."
#define SECOND_PREFIX "optimizer.second."
#define OSTEP_KEY "optimizer.step"

static const char *const STATE_KEYS[] = {"trainer.epoch", "trainer.step", "trainer.seed",
                                         "trainer.global_batch"};
enum { N_STATE = 4 };
// the fp16 loss scaler's state, present only when a run scaled its loss
#define SCALE_KEY "trainer.loss_scale"
static const char *const SCALER_KEYS[] = {"trainer.loss_scale_good_steps",
                                          "trainer.skipped_steps"};

static const char *const OPT_NAMES[] = {"sgd", "lars", "adamw", "lamb"};
static int adam_kind(dt_opt_kind k) { return k == DT_OPT_ADAMW || k == DT_OPT_LAMB; }

void dt_optim_state_alloc(dt_optim_state *os, const dt_net *net, dt_opt_kind kind) {
    size_t n = net->n_trainable ? net->n_trainable : 1;
    os->kind = kind;
    os->m = callocCheck(n, sizeof(float));
    os->v = adam_kind(kind) ? callocCheck(n, sizeof(float)) : NULL;
    os->step = 0;
}

void dt_optim_state_free(dt_optim_state *os) {
    free(os->m), free(os->v);
    os->m = os->v = NULL;
}

// Each trainable tensor's part of x under PREFIX<name>.
static void add_per_tensor(dt_st_writer *w, const dt_net *net, const char *prefix,
                           const float *x) {
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        if (!p->trainable) continue;
        int64_t shape[4];
        for (int k = 0; k < p->ndim; k++) shape[k] = p->shape[k];
        char name[160];
        snprintf(name, sizeof name, "%s%s", prefix, p->name);
        dt_st_add(w, name, DT_ST_F32, p->ndim, shape, x + p->offset);
    }
}

int dt_checkpoint_save_state(const char *path, const dt_net *net, const dt_optim_state *os,
                             const dt_train_state *st, dt_error *err) {
    dt_device *d = net->dev;
    // one writer, one atomic file: the weights as dt_weights_save names them, then the rest
    float *params = mallocCheck(net->n_total * sizeof(float));
    d->to_host(d, params, net->params, net->n_total * sizeof(float));
    int64_t nbt = net->bn_batches_tracked;
    int64_t state[N_STATE] = {st->epoch, st->step, st->seed, st->global_batch};
    int64_t ostep = os->step;
    dt_st_writer *w = dt_st_writer_new();
    dt_weights_add(w, net, params, &nbt);
    add_per_tensor(w, net, VEL_PREFIX, os->m);
    if (adam_kind(os->kind)) add_per_tensor(w, net, SECOND_PREFIX, os->v);
    dt_st_add(w, OSTEP_KEY, DT_ST_I64, 0, NULL, &ostep);
    for (int k = 0; k < N_STATE; k++) dt_st_add(w, STATE_KEYS[k], DT_ST_I64, 0, NULL, &state[k]);
    int64_t scaler[2] = {st->loss_scale_good_steps, st->skipped_steps};
    float scale = st->loss_scale;
    if (scale > 0) {
        dt_st_add(w, SCALE_KEY, DT_ST_F32, 0, NULL, &scale);
        for (int k = 0; k < 2; k++) dt_st_add(w, SCALER_KEYS[k], DT_ST_I64, 0, NULL, &scaler[k]);
    }
    dt_st_add_metadata(w, "format", "dtlab-checkpoint-2");
    dt_st_add_metadata(w, "model", net->model);
    dt_st_add_metadata(w, "optimizer", OPT_NAMES[os->kind]);
    int rc = dt_st_write(w, path, err);
    dt_st_writer_free(w);
    free(params);
    return rc;
}

int dt_checkpoint_save(const char *path, const dt_net *net, const dt_optim *opt,
                       const dt_train_state *st, dt_error *err) {
    DT_ASSERT(!opt->sharded && opt->n == net->n_trainable);
    dt_device *d = net->dev;
    dt_optim_state os;
    dt_optim_state_alloc(&os, net, opt->cfg.kind);
    if (opt->n) d->to_host(d, os.m, opt->velocity, opt->n * sizeof(float));
    if (opt->n && os.v) d->to_host(d, os.v, opt->second, opt->n * sizeof(float));
    os.step = opt->step;
    int rc = dt_checkpoint_save_state(path, net, &os, st, err);
    dt_optim_state_free(&os);
    return rc;
}

// Check one F32 tensor of the file against a table entry's shape.
static const float *find_f32(const dt_st_file *f, const char *path, const char *name,
                             const dt_param *p, dt_error *err) {
    const dt_st_tensor *t = dt_st_find(f, name);
    if (!t) {
        dt_fail(err, DT_EXIT_USAGE, "checkpoint %s: tensor '%s' is missing", path, name);
        return NULL;
    }
    int ok = t->dtype == DT_ST_F32 && t->ndim == p->ndim;
    for (int k = 0; ok && k < p->ndim; k++) ok = t->shape[k] == p->shape[k];
    if (!ok) {
        dt_fail(err, DT_EXIT_USAGE, "checkpoint %s: tensor '%s' is not F32 of the model's shape",
                path, name);
        return NULL;
    }
    return (const float *)t->data;
}

// Whether the layout above names this tensor for this network.
static int known_tensor(const dt_net *net, dt_opt_kind kind, const char *name) {
    for (int k = 0; k < N_STATE; k++)
        if (strcmp(name, STATE_KEYS[k]) == 0) return 1;
    if (strcmp(name, SCALE_KEY) == 0 || strcmp(name, SCALER_KEYS[0]) == 0 ||
        strcmp(name, SCALER_KEYS[1]) == 0 || strcmp(name, OSTEP_KEY) == 0)
        return 1;
    size_t nv = strlen(VEL_PREFIX), len = strlen(name), nt = strlen(".num_batches_tracked");
    size_t ns = strlen(SECOND_PREFIX);
    int vel = strncmp(name, VEL_PREFIX, nv) == 0;
    int sec = adam_kind(kind) && strncmp(name, SECOND_PREFIX, ns) == 0;
    for (int i = 0; i < net->n_params; i++) {
        const char *p = net->params_table[i].name;
        if (strcmp(name, p) == 0) return 1;
        if (vel && net->params_table[i].trainable && strcmp(name + nv, p) == 0) return 1;
        if (sec && net->params_table[i].trainable && strcmp(name + ns, p) == 0) return 1;
        // "<bn>.num_batches_tracked" beside the batch norm's "<bn>.weight"
        size_t stem = len > nt ? len - nt : 0;
        if (stem && strcmp(name + stem, ".num_batches_tracked") == 0 &&
            strncmp(p, name, stem) == 0 && strcmp(p + stem, ".weight") == 0 &&
            net->params_table[i].kind == DT_PARAM_BN_GAMMA)
            return 1;
    }
    return 0;
}

// Reads the named tensors of each trainable parameter into x (validated first by the caller).
static void read_per_tensor(const dt_st_file *f, const dt_net *net, const char *prefix,
                            float *x) {
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        if (!p->trainable) continue;
        char name[160];
        snprintf(name, sizeof name, "%s%s", prefix, p->name);
        memcpy(x + p->offset, dt_st_find(f, name)->data, p->count * sizeof(float));
    }
}

// Whether every trainable parameter has PREFIX<name>, F32 of its shape.
static int check_per_tensor(const dt_st_file *f, const char *path, const dt_net *net,
                            const char *prefix, dt_error *err) {
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        if (!p->trainable) continue;
        char name[160];
        snprintf(name, sizeof name, "%s%s", prefix, p->name);
        if (!find_f32(f, path, name, p, err)) return 0;
    }
    return 1;
}

int dt_checkpoint_load_state(const char *path, dt_net *net, dt_opt_kind kind,
                             dt_optim_state *os, dt_train_state *st, dt_error *err) {
    memset(os, 0, sizeof *os);
    dt_st_file *f = dt_st_open(path, err);  // the CRC-32 is checked here when present
    if (!f) return -1;
    int rc = -1;
    int64_t ostep = -1;
    const char *fmt = dt_st_metadata(f, "format"), *model = dt_st_metadata(f, "model");
    int v1 = fmt && strcmp(fmt, "dtlab-checkpoint-1") == 0;
    if (!fmt || (!v1 && strcmp(fmt, "dtlab-checkpoint-2") != 0)) {
        dt_fail(err, DT_EXIT_USAGE, "checkpoint %s: not a dtlab checkpoint (metadata 'format')",
                path);
        goto out;
    }
    if (!v1 && !dt_st_metadata(f, DT_ST_CRC_KEY)) {
        dt_fail(err, DT_EXIT_USAGE, "checkpoint %s: the metadata has no '%s': the file is "
                "damaged", path, DT_ST_CRC_KEY);
        goto out;
    }
    // the optimizer: named in the metadata since the moments were added, together with
    // optimizer.step (a file with neither holds SGD's or LARS's momentum; with one of them
    // only, the header is damaged)
    const char *oname = dt_st_metadata(f, "optimizer");
    if (!oname != !dt_st_find(f, OSTEP_KEY)) {
        dt_fail(err, DT_EXIT_USAGE, "checkpoint %s: %s: the file is damaged", path,
                oname ? "the metadata names the optimizer but 'optimizer.step' is missing"
                      : "'optimizer.step' without the metadata 'optimizer'");
        goto out;
    }
    if (oname ? strcmp(oname, OPT_NAMES[kind]) != 0 : adam_kind(kind)) {
        dt_fail(err, DT_EXIT_USAGE, "checkpoint %s: holds the state of --optimizer %s, this "
                "run uses %s (resume with the same optimizer)", path,
                oname ? oname : "sgd or lars", OPT_NAMES[kind]);
        goto out;
    }
    for (int i = 0; i < dt_st_count(f); i++) {
        const char *name = dt_st_get(f, i)->name;
        if (!known_tensor(net, kind, name)) {
            dt_fail(err, DT_EXIT_USAGE, "checkpoint %s: tensor '%.100s' is not one a %s "
                    "checkpoint holds: the file is damaged or from another model", path, name,
                    net->model);
            goto out;
        }
    }
    if (!model || strcmp(model, net->model) != 0) {
        dt_fail(err, DT_EXIT_USAGE, "checkpoint %s: holds model '%s', this run builds '%s'",
                path, model ? model : "?", net->model);
        goto out;
    }
    const dt_st_tensor *tstep = dt_st_find(f, OSTEP_KEY);
    if (tstep && (tstep->dtype != DT_ST_I64 || tstep->nbytes != 8 ||
                  (memcpy(&ostep, tstep->data, 8), ostep < 0))) {
        dt_fail(err, DT_EXIT_USAGE, "checkpoint %s: tensor '%s' is not an I64 scalar >= 0",
                path, OSTEP_KEY);
        goto out;
    }
    if (!tstep && adam_kind(kind)) {  // Adam's bias corrections need it
        dt_fail(err, DT_EXIT_USAGE, "checkpoint %s: tensor '%s' (I64 scalar) is missing", path,
                OSTEP_KEY);
        goto out;
    }
    int64_t state[N_STATE];
    for (int k = 0; k < N_STATE; k++) {
        const dt_st_tensor *t = dt_st_find(f, STATE_KEYS[k]);
        if (!t || t->dtype != DT_ST_I64 || t->nbytes != 8) {
            dt_fail(err, DT_EXIT_USAGE, "checkpoint %s: tensor '%s' (I64 scalar) is missing",
                    path, STATE_KEYS[k]);
            goto out;
        }
        memcpy(&state[k], t->data, 8);
    }
    float scale = 0.0f;
    int64_t scaler[2] = {0, 0};
    const dt_st_tensor *ts = dt_st_find(f, SCALE_KEY);
    if (ts) {
        if (ts->dtype != DT_ST_F32 || ts->nbytes != 4) {
            dt_fail(err, DT_EXIT_USAGE, "checkpoint %s: tensor '%s' is not an F32 scalar", path,
                    SCALE_KEY);
            goto out;
        }
        memcpy(&scale, ts->data, 4);
        if (!(scale >= 1.0f && isfinite(scale))) {
            dt_fail(err, DT_EXIT_USAGE, "checkpoint %s: loss scale %g is not a finite value "
                    ">= 1", path, (double)scale);
            goto out;
        }
        for (int k = 0; k < 2; k++) {
            const dt_st_tensor *t = dt_st_find(f, SCALER_KEYS[k]);
            if (!t || t->dtype != DT_ST_I64 || t->nbytes != 8) {
                dt_fail(err, DT_EXIT_USAGE, "checkpoint %s: tensor '%s' (I64 scalar) is missing",
                        path, SCALER_KEYS[k]);
                goto out;
            }
            memcpy(&scaler[k], t->data, 8);
        }
    }
    // validate all of the optimizer's state before touching anything
    if (!check_per_tensor(f, path, net, VEL_PREFIX, err)) goto out;
    if (adam_kind(kind) && !check_per_tensor(f, path, net, SECOND_PREFIX, err)) goto out;
    if (dt_weights_load(net, path, err) != 0) goto out;  // validates, then uploads
    dt_optim_state_alloc(os, net, kind);
    read_per_tensor(f, net, VEL_PREFIX, os->m);
    if (os->v) read_per_tensor(f, net, SECOND_PREFIX, os->v);
    os->step = tstep ? (long)ostep : (long)state[1];
    st->epoch = state[0];
    st->step = state[1];
    st->seed = state[2];
    st->global_batch = state[3];
    st->loss_scale = scale;
    st->loss_scale_good_steps = scaler[0];
    st->skipped_steps = scaler[1];
    rc = 0;
out:
    dt_st_close(f);
    return rc;
}

int dt_checkpoint_load(const char *path, dt_net *net, dt_optim *opt, dt_train_state *st,
                       dt_error *err) {
    DT_ASSERT(!opt->sharded && opt->n == net->n_trainable);
    dt_optim_state os;
    if (dt_checkpoint_load_state(path, net, opt->cfg.kind, &os, st, err)) return -1;
    dt_device *d = net->dev;
    if (opt->n) d->from_host(d, opt->velocity, os.m, opt->n * sizeof(float));
    if (opt->n && os.v) d->from_host(d, opt->second, os.v, opt->n * sizeof(float));
    opt->step = os.step;
    dt_optim_state_free(&os);
    return 0;
}

int dt_checkpoint_remove_stale(const char *path, char *first, size_t n) {
    char dir[4096];
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (slash == path) snprintf(dir, sizeof dir, "/");
    DIR *d = opendir(dir);
    if (!d) return 0;
    size_t bl = strlen(base);
    int removed = 0;
    if (n) first[0] = 0;
    for (struct dirent *e; (e = readdir(d));) {
        const char *nm = e->d_name;
        if (strncmp(nm, base, bl) != 0 || strncmp(nm + bl, ".tmp.", 5) != 0) continue;
        char *end;
        long pid = strtol(nm + bl + 5, &end, 10);
        if (*end || pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours)
        char full[8400];
        snprintf(full, sizeof full, "%s/%s", dir, nm);
        if (unlink(full) == 0 && removed++ == 0 && n) snprintf(first, n, "%s", full);
    }
    closedir(d);
    return removed;
}
