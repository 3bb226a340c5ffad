// dtsim_analytic_error.h — the analytic model's difference from the SimGrid
// simulation per algorithm, as measured in bench/ANALYTIC.md (the iteration time,
// analytic against simulated, in %). Written by
// `bench/analytic_error.py --gpus 8,64,256,1024,4096,16384 --algos ring,rhd,dbtree,hier,torus2d --keep bench/ANALYTIC.md --rerun ring:8,ring:64,ring:256,ring:1024,ring:4096,rhd:8,rhd:64,rhd:256,rhd:1024,rhd:4096,dbtree:8,dbtree:64,dbtree:256,dbtree:1024,dbtree:4096,hier:8,hier:64,hier:256,hier:1024,hier:4096,torus2d:8,torus2d:64,torus2d:256,torus2d:1024,torus2d:4096`;
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
    {"ring", 8, 16384, -16.3, -3.1,
     ""},
    {"rhd", 8, 16384, -5.8, -2.3,
     ""},
    {"dbtree", 8, 16384, -4.2, 8.3,
     ""},
    {"hier", 8, 16384, -11.0, -1.7,
     ""},
    {"torus2d", 8, 16384, -2.1, -0.4,
     ""},
};

#endif
