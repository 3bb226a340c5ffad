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
    {"ampere", 0, 9, 1, -0.443, 0.491},
    {"ampere", 1, 9, 1, -0.017, 0.332},
    {"ampere", 2, 9, 1, -0.017, 0.332},
    {"hopper", 0, 9, 1, -0.223, 0.119},
    {"hopper", 1, 9, 1, -0.066, 0.118},
    {"hopper", 2, 8, 1, -0.019, 0.118},
    {"pascal", 0, 4, 1, 0.000, 0.671},
    {"pascal", 1, 4, 1, -0.113, 0.036},
    {"pascal", 2, 20, 0, -0.115, 0.332},
    {"volta", 0, 4, 1, -0.172, 2.057},
    {"volta", 1, 4, 1, -0.142, 2.163},
    {"volta", 2, 20, 0, -0.115, 0.332},
};

#endif
