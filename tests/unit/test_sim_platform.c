// test_sim_platform.c — the cluster presets against docs/hardware.md, "Clusters of the landmark
// runs" (numbers recomputed here from the published figures, not copied from sim/platform.c),
// sizing and bad input, the topology parameters, the α-β figures, the written platform and
// hostfile read back, atomic writes, and the check of user platform files. The SimGrid side
// (the XML loads, the bandwidths SimGrid grants) is tests/sim.
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform.h"
#include "testutil.h"

static tu_rng rng;

static int setup(void **state) {
    (void)state;
    rng = tu_rng_new(tu_seed());
    return 0;
}

// ---- presets against docs/hardware.md, "Clusters of the landmark runs" ----

typedef struct {
    const char *name, *gpu;
    int gpus, nodes, gpn;
    dt_intra_kind intra;
    double intra_bw, nic_bw;
    int nics;
    double oversub;
    int batch;
} expect_row;

static void test_presets_match_reference_hardware_and_paper_setups(void **state) {
    (void)state;
    const double Gb = 1e9 / 8;  // bits/s -> bytes/s
    const expect_row rows[] = {
        // 32 servers x 8 P100; NVLink 1.0: 160 GB/s both directions over 4 links, one link
        // per pair; 50 Gbit Ethernet; 8K batch on 256 GPUs.
        {"goyal2017", "p100", 32 * 8, 32, 8, DT_INTRA_NVLINK, 160e9 / 2 / 4, 50 * Gb, 1, 1,
         8192 / 256},
        // 64 x 4 P100, two NVLink 1.0 links per pair; EDR 100 Gb/s.
        {"cho2017", "p100", 64 * 4, 64, 4, DT_INTRA_NVLINK, 2 * 160e9 / 2 / 4, 100 * Gb, 1, 1,
         32},
        // 128 x 8 P100 over PCIe 3.0 x16 ~12 GB/s; 2 x FDR 56 Gb/s; thin tree; 32K on 1024.
        {"akiba2017", "p100", 128 * 8, 128, 8, DT_INTRA_PCIE, 12e9, 56 * Gb, 2, 2,
         32768 / 1024},
        // 2048 P40, 8 per node, PCIe; 100 Gb/s RoCE; 64K on 2048.
        {"jia2018", "p40", 2048, 2048 / 8, 8, DT_INTRA_PCIE, 12e9, 100 * Gb, 1, 1,
         65536 / 2048},
        // 2176 V100, 4 per node, NVLink 2.0 (25 GB/s per link per direction, 2 per pair);
        // 2 x EDR; 34K on 2176.
        {"mikami2018", "v100", 2176, 2176 / 4, 4, DT_INTRA_NVLINK, 2 * 25e9, 100 * Gb, 2, 1, 16},
        // N x 8 H100 on NVSwitch (900 GB/s both directions); 8 x 400 Gb/s NDR.
        {"dgx-h100", "h100", 256, 32, 8, DT_INTRA_NVSWITCH, 900e9 / 2, 400 * Gb, 8, 1, 256},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const expect_row *e = &rows[i];
        dt_cluster c;
        dt_error err = {0};
        assert_int_equal(dt_cluster_preset(e->name, 0, &c, &err), 0);
        assert_string_equal(c.name, e->name);
        assert_string_equal(c.gpu, e->gpu);
        assert_int_equal(c.nodes * c.gpus_per_node, e->gpus);
        assert_int_equal(c.nodes, e->nodes);
        assert_int_equal(c.gpus_per_node, e->gpn);
        assert_int_equal(c.intra, e->intra);
        assert_true(fabs(c.intra_bw / e->intra_bw - 1) < 1e-12);
        assert_true(fabs(c.nic_bw / e->nic_bw - 1) < 1e-12);
        assert_int_equal(c.nics, e->nics);
        assert_int_equal(c.topo, DT_TOPO_FAT_TREE);
        assert_true(c.oversubscription == e->oversub);
        assert_int_equal(c.per_gpu_batch, e->batch);
        assert_string_equal(c.model, "resnet50");
        // InfiniBand about 1 us per link, Ethernet/RoCE a few; intra-node a few us at most
        assert_true(c.net_lat >= 0.5e-6 && c.net_lat <= 5e-6);
        assert_true(c.intra_lat > 0 && c.intra_lat <= 5e-6);
        // notes say where the figures come from and were not cut short
        assert_true(strlen(c.notes) > 40 && strlen(c.notes) < sizeof c.notes - 1);
        assert_int_equal(dt_cluster_check(&c, &err), 0);
    }
    // Mikami's "34K": 16 per GPU on 2176 GPUs is within 1 % of 34 x 1024.
    assert_true(fabs(16.0 * 2176 / (34 * 1024) - 1) < 0.01);
}

