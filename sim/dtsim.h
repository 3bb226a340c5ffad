// dtsim.h — the dtsim launcher's pieces: its options, one simulated run (write the platform,
// run SimGrid on the rank program, read its result), and the report (table, CSV, JSON, plots).
// dtsim_opts.c reads the command line; dtsim.c drives; dtsim_run.c runs; dtsim_report.c
// reports.
#ifndef DT_SIM_DTSIM_H
#define DT_SIM_DTSIM_H

#include <stdio.h>

#include "coll/coll.h"
#include "coll/coll_cli.h"
#include "coll/fusion.h"
#include "device_model.h"
#include "dtsim_jobs.h"
#include "generation.h"
#include "json.h"
#include "models.h"
#include "net_acts.h"
#include "opt_table.h"
#include "gpu.h"
#include "gpu_calib.h"
#include "platform.h"
#include "profile.h"
#include "rank_run.h"

typedef struct dt_net dt_net;  // nn/net.h

// Where each figure of the run's cluster came from, as the description prints it: "default",
// the option ("--nics"), "preset NAME", "h100 generation: <the link>", "profile FILE".
typedef struct {
    char gpu[48], gpn[48], intra[48], intra_bw[112], intra_lat[48], nics[80], nic_bw[112];
    char net_lat[48], topo[48], prec[96];
} dtsim_sources;

