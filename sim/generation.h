// generation.h — what a GPU generation brings to a cluster the user describes only in part:
// the link inside its node (the kind of the generation's reference board and the figure of
// every kind for that GPU) and the NIC of its era (docs/hardware.md, "Per-generation
// defaults"); and how dtsim reads bandwidths (units) and tells an implausible one (a figure
// beyond any link that exists, most likely a unit mistake).
// Not here: the GPUs' compute (gpu.h), the cluster description itself (platform.h).
#ifndef DT_SIM_GENERATION_H
#define DT_SIM_GENERATION_H

#include <stddef.h>

#include "platform.h"

typedef struct {
    const char *gpu;            // "h100" (gpu.h's profile name)
    dt_intra_kind intra;        // the kind of the generation's 8-GPU reference board
    dt_intra_kind intra_small;  // the kind of its boards of 4 GPUs or fewer
    double intra_bw[3];         // bytes/s one direction per GPU pair path (PCIe: per node),
                                // indexed by dt_intra_kind; 0: no such link for this GPU
    const char *intra_what[3];  // the link each figure is (docs/hardware.md)
    double nic_bw;              // bytes/s one direction, the NIC of its era
    const char *nic_what;       // "NDR InfiniBand, 400 Gb/s"
    int nics8;                  // compute NICs of the reference 8-GPU node (DGX H100: 8)
    const char *nics_what;      // "DGX H100: 8 ConnectX-7, one per GPU"
} dt_generation;

// The generation of GPU profile `gpu` (case-insensitive); NULL if unknown.
const dt_generation *dt_generation_find(const char *gpu);
// The generation's intra-node link kind for nodes of gpus_per_node GPUs
dt_intra_kind dt_generation_intra(const dt_generation *g, int gpus_per_node);
// Its NICs for nodes of gpus_per_node GPUs: the reference node's per GPU, at least one
int dt_generation_nics(const dt_generation *g, int gpus_per_node);
const char *dt_intra_kind_name(dt_intra_kind k);  // "NVLink", "NVSwitch", "PCIe"

// The fastest links that exist, the bounds of dt_bandwidth_check: a NIC of 800 Gb/s
// (XDR InfiniBand, ConnectX-8; 800 GbE) and NVLink 5 (Blackwell: 1.8 TB/s per GPU both
// directions, 900 GB/s one direction).
#define DT_NIC_MAX_BW (800e9 / 8)
#define DT_INTRA_MAX_BW 900e9

// How a bandwidth was written: a plain number (GB/s, dtsim's unit), bits or bytes per second.
typedef enum { DT_BW_PLAIN, DT_BW_BITS, DT_BW_BYTES } dt_bw_unit;

// Parse a bandwidth: a positive number, optionally followed by a unit Mb, Gb, Tb (bits) or
// MB, GB, TB (bytes), each with "/s" or "ps" optional ("400Gb", "400Gb/s", "400Gbps",
// "50GB/s"); a plain number is GB/s. Into *bytes_s (bytes per second) and *unit. -1 with
// DT_EXIT_USAGE naming `opt` on anything else (a lower-case "gb" is refused as ambiguous).
int dt_parse_bandwidth(const char *s, const char *opt, double *bytes_s, dt_bw_unit *unit,
                       dt_error *err);

// 1 when bytes_s, given to `opt` as `typed` in `unit`, is beyond every link of its kind
// (nic: 1 for a NIC, 0 for a link inside a node), with a message naming the option, the
// bound and the likely unit mistake; 0 when plausible.
int dt_bandwidth_check(const char *opt, const char *typed, double bytes_s, dt_bw_unit unit,
                       int nic, char *msg, size_t size);

#endif
