// platform.c — the GPU clusters of the landmark runs as dt_cluster presets (the hardware of
// docs/hardware.md: links and networks, the clusters of the landmark runs), the default
// cluster, the check of a description, and the α-β figures a cluster gives the cost model
// (docs/formulas.md, α-β-γ collective costs). Not here: the SimGrid XML (platform_write.c),
// topologies (platform_topo.c), user platform files (platform_file.c).
//
// Units: bandwidths in bytes/s ONE direction, latencies in seconds. Link figures:
//   NVLink 1.0 (P100): 4 links, 160 GB/s both directions in all -> 20 GB/s per link per
//     direction. DGX-1-style hybrid cube-mesh (goyal2017): a GPU pair has one link, 20 GB/s.
//     IBM S822LC "Minsky" (cho2017): the two GPUs of a socket share two links, 40 GB/s.
//   NVLink 2.0 (V100): 6 links x 25 GB/s per direction; ABCI's 4-GPU nodes (mikami2018)
//     join every pair with two links: 50 GB/s. The default cluster's 8-GPU cube-mesh: 25.
//   NVLink 4 / NVSwitch (H100): 900 GB/s per GPU is both directions together: 450 GB/s.
//   PCIe 3.0 x16: ~12 GB/s, shared by the GPUs of a node (header: loopback SHARED).
//   Ethernet 50 Gb/s = 6.25 GB/s; FDR IB 56 Gb/s = 7 GB/s (signalling rate, as the brief
//     counts it); EDR IB and 100 Gb/s RoCE = 12.5 GB/s; NDR IB 400 Gb/s = 50 GB/s.
// Latencies (ASSUMED, docs/hardware.md gives only "EDR ~1 us"): InfiniBand 1 us per link (EDR
// figure, used for FDR and NDR too), RoCE v2 2 us, TCP over 50 GbE 3 us (Goyal et al. ran
// Gloo over TCP); NVLink/NVSwitch 1 us and PCIe 2 us per intra-node message (a GPU-to-GPU
// copy's start-up, not the wire).
#include <math.h>
#include <string.h>
#include <strings.h>

#include "gpu.h"
#include "platform_internal.h"

#define GBs 1e9
#define US 1e-6

typedef struct {
    const char *name, *gpu;
    int paper_gpus, gpus_per_node;
    dt_intra_kind intra;
    double intra_bw, intra_lat;
    double nic_bw;
    int nics;
    double net_lat;
    dt_topo_kind topo;
    double oversubscription;
    const char *model;
    int per_gpu_batch;
    const char *precision, *optimizer, *algo, *inner;
    int fp16_grads;
    double gpu_img_s;
    const char *notes;  // < 160 characters (dt_cluster.notes)
    int paper_eff_gpus, paper_eff_base;  // the paper's published efficiency point (0: none)
    double paper_eff;
    int seq_len, vocab;  // transformers: the paper's sequence and vocabulary (0: the model's)
} preset_row;

