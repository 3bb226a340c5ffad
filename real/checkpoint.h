// checkpoint.h — a training checkpoint in one safetensors file: the weights under torchvision
// state_dict names (so `torch.load`-style tools read them), the optimizer's momentum per
// tensor ("optimizer.velocity.<name>"), and the trainer's position (epoch, step, seed, global
// batch) as I64 scalars, so that `dtrain --resume` continues bit-identically. Written
// atomically (temporary file, fsync, rename: nn/safetensors_write.c); a Ctrl-C or a crash
// leaves the previous checkpoint intact; the data's CRC-32 is checked on load. Not here:
// sharded or asynchronous checkpoints.
#ifndef DT_CHECKPOINT_H
#define DT_CHECKPOINT_H

#include <stdint.h>

#include "dt.h"
#include "net.h"
#include "optim.h"

typedef struct {
    int64_t epoch;        // epochs completed
    int64_t step;         // global optimizer steps taken
    int64_t seed;         // the run's seed (shuffles, dropout, init)
    int64_t global_batch; // checked on resume: a different batch changes the run
    // fp16 dynamic loss scaling (0 when off): the scale, its clean-step count, and the steps
    // skipped for overflow; optional in the file (older checkpoints resume with defaults)
    float loss_scale;
    int64_t loss_scale_good_steps, skipped_steps;
} dt_train_state;

// Save weights, running statistics, num_batches_tracked, velocity and state to path.
int dt_checkpoint_save(const char *path, const dt_net *net, const dt_optim *opt,
                       const dt_train_state *st, dt_error *err);
// Load into an already built network of the same model; validates everything before changing
// anything (a bad file leaves net and opt unchanged; err names the file and the tensor).
int dt_checkpoint_load(const char *path, dt_net *net, dt_optim *opt, dt_train_state *st,
                       dt_error *err);

// Removes PATH.tmp.<pid> files left by a process of this host that died while writing
// PATH (a SIGKILL mid-write: nn/atomic_file.h cannot clean up after a kill); a live pid's
// file is kept. Returns how many it removed and names the first in `first` (size n).
int dt_checkpoint_remove_stale(const char *path, char *first, size_t n);

#endif
