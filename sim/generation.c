// generation.c — each GPU generation's node and network (generation.h), and dtsim's
// bandwidth arguments: units and plausibility.
//
// Figures (docs/hardware.md, "Links and networks" and "Per-generation defaults"; one
// direction). NVLink: 1.0 (P100) 20 GB/s per link, 2.0 (V100), 3 (A100) and 4 (H100)
// 25 GB/s per link; a GPU has 4, 6, 12 and 18 links. The 8-GPU reference boards: DGX-1
// (P100, V100) a cube-mesh of one link per GPU pair, the figure dtsim's default cluster has
// always used for V100; HGX/DGX A100 and H100 an NVSwitch that gives every GPU all its links
// (600 and 900 GB/s both directions: 300 and 450). DGX-2 (V100) has an NVSwitch of 6 links
// per GPU: 150. Boards of 4 A100 or H100 have no switch; their GPUs' links split over the 3
// peers (ASSUMED even: 4 links, 100 GB/s, and 6 links, 150 GB/s per pair). P100 and P40 have
// no NVSwitch, P40 no NVLink. PCIe per node: 3.0 x16 ~12 GB/s, 4.0 24, 5.0 48 (the host
// links of gpu_profiles.c). NICs of each era: EDR InfiniBand 100 Gb/s (P100, V100; the
// 100 Gb/s RoCE of Jia et al. for P40), HDR 200 Gb/s (A100), NDR 400 Gb/s (H100).
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "generation.h"

#define GBs 1e9

// {nvlink, nvswitch, pcie} in dt_intra_kind's order. NICs of the reference nodes (their
// compute fabric, storage NICs not counted): DGX-1 (P100 and V100) 4 x EDR InfiniBand; DGX
// A100 8 x HDR (ConnectX-6), DGX H100 and HGX H200 8 x NDR (ConnectX-7), one per GPU; P40
// servers one 100 Gb/s NIC (Jia et al. 2018's cluster); H100 PCIe servers, no reference
// node: one NDR NIC per two GPUs ASSUMED, PCIe 5.0 between the GPUs (NVLink bridges join
// pairs only). ABCI's 4-V100 nodes have 2 x EDR: the same NIC per two GPUs as DGX-1.
static const dt_generation gens[] = {
    {"p100", DT_INTRA_NVLINK, DT_INTRA_NVLINK, {20 * GBs, 0, 12 * GBs},
     {"NVLink 1.0, one link per GPU pair (DGX-1 cube-mesh)", NULL, "PCIe 3.0 x16 per node"},
     12.5 * GBs, "EDR InfiniBand, 100 Gb/s", 4, "DGX-1: 4 x EDR, one per 2 GPUs"},
    {"p40", DT_INTRA_PCIE, DT_INTRA_PCIE, {0, 0, 12 * GBs},
     {NULL, NULL, "PCIe 3.0 x16 per node"}, 12.5 * GBs, "100 Gb/s (EDR InfiniBand, RoCE)", 1,
     "one per node (Jia et al. 2018)"},
    {"v100", DT_INTRA_NVLINK, DT_INTRA_NVLINK, {25 * GBs, 150 * GBs, 12 * GBs},
     {"NVLink 2.0, one link per GPU pair (DGX-1 cube-mesh)",
      "NVSwitch of DGX-2, 6 NVLink 2.0 links per GPU", "PCIe 3.0 x16 per node"},
     12.5 * GBs, "EDR InfiniBand, 100 Gb/s", 4, "DGX-1: 4 x EDR, one per 2 GPUs"},
    {"a100", DT_INTRA_NVSWITCH, DT_INTRA_NVLINK, {100 * GBs, 300 * GBs, 24 * GBs},
     {"NVLink 3, 4 links per GPU pair (4-GPU board, assumed)",
      "NVLink 3 / NVSwitch, 600 GB/s per GPU both directions", "PCIe 4.0 x16 per node"},
     25 * GBs, "HDR InfiniBand, 200 Gb/s", 8, "DGX A100: 8 x HDR, one per GPU"},
    {"a100-40", DT_INTRA_NVSWITCH, DT_INTRA_NVLINK, {100 * GBs, 300 * GBs, 24 * GBs},
     {"NVLink 3, 4 links per GPU pair (4-GPU board, assumed)",
      "NVLink 3 / NVSwitch, 600 GB/s per GPU both directions", "PCIe 4.0 x16 per node"},
     25 * GBs, "HDR InfiniBand, 200 Gb/s", 8, "DGX A100: 8 x HDR, one per GPU"},
    {"h100", DT_INTRA_NVSWITCH, DT_INTRA_NVLINK, {150 * GBs, 450 * GBs, 48 * GBs},
     {"NVLink 4, 6 links per GPU pair (4-GPU board, assumed)",
      "NVLink 4 / NVSwitch, 900 GB/s per GPU both directions", "PCIe 5.0 x16 per node"},
     50 * GBs, "NDR InfiniBand, 400 Gb/s", 8, "DGX H100: 8 x NDR, one per GPU"},
    {"h100-pcie", DT_INTRA_PCIE, DT_INTRA_PCIE, {0, 0, 48 * GBs},
     {NULL, NULL, "PCIe 5.0 x16 per node"}, 50 * GBs, "NDR InfiniBand, 400 Gb/s", 4,
     "one per 2 GPUs, assumed (no reference node)"},
    {"h200", DT_INTRA_NVSWITCH, DT_INTRA_NVLINK, {150 * GBs, 450 * GBs, 48 * GBs},
     {"NVLink 4, 6 links per GPU pair (4-GPU board, assumed)",
      "NVLink 4 / NVSwitch, 900 GB/s per GPU both directions", "PCIe 5.0 x16 per node"},
     50 * GBs, "NDR InfiniBand, 400 Gb/s", 8, "HGX H200: 8 x NDR, one per GPU"},
};

