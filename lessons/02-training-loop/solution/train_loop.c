// train_loop.c — one process trains a network: for each step a batch of examples in the
// seeded order, forward, the softmax cross-entropy loss, backward (the mean gradient over
// the batch), and one SGD step per trainable tensor; then the test top-1. The same step as
// nn/train.c's dt_train_step with one rank (no allreduce: the gradient is already the mean
// over the whole batch) and as real/dtrain_eval.c's evaluation.
#include <stdlib.h>
#include <string.h>

#include "training.h"

int train_loop(dt_net *net, const dt_dataset *train, const train_config *c, float *losses,
               dt_error *err) {
    const int B = net->B;
    const int64_t n = train->n, spe = dt_steps_per_epoch(n, B, 1);
    if (spe < 1)
        return dt_fail(err, DT_EXIT_USAGE, "batch %d is larger than the %lld examples of %s",
                       B, (long long)n, train->name);
    size_t per = (size_t)net->in_c * net->in_h * net->in_w;
    int64_t *perm = malloc((size_t)n * sizeof *perm), *idx = malloc((size_t)B * sizeof *idx);
    float *x = malloc((size_t)B * per * sizeof *x);
    int32_t *y = malloc((size_t)B * sizeof *y);
    // the momentum buffer: malloc, not calloc, the first step does not read it
    float *v = c->sgd.momentum != 0.0f ? malloc(net->n_trainable * sizeof *v) : NULL;
    int rc = 0;
    for (int64_t s = 0; s < c->steps && rc == 0; s++) {
        int64_t e = s / spe, k = s % spe;
        if (k == 0) dt_epoch_permutation(c->seed, e, n, perm);  // a new epoch, a new order
        memcpy(idx, perm + k * B, (size_t)B * sizeof *idx);
        if (dt_dataset_fill(train, idx, B, c->seed, e, 1, x, y, err) != 0) {
            rc = -1;
            break;
        }
        dt_net_set_batch(net, x, y);
        dt_net_forward(net, 1);
        losses[s] = dt_net_loss(net);
        dt_net_backward(net, 1.0f, NULL, NULL);
        for (int i = 0; i < net->n_params; i++) {
            const dt_param *p = &net->params_table[i];
            if (!p->trainable || p->count == 0) continue;
            sgd_config sc = c->sgd;
            // no decay on biases (nor BN gamma/beta): Jia et al. 2018, as nn/optim.c
            sc.weight_decay = p->kind == DT_PARAM_WEIGHT ? c->sgd.weight_decay : 0.0f;
            sgd_step(net->params + p->offset, net->grads + p->offset, v ? v + p->offset : NULL,
                     p->count, &sc, s == 0);
        }
    }
    free(perm), free(idx), free(x), free(y), free(v);
    return rc;
}

double evaluate_top1(dt_net *net, const dt_dataset *ds, int64_t n, dt_error *err) {
    const int B = net->B, K = net->num_classes;
    if (n < 0 || n > ds->n)
        return dt_fail(err, DT_EXIT_USAGE, "%lld examples asked of %s, which has %lld",
                       (long long)n, ds->name, (long long)ds->n);
    size_t per = (size_t)net->in_c * net->in_h * net->in_w;
    int64_t *idx = malloc((size_t)B * sizeof *idx);
    float *x = calloc((size_t)B * per, sizeof *x), *probs = malloc((size_t)B * K * sizeof *probs);
    int32_t *y = calloc((size_t)B, sizeof *y);
    int64_t correct = 0;
    int rc = 0;
    for (int64_t start = 0; start < n && rc == 0; start += B) {
        int b = n - start < B ? (int)(n - start) : B;  // the last batch: b real examples
        for (int j = 0; j < b; j++) idx[j] = start + j;
        if (dt_dataset_fill(ds, idx, b, 0, 0, 1, x, y, err) != 0) {
            rc = -1;
            break;
        }
        dt_net_set_batch(net, x, y);
        dt_net_forward(net, 0);
        dt_net_loss(net);
        net->dev->to_host(net->dev, probs, net->probs, (size_t)B * K * sizeof *probs);
        for (int j = 0; j < b; j++) {
            const float *p = probs + (size_t)j * K;
            int best = 0;
            for (int k = 1; k < K; k++)
                if (p[k] > p[best]) best = k;
            correct += best == y[j];
        }
    }
    free(idx), free(x), free(probs), free(y);
    if (rc) return -1;
    return n > 0 ? (double)correct / (double)n : 0.0;
}
