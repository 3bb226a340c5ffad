// platform_tool.c — the driver of the tests/sim checks: writes a cluster's SimGrid platform
// and hostfile with sim/platform_write.c and runs SMPI programs on it. Not part of dtsim.
//
//   platform_tool write PRESET GPUS TOPO XML HOSTS
//   platform_tool run   PRESET GPUS TOPO SMPIRUN PROGRAM.so   (-np = every GPU of the cluster)
//   platform_tool ping  PRESET GPUS TOPO SMPIRUN PING.so
//
// PRESET is a preset name or "default" (dt_cluster_default); GPUS 0 = the paper's size; TOPO
// is flat, fat_tree, torus, dragonfly or "-" (the preset's own). `ping` times 64 MiB
// messages (tests/sim/ping.c) under SimGrid's CM02 model (plain latency + size / bandwidth,
// as tests/coll does) and checks the bandwidth each transfer got against the cluster's
// figures, within 1 %:
//   intra-node, one pair (ranks 0 -> 1):           intra_bw
//   inter-node, one pair (ranks 0 -> G):           nics × nic_bw
//   intra-node, two pairs at once (0->1, 2->3):    intra_bw each (NVLink/NVSwitch: FATPIPE),
//                                                  intra_bw / 2 (PCIe on a FLAT network:
//                                                  SHARED), intra_bw (PCIe in the other
//                                                  topologies: SimGrid 3.32's FATPIPE loopback)
//   inter-node, two pairs at once (0->G, 1->G+1):  nics × nic_bw / 2 each (one node's NICs)
// Prints "PASS ping <preset>" or FAIL lines; exit 0 / 1 (2 for bad usage).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platform.h"

#define PING_BYTES (64L << 20)
#define SMPI_OPTS "-no-privatize --cfg=smpi/simulate-computation:no --cfg=network/model:CM02 " \
                  "--cfg=network/crosstraffic:0 --log=root.thres:warning"

static int usage(void) {
    fprintf(stderr, "usage: platform_tool write PRESET GPUS TOPO XML HOSTS\n"
                    "       platform_tool run|ping PRESET GPUS TOPO SMPIRUN PROGRAM.so\n");
    return 2;
}

static int get_cluster(const char *preset, const char *gpus, const char *topo, dt_cluster *c) {
    dt_error err = {0};
    int n = atoi(gpus);
    if (strcmp(preset, "default") == 0) *c = dt_cluster_default(n);
    else if (dt_cluster_preset(preset, n, c, &err) != 0) {
        fprintf(stderr, "platform_tool: %s\n", err.msg);
        return -1;
    }
    static const char *names[] = {"flat", "fat_tree", "torus", "dragonfly"};
    static const dt_topo_kind kinds[] = {DT_TOPO_FLAT, DT_TOPO_FAT_TREE, DT_TOPO_TORUS,
                                         DT_TOPO_DRAGONFLY};
    if (strcmp(topo, "-") != 0) {
        int k = -1;
        for (int i = 0; i < 4; i++)
            if (strcmp(topo, names[i]) == 0) k = i;
        if (k < 0) {
            fprintf(stderr, "platform_tool: unknown topology %s\n", topo);
            return -1;
        }
        c->topo = kinds[k];
        c->topo_params[0] = '\0';
    }
    return 0;
}

static int write_files(const dt_cluster *c, const char *xml, const char *hosts) {
    dt_error err = {0};
    char tp[128];
    if (dt_cluster_write(c, xml, hosts, &err) != 0 ||
        dt_cluster_topology(c, tp, sizeof tp, &err) != 0) {
        fprintf(stderr, "platform_tool: %s\n", err.msg);
        return -1;
    }
    printf("wrote %s: %s, %d nodes x %d %s, topology \"%s\"\n", xml, c->name, c->nodes,
           c->gpus_per_node, c->gpu, tp);
    return 0;
}

