// rank_opts.h — the options dtsim's launcher (sim/dtsim_run.c) passes to its rank program
// (sim/rank.c, run by SimGrid once per simulated GPU), described once: a table of each
// option's name, type, place in dt_rank_opts and help. The launcher fills a dt_rank_opts
// and writes it out as arguments with dt_rank_opts_to_argv; the rank program reads them back
// with dt_rank_opts_parse. Both walk the same table, so an option cannot be written one way
// and read another, and a new one is one field and one row.
// Every option is always written, as --name=VALUE (a switch as 0 or 1).
// Not here: dtsim's own command line (sim/dtsim_opts.c, what users type); the result the rank
// program sends back (rank_result.h).
#ifndef DT_SIM_RANK_OPTS_H
#define DT_SIM_RANK_OPTS_H

#include <stdint.h>
#include <stdio.h>

#include "coll/coll.h"
#include "coll/fusion.h"
#include "dt.h"
#include "gpu.h"

// SMPI's shared-malloc block, which dtsim sets (--cfg=smpi/shared-malloc-blocksize) and to
// whose whole blocks the rank program rounds its arena up (bytes)
#define DT_RANK_SHARED_BLOCK ((size_t)16 << 20)

typedef struct {
    char model[32];          // the network (nn/models.h)
    char gpu[16];            // GPU profile (sim/gpu.h)
    dt_precision prec;
    int batch;               // images per GPU per step
    int accumulate;          // micro-batches per step (batch/accumulate images each)
    int iters, warmup;       // timed steps, after untimed ones
    int lars;                // 1: LARS, 0: SGD
    dt_coll_opts coll;       // the allreduce and its α-β-γ cost parameters
    dt_fusion_opts fusion;
    int overlap;             // 1: allreduces start during backward
    uint64_t arena;          // bytes of the shared device arena (0: DT_RANK_DEFAULT_ARENA),
                             // reused from its base when full (dt_modeldev_config.reuse_arena)
    double time_scale;       // the model device's calibration factor (0 = none)
    char kind_scales[640];   // a profile's factor per layer kind (sim/profile.h), comma-
                             // separated in kind order ("": none)
    char trace[512];         // Chrome trace of the first trace_ranks ranks ("": none)
    int trace_ranks;
    int model_side;          // the modelled network's input side and classes (0: the
    int model_classes;       // model's own, sim/gpu.h dt_model_shape)
    int progress;            // rank 0 shows its progress on stderr
    char result[512];        // rank 0 writes its result there (rank_result.h; "": stdout)
    // real numbers on the cpu device (dtsim --device cpu), on dtrain's synthetic data
    int cpu;
    int image_size, classes;
    int64_t synthetic_n;     // examples in the synthetic dataset
    uint64_t seed;
    double lr, momentum, wd;
    // slow GPUs (sim/straggler.h): the spec ("": none), drawn from `seed`; GPUs per node
    // for node: terms
    char straggler[256];
    int gpus_per_node;
    int shard;               // ZeRO stage (sim/zero.h): 0 plain data parallel, 1-3 sharded
    int seq_len, vocab;      // gpt models: tokens per sequence, vocabulary (0: the model's)
    int flash;               // 1: attention fused (dt_modeldev_config.flash)
} dt_rank_opts;

// The arena when none is given: enough for ResNet-50 at batch 32 and then some (bytes)
#define DT_RANK_DEFAULT_ARENA ((uint64_t)8 << 30)

typedef enum {
    DT_RANK_OPT_INT,        // int
    DT_RANK_OPT_I64,        // int64_t
    DT_RANK_OPT_U64,        // uint64_t
    DT_RANK_OPT_REAL,       // double
    DT_RANK_OPT_STRING,     // char[size]
    DT_RANK_OPT_PRECISION,  // dt_precision, by dt_precision_name
    DT_RANK_OPT_ALGO,       // dt_algo, by dt_algo_name / dt_algo_parse
    DT_RANK_OPT_FUSION,     // dt_fusion_opts, by dt_fusion_format / dt_fusion_parse
} dt_rank_opt_type;

typedef struct {
    const char *name;       // --name=VALUE
    dt_rank_opt_type type;
    size_t offset;          // of the value in dt_rank_opts
    size_t size;            // bytes of the value (a string's buffer)
    const char *help;
} dt_rank_opt;

extern const dt_rank_opt dt_rank_opt_table[];
extern const int dt_rank_opt_count;

// The rank program's defaults, for running it by hand (the launcher writes every option):
// ResNet-50 on a V100, batch 32, 3 timed steps after 1, ring, 2 fusion segments, dtrain's
// SGD (lr 0.1, momentum 0.9, weight decay 5e-4).
void dt_rank_opts_default(dt_rank_opts *o);

// dt_rank_opt_count strings "--name=VALUE" (malloc'ed, the caller frees them) into argv.
void dt_rank_opts_to_argv(const dt_rank_opts *o, char **argv);

// Defaults, then argv[1..argc): 0, or -1 with err (DT_EXIT_USAGE, naming the argument).
int dt_rank_opts_parse(int argc, char **argv, dt_rank_opts *o, dt_error *err);

void dt_rank_opts_usage(FILE *f);  // the table, for a person running the rank program

#endif