// The training set-up of each paper (precision, optimizer, allreduce) and the calibration
// gpu_img_s: one GPU's images/s in the paper's own framework, which the modelled GPU is scaled
// to (dtsim --gpu-img-s). It is the only figure taken from a paper's results, and where a
// paper gives no single-GPU or single-node figure it is derived from the paper's time and
// efficiency as written below; bench/PAPERS.md has the sources and the scores. ImageNet: 90
// epochs x 1,281,167 images = 115,305,030 images. The last three numbers of a row are the
// scaling efficiency the paper publishes (GPUs, baseline GPUs, efficiency: Goyal et al.'s
// abstract, 256 vs 8; IBM's 95 % vs one 4-GPU server; Akiba et al. 80 % as Mikami et al.
// quote it; Jia et al. 97 % at 2048; Mikami et al. Table 2, 91.62 % at 1088), which
// `dtsim sweep --plot` marks.
static const preset_row presets[] = {
    // Goyal et al. 2017: 32 Big Basin servers x 8 P100 SXM2, 50 GbE, 32 images/GPU (8K).
    // SGD, fp32, allreduce: reduce inside a server, recursive halving/doubling across, broadcast
    // (hier with inner rhd). Calibration: the 8-GPU baseline's 29 h for 90 epochs, 115,305,030
    // / 104,400 s = 1104.5 images/s per server; 142.6 per GPU is what makes one simulated
    // server train at that rate (its NVLink allreduce is not all hidden).
    {"goyal2017", "p100", 256, 8, DT_INTRA_NVLINK, 20 * GBs, 1 * US, 6.25 * GBs, 1, 3 * US,
     DT_TOPO_FAT_TREE, 1, "resnet50", 32, "fp32", "sgd", "hier", "rhd", 0, 142.6,
     "Goyal2017: 32x8 P100 SXM2, NVLink1 cube-mesh 20GB/s/pair, 1x50GbE; assumed: TCP 3us/link, "
     "fat tree", 256, 8, 0.90, 0, 0},
    // Cho et al. 2017 (PowerAI DDL): 64 S822LC x 4 P100, InfiniBand (EDR assumed). SGD, fp32,
    // DDL's multi-ring (hier with inner ring). No single-node figure in the paper: derived from
    // the 50 min (Torch) at 95 % efficiency (Caffe) against one 4-GPU server: 115,305,030 /
    // 3000 s / 256 / 0.95 = 158.1 images/s per GPU of a server, which one simulated server
    // reaches at 159.3 per GPU.
    {"cho2017", "p100", 256, 4, DT_INTRA_NVLINK, 40 * GBs, 1 * US, 12.5 * GBs, 1, 1 * US,
     DT_TOPO_FAT_TREE, 1, "resnet50", 32, "fp32", "sgd", "hier", "ring", 0, 159.3,
     "Cho2017: 64x4 P100 (S822LC), NVLink1 2 links/pair 40GB/s; assumed: 1 EDR IB NIC, 1us/link, "
     "fat tree, 32 img/GPU", 256, 4, 0.95, 0, 0},
    // Akiba et al. 2017 (ChainerMN): 128 x 8 P100 over PCIe, 2 x FDR, thin tree, batch 32K.
    // fp32, NCCL's ring over all GPUs. Derived: 15 min at the 80 % Mikami et al. quote:
    // 115,305,030 / 900 s / 1024 / 0.80 = 156.4.
    {"akiba2017", "p100", 1024, 8, DT_INTRA_PCIE, 12 * GBs, 2 * US, 7 * GBs, 2, 1 * US,
     DT_TOPO_FAT_TREE, 2, "resnet50", 32, "fp32", "sgd", "ring", "ring", 0, 156.4,
     "Akiba2017: 128x8 P100 on PCIe3 12GB/s/node, 2xFDR 7GB/s; thin tree = fat tree 2:1 "
     "(assumed), 1us/link; 32K/1024", 1024, 1, 0.80, 0, 0},
    // Jia et al. 2018 (Tencent): 2048 P40, 8 per node assumed, PCIe, 100 Gb/s RoCE v2, 64K.
    // Mixed precision (fp16 storage; the P40 computes it at its fp32 rate), fp16 gradients on
    // the wire, LARS, hierarchical allreduce. Derived: 6.6 min at 97 % efficiency:
    // 115,305,030 / 396 s / 2048 / 0.97 = 146.6.
    {"jia2018", "p40", 2048, 8, DT_INTRA_PCIE, 12 * GBs, 2 * US, 12.5 * GBs, 1, 2 * US,
     DT_TOPO_FAT_TREE, 1, "resnet50", 32, "fp16", "lars", "hier", "ring", 1, 146.6,
     "Jia2018: 256x8 P40 (8/node assumed) on PCIe3 12GB/s/node, 1x100Gb RoCE; assumed 2us/link, "
     "fat tree; 64K/2048", 2048, 1, 0.97, 0, 0},
    // Mikami et al. 2018 (Sony, ABCI): 544 nodes x 4 V100, NVLink 2.0, 2 x EDR. Batch 34K on
    // 2176 GPUs: 16 per GPU (2176 x 16 = 34,816, the paper's "34K"; later 68K). Mixed precision,
    // SGD, 2-D torus allreduce. Derived: 224 s at the 91.62 % the paper reports for 1088 GPUs:
    // 115,305,030 / 224 s / 2176 / 0.9162 = 258.2.
    {"mikami2018", "v100", 2176, 4, DT_INTRA_NVLINK, 50 * GBs, 1 * US, 12.5 * GBs, 2, 1 * US,
     DT_TOPO_FAT_TREE, 1, "resnet50", 16, "fp16", "sgd", "torus2d", "ring", 0, 258.2,
     "Mikami2018: ABCI 544x4 V100, NVLink2 2 links/pair 50GB/s, 2xEDR; assumed fat tree 1us/link; "
     "16/GPU = 34816", 1088, 1, 0.9162, 0, 0},
    // Today's baseline: DGX H100, 8 H100 on NVSwitch, 8 x 400 Gb/s NDR. Size: one DGX
    // SuperPOD scalable unit, 32 nodes. 256 images/GPU: the batch the GPU profiles are
    // calibrated at (DeepLearningExamples, batch 256 per GPU), 64K in all on 256 GPUs, the
    // batch Jia et al. trained ResNet-50 at with LARS. No paper: the roofline's own figure.
    {"dgx-h100", "h100", 256, 8, DT_INTRA_NVSWITCH, 450 * GBs, 1 * US, 50 * GBs, 8, 1 * US,
     DT_TOPO_FAT_TREE, 1, "resnet50", 256, "fp16", "lars", "hier", "ring", 0, 0,
     "DGX H100 (32-node SU): NVSwitch 450GB/s/dir (900 both), 8x400Gb NDR; assumed 1us/link, "
     "fat tree, 256/GPU", 0, 0, 0, 0, 0},
    // NVIDIA DeepLearningExamples, BERT for PyTorch (README, "Pre-training NVIDIA DGX A100 (8x
    // A100 80GB) Multi-node Scaling", pytorch:21.11-py3): BERT-Large pre-training phase 2
    // (sequences of 512), plain data parallel (PyTorch DDP over NCCL), LAMB, mixed precision
    // (native AMP: fp32 gradients on the wire), 32 sequences per GPU per micro-batch, a global
    // batch of 32K kept as the nodes grow (accumulation 128 on 1 node, 4 on 32). DGX A100:
    // 8 A100 80GB on NVSwitch (300 GB/s per direction), 8 x 200 Gb/s HDR InfiniBand. The
    // model: a 24-layer, 1024-wide, 16-head transformer (gpt2-medium's shape; BERT-Large's)
    // with BERT's 30,522-token vocabulary at 512 tokens: 334M parameters (BERT-Large: 340M,
    // the pooler and heads aside). Calibration: the README's single-GPU figure, 210
    // sequences/s at 32 per GPU in mixed precision. Published: 49,663 sequences/s on 32 nodes,
    // strong scaling 30.13 against one node (94.2 %).
    {"dle-bert", "a100", 256, 8, DT_INTRA_NVSWITCH, 300 * GBs, 1 * US, 25 * GBs, 8, 1 * US,
     DT_TOPO_FAT_TREE, 1, "gpt2-medium", 32, "fp16", "lamb", "hier", "ring", 0, 210,
     "NVIDIA DLE BERT-Large phase 2 on DGX A100 80GB: NVSwitch 300GB/s/dir, 8x200Gb HDR; assumed "
     "1us/link, fat tree; 32/GPU", 256, 8, 0.9418, 512, 30522},
};
#define NPRESETS ((int)(sizeof presets / sizeof presets[0]))