// Runs smpirun and returns its output (caller frees); NULL on failure to start.
static char *run_smpi(const char *smpirun, int np, const char *xml, const char *hosts,
                      const char *prog, const char *args, int *status) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' -np %d -platform '%s' -hostfile '%s' " SMPI_OPTS " '%s' %s 2>&1",
             smpirun, np, xml, hosts, prog, args);
    FILE *p = popen(cmd, "r");
    if (!p) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *out = malloc(cap);
    for (size_t got; out && (got = fread(out + n, 1, cap - n - 1, p)) > 0;) {
        n += got;
        if (n + 1 == cap) out = realloc(out, cap *= 2);
    }
    *status = pclose(p);
    if (out) out[n] = '\0';
    return out;
}

// The time of pair a->b in the ping output; -1 if absent.
static double pair_time(const char *out, int a, int b) {
    for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        int pa, pb;
        double t;
        if (sscanf(l, "pair %d %d time %lf", &pa, &pb, &t) == 3 && pa == a && pb == b) return t;
    }
    return -1;
}

// One smpirun of the ping probe with messages of `bytes`; the output (caller frees) or NULL.
static char *ping_run(const char *smpirun, const char *ping, const dt_cluster *c,
                      const char *xml, const char *hosts, long bytes, int npairs,
                      const int pairs[][2]) {
    char args[2048];
    int np = 0;
    for (int i = 0; i < npairs; i++)
        for (int k = 0; k < 2; k++) np = pairs[i][k] + 1 > np ? pairs[i][k] + 1 : np;
    int len = snprintf(args, sizeof args, "%ld", bytes), status = 0;
    for (int i = 0; i < npairs; i++)
        len += snprintf(args + len, sizeof args - (size_t)len, " %d:%d", pairs[i][0], pairs[i][1]);
    (void)c;
    char *out = run_smpi(smpirun, np, xml, hosts, ping, args, &status);
    if (!out || status != 0) {
        printf("FAIL smpirun failed (status %d):\n%s\n", status, out ? out : "");
        free(out);
        return NULL;
    }
    return out;
}

// The bandwidth is taken from two sizes, bw = (S - S/2) / (T(S) - T(S/2)), so that the
// route's latency cancels; the latency T(S) - S/bw is printed too.
static int ping_case(const char *smpirun, const char *ping, const dt_cluster *c,
                     const char *xml, const char *hosts, const char *what, int npairs,
                     const int pairs[][2], double expect_bw) {
    char *full = ping_run(smpirun, ping, c, xml, hosts, PING_BYTES, npairs, pairs);
    char *half = full ? ping_run(smpirun, ping, c, xml, hosts, PING_BYTES / 2, npairs, pairs)
                      : NULL;
    int fails = 0;
    for (int i = 0; i < npairs; i++) {
        double t = full && half ? pair_time(full, pairs[i][0], pairs[i][1]) : -1;
        double th = full && half ? pair_time(half, pairs[i][0], pairs[i][1]) : -1;
        double bw = t > th && th > 0 ? (PING_BYTES / 2) / (t - th) : 0;
        double lat = bw > 0 ? t - PING_BYTES / bw : 0, rel = bw / expect_bw - 1;
        int ok = bw > 0 && rel > -0.01 && rel < 0.01 && lat > -1e-9 && lat < 1e-4;
        printf("%s %s: %d -> %d, 64 MiB in %.6g ms: %.4g GB/s (expected %.4g, %+.3f %%) + "
               "latency %.3g us\n", ok ? "ok  " : "FAIL", what, pairs[i][0], pairs[i][1],
               t * 1e3, bw / 1e9, expect_bw / 1e9, rel * 100, lat * 1e6);
        fails += !ok;
    }
    free(full);
    free(half);
    return fails + (full && half ? 0 : 1);
}

