// train_pipe.h — pipeline parallelism for real (GPipe: Huang et al. 2019; 1F1B: Narayanan et
// al. 2021, §2.2): a gpt model's blocks cut into consecutive stages, one per rank of a
// pipeline, each step's micro-batches run through them in the order of a schedule
// (nn/pipe/pipe_sched.h: the one the simulator prices), the activations sent forward and
// their gradients back point to point. Composed with data parallelism: the trainer of each
// stage (train.h) sums its stage's gradient over the ranks that hold the same stage, with
// its strategy (replicate, or ZeRO stage 1: Megatron-LM's distributed optimizer).
//
// What it changes in the arithmetic: nothing. Every stage runs the plain net's layers on the
// plain net's numbers in the plain order, so a pipeline is the plain run with the same
// micro-batches (dt_trainer_set_accumulate) bit for bit, when
//   - the plain net keeps its tied head's gradient apart (net.h dt_net_keep_tied_apart):
//     GPT-2's head reads the token embedding, which lives on the first stage and, as a copy,
//     on the last (Megatron-LM's layout); the head's half of its gradient, summed over the
//     micro-batches on the last stage, is added once per step where the first stage's
//     embedding finishes backward, and after the update the first stage's weight replaces
//     the copy;
//   - the norms (clipping, LAMB) are summed from pieces (piece_norms): each stage's pieces are
//     the plain net's, and the total is taken over all of them in the model's order;
//   - with data parallelism, the allreduce adds each element in an order that does not depend
//     on where the element sits in its bucket (halving-doubling: a stage's buckets are not the
//     plain net's); the ring gives the same sums within float rounding.
// Activations (dt_recompute): a stage keeps each micro-batch's input until its backward (the
// received activations, or the tokens) and, under full recomputation, runs that
// micro-batch's forward again before its backward unless it was the stage's last forward
// (Megatron-LM's full recomputation, Korthikanti et al. 2022 §4: the last stage never
// recomputes under 1F1B); without, it keeps each micro-batch's activations (nn/net_acts.h),
// and selectively all but the attention's scores, whose forward it runs again. The same bits
// in all three: the forward is run again on the same inputs with the same dropout masks.
// Not here: the schedules (nn/pipe/pipe_sched.c), the blocks of a stage (nn/models_gpt.c),
// the step's common tail (train.c), the simulator's model of a pipeline (sim/dtsim_3d.c).
#ifndef DT_TRAIN_PIPE_H
#define DT_TRAIN_PIPE_H

#include "net_acts.h"
#include "pipe/pipe_sched.h"
#include "train.h"

// The most floats in one message of the tied weight or its gradient: they go in pieces
// (train_pipe.c post_pieces; train.h DT_TRAIN_MSG_MAX)
#define DT_PIPE_MSG_MAX DT_TRAIN_MSG_MAX