const char *dt_cluster_preset_names(void) {
    return "goyal2017, cho2017, akiba2017, jia2018, mikami2018, dgx-h100, dle-bert";
}

static void copy_str(char *dst, size_t size, const char *src) {
    snprintf(dst, size, "%s", src);
}

static void fill(const preset_row *p, int nodes, dt_cluster *c) {
    memset(c, 0, sizeof *c);
    copy_str(c->name, sizeof c->name, p->name);
    copy_str(c->gpu, sizeof c->gpu, p->gpu);
    c->nodes = nodes;
    c->gpus_per_node = p->gpus_per_node;
    c->intra = p->intra;
    c->intra_bw = p->intra_bw;
    c->intra_lat = p->intra_lat;
    c->nic_bw = p->nic_bw;
    c->nics = p->nics;
    c->net_lat = p->net_lat;
    c->topo = p->topo;
    c->topo_params[0] = '\0';
    c->oversubscription = p->oversubscription;
    copy_str(c->model, sizeof c->model, p->model);
    c->per_gpu_batch = p->per_gpu_batch;
    copy_str(c->precision, sizeof c->precision, p->precision ? p->precision : "");
    copy_str(c->optimizer, sizeof c->optimizer, p->optimizer ? p->optimizer : "");
    copy_str(c->algo, sizeof c->algo, p->algo ? p->algo : "");
    copy_str(c->inner, sizeof c->inner, p->inner ? p->inner : "");
    c->fp16_grads = p->fp16_grads;
    c->gpu_img_s = p->gpu_img_s;
    copy_str(c->notes, sizeof c->notes, p->notes);
    c->paper_eff_gpus = p->paper_eff_gpus, c->paper_eff_base = p->paper_eff_base;
    c->paper_eff = p->paper_eff;
    c->seq_len = p->seq_len, c->vocab = p->vocab;
}

