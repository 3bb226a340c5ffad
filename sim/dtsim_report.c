// dtsim_report.c — what dtsim prints: the set-up (every figure of the cluster and where it
// came from), one table row per simulated configuration, time-to-train and GPU-hours with
// their error band, the same as CSV (--csv, atomic, or stdout) and JSON (--json), and the
// sweep's scaling curves as PNG (--plot: images/s, and scaling efficiency against one GPU).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"
#include "dtsim.h"
#include "json.h"
#include "plot.h"
#include "zero.h"
#include "dtsim_3d_band.h"
#include "dtsim_heldout.h"

// The error band of time-to-train (and so of GPU-hours and cost), what was measured, never
// assumed: a preset on its own paper's figure has the in-sample error of bench/PAPERS.md
// (its landmark runs land within 7.6 %); a profile of measured steps the goal every committed
// step of bench/VALIDATION.md meets (10 %); every other run the largest error of the held-out
// runs like it (bench/HELDOUT.md, sim/dtsim_heldout.h: its GPU generation, and calibrated
// from the table's row (1), from the user's own figure (2: --gpu-img-s, scored on runs
// calibrated from one node of their own software) or on the roofline alone (0)). tests/sim
// checks each against the committed files.
#define BAND_PAPERS 0.076
#define BAND_VALIDATION 0.10

const char *dtsim_generation(const char *gpu) {
    if (!strncmp(gpu, "p100", 4) || !strncmp(gpu, "p40", 3)) return "pascal";
    if (!strncmp(gpu, "v100", 4)) return "volta";
    if (!strncmp(gpu, "a100", 4)) return "ampere";
    return "hopper";  // h100, h100-pcie, h200
}

double dtsim_band(const dtsim_opts *o, char *basis, size_t n, double *lo, double *hi) {
    char tmp[224];
    double l, h;
    if (!basis) basis = tmp, n = sizeof tmp;
    if (!lo) lo = &l;
    if (!hi) hi = &h;
    if (o->has_profile) {
        snprintf(basis, n, "measured runs, bench/VALIDATION.md");
        return *lo = -BAND_VALIDATION, *hi = BAND_VALIDATION;
    }
    if (o->calib_fitted) {
        snprintf(basis, n, "in-sample: the preset's own paper figure, bench/PAPERS.md");
        return *lo = -BAND_PAPERS, *hi = BAND_PAPERS;
    }
    if (dtsim_is_3d(o)) {  // bench/megatron.py's runs (A100s: the only ones measured yet)
        snprintf(basis, n, "held out: the errors of %d published 3D-parallel runs on A100s "
                 "(Megatron-LM, BLOOM, MT-NLG), bench/MEGATRON.md", DTSIM_3D_RUNS);
        *lo = DTSIM_3D_BAND_LO, *hi = DTSIM_3D_BAND_HI;
        return fmax(-*lo, *hi);
    }
    int cal = o->calib_row ? 1 : o->gpu_img_s > 0 ? 2 : 0;
    static const char *how[] = {"on the roofline alone", "calibrated from the table",
                                "calibrated from one node of their own software (as "
                                "--gpu-img-s is)"};
    const char *gen = dtsim_generation(o->cluster.gpu);
    size_t k = sizeof dtsim_heldout / sizeof dtsim_heldout[0];
    for (size_t i = 0; i < k; i++) {
        if (strcmp(dtsim_heldout[i].gen, gen) || dtsim_heldout[i].calibrated != cal) continue;
        snprintf(basis, n, "held out: the errors of %d %s runs %s, bench/HELDOUT.md",
                 dtsim_heldout[i].runs, dtsim_heldout[i].own ? gen : "(every generation's)",
                 how[cal]);
        *lo = dtsim_heldout[i].lo, *hi = dtsim_heldout[i].hi;
        return fmax(-*lo, *hi);
    }
    snprintf(basis, n, "no held-out run measures it: the widest of bench/HELDOUT.md");
    *lo = *hi = 0;
    for (size_t i = 0; i < k; i++)
        *lo = fmin(*lo, dtsim_heldout[i].lo), *hi = fmax(*hi, dtsim_heldout[i].hi);
    return fmax(-*lo, *hi);
}

void dtsim_band_set(const dtsim_opts *o, dtsim_result *r) {
    r->band = dtsim_band(o, NULL, 0, &r->band_lo, &r->band_hi);
}

