// optim.h — optimizers and learning-rate schedules: SGD with momentum (and Nesterov), LARS
// (You, Gitman, Ginsburg 2017) as used for ResNet-50 at batch 32K, linear warm-up followed
// by step or polynomial decay (Goyal et al. 2017; MLPerf), the linear scaling rule, and
// dynamic loss scaling for fp16 gradients (Micikevicius et al. 2018). Updates run on the
// device (sgd_update / lars_update); only per-tensor scalars (norms, trust ratios) are
// computed on the host. AdamW (Loshchilov & Hutter 2019) and LAMB (You et al. 2019) for the
// transformers, with clipping by global norm and cosine decay. Not here: gradient averaging
// (coll/).
#ifndef DT_OPTIM_H
#define DT_OPTIM_H

#include <stddef.h>

#include "net.h"

typedef enum { DT_OPT_SGD, DT_OPT_LARS, DT_OPT_ADAMW, DT_OPT_LAMB } dt_opt_kind;

typedef struct {
    dt_opt_kind kind;
    float momentum;      // 0.9
    float weight_decay;  // applied to conv/linear weights only (Jia et al. 2018: not to
                         // biases, BN gamma or beta)
    int nesterov;        // SGD only
    float trust;         // LARS trust coefficient eta (0.001: docs/formulas.md, "LARS")
    float eps;           // LARS epsilon (1e-9); AdamW's (1e-8, torch) and LAMB's (1e-6, the
                         // paper's BERT runs) added to sqrt(v_hat)
    float beta1, beta2;  // AdamW, LAMB moment decay rates (0.9, 0.999)
} dt_optim_config;

dt_optim_config dt_optim_config_default(dt_opt_kind kind);

typedef struct {
    dt_optim_config cfg;
    dt_device *dev;
    float *velocity;     // device, n_trainable (same offsets as grads): optimizer state
                         // (AdamW, LAMB: the first moment m); sharded (optim_shard.c):
                         // shard_hi - shard_lo, from shard_lo
    float *second;       // AdamW, LAMB: the second moment v (device, n_trainable)
    float *direction;    // LAMB: each tensor's update direction r (device, n_trainable)
    size_t n;
    int sharded;         // ZeRO stage 1 (dt_optim_create_shard): state for one shard only
    size_t shard_lo, shard_hi;  // that shard of the trainable parameters (elements)
    size_t state_bytes;  // optimizer state allocated on the device (bytes)
    long step;           // updates applied so far
    // LARS: room for |w| and |g| of every tensor, fetched in one sumsq_many per step
    int norm_cap;
    const float **norm_x;
    size_t *norm_n;
    double *norm_out;
} dt_optim;

dt_optim *dt_optim_create(const dt_net *net, const dt_optim_config *cfg, dt_error *err);
void dt_optim_free(dt_optim *opt);
// One update of every trainable tensor with learning rate lr (from dt_lr_at). SGD: weight
// decay on weights only. LARS: per weight tensor, local_lr = trust*|w|/(|g| + wd*|w| + eps)
// (dt_lars_local_lr) and v = m*v + lr*local_lr*(g + wd*w), w -= v; biases and BN parameters
// take the plain momentum update v = m*v + lr*g, w -= v (no decay, no trust ratio).
// AdamW: torch.optim.AdamW on every tensor, decay on weights (conv, linear, embedding) only.
// LAMB (You et al. 2019, Alg. 2): Adam's direction r = m_hat/(sqrt(v_hat) + eps) + wd*w per
// weight tensor, w -= lr * (|w|/|r|) * r (ratio 1 where a norm is 0); biases and norm
// parameters take w -= lr * m_hat/(sqrt(v_hat) + eps) (no decay, no trust ratio).
// docs/formulas.md, "AdamW and LAMB".
void dt_optim_step(dt_optim *opt, dt_net *net, float lr);
// Clipping by global norm (Pascanu et al. 2013; torch.nn.utils.clip_grad_norm_): the norm of
// all gradients together, and if it exceeds max_norm every gradient times
// max_norm/(norm + 1e-6). Returns the norm before clipping (max_norm <= 0: only measures).
double dt_clip_grad_norm(dt_net *net, double max_norm);