int dt_cluster_preset(const char *name, int gpus, dt_cluster *out, dt_error *err) {
    const preset_row *p = NULL;
    for (int i = 0; name && i < NPRESETS; i++)
        if (strcasecmp(name, presets[i].name) == 0) p = &presets[i];
    if (!p)
        return dt_fail(err, DT_EXIT_USAGE, "unknown cluster preset '%s' (valid: %s)",
                       name ? name : "(null)", dt_cluster_preset_names());
    if (gpus < 0)
        return dt_fail(err, DT_EXIT_USAGE,
                       "cluster preset %s: %d GPUs; expected a positive count (0 = the "
                       "paper's %d)", p->name, gpus, p->paper_gpus);
    if (gpus == 0) gpus = p->paper_gpus;
    if (gpus % p->gpus_per_node != 0) {
        int lo = gpus / p->gpus_per_node * p->gpus_per_node;
        return dt_fail(err, DT_EXIT_USAGE,
                       "cluster preset %s has %d GPUs per node: %d GPUs is not a whole number "
                       "of nodes (try %d or %d)", p->name, p->gpus_per_node, gpus,
                       lo > 0 ? lo : p->gpus_per_node, lo + p->gpus_per_node);
    }
    fill(p, gpus / p->gpus_per_node, out);
    return 0;
}

// V100 nodes of 8 (NVLink 2.0 cube-mesh, one link per GPU pair: 25 GB/s), one EDR
// InfiniBand NIC per node, fat tree. gpus <= 0 means 64 (8 nodes); a count that is not a
// multiple of 8 gets ceil(gpus/8) nodes, the last one partly used (the hostfile lists every
// node 8 times; SMPI takes the first `gpus` lines).
dt_cluster dt_cluster_default(int gpus) {
    static const preset_row def = {
        "custom", "v100", 64, 8, DT_INTRA_NVLINK, 25 * GBs, 1 * US, 12.5 * GBs, 1, 1 * US,
        DT_TOPO_FAT_TREE, 1, "resnet50", 32, NULL, NULL, NULL, NULL, 0, 0,
        "default: 8x V100 SXM2 nodes, NVLink2 cube-mesh 25GB/s/pair, 1 EDR IB NIC (12.5GB/s, "
        "1us/link assumed), fat tree", 0, 0, 0, 0, 0};
    if (gpus <= 0) gpus = def.paper_gpus;
    dt_cluster c;
    int gpn = def.gpus_per_node;
    fill(&def, (gpus + gpn - 1) / gpn, &c);
    if (gpus < gpn) c.gpus_per_node = gpus;
    return c;
}

static int positive_finite(double v) { return isfinite(v) && v > 0; }

