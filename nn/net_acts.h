// net_acts.h — a net's activations kept for several micro-batches at once: what a pipeline
// stage holds when it does not recompute (Korthikanti et al. 2022, "Reducing Activation
// Recomputation in Large Transformer Models", §4: no recomputation keeps every micro-batch
// in flight's activations; selective recomputation keeps all but the attention's core,
// which it recomputes). A set is the buffers a backward reads: each layer's output (out, or
// out_h under mixed precision), its saved state (aux) and the loss's probabilities. Set 0 is
// the net's own; the others are allocated alike, and using set k points the layers at it,
// no copies (a GPU's pipeline keeps each micro-batch's tensors where they were written).
// Not here: which micro-batch uses which set (nn/train_pipe.c, a stage's slots).
#ifndef DT_NET_ACTS_H
#define DT_NET_ACTS_H

#include "net.h"

// Activation recomputation (Korthikanti et al. 2022): none, full (each block's input kept,
// the stage's forward run again), selective (the attention's core run again). dtrain's
// pipeline (nn/train_pipe.h) and dtsim's --recompute (sim/dtsim_3d.c) number them alike.
typedef enum { DT_RECOMPUTE_NONE, DT_RECOMPUTE_FULL, DT_RECOMPUTE_SELECTIVE } dt_recompute;
static inline const char *dt_recompute_name(int r) {
    return r == DT_RECOMPUTE_FULL ? "full" : r == DT_RECOMPUTE_SELECTIVE ? "selective" : "none";
}

typedef struct dt_net_acts dt_net_acts;

// n >= 1 sets for net (finalized). keep_attention 0: the attention layers' saved scores are
// one buffer for all sets (selective recomputation: dt_net_acts_use's caller runs them again,
// dt_net_acts_rerun_attention).
dt_net_acts *dt_net_acts_create(dt_net *net, int n, int keep_attention);

// Point net's layers at set k (0 <= k < n).
void dt_net_acts_use(dt_net_acts *a, dt_net *net, int k);

// Selective recomputation: each attention layer's forward again, from its input in the set in
// use, which writes its scores (and its output, the same values).
void dt_net_acts_rerun_attention(dt_net *net);

// Bytes of the sets beyond the net's own (n - 1 of them).
size_t dt_net_acts_bytes(const dt_net_acts *a);

// Frees the extra sets, set 0 in use again. NULL is a no-op.
void dt_net_acts_free(dt_net_acts *a, dt_net *net);

#endif
