// train.h — one data-parallel training step, the same text in both worlds (real MPI and
// SimGrid's SMPI): every rank holds a full copy of the network, computes the gradient of its
// own slice of the global batch, the gradients are summed over the ranks and divided by P,
// and every rank applies the same update, so the P replicas stay identical and follow the
// run of one big minibatch (Goyal et al. 2017, §2.1: "the mean over the minibatch of
// size kn"). How the gradient is summed and the update applied is the trainer's strategy,
// an entry of a registry (train_strategy.h): replicate (the allreduce of each fusion bucket
// during backward, train_replicate.c), or ZeRO's sharding of the optimizer state, the
// gradients or the parameters (train_shard.c, train_zero.c). The step itself, forward,
// backward with the strategy's hooks, its finish, the update, is train.c; loss scaling and
// clipping hook into it (dt_step_hooks). The trainer is the one part of nn/ outside coll/
// that calls MPI (the gradients themselves go through coll/): train.c (the loss, the batch
// norm statistics), train_setup.c (rank 0's weights broadcast at init, the ranks' agreement
// on the network and the strategy), train_comm.c (the agreement on the allreduce, rank 0's
// ready times broadcast for the bucket plan), train_scale.c (the fp16 overflow flag),
// MPI_Wtime in the strategies, train_state.c (MPI_Gatherv of a sharded optimizer state) and
// train_trace.c (the agreement that every rank wrote its part).
// Mixed precision: the network stores half (nn/net_half.c); the trainer scales the loss
// for fp16 (dt_trainer_set_loss_scaling). Not here: data loading, lr schedules (the caller
// passes lr).
#ifndef DT_TRAIN_H
#define DT_TRAIN_H

#include <mpi.h>  // Open MPI's, or SMPI's in the simulator build (first on its include path)
#include <stdint.h>

#include "coll/coll.h"
#include "coll/fusion.h"
#include "dt.h"
#include "net.h"
#include "optim.h"

// The most floats the trainer puts in one MPI message of its own (512 MiB; the weights'
// broadcast, the pipeline's tied weight): larger buffers go in pieces, as the allreduce's do
// (coll/coll_run.h DT_MSG_MAX). An MPI count is an int, and SimGrid 3.32 copies a message of
// 2 GiB or more whole (8 GB of copies for gpt3-175b's broadcast at 1024 GPUs).
#define DT_TRAIN_MSG_MAX ((size_t)1 << 27)

typedef struct dt_trainer dt_trainer;

// The step's extensions, each in its own file and hooked in where the core leaves a point,
// as coll_fp16.c is in the allreduce's runner; a point left NULL does nothing.
typedef struct {
    // dynamic loss scaling (train_scale.c): the loss multiplier backward runs with; then, on
    // this rank's part of the averaged gradient, 0 to skip the update on every rank (an
    // overflow somewhere), else 1 with the gradient unscaled
    float (*scale)(const dt_trainer *t);
    int (*unscale)(dt_trainer *t);
    void (*clip)(dt_trainer *t);  // clipping by global norm (train_norms.c), before the update
    // after the gradient and the loss are summed over the data-parallel ranks: a pipeline's
    // stages agree on the loss and on its tied weight's gradient (train_pipe.c)
    void (*reduced)(dt_trainer *t, float *loss);
    // after the update (every rank's parameters whole again): a pipeline's last stage takes
    // the first stage's tied weight (train_pipe.c)
    void (*updated)(dt_trainer *t);
} dt_step_hooks;

struct dt_pipeline;
struct dt_tensor_par;

struct dt_trainer {
    dt_net *net;        // this rank's replica (borrowed, not freed by the trainer)
    dt_optim *opt;      // its optimizer (borrowed)
    MPI_Comm comm;      // the data-parallel group (borrowed)
    int rank, size;     // in comm
    long step;          // steps completed
    int accumulate;     // micro-batches per step (dt_trainer_set_accumulate; 1)

    // ---- the strategy: an entry of the registry (train_strategy.h), dt_trainer_set_shard ----
    int shard;          // its number (dt_shard_stage; an extra entry's after them)
    void *state;        // its own state (owned; NULL for none)
    float *grad;        // this rank's part of the reduced gradient: the whole net->grads
    size_t grad_n;      // (replicate), or its shard or pieces; elements
    int n_units;        // a sharded strategy's units: unit k is the trainable elements
    const size_t *unit_lo;  // [unit_lo[k], unit_lo[k+1]), each split over the ranks
                            // (dt_shard_lo); NULL: not sharded (the norms use the buckets)
    int shard_blocks;   // stage 3's units: a block each (net.h dt_net_blocks, as FSDP wraps
                        // them) where set before dt_trainer_set_shard, else a layer each

