// sgd.c — one step of SGD with momentum, weight decay and Nesterov momentum, exactly as
// torch.optim.SGD documents its algorithm (dampening 0):
//     g_t = g_t + lambda*w_{t-1}                        (weight decay as an L2 gradient)
//     b_t = mu*b_{t-1} + g_t,  b_1 = g_1                (heavy ball: Polyak 1964)
//     g_t = g_t + mu*b_t  (nesterov)  or  g_t = b_t     (Sutskever et al. 2013, §2)
//     w_t = w_{t-1} - lr*g_t
// The contract (in place, the first step, momentum 0) is in training.h.
#include "training.h"

void sgd_step(float *w, const float *g, float *v, size_t n, const sgd_config *c, int first) {
    // TODO(student): for each of the n elements, d = g + weight_decay*w; with momentum
    // (c->momentum != 0) set v to d on the first step and to momentum*v + d after it, then
    // take d + momentum*v (nesterov) or v as the step; w -= lr*step. Without momentum, leave
    // v alone (it may be NULL). Write w and v only, and only their first n elements.
    (void)w, (void)g, (void)v, (void)n, (void)c, (void)first;
}
