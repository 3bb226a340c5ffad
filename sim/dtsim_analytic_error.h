// dtsim_analytic_error.h — the analytic model's difference from the SimGrid
// simulation per algorithm, as measured in bench/ANALYTIC.md (the iteration time,
// analytic against simulated, in %). Written by
// `bench/analytic_error.py --gpus 8,64,256,1024,4096,16384 --algos ring,rhd,dbtree,hier,torus2d --keep bench/ANALYTIC.md --rerun ring:8`;
// do not edit by hand. `dtsim --analytic` prints its algorithm's line.
#ifndef DT_SIM_DTSIM_ANALYTIC_ERROR_H
#define DT_SIM_DTSIM_ANALYTIC_ERROR_H

typedef struct {
    const char *algo;
    int gpus_lo, gpus_hi;    // the GPU counts measured (simulation finished)
    double err_lo, err_hi;   // the smallest and largest error, %
    const char *not_measured;  // the GPU counts left out and why ("": none)
} dtsim_analytic_error;

static const dtsim_analytic_error dtsim_analytic_errors[] = {
    {"ring", 8, 16384, -16.8, -2.8,
     ""},
    {"rhd", 8, 16384, -5.8, -2.4,
     ""},
    {"dbtree", 8, 16384, -4.2, 8.9,
     ""},
    {"hier", 8, 16384, -11.0, -2.3,
     ""},
    {"torus2d", 8, 16384, -2.2, -0.4,
     ""},
};

#endif
