// zero.h — sharded data parallel as the simulator models it (ZeRO, Rajbhandari et al. 2020):
// the stages, the model states each GPU keeps (§3.1, §5: parameters 2Ψ + gradients 2Ψ +
// optimizer state KΨ in mixed-precision Adam, K = 12, divided by the data-parallel degree N
// stage by stage) and the elements each GPU sends per step (§7: plain allreduce 2Ψ, stages 1
// and 2 the same as a reduce-scatter plus an allgather, stage 3 3Ψ, 1.5x). docs/formulas.md,
// "ZeRO". Also which optimizer a model trains with in dtsim (transformers: the Adam family).
// Not here: the simulated step (sim/rank_zero.c), the options and report (sim/dtsim_gpt.c).
#ifndef DT_SIM_ZERO_H
#define DT_SIM_ZERO_H

#include <string.h>

#include "optim.h"

// ZeRO's stages: 0 plain data parallel (every GPU keeps everything), 1 optimizer state
// sharded (P_os), 2 and gradients (P_os+g), 3 and parameters (P_os+g+p)
#define DT_ZERO_STAGES 4

// "0".."3" or the names dtrain's sharding uses (none, optimizer, gradients, parameters):
// 0 and the stage, or -1
int dt_zero_parse(const char *s, int *stage);
const char *dt_zero_name(int stage);  // "none", "optimizer", "gradients", "parameters"

// Bytes per GPU of each model state and of the activations
typedef struct {
    double params, grads, optim, activations;
    double total;  // the four together
} dt_zero_mem;

// The model states of Ψ parameters on one of N GPUs at `stage`: mixed precision (fp16
// parameters and gradients, K = 4 bytes of fp32 master weights + 4 per optimizer moment) or
// fp32 (4-byte parameters and gradients, K = 4 per moment); `moments` per parameter: 2 for
// Adam, AdamW and LAMB, 1 for SGD with momentum and LARS. Activations are added as given
// (ZeRO-DP does not shard them).
dt_zero_mem dt_zero_memory(double psi, int stage, int N, int mixed, int moments,
                           double activation_bytes);

// Elements one GPU sends per step for Ψ gradient elements on N GPUs (a bandwidth-optimal
// ring's volume, §7.2.1): 2Ψ(N-1)/N for stages 0-2, 3Ψ(N-1)/N for stage 3
double dt_zero_comm_elems(double psi, int stage, int N);

// ZeRO stage 3 as dtrain's trainer runs it (nn/train_zero.c): the units are the layers that
// own trainable parameters, in order (unit k: elements [lo[k], lo[k+1]) of the flat
// parameters); a layer reads its own unit, or another's (GPT-2's output head, tied to the
// token embedding). Before each layer with units, forward and backward, the trainer keeps
// the units this layer and the next one read and gathers those it lacks (the next layer's:
// the prefetch); the rest are freed; between the passes everything is freed. Fills, per
// unit, the allgathers of one step (2 for a unit read by one layer: ZeRO's 1.5x; a tied
// unit once more per pass for each further run of layers reading it) and returns the unit
// count; *peak: the most elements gathered at once (the prefetch buffer beyond the shards).
// lo: n_layers + 1 entries, gathers: n_layers. blocks: a unit per block (nn/net.h
// dt_net_blocks, dt_trainer.shard_blocks), else one per layer, as the trainer makes them.
struct dt_net;
int dt_zero3_units(const struct dt_net *net, int blocks, size_t *lo, int *gathers, double *peak);

// Optimizer state vectors per parameter of an optimizer kind (SGD and LARS: the momentum;
// AdamW and LAMB: two moments)
int dt_zero_moments(dt_opt_kind k);

// The optimizer dtsim trains `model` with: transformers (gpt*) the Adam family (--optimizer
// lamb, or adamw: `lars` set means the layer-wise one, LAMB), the image models LARS or SGD
static inline dt_opt_kind dt_sim_optim_kind(const char *model, int lars) {
    if (!strncmp(model, "gpt", 3)) return lars ? DT_OPT_LAMB : DT_OPT_ADAMW;
    return lars ? DT_OPT_LARS : DT_OPT_SGD;
}

static inline int dt_sim_is_gpt(const char *model) { return !strncmp(model, "gpt", 3); }

#endif