const dt_generation *dt_generation_find(const char *gpu) {
    for (size_t i = 0; gpu && i < sizeof gens / sizeof gens[0]; i++)
        if (!strcasecmp(gpu, gens[i].gpu)) return &gens[i];
    return NULL;
}

dt_intra_kind dt_generation_intra(const dt_generation *g, int gpus_per_node) {
    return gpus_per_node <= 4 ? g->intra_small : g->intra;
}

int dt_generation_nics(const dt_generation *g, int gpus_per_node) {
    int n = g->nics8 * gpus_per_node / 8;
    return n > 0 ? n : 1;
}

const char *dt_intra_kind_name(dt_intra_kind k) {
    return k == DT_INTRA_NVSWITCH ? "NVSwitch" : k == DT_INTRA_PCIE ? "PCIe" : "NVLink";
}

int dt_parse_bandwidth(const char *s, const char *opt, double *bytes_s, dt_bw_unit *unit,
                       dt_error *err) {
    static const char want[] = "a bandwidth: a number of GB/s, or with its unit, e.g. "
                               "400Gb, 400Gb/s, 50GB, 50GB/s";
    char *end;
    errno = 0;
    // a number from the first character (no blanks before it, no hexadecimal float)
    double v = s && !isspace((unsigned char)*s) && !strpbrk(s, "xX") ? strtod(s, &end) : NAN;
    if (!s || isnan(v) || end == s || errno || !isfinite(v) || v <= 0)
        return dt_fail(err, DT_EXIT_USAGE, "option %s: '%s' is not %s", opt, s ? s : "", want);
    while (*end == ' ') end++;
    if (!*end) {
        *bytes_s = v * 1e9, *unit = DT_BW_PLAIN;
        return 0;
    }
    double scale = *end == 'M' ? 1e6 : *end == 'G' ? 1e9 : *end == 'T' ? 1e12 : 0;
    const char *u = end + (scale > 0);
    int bits = *u == 'b', bytes = *u == 'B';
    const char *rest = u + (bits || bytes);
    if (bits && !strncmp(rest, "it", 2)) rest += 2;  // "Gbit/s"
    int tail_ok = !*rest || !strcmp(rest, "/s") || (bits && !strcmp(rest, "ps"));
    if (!(scale > 0) || !(bits || bytes) || !tail_ok) {
        if (scale == 0 && (*end == 'g' || *end == 'm' || *end == 't'))
            return dt_fail(err, DT_EXIT_USAGE, "option %s: '%s': write the prefix in capitals "
                           "and b for bits or B for bytes (e.g. %gGb or %gGB)", opt, s, v, v);
        if (scale > 0 && !(bits || bytes))
            return dt_fail(err, DT_EXIT_USAGE, "option %s: '%s': bits or bytes? write %gGb "
                           "(bits/s) or %gGB (bytes/s)", opt, s, v, v);
        return dt_fail(err, DT_EXIT_USAGE, "option %s: '%s' is not %s", opt, s, want);
    }
    *bytes_s = v * scale / (bits ? 8 : 1);
    *unit = bits ? DT_BW_BITS : DT_BW_BYTES;
    return 0;
}

int dt_bandwidth_check(const char *opt, const char *typed, double bytes_s, dt_bw_unit unit,
                       int nic, char *msg, size_t size) {
    double max = nic ? DT_NIC_MAX_BW : DT_INTRA_MAX_BW;
    if (!(bytes_s > max)) return 0;
    double gbs = bytes_s / 1e9, gbits = 8 * gbs;
    int n = snprintf(msg, size, "%s %s: %g GB/s (%g Gb/s) %s is beyond %s", opt, typed, gbs,
                     gbits, nic ? "per NIC" : "per direction inside a node",
                     nic ? "any NIC that exists (the fastest: 800 Gb/s = 100 GB/s)"
                         : "the fastest NVLink (NVLink 5: 900 GB/s one direction, 1.8 TB/s "
                           "both)");
    if (n < 0 || (size_t)n >= size) return 1;
    msg += n, size -= (size_t)n;
    if (unit != DT_BW_BITS && gbs / 8 <= max / 1e9)  // the figure was bits per second
        snprintf(msg, size, "; %s: if you meant %g Gb/s (%g GB/s), write %gGb",
                 unit == DT_BW_PLAIN ? "a plain number is GB/s" : "GB is bytes", gbs,
                 gbs / 8, gbs);
    else if (!nic && gbs / 2 <= max / 1e9)
        snprintf(msg, size, "; the figure is one direction: halve a both-directions figure");
    else if (nic)
        snprintf(msg, size, "; give one NIC's bandwidth and their count with --nics");
    return 1;
}