static void test_preset_sized_by_gpus_gives_gpus_over_gpus_per_node_nodes(void **state) {
    (void)state;
    const char *names[] = {"goyal2017", "cho2017", "akiba2017", "jia2018", "mikami2018",
                           "dgx-h100"};
    for (int trial = 0; trial < 60; trial++) {
        const char *n = names[tu_int(&rng, 0, 5)];
        dt_cluster c0, c;
        assert_int_equal(dt_cluster_preset(n, 0, &c0, NULL), 0);
        int nodes = tu_int(&rng, 1, 600);
        int gpus = nodes * c0.gpus_per_node;
        assert_int_equal(dt_cluster_preset(n, gpus, &c, NULL), 0);
        assert_int_equal(c.nodes, nodes);
        assert_int_equal(c.gpus_per_node, c0.gpus_per_node);
        assert_true(c.intra_bw == c0.intra_bw && c.nic_bw == c0.nic_bw);
        assert_int_equal(dt_cluster_check(&c, NULL), 0);
    }
    dt_cluster c;
    assert_int_equal(dt_cluster_preset("DGX-H100", 16, &c, NULL), 0);  // case-insensitive
    assert_int_equal(c.nodes, 2);
}

static void test_unknown_preset_fails_with_the_list_of_presets(void **state) {
    (void)state;
    dt_cluster c;
    dt_error err = {0};
    assert_int_equal(dt_cluster_preset("goyal2018", 0, &c, &err), -1);
    assert_int_equal(err.code, DT_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "goyal2018"));
    const char *names[] = {"goyal2017", "cho2017", "akiba2017", "jia2018", "mikami2018",
                           "dgx-h100"};
    for (int i = 0; i < 6; i++) {
        assert_non_null(strstr(err.msg, names[i]));
        assert_non_null(strstr(dt_cluster_preset_names(), names[i]));
    }
    assert_int_equal(dt_cluster_preset(NULL, 0, &c, &err), -1);
    assert_int_equal(err.code, DT_EXIT_USAGE);
}

static void test_gpus_not_a_multiple_of_the_node_is_a_usage_error(void **state) {
    (void)state;
    for (int trial = 0; trial < 30; trial++) {
        int nodes = tu_int(&rng, 0, 300), extra = tu_int(&rng, 1, 7);
        dt_error err = {0};
        dt_cluster c;
        int gpus = nodes * 8 + extra;
        assert_int_equal(dt_cluster_preset("jia2018", gpus, &c, &err), -1);
        assert_int_equal(err.code, DT_EXIT_USAGE);
        char want[32];
        snprintf(want, sizeof want, "%d GPUs", gpus);
        assert_non_null(strstr(err.msg, want));
        assert_non_null(strstr(err.msg, "8 GPUs per node"));
    }
    dt_error err = {0};
    dt_cluster c;
    assert_int_equal(dt_cluster_preset("cho2017", -4, &c, &err), -1);
    assert_int_equal(err.code, DT_EXIT_USAGE);
}

static void test_default_cluster_is_v100_nvlink_edr_fat_tree(void **state) {
    (void)state;
    dt_cluster c = dt_cluster_default(64);
    assert_string_equal(c.gpu, "v100");
    assert_int_equal(c.gpus_per_node, 8);
    assert_int_equal(c.nodes, 8);
    assert_int_equal(c.intra, DT_INTRA_NVLINK);
    assert_true(c.nic_bw == 100e9 / 8);  // EDR
    assert_int_equal(c.topo, DT_TOPO_FAT_TREE);
    assert_int_equal(dt_cluster_check(&c, NULL), 0);
    c = dt_cluster_default(20);  // 3 nodes, the last partly used
    assert_int_equal(c.nodes, 3);
    c = dt_cluster_default(4);
    assert_int_equal(c.nodes * c.gpus_per_node, 4);
    c = dt_cluster_default(0);
    assert_true(c.nodes >= 1);
    assert_int_equal(dt_cluster_check(&c, NULL), 0);
}

