// gpu_calib.h — published single-GPU (or single-node) training throughput, the table dtsim
// calibrates one GPU's speed from by default (docs/hardware.md, "Calibration table";
// bench/HELDOUT.md scores it on multi-node runs it never saw). Each row is one measurement
// with its provenance; `dtsim calibrations` prints them all.
// Not here: the roofline the factor scales (sim/device_model.c), the calibration itself
// (sim/dtsim_run.c: calibrate).
#ifndef DT_SIM_GPU_CALIB_H
#define DT_SIM_GPU_CALIB_H

#include "gpu.h"

typedef struct {
    const char *id;         // "dle-rn50-v100-amp": what --calib names
    const char *gpu;        // the GPU profile (sim/gpu.h)
    const char *model;      // the dtsim network it was measured on ("resnet50", "gpt2-medium")
    int seq_len, vocab;     // a transformer's tokens per sample and vocabulary (0: the model's)
    const char *precision;  // "fp32", "tf32", "fp16" (mixed, fp16) or "bf16" (mixed, bf16)
    int batch;              // samples per GPU per step
    int gpus;               // GPUs measured together (1, or a node's 8: per_gpu is its share)
    double per_gpu;         // samples/s per GPU (images/s; sequences/s for a transformer)
    const char *framework;  // "PyTorch 21.05 (NGC), DALI, AMP"
    const char *source;     // the publication, table and where to find it
    const char *date;       // of the measurement or publication, "2021-06"
    const char *note;       // what the model of it assumes ("" when nothing)
    int shard;              // the ZeRO stage it ran (3: FSDP's FULL_SHARD), 0: plain data
                            // parallel; a node's figure is calibrated with it (gpu_calib.c)
    int accumulate;         // micro-batches of `batch` per step (plain data parallel: the
                            // node's allreduce once per step; FSDP's collectives run every
                            // micro-batch)
} dt_gpu_calib;

// The table, in the order rows are preferred (the first row matching a run is its default)
const dt_gpu_calib *dt_gpu_calib_rows(int *n);
// The row with this id, or NULL
const dt_gpu_calib *dt_gpu_calib_by_id(const char *id);
// The default row for a run of `model` (a transformer when its name starts with "gpt", else
// a CNN) with seq_len tokens per sequence (0: the model's) on `gpu` in precision `prec`:
// among the rows of that GPU, model family and precision, the one most like the run (the
// same half precision, bf16 or fp16, then the same network, then the same sequence length,
// then a node's measurement over one GPU's), the first of equals in table order; NULL where
// none exists (the roofline alone).
const dt_gpu_calib *dt_gpu_calib_find(const char *gpu, const char *model, int seq_len,
                                      dt_precision prec, int bf16);
// A row's precision as dtsim computes it (bf16 is fp16's rate)
dt_precision dt_gpu_calib_prec(const dt_gpu_calib *c);

#endif
