// checkpoint.c — see checkpoint.h. The file layout:
//   <torchvision names>                 F32   weights and running statistics (dt_weights_save)
//   <bn>.num_batches_tracked            I64   scalar
//   optimizer.velocity.<name>           F32   momentum buffer of each trainable tensor
//   trainer.{epoch,step,seed,global_batch}   I64 scalars (each rank's dropout stream is a
//                                       function of seed, rank and step: dtrain replays it)
//   trainer.loss_scale                  F32 scalar, fp16 runs only, with the I64 scalars
//   trainer.{loss_scale_good_steps,skipped_steps}   (the dynamic loss scaler's state)
//   __metadata__ {"format": "dtlab-checkpoint-2", "model": "<name>",
//                 "dtlab.data_crc32": "<8 hex digits>"}
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

static const char *const STATE_KEYS[] = {"trainer.epoch", "trainer.step", "trainer.seed",
                                         "trainer.global_batch"};
enum { N_STATE = 4 };
// the fp16 loss scaler's state, present only when a run scaled its loss
#define SCALE_KEY "trainer.loss_scale"
static const char *const SCALER_KEYS[] = {"trainer.loss_scale_good_steps",
                                          "trainer.skipped_steps"};

int dt_checkpoint_save(const char *path, const dt_net *net, const dt_optim *opt,
                       const dt_train_state *st, dt_error *err) {
    dt_device *d = net->dev;
    // one writer, one atomic file: the weights as dt_weights_save names them, then the rest
    float *params = mallocCheck(net->n_total * sizeof(float));
    float *vel = mallocCheck((opt->n ? opt->n : 1) * sizeof(float));
    d->to_host(d, params, net->params, net->n_total * sizeof(float));
    if (opt->n) d->to_host(d, vel, opt->velocity, opt->n * sizeof(float));
    int64_t nbt = net->bn_batches_tracked;
    int64_t state[N_STATE] = {st->epoch, st->step, st->seed, st->global_batch};
    dt_st_writer *w = dt_st_writer_new();
    dt_weights_add(w, net, params, &nbt);
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        if (!p->trainable) continue;
        int64_t shape[4];
        for (int k = 0; k < p->ndim; k++) shape[k] = p->shape[k];
        char name[160];
        snprintf(name, sizeof name, VEL_PREFIX "%s", p->name);
        dt_st_add(w, name, DT_ST_F32, p->ndim, shape, vel + p->offset);
    }
    for (int k = 0; k < N_STATE; k++) dt_st_add(w, STATE_KEYS[k], DT_ST_I64, 0, NULL, &state[k]);
    int64_t scaler[2] = {st->loss_scale_good_steps, st->skipped_steps};
    float scale = st->loss_scale;
    if (scale > 0) {
        dt_st_add(w, SCALE_KEY, DT_ST_F32, 0, NULL, &scale);
        for (int k = 0; k < 2; k++) dt_st_add(w, SCALER_KEYS[k], DT_ST_I64, 0, NULL, &scaler[k]);
    }
    dt_st_add_metadata(w, "format", "dtlab-checkpoint-2");
    dt_st_add_metadata(w, "model", net->model);
    int rc = dt_st_write(w, path, err);
    dt_st_writer_free(w);
    free(vel);
    free(params);
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
static int known_tensor(const dt_net *net, const char *name) {
    for (int k = 0; k < N_STATE; k++)
        if (strcmp(name, STATE_KEYS[k]) == 0) return 1;
    if (strcmp(name, SCALE_KEY) == 0 || strcmp(name, SCALER_KEYS[0]) == 0 ||
        strcmp(name, SCALER_KEYS[1]) == 0)
        return 1;
    size_t nv = strlen(VEL_PREFIX), len = strlen(name), nt = strlen(".num_batches_tracked");
    int vel = strncmp(name, VEL_PREFIX, nv) == 0;
    for (int i = 0; i < net->n_params; i++) {
        const char *p = net->params_table[i].name;
        if (strcmp(name, p) == 0) return 1;
        if (vel && net->params_table[i].trainable && strcmp(name + nv, p) == 0) return 1;
        // "<bn>.num_batches_tracked" beside the batch norm's "<bn>.weight"
        size_t stem = len > nt ? len - nt : 0;
        if (stem && strcmp(name + stem, ".num_batches_tracked") == 0 &&
            strncmp(p, name, stem) == 0 && strcmp(p + stem, ".weight") == 0 &&
            net->params_table[i].kind == DT_PARAM_BN_GAMMA)
            return 1;
    }
    return 0;
}

int dt_checkpoint_load(const char *path, dt_net *net, dt_optim *opt, dt_train_state *st,
                       dt_error *err) {
    dt_st_file *f = dt_st_open(path, err);  // the CRC-32 is checked here when present
    if (!f) return -1;
    int rc = -1;
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
    for (int i = 0; i < dt_st_count(f); i++) {
        const char *name = dt_st_get(f, i)->name;
        if (!known_tensor(net, name)) {
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
    // validate all velocities before touching anything
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        if (!p->trainable) continue;
        char name[160];
        snprintf(name, sizeof name, VEL_PREFIX "%s", p->name);
        if (!find_f32(f, path, name, p, err)) goto out;
    }
    if (dt_weights_load(net, path, err) != 0) goto out;  // validates, then uploads
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        if (!p->trainable) continue;
        char name[160];
        snprintf(name, sizeof name, VEL_PREFIX "%s", p->name);
        const float *v = find_f32(f, path, name, p, err);
        net->dev->from_host(net->dev, opt->velocity + p->offset, v, p->count * sizeof(float));
    }
    st->epoch = state[0];
    st->step = state[1];
    st->seed = state[2];
    st->global_batch = state[3];
    st->loss_scale = scale;
    st->loss_scale_good_steps = scaler[0];
    st->skipped_steps = scaler[1];
    opt->step = (long)state[1];
    rc = 0;
out:
    dt_st_close(f);
    return rc;
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