// ---- check ----

static void expect_check_error(const dt_cluster *c, const char *field) {
    dt_error err = {0};
    assert_int_equal(dt_cluster_check(c, &err), -1);
    assert_int_equal(err.code, DT_EXIT_USAGE);
    if (!strstr(err.msg, field)) fail_msg("message '%s' does not name '%s'", err.msg, field);
}

static void test_check_names_the_bad_field(void **state) {
    (void)state;
    dt_cluster ok = dt_cluster_default(32), c;
    c = ok, c.nodes = 0;
    expect_check_error(&c, "nodes");
    c = ok, c.gpus_per_node = -1;
    expect_check_error(&c, "gpus_per_node");
    c = ok, c.intra_bw = NAN;
    expect_check_error(&c, "intra_bw");
    c = ok, c.nic_bw = 0;
    expect_check_error(&c, "nic_bw");
    c = ok, c.nics = 0;
    expect_check_error(&c, "nics");
    c = ok, c.net_lat = -1e-6;
    expect_check_error(&c, "net_lat");
    c = ok, c.intra_lat = INFINITY;
    expect_check_error(&c, "intra_lat");
    c = ok, c.oversubscription = 0.5;
    expect_check_error(&c, "oversubscription");
    c = ok, snprintf(c.gpu, sizeof c.gpu, "k80");
    expect_check_error(&c, "k80");
    c = ok, c.topo = DT_TOPO_TORUS, snprintf(c.topo_params, sizeof c.topo_params, "2,3");
    expect_check_error(&c, "topo_params");  // 6 nodes, the cluster has 4
    c = ok, c.topo = DT_TOPO_FAT_TREE, snprintf(c.topo_params, sizeof c.topo_params, "2;4");
    expect_check_error(&c, "topo_params");
    c = ok, c.topo = DT_TOPO_TORUS, snprintf(c.topo_params, sizeof c.topo_params, "4,1,1");
    expect_check_error(&c, "topo_params");
    c = ok, c.topo = DT_TOPO_DRAGONFLY, snprintf(c.topo_params, sizeof c.topo_params, "4,1;1,1;1,1;1");
    expect_check_error(&c, "topo_params");  // 4 groups need 4 routers per chassis
    c = ok, c.topo = DT_TOPO_FLAT, snprintf(c.topo_params, sizeof c.topo_params, "4");
    expect_check_error(&c, "topo_params");
    c = ok, c.topo = DT_TOPO_FAT_TREE, snprintf(c.topo_params, sizeof c.topo_params, "2;2,2;1,2;1,1");
    assert_int_equal(dt_cluster_check(&c, NULL), 0);  // a valid explicit one passes
}

// ---- topology parameters ----

static long long product(const char *list) {  // "a,b,c" -> a*b*c
    long long p = 1;
    for (const char *s = list; *s;) {
        char *e;
        p *= strtol(s, &e, 10);
        s = *e == ',' ? e + 1 : e;
        if (*e && *e != ',') break;
    }
    return p;
}

static void test_derived_topology_parameters_describe_exactly_the_nodes(void **state) {
    (void)state;
    for (int trial = 0; trial < 200; trial++) {
        dt_cluster c = dt_cluster_default(8);
        c.nodes = trial < 20 ? trial + 1 : tu_int(&rng, 1, 3000);
        c.oversubscription = tu_int(&rng, 1, 4);
        char tp[128];
        dt_error err = {0};
        int d, s, u1, u, g, lb, ch, lk, b, lg, n;
        c.topo = DT_TOPO_FAT_TREE;
        assert_int_equal(dt_cluster_topology(&c, tp, sizeof tp, &err), 0);
        if (sscanf(tp, "2;%d,%d;%d,%d;1,1", &d, &s, &u1, &u) == 4) {
            assert_int_equal(d * s, c.nodes);
            assert_true(d >= 2 && d <= 16 && s >= 2 && u1 == 1);
            assert_int_equal(u, (int)fmax(1, lround(d / c.oversubscription)));
        } else {
            assert_int_equal(sscanf(tp, "1;%d;1;1", &d), 1);
            assert_int_equal(d, c.nodes);
        }
        c.topo = DT_TOPO_TORUS;
        assert_int_equal(dt_cluster_topology(&c, tp, sizeof tp, &err), 0);
        assert_int_equal(product(tp), c.nodes);
        for (const char *q = tp; strchr(tp, ',') && *q; q = strchr(q, ',') ? strchr(q, ',') + 1 : "")
            assert_true(atoi(q) >= 2);  // SimGrid 3.32 aborts on a dimension of 1 beside others
        c.topo = DT_TOPO_DRAGONFLY;
        assert_int_equal(dt_cluster_topology(&c, tp, sizeof tp, &err), 0);
        assert_int_equal(sscanf(tp, "%d,%d;%d,%d;%d,%d;%d", &g, &lb, &ch, &lk, &b, &lg, &n), 7);
        assert_int_equal((long long)g * ch * b * n, c.nodes);
        assert_true(g <= b);
        c.topo = DT_TOPO_FLAT;
        assert_int_equal(dt_cluster_topology(&c, tp, sizeof tp, &err), 0);
        assert_string_equal(tp, "");
    }
}

