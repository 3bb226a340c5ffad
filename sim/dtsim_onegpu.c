// dtsim_onegpu.c — one GPU on the model device, natively (no SimGrid: one GPU has nobody to
// talk to): its training step (the run's baseline, and the memory it needs), and the
// calibration that scales every modelled kernel to a published or measured figure (the
// user's --gpu-img-s, a row of the calibration table, a --profile's layer kinds). Used by
// dtsim_run.c before a run; dtsim_3d_calibration alone by dtsim plan's layout search.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_model.h"
#include "dtsim.h"
#include "net.h"
#include "optim.h"
#include "zero.h"

// The network dtsim models: the model's own input, or the shape a profile measured
static void model_shape(const dtsim_opts *o, dt_model_config *cfg) {
    dt_model_shape(o->model, o->model_side, o->model_classes, &cfg->in_h, &cfg->num_classes);
    cfg->in_w = cfg->in_h;
    dtsim_gpt_config(o, cfg);  // gpt models (0: the model's)
    if (dtsim_is_3d(o)) {  // one GPU's share: a tensor rank's layers of one stage's blocks
        dt_gpt_shape sh;
        cfg->tp = o->tp, cfg->blocks = (dtsim_gpt_shape(o, &sh)->layers + o->pp - 1) / o->pp;
    }
}

// One training step of one GPU (forward, loss, backward, optimizer) on the model device, of
// `batch` images in `accumulate` micro-batches in precision `prec`, their upload included:
// the device's statistics (seconds: the roofline's, uncalibrated; host_s, max_alloc) and, if
// asked, the modelled device memory it needs (bytes) and the trainable parameters.
int dtsim_single_gpu(const dtsim_opts *o, int batch, dt_precision prec, int accumulate,
                      dt_model_stats *st, size_t *used, size_t *params) {
    dt_error err = {0};
    // nothing touches the arena: reused, only the largest buffer must fit in address space
    dt_modeldev_config mc = {dt_gpu_find(o->cluster.gpu), prec, NULL, NULL, NULL, 0, 1, 0,
                             o->flash};
    dt_device *dev = dt_device_model_create(&mc, &err);
    if (!dev) {
        fprintf(stderr, "dtsim: %s\n", err.msg);
        return 2;
    }
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = batch / accumulate;  // the micro-batch
    model_shape(o, &cfg);
    dt_net *net = dt_model_create(o->model, dev, &cfg, &err);
    if (net) dt_device_model_follow_layers(dev, net);  // seconds by layer kind
    dt_optim_config oc = dt_optim_config_default(dt_sim_optim_kind(o->model, o->lars));
    dt_optim *opt = net ? dt_optim_create(net, &oc, &err) : NULL;
    if (!opt) {
        if (!net) fprintf(stderr, "dtsim: option --model: %s\n", err.msg);
        else fprintf(stderr, "dtsim: %s\n", err.msg);
        if (net) dt_net_free(net);
        dev->destroy(dev);
        return 2;
    }
    float *x = callocCheck(1, sizeof(float));  // the model device never reads it
    int32_t *y = callocCheck((size_t)cfg.batch, sizeof(int32_t));
    dt_device_model_reset_stats(dev);
    for (int k = 0; k < accumulate; k++) {  // one GPU accumulates the same micro-batches
        net->keep_grads = k > 0;
        dt_net_set_batch(net, x, y);  // the images' upload, as the trainer's step does
        dt_net_forward(net, 1);
        dt_net_loss(net);
        dt_net_backward(net, 1.0f, NULL, NULL);
    }
    dt_optim_step(opt, net, 0.1f);
    dev->sync(dev);
    dt_model_stats ms = dt_device_model_stats(dev);
    *st = ms;
    // every buffer, plus the allreduce's scratch (the buckets in flight: at most the
    // gradients and a quarter more)
    if (used) *used = ms.arena_used + net->n_trainable * sizeof(float) * 5 / 4;
    if (params) *params = net->n_trainable;
    free(x), free(y);
    dt_optim_free(opt);
    dt_net_free(net);
    dev->destroy(dev);
    return 0;
}