// "±7.6 %" for a symmetric band, "-14.2 % / +216.3 %" for another
const char *dtsim_band_text(const dtsim_result *r, char *buf, size_t n) {
    if (fabs(r->band_lo + r->band_hi) < 1e-12) snprintf(buf, n, "±%.1f %%", 100 * r->band_hi);
    else snprintf(buf, n, "%+.1f %% / %+.1f %%", 100 * r->band_lo, 100 * r->band_hi);
    return buf;
}

// What one GPU's speed rests on, after the time-to-train lines
static void print_calibration(FILE *f, const dtsim_opts *o, const dtsim_result *r) {
    const dt_gpu_calib *c = o->calib_row;
    if (o->has_profile) return;
    char sibling[160] = "";  // a row of another GPU of the generation (dtsim_calib.c)
    if (c && strcmp(c->gpu, o->cluster.gpu))
        snprintf(sibling, sizeof sibling, "; the table has no %s row: its generation's measured "
                 "fraction of the roofline stands in", o->cluster.gpu);
    if (c)
        fprintf(f, "calibrated: %s: one %s trains %.1f %s/s at %d per GPU in %s (%s; %s, %s%s%s;"
                   " `dtsim calibrations`); the roofline alone gives %.1f, so every modelled "
                   "kernel's work takes x%.3f (its launch, the host's, not)%s%s\n", c->id, c->gpu,
                c->per_gpu,
                dt_sim_is_gpt(c->model) ? "sequences" : "images", c->batch, c->precision,
                c->framework, c->source, c->date, c->note[0] ? "; " : "", c->note,
                r->calib_roofline_img_s, r->time_scale,
                r->calib_node ? " (the measured node modelled whole: its own collectives are "
                                "not in the factor)" : "", sibling);
    else if (o->gpu_img_s > 0)
        fprintf(f, "calibrated: one GPU trains %.1f %s/s at %d per GPU in %s (%s); the roofline "
                   "alone gives %.1f, so every modelled kernel's work takes x%.3f (its launch, "
                   "the host's, not)\n",
                o->gpu_img_s, dtsim_samples(o), o->calib_batch, dt_precision_name(o->calib_prec),
                o->calib_fitted ? "the preset's own paper figure: fitted" : "--gpu-img-s",
                r->calib_roofline_img_s, r->time_scale);
    else if (!strcmp(o->calib_arg, "none"))
        fprintf(f, "uncalibrated (roofline): --calib none (`dtsim calibrations` lists the "
                   "published measurements; --gpu-img-s X gives your own)\n");
    else
        fprintf(f, "uncalibrated (roofline): the calibration table has no %s %s row for a %s "
                   "(`dtsim calibrations`); --gpu-img-s X gives your own measurement\n",
                o->cluster.gpu, dtsim_prec_name(o),
                dt_sim_is_gpt(o->model) ? "transformer" : "CNN");
}

// The largest global batch at which ResNet-50 is published to reach its accuracy in 90
// epochs: SGD 8K (Goyal et al. 2017, 76.3 % top-1, worse beyond), LARS 32K (You et al.
// 2017) and 64K (Jia et al. 2018, with mixed precision). Nothing is said of other models.
#define SGD_BATCH_PUBLISHED 8192
#define LARS_BATCH_PUBLISHED 65536

int dtsim_batch_beyond(const dtsim_opts *o, long long global_batch) {
    long long lim = o->lars ? LARS_BATCH_PUBLISHED : SGD_BATCH_PUBLISHED;
    return !strcmp(o->model, "resnet50") && global_batch > lim;
}

void dtsim_batch_warning(dtsim_opts *o) {
    long long most = o->gpus;
    for (int i = 0; o->sweep && i < o->n_sweep_gpus; i++)
        if (i == 0 || o->sweep_gpus[i] > most) most = o->sweep_gpus[i];
    long long gb = most * o->per_gpu_batch;
    if (!dtsim_batch_beyond(o, gb)) return;
    o->batch_beyond = 1;
    char w[480];
    snprintf(w, sizeof w, "global batch %lld%s is beyond the largest at which ResNet-50 is "
             "published to reach its accuracy with %s (%s): the %g epochs of the time-to-train "
             "may not reach it", gb, o->sweep ? " (the sweep's largest)" : "",
             o->lars ? "LARS" : "SGD", o->lars ? "32K, You et al. 2017; 64K, Jia et al. 2018"
                                               : "8K, Goyal et al. 2017; LARS: 32K-64K",
             o->epochs);
    fprintf(stderr, "dtsim: warning: %s\n", w);
    dtsim_warn_json(o, w);
}

