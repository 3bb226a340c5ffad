// dtsim_heldout.h — written by bench/heldout.py from bench/HELDOUT.md's runs; do not edit by hand.
// The band of time-to-train: the largest held-out error of the runs of a GPU generation,
// calibrated from the table (1) or on the roofline alone (0); `runs` it rests on.
#ifndef DT_SIM_DTSIM_HELDOUT_H
#define DT_SIM_DTSIM_HELDOUT_H

static const struct {
    const char *gen;
    int calibrated, runs, own;
    double band;
} dtsim_heldout[] = {
    {"ampere", 0, 6, 1, 0.5088},
    {"ampere", 1, 6, 1, 0.1767},
    {"hopper", 0, 4, 1, 0.3628},
    {"hopper", 1, 3, 1, 0.3527},
    {"pascal", 0, 4, 1, 0.7353},
    {"pascal", 1, 3, 1, 0.5578},
    {"volta", 0, 4, 1, 2.1616},
    {"volta", 1, 4, 1, 2.2740},
};

#endif
