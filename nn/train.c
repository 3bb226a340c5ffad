// train.c — the data-parallel step of nn/train.h, top to bottom: for each micro-batch,
// forward, the loss, and backward with the strategy's hooks (an entry of train_strategy.h:
// replicate starts each fusion bucket's allreduce as backward completes it, ZeRO
// reduce-scatters), then the strategy's finish; the mean over the ranks; the points where
// loss scaling and clipping hook in (dt_step_hooks); the strategy's update. Backward and its
// timing are here, once, for every strategy. Not here: set-up (train_setup.c), the
// strategies (train_replicate.c, train_shard.c, train_zero.c), data loading, lr schedules.
#include "train.h"

#include <math.h>

#include "train_strategy.h"

// Micro-batch k of this rank's slice into the network: images, or (gpt models) token ids
// and their next-token targets, T loss rows per sample.
static void set_micro_batch(dt_net *net, const float *x, const int32_t *tokens,
                            const int32_t *y, int k) {
    size_t B = (size_t)net->B, image = (size_t)net->in_c * net->in_h * net->in_w;
    size_t T = net->seq > 0 ? (size_t)net->seq : 1;
    if (tokens) dt_net_set_tokens(net, tokens + k * B * T, y + k * B * T);
    else dt_net_set_batch(net, x + k * B * image, y + k * B);
}

// Backward with the loss scale of loss scaling (1 without it). Where the strategy does not
// communicate (an earlier micro-batch of accumulation) the gradient just adds up here;
// otherwise backward runs with the strategy's hooks, then its finish, and is timed:
// backward's compute, the communication the strategy saw, the part after backward (exposed).
// seed: a later pipeline stage's gradient of the net's output (nn/train_pipe.c), else NULL
// (the loss's). A tied weight's halves kept apart (net.h tied_grad) are summed in the step's
// last micro-batch (last), once: a strategy that communicates after every micro-batch (ZeRO
// 2) then sums them in the same order whatever the pipeline.
void dt_trainer_backward_begin(dt_trainer *t, const dt_strategy *s, int communicate, int last,
                               const float *seed) {
    dt_net *net = t->net;
    dt_device *d = net->dev;
    float scale = t->hooks.scale ? t->hooks.scale(t) : 1.0f;
    net->tied_defer = !last;
    if (!communicate) {
        if (seed) dt_net_backward_from(net, seed, NULL, NULL);
        else dt_net_backward(net, scale, NULL, NULL);
        return;
    }
    double t0 = MPI_Wtime();
    t->last_backward_start = t0;
    if (seed) dt_net_backward_from(net, seed, s->on_gradient_ready, t);
    else dt_net_backward(net, scale, s->on_gradient_ready, t);
    if (s->progress && d->device_memory && d->mark) {  // a GPU still computing: progress
        uint64_t m = d->mark(d);
        while (!d->done(d, m)) s->progress(t);
    }
    d->sync(d);  // the model device: backward's last kernels take their time here
    t->last_backward = MPI_Wtime() - t0;
}

void dt_trainer_backward_end(dt_trainer *t, const dt_strategy *s, int communicate) {
    if (!communicate) return;
    t->last_comm = s->finish(t);
    double end = MPI_Wtime() - t->last_backward_start;
    t->last_exposed = end - t->last_backward;
    t->sum_backward += t->last_backward;
    t->n_stats++;
}

void dt_trainer_backward(dt_trainer *t, const dt_strategy *s, int communicate, int last,
                         const float *seed) {
    dt_trainer_backward_begin(t, s, communicate, last, seed);
    dt_trainer_backward_end(t, s, communicate);
}

// Micro-batch k: its forward, loss and backward (the strategy's begin first). Returns the
// loss, the mean over its samples.
static float forward_backward(dt_trainer *t, const dt_strategy *s, const float *x,
                              const int32_t *tokens, const int32_t *y, int k) {
    dt_net *net = t->net;
    if (s->begin) s->begin(t, k);
    set_micro_batch(net, x, tokens, y, k);
    dt_net_forward(net, 1);
    float loss = dt_net_loss(net);
    net->keep_grads = k > 0;  // accumulation: later micro-batches add to the gradient
    int last = k == t->accumulate - 1;
    dt_trainer_backward(t, s, last || (s->flags & DT_STRATEGY_EACH_MICRO), last, NULL);
    return loss;
}

