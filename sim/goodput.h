// goodput.h — what failures and checkpoints cost a training run: the expected wall-clock time
// to train when the job fails now and then and restarts from its last checkpoint, in closed
// form (Daly 2006) and by a seeded Monte-Carlo over the whole run, and the checkpoint interval
// that maximises goodput beside Young's (1974) and Daly's first-order ones.
// Failures live above the step: the step time comes from the simulation, this file only
// composes it with the failure process (docs/formulas.md, "Failures, checkpoints, goodput").
// Not here: where the inputs come from (sim/dtsim.c: the model's checkpoint size, the
// storage's bandwidth, the failure rate), or anything SimGrid simulates.
//
// The model. Failures arrive as a Poisson process of mean time between failures M (the whole
// job's: M = 1 / (rate per GPU-hour x GPUs + rate per node-hour x nodes)). The run is
// segments of `interval_s` of training, each followed by a checkpoint that stops training
// for `stall_s`. A failure loses the work since the last checkpoint that is on storage, then
// the job restarts (`restart_s`: relaunch and read the checkpoint back), and a failure during
// a restart or a checkpoint starts that over too. Blocking checkpoints are on storage when the
// stall ends (stall = the write); asynchronous ones copy the state to host memory during the
// stall and write it in the background, on storage `save_s` after the stall; one writer, so
// where a write outlasts a segment the next snapshot waits for it (training stands still).
#ifndef DT_GOODPUT_H
#define DT_GOODPUT_H

#include <stdint.h>

typedef struct {
    double work_s;      // failure-free time to train (steps x simulated step time), seconds
    double mtbf_s;      // the job's mean time between failures, seconds (> 0; inf: none)
    double interval_s;  // training between two checkpoints, seconds (> 0)
    double stall_s;     // training stopped per checkpoint, seconds (>= 0)
    double save_s;      // asynchronous: the background write after the stall, seconds
    double restart_s;   // relaunch + read the checkpoint back, seconds (>= 0)
    int async;          // 0: blocking (the stall is the write), 1: asynchronous
} dt_goodput_in;

typedef struct {
    double wall_s;       // expected wall-clock time to train
    double failures;     // expected interruptions (failures during restarts included)
    double ckpt_s;       // time training stood still for checkpoints
    double lost_s;       // the rest of the overhead: lost work and restarts
    double goodput;      // work_s / wall_s
} dt_goodput;

// The expectation in closed form. Blocking: exact for the model above (Daly 2006, the
// expected time to complete a segment of length X = interval + stall with restart R under
// exponential failures: M e^{R/M} (e^{X/M} - 1)). Asynchronous: first order in X/M (a
// failure in the `save_s` after a snapshot also loses the segment before it).
dt_goodput dt_goodput_expected(const dt_goodput_in *in);

// The same by simulating the run `trials` times (seeded, reproducible): the mean, and the
// half-width of its 95 % confidence interval in *wall_ci_s (1.96 sigma / sqrt(trials)).
dt_goodput dt_goodput_monte_carlo(const dt_goodput_in *in, int trials, uint64_t seed,
                                  double *wall_ci_s);

// The checkpoint interval that maximises the closed form's goodput (golden-section search
// up to the whole run), and the classic estimates: Young (1974) sqrt(2 C M) and Daly's (2006)
// higher-order one, with C the stall.
double dt_goodput_best_interval(const dt_goodput_in *in);
double dt_goodput_young_interval(double stall_s, double mtbf_s);
double dt_goodput_daly_interval(double stall_s, double mtbf_s);

#endif