static int ping(const dt_cluster *c, const char *smpirun, const char *ping_so, const char *xml,
                const char *hosts) {
    int g = c->gpus_per_node, fails = 0;
    if (c->nodes < 2 || g < 2) {
        fprintf(stderr, "platform_tool ping: needs 2 nodes of 2 GPUs or more\n");
        return 2;
    }
    double nic = c->nics * c->nic_bw;
    int shared = c->intra == DT_INTRA_PCIE && c->topo == DT_TOPO_FLAT;
    const int p1[][2] = {{0, 1}}, p2[][2] = {{0, g}}, p3[][2] = {{0, 1}, {2, 3}},
              p4[][2] = {{0, g}, {1, g + 1}};
    fails += ping_case(smpirun, ping_so, c, xml, hosts, "intra-node 1 pair", 1, p1, c->intra_bw);
    fails += ping_case(smpirun, ping_so, c, xml, hosts, "inter-node 1 pair", 1, p2, nic);
    if (g >= 4)
        fails += ping_case(smpirun, ping_so, c, xml, hosts,
                           shared ? "intra-node 2 pairs (PCIe SHARED)"
                                  : c->intra == DT_INTRA_PCIE
                                        ? "intra-node 2 pairs (PCIe, FATPIPE: SimGrid limit)"
                                        : "intra-node 2 pairs (FATPIPE)",
                           2, p3, shared ? c->intra_bw / 2 : c->intra_bw);
    fails += ping_case(smpirun, ping_so, c, xml, hosts, "inter-node 2 pairs share the NICs", 2,
                       p4, nic / 2);
    // Oversubscribed two-level fat tree: every node of leaf 0 sends to one of leaf 1 at once;
    // the leaf's D/oversubscription up links carry D flows: nics × nic_bw / oversubscription
    // each (exact when D/oversubscription is a whole number).
    char tp[128];
    int d, s, u1, u;
    dt_error err = {0};
    if (c->topo == DT_TOPO_FAT_TREE && dt_cluster_topology(c, tp, sizeof tp, &err) == 0 &&
        sscanf(tp, "2;%d,%d;%d,%d;", &d, &s, &u1, &u) == 4 && s >= 2 && d <= 64) {
        int pairs[64][2];
        for (int k = 0; k < d; k++) pairs[k][0] = k * g, pairs[k][1] = (d + k) * g;
        char what[200];
        snprintf(what, sizeof what, "leaf to leaf, %d pairs at once (fat tree %s)", d, tp);
        fails += ping_case(smpirun, ping_so, c, xml, hosts, what, d, (const int(*)[2])pairs,
                           nic / c->oversubscription);
    }
    printf("%s ping %s\n", fails ? "FAIL" : "PASS", c->name);
    return fails ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc != 7) return usage();
    dt_cluster c;
    if (get_cluster(argv[2], argv[3], argv[4], &c) != 0) return 2;
    if (strcmp(argv[1], "write") == 0) return write_files(&c, argv[5], argv[6]) ? 1 : 0;
    if (strcmp(argv[1], "run") != 0 && strcmp(argv[1], "ping") != 0) return usage();

    char dir[] = "/tmp/dtplat.XXXXXX", xml[64], hosts[64];
    if (!mkdtemp(dir)) {
        perror("platform_tool: mkdtemp");
        return 1;
    }
    snprintf(xml, sizeof xml, "%s/platform.xml", dir);
    snprintf(hosts, sizeof hosts, "%s/hostfile", dir);
    int rc = 1;
    if (write_files(&c, xml, hosts) == 0) {
        if (strcmp(argv[1], "ping") == 0) {
            rc = ping(&c, argv[5], argv[6], xml, hosts);
        } else {
            int status = 0;
            char *out = run_smpi(argv[5], c.nodes * c.gpus_per_node, xml, hosts, argv[6], "",
                                 &status);
            if (out) fputs(out, stdout);
            rc = out && status == 0 ? 0 : 1;
            free(out);
        }
    }
    unlink(xml);
    unlink(hosts);
    rmdir(dir);
    return rc;
}
