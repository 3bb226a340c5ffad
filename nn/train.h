// train.h — one data-parallel training step, the same text in both worlds (real MPI and
// SimGrid's SMPI): every rank holds a full copy of the network, computes the gradient of its
// own slice of the global batch, the gradients are summed over the ranks and divided by P,
// and every rank applies the same update, so the P replicas stay identical and follow the
// run of one big minibatch (Goyal et al. 2017, §2.1: "the mean over the minibatch of
// size kn"). The trainer is the one part of nn/ outside coll/ that calls MPI (the gradients
// themselves go through coll/): train.c (rank 0's weights broadcast at init, the ranks'
// agreement on the network, the loss, the fp16 overflow flag), train_comm.c (the agreement
// on the allreduce, rank 0's ready times broadcast for the bucket plan, MPI_Wtime),
// train_shard.c and train_zero.c (MPI_Wtime only), train_zero_setup.c (the agreement on the
// stage), train_state.c (MPI_Gatherv of a sharded optimizer state) and train_trace.c (the
// agreement that every rank wrote its part).
// The gradients go through the allreduce library (coll/coll.h) in fusion buckets
// (coll/fusion.h): with overlap on, a bucket's allreduce starts during backward as soon as its
// last gradient exists (the dt_grad_ready_fn hook of dt_net_backward) and every allreduce in
// flight is progressed after each layer (docs/architecture.md, "One training step").
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

typedef struct {
    dt_net *net;        // this rank's replica (borrowed, not freed by the trainer)
    dt_optim *opt;      // its optimizer (borrowed)
    MPI_Comm comm;      // the data-parallel group (borrowed)
    int rank, size;     // in comm
    long step;          // steps completed

    // ---- communication (dt_trainer_set_comm; defaults: the MPI library's allreduce, one
    // bucket, no overlap) ----
    dt_coll *coll;            // owned
    // the device the allreduce's kernels run on (NULL: the network's). dtsim gives it an
    // unscaled handle on the model device: a framework calibration slows the framework's
    // kernels, not the communication library's (docs/formulas.md)
    dt_device *comm_dev;
    dt_fusion_opts fusion;
    int overlap;              // start buckets during backward
    // With overlap, wait for each layer's kernels even while no allreduce is in flight and
    // none starts there (0 by default: the model device then charges the run of layers in
    // one go, which simulates the same time with fewer SimGrid events). The planning step
    // always waits. Set it for traces: events[].ready is exact only where backward waited.
    int layer_times;
    dt_grad_event *events;    // backward's gradient-ready events (n_layers of them)
    int n_events;
    dt_bucket *buckets;       // the plan; SEGMENTS/AUTO plan after the first step, from
    int n_buckets;            // rank 0's measured ready times (broadcast: one plan for all)
    int planned;
    // per step, in seconds (rank-local wall clock): backward compute, the span during which
    // at least one allreduce was in flight (as seen by polling between layers: it can end
    // up to one layer late), and the part of it after backward ended (exposed)
    double last_backward, last_comm, last_exposed;
    double sum_backward, sum_comm, sum_exposed;  // over steps since dt_trainer_reset_stats
    // the last step's timeline (MPI_Wtime: simulated under SMPI), for traces: backward's
    // start, and each bucket's allreduce start and completion as polling saw it
    double last_backward_start, *bucket_start, *bucket_end;
    long n_stats;

    // ---- dynamic loss scaling (fp16 mixed precision; dt_trainer_set_loss_scaling) ----
    int loss_scaling;          // backward runs with the loss scaled by scaler.scale
    dt_loss_scaler scaler;
    int last_skipped;          // the last step overflowed on some rank: no update anywhere
    int fault_inf_grad;        // testing (dtrain --fault-inf-grad-at-step): put an Inf into
                               // this rank's reduced gradient in the next step, once

    int accumulate;            // micro-batches per step (dt_trainer_set_accumulate; 1)
    // clipping by global norm of the averaged gradient before the update (Pascanu et al.
    // 2013; optim.h dt_clip_grad_norm): max norm, 0 off; the last step's norm before
    // clipping
    double clip_norm, last_grad_norm;
    // the norms of clipping and LAMB summed from the pieces that ZeRO's ranks hold
    // (optim.h dt_norm_plan over the units: the buckets of a plain run), so that a plain run
    // gives a sharded one's bits. Always so when sharded; set it (dtrain does) for a plain
    // run to match one. Off, a plain run sums whole tensors (one kernel each, not P).
    int piece_norms;
    dt_norm_plan *norms;       // made at the first step that needs it (owned)

    // ---- sharded data parallel, ZeRO (dt_trainer_set_shard) ----
    int shard;                 // the stage: DT_SHARD_NONE .. DT_SHARD_PARAMETERS
    struct dt_zero *zero;      // stages 2, 3: units, pieces, buffers (nn/train_zero.c; owned)
} dt_trainer;

// ZeRO's stages (Rajbhandari et al. 2020 §5): what each rank keeps only 1/P of.
typedef enum {
    DT_SHARD_NONE,        // plain data parallel: every rank holds everything
    DT_SHARD_OPTIMIZER,   // stage 1 (P_os): the optimizer state (nn/train_shard.c)
    DT_SHARD_GRADIENTS,   // stage 2 (P_os+g): + the gradient, reduce-scattered per bucket
    DT_SHARD_PARAMETERS,  // stage 3 (P_os+g+p): + the parameters, gathered per layer
} dt_shard_stage;
const char *dt_shard_name(int stage);          // "none", "optimizer", "gradients", ...
int dt_shard_parse(const char *s, int *stage); // 0, or -1 for an unknown name

// Collective, after dt_trainer_set_comm and set_accumulate: shard the training state
// (nn/train_zero.c). Stage 1 and up need an optimizer made by dt_optim_create_shard for
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
void dt_trainer_set_loss_scaling(dt_trainer *t, const dt_loss_scaler *ls);

// Gradient accumulation (Horovod's backward_passes_per_step, DDP's no_sync): each step runs
// K micro-batches of net->B examples, forward and backward, their gradients summed in place,
// and one allreduce, overlapping only the last backward; the update follows the mean over
// all P*K*B examples (Goyal et al. 2017 §2.1). Batch norm normalises each micro-batch. Every
// rank must set the same K. 0, or -1 with err (DT_EXIT_USAGE) for K < 1.
int dt_trainer_set_accumulate(dt_trainer *t, int K, dt_error *err);

// One step, collective over comm: set this rank's slice of the batch (x_local_host is
// (K*B, in_c, in_h, in_w) floats, y_local_host (K*B) labels in [0, classes), B = net->B and
// K = t->accumulate, the same on every rank), forward (training), loss, backward for each of
// the K micro-batches, the last with the sum of the gradients over the ranks (the allreduce
// library, bucket by bucket: train_comm.c), scaling by 1/(P*K), the same
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

#endif