// ---- α-β figures ----

static void test_cost_figures_follow_links_and_mean_route_length(void **state) {
    (void)state;
    dt_cluster c;
    double a, b, ai, bi;
    assert_int_equal(dt_cluster_preset("mikami2018", 0, &c, NULL), 0);
    dt_cluster_cost(&c, &a, &b, &ai, &bi);
    assert_true(fabs(b * 2 * 12.5e9 - 1) < 1e-12);  // 1 / (2 x EDR)
    assert_true(fabs(bi * 50e9 - 1) < 1e-12);
    assert_true(ai == c.intra_lat);
    // fat tree "2;16,34;...": 15 of the other 543 nodes share the leaf (2 links), the rest
    // cross a spine (4 links)
    assert_true(fabs(a / (c.net_lat * (2.0 * 15 / 543 + 4.0 * 528 / 543)) - 1) < 1e-12);
    c.topo = DT_TOPO_FLAT;
    dt_cluster_cost(&c, &a, NULL, NULL, NULL);
    assert_true(fabs(a / (2 * c.net_lat) - 1) < 1e-12);
    // torus: brute-force mean over all ordered pairs of distinct nodes of the ring distances
    for (int trial = 0; trial < 5; trial++) {
        int dims[3] = {tu_int(&rng, 2, 6), tu_int(&rng, 2, 6), tu_int(&rng, 2, 6)};
        c.nodes = dims[0] * dims[1] * dims[2];
        c.topo = DT_TOPO_TORUS;
        snprintf(c.topo_params, sizeof c.topo_params, "%d,%d,%d", dims[0], dims[1], dims[2]);
        double sum = 0;
        for (int i = 0; i < c.nodes; i++)
            for (int j = 0; j < c.nodes; j++) {
                int xi = i, xj = j;
                for (int k = 0; k < 3; k++) {
                    int o = abs(xi % dims[k] - xj % dims[k]);
                    sum += o < dims[k] - o ? o : dims[k] - o;
                    xi /= dims[k], xj /= dims[k];
                }
            }
        dt_cluster_cost(&c, &a, NULL, NULL, NULL);
        double mean = sum / ((double)c.nodes * (c.nodes - 1));
        assert_true(fabs(a / (c.net_lat * mean) - 1) < 1e-12);
    }
    // dragonfly: between 2 links (same router) and 7 (green, black, blue, green, black)
    c.nodes = 96, c.topo = DT_TOPO_DRAGONFLY, c.topo_params[0] = '\0';
    dt_cluster_cost(&c, &a, NULL, NULL, NULL);
    assert_true(a > 2 * c.net_lat && a < 7 * c.net_lat);
    c.nics = 0;  // invalid: NaN, not a silent number
    dt_cluster_cost(&c, &a, &b, &ai, &bi);
    assert_true(isnan(a) && isnan(b) && isnan(ai) && isnan(bi));
}

// ---- writing and reading back ----

static char *make_dir(void) {
    char *d = strdup("/tmp/dt_plat_test.XXXXXX");
    assert_non_null(mkdtemp(d));
    return d;
}

static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void remove_dir(char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        char p[512];
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.') continue;
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
    free(dir);
}