typedef struct {
    dt_cluster cluster;        // --preset / --gpus / --gpu / --gpus-per-node / --topology ...
    char platform_file[512];   // --platform FILE.xml (then cluster only names the GPU)
    int gpus;                  // GPUs simulated
    char model[32];            // --model
    int global_batch;          // --batch (0: per_gpu_batch × gpus)
    int per_gpu_batch;         // --per-gpu-batch
    int accumulate;            // --accumulate K: micro-batches per step (1)
    dt_precision prec;         // --precision: the math (bf16 is DT_PREC_FP16's rate)
    char prec_name[8];         // --precision as given ("": the GPU's default)
    int bf16;                  // the half precision is bf16 (printed so; no loss scaling)
    // --gpu-img-s (or the preset's paper figure): one GPU trains gpu_img_s images/s at
    // calib_batch per GPU in calib_prec; 0 = the roofline's own time (docs/formulas.md)
    double gpu_img_s;
    int calib_batch;
    dt_precision calib_prec;
    // --calib ROW|table|none (sim/gpu_calib.h): the table's row that gpu_img_s came from
    // (NULL: the user's or the preset's figure, or none); calib_arg as given ("": default)
    char calib_arg[48];
    const dt_gpu_calib *calib_row;
    int calib_fitted;          // the figure is the preset's own paper's (fitted, not held out)
    // --profile FILE: measured seconds per layer kind (and links), sim/profile.h
    int has_profile;
    char profile_path[512];
    dt_profile profile;
    // the input side and classes of the modelled network (0: the model's own; a profile's)
    int model_side, model_classes;
    int lars;                  // --optimizer lars|sgd (gpt models: lamb 1, adamw 0)
    char optimizer[8];         // --optimizer as given ("": the model's default)
    int shard;                 // --shard: ZeRO stage 0-3 (sim/zero.h, sim/dtsim_gpt.c)
    int shard_blocks;          // --shard-units block: stage 3's units are blocks (FSDP)
    int seq_len, vocab;        // --seq-len, --vocab: gpt models (0: the model's, or a preset's)
    int flash;                 // --attention flash (1) | naive (0): fused attention
    char attention[8];         // --attention as given ("": the GPU's default)
    dt_coll_opts coll;         // --algo --fp16-grads --group --inner --hier-rs --torus
    dt_fusion_opts fusion;     // --fusion
    int overlap;               // --no-overlap
    int iters, warmup;         // --iters --warmup
    double dataset, epochs;    // --dataset-size --epochs
    int coarsen;               // --coarsen (-1: automatic)
    char csv[512], plot[512], trace[512];
    int json, quiet, keep;     // --json --quiet --keep (the platform files)
    int no_memory_check;  // --no-memory-check: simulate even past the memory estimate
    double max_sim_minutes;  // --max-sim-minutes: a single run estimated longer is analytic
    int fallback;         // a single run: what SimGrid cannot hold here is answered analytic
    int plan_row;         // dtsim plan's candidate: plan itself rejects what does not fit
    // the warnings said on stderr, for the JSON's "warnings" (dtsim_warn_json)
    char warnings[4][480];
    int n_warnings;
    dtsim_sources src;         // where the cluster's figures came from
    int strict;                // --strict: an implausible figure is an error, not a warning
    double price;              // --price-gpu-hour (0: none)
    int csv_stdout;            // --csv -: the CSV on stdout
    int batch_beyond;          // the global batch (largest of a sweep) is beyond what the
                               // optimizer is published to train ResNet-50 to accuracy at
    // sweep
    int sweep;
    int sweep_gpus[32], n_sweep_gpus;
    dt_algo sweep_algos[8];
    int n_sweep_algos;
    // --device cpu: real numbers (the cpu device) on dtrain's synthetic data, small scale
    int cpu;
    unsigned long long seed;   // --seed: the cpu device's weights and data, the stragglers'
    // the rank program's own settings (--trace-ranks, --device cpu's data and SGD), filled by
    // their rows and handed over whole (sim/rank_run.h)
    dt_rank_settings rank;
    // slow GPUs and failures (sim/dtsim_faults.c)
    char straggler[256];        // --straggler SPEC ("": none), drawn from --seed
    double mtbf_h;              // --job-mtbf: the job's, hours (0: from the rates, or none)
    double gpu_mtbf_h;          // --mtbf: one GPU's, hours (the job's: / GPUs)
    double fail_gpu_h, fail_node_h;  // --fail-rate, --node-fail-rate: per GPU-/node-hour
    double ckpt_interval_s;     // --ckpt-interval (0: auto, the best goodput)
    double storage_bw, fs_bw;   // --storage-bw per node, --fs-bw shared cap (bytes/s; 0: default)
    double restart_s;           // --restart: relaunch seconds (-1: default)
    int ckpt_async;             // --ckpt-async
    int analytic;               // --analytic: the cost model instead of SimGrid
    // tensor and pipeline parallelism (sim/dtsim_3d.c; Narayanan et al. 2021): --tp, --pp,
    // --micro-batch, --pp-schedule (a dt_pipe_kind and its chunks per stage), --recompute
    // (nn/net_acts.h dt_recompute: 0 none, 1 full, 2 selective); the
    // data-parallel degree is gpus / (tp pp)
    int tp, pp, micro_batch, pp_kind, pp_chunks, recompute;
    // --sequence-parallel (Korthikanti et al. 2022 §4.2.2): the activations tensor
    // parallelism leaves whole on every rank (layer norms, dropouts, the residual stream)
    // split along the sequence; the cost model's memory (sim/dtsim_3d.c)
    int seq_par;
    // --simgrid: a 3D layout simulated by SimGrid (the trainer's own pipeline and tensor
    // parallelism, nn/train_pipe.c and train_tp.c, on modelled GPUs) beside the cost model
    int simgrid_3d;
    // --layers, --hidden, --heads: a gpt shape of one's own over --model's (0: the model's)
    int layers, hidden, heads;
    dtsim_jobs_opts par;        // -j, --slice, --gather, --slurm (sim/dtsim_jobs.h)
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
    int calib_node;        // the row's node of calib_node GPUs reproduced, collectives included
    double kind_scale[DT_N_KINDS];                 // --profile: each kind's factor
    double model_comm_s;                           // the cost model's allreduce time per step
    double comm_bytes;                             // bytes one GPU's collectives send per step
    double images_s, efficiency, epoch_s, train_s;
    double wall_s;                                 // real seconds the simulation took
    double band;                                   // time-to-train's relative error band:
    double band_lo, band_hi;                       // the real one in [1 + lo, 1 + hi] x it
    double gpu_hours;                              // GPUs x time-to-train
    // --algo auto (sim/dtsim_auto.c): the algorithms simulated, each one's iteration, and
    // the cost model's choice for the whole gradient
    int auto_n;
    char auto_algo[8][16];
    double auto_iter_s[8];
    char auto_model_pick[16];
    size_t arena;                                  // the rank program's arena (dtsim_prepare)
    char simgrid_refused[320];                     // why SimGrid cannot run it here ("": can)
    double device_bytes;                           // one modelled GPU's memory need, uncapped
    double iter_p50_s, iter_p95_s, iter_max_s;     // rank 0's timed steps (stragglers)
    double perfect_iter_s, perfect_compute_s;      // --straggler: the cluster without them
    // --mtbf / --fail-rate (sim/dtsim_faults.c, sim/goodput.h)
    int has_goodput;
    double mtbf_s, ckpt_bytes, ckpt_interval_s, ckpt_stall_s, ckpt_save_s, restart_total_s;
    double ckpt_write_bw;                          // bytes/s the checkpoint is written at
    double young_s, daly_s;                        // the classic intervals
    double failures, goodput, wall_train_s;        // expected: closed form
    double mc_wall_s, mc_ci_s;                     // Monte-Carlo: mean, 95 % half-width
    // memory per modelled GPU (sim/dtsim_gpt.c; gpt models or --shard): bytes of the model
    // states at the run's ZeRO stage and of the activations; has_mem 0: not computed
    int has_mem;
    double mem_params, mem_grads, mem_optim, mem_act, mem_total;
    double mem_gathered;  // stage 3: of mem_params, the layers gathered at once (prefetch)
    // --tp/--pp (sim/dtsim_3d.c): the data-parallel degree, micro-batches per step, the
    // busiest stage's parameters; the pipeline's step and bubble, tensor parallelism's
    // allreduces per step, one message between stages, the data-parallel allreduce and the
    // optimizer (seconds); the step's model FLOPs (Narayanan et al. 2021's count)
    int dp, micro_batches;
    double stage_params, pipeline_s, pp_bubble, tp_comm_s, p2p_s, dp_comm_s, opt_s;
    double analytic_iter_s;  // --simgrid 3D: the cost model's step, beside SimGrid's
    double model_flops;
} dtsim_result;

