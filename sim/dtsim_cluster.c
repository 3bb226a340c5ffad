// dtsim_cluster.c — the cluster of dtsim's command line and where each of its figures came
// from. A preset keeps its paper's hardware; otherwise the GPU's generation brings its node
// and network (sim/generation.c, docs/hardware.md "Per-generation defaults": an H100 node is
// NVSwitch at 450 GB/s with a 400 Gb/s NDR NIC, a V100 node the NVLink 2.0 cube-mesh and EDR
// of dtsim's default cluster), and `--intra KIND` alone takes that kind's figure for the
// GPU. The user's figures go over both; a bandwidth beyond any link that exists is most
// likely a unit mistake (Gb/s typed where GB/s is meant): a warning that says so, an error
// under --strict.
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dtsim.h"

#define US 1e-6

static void set(char *dst, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set(char *dst, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, n, fmt, ap);
    va_end(ap);
}
#define SET(field, ...) set(o->src.field, sizeof o->src.field, __VA_ARGS__)

// The intra-node link of kind k for the cluster's GPU: its bandwidth and latency (1 us over
// NVLink and NVSwitch, 2 us over PCIe: sim/platform.c), with the source. 2 when the GPU has
// no such link and the user gave no bandwidth.
static int intra_of_generation(dtsim_opts *o, dt_intra_kind k, int bw_given) {
    dt_cluster *c = &o->cluster;
    const dt_generation *g = dt_generation_find(c->gpu);
    c->intra = k;
    c->intra_lat = k == DT_INTRA_PCIE ? 2 * US : 1 * US;
    SET(intra_lat, "default for %s", dt_intra_kind_name(k));
    if (bw_given) return 0;
    if (!g || !(g->intra_bw[k] > 0)) {
        fprintf(stderr, "dtsim: option --intra %s: the %s has no %s; give its bandwidth with "
                        "--intra-bw to model one anyway\n", k == DT_INTRA_NVSWITCH ? "nvswitch"
                : k == DT_INTRA_PCIE ? "pcie" : "nvlink", c->gpu, dt_intra_kind_name(k));
        return 2;
    }
    c->intra_bw = g->intra_bw[k];
    SET(intra_bw, "%s generation: %s", g->gpu, g->intra_what[k]);
    return 0;
}

int dtsim_cluster_begin(dtsim_opts *o, const dtsim_cluster_args *a) {
    dt_cluster *c = &o->cluster;
    char base[48];
    if (a->preset) snprintf(base, sizeof base, "preset %s", c->name);
    else snprintf(base, sizeof base, "default");
    SET(gpu, "%s", a->gpu ? "--gpu" : base);
    SET(gpn, "%s", a->gpn ? "--gpus-per-node" : base);
    SET(intra, "%s", base), SET(intra_bw, "%s", base), SET(intra_lat, "%s", base);
    SET(nics, "%s", base), SET(nic_bw, "%s", base), SET(net_lat, "%s", base);
    SET(topo, "%s", base);
    if (a->gpn) c->gpus_per_node = a->gpn;
    if (a->gpus) c->nodes = (a->gpus + c->gpus_per_node - 1) / c->gpus_per_node;
    if (a->gpu) snprintf(c->gpu, sizeof c->gpu, "%s", dt_gpu_find(a->gpu)->name);
    const dt_generation *g = dt_generation_find(c->gpu);
    dt_intra_kind kind = c->intra;
    if (a->intra) {
        if (!strcmp(a->intra, "nvlink")) kind = DT_INTRA_NVLINK;
        else if (!strcmp(a->intra, "nvswitch")) kind = DT_INTRA_NVSWITCH;
        else if (!strcmp(a->intra, "pcie")) kind = DT_INTRA_PCIE;
        else {
            fprintf(stderr, "dtsim: option --intra: '%s' is not nvlink, nvswitch or pcie (see "
                            "dtsim --help)\n", a->intra);
            return 2;
        }
        SET(intra, "--intra");
        if (intra_of_generation(o, kind, a->intra_bw > 0)) return 2;
    }
    if (a->preset || !g) return 0;  // a preset's hardware is its paper's
    // a custom cluster: the GPU generation's node and network
    if (!a->intra) {
        SET(intra, "%s generation", g->gpu);
        if (intra_of_generation(o, dt_generation_intra(g, c->gpus_per_node), a->intra_bw > 0))
            return 2;
    }
    c->nic_bw = g->nic_bw;
    SET(nic_bw, "%s generation: %s", g->gpu, g->nic_what);
    c->nics = dt_generation_nics(g, c->gpus_per_node);
    SET(nics, "%s generation: %s", g->gpu, g->nics_what);
    return 0;
}