typedef struct dt_pipeline {
    MPI_Comm comm;        // the pipeline: one rank per stage, rank = stage (borrowed)
    int stage, stages;
    int blocks_lo, blocks_n;  // this stage's blocks [lo, lo + n) of the model's
    dt_pipe_sched sched;  // t->accumulate micro-batches
    size_t act_n;         // floats of one micro-batch's activations, B T C
    size_t tied_lo, tied_n;  // the tied weight's elements in this stage's net (n 0: none)
    int direct;           // MPI reads the device's memory (host memory): the buffers below
                          // are the device's, else host memory the device's copies go through
    int wire_half;        // activations sent at 2 bytes an element (train.h act_wire_half)
    int half;             // mixed precision (real numbers): messages of half bits
    size_t msg_n;         // floats (words) of one message: act_n, or (act_n + 1) / 2 halfs
    dt_coll *sg;          // tensor parallelism, host-addressable memory: the group's ring
                          // (nn/train_tp.h, borrowed), over which a message between stages
                          // is scattered and gathered (train_pipe.c send_act); else NULL
    int sg_rank, sg_size;
    int slots;            // micro-batches held at once: the schedule's peak on this stage
    float *stash;         // slots x msg_n: each held micro-batch's received input (NULL on
                          // the first stage)
    float *fsend, *bsend; // slots x msg_n: activations sent on (NULL on the last stage), their
                          // gradients sent back (NULL on the first)
    size_t buffer_bytes;  // of the three: what the stage holds for its micro-batches
    int *holder, *slot_of;  // slot -> micro-batch (-1 free), micro-batch -> slot
    float *tied_send;     // tied_n: the last stage's half of the tied gradient
    float *host;          // host, max(act_n, tied_n): a message on its way (not direct)
    float *seed;          // device, act_n: the gradient a later stage sent
    float *grecv;         // msg_n, a message buffer: that gradient's half bits (half)
    float *bits;          // device, msg_n: half bits on their way (half, not direct)
    MPI_Request *req;     // slot k's sends at 2k (forward) and 2k + 1 (backward)
    int n_req;            // 2 slots
    size_t msg_max;       // the tied weight's and its gradient's messages: at most this many
                          // floats each (DT_PIPE_MSG_MAX; may be lowered before a step)
    MPI_Request *tied_req;  // the tied gradient's pieces in flight (n_tied_req)
    int n_tied_req;
    int cur;              // the micro-batch whose activations the net holds, -1 none
    dt_recompute recompute;
    dt_net_acts *acts;    // none, selective: a set of activations per slot (NULL: full)
    size_t acts_bytes;    // of the sets beyond the net's own
    long recomputed;      // forwards run again (selective: the attention layers' forwards),
                          // since dt_pipe_init
} dt_pipeline;

// Stage s of p: its first block and how many (the first L mod p stages take one more,
// as DeepSpeed's pipeline cuts its layers).
void dt_pipeline_blocks(int layers, int stage, int stages, int *lo, int *n);

// The net of stage `stage` of `stages` of gpt model `name` (cfg as dt_model_create's: with
// tp > 1, tensor-parallel rank tp_rank's slices, nn/train_tp.h): its blocks, the embedding
// on the first stage, the final norm and the head (with its copy of the tied weight) on the
// last, its parameters taken from `whole` (the same model built whole: every layout starts
// from the plain run's weights; NULL: left as built). NULL with err (DT_EXIT_USAGE): not a
// gpt model, more stages than blocks, or whole not that model.
dt_net *dt_pipeline_stage_net(const char *name, dt_device *dev, const dt_model_config *cfg,
                              int stage, int stages, int tp_rank, const dt_net *whole,
                              dt_error *err);

// Collective over the trainer's comm and pipe_comm, after dt_trainer_init, set_comm,
// set_accumulate (m micro-batches) and the strategy: the stage's schedule (kind, v = 1), its
// buffers (with each slot's activations unless recompute is full), the hooks into the
// trainer's step (t->pipe, t->hooks.reduced). Refused
// (DT_EXIT_USAGE, on every rank): ZeRO's stage 3, m too large for the message tags,
// pipe_comm's size not the stages of `net`.
int dt_pipeline_init(dt_pipeline *p, dt_trainer *t, MPI_Comm pipe_comm, int stages,
                     dt_pipe_kind kind, dt_recompute recompute, dt_error *err);
void dt_pipeline_free(dt_pipeline *p, dt_trainer *t);

// One step of the pipeline, collective over the pipeline and the data-parallel group: this
// data-parallel rank's m micro-batches of tokens and their targets ((m B, T) each; the first
// stage reads the tokens, the last the targets), as dt_train_step_tokens. Returns the mean
// loss over every rank's tokens, on every stage.
float dt_pipeline_step_tokens(dt_trainer *t, const int32_t *tokens, const int32_t *targets,
                          float lr);

// Collective over comm, the ranks that hold the parts of one replica of the model (its
// stages and tensor-parallel ranks): the whole model's trainable parameters into
// whole->params on comm's rank `root` (whole: the model built whole, on every rank; its
// layout), each part's elements in their places (nn/net_part.h).
void dt_model_parts_gather(const dt_net *part, dt_net *whole, int tp_rank, int tp,
                           MPI_Comm comm, int root);

#endif
