// checkpoint.h — a training checkpoint in one safetensors file: the weights under torchvision
// state_dict names (so `torch.load`-style tools read them), the optimizer's state per tensor
// ("optimizer.velocity.<name>": SGD's and LARS's momentum, AdamW's and LAMB's first moment;
// "optimizer.second.<name>": AdamW's and LAMB's second moment) with its step count, and the
// trainer's position (epoch, step, seed, global batch) as I64 scalars, so that `dtrain
// --resume` continues bit-identically. Written atomically (temporary file, fsync, rename:
// nn/safetensors_write.c); a Ctrl-C or a crash leaves the previous checkpoint intact; the
// data's CRC-32 is checked on load. A sharded run (ZeRO) writes the same whole file: its
// ranks' pieces gathered on rank 0 (nn/train.h dt_trainer_gather_state), FSDP's full state
// dict, so a checkpoint resumes at any stage and rank count. Not here: per-rank shard files
// or asynchronous checkpoints.
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

// The optimizer's state whole, in host memory (n_trainable floats each, at the offsets of
// net->grads).
typedef struct {
    dt_opt_kind kind;  // written as the metadata "optimizer"; a resume must use the same
    float *m;          // momentum (SGD, LARS) or first moment (AdamW, LAMB)
    float *v;          // second moment (AdamW, LAMB; NULL otherwise)
    long step;         // updates applied (AdamW's and LAMB's bias corrections)
} dt_optim_state;
// Host arrays for opt's kind over net (v only for AdamW/LAMB), zero; dt_optim_state_free.
void dt_optim_state_alloc(dt_optim_state *os, const dt_net *net, dt_opt_kind kind);
void dt_optim_state_free(dt_optim_state *os);

// Save weights, running statistics, num_batches_tracked, the optimizer state and the
// trainer's state to path. opt must be whole (not sharded: gather it, then
// dt_checkpoint_save_state).
int dt_checkpoint_save(const char *path, const dt_net *net, const dt_optim *opt,
                       const dt_train_state *st, dt_error *err);
// The same from an optimizer state already in host memory (net->params whole).
int dt_checkpoint_save_state(const char *path, const dt_net *net, const dt_optim_state *os,
                             const dt_train_state *st, dt_error *err);
// Load into an already built network of the same model and a whole optimizer; validates
// everything before changing anything (a bad file leaves net and opt unchanged; err names
// the file and the tensor). A checkpoint of another optimizer is refused (DT_EXIT_USAGE).
int dt_checkpoint_load(const char *path, dt_net *net, dt_optim *opt, dt_train_state *st,
                       dt_error *err);
// The same with the optimizer state into host arrays (dt_optim_state_alloc'ed here for
// `kind`; the caller frees them), for a sharded run to take its pieces from.
int dt_checkpoint_load_state(const char *path, dt_net *net, dt_opt_kind kind,
                             dt_optim_state *os, dt_train_state *st, dt_error *err);

// Removes PATH.tmp.<pid> files left by a process of this host that died while writing
// PATH (a SIGKILL mid-write: nn/atomic_file.h cannot clean up after a kill); a live pid's
// file is kept. Returns how many it removed and names the first in `first` (size n).
int dt_checkpoint_remove_stale(const char *path, char *first, size_t n);

#endif