int dt_cluster_check(const dt_cluster *c, dt_error *err) {
    if (!c) return dt_fail(err, DT_EXIT_USAGE, "cluster: no description given");
    if (memchr(c->name, '\0', sizeof c->name) == NULL || c->name[0] == '\0')
        return dt_fail(err, DT_EXIT_USAGE, "cluster name: expected a non-empty name");
    if (memchr(c->gpu, '\0', sizeof c->gpu) == NULL || !dt_gpu_find(c->gpu))
        return dt_fail(err, DT_EXIT_USAGE, "cluster gpu '%.15s': unknown GPU profile (valid: %s)",
                       c->gpu, dt_gpu_names());
    if (c->nodes < 1 || c->nodes > 1000000)
        return dt_fail(err, DT_EXIT_USAGE, "cluster nodes = %d: expected 1 .. 1000000", c->nodes);
    if (c->gpus_per_node < 1 || c->gpus_per_node > 1024)
        return dt_fail(err, DT_EXIT_USAGE, "cluster gpus_per_node = %d: expected 1 .. 1024",
                       c->gpus_per_node);
    if ((int)c->intra < DT_INTRA_NVLINK || (int)c->intra > DT_INTRA_PCIE)
        return dt_fail(err, DT_EXIT_USAGE, "cluster intra = %d: not an intra-node link kind",
                       (int)c->intra);
    if (!positive_finite(c->intra_bw))
        return dt_fail(err, DT_EXIT_USAGE, "cluster intra_bw = %g: expected bytes/s > 0",
                       c->intra_bw);
    if (!positive_finite(c->nic_bw))
        return dt_fail(err, DT_EXIT_USAGE, "cluster nic_bw = %g: expected bytes/s > 0", c->nic_bw);
    if (c->nics < 1 || c->nics > 64)
        return dt_fail(err, DT_EXIT_USAGE, "cluster nics = %d: expected 1 .. 64 NICs per node",
                       c->nics);
    if (!isfinite(c->intra_lat) || c->intra_lat < 0 || c->intra_lat > 1)
        return dt_fail(err, DT_EXIT_USAGE, "cluster intra_lat = %g: expected 0 .. 1 seconds",
                       c->intra_lat);
    if (!isfinite(c->net_lat) || c->net_lat < 0 || c->net_lat > 1)
        return dt_fail(err, DT_EXIT_USAGE, "cluster net_lat = %g: expected 0 .. 1 seconds",
                       c->net_lat);
    if (!isfinite(c->oversubscription) || c->oversubscription < 1 || c->oversubscription > 1024)
        return dt_fail(err, DT_EXIT_USAGE,
                       "cluster oversubscription = %g: expected 1 (non-blocking) .. 1024",
                       c->oversubscription);
    if (c->per_gpu_batch < 0)
        return dt_fail(err, DT_EXIT_USAGE, "cluster per_gpu_batch = %d: expected >= 0",
                       c->per_gpu_batch);
    if (memchr(c->topo_params, '\0', sizeof c->topo_params) == NULL)
        return dt_fail(err, DT_EXIT_USAGE, "cluster topo_params: not a terminated string");
    dt_topo t;
    return dt_topo_resolve(c, &t, err);
}

int dt_cluster_topology(const dt_cluster *c, char *params, size_t size, dt_error *err) {
    dt_topo t;
    if (dt_cluster_check(c, err) != 0) return -1;
    if (dt_topo_resolve(c, &t, err) != 0) return -1;
    dt_topo_format(&t, params, size);
    return 0;
}

// α-β (Hockney) figures of one message, as SimGrid's CM02 model charges it on this platform:
//   inter-node: α = net_lat × (mean links on a route between two nodes: 2 on a flat
//     crossbar, 2 or 4 in the two-level fat tree, the mean torus or dragonfly distance),
//     β = 1 / (nics × nic_bw), the node's NICs being its private link;
//   intra-node: α = intra_lat, β = 1 / intra_bw (the loopback link).
// An invalid description gives NaN everywhere (dt_cluster_check says why).
void dt_cluster_cost(const dt_cluster *c, double *alpha, double *beta, double *alpha_intra,
                     double *beta_intra) {
    double a = NAN, b = NAN, ai = NAN, bi = NAN;
    dt_topo t;
    if (dt_cluster_check(c, NULL) == 0 && dt_topo_resolve(c, &t, NULL) == 0) {
        a = c->net_lat * dt_topo_mean_links(&t, c->nodes);
        b = 1.0 / (c->nics * c->nic_bw);
        ai = c->intra_lat;
        bi = 1.0 / c->intra_bw;
    }
    if (alpha) *alpha = a;
    if (beta) *beta = b;
    if (alpha_intra) *alpha_intra = ai;
    if (beta_intra) *beta_intra = bi;
}