    // ---- communication (dt_trainer_set_comm; defaults: the MPI library's allreduce, one
    // bucket, no overlap) ----
    dt_coll *coll;            // owned
    dt_fusion_opts fusion;
    int overlap;              // start buckets during backward
    dt_grad_event *events;    // backward's gradient-ready events (n_layers of them)
    int n_events;
    dt_bucket *buckets;       // the plan; SEGMENTS/AUTO plan after the first step, from
    int n_buckets;            // rank 0's measured ready times (broadcast: one plan for all)
    int planned;
    // per step, in seconds (rank-local wall clock): backward compute, the span during which
    // the step's collectives were in flight, and the part of it after backward ended
    // (exposed); the step's timeline (MPI_Wtime: simulated under SMPI) for traces:
    // backward's start, each bucket's allreduce start and completion as polling saw it
    double last_backward, last_comm, last_exposed;
    double sum_backward, sum_comm, sum_exposed;  // over steps since dt_trainer_reset_stats
    double last_backward_start, *bucket_start, *bucket_end;
    long n_stats;

    // ---- the extensions' hooks and state ----
    dt_step_hooks hooks;
    int loss_scaling;          // backward runs with the loss scaled by scaler.scale
    dt_loss_scaler scaler;     // (dt_trainer_set_loss_scaling)
    int last_skipped;          // the last step overflowed on some rank: no update anywhere
    int fault_inf_grad;        // testing (dt_trainer_inject_inf_grad)
    double clip_norm;          // the largest global norm (dt_trainer_set_clip; 0: off)
    double last_grad_norm;     // the last step's, before clipping
    // the norms of clipping and LAMB summed from the pieces that ZeRO's ranks hold
    // (optim.h dt_norm_plan over the units: the buckets of a plain run), so that a plain run
    // gives a sharded one's bits. Always so when sharded; set it (dtrain does) for a plain
    // run to match one. Off, a plain run sums whole tensors (one kernel each, not P).
    int piece_norms;
    dt_norm_plan *norms;       // made at the first step that needs it (owned)
    struct dt_pipeline *pipe;      // a pipeline stage's (nn/train_pipe.h; borrowed), else NULL
    struct dt_tensor_par *tp;      // tensor parallelism's (nn/train_tp.h; borrowed), else NULL

    // ---- what only the simulator supplies (sim/rank.c; NULL in a real run) ----
    // the device of the collectives' kernels: an unscaled handle of the model device (a
    // calibration slows the framework's kernels, not the library's; docs/formulas.md)
    dt_device *comm_dev;
    // after a layer of backward whose gradients are final, while the step communicates (a
    // collective in flight or starting there): the model device lets the layer's time pass
    // before the polls (it charges time only where it is waited for)
    void (*layer_wait)(void *ctx, dt_net *net, int communicating);
    void *layer_wait_ctx;
    // the modelled GPU's activations are 2 bytes (mixed precision) on an fp32 net of the
    // model device, which holds no numbers: tensor parallelism's sums and the pipeline's
    // activations carry 2 bytes an element on the wire, as Megatron-LM's bf16 ones do
    int act_wire_half;
};

// ZeRO's stages (Rajbhandari et al. 2020 §5): what each rank keeps only 1/P of.
typedef enum {
    DT_SHARD_NONE,        // plain data parallel: every rank holds everything
    DT_SHARD_OPTIMIZER,   // stage 1 (P_os): the optimizer state (nn/train_shard.c)
    DT_SHARD_GRADIENTS,   // stage 2 (P_os+g): + the gradient, reduce-scattered per bucket
    DT_SHARD_PARAMETERS,  // stage 3 (P_os+g+p): + the parameters, gathered per layer
    DT_SHARD_COUNT        // the built-in strategies; a build's extra entries follow
} dt_shard_stage;
// The registry of strategies (train_strategy.c): the name of entry `stage` ("none",
// "optimizer", "gradients", "parameters", or a build's extra entry's; NULL for none), the
// entry of a name (0, or -1 for an unknown one), whether it shards the optimizer state (it
// needs dt_optim_create_shard's optimizer), and for --shard's messages and help the names
// but the default's ("optimizer, gradients or parameters") and each entry's line of help.
const char *dt_shard_name(int stage);
int dt_shard_parse(const char *s, int *stage);
int dt_shard_sharded(int stage);
const char *dt_shard_choices(char *buf, size_t n);
const char *dt_shard_help(char *buf, size_t n);

