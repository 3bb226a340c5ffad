// dtsim_report.c — what dtsim prints: the set-up, one table row per simulated
// configuration, the same as CSV (--csv, atomic) and JSON (--json), and the sweep's scaling
// curves as PNG (--plot: images/s, and scaling efficiency against one GPU).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"
#include "dtsim.h"
#include "json.h"
#include "plot.h"

static const char *intra_name(dt_intra_kind k) {
    return k == DT_INTRA_NVSWITCH ? "NVSwitch" : k == DT_INTRA_PCIE ? "PCIe" : "NVLink";
}
static const char *topo_name(dt_topo_kind k) {
    return k == DT_TOPO_FAT_TREE ? "fat tree" : k == DT_TOPO_TORUS ? "torus"
         : k == DT_TOPO_DRAGONFLY ? "dragonfly" : "flat";
}

static void hms(double s, char *buf, size_t n) {
    if (!isfinite(s)) snprintf(buf, n, "-");
    else if (s < 60) snprintf(buf, n, "%.1f s", s);
    else if (s < 3600) snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else snprintf(buf, n, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

void dtsim_print_header(FILE *f, const dtsim_opts *o) {
    const dt_cluster *c = &o->cluster;
    char fus[64];
    dt_fusion_format(&o->fusion, fus, sizeof fus);
    if (o->platform_file[0])
        fprintf(f, "dtsim: platform %s, GPU %s\n", o->platform_file, c->gpu);
    else
        fprintf(f, "dtsim: %s: %d nodes x %d %s, %s %.0f GB/s inside a node, %d x %.1f GB/s "
                   "NIC, %s\n", c->name, c->nodes, c->gpus_per_node, c->gpu,
                intra_name(c->intra), c->intra_bw / 1e9, c->nics, c->nic_bw / 1e9,
                topo_name(c->topo));
    fprintf(f, "       %s, %d images per GPU, %s, %s, allreduce %s%s, fusion %s, %s\n",
            o->model, o->per_gpu_batch, dt_precision_name(o->prec), o->lars ? "LARS" : "SGD",
            o->sweep ? "(swept)" : dt_algo_name(o->coll.algo), o->coll.wire_f16 ? " fp16" : "",
            fus, o->overlap ? "overlapping backward" : "after backward");
}

void dtsim_print_result(FILE *f, const dtsim_opts *o, const dtsim_result *r, int sweep_row) {
    char ep[32], tt[32];
    hms(r->epoch_s, ep, sizeof ep);
    hms(r->train_s, tt, sizeof tt);
    if (!sweep_row)
        fprintf(f, "%6s %8s %7s %6s %10s %10s %10s %10s %11s %6s %9s %9s %7s\n", "GPUs",
                "batch", "algo", "bucket", "iter ms", "compute", "comm", "exposed",
                "images/s", "eff %", "epoch", "train", "wall s");
    fprintf(f, "%6d %8d %7s %6d %10.2f %10.2f %10.2f %10.2f %11.0f %6.1f %9s %9s %7.1f\n",
            r->gpus, r->global_batch, r->algo, r->buckets, 1e3 * r->iter_s, 1e3 * r->compute_s,
            1e3 * r->comm_s, 1e3 * r->exposed_s, r->images_s, 100 * r->efficiency, ep, tt,
            r->wall_s);
    if (!o->sweep)
        fprintf(f, "one GPU: %.2f ms per iteration (%.0f images/s); time-to-train: %.0f epochs "
                   "of %.0f images\n", 1e3 * r->single_iter_s, r->per_gpu_batch / r->single_iter_s,
                o->epochs, o->dataset);
    if (!o->sweep && o->has_profile)
        fprintf(f, "profiled: %s (%s, %d per GPU, %.3f ms per step measured on %s): every "
                   "layer kind takes its measured time%s%s\n", o->profile_path, o->profile.model,
                o->profile.batch, 1e3 * o->profile.step_s,
                o->profile.device[0] ? o->profile.device : "?",
                o->profile.intra.beta > 0 || o->profile.inter.beta > 0
                    ? ", the links their fitted latency and bandwidth" : "",
                strcmp(o->profile.device, "cpu") ? ""
                    : "; the allreduce after backward, as on the cpu device, whose rank "
                      "copies and computes on one core");
    if (!o->sweep && r->time_scale != 1)
        fprintf(f, "calibrated: one GPU trains %.1f images/s at %d per GPU in %s (--gpu-img-s); "
                   "the roofline alone gives %.1f, so every modelled kernel takes x%.3f\n",
                o->gpu_img_s, o->calib_batch, dt_precision_name(o->calib_prec),
                r->calib_roofline_img_s, r->time_scale);
    fflush(f);
}

int dtsim_write_csv(const char *path, const dtsim_result *r, int n) {
    dt_atomic_file a;
    dt_error err;
    if (dt_atomic_open(&a, path, "--csv", &err)) {
        fprintf(stderr, "dtsim: %s\n", err.msg);
        return -1;
    }
    fprintf(a.f, "gpus,global_batch,algo,buckets,iter_s,compute_s,comm_s,exposed_s,images_per_s,"
                 "efficiency,epoch_s,train_s,single_gpu_iter_s\n");
    for (int i = 0; i < n; i++)
        fprintf(a.f, "%d,%d,%s,%d,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n",
                r[i].gpus, r[i].global_batch, r[i].algo, r[i].buckets, r[i].iter_s, r[i].compute_s,
                r[i].comm_s, r[i].exposed_s, r[i].images_s, r[i].efficiency, r[i].epoch_s,
                r[i].train_s, r[i].single_iter_s);
    if (dt_atomic_finish(&a, &err) || dt_atomic_commit(&a, &err)) {
        fprintf(stderr, "dtsim: --csv %s: %s\n", path, err.msg);
        return -1;
    }
    return 0;
}

// Every real with 17 significant digits (the writer's default): the bits of the simulated
// figures, so two runs compare exactly (docs/conventions.md, "Same bits everywhere").
void dtsim_print_json(const dtsim_result *r, int n) {
    dt_json_writer w;
    dt_json_writer_init(&w, stdout);
    dt_json_begin_array(&w, NULL);
    for (int i = 0; i < n; i++) {
        dt_json_begin_object(&w, NULL);
        dt_json_write_int(&w, "gpus", r[i].gpus);
        dt_json_write_int(&w, "global_batch", r[i].global_batch);
        dt_json_write_string(&w, "algo", r[i].algo);
        dt_json_write_int(&w, "buckets", r[i].buckets);
        dt_json_write_real(&w, "iter_s", r[i].iter_s);
        dt_json_write_real(&w, "compute_s", r[i].compute_s);
        dt_json_write_real(&w, "comm_s", r[i].comm_s);
        dt_json_write_real(&w, "exposed_s", r[i].exposed_s);
        dt_json_write_real(&w, "images_per_s", r[i].images_s);
        dt_json_write_real(&w, "efficiency", r[i].efficiency);
        dt_json_write_real(&w, "epoch_s", r[i].epoch_s);
        dt_json_write_real(&w, "train_s", r[i].train_s);
        dt_json_write_real(&w, "single_gpu_iter_s", r[i].single_iter_s);
        dt_json_write_real(&w, "model_comm_s", r[i].model_comm_s);
        dt_json_write_real(&w, "roofline_single_gpu_iter_s", r[i].roofline_iter_s);
        dt_json_write_real(&w, "time_scale", r[i].time_scale);
        dt_json_write_int(&w, "params", r[i].params);
        dt_json_end_object(&w);
    }
    dt_json_end_array(&w);
}

// The paper's published efficiency point against one GPU, in %: as published when its
// baseline is one GPU, else scaled by the sweep's own efficiency at the baseline (the
// paper's definition is per-GPU throughput over the baseline's). NAN when the preset has
// none or the sweep has no point at its baseline.
static double paper_point(const dtsim_opts *o, const dtsim_result *r, int n) {
    const dt_cluster *c = &o->cluster;
    if (!(c->paper_eff > 0) || c->paper_eff_gpus <= 0) return NAN;
    if (c->paper_eff_base <= 1) return 100 * c->paper_eff;
    for (int i = 0; i < n; i++)
        if (r[i].gpus == c->paper_eff_base) return 100 * c->paper_eff * r[i].efficiency;
    fprintf(stderr, "dtsim: --plot: %s's published point is against %d GPUs, which the sweep "
                    "does not include (add it to --sweep-gpus to see the point)\n", c->name,
            c->paper_eff_base);
    return NAN;
}

// Two charts: throughput on log-log axes, where ideal scaling (one GPU's rate times the GPU
// count) is the straight dashed line, and efficiency against one GPU on a linear axis, with
// the paper's published point when a preset is swept.
int dtsim_plot(const char *path, const dtsim_opts *o, const dtsim_result *r, int n) {
    int na = o->n_sweep_algos, ng = o->n_sweep_gpus;
    if (na > DT_PLOT_MAX_SERIES - 1) na = DT_PLOT_MAX_SERIES - 1;  // room for the reference
    double *x = calloc((size_t)n + 2, sizeof(double)), *ips = calloc((size_t)n, sizeof(double));
    double *eff = calloc((size_t)n, sizeof(double)), *ideal = calloc((size_t)ng, sizeof(double));
    dt_plot_series s1[DT_PLOT_MAX_SERIES], s2[DT_PLOT_MAX_SERIES];
    for (int a = 0; a < na; a++) {
        for (int g = 0; g < ng; g++) {
            const dtsim_result *q = &r[a * ng + g];
            x[a * ng + g] = q->gpus;
            ips[a * ng + g] = q->images_s;
            eff[a * ng + g] = 100 * q->efficiency;
            // one GPU's rate (the sweep's own single-GPU step) times the GPU count
            if (a == 0) ideal[g] = q->global_batch / q->single_iter_s;
        }
        s1[a] = (dt_plot_series){dt_algo_name(o->sweep_algos[a]), x + a * ng, ips + a * ng, ng,
                                 DT_PLOT_LINE};
        s2[a] = (dt_plot_series){dt_algo_name(o->sweep_algos[a]), x + a * ng, eff + a * ng, ng,
                                 DT_PLOT_LINE};
    }
    s1[na] = (dt_plot_series){"ideal (1 GPU x N)", x, ideal, ng, DT_PLOT_DASHED};
    double paper_x = o->cluster.paper_eff_gpus, paper_y = paper_point(o, r, n);
    char paper_name[64];
    if (o->cluster.paper_eff_base > 1)
        snprintf(paper_name, sizeof paper_name, "paper (its %d-GPU base)",
                 o->cluster.paper_eff_base);
    else snprintf(paper_name, sizeof paper_name, "paper");
    int n2 = na;
    if (isfinite(paper_y)) s2[n2++] = (dt_plot_series){paper_name, &paper_x, &paper_y, 1,
                                                        DT_PLOT_MARKERS};
    char title[160], path2[600];
    snprintf(title, sizeof title, "%s on %s (%d per GPU): throughput", o->model, o->cluster.gpu,
             o->per_gpu_batch);
    dt_plot_opts po = {title, "GPUs", "images/s (log)", 0, 0, 1, 0, 1};
    dt_error err;
    int rc = dt_plot(path, &po, s1, na + 1, &err);
    const char *dot = strrchr(path, '.');
    size_t stem = dot && !strcmp(dot, ".png") ? (size_t)(dot - path) : strlen(path);
    snprintf(path2, sizeof path2, "%.*s-efficiency.png", (int)stem, path);
    snprintf(title, sizeof title, "%s on %s: scaling efficiency vs one GPU", o->model, o->cluster.gpu);
    dt_plot_opts pe = {title, "GPUs", "efficiency %", 0, 0, 1, 1, 0};
    if (!rc) rc = dt_plot(path2, &pe, s2, n2, &err);
    if (rc) fprintf(stderr, "dtsim: --plot: %s\n", err.msg);
    else fprintf(stderr, "dtsim: wrote %s and %s\n", path, path2);
    free(x), free(ips), free(eff), free(ideal);
    return rc;
}