// An implausible bandwidth: a warning, or under --strict an error (2)
static int plausible(dtsim_opts *o, const char *opt, const char *typed, double bw,
                     dt_bw_unit unit, int nic) {
    char msg[512];
    if (!typed || !dt_bandwidth_check(opt, typed, bw, unit, nic, msg, sizeof msg)) return 0;
    if (!o->strict) dtsim_warn_json(o, msg);
    fprintf(stderr, "dtsim: %s%s%s\n", o->strict ? "" : "warning: ", msg,
            o->strict ? " (--strict: refused)" : "");
    return o->strict ? 2 : 0;
}

int dtsim_cluster_finish(dtsim_opts *o, const dtsim_cluster_args *a) {
    dt_cluster *c = &o->cluster;
    if (a->intra_bw > 0) c->intra_bw = a->intra_bw, SET(intra_bw, "--intra-bw");
    if (a->net_bw > 0) c->nic_bw = a->net_bw, SET(nic_bw, "--net-bw");
    if (a->nics) c->nics = a->nics, SET(nics, "--nics");
    if (a->net_lat > 0) c->net_lat = a->net_lat, SET(net_lat, "--net-lat");
    if (a->topo) {
        if (!strcmp(a->topo, "flat")) c->topo = DT_TOPO_FLAT;
        else if (!strcmp(a->topo, "fat-tree")) c->topo = DT_TOPO_FAT_TREE;
        else if (!strcmp(a->topo, "torus")) c->topo = DT_TOPO_TORUS;
        else if (!strcmp(a->topo, "dragonfly")) c->topo = DT_TOPO_DRAGONFLY;
        else if (!strcmp(a->topo, "rail")) c->topo = DT_TOPO_RAIL;
        else {
            fprintf(stderr, "dtsim: option --topology: '%s' is not flat, fat-tree, rail, torus "
                            "or dragonfly (see dtsim --help)\n", a->topo);
            return 2;
        }
        c->topo_params[0] = 0;
        SET(topo, "--topology");
    }
    if (a->oversub > 0) {
        if (c->topo != DT_TOPO_FAT_TREE && c->topo != DT_TOPO_RAIL) {
            fprintf(stderr, "dtsim: option --oversubscription: for a fat tree (--topology "
                            "fat-tree or rail); this cluster's network is not one\n");
            return 2;
        }
        c->oversubscription = a->oversub, c->topo_params[0] = 0;
        SET(topo, "--oversubscription");
    }
    if (plausible(o, "--intra-bw", a->intra_typed, a->intra_bw, a->intra_unit, 0) ||
        plausible(o, "--net-bw", a->net_typed, a->net_bw, a->net_unit, 1))
        return 2;
    return 0;
}

// A preset's paper set-up (sim/platform.c): its precision, optimizer, allreduce and wire
// format, where the user did not choose their own.
int dtsim_preset_training(const dt_cluster *c, dtsim_opts *o, int prec_set,
                          int optim_set, int algo_set, int inner_set) {
    dt_error err;
    if (!prec_set && !strcmp(c->precision, "fp16")) o->prec = DT_PREC_FP16;
    if (!prec_set && !strcmp(c->precision, "tf32")) o->prec = DT_PREC_TF32;
    if (!optim_set && c->optimizer[0]) o->lars = !strcmp(c->optimizer, "lars");
    if (!algo_set && c->algo[0] && dt_algo_parse(c->algo, "--preset", &o->coll.algo, &err))
        return fprintf(stderr, "dtsim: %s\n", err.msg), 2;
    if (!inner_set && c->inner[0] && dt_algo_parse(c->inner, "--preset", &o->coll.inner, &err))
        return fprintf(stderr, "dtsim: %s\n", err.msg), 2;
    if (c->fp16_grads) o->coll.wire_f16 = 1;
    return 0;
}

int dtsim_precision(dtsim_opts *o, const dt_gpu_profile *g, int prec_set, int preset_prec) {
    if (prec_set) {
        const char *p = o->prec_name;
        o->prec = !strcmp(p, "fp32") ? DT_PREC_FP32 : !strcmp(p, "tf32") ? DT_PREC_TF32
                                                                       : DT_PREC_FP16;
        o->bf16 = !strcmp(p, "bf16");
        if (o->bf16 && g && !g->bf16) {
            fprintf(stderr, "dtsim: option --precision bf16: the %s has no bf16 math (A100 and "
                            "later have it); its mixed precision is fp16\n", g->name);
            return 2;
        }
        SET(prec, "--precision");
    } else if (preset_prec) {
        SET(prec, "preset");
    } else {
        o->prec = dt_gpu_default_precision(g, &o->bf16);
        SET(prec, "%s", o->prec == DT_PREC_FP32 ? "default: no tensor cores"
            : "default: mixed precision on its tensor cores; --precision fp32 to opt out");
    }
    return 0;
}

const char *dtsim_prec_name(const dtsim_opts *o) {
    return o->bf16 && o->prec == DT_PREC_FP16 ? "bf16" : dt_precision_name(o->prec);
}