// Batch-norm running statistics were updated from this rank's slice only; average them so
// the replicas stay identical (PyTorch DDP instead broadcasts rank 0's buffers). The running
// mean becomes exactly the global batch's; the running variance the mean of the ranks'
// unbiased variances.
static void average_statistics(dt_trainer *t) {
    dt_net *net = t->net;
    size_t n = net->n_total - net->n_trainable;
    if (!n) return;
    float *stats = dt_net_p(net, (ssize_t)net->n_trainable);
    dt_allreduce(t->coll, stats, n, DT_F32, NULL);
    net->dev->scale(net->dev, stats, 1.0f / (float)t->size, n);
}

static void count_comm(dt_trainer *t) {  // the step's communication, into the sums
    t->sum_comm += t->last_comm;
    t->sum_exposed += t->last_exposed;
}

// The step of dt_train_step (images: x) and dt_train_step_tokens (gpt models: tokens, y
// their targets).
static float step(dt_trainer *t, const float *x, const int32_t *tokens, const int32_t *y,
                  float lr) {
    DT_ASSERT(t && t->net && (x || tokens) && y);
    dt_strategy s;
    DT_ASSERT(!dt_strategy_get(t->shard, &s));
    int K = t->accumulate;
    float loss = 0.0f;
    for (int k = 0; k < K; k++)  // micro-batches: the mean over this rank's K*B samples
        loss += forward_backward(t, &s, x, tokens, y, k) / (float)K;
    return dt_trainer_step_end(t, &s, loss, lr);
}

float dt_trainer_step_end(dt_trainer *t, const dt_strategy *sp, float loss, float lr) {
    dt_net *net = t->net;
    dt_strategy s = *sp;
    int K = t->accumulate;
    net->keep_grads = 0;
    // g = (1/(P*K)) * the sum over the ranks and micro-batches (Goyal et al. 2017, §2.1), of
    // this rank's part of the gradient
    net->dev->scale(net->dev, t->grad, 1.0f / ((float)t->size * (float)K), t->grad_n);
    average_statistics(t);
    // Every rank has B samples, so the global mean is the mean of the ranks' means.
    MPI_Allreduce(MPI_IN_PLACE, &loss, 1, MPI_FLOAT, MPI_SUM, t->comm);
    loss /= (float)t->size;
    if (t->hooks.reduced) t->hooks.reduced(t, &loss);  // a pipeline's stages agree
    if (!isfinite(loss)) {  // the same on every rank: all stop together
        count_comm(t);
        return NAN;
    }
    if (t->hooks.unscale && !t->hooks.unscale(t)) {  // loss scaling: an overflow somewhere
        count_comm(t);                               // skips the update on every rank
        return loss;
    }
    if (t->hooks.clip) t->hooks.clip(t);  // clipping: the same on every replica
    s.update(t, lr);
    if (t->hooks.updated) t->hooks.updated(t);
    count_comm(t);
    t->step++;
    return loss;
}

float dt_train_step(dt_trainer *t, const float *x_local_host, const int32_t *y_local_host,
                    float lr) {
    return step(t, x_local_host, NULL, y_local_host, lr);
}

float dt_train_step_tokens(dt_trainer *t, const int32_t *tokens_host,
                           const int32_t *targets_host, float lr) {
    DT_ASSERT(t && t->net && t->net->seq > 0);
    return step(t, NULL, tokens_host, targets_host, lr);
}

float dt_trainer_forward_backward(dt_trainer *t, const float *x_local_host,
                                  const int32_t *y_local_host) {
    DT_ASSERT(t && t->net && x_local_host && y_local_host);
    dt_strategy s;
    DT_ASSERT(!dt_strategy_get(t->shard, &s));
    float loss = forward_backward(t, &s, x_local_host, NULL, y_local_host, 0);
    t->net->keep_grads = 0;
    return loss;
}