void dtsim_warn_json(dtsim_opts *o, const char *msg) {
    if (o->n_warnings < (int)(sizeof o->warnings / sizeof o->warnings[0]))
        snprintf(o->warnings[o->n_warnings++], sizeof o->warnings[0], "%s", msg);
}
static const char *topo_name(dt_topo_kind k) {
    return k == DT_TOPO_FAT_TREE ? "fat tree" : k == DT_TOPO_TORUS ? "torus"
         : k == DT_TOPO_DRAGONFLY ? "dragonfly" : k == DT_TOPO_RAIL ? "rail-optimised fat tree"
         : "flat";
}

void dtsim_duration(double s, char *buf, size_t n) {
    if (!isfinite(s)) snprintf(buf, n, "-");
    else if (s < 60) snprintf(buf, n, "%.1f s", s);
    else if (s < 3600) snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else snprintf(buf, n, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

// The description: the cluster's figures on one line, where each came from on the next
// (sim/dtsim_cluster.c), then the training set-up.
void dtsim_print_header(FILE *f, const dtsim_opts *o) {
    const dt_cluster *c = &o->cluster;
    const dtsim_sources *s = &o->src;
    char fus[64], over[32] = "";
    dt_fusion_format(&o->fusion, fus, sizeof fus);
    if ((c->topo == DT_TOPO_FAT_TREE || c->topo == DT_TOPO_RAIL) && c->oversubscription > 1)
        snprintf(over, sizeof over, " %g:1", c->oversubscription);
    if (o->platform_file[0]) {
        fprintf(f, "dtsim: platform %s, GPU %s\n", o->platform_file, c->gpu);
        fprintf(f, "       from: %s (%s), the links of the platform file\n", c->gpu, s->gpu);
    } else {
        fprintf(f, "dtsim: %s: %d nodes x %d %s, %s %g GB/s %g us inside a node, %d x %g Gb/s "
                   "(%g GB/s) NIC, %g us per link, %s%s\n", c->name, c->nodes,
                c->gpus_per_node, c->gpu, dt_intra_kind_name(c->intra), c->intra_bw / 1e9,
                c->intra_lat * 1e6, c->nics, 8 * c->nic_bw / 1e9, c->nic_bw / 1e9,
                c->net_lat * 1e6, topo_name(c->topo), over);
        fprintf(f, "       from: %s (%s), %d per node (%s), %s (%s) at %g GB/s (%s), %g us "
                   "(%s), %d NIC%s (%s) at %g Gb/s (%s), %g us per link (%s), %s (%s), %s (%s)\n",
                c->gpu, s->gpu, c->gpus_per_node, s->gpn, dt_intra_kind_name(c->intra),
                s->intra, c->intra_bw / 1e9, s->intra_bw, c->intra_lat * 1e6, s->intra_lat,
                c->nics, c->nics > 1 ? "s" : "", s->nics, 8 * c->nic_bw / 1e9, s->nic_bw,
                c->net_lat * 1e6, s->net_lat, topo_name(c->topo), s->topo,
                dtsim_prec_name(o), s->prec);
    }
    char gb[40] = "";
    if (!o->sweep) snprintf(gb, sizeof gb, " (global batch %d)", o->global_batch);
    fprintf(f, "       %s, %d %s per %s%s, %s%s, %s, allreduce %s%s%s, fusion %s, %s\n",
            o->model, o->per_gpu_batch, dtsim_samples(o),
            dtsim_is_3d(o) ? "data-parallel replica" : "GPU", gb, dtsim_prec_name(o),
            !dtsim_seq_tokens(o) ? "" : o->flash ? ", flash attention" : ", naive attention",
            dtsim_optim_label(o),
            o->sweep ? "(swept)" : dt_algo_name(o->coll.algo), o->coll.wire_f16 ? " fp16" : "",
            o->coll.sharp ? " (between nodes in the switches: --sharp)" : "", fus,
            o->overlap ? "overlapping backward" : "after backward");
}

// What an epoch counts: "images", or "sequences of T tokens" (gpt models)
static void samples_of(const dtsim_opts *o, char *buf, size_t n) {
    int T = dtsim_seq_tokens(o);
    if (T > 0) snprintf(buf, n, "sequences of %d tokens", T);
    else snprintf(buf, n, "%s", dtsim_samples(o));
}

// Time-to-train with its band, GPU-hours (and cost, --price-gpu-hour) with the same band,
// and what the band does not cover.
static void print_band(FILE *f, const dtsim_opts *o, const dtsim_result *r) {
    char t[32], lo[32], hi[32], basis[224], bt[48];
    double l = r->band_lo, h = r->band_hi;
    dtsim_band(o, basis, sizeof basis, NULL, NULL);
    dtsim_band_text(r, bt, sizeof bt);
    dtsim_duration(r->train_s, t, sizeof t);
    dtsim_duration(r->train_s * (1 + l), lo, sizeof lo);
    dtsim_duration(r->train_s * (1 + h), hi, sizeof hi);
    char what[48];
    samples_of(o, what, sizeof what);
    fprintf(f, "time-to-train: %s %s (%s to %s; %s), %g epochs of %.0f %s%s\n", t, bt, lo, hi,
            basis, o->epochs, o->dataset, what,
            dtsim_batch_beyond(o, r->global_batch) ? " (if they reach the accuracy at this "
                                                      "batch: see the warning)" : "");
    fprintf(f, "GPU-hours: %.1f %s (%.1f to %.1f)", r->gpu_hours, bt, r->gpu_hours * (1 + l),
            r->gpu_hours * (1 + h));
    if (o->price > 0)
        fprintf(f, "; cost at %g per GPU-hour: %.2f (%.2f to %.2f)", o->price,
                r->gpu_hours * o->price, r->gpu_hours * o->price * (1 + l),
                r->gpu_hours * o->price * (1 + h));
    fprintf(f, "; two runs closer than the band are a tie\n");
    print_calibration(f, o, r);
}

void dtsim_print_sweep_band(FILE *f, const dtsim_opts *o, const dtsim_result *r, int n) {
    char basis[224], bt[48] = "";
    dtsim_band(o, basis, sizeof basis, NULL, NULL);
    if (n > 0) dtsim_band_text(&r[0], bt, sizeof bt);
    int beyond = 0;
    for (int i = 0; i < n; i++) beyond |= dtsim_batch_beyond(o, r[i].global_batch);
    char what[48];
    samples_of(o, what, sizeof what);
    fprintf(f, "train: %s (%s), %g epochs of %.0f %s%s\n", bt, basis, o->epochs,
            o->dataset, what, beyond ? "; some batches beyond the published (see the warning)" : "");
    if (n > 0) print_calibration(f, o, &r[0]);
}

void dtsim_print_result(FILE *f, const dtsim_opts *o, const dtsim_result *r, int sweep_row) {
    char ep[32], tt[32];
    dtsim_duration(r->epoch_s, ep, sizeof ep);
    dtsim_duration(r->train_s, tt, sizeof tt);
    char rate[24];
    snprintf(rate, sizeof rate, "%s/s", dtsim_samples(o));
    if (!sweep_row)
        fprintf(f, "%6s %8s %7s %6s %10s %10s %10s %10s %11s %6s %9s %9s %7s\n", "GPUs",
                "batch", "algo", "bucket", "iter ms", "compute", "comm", "exposed", rate,
                "eff %", "epoch", "train", "wall s");
    fprintf(f, "%6d %8d %7s %6d %10.2f %10.2f %10.2f %10.2f %11.0f %6.1f %9s %9s %7.1f\n",
            r->gpus, r->global_batch, r->algo, r->buckets, 1e3 * r->iter_s, 1e3 * r->compute_s,
            1e3 * r->comm_s, 1e3 * r->exposed_s, r->images_s, 100 * r->efficiency, ep, tt,
            r->wall_s);
    if (!o->sweep && r->auto_n) {
        fprintf(f, "auto: the fastest simulated step of");
        for (int i = 0; i < r->auto_n; i++)
            fprintf(f, "%s %s %.2f ms", i ? "," : "", r->auto_algo[i], 1e3 * r->auto_iter_s[i]);
        fprintf(f, " (the algorithms the cost model priced within 4x of its cheapest); the cost "
                   "model alone picks %s\n", r->auto_model_pick);
    }
    if (!o->sweep) {
        if (!dtsim_is_3d(o))  // (3D: no GPU holds the model; the layout's lines say more)
            fprintf(f, "one GPU: %.2f ms per iteration (%.0f %s/s)\n", 1e3 * r->single_iter_s,
                    r->per_gpu_batch / r->single_iter_s, dtsim_samples(o));
        print_band(f, o, r);
    }
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
    if (!o->sweep) dtsim_gpt_report(f, o, r);
    fflush(f);
}

static void write_csv_rows(FILE *f, const dtsim_opts *o, const dtsim_result *r, int n) {
    fprintf(f, "gpus,global_batch,algo,buckets,iter_s,compute_s,comm_s,exposed_s,%s_per_s,"
               "efficiency,epoch_s,train_s,single_gpu_iter_s,band,gpu_hours,cost\n",
            dtsim_samples(o));
    for (int i = 0; i < n; i++) {
        fprintf(f, "%d,%d,%s,%d,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,"
                   "%.17g,",
                r[i].gpus, r[i].global_batch, r[i].algo, r[i].buckets, r[i].iter_s,
                r[i].compute_s, r[i].comm_s, r[i].exposed_s, r[i].images_s, r[i].efficiency,
                r[i].epoch_s, r[i].train_s, r[i].single_iter_s, r[i].band, r[i].gpu_hours);
        if (o->price > 0) fprintf(f, "%.17g", r[i].gpu_hours * o->price);
        fprintf(f, "\n");
    }
}

int dtsim_write_csv(const dtsim_opts *o, const char *path, const dtsim_result *r, int n) {
    dt_atomic_file a;
    dt_error err;
    if (!strcmp(path, "-")) {
        write_csv_rows(stdout, o, r, n);
        return fflush(stdout) ? -1 : 0;
    }
    if (dt_atomic_open(&a, path, "--csv", &err)) {
        fprintf(stderr, "dtsim: %s\n", err.msg);
        return -1;
    }
    write_csv_rows(a.f, o, r, n);
    if (dt_atomic_finish(&a, &err) || dt_atomic_commit(&a, &err)) {
        fprintf(stderr, "dtsim: --csv %s: %s\n", path, err.msg);
        return -1;
    }
    return 0;
}

// One row: the simulated figures, the cluster's and where each came from, the band. Every
// real with 17 significant digits (nn/json_write.c's default): the bits of the simulated
// figures, so two runs compare exactly (docs/conventions.md, "Same bits everywhere").
static void json_row(dt_json_writer *w, const dtsim_opts *o, const dtsim_result *r,
                     const char *basis) {
    const dt_cluster *c = &o->cluster;
    dt_json_begin_object(w, NULL);
    dt_json_write_int(w, "gpus", r->gpus);
    dt_json_write_int(w, "global_batch", r->global_batch);
    dt_json_write_string(w, "algo", r->algo);
    dt_json_write_bool(w, "sharp", o->coll.sharp);
    dt_json_write_int(w, "buckets", r->buckets);
    dt_json_write_real(w, "iter_s", r->iter_s);
    dt_json_write_real(w, "compute_s", r->compute_s);
    dt_json_write_real(w, "comm_s", r->comm_s);
    dt_json_write_real(w, "exposed_s", r->exposed_s);
    dt_json_write_real(w, "images_per_s", r->images_s);
    dt_json_write_real(w, "efficiency", r->efficiency);
    dt_json_write_real(w, "epoch_s", r->epoch_s);
    dt_json_write_real(w, "train_s", r->train_s);
    dt_json_write_real(w, "single_gpu_iter_s", r->single_iter_s);
    dt_json_write_real(w, "model_comm_s", r->model_comm_s);
    dt_json_write_real(w, "roofline_single_gpu_iter_s", r->roofline_iter_s);
    dt_json_write_real(w, "time_scale", r->time_scale);
    dt_json_write_int(w, "params", r->params);
    dt_json_write_real(w, "band", r->band);
    dt_json_write_real(w, "band_low", r->band_lo);
    dt_json_write_real(w, "band_high", r->band_hi);
    dt_json_write_real(w, "train_s_low", r->train_s * (1 + r->band_lo));
    dt_json_write_real(w, "train_s_high", r->train_s * (1 + r->band_hi));
    dt_json_write_real(w, "gpu_hours", r->gpu_hours);
    dt_json_write_real(w, "gpu_hours_low", r->gpu_hours * (1 + r->band_lo));
    dt_json_write_real(w, "gpu_hours_high", r->gpu_hours * (1 + r->band_hi));
    if (o->price > 0) {
        double cost = r->gpu_hours * o->price;
        dt_json_write_real(w, "price_gpu_hour", o->price);
        dt_json_write_real(w, "cost", cost);
        dt_json_write_real(w, "cost_low", cost * (1 + r->band_lo));
        dt_json_write_real(w, "cost_high", cost * (1 + r->band_hi));
    }
    dt_json_write_string(w, "band_basis", basis);
    char cal[96];
    dt_json_write_string(w, "calibration", dtsim_calib_status(o, cal, sizeof cal));
    if (o->calib_row) dt_json_write_string(w, "calibration_source", o->calib_row->source);
    dt_json_write_bool(w, "batch_beyond_published", dtsim_batch_beyond(o, r->global_batch));
    dt_json_write_bool(w, "analytic", o->analytic != 0);
    dt_json_begin_array(w, "warnings");
    for (int i = 0; i < o->n_warnings; i++) dt_json_write_string(w, NULL, o->warnings[i]);
    dt_json_end_array(w);
    dt_json_write_string(w, "gpu", c->gpu);
    dt_json_write_string(w, "precision", dtsim_prec_name(o));
    if (!o->platform_file[0]) {
        dt_json_write_int(w, "gpus_per_node", c->gpus_per_node);
        dt_json_write_string(w, "intra", dt_intra_kind_name(c->intra));
        dt_json_write_real(w, "intra_bw_gbs", c->intra_bw / 1e9);
        dt_json_write_int(w, "nics", c->nics);
        dt_json_write_real(w, "nic_bw_gbs", c->nic_bw / 1e9);
        dt_json_write_real(w, "net_lat_us", c->net_lat * 1e6);
        // the sources as one object (key: the figure, value: where it came from)
        dt_json_begin_object(w, "sources");
        const char *keys[] = {"gpu", "gpus_per_node", "intra", "intra_bw", "intra_lat", "nics",
                              "nic_bw", "net_lat", "topology", "precision"};
        const char *vals[] = {o->src.gpu, o->src.gpn, o->src.intra, o->src.intra_bw,
                              o->src.intra_lat, o->src.nics, o->src.nic_bw, o->src.net_lat,
                              o->src.topo, o->src.prec};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            dt_json_write_string(w, keys[k], vals[k]);
        dt_json_end_object(w);
    }
    dt_json_write_real(w, "iter_p50_s", r->iter_p50_s);
    dt_json_write_real(w, "iter_p95_s", r->iter_p95_s);
    dt_json_write_real(w, "iter_max_s", r->iter_max_s);
    if (o->straggler[0]) {
        dt_json_write_string(w, "straggler", o->straggler);
        dt_json_write_real(w, "perfect_iter_s", r->perfect_iter_s);
    }
    if (r->has_goodput) {
        dt_json_write_real(w, "mtbf_s", r->mtbf_s);
        dt_json_write_real(w, "ckpt_bytes", r->ckpt_bytes);
        dt_json_write_real(w, "ckpt_write_bw", r->ckpt_write_bw);
        dt_json_write_real(w, "ckpt_interval_s", r->ckpt_interval_s);
        dt_json_write_real(w, "ckpt_stall_s", r->ckpt_stall_s);
        dt_json_write_real(w, "restart_s", r->restart_total_s);
        dt_json_write_real(w, "young_interval_s", r->young_s);
        dt_json_write_real(w, "daly_interval_s", r->daly_s);
        dt_json_write_real(w, "failures", r->failures);
        dt_json_write_real(w, "goodput", r->goodput);
        dt_json_write_real(w, "train_with_failures_s", r->wall_train_s);
        dt_json_write_real(w, "train_with_failures_mc_s", r->mc_wall_s);
        dt_json_write_real(w, "train_with_failures_mc_ci_s", r->mc_ci_s);
    }
    dtsim_gpt_json(w, o, r);
    if (r->auto_n) {
        dt_json_write_string(w, "auto_model_pick", r->auto_model_pick);
        dt_json_begin_object(w, "auto_iter_s");
        for (int k = 0; k < r->auto_n; k++)
            dt_json_write_real(w, r->auto_algo[k], r->auto_iter_s[k]);
        dt_json_end_object(w);
    }
    dt_json_end_object(w);
}

void dtsim_print_json(const dtsim_opts *o, const dtsim_result *r, int n) {
    char basis[224];
    dtsim_band(o, basis, sizeof basis, NULL, NULL);
    dt_json_writer w;
    dt_json_writer_init(&w, stdout);
    dt_json_begin_array(&w, NULL);
    for (int i = 0; i < n; i++) json_row(&w, o, &r[i], basis);
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
    char ylabel[32];
    snprintf(ylabel, sizeof ylabel, "%s/s (log)", dtsim_samples(o));
    dt_plot_opts po = {title, "GPUs", ylabel, 0, 0, 1, 0, 1};
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