static void test_written_platform_reads_back_with_its_hosts_and_hostfile_lists_gpus(void **state) {
    (void)state;
    const char *names[] = {"goyal2017", "cho2017", "akiba2017", "jia2018", "mikami2018",
                           "dgx-h100"};
    char *dir = make_dir(), xml[256], hosts[256];
    snprintf(xml, sizeof xml, "%s/p.xml", dir);
    snprintf(hosts, sizeof hosts, "%s/hosts", dir);
    for (int i = 0; i < 6; i++)
        for (int topo = DT_TOPO_FLAT; topo <= DT_TOPO_DRAGONFLY; topo++) {
            dt_cluster c;
            assert_int_equal(dt_cluster_preset(names[i], 0, &c, NULL), 0);
            int nodes = tu_int(&rng, 1, 80);
            assert_int_equal(dt_cluster_preset(names[i], nodes * c.gpus_per_node, &c, NULL), 0);
            c.topo = (dt_topo_kind)topo;
            dt_error err = {0};
            assert_int_equal(dt_cluster_write(&c, xml, hosts, &err), 0);
            assert_int_equal(count_entries(dir), 2);  // no temporary file left
            int h = 0, cores = 0;
            assert_int_equal(dt_platform_file_count(xml, &h, &cores, &err), 0);
            assert_int_equal(h, nodes);
            assert_int_equal(cores, nodes * c.gpus_per_node);
            assert_int_equal(dt_platform_file_hosts(xml, &h, &err), 0);
            assert_int_equal(h, nodes);
            FILE *f = fopen(hosts, "r");
            assert_non_null(f);
            char line[64], want[64];
            int r = 0;
            while (fgets(line, sizeof line, f)) {
                snprintf(want, sizeof want, "node-%d\n", r / c.gpus_per_node);
                assert_string_equal(line, want);  // rank r runs on node r / gpus_per_node
                r++;
            }
            fclose(f);
            assert_int_equal(r, nodes * c.gpus_per_node);
        }
    remove_dir(dir);
}

static void test_write_to_a_bad_path_fails_and_leaves_no_file(void **state) {
    (void)state;
    char *dir = make_dir(), xml[256], hosts[256], bad[256];
    snprintf(xml, sizeof xml, "%s/p.xml", dir);
    snprintf(hosts, sizeof hosts, "%s/hosts", dir);
    snprintf(bad, sizeof bad, "%s/no/such/dir/hosts", dir);
    dt_cluster c = dt_cluster_default(16);
    dt_error err = {0};
    assert_int_equal(dt_cluster_write(&c, xml, bad, &err), -1);  // the hostfile cannot be made
    assert_int_equal(err.code, DT_EXIT_USAGE);
    assert_non_null(strstr(err.msg, bad));
    assert_int_equal(count_entries(dir), 0);  // neither file, nor a temporary
    assert_int_equal(dt_cluster_write(&c, bad, hosts, &err), -1);
    assert_int_equal(count_entries(dir), 0);
    assert_int_equal(dt_cluster_write(&c, xml, xml, &err), -1);  // the same path twice
    assert_int_equal(err.code, DT_EXIT_USAGE);
    c.nodes = 0;  // an invalid cluster writes nothing
    assert_int_equal(dt_cluster_write(&c, xml, hosts, &err), -1);
    assert_int_equal(count_entries(dir), 0);
    remove_dir(dir);
}

static void write_text(const char *path, const char *text, size_t n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    fclose(f);
}

static void expect_file_error(const char *path, const char *what) {
    dt_error err = {0};
    int h = -7;
    assert_int_equal(dt_platform_file_hosts(path, &h, &err), -1);
    assert_int_equal(err.code, DT_EXIT_USAGE);
    assert_int_equal(h, -7);
    assert_non_null(strstr(err.msg, path));
    if (!strstr(err.msg, what)) fail_msg("message '%s' does not say '%s'", err.msg, what);
}