// Run one simulation for o (o->gpus GPUs, o->coll.algo); 0, or the exit code with a message
// already printed (2: bad input, 1: SimGrid failed). It is dtsim_prepare, then
// dtsim_simulate (or dtsim_auto's choice with --algo auto).
int dtsim_run_one(const dtsim_opts *o, dtsim_result *r);
// Everything that can refuse a run before SimGrid starts (the model, one GPU's step, the
// calibration, the memory it needs): r's single-GPU figures; 0, or 2 with a message
int dtsim_prepare(const dtsim_opts *o, dtsim_result *r);
// SimGrid on a prepared run: r's multi-GPU figures; 0, or the exit code with a message
int dtsim_simulate(const dtsim_opts *o, dtsim_result *r);
// --analytic (sim/dtsim_analytic.c): r's multi-GPU figures from the cost model, the roofline
// and the fusion schedule, without SimGrid, on a prepared run; 0, or 2 with a message. And
// the lines the report prints under its table: the committed error of its algorithms.
int dtsim_analytic(const dtsim_opts *o, dtsim_result *r);
void dtsim_analytic_note(FILE *f, const dtsim_opts *o);
// --algo auto (sim/dtsim_auto.c): simulates each algorithm the cost model does not rule out
// on a prepared run and keeps the fastest; 0, or the exit code
int dtsim_auto(const dtsim_opts *o, dtsim_result *r);
// The allreduce options of a run with the cluster's α-β-γ figures (sim/dtsim_run.c)
dt_coll_opts dtsim_coll_for(const dtsim_opts *o, const dt_cluster *c);
// The most GPUs this machine's memory can simulate (the estimate of bench/DTSIM-SPEED.md)
int dtsim_gpus_that_fit(void);
// Running SimGrid (sim/dtsim_simgrid.c): the rank program's path (DTSIM_RANK_SO, beside
// dtsim, or the build's; malloc'ed); smpirun argv with its stdout to out_path, SimGrid's
// memory watched against dtsim_simgrid_memory_limit(ram) (DTSIM_MEMORY_LIMIT_GIB, else 85 %
// of ram): its exit code, -1 when stopped for memory (*peak: the most it held, bytes), 128 +
// the signal when one came; and after the run's folder is removed, the end dtsim_simgrid_run's
// signal would have made (SIGINT, SIGTERM, SIGHUP), or nothing
char *dtsim_rank_program_path(void);
double dtsim_simgrid_memory_limit(double ram);
int dtsim_simgrid_run(char *const *argv, const char *out_path, double ram, double *peak);
void dtsim_end_if_signalled(void);