// The calibration (docs/formulas.md): the factor on every kernel that makes one GPU's step
// at the measured configuration take calib_batch / gpu_img_s, its upload (PCIe) unscaled.
// `one` is the step of the run's own configuration; 2 when the figure is faster than the
// upload alone allows.
int dtsim_calibrate(const dtsim_opts *o, const dt_model_stats *one, dtsim_result *r) {
    dt_model_stats cal = *one;
    const dt_gpu_calib *row = o->calib_row;
    if (row && (strcmp(row->model, o->model) || strcmp(row->gpu, o->cluster.gpu) ||
                row->seq_len != o->seq_len ||
                row->vocab != o->vocab || o->model_side || o->model_classes || o->layers ||
                o->hidden || o->heads)) {
        // the table's row measured another network or GPU (a sibling of the run's
        // generation: dtsim_calib.c): its step, on its GPU, at its batch and precision
        dtsim_opts *m = mallocCheck(sizeof *m);
        *m = *o;
        snprintf(m->cluster.gpu, sizeof m->cluster.gpu, "%s", row->gpu);
        snprintf(m->model, sizeof m->model, "%s", row->model);
        m->seq_len = row->seq_len, m->vocab = row->vocab, m->model_side = m->model_classes = 0;
        m->layers = m->hidden = m->heads = 0;  // the row's own shape, data-parallel
        m->tp = m->pp = 1, m->recompute = 0, m->flash = dtsim_row_flash(o);
        int rc = dtsim_single_gpu(m, o->calib_batch, o->calib_prec, 1, &cal, NULL, NULL);
        free(m);
        if (rc) return rc;
    } else if (o->calib_batch != o->per_gpu_batch || o->calib_prec != o->prec ||
               o->accumulate > 1 || dtsim_is_3d(o)) {
        dtsim_opts *m = mallocCheck(sizeof *m);  // the whole model, on one GPU (not a
        *m = *o;                                 // tensor rank's stage: model_shape)
        m->tp = m->pp = 1, m->recompute = 0;
        int rc = dtsim_single_gpu(m, o->calib_batch, o->calib_prec, 1, &cal, NULL, NULL);
        free(m);
        if (rc) return rc;
    }
    double want = o->calib_batch / o->gpu_img_s;
    if (want <= cal.host_s)
        return fprintf(stderr, "dtsim: --gpu-img-s %g: faster than uploading %d %s per step "
                       "over PCIe allows (%.0f %s/s at most)\n", o->gpu_img_s,
                       o->calib_batch, dtsim_samples(o), o->calib_batch / cal.host_s,
                       dtsim_samples(o)), 2;
    r->time_scale = (want - cal.host_s) / (cal.seconds - cal.host_s);
    r->calib_roofline_img_s = o->calib_batch / cal.seconds;
    return 0;
}

// --profile (docs/formulas.md): each layer kind's factor, the measured seconds over the
// roofline's for one GPU's step at the profile's batch and precision. 2 when the profile and
// the network dtsim builds do not have the same kinds.
int dtsim_profile_scales(const dtsim_opts *o, dtsim_result *r) {
    const dt_profile *p = &o->profile;
    dt_model_stats cal;
    dt_precision prec = strcmp(p->precision, "fp32") ? DT_PREC_FP16 : DT_PREC_FP32;
    int rc = dtsim_single_gpu(o, p->batch, prec, 1, &cal, NULL, NULL);
    if (rc) return rc;
    char name[32];
    for (int k = 0; k < DT_N_KINDS; k++) {
        double roof = cal.kind_seconds[k], meas = p->kind_s[k];
        r->kind_scale[k] = 1;
        if ((meas < 0) != (roof <= 0))
            return fprintf(stderr, "dtsim: --profile %s: %s %s, which the %s dtsim builds %s\n",
                           o->profile_path, meas < 0 ? "has no" : "has",
                           dt_kind_name(k, name, sizeof name), o->model,
                           meas < 0 ? "has" : "has not"), 2;
        if (roof > 0) r->kind_scale[k] = meas > 0 ? meas / roof : 1e-9;
    }
    return 0;
}

int dtsim_3d_calibration(const dtsim_opts *o, dtsim_result *r) {
    r->time_scale = 1;
    dt_model_stats none;
    memset(&none, 0, sizeof none);
    int rc = 0;  // (a 3D run's calibration times its own step: calibrate ignores `none`)
    if (o->gpu_img_s > 0 && (rc = dtsim_calibrate(o, &none, r))) return rc;
    if (o->calib_row && (rc = dtsim_calib_node(o, r))) return rc;
    return 0;
}