static void test_malformed_platform_files_are_usage_errors_naming_file_and_problem(void **state) {
    (void)state;
    char *dir = make_dir(), p[256], xml[256], hosts[256];
    snprintf(p, sizeof p, "%s/bad.xml", dir);
    write_text(p, "", 0);
    expect_file_error(p, "empty");
    write_text(p, " \n\t\n", 4);
    expect_file_error(p, "empty");
    write_text(p, "node-0\nnode-1\n", 14);
    expect_file_error(p, "not XML");
    write_text(p, "<html><body>hi</body></html>", 28);
    expect_file_error(p, "not a SimGrid platform");
    const char *nohost = "<?xml version='1.0'?>\n<platform version=\"4.1\">\n"
                         "  <zone id=\"z\" routing=\"Full\"></zone>\n</platform>\n";
    write_text(p, nohost, strlen(nohost));
    expect_file_error(p, "no hosts");
    const char *crossed = "<platform><zone id=\"z\" routing=\"Full\"><host id=\"a\" speed=\"1f\"/>"
                          "</platform></zone>";
    write_text(p, crossed, strlen(crossed));
    expect_file_error(p, "malformed");
    expect_file_error("/nonexistent/dir/platform.xml", "cannot read");
    expect_file_error(dir, "read error");  // a directory
    // every proper prefix of a real platform is truncated
    snprintf(xml, sizeof xml, "%s/p.xml", dir);
    snprintf(hosts, sizeof hosts, "%s/h", dir);
    dt_cluster c;
    assert_int_equal(dt_cluster_preset("jia2018", 32, &c, NULL), 0);
    for (int topo = DT_TOPO_FLAT; topo <= DT_TOPO_FAT_TREE; topo++) {
        c.topo = (dt_topo_kind)topo;
        assert_int_equal(dt_cluster_write(&c, xml, hosts, NULL), 0);
        FILE *f = fopen(xml, "rb");
        char buf[16384];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        const char *end = strstr(buf, "</platform>");
        assert_non_null(end);
        for (int trial = 0; trial < 20; trial++) {
            size_t cut = (size_t)tu_int(&rng, 1, (int)(end - buf) + 10);  // inside </platform> too
            if (cut >= n) continue;
            write_text(p, buf, cut);
            dt_error err = {0};
            int h;
            int rc = dt_platform_file_hosts(p, &h, &err);
            if (rc != -1) fail_msg("a file cut at byte %zu of %zu was accepted", cut, n);
            assert_int_equal(err.code, DT_EXIT_USAGE);
        }
    }
    remove_dir(dir);
}

static void test_platform_file_counts_hosts_clusters_and_cores(void **state) {
    (void)state;
    char *dir = make_dir(), p[256];
    snprintf(p, sizeof p, "%s/u.xml", dir);
    int k = tu_int(&rng, 1, 9), a = tu_int(&rng, 0, 20), b = a + tu_int(&rng, 0, 30);
    char text[2048];
    snprintf(text, sizeof text,
             "\xEF\xBB\xBF<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
             "<!-- <host id=\"commented-out\"/> -->\n"
             "<platform version=\"4.1\">\n"
             "  <zone id='world' routing='Full'>\n"
             "    <host id='h1' speed='1Gf' core='%d'><prop id='x' value='a > b'/></host>\n"
             "    <host id=\"h2\" speed=\"1Gf\"/>\n"
             "    <cluster id='c' prefix='n-' suffix='' radical='%d-%d,100,200-201' speed='1Gf' "
             "core=\"3\" bw='1GBps' lat='1us'/>\n"
             "  </zone>\n</platform>\n",
             k, a, b);
    write_text(p, text, strlen(text));
    int hosts = 0, cores = 0;
    dt_error err = {0};
    assert_int_equal(dt_platform_file_count(p, &hosts, &cores, &err), 0);
    int nclu = (b - a + 1) + 1 + 2;
    assert_int_equal(hosts, 2 + nclu);
    assert_int_equal(cores, k + 1 + 3 * nclu);
    remove_dir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_presets_match_reference_hardware_and_paper_setups),
        cmocka_unit_test(test_preset_sized_by_gpus_gives_gpus_over_gpus_per_node_nodes),
        cmocka_unit_test(test_unknown_preset_fails_with_the_list_of_presets),
        cmocka_unit_test(test_gpus_not_a_multiple_of_the_node_is_a_usage_error),
        cmocka_unit_test(test_default_cluster_is_v100_nvlink_edr_fat_tree),
        cmocka_unit_test(test_check_names_the_bad_field),
        cmocka_unit_test(test_derived_topology_parameters_describe_exactly_the_nodes),
        cmocka_unit_test(test_cost_figures_follow_links_and_mean_route_length),
        cmocka_unit_test(test_written_platform_reads_back_with_its_hosts_and_hostfile_lists_gpus),
        cmocka_unit_test(test_write_to_a_bad_path_fails_and_leaves_no_file),
        cmocka_unit_test(test_malformed_platform_files_are_usage_errors_naming_file_and_problem),
        cmocka_unit_test(test_platform_file_counts_hosts_clusters_and_cores),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
