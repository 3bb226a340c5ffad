// test_sim_generation.c — each GPU generation's node and network against docs/hardware.md
// (figures recomputed here from the published link counts and rates, not copied from
// sim/generation.c), dtsim's bandwidth units against a conversion written here, and the
// plausibility rule with its messages.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "generation.h"
#include "testutil.h"

static tu_rng rng;

static int setup(void **state) {
    (void)state;
    rng = tu_rng_new(tu_seed());
    return 0;
}

// ---- per-generation defaults (docs/hardware.md, "Per-generation defaults") ----

static void test_generations_match_published_links_and_nics(void **state) {
    (void)state;
    const double Gb = 1e9 / 8;  // bits/s -> bytes/s
    // NVLink: links per GPU x GB/s per link per direction (published as both directions)
    const double nvl1 = 160e9 / 2 / 4, nvl2 = 300e9 / 2 / 6, nvl3 = 600e9 / 2 / 12,
                 nvl4 = 900e9 / 2 / 18;
    struct {
        const char *gpu;
        dt_intra_kind big, small;
        double nvlink, nvswitch, pcie, nic;
    } rows[] = {
        // DGX-1 P100: one link per pair; no NVSwitch; PCIe 3.0 x16; EDR 100 Gb/s
        {"p100", DT_INTRA_NVLINK, DT_INTRA_NVLINK, nvl1, 0, 12e9, 100 * Gb},
        // P40: PCIe only; 100 Gb/s (Jia et al.'s RoCE)
        {"p40", DT_INTRA_PCIE, DT_INTRA_PCIE, 0, 0, 12e9, 100 * Gb},
        // DGX-1 V100: one link per pair (dtsim's default cluster); DGX-2 NVSwitch: 6 links
        {"v100", DT_INTRA_NVLINK, DT_INTRA_NVLINK, nvl2, 6 * nvl2, 12e9, 100 * Gb},
        // DGX A100: NVSwitch, all 12 links; a 4-GPU board: 12 links over 3 peers; HDR
        {"a100", DT_INTRA_NVSWITCH, DT_INTRA_NVLINK, 12 * nvl3 / 3, 12 * nvl3, 24e9, 200 * Gb},
        // DGX H100: NVSwitch, all 18 links; a 4-GPU board: 18 over 3; NDR
        {"h100", DT_INTRA_NVSWITCH, DT_INTRA_NVLINK, 18 * nvl4 / 3, 18 * nvl4, 48e9, 400 * Gb},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const dt_generation *g = dt_generation_find(rows[i].gpu);
        assert_non_null(g);
        assert_int_equal(dt_generation_intra(g, 8), rows[i].big);
        assert_int_equal(dt_generation_intra(g, tu_int(&rng, 9, 16)), rows[i].big);
        assert_int_equal(dt_generation_intra(g, tu_int(&rng, 1, 4)), rows[i].small);
        double want[3] = {rows[i].nvlink, rows[i].nvswitch, rows[i].pcie};
        for (int k = 0; k < 3; k++) {
            assert_true(fabs(g->intra_bw[k] - want[k]) <= 1e-9 * want[k]);
            assert_int_equal(g->intra_what[k] != NULL, want[k] > 0);  // a figure says its link
        }
        assert_true(fabs(g->nic_bw - rows[i].nic) <= 1e-9 * rows[i].nic);
        assert_non_null(g->nic_what);
    }
    // case-insensitive like dt_gpu_find; unknown GPUs have no generation
    assert_ptr_equal(dt_generation_find("H100"), dt_generation_find("h100"));
    assert_null(dt_generation_find("b200"));
    assert_null(dt_generation_find(NULL));
    // every generation's own links are plausible (below the fastest that exists)
    const char *names[] = {"p100", "p40", "v100", "a100", "h100"};
    char msg[256];
    for (int i = 0; i < 5; i++) {
        const dt_generation *g = dt_generation_find(names[i]);
        for (int k = 0; k < 3; k++)
            assert_int_equal(dt_bandwidth_check("--intra-bw", "x", g->intra_bw[k], DT_BW_PLAIN, 0,
                                                msg, sizeof msg), 0);
        assert_int_equal(dt_bandwidth_check("--net-bw", "x", g->nic_bw, DT_BW_PLAIN, 1, msg,
                                            sizeof msg), 0);
    }
}

// ---- units ----