// The cluster of the command line (sim/dtsim_cluster.c): the preset or dtsim's default, the
// GPU generation's links where the user named none, the user's figures, each figure's source
// in o->src, and the plausibility of the bandwidths (a warning, or under --strict an error).
typedef struct {
    const char *preset, *gpu, *intra, *topo;
    int gpus, gpn, nics;
    double intra_bw, net_bw, net_lat;   // bytes/s, seconds; 0: not given
    double oversub;                      // --oversubscription R (R:1); 0: not given
    dt_bw_unit intra_unit, net_unit;
    const char *intra_typed, *net_typed;
} dtsim_cluster_args;
// Before the profile: 0, or 2 with a message
int dtsim_cluster_begin(dtsim_opts *o, const dtsim_cluster_args *a);
// After it (the user's figures over the profile's): 0, or 2 with a message
int dtsim_cluster_finish(dtsim_opts *o, const dtsim_cluster_args *a);
// A preset's paper set-up (its precision, optimizer, allreduce, wire format) where the user
// chose none; 0, or 2 with a message
// The run's precision: --precision, the preset's, or the GPU's default (mixed precision on
// tensor cores: sim/gpu.h), with its source in o->src.prec; 2 with a message for bf16 on a
// GPU without it
int dtsim_precision(dtsim_opts *o, const dt_gpu_profile *g, int prec_set, int preset_prec);
// "fp32", "tf32", "fp16" or "bf16": the run's precision as printed
const char *dtsim_prec_name(const dtsim_opts *o);
int dtsim_preset_training(const dt_cluster *c, dtsim_opts *o, int prec_set, int optim_set,
                          int algo_set, int inner_set);

// 1 when a global batch of o's model and optimizer is beyond the largest published to reach
// its accuracy (sim/dtsim_report.c says which papers); dtsim_batch_warning says so on
// stderr for the run's (a sweep's largest) batch and sets o->batch_beyond
int dtsim_batch_beyond(const dtsim_opts *o, long long global_batch);
void dtsim_batch_warning(dtsim_opts *o);

// Slow GPUs and failures (sim/dtsim_faults.c): the rows of their options (into o; given and
// typed as in dt_opt_table, may be NULL; DTSIM_FAULT_ROWS of them), the check before the
// header, the perfect cluster's simulation and the goodput after a run, and their report lines.
#define DTSIM_FAULT_ROWS 11
dt_opt_table dtsim_fault_table(dtsim_opts *o, unsigned char *given, const char **typed);
// seconds as "12.3 s", "4m05s" or "2h07m" ("-" when not finite), into buf
void dtsim_duration(double s, char *buf, size_t n);
int dtsim_has_failures(const dtsim_opts *o);
int dtsim_faults_check(const dtsim_opts *o);
int dtsim_faults_run(const dtsim_opts *o, dtsim_result *r);
void dtsim_faults_report(FILE *f, const dtsim_opts *o, const dtsim_result *r);

// Transformers and ZeRO (sim/dtsim_gpt.c; their options are rows of sim/dtsim_opts.c's
// table): the check after parsing (the gpt models' optimizer and data set, the stage's
// conditions: 0 or 2); before a run, the memory per GPU and the refusal of a configuration that does not fit the GPU (0 or 2); --analytic
// under a ZeRO stage (0 or 2); the report's lines and JSON fields.
int dtsim_gpt_check(dtsim_opts *o, int optim_set);
int dtsim_gpt_prepare(const dtsim_opts *o, dtsim_result *r);
// (opt_s: the whole model's optimizer step, seconds, of which a stage keeps 1/N; net: the
// network the step was priced on, whose layers are stage 3's units; ev: its backward's n_ev
// ready events; fw, bw: its forward's and backward's seconds)
int dtsim_gpt_analytic(const dtsim_opts *o, dtsim_result *r, double opt_s,
                       const struct dt_net *net, const dt_grad_event *ev, int n_ev, double fw,
                       double bw);
void dtsim_gpt_report(FILE *f, const dtsim_opts *o, const dtsim_result *r);
// The bytes a network on the modelled GPU keeps for activations in a step (its layers'
// outputs and saved state, in the run's precision; fused attention keeps no scores)
double dtsim_net_activation_bytes(const dtsim_opts *o, const dt_net *net);
// Of them, the layers' saved state (aux: the norms' statistics, the attention's scores, or
// under flash its row statistics); attention_only: the attention layers' alone
double dtsim_net_saved_bytes(const dtsim_opts *o, const dt_net *net, int attention_only);
// A gpt model's configuration as the run gives it (sequence, vocabulary, --layers --hidden
// --heads), and its shape (NULL if not a gpt model)
void dtsim_gpt_config(const dtsim_opts *o, dt_model_config *cfg);
const dt_gpt_shape *dtsim_gpt_shape(const dtsim_opts *o, dt_gpt_shape *buf);

