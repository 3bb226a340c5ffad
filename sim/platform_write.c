// platform_write.c — writes a dt_cluster as the SimGrid 3.32 platform XML and the SMPI
// hostfile that dtsim hands to SimGrid (the model is described in platform.h). Not here:
// the figures (platform.c), the topology parameters (platform_topo.c).
//
// What SimGrid 3.32 can express, and how each case is written (read in SimGrid's source,
// src/surf/sg_platf.cpp and src/kernel/routing/*Zone.cpp at the 3.32 release):
//   * <cluster>: one host per node (core = GPUs per node), the node's private link
//     (bw = nics × nic_bw, lat = net_lat, SPLITDUPLEX: each direction at full speed), the
//     topology (none = a flat crossbar without backbone, FAT_TREE, TORUS, DRAGONFLY) and a
//     loopback link (loopback_bw/lat = the intra-node figures) that carries the traffic
//     between two ranks of the same host. The tag has NO attribute for the loopback's sharing
//     policy: sg_platf_cluster_create_loopback() and sg_platf_new_cluster_flat() always make
//     it FATPIPE (every flow at full bandwidth). Right for NVLink/NVSwitch (non-blocking).
//   * PCIe on a FLAT network: the node's GPUs share one PCIe switch (SHARED). Written as an
//     explicit <zone routing="Cluster"> (a StarZone, the same crossbar as a flat <cluster>):
//     per node a host, a SPLITDUPLEX NIC link joined by <host_link>, and a SHARED PCIe link
//     on the host's loopback route (<route src="node-i" dst="node-i">). Exact.
//   * PCIe with FAT_TREE, TORUS or DRAGONFLY: these zones exist only through <cluster>, whose
//     loopback is FATPIPE: concurrent transfers inside a node each get the full PCIe
//     bandwidth instead of sharing it. The closest alternative, the cluster's limiter_link
//     (a SHARED per-node link that 3.32 puts on the loopback route of FAT_TREE and TORUS when
//     no loopback is given), was rejected: it is also on every inter-node route and cannot
//     be SPLITDUPLEX, so a node sending and receiving at once would get half its NIC speed,
//     and DRAGONFLY would send intra-node traffic through the NIC. The XML says so in a
//     comment; use topology FLAT to study PCIe sharing.
#include <string.h>

#include "atomic_file.h"
#include "platform_internal.h"

// An XML id from a name: letters, digits, '_', '-', '.'; anything else becomes '_'.
static void xml_id(char *dst, size_t size, const char *src) {
    size_t i = 0;
    for (; src[i] && i + 1 < size; i++) {
        char ch = src[i];
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '_' || ch == '-' || ch == '.';
        dst[i] = ok ? ch : '_';
    }
    dst[i] = '\0';
    if (i == 0) snprintf(dst, size, "cluster");
}

// Text inside an XML comment: no "--", no control characters.
static void comment_text(FILE *f, const char *s) {
    for (char prev = 0; *s; prev = *s++) {
        char ch = (unsigned char)*s < 0x20 ? ' ' : *s;
        fputc(ch == '-' && prev == '-' ? '_' : ch, f);
    }
}

static const char *intra_name(dt_intra_kind k) {
    return k == DT_INTRA_NVLINK ? "NVLink" : k == DT_INTRA_NVSWITCH ? "NVSwitch" : "PCIe";
}

static void write_header(FILE *f, const dt_cluster *c, const char *topo_params) {
    fprintf(f, "<?xml version='1.0'?>\n"
               "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<!-- ");
    fprintf(f, "dtlab cluster \"");
    comment_text(f, c->name);
    fprintf(f, "\" (written by sim/platform_write.c): %d nodes x %d ", c->nodes,
            c->gpus_per_node);
    comment_text(f, c->gpu);
    fprintf(f, " GPUs = %lld GPUs.\n", (long long)c->nodes * c->gpus_per_node);
    fprintf(f, "     One host per node (node-0 .. node-%d), one core per GPU: ranks are GPUs. "
               "Compute is injected\n     as time, so the host speed does not matter.\n",
            c->nodes - 1);
    fprintf(f, "     Network: %d NIC(s) x %g GB/s per node = the node's private link "
               "(SPLITDUPLEX), %g us per link;\n     topology %s%s%s%s", c->nics,
            c->nic_bw / 1e9, c->net_lat * 1e6, dt_topo_name(c->topo),
            topo_params[0] ? " \"" : "", topo_params, topo_params[0] ? "\"" : "");
    if (c->topo == DT_TOPO_FAT_TREE) fprintf(f, ", oversubscription %g", c->oversubscription);
    fprintf(f, ".\n     Inside a node: %s, %g GB/s, %g us per message: ", intra_name(c->intra),
            c->intra_bw / 1e9, c->intra_lat * 1e6);
    if (c->intra != DT_INTRA_PCIE)
        fprintf(f, "the loopback link, FATPIPE (every GPU pair at full speed).\n");
    else if (c->topo == DT_TOPO_FLAT)
        fprintf(f, "a SHARED link on each host's loopback route, shared by\n     the node's "
                   "GPUs (an explicit Cluster zone: <cluster> makes its loopback FATPIPE).\n");
    else
        fprintf(f, "the loopback link. LIMITATION: SimGrid 3.32's <cluster> makes\n     every "
                   "loopback FATPIPE, so concurrent transfers inside a node do NOT share the "
                   "PCIe\n     bandwidth here: each gets all of it. Topology FLAT models the "
                   "sharing.\n");
    fprintf(f, "     Notes: ");
    comment_text(f, c->notes);
    fprintf(f, " -->\n<platform version=\"4.1\">\n");
}

