// train_tp.h — tensor parallelism for real (Megatron-LM: Shoeybi et al. 2019, §3): each rank
// of a tensor-parallel group holds a slice of every block (nn/models_gpt.c with cfg.tp:
// attention's c_attn and the MLP's c_fc split by their outputs, so each rank runs heads/t
// heads and 4C/t of the MLP; both c_proj split by their inputs), and the group sums what
// the slices make: after each c_proj's forward its output (Megatron-LM's g: the partial
// products; the bias added once, by rank 0), and before each block's two layer norms'
// backward the gradient that reaches them through c_attn and c_fc (f). With the vocabulary
// split (cfg.tp_vocab_whole 0; a device with its kernels), the token embedding and the tied
// head are too (Megatron-LM's VocabParallelEmbedding and vocab-parallel cross-entropy):
// each rank embeds the tokens of its rows (the group sums the outputs), computes the logits
// of its slice, and the loss takes the group's row maximum, sum of exponentials and target
// logit (three allreduces of B T numbers, never the B T V logits); the gradient reaching
// the final layer norm through the head is summed (f). Everything else, the residual
// stream and the layer norms, is the same on every rank of the group, computed there from
// the same numbers. The sums are the library's ring over the group (NCCL's allreduce in
// Megatron-LM; the loss's three, MPI_Allreduce's): another order than the plain net's, so
// a tensor-parallel run equals the plain run within float rounding, and repeats itself bit
// for bit.
// Composed with the pipeline (a stage's slices, nn/train_pipe.h) and with data parallelism
// (the trainer of each (stage, slice): the ranks that hold the same slice).
// Clipping's norm: the slices' sums of squares added over the group, a whole tensor's once.
#ifndef DT_TRAIN_TP_H
#define DT_TRAIN_TP_H

#include "train.h"

typedef struct dt_tensor_par {
    MPI_Comm comm;            // the group (borrowed): one rank per slice
    int rank, size;
    unsigned char *sum_out;   // per layer: its output summed after forward (row-parallel)
    unsigned char *sum_dout;  // per layer: its output's gradient summed before backward
    unsigned char *split;     // per parameter tensor: sliced (1) or whole on every rank (0)
    dt_coll *coll;            // owned: the group's ring (the trainer's options, algo ring)
    int vocab_lo, vocab_n;    // the vocabulary split: this rank's rows of it (n 0: whole)
    float *row_max;           // loss rows: the group's row maxima, then the target logits
    double *row_sum, *row_tgt;  // the group's sums of exponentials, the target's logit
    int32_t *labels_part;     // loss rows: the labels as columns of this rank's slice (or -1)
    long sums;                // allreduces run, since dt_tp_init
} dt_tensor_par;

// Collective over comm and the trainer's comm, after dt_trainer_set_comm (net built with
// cfg.tp = comm's size, its slices those of comm's rank): the hooks (net->on_tensor, the
// row-parallel linears' bias on rank 0 only, t->tp for the norms; with the vocabulary split,
// net->loss_part and seed_part). Refused (DT_EXIT_USAGE, every rank): a net not of tp slices
// of a gpt model, a sharded strategy, the vocabulary split on a device
// without its kernels (dt_tp_vocab_split_ok).
int dt_tp_init(dt_tensor_par *tp, dt_trainer *t, MPI_Comm comm, dt_error *err);
void dt_tp_free(dt_tensor_par *tp, dt_trainer *t);
// Whether d has the kernels of a vocabulary split over the group (nn/device.h embed_part_*,
// xent_part_*): the cpu and the simulator's model device; not cuda, so far.
int dt_tp_vocab_split_ok(const dt_device *d);

// Clipping's sums of squares (train_norms.c): sq[s] of plan segment s of this rank's slices
// becomes, on each tensor's first segment (0 on the others), the tensor's sum over the group:
// its slices' added, a whole tensor's counted once. The plan's tensors are the same on every
// rank of the group (its segments need not be).
void dt_tp_norms(dt_trainer *t, const dt_norm_plan *pl, double *sq);

#endif