// Tensor and pipeline parallelism (sim/dtsim_3d.c, sim/dtsim_3d_report.c): the options'
// checks (batch: --batch as given, 0 if not), the memory per GPU (refused when it does not
// fit), the analytic step, and the report's lines and JSON fields
// (a run given --recompute is answered by the same model, with one stage at tp 1)
static inline int dtsim_is_3d(const dtsim_opts *o) { return o->tp * o->pp > 1 || o->recompute; }
int dtsim_3d_check(dtsim_opts *o, int batch);
int dtsim_3d_prepare(const dtsim_opts *o, dtsim_result *r);
int dtsim_3d_analytic(const dtsim_opts *o, dtsim_result *r);
void dtsim_3d_report(FILE *f, const dtsim_opts *o, const dtsim_result *r);
void dtsim_3d_json(dt_json_writer *w, const dtsim_opts *o, const dtsim_result *r);
// One GPU on the model device (sim/dtsim_onegpu.c): its step of `batch` samples in
// `accumulate` micro-batches in `prec` (the device's statistics; the memory it needs and the
// trainable parameters if asked); the calibration's factor on every kernel from the run's
// figure (--gpu-img-s or a table row: r->time_scale), from a --profile (r->kind_scale); and
// the calibration alone for a 3D run, which `dtsim plan`'s layout search computes once for
// all (sim/dtsim_layouts.c: the search itself, without --price)
int dtsim_single_gpu(const dtsim_opts *o, int batch, dt_precision prec, int accumulate,
                     dt_model_stats *st, size_t *used, size_t *params);
int dtsim_calibrate(const dtsim_opts *o, const dt_model_stats *one, dtsim_result *r);
// The attention a calibration row's network ran: --attention is the run's own model's; the
// row's source ran fused attention where FlashAttention runs (A100 and later), dtsim's
// default (sim/dtsim_gpt.c). Without --attention, the run's own setting (the same rule).
static inline int dtsim_row_flash(const dtsim_opts *o) {
    const dt_gpu_profile *g = dt_gpu_find(o->cluster.gpu);
    return o->attention[0] ? g && g->bf16 : o->flash;
}
int dtsim_profile_scales(const dtsim_opts *o, dtsim_result *r);
int dtsim_3d_calibration(const dtsim_opts *o, dtsim_result *r);
int dtsim_layouts_main(int argc, char **argv);
// Tokens per sample: the model's context (or --seq-len) for a gpt model, whose samples are
// whole sequences; 0 for an image model
int dtsim_seq_tokens(const dtsim_opts *o);
// What one sample is, plural, for the report's words: "sequences" (gpt), "images"
const char *dtsim_samples(const dtsim_opts *o);
void dtsim_gpt_json(dt_json_writer *w, const dtsim_opts *o, const dtsim_result *r);
// The optimizer's name as the header prints it ("LARS", "SGD", "AdamW", "LAMB")
const char *dtsim_optim_label(const dtsim_opts *o);

// The command line of one run into o (sim/dtsim_opts.c): 0, 1 (--help printed), or 2 with
// a message
int dtsim_parse(int argc, char **argv, dtsim_opts *o);
// The rows of dtsim's own table named in only ("model,csv"), each a field of dtsim_opts,
// into o: the rows `dtsim plan` shares with dtsim
dt_opt_table dtsim_opts_table(dtsim_opts *o, const char *only);
// Each command's option tables in its --help's order (bases NULL; --help is dt_opts_usage
// over them, the parser reads them with their bases): `dtsim` and `dtsim sweep` (the
// allreduce rows kept in cc), `dtsim plan`, `dtsim calibrate`. Their count.
#define DTSIM_MAIN_TABLES 5
int dtsim_main_tables(dt_coll_cli *cc, dt_opt_table *t);
#define DTSIM_PLAN_TABLES 7
int dtsim_plan_tables(dt_opt_table *t);
int dtsim_calibrate_tables(dt_opt_table *t);
// `dtsim plan ...` (sim/dtsim_plan.c): argv[0] is "plan"; an exit code
int dtsim_plan_main(int argc, char **argv);
// `dtsim plan --offer NAME=FLAGS ...` (sim/dtsim_offers.c): exactly the offers given, each
// answered by dtsim, with their bands and whether they are tied; an exit code
int dtsim_offers_main(int argc, char **argv);
// The check of one --offer value for dtsim plan's option table (a dt_opt parse function)
int dtsim_offer_shape(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err);
// `dtsim calibrate ...` (sim/dtsim_calibrate.c): argv[0] is "calibrate"; an exit code
int dtsim_calibrate_main(int argc, char **argv);
// --profile FILE: reads it into o and makes it the run's defaults (model, per-GPU batch,
// precision, the links of c) where the user gave none; 2 with a message on a bad file
int dtsim_apply_profile(dtsim_opts *o, dt_cluster *c, int model_set, int prec_set);