// Collective, after dt_trainer_set_comm and set_accumulate: the strategy `stage` (an entry
// of the registry; here the built-ins). Stage 1 and up need an optimizer made by dt_optim_create_shard for
// this rank's shard (stages 2 and 3 re-shard it to their pieces); stage 0 a plain one.
// Stage 2: the units are the fusion buckets of the plan (a byte threshold or none: a plan
// that waits for measured times is refused); each bucket's gradient is allocated when
// backward first writes it, reduce-scattered as soon as it is complete, and freed once this
// rank's piece is kept; the updated pieces are allgathered per bucket. Stage 3: the units
// are the layers' parameters; each is allgathered before its layer's forward and again
// before its backward (the next layer's gather started before this layer computes),
// freed after use, and its gradient reduce-scattered as in stage 2; net->params is freed
// (dt_trainer_gather_params makes it whole again for evaluation and saving). Mixed
// precision (stages 2, 3): each rank keeps the fp32 master of its pieces only and steps it;
// each piece is rounded to half (net.h dt_net_half_round) before the allgather, so the
// gathered copy is the one the unsharded forward reads (stage 2: the whole net->params,
// stage 3: per unit). Refused (DT_EXIT_USAGE on every rank): one rank. With
// accumulation (stages 2, 3) every micro-batch's units are reduce-scattered and the pieces
// summed (K reduce-scatters a step). Every optimizer: SGD, LARS, AdamW and LAMB (their
// moments per piece; clipping's and LAMB's norms from the pieces, piece_norms).
int dt_trainer_set_shard(dt_trainer *t, int stage, dt_error *err);
// Collective. Stage 3: every rank's net->params whole again (freed at the next step), for
// evaluation, saving and checks; other stages: nothing to do.
void dt_trainer_gather_params(dt_trainer *t);

// The optimizer's state whole (a checkpoint's: nn/train_state.c). Collective: the momentum
// or first moment into m, AdamW's and LAMB's second moment into v (host arrays of
// n_trainable floats at the offsets of net->grads, read on `root` only; v may be NULL for
// SGD and LARS), each rank's pieces gathered into place.
void dt_trainer_gather_state(dt_trainer *t, int root, float *m, float *v);
// The inverse, on every rank from the same whole arrays (after dt_trainer_set_shard): this
// rank's pieces copied into its state, and the optimizer's step count set.
void dt_trainer_scatter_state(dt_trainer *t, const float *m, const float *v, long step);

// Bytes this rank holds (ZeRO's model-state accounting, docs/formulas.md "ZeRO"): between
// steps, and at the peak of a step (stages 2, 3 add the gathered parameters and gradient
// buckets resident at once). Activations: dt_net_activation_bytes with its scratch.
typedef struct {
    size_t params, grads, optim, activations;
    size_t pipe;  // a pipeline stage's buffers for the micro-batches it holds: their inputs
                  // (their backwards recompute from them), the activations and gradients it
                  // sends (nn/train_pipe.h: 3 x slots x B T C floats, 1 on the first stage,
                  // 2 on the last)
    size_t pipe_acts;  // without full recomputation, the activations of the micro-batches
                       // held beyond the net's own (nn/net_acts.h: slots - 1 sets)
    size_t params_peak, grads_peak;
    size_t half;  // mixed precision: the part of params that is the half-rounded copy the
                  // layers read (fp32-stored, as nn/net_half.c keeps it, and its half bits
                  // where convolutions run on them); the rest is the fp32 master
    int units;  // stages 2, 3: the units sharded (each padded by up to one element)
    size_t unit_max;  // the largest unit's bytes: a step holds at most two of each kind
                      // at once beyond the shards (the current and the next, a tied
                      // embedding's third)
} dt_trainer_memory;
void dt_trainer_memory_report(const dt_trainer *t, dt_trainer_memory *m);

// Collective over comm. Checks the arguments (network finalized, optimizer made for it, the
// same number of trainable parameters and the same per-rank batch on every rank), gives each
// rank its own dropout stream (masks must differ between the ranks' slices), and
// broadcasts rank 0's parameters and running statistics to every rank (Horovod's
// broadcast_parameters), so all replicas start identical. Returns 0, or -1 with err set
// (DT_EXIT_USAGE) on every rank.
int dt_trainer_init(dt_trainer *t, dt_net *net, dt_optim *opt, MPI_Comm comm, dt_error *err);
void dt_trainer_free(dt_trainer *t);  // frees what the trainer owns (not net, opt, comm)

