// dtsim.h — the dtsim launcher's pieces: its options, one simulated run (write the platform,
// run SimGrid on the rank program, read its result), and the report (table, CSV, JSON, plots).
// dtsim.c parses and drives; dtsim_run.c runs; dtsim_report.c reports.
#ifndef DT_SIM_DTSIM_H
#define DT_SIM_DTSIM_H

#include "coll/coll.h"
#include "coll/fusion.h"
#include "gpu.h"
#include "platform.h"
#include "profile.h"

typedef struct {
    dt_cluster cluster;        // --preset / --gpus / --gpu / --gpus-per-node / --topology ...
    char platform_file[512];   // --platform FILE.xml (then cluster only names the GPU)
    int gpus;                  // GPUs simulated
    char model[32];            // --model
    int global_batch;          // --batch (0: per_gpu_batch × gpus)
    int per_gpu_batch;         // --per-gpu-batch
    int accumulate;            // --accumulate K: micro-batches per step (1)
    dt_precision prec;         // --precision
    // --gpu-img-s (or the preset's paper figure): one GPU trains gpu_img_s images/s at
    // calib_batch per GPU in calib_prec; 0 = the roofline's own time (docs/formulas.md)
    double gpu_img_s;
    int calib_batch;
    dt_precision calib_prec;
    // --profile FILE: measured seconds per layer kind (and links), sim/profile.h
    int has_profile;
    char profile_path[512];
    dt_profile profile;
    // the input side and classes of the modelled network (0: the model's own; a profile's)
    int model_side, model_classes;
    int lars;                  // --optimizer lars|sgd
    dt_coll_opts coll;         // --algo --fp16-grads --group --inner --hier-rs --torus
    dt_fusion_opts fusion;     // --fusion
    int overlap;               // --no-overlap
    int iters, warmup;         // --iters --warmup
    double dataset, epochs;    // --dataset-size --epochs
    int coarsen;               // --coarsen (-1: automatic)
    char csv[512], plot[512], trace[512];
    int trace_ranks;           // --trace-ranks
    int json, quiet, keep;     // --json --quiet --keep (the platform files)
    int no_memory_check;  // --no-memory-check: simulate even past the memory estimate
    // sweep
    int sweep;
    int sweep_gpus[32], n_sweep_gpus;
    dt_algo sweep_algos[8];
    int n_sweep_algos;
    // --device cpu: real numbers (the cpu device) on dtrain's synthetic data, small scale
    int cpu, image_size, classes;
    long synthetic_n;
    unsigned long long seed;
    double lr;
} dtsim_opts;

typedef struct {
    int gpus, global_batch, per_gpu_batch, buckets;
    char algo[16];
    double iter_s, compute_s, comm_s, exposed_s;   // per iteration (simulated)
    double single_iter_s;                          // one GPU of the same profile, same batch
    double roofline_iter_s;                        // the same before calibration
    double time_scale;                             // the calibration's factor (1: none)
    long long params;                              // the model's trainable parameters
    double calib_roofline_img_s;                   // the roofline's images/s where calibrated
    double kind_scale[DT_N_KINDS];                 // --profile: each kind's factor
    double model_comm_s;                           // the cost model's allreduce time per step
    double images_s, efficiency, epoch_s, train_s;
    double wall_s;                                 // real seconds the simulation took
} dtsim_result;

// Run one simulation for o (o->gpus GPUs, o->coll.algo); 0, or the exit code with a message
// already printed (2: bad input, 1: SimGrid failed).
int dtsim_run_one(const dtsim_opts *o, dtsim_result *r);

// `dtsim calibrate ...` (sim/dtsim_calibrate.c): argv[0] is "calibrate"; an exit code
int dtsim_calibrate_main(int argc, char **argv);
// --profile FILE: reads it into o and makes it the run's defaults (model, per-GPU batch,
// precision, the links of c) where the user gave none; 2 with a message on a bad file
int dtsim_apply_profile(dtsim_opts *o, dt_cluster *c, int model_set, int prec_set);

void dtsim_print_header(FILE *f, const dtsim_opts *o);
void dtsim_print_result(FILE *f, const dtsim_opts *o, const dtsim_result *r, int sweep);
int dtsim_write_csv(const char *path, const dtsim_result *r, int n);  // atomic; -1 on error
void dtsim_print_json(const dtsim_result *r, int n);
// sweep plots: PATH (images/s) and PATH with "-efficiency" before ".png"
int dtsim_plot(const char *path, const dtsim_opts *o, const dtsim_result *r, int n);

#endif