// ---- ZeRO stage 1 (Rajbhandari et al. 2020 §5.1; optim_shard.c) ----
// An optimizer whose state covers only the elements [lo, hi) of the trainable parameters
// (this rank's shard, coll.h dt_shard_lo): (hi - lo) floats of momentum instead of
// n_trainable. dt_optim_step refuses it; dt_optim_step_shard updates the parameters of the
// shard alone, each element exactly as dt_optim_step would (the same kernels on the pieces
// of the tensors that fall inside it), from net->grads[lo, hi).
dt_optim *dt_optim_create_shard(const dt_net *net, const dt_optim_config *cfg, size_t lo,
                                size_t hi, dt_error *err);
// LARS's trust ratio needs each weight tensor's whole |w| and |g| (You et al. 2017 Alg. 1).
// |w|: every rank holds the whole parameters (stage 1), so it is computed whole, as
// dt_optim_step does. |g|: only the shard's gradient is summed here, so this writes the
// shard's part of |g|^2 for each weight tensor, in table order, to partial[] (returns how
// many: dt_optim_lars_tensors), and the caller sums them over the ranks (an allreduce of a
// few doubles) and passes the sums to dt_optim_step_shard. SGD: returns 0.
int dt_optim_lars_tensors(const dt_net *net);
int dt_optim_shard_grad_sumsq(dt_optim *opt, const dt_net *net, double *partial);
// g_sumsq: the |g|^2 of each weight tensor over all ranks (LARS), NULL for SGD.
void dt_optim_step_shard(dt_optim *opt, dt_net *net, float lr, const double *g_sumsq);

// ---- ZeRO stages 2 and 3 (Rajbhandari et al. 2020 §5.2, §5.3; optim_shard.c) ----
// The trainer shards each unit (a fusion bucket, stage 2; a layer's parameters, stage 3)
// over the ranks, so a rank owns a list of pieces of the trainable parameters: piece k is
// the elements [lo[k], hi[k]) (ascending, disjoint), held at at[k] in the rank's compact
// buffers (its reduced gradient, stage 3 its parameters, the optimizer state).
typedef struct {
    int n;
    const size_t *lo, *hi, *at;
} dt_optim_pieces;
// (Re)allocates the optimizer's state for `elems` elements, zero: what dt_optim_create_shard
// and dt_optim_reshard keep (SGD, LARS: the momentum; AdamW: two moments; LAMB: two moments
// and the direction r), counted in state_bytes.
void dt_optim_alloc_state(dt_optim *opt, size_t elems);
// A sharded optimizer (dt_optim_create_shard) re-made, before any step, with zero state for
// `elems` elements (the pieces' total). 0, or -1 with err (DT_EXIT_USAGE) if it has stepped.
int dt_optim_reshard(dt_optim *opt, size_t elems, dt_error *err);
// The pieces' part of |x|^2 of each LARS weight tensor (in table order, dt_optim_lars_tensors
// of them) from the compact buffer x, or from net->params at global offsets (x NULL).
void dt_optim_pieces_sumsq(dt_optim *opt, const dt_net *net, const dt_optim_pieces *pc,
                           const float *x, double *partial);
// The update of the pieces, each element with dt_optim_step's arithmetic: w the compact
// parameters (NULL: net->params at global offsets), g the compact gradient (the mean over
// the ranks), LARS's |g|^2 and |w|^2 of each weight tensor summed over the ranks (NULL: SGD).
void dt_optim_step_pieces(dt_optim *opt, dt_net *net, const dt_optim_pieces *pc, float *w,
                          const float *g, float lr, const double *g_sumsq,
                          const double *w_sumsq);

// ---- norms from pieces: the same bits sharded and whole (optim_norms.c) ----
// Clipping needs |g| of the whole gradient and LAMB |w|, |r| of each whole weight tensor;
// a ZeRO rank holds its piece of each unit only. A plan cuts the trainable elements into
// segments: each unit [unit_lo[k], unit_lo[k+1]) split over P ranks as the ring splits it
// (coll.h dt_shard_lo), cut again at every trainable tensor's boundaries, ascending. A norm
// is the sum, in ascending order and in double, of its segments' |x|^2 (one device sumsq
// each): the owner of a segment and a plain run holding everything compute the same
// numbers, so a plain run with the plan and a sharded run give the same bits. A rank's
// compact buffers hold its pieces side by side in unit order (nn/train_zero.h gshard).
typedef struct {
    int n, P;           // segments; ranks
    size_t *lo, *hi;    // segment s: the trainable elements [lo[s], hi[s])
    int *param;         // its tensor (index into params_table)
    int *owner;         // the rank whose piece holds it
    size_t *at;         // its offset in the owner's compact buffers
} dt_norm_plan;
dt_norm_plan *dt_norm_plan_create(const dt_net *net, int n_units, const size_t *unit_lo,
                                  int P);
