// rank_run.h — everything dtsim's rank program (sim/rank.c, run by SimGrid once per
// simulated GPU) is told about its run, as one struct: dtsim fills it once (sim/dtsim_run.c),
// writes it to a file in the run's folder, and the rank program, given only that file's
// path, reads it once for all its ranks.
// A setting only the rank program reads lives in dt_rank_settings, which dtsim's option rows
// fill in place (sim/dtsim_opts.c); the rest are dtsim's own figures, copied or derived.
// The file is the struct's bytes after a header (magic, version, size): dtsim and its rank
// program are built together from this header (sim/programs.cmake), and a rank program
// refuses the file of a dtsim of another build. Bytes, not JSON as the result goes back: the
// struct is its own description (no table of fields beside it to keep in step) and every
// real travels exact. Plain data only: no pointers.
// Not here: the result the rank program sends back (rank_result.h).
#ifndef DT_SIM_RANK_RUN_H
#define DT_SIM_RANK_RUN_H

#include <stdint.h>

#include "coll/coll.h"
#include "coll/fusion.h"
#include "device_model.h"
#include "dt.h"
#include "gpu.h"
#include "straggler.h"

// SMPI's shared-malloc block, which dtsim sets (--cfg=smpi/shared-malloc-blocksize) and to
// whose whole blocks the rank program rounds its arena up (bytes)
#define DT_RANK_SHARED_BLOCK ((size_t)16 << 20)
// The arena when none is given: enough for ResNet-50 at batch 32 and then some (bytes)
#define DT_RANK_DEFAULT_ARENA ((uint64_t)8 << 30)

// Options dtsim takes for its rank program alone, set by their rows of dtsim's table
typedef struct {
    int trace_ranks;           // --trace-ranks: the first N ranks are in --trace's file
    // --device cpu: dtrain's synthetic data and SGD (its defaults: momentum 0.9, wd 5e-4)
    int image_size, classes;   // --image-size, --classes
    int64_t synthetic_n;       // --synthetic-examples
    double lr, momentum, wd;   // --lr; the other two are dtrain's, not options
} dt_rank_settings;

typedef struct {
    // the network and its step
    char model[32];            // nn/models.h
    char gpu[16];              // GPU profile (sim/gpu.h)
    dt_precision prec;
    int batch;                 // samples per GPU per step
    int accumulate;            // micro-batches per step (batch/accumulate samples each)
    int iters, warmup;         // timed steps, after untimed ones
    int lars;                  // the layer-wise optimizer (LARS; LAMB for gpt models)
    int model_side;            // the modelled network's input side and classes (0: the
    int model_classes;         // model's own, sim/gpu.h dt_model_shape)
    int seq_len, vocab;        // gpt models: tokens per sequence, vocabulary (0: the model's)
    int flash;                 // attention fused (dt_modeldev_config.flash)
    int shard;                 // ZeRO stage (sim/zero.h): 0 plain data parallel, 1-3 sharded
    int shard_blocks;          // stage 3 gathers a block at a time (--shard-units block)
    // --tp/--pp --simgrid: the ranks laid out as Megatron-LM does, each running its part
    // (nn/train_pipe.h, nn/train_tp.h); tp = pp = 0: data parallel only
    int tp, pp, pp_kind, micro_batch;
    int recompute;             // nn/train_pipe.h dt_recompute (dtsim's --recompute)
    // the allreduce, with the cluster's α-β-γ figures (dtsim_coll_for)
    dt_coll_opts coll;
    dt_fusion_opts fusion;
    int overlap;               // allreduces start during backward
    // the modelled GPU
    uint64_t arena;            // bytes of the shared device arena (0: DT_RANK_DEFAULT_ARENA),
                               // reused from its base when full (dt_modeldev_config.reuse_arena)
    double time_scale;         // every kernel's time x this (the calibration; 0 = none)
    int n_kind_scales;         // --profile: each layer kind's factor (sim/profile.h; 0: none)
    double kind_scale[DT_MODEL_MAX_KINDS];
    dt_straggler straggler;    // slow GPUs, drawn from seed (sim/straggler.h)
    uint64_t seed;             // of the stragglers' draws, and the cpu device's weights and data
    int gpus_per_node;         // for node: stragglers
    int cpu;                   // real numbers on the cpu device (dtsim --device cpu)
    // outputs
    char trace[512];           // Chrome trace of the first rank.trace_ranks ranks ("": none)
    char result[512];          // rank 0 writes its result there (rank_result.h; "": stdout)
    int progress;              // rank 0 shows its progress on stderr
    dt_rank_settings rank;
} dt_rank_run;

// Bump when dt_rank_run changes (the size check alone misses a reordering)
#define DT_RANK_RUN_VERSION 2

// To path: 0, or -1 with err (DT_EXIT_RUNTIME, naming the path).
int dt_rank_run_write(const char *path, const dt_rank_run *r, dt_error *err);
// From path: 0, or -1 with err (DT_EXIT_USAGE): absent, unreadable, not a run description,
// another version or size (a dtsim of another build), a name not terminated, a count out
// of bounds.
int dt_rank_run_read(const char *path, dt_rank_run *r, dt_error *err);

#endif
