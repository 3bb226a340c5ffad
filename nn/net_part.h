// net_part.h — a part of a model and the whole it is cut from: a pipeline stage (its blocks,
// nn/train_pipe.h), a tensor-parallel rank (its slices, nn/train_tp.h), or both. A part's
// weights are taken from the whole model built whole (so every layout starts from the plain
// run's weights), and put back into the whole's layout to evaluate and save it.
// Not here: building the part (nn/models_gpt.c: dt_model_config's block0, blocks, ends, tp).
#ifndef DT_NET_PART_H
#define DT_NET_PART_H

#include "net.h"

// The whole's tensor that part tensor p is (a slice of): by name, the last stage's
// lm_head.weight being transformer.wte.weight. NULL: none.
const dt_param *dt_net_part_whole_param(const dt_net *whole, const dt_param *p);

// Does the layer or parameter name s end with tail? (how the parts find a block's pieces)
int dt_name_ends_with(const char *s, const char *tail);
// How tensor parallelism splits p, a tensor of part: 3 by output rows in three chunks
// (c_attn's [q | k | v]), 1 by output rows (c_fc; the token embedding and the head's copy
// of it where part's vocabulary is a slice), -1 by input columns (the two c_proj weights), 0
// not at all.
int dt_net_part_split(const dt_net *part, const dt_param *p);
// part's parameters from whole's (the same device): tensor-parallel rank tp_rank of tp
// (tp <= 1: whole tensors). 0, or -1 with err (DT_EXIT_USAGE) for a tensor that does not fit.
int dt_net_part_copy(dt_net *part, const dt_net *whole, int tp_rank, int tp, dt_error *err);
// part's trainable parameters written into whole_host (whole->n_trainable floats, host) at
// their places; a tensor every tensor-parallel rank holds is written by rank 0 only, the
// tied copy (lm_head.weight) by none. Summed over the parts of a model (into zeros), the
// whole model.
void dt_net_part_place(const dt_net *part, const dt_net *whole, int tp_rank, int tp,
                       float *whole_host);

// The same for any array laid out as the trainable parameters (an optimizer's moments):
// part_host (part->n_trainable floats) into whole_host, and back (take: every trainable
// tensor of the part, its copy of the tied weight too, from the whole's).
void dt_net_part_place_array(const dt_net *part, const dt_net *whole, int tp_rank, int tp,
                             const float *part_host, float *whole_host);
void dt_net_part_take_array(const dt_net *part, const dt_net *whole, int tp_rank, int tp,
                            const float *whole_host, float *part_host);

#endif
