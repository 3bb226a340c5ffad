// profile.h — measured figures that replace the roofline's (docs/formulas.md, "Calibration
// from your measurements"): one rank's training step per layer kind, as `dtrain --profile`
// measures it, and the links' α and β, which `dtsim calibrate` fits to `dtcoll-bench --csv`
// tables. One JSON format for both (a dtrain profile is a profile without links), read by
// `dtsim --profile FILE`. The format, version 1:
//   {"dtlab_profile": 1, "source": "...", "model": "resnet8", "device": "cpu",
//    "precision": "fp32", "batch": 32, "image_size": 32, "channels": 3, "classes": 10,
//    "steps": 20, "step_s": 0.0512,
//    "kinds": {"conv.forward": 0.0101, "conv.backward": 0.0203, ..., "rest": 0.0012},
//    "links": {"intra": {"alpha_s": 1.1e-6, "beta_s_per_byte": 2.3e-10, "from": "a.csv"},
//              "inter": {...}}}
// kinds: seconds per step of each layer kind (nn/net.h: "<type>.forward", "<type>.backward",
// "rest" for what is no layer's: upload, loss, optimizer); step_s is their sum. links is
// optional, and so is each of its two members.
// Not here: using it (sim/dtsim_run.c), the dtrain side (real/dtrain_profile.c).
#ifndef DT_SIM_PROFILE_H
#define DT_SIM_PROFILE_H

#include "dt.h"
#include "net.h"

typedef struct {
    double alpha, beta;  // seconds per message, seconds per byte (0, 0: not measured)
    char from[160];      // the table it was fitted to
    double fit_from, fit_to;  // bytes: the sizes β was fitted over (not in the file)
} dt_link_fit;

typedef struct {
    char source[160], model[32], device[16], precision[8];
    int batch, image_size, channels, classes;
    long steps;
    double step_s;
    double kind_s[DT_N_KINDS];  // seconds per step; -1: the kind does not occur
    dt_link_fit intra, inter;
} dt_profile;

// Reads and checks a profile; -1 with DT_EXIT_USAGE and a message naming the file and the
// member on anything malformed, missing, negative, not finite or inconsistent.
int dt_profile_read(const char *path, dt_profile *p, dt_error *err);
// Writes it atomically (no partial file is ever left); -1 with err.
int dt_profile_write(const char *path, const dt_profile *p, dt_error *err);

// Fits t = 2(P-1)·α + 2(P-1)/P·n·β (the ring allreduce, nn/coll's cost model, its
// reductions folded into β) to the rows of a dtcoll-bench --csv table for `algo` (ring):
// β the slope over the large end of the sweep (sizes ≥ 1/16 of the largest), α from the
// intercept at the two smallest sizes (Hockney's r∞ and t0). -1 with DT_EXIT_USAGE on a
// malformed table or one with fewer than 2 sizes of that algorithm.
int dt_profile_fit_links(const char *csv, const char *algo, dt_link_fit *fit, dt_error *err);

typedef struct {
    double x, y;  // x = 2(P-1)/P·n bytes, y = seconds
} dt_fit_row;
// The same fit to n measured rows of P ranks (reordered by size); `from` and `algo` name
// them in messages. Rows of one size only: β = their mean time / x, α = 0 (no intercept).
int dt_profile_fit_rows(dt_fit_row *r, int n, int P, const char *from, const char *algo,
                        dt_link_fit *fit, dt_error *err);

// The link as dtrain's own allreduce sees it: the same fit to the fusion buckets a training
// run really sent (`mpirun -np 2 dtrain ... --no-overlap --trace T.json`; sim/profile_trace.c):
// each bucket's time in each traced step is the shortest of the ranks' (the last rank to
// start waits for nobody: the others' longer spans include waiting for it, the ranks' skew),
// and each bucket contributes the median over the traced steps and over the n files. -1 with
// DT_EXIT_USAGE and a message naming the file on anything malformed (not a dtrain trace, no
// allreduce events, events without their bytes, ranks with different events).
int dt_profile_fit_traces(const char *const *paths, int n, dt_link_fit *fit, dt_error *err);

#endif