// Collective: choose the allreduce (co: algorithm, fp16 wire, hier/torus shape, cost
// figures), the fusion buckets and whether they overlap backward. Returns 0, or -1 with err
// set (DT_EXIT_USAGE: the message names the option) on every rank.
int dt_trainer_set_comm(dt_trainer *t, const dt_coll_opts *co, const dt_fusion_opts *fo,
                        int overlap, dt_error *err);
void dt_trainer_reset_stats(dt_trainer *t);

// Dynamic loss scaling (Micikevicius et al. 2018 §3.2), for fp16 storage: backward runs
// with the loss multiplied by ls->scale; after the allreduce, a NaN or Inf in any rank's
// reduced gradient (agreed with one MPI_Allreduce, so every rank decides alike) skips the
// update everywhere and halves the scale, else the gradient is divided by the scale and the
// update applied (nn/optim.h dt_loss_scaler_update). NULL turns it off (fp32, bf16).
// train_scale.c, hooked into the step (dt_step_hooks scale, unscale).
void dt_trainer_set_loss_scaling(dt_trainer *t, const dt_loss_scaler *ls);
// Testing (dtrain --fault-inf-grad-at-step): an Inf in this rank's reduced gradient at the
// next step, once, with or without loss scaling.
void dt_trainer_inject_inf_grad(dt_trainer *t);

// Clipping by global norm of the averaged gradient before the update (Pascanu et al. 2013;
// optim.h dt_clip_grad_norm): the largest norm, 0 off; t->last_grad_norm is the last step's
// before clipping. train_norms.c, hooked into the step (dt_step_hooks clip).
void dt_trainer_set_clip(dt_trainer *t, double max_norm);

// Gradient accumulation (Horovod's backward_passes_per_step, DDP's no_sync): each step runs
// K micro-batches of net->B examples, forward and backward, their gradients summed in place,
// and one allreduce, overlapping only the last backward; the update follows the mean over
// all P*K*B examples (Goyal et al. 2017 §2.1). Batch norm normalises each micro-batch. Every
// rank must set the same K. 0, or -1 with err (DT_EXIT_USAGE) for K < 1.
int dt_trainer_set_accumulate(dt_trainer *t, int K, dt_error *err);

// One step, collective over comm: set this rank's slice of the batch (x_local_host is
// (K*B, in_c, in_h, in_w) floats, y_local_host (K*B) labels in [0, classes), B = net->B and
// K = t->accumulate, the same on every rank), forward (training), loss, backward for each of
// the K micro-batches, the last with the sum of the gradients over the ranks (the strategy:
// replicate's allreduce of each bucket during backward, train_replicate.c; ZeRO's
// reduce-scatters), scaling by 1/(P*K), the same
// mean over ranks of the batch-norm running statistics (so the replicas stay identical,
// buffers included), MPI_Allreduce of the loss, optimizer step with learning rate lr.
// Returns the mean loss over all ranks' samples (before the update). If that loss is NaN or
// infinite, the step is abandoned before the update and NaN is returned on every rank: the
// caller stops and reports the step number (t->step is not advanced). Under loss scaling a
// gradient overflow skips the update on every rank (t->last_skipped, t->step not advanced)
// and the finite loss is still returned.
float dt_train_step(dt_trainer *t, const float *x_local_host, const int32_t *y_local_host,
                    float lr);

// dt_train_step for gpt models (net->seq = T > 0): this rank's K*B sequences of T token ids
// and their next-token targets, (K*B, T) int32 each (nn/net.h dt_net_set_tokens); the loss
// is the mean over the tokens. Everything else as dt_train_step.
float dt_train_step_tokens(dt_trainer *t, const int32_t *tokens_host,
                           const int32_t *targets_host, float lr);

// The first half of dt_train_step for one micro-batch (K = 1), for a program that prices its
// own update (sim/rank_zero.c): the strategy's begin, forward, the loss, backward with the
// strategy's hooks and its finish. Leaves this rank's part of the summed gradient in
// t->grad (not yet divided by P) and returns this rank's loss (not averaged).
float dt_trainer_forward_backward(dt_trainer *t, const float *x_local_host,
                                  const int32_t *y_local_host);

#endif
