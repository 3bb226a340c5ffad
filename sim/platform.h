// platform.h — GPU clusters for SimGrid: a description (nodes × GPUs per node, the links
// inside a node, the network between nodes and its topology), the presets of the landmark
// runs (docs/hardware.md, the clusters of the landmark runs), and the writer of the SimGrid
// platform XML and SMPI hostfile that dtsim hands to SimGrid.
//
// Model (why it is built this way): one SimGrid host per NODE with one core per GPU (ranks
// are GPUs: gpus_per_node ranks per host, so their injected compute runs concurrently), the
// node's private link is its NICs together (count × bandwidth: a node's GPUs share them, as
// they do), and the traffic between two GPUs of the same node crosses the host's loopback
// link, given the intra-node figures: NVSwitch/NVLink as a FATPIPE (every pair at full
// speed: non-blocking), PCIe as SHARED (the GPUs of a node share one switch's bandwidth).
// (SimGrid 3.32's <cluster> always makes its loopback FATPIPE: PCIe is SHARED on a FLAT
// network only, written as an explicit zone; see sim/platform_write.c.)
// Between nodes, SimGrid's cluster topologies: a flat crossbar, FAT_TREE, TORUS, DRAGONFLY.
// Not here: GPU compute (sim/gpu.h), running SimGrid (sim/dtsim.c).
#ifndef DT_SIM_PLATFORM_H
#define DT_SIM_PLATFORM_H

#include <stdio.h>

#include "dt.h"

typedef enum { DT_INTRA_NVLINK, DT_INTRA_NVSWITCH, DT_INTRA_PCIE } dt_intra_kind;
// DT_TOPO_RAIL: a rail-optimised fat tree (NVIDIA's SuperPOD design: NIC i of every node on
// rail i's leaf switch, one leaf per rail for each scalable unit of DT_RAIL_LEAF nodes).
// SimGrid sees a fat tree whose leaves hold a unit's nodes, the node's NICs together being
// one link as everywhere here: what rails change is that the nodes of a unit reach each
// other through a leaf, never the spine (a leaf of a plain fat tree holds the few nodes whose
// every NIC it takes); --oversubscription thins the units' up links to the spine.
typedef enum {
    DT_TOPO_FLAT, DT_TOPO_FAT_TREE, DT_TOPO_TORUS, DT_TOPO_DRAGONFLY, DT_TOPO_RAIL
} dt_topo_kind;
#define DT_RAIL_LEAF 32  // nodes per rail leaf: a 64-port NDR switch, half its ports down

typedef struct {
    char name[32];            // preset name or "custom"
    char gpu[16];             // GPU profile name (sim/gpu.h)
    int nodes, gpus_per_node;
    dt_intra_kind intra;
    double intra_bw;          // bytes/s per GPU pair path (NVLink/NVSwitch) or per node (PCIe)
    double intra_lat;         // seconds
    double nic_bw;            // bytes/s per NIC, one direction
    int nics;                 // NICs per node
    double net_lat;           // seconds per link
    dt_topo_kind topo;
    char topo_params[64];     // SimGrid topo_parameters; "" = chosen for `nodes`
    double oversubscription;  // fat tree: up-link bandwidth divisor (1 = non-blocking)
    // the training set-up the preset's paper used (dtsim defaults when a preset is chosen;
    // empty strings and zeros: dtsim's own defaults)
    char model[32];
    int per_gpu_batch;
    char precision[8];        // "fp32", "fp16" (the paper's compute precision)
    char optimizer[8];        // "sgd", "lars"
    char algo[16], inner[8];  // the paper's allreduce as dtsim's --algo / --inner
    int fp16_grads;           // gradients in fp16 on the wire
    double gpu_img_s;         // calibration: images/s of one GPU in the paper's framework at
                              // per_gpu_batch (0: the roofline's own figure); bench/PAPERS.md
    char notes[160];          // where the figures come from
    // the scaling efficiency the paper publishes (0: none): paper_eff at paper_eff_gpus,
    // against paper_eff_base GPUs (its definition: per-GPU throughput over the base's);
    // dtsim sweep --plot marks it (bench/papers.py cites the table or section)
    int paper_eff_gpus, paper_eff_base;
    double paper_eff;
    int seq_len, vocab;       // a transformer preset's tokens per sequence and vocabulary
                              // (0: the model's own; sim/dtsim_gpt.c applies them)
} dt_cluster;

// Presets: goyal2017 cho2017 akiba2017 jia2018 mikami2018 dgx-h100 dle-bert (a transformer:
// sim/dtsim_gpt.c applies its sequence and vocabulary), sized to `gpus` GPUs
// (0 = the paper's size). Unknown name or a GPU count that is not a multiple of the node's
// GPUs: -1 with DT_EXIT_USAGE and a message listing the presets.
int dt_cluster_preset(const char *name, int gpus, dt_cluster *out, dt_error *err);
const char *dt_cluster_preset_names(void);
// A custom cluster (the defaults when no preset is named): V100 nodes of 8 with NVLink, EDR
// InfiniBand, fat tree.
dt_cluster dt_cluster_default(int gpus);

// Check a description (positive sizes, finite speeds, topology parameters consistent with
// `nodes`); -1 with DT_EXIT_USAGE naming the field.
int dt_cluster_check(const dt_cluster *c, dt_error *err);

// The SimGrid topo_parameters the platform will use: c->topo_params when set, else the ones
// derived from `nodes` (FAT_TREE: two levels, leaves of up to 16 nodes, up links divided by
// the oversubscription; TORUS: as cubic as possible; DRAGONFLY: balanced); "" for FLAT.
// -1 with DT_EXIT_USAGE if c is invalid. (Added by the platform generator.)
int dt_cluster_topology(const dt_cluster *c, char *params, size_t size, dt_error *err);

// Write the SimGrid platform (hosts node-0 .. node-{nodes-1}) and a hostfile listing each
// node gpus_per_node times, atomically (temporary name, fsync, rename). -1 with err.
int dt_cluster_write(const dt_cluster *c, const char *xml_path, const char *hostfile_path,
                     dt_error *err);

// The α-β figures the cost model should use for this cluster: inter-node (through the NIC
// and the topology's hops) and intra-node (loopback).
void dt_cluster_cost(const dt_cluster *c, double *alpha, double *beta, double *alpha_intra,
                     double *beta_intra);

// Check a user platform file (--platform FILE.xml): readable, XML with a <platform> root,
// and count its hosts (for "more GPUs than the platform has"); -1 with DT_EXIT_USAGE.
int dt_platform_file_hosts(const char *xml_path, int *hosts, dt_error *err);
// The same check, also counting cores (a host's core="k", default 1: GPU slots when ranks
// are GPUs). cores may be NULL. (Added by the platform generator.)
int dt_platform_file_count(const char *xml_path, int *hosts, int *cores, dt_error *err);

#endif
