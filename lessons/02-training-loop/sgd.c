// sgd.c — one step of SGD with momentum, weight decay and Nesterov momentum, exactly as
// torch.optim.SGD documents its algorithm (dampening 0):
//     g_t = g_t + lambda*w_{t-1}                        (weight decay as an L2 gradient)
//     b_t = mu*b_{t-1} + g_t,  b_1 = g_1                (heavy ball: Polyak 1964)
//     g_t = g_t + mu*b_t  (nesterov)  or  g_t = b_t     (Sutskever et al. 2013, §2)
//     w_t = w_{t-1} - lr*g_t
// The contract (in place, the first step, momentum 0) is in training.h.
#include "training.h"

void sgd_step(float *w, const float *g, float *v, size_t n, const sgd_config *c, int first) {
    // TODO(student): the contract (training.h): one step of torch.optim.SGD (the README's
    //   box, dampening 0) on n floats in place — w and v updated to what torch's update
    //   gives in float64, g only read; first = 1: v's old contents are ignored; momentum 0:
    //   v is never touched (it may be NULL). Exactly the first n elements of w and v are
    //   written. O(n), one pass. Stuck: HINTS.md.
    (void)w, (void)g, (void)v, (void)n, (void)c, (void)first;
}