static void test_bandwidth_units_convert_bits_and_bytes(void **state) {
    (void)state;
    for (int t = 0; t < 50; t++) {
        double v = round(tu_uniform(&rng, 1, 2000) * 8) / 8;  // exact in decimal
        char s[64];
        struct { const char *fmt; double bytes_per_unit; dt_bw_unit unit; } cases[] = {
            {"%.3f", 1e9, DT_BW_PLAIN},     {"%.3fGB", 1e9, DT_BW_BYTES},
            {"%.3fGB/s", 1e9, DT_BW_BYTES}, {"%.3fGb", 1e9 / 8, DT_BW_BITS},
            {"%.3fGb/s", 1e9 / 8, DT_BW_BITS}, {"%.3fGbps", 1e9 / 8, DT_BW_BITS},
            {"%.3fGbit/s", 1e9 / 8, DT_BW_BITS}, {"%.3fMb", 1e6 / 8, DT_BW_BITS},
            {"%.3fTB/s", 1e12, DT_BW_BYTES}, {"%.3f Gb/s", 1e9 / 8, DT_BW_BITS},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            snprintf(s, sizeof s, cases[i].fmt, v);
            double bw = 0;
            dt_bw_unit u = DT_BW_PLAIN;
            dt_error err = {0};
            assert_int_equal(dt_parse_bandwidth(s, "--net-bw", &bw, &u, &err), 0);
            assert_true(fabs(bw - v * cases[i].bytes_per_unit) <= 1e-12 * bw);
            assert_int_equal(u, cases[i].unit);
        }
    }
}

static void test_bad_bandwidths_are_refused_naming_option_and_fix(void **state) {
    (void)state;
    struct { const char *s, *want; } bad[] = {
        {"400gb", "capitals"}, {"400G", "bits or bytes"}, {"x", "is not a bandwidth"},
        {"-5", "is not a bandwidth"}, {"0", "is not a bandwidth"}, {"nan", "is not a bandwidth"},
        {"400Gb/h", "is not a bandwidth"}, {"400GBps", "is not a bandwidth"}, {"", "is not"},
        {"400 Kb", "is not a bandwidth"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double bw = 0;
        dt_bw_unit u;
        dt_error err = {0};
        assert_int_equal(dt_parse_bandwidth(bad[i].s, "--intra-bw", &bw, &u, &err), -1);
        assert_int_equal(err.code, DT_EXIT_USAGE);
        assert_non_null(strstr(err.msg, "--intra-bw"));
        if (!strstr(err.msg, bad[i].want)) fail_msg("'%s': %s", bad[i].s, err.msg);
    }
}

// ---- plausibility: beyond any link that exists ----

static void test_implausible_bandwidths_name_the_bound_and_the_likely_mistake(void **state) {
    (void)state;
    char msg[512];
    // a NIC: 800 Gb/s is the fastest; 400 typed as GB/s is 3200 Gb/s, the buyer meant 400Gb
    assert_int_equal(dt_bandwidth_check("--net-bw", "800Gb", 100e9, DT_BW_BITS, 1, msg,
                                        sizeof msg), 0);
    assert_int_equal(dt_bandwidth_check("--net-bw", "400", 400e9, DT_BW_PLAIN, 1, msg,
                                        sizeof msg), 1);
    assert_non_null(strstr(msg, "--net-bw 400: 400 GB/s (3200 Gb/s) per NIC"));
    assert_non_null(strstr(msg, "800 Gb/s"));
    assert_non_null(strstr(msg, "a plain number is GB/s: if you meant 400 Gb/s (50 GB/s), "
                                "write 400Gb"));
    assert_int_equal(dt_bandwidth_check("--net-bw", "200GB", 200e9, DT_BW_BYTES, 1, msg,
                                        sizeof msg), 1);
    assert_non_null(strstr(msg, "GB is bytes: if you meant 200 Gb/s (25 GB/s), write 200Gb"));
    // given in bits already and still too fast: the node's NICs together, most likely
    assert_int_equal(dt_bandwidth_check("--net-bw", "3200Gb", 400e9, DT_BW_BITS, 1, msg,
                                        sizeof msg), 1);
    assert_non_null(strstr(msg, "--nics"));
    // inside a node: NVLink 5's 900 GB/s one direction is the bound
    assert_int_equal(dt_bandwidth_check("--intra-bw", "900", 900e9, DT_BW_PLAIN, 0, msg,
                                        sizeof msg), 0);
    assert_int_equal(dt_bandwidth_check("--intra-bw", "3600", 3600e9, DT_BW_PLAIN, 0, msg,
                                        sizeof msg), 1);
    assert_non_null(strstr(msg, "beyond the fastest NVLink (NVLink 5: 900 GB/s one direction"));
    assert_non_null(strstr(msg, "if you meant 3600 Gb/s (450 GB/s), write 3600Gb"));
    // a random value on either side of each bound
    for (int t = 0; t < 100; t++) {
        int nic = t & 1;
        double max = nic ? DT_NIC_MAX_BW : DT_INTRA_MAX_BW, f = tu_uniform(&rng, 0.01, 3);
        assert_int_equal(dt_bandwidth_check("--x", "v", f * max, DT_BW_BYTES, nic, msg,
                                            sizeof msg), f > 1);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generations_match_published_links_and_nics),
        cmocka_unit_test(test_bandwidth_units_convert_bits_and_bytes),
        cmocka_unit_test(test_bad_bandwidths_are_refused_naming_option_and_fix),
        cmocka_unit_test(test_implausible_bandwidths_name_the_bound_and_the_likely_mistake),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