// Bandwidths in GBps and latencies in us, exact to 12 digits.
static void write_cluster_tag(FILE *f, const dt_cluster *c, const char *id, const char *tp) {
    fprintf(f, "  <cluster id=\"%s\" prefix=\"node-\" suffix=\"\" radical=\"0-%d\" speed=\"1Gf\" "
               "core=\"%d\"\n", id, c->nodes - 1, c->gpus_per_node);
    fprintf(f, "           bw=\"%.12gGBps\" lat=\"%.12gus\" sharing_policy=\"SPLITDUPLEX\"\n",
            c->nics * c->nic_bw / 1e9, c->net_lat * 1e6);
    if (c->topo != DT_TOPO_FLAT)
        fprintf(f, "           topology=\"%s\" topo_parameters=\"%s\"\n", dt_topo_name(c->topo),
                tp);
    fprintf(f, "           loopback_bw=\"%.12gGBps\" loopback_lat=\"%.12gus\"/>\n",
            c->intra_bw / 1e9, c->intra_lat * 1e6);
}

// PCIe on a flat network: a StarZone written out, with a SHARED PCIe link per node.
static void write_pcie_star_zone(FILE *f, const dt_cluster *c, const char *id) {
    fprintf(f, "  <zone id=\"%s\" routing=\"Cluster\">\n", id);
    for (int i = 0; i < c->nodes; i++) {
        fprintf(f, "    <host id=\"node-%d\" speed=\"1Gf\" core=\"%d\"/>\n", i, c->gpus_per_node);
        fprintf(f, "    <link id=\"node-%d_nic\" bandwidth=\"%.12gGBps\" latency=\"%.12gus\" "
                   "sharing_policy=\"SPLITDUPLEX\"/>\n", i, c->nics * c->nic_bw / 1e9,
                c->net_lat * 1e6);
        fprintf(f, "    <link id=\"node-%d_pcie\" bandwidth=\"%.12gGBps\" latency=\"%.12gus\" "
                   "sharing_policy=\"SHARED\"/>\n", i, c->intra_bw / 1e9, c->intra_lat * 1e6);
        fprintf(f, "    <host_link id=\"node-%d\" up=\"node-%d_nic_UP\" down=\"node-%d_nic_DOWN\"/>\n",
                i, i, i);
    }
    for (int i = 0; i < c->nodes; i++)
        fprintf(f, "    <route src=\"node-%d\" dst=\"node-%d\"><link_ctn id=\"node-%d_pcie\"/>"
                   "</route>\n", i, i, i);
    fprintf(f, "  </zone>\n");
}

static void write_platform(FILE *f, const dt_cluster *c, const char *topo_params) {
    char id[64];
    xml_id(id, sizeof id, c->name);
    write_header(f, c, topo_params);
    if (c->intra == DT_INTRA_PCIE && c->topo == DT_TOPO_FLAT)
        write_pcie_star_zone(f, c, id);
    else
        write_cluster_tag(f, c, id, topo_params);
    fprintf(f, "</platform>\n");
}

// Rank r runs on line r: node-0 gpus_per_node times, then node-1, ...
static void write_hostfile(FILE *f, const dt_cluster *c) {
    for (int i = 0; i < c->nodes; i++)
        for (int g = 0; g < c->gpus_per_node; g++) fprintf(f, "node-%d\n", i);
}

int dt_cluster_write(const dt_cluster *c, const char *xml_path, const char *hostfile_path,
                     dt_error *err) {
    if (dt_cluster_check(c, err) != 0) return -1;
    if (!xml_path || !*xml_path || !hostfile_path || !*hostfile_path)
        return dt_fail(err, DT_EXIT_USAGE, "cluster platform: empty output path (platform "
                       "'%s', hostfile '%s')", xml_path ? xml_path : "", hostfile_path ? hostfile_path : "");
    if (strcmp(xml_path, hostfile_path) == 0)
        return dt_fail(err, DT_EXIT_USAGE, "cluster platform and hostfile are the same file "
                       "%.300s: expected two paths", xml_path);
    dt_topo t;
    char tp[sizeof c->topo_params + 64];
    if (dt_topo_resolve(c, &t, err) != 0) return -1;
    dt_topo_format(&t, tp, sizeof tp);

    // Both files complete on disk before either is renamed into place.
    dt_atomic_file x, h;
    if (dt_atomic_open(&x, xml_path, "platform file", err) != 0) return -1;
    write_platform(x.f, c, tp);
    if (dt_atomic_finish(&x, err) != 0) return -1;
    if (dt_atomic_open(&h, hostfile_path, "hostfile", err) != 0) {
        dt_atomic_abort(&x);
        return -1;
    }
    write_hostfile(h.f, c);
    if (dt_atomic_finish(&h, err) != 0) {
        dt_atomic_abort(&x);
        return -1;
    }
    if (dt_atomic_commit(&x, err) != 0) {
        dt_atomic_abort(&h);
        return -1;
    }
    return dt_atomic_commit(&h, err);
}
