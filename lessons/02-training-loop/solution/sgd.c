// sgd.c — one step of SGD with momentum, weight decay and Nesterov momentum, exactly as
// torch.optim.SGD documents its algorithm (dampening 0):
//     g_t = g_t + lambda*w_{t-1}                        (weight decay as an L2 gradient)
//     b_t = mu*b_{t-1} + g_t,  b_1 = g_1                (heavy ball: Polyak 1964)
//     g_t = g_t + mu*b_t  (nesterov)  or  g_t = b_t     (Sutskever et al. 2013, §2)
//     w_t = w_{t-1} - lr*g_t
// nn/kernels.h dt_sgd_elem is the project's own copy of the same update (on the device).
#include "training.h"

void sgd_step(float *w, const float *g, float *v, size_t n, const sgd_config *c, int first) {
    const float lr = c->lr, mu = c->momentum, wd = c->weight_decay;
    for (size_t i = 0; i < n; i++) {
        float d = g[i] + wd * w[i];  // g + lambda*w
        if (mu != 0.0f) {            // torch keeps no buffer at all without momentum
            float buf = first ? d : mu * v[i] + d;
            v[i] = buf;
            d = c->nesterov ? d + mu * buf : buf;
        }
        w[i] -= lr * d;
    }
}