void dt_norm_plan_free(dt_norm_plan *pl);
// out[s] (pl->n doubles) = |x|^2 over segment s for the segments of `rank` (rank < 0:
// every segment), 0 for the others; x is `rank`'s compact buffer (x + at[s]) or, compact 0,
// global (x + lo[s]).
void dt_norm_plan_sumsq(const dt_norm_plan *pl, dt_device *d, int rank, const float *x,
                        int compact, double *out);
double dt_norm_plan_total(const dt_norm_plan *pl, const double *v);  // sum, ascending
// Sums v (n doubles) over the ranks in place (the trainer: an allreduce).
typedef void (*dt_sum_fn)(void *ctx, double *v, size_t n);
// AdamW or LAMB (dt_optim_step's arithmetic, element by element) on the segments of `rank`
// (rank < 0, a whole optimizer: every segment): w, g compact or global as in
// dt_norm_plan_sumsq, the state compact when opt->sharded. LAMB's |w|^2 and |r|^2 per
// segment are summed over the ranks with sum(ctx, ...) (NULL: this rank holds them all)
// before each weight tensor's ratio is taken from its segments in ascending order.
void dt_optim_step_plan(dt_optim *opt, dt_net *net, const dt_norm_plan *pl, int rank,
                        float *w, int w_compact, const float *g, int g_compact, float lr,
                        dt_sum_fn sum, void *ctx);

// ---- learning-rate schedules ----
typedef enum { DT_LR_CONST, DT_LR_STEP, DT_LR_POLY, DT_LR_COSINE } dt_lr_schedule_kind;

typedef struct {
    dt_lr_schedule_kind kind;
    float base_lr;        // peak learning rate, reached at the end of warm-up
    double warmup_steps;  // linear warm-up from warmup_start*base_lr to base_lr
    float warmup_start;   // fraction of base_lr at step 0 (Goyal et al.: 0.1/ (k n / 256))
    double total_steps;   // POLY: lr = base_lr*(1 - (t - warmup)/(total - warmup))^power
    float power;          // 2 (MLPerf LARS: docs/formulas.md, "Learning-rate schedules")
    int n_milestones;     // STEP: multiply by gamma at each milestone (steps)
    double milestones[8];
    float gamma;          // 0.1
    // COSINE (Loshchilov & Hutter 2017, one cycle without restarts, as GPT-3 and llm.c):
    // lr = final + (base - final)*(1 + cos(pi*(t - warmup)/(total - warmup)))/2, and final
    // from total_steps on, with final = final_frac*base
    float final_frac;
} dt_lr_schedule;

// learning rate at (possibly fractional) step t, t >= 0
float dt_lr_at(const dt_lr_schedule *s, double t);
// 0 if s is usable, else -1 with err (DT_EXIT_USAGE) naming the field: base_lr > 0,
// warmup_steps >= 0, warmup_start in [0,1], POLY total_steps > warmup_steps and power > 0,
// STEP 0..8 non-decreasing milestones at or after the warm-up and gamma > 0. Milestones
// are absolute steps (counted from 0, not from the end of warm-up).
int dt_lr_schedule_check(const dt_lr_schedule *s, dt_error *err);
// Goyal et al. 2017 linear scaling rule: lr = lr_per_256 * global_batch / 256
float dt_linear_scaling_lr(float lr_per_256, int global_batch);

// ---- dynamic loss scaling for fp16 gradients ----
typedef struct {
    float scale;          // current loss scale S (65536 to start)
    int growth_interval;  // double S after this many finite steps (2000; <= 0: never)
    int good_steps;
    long skipped;         // steps skipped for overflow
} dt_loss_scaler;

dt_loss_scaler dt_loss_scaler_default(void);
// After backward with loss scaled by S: if any gradient is NaN/Inf, halve S, skip the step
// and return 0; else multiply the gradients by 1/S, maybe grow S, and return 1.
int dt_loss_scaler_unscale(dt_loss_scaler *ls, dt_net *net);
// The scale's bookkeeping alone, for a decision already agreed (the trainer: every rank
// must skip together): overflow halves S (not below 1), counts the skip and returns 0;
// otherwise S doubles after growth_interval clean steps, and it returns 1.
int dt_loss_scaler_update(dt_loss_scaler *ls, int overflow);

#endif
