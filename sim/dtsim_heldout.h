// dtsim_heldout.h — written by bench/heldout.py from bench/HELDOUT.md's runs; do not edit by hand.
// The band of time-to-train: the largest held-out error of the runs of a GPU generation,
// calibrated from the table (1), from one node of its own software (2) or on the roofline alone
// (0): the most negative and most positive throughput error (0 included) of the `runs` it rests on
// (own: its generation's; else every one's).
#ifndef DT_SIM_DTSIM_HELDOUT_H
#define DT_SIM_DTSIM_HELDOUT_H

static const struct {
    const char *gen;
    int calibrated, runs, own;
    double lo, hi;
} dtsim_heldout[] = {
    {"ampere", 0, 9, 1, -0.437, 0.509},
    {"ampere", 1, 9, 1, -0.200, 0.177},
    {"ampere", 2, 9, 1, -0.009, 0.496},
    {"hopper", 0, 9, 1, -0.215, 0.058},
    {"hopper", 1, 9, 1, -0.052, 0.215},
    {"hopper", 2, 8, 1, -0.019, 0.215},
    {"pascal", 0, 4, 1, 0.000, 0.735},
    {"pascal", 1, 3, 1, 0.000, 0.558},
    {"pascal", 2, 20, 0, -0.092, 0.496},
    {"volta", 0, 4, 1, -0.159, 2.162},
    {"volta", 1, 4, 1, -0.176, 2.274},
    {"volta", 2, 20, 0, -0.092, 0.496},
};

#endif