// The calibration of one GPU's speed (sim/dtsim_calib.c): --gpu-img-s, a preset's paper
// figure, --calib ROW|table|none, or by default the table's row for the run's GPU, model
// family and precision (none: the roofline alone). 0, or 2 with a message.
int dtsim_calib_choose(dtsim_opts *o, int user_figure);
// A row measured on a node (gpus > 1): r->time_scale refined so that the analytic model of
// that node, its own collectives included, takes the row's time (sim/dtsim_calib.c). 0, or 2.
int dtsim_calib_node(const dtsim_opts *o, dtsim_result *r);
// SimGrid's wall time for this run, estimated from bench/DTSIM-SPEED.md (sim/dtsim_walltime.c;
// 0 for --analytic); buckets: its gradient buckets per step (0: unknown)
double dtsim_wall_estimate_s(const dtsim_opts *o, int buckets);
// Said before SimGrid starts when a minute or more; 3 (answered analytic) for a single run
// beyond --max-sim-minutes, with r->simgrid_refused saying why
int dtsim_wall_check(const dtsim_opts *o, int buckets, dtsim_result *r);
// `dtsim calibrations [--csv]`: the table with its provenance; an exit code
int dtsim_calibrations_main(int argc, char **argv);
// Keep a warning (already said on stderr) for the JSON's "warnings" array (the first 4)
void dtsim_warn_json(dtsim_opts *o, const char *msg);
// What the run's band rests on, for the report: "calibrated (ROW)", "user figure", ...
const char *dtsim_calib_status(const dtsim_opts *o, char *buf, size_t n);

void dtsim_print_header(FILE *f, const dtsim_opts *o);
void dtsim_print_result(FILE *f, const dtsim_opts *o, const dtsim_result *r, int sweep);
// After a sweep's table: the band of its time-to-train and GPU-hours
void dtsim_print_sweep_band(FILE *f, const dtsim_opts *o, const dtsim_result *r, int n);
// The error band of time-to-train for o's configuration and what it rests on
// The real time-to-train lies in [t (1 + *lo), t (1 + *hi)], lo <= 0 <= hi (each may be
// NULL, and basis too); returns the larger of -lo and hi. dtsim_band_set fills r's.
double dtsim_band(const dtsim_opts *o, char *basis, size_t n, double *lo, double *hi);
void dtsim_band_set(const dtsim_opts *o, dtsim_result *r);
// r's band as printed: "±7.1 %" when symmetric, else "-17.6 % / +227.4 %"
const char *dtsim_band_text(const dtsim_result *r, char *buf, size_t n);
// The GPU generation of a profile, as bench/HELDOUT.md groups its runs: "pascal" (P100,
// P40), "volta" (V100), "ampere" (A100), "hopper" (H100, H200)
const char *dtsim_generation(const char *gpu);
// --csv PATH (atomic) or "-" (stdout); -1 on error
int dtsim_write_csv(const dtsim_opts *o, const char *path, const dtsim_result *r, int n);
void dtsim_print_json(const dtsim_opts *o, const dtsim_result *r, int n);
// The sweep's n prepared points pts[] simulated into res[] (-j at a time, or a slice of
// them, or gathered: sim/dtsim_sweep.c), each row printed on out (NULL: none) in order
int dtsim_sweep_points(const dtsim_opts *o, const dtsim_opts *pts, dtsim_result *res, int n,
                       FILE *out);
// sweep plots: PATH (images/s) and PATH with "-efficiency" before ".png"
int dtsim_plot(const char *path, const dtsim_opts *o, const dtsim_result *r, int n);

#endif
