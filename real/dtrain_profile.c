// dtrain_profile.c — `dtrain --profile FILE` (real/dtrain_profile.h): each interval between
// two layer boundaries is charged to the kind that was running, after the device finished
// its work (dev->sync: the cpu device is synchronous anyway, the cuda device is waited for).
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dtrain_profile.h"
#include "json.h"

static double now_synced(const dtrain_profiler *p) {
    p->dev->sync(p->dev);
    return MPI_Wtime();
}

static void charge(dtrain_profiler *p, int next_kind) {
    double t = now_synced(p);
    if (p->timing) p->kind_s[p->kind] += t - p->t_prev;
    p->kind = next_kind;
    p->t_prev = t;
}

static void on_layer(void *ctx, const dt_net *net, int layer, int phase) {
    charge(ctx, layer < 0 ? DT_KIND_REST : 2 * (int)net->layers[layer]->type + phase);
}

void dtrain_profile_attach(dtrain_profiler *p, dtrain_run *r) {
    memset(p, 0, sizeof *p);
    p->dev = r->dev;
    p->kind = DT_KIND_REST;
    r->net->on_layer = on_layer;
    r->net->on_layer_ctx = p;
}

void dtrain_profile_step_begin(dtrain_profiler *p, long step) {
    p->timing = 0;
    charge(p, DT_KIND_REST);  // the upload and what else comes before the first layer
    p->timing = step >= PROFILE_WARMUP;
}

void dtrain_profile_step_end(dtrain_profiler *p) {
    charge(p, DT_KIND_REST);  // the optimizer's tail
    if (p->timing) p->steps++;
    p->timing = 0;
}

int dtrain_profile_write(const dtrain_profiler *p, const dtrain_run *r, dt_error *err) {
    const dtrain_opts *o = r->o;
    if (p->steps < 1)
        return dt_fail(err, DT_EXIT_USAGE, "--profile %s: no step was timed (the first %d are "
                       "warm-up): give --max-steps %d or more", o->profile, PROFILE_WARMUP,
                       PROFILE_WARMUP + 1);
    if (r->rank != 0) return 0;
    char tmp[600], name[32];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", o->profile, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return dt_fail(err, DT_EXIT_USAGE, "--profile %s: cannot create it", o->profile);
    double step = 0;
    for (int k = 0; k < DT_N_KINDS; k++) step += p->kind_s[k] / p->steps;
    dt_json_writer w;
    dt_json_writer_init(&w, f);
    w.digits = 9;
    dt_json_begin_object(&w, NULL);
    dt_json_write_int(&w, "dtlab_profile", 1);
    char src[160];
    snprintf(src, sizeof src, "dtrain --profile, %d rank(s), %d thread(s)", r->ranks, r->threads);
    dt_json_write_string(&w, "source", src);
    dt_json_write_string(&w, "model", o->model);
    dt_json_write_string(&w, "device", o->device_cuda ? "cuda" : "cpu");
    dt_json_write_string(&w, "precision", o->precision == DT_AMP_FP16   ? "fp16"
                                          : o->precision == DT_AMP_BF16 ? "bf16" : "fp32");
    dt_json_write_int(&w, "batch", r->net->B * o->accumulate);
    dt_json_write_int(&w, "image_size", r->net->in_h);
    dt_json_write_int(&w, "channels", r->net->in_c);
    dt_json_write_int(&w, "classes", r->net->num_classes);
    dt_json_write_int(&w, "steps", p->steps);
    dt_json_write_real(&w, "step_s", step);  // the kinds' sum (the reader checks it)
    dt_json_begin_object(&w, "kinds");
    for (int k = 0; k < DT_N_KINDS; k++) {
        int present = k == DT_KIND_REST;
        for (int i = 0; i < r->net->n_layers && !present; i++)
            present = 2 * (int)r->net->layers[i]->type == (k & ~1);
        if (present) dt_json_write_real(&w, dt_kind_name(k, name, sizeof name), p->kind_s[k] / p->steps);
    }
    dt_json_end_object(&w);
    dt_json_end_object(&w);
    int bad = ferror(f) | fflush(f) | fsync(fileno(f));
    bad |= fclose(f);
    if (bad || rename(tmp, o->profile)) {
        remove(tmp);
        return dt_fail(err, DT_EXIT_RUNTIME, "--profile %s: write error", o->profile);
    }
    return 0;
}
