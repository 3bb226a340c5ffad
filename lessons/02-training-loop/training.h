// training.h — lesson 02's contract: one step of SGD with momentum, weight decay and
// Nesterov exactly as torch.optim.SGD documents it (sgd.c), and the loop that trains a
// network on one process with it (train_loop.c). The grader (grader.c) calls these; you
// write their bodies. Read the lesson's README.md first.
#ifndef LESSON02_TRAINING_H
#define LESSON02_TRAINING_H

#include <stddef.h>
#include <stdint.h>

#include "data.h"  // real/data.h: datasets, dt_epoch_permutation, dt_dataset_fill
#include "net.h"   // nn/net.h: dt_net, dt_net_set_batch/forward/loss/backward

// Hyper-parameters of torch.optim.SGD (dampening is always 0 here).
typedef struct {
    float lr;            // learning rate, > 0
    float momentum;      // mu in [0, 1); 0: plain SGD, no momentum buffer at all
    float weight_decay;  // lambda >= 0 (L2 penalty lambda/2 |w|^2 folded into the gradient)
    int nesterov;        // 1: Nesterov momentum (only with momentum > 0, as torch)
} sgd_config;

// One step of torch.optim.SGD on n elements (the algorithm box of its documentation, with
// dampening 0), element by element:
//     d = g + lambda*w
//     if mu != 0:   v = first ? d : mu*v + d
//                   d = nesterov ? d + mu*v : v
//     w = w - lr*d
// In place: w (and v when mu != 0) are updated; g is only read. first = 1 on the first
// step of a buffer: v's old contents are then ignored (torch has no buffer yet and sets it
// to d), so v may come straight from malloc. When mu == 0, v is neither read nor written
// (it may be NULL). Exactly n elements of each buffer are touched.
void sgd_step(float *w, const float *g, float *v, size_t n, const sgd_config *c, int first);

// What train_loop runs.
typedef struct {
    int64_t steps;   // optimizer steps to take
    uint64_t seed;   // the order of the examples (below)
    sgd_config sgd;  // lr, momentum, nesterov as given; weight_decay on weights only (below)
} train_config;

// Trains net (cpu device: net->params and net->grads are host memory) for c->steps SGD
// steps from its current weights, with a fresh momentum buffer, on batches of B = net->B
// examples of `train`:
//   - step s (from 0) is step k = s % spe of epoch e = s / spe, spe = floor(n / B) (the
//     last n mod B examples of each epoch's permutation are dropped); its examples are
//     perm[k*B + j], j < B, where perm = dt_epoch_permutation(c->seed, e, n), read with
//     dt_dataset_fill(train, idx, B, c->seed, e, 1, x, labels, err);
//   - dt_net_set_batch, dt_net_forward(net, 1) (training: dropout on), losses[s] =
//     dt_net_loss(net), dt_net_backward(net, 1.0f, NULL, NULL) (the mean gradient);
//   - one sgd_step per trainable tensor of net->params_table (offset, count: the same
//     offsets in net->params, net->grads and the momentum buffer), first = (s == 0), with
//     weight decay on conv and linear weights only (kind DT_PARAM_WEIGHT; biases get 0:
//     nn/optim.c, Jia et al. 2018).
// Returns 0, or -1 with err set (a failed read).
int train_loop(dt_net *net, const dt_dataset *train, const train_config *c, float *losses,
               dt_error *err);

// Test top-1 of net on examples 0..n-1 of ds, in order, in batches of net->B (the last
// batch padded to B; only its real examples count): dt_net_forward(net, 0) (inference:
// no dropout), dt_net_loss for net->probs, the prediction is the first largest
// probability. Returns the fraction correct in [0, 1], or -1 with err set.
double evaluate_top1(dt_net *net, const dt_dataset *ds, int64_t n, dt_error *err);

#endif
