// train.c — the data-parallel step of nn/train.h: forward, loss, backward with the
// gradients' allreduce (train_comm.c: fusion buckets, overlap), averaging, optimizer step.
// Not here: data loading, lr schedules, checkpoints.
#include "train.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include "kernels.h"
#include "train_zero.h"

static void bcast_floats(float *buf, size_t n, int root, MPI_Comm comm) {
    while (n > 0) {
        int c = n > (size_t)INT_MAX ? INT_MAX : (int)n;
        MPI_Bcast(buf, c, MPI_FLOAT, root, comm);
        buf += c;
        n -= (size_t)c;
    }
}

// MPI reads the cpu device's memory in place, and the model device's too (sim/: host
// memory, folded with SMPI_SHARED_MALLOC, so 1024 simulated ranks do not need 1024 copies).
// The cuda device's memory (device_memory) goes through host memory: here for the one
// broadcast, in the allreduce library (coll/coll.h: chunked, pinned) for every step.

void dt_trainer_backward_allreduce(dt_trainer *t);  // train_comm.c
// ZeRO stage 1 (train_shard.c): backward, then the reduce-scatter of the gradient; the
// shard's update and the allgather of the parameters
void dt_trainer_backward_reduce_scatter(dt_trainer *t);
void dt_trainer_shard_step(dt_trainer *t, float lr);

int dt_trainer_init(dt_trainer *t, dt_net *net, dt_optim *opt, MPI_Comm comm, dt_error *err) {
    DT_ASSERT(t);
    memset(t, 0, sizeof *t);
    // Decide locally, then agree: a check that fails on one rank must fail on all, or the
    // others would wait forever in the broadcast below. The replicas must also agree on the
    // gradient length and the batch, or the allreduces would mix unrelated numbers.
    int bad = 0;
    if (!net || !net->finalized)
        bad = dt_fail(err, DT_EXIT_USAGE, "trainer: the network is %s (build it with "
                      "dt_model_create or dt_net_finalize first)", net ? "not finalized" : "NULL");
    else if (!opt || opt->n != net->n_trainable || opt->dev != net->dev)
        bad = dt_fail(err, DT_EXIT_USAGE, "trainer: the optimizer is %s", opt ?
                      "not the one made for this network (dt_optim_create(net, ...))" : "NULL");
    int pr, rr;
    MPI_Comm_size(comm, &pr);
    MPI_Comm_rank(comm, &rr);
    if (!bad && opt->sharded && (opt->shard_lo != dt_shard_lo(net->n_trainable, pr, rr) ||
                                 opt->shard_hi != dt_shard_lo(net->n_trainable, pr, rr + 1)))
        bad = dt_fail(err, DT_EXIT_USAGE, "trainer: rank %d's optimizer holds the shard [%zu, "
                      "%zu), not its own [%zu, %zu) (dt_shard_lo)", rr, opt->shard_lo,
                      opt->shard_hi, dt_shard_lo(net->n_trainable, pr, rr),
                      dt_shard_lo(net->n_trainable, pr, rr + 1));
    long long n = bad ? 0 : (long long)net->n_trainable, b = bad ? 0 : net->B;
    long long sh = bad ? 0 : opt->sharded;
    long long agree[7] = {bad ? 1 : 0, n, -n, b, -b, sh, -sh};  // max of -x is -(min of x)
    MPI_Allreduce(MPI_IN_PLACE, agree, 7, MPI_LONG_LONG, MPI_MAX, comm);
    if (agree[0]) {
        if (!bad) dt_fail(err, DT_EXIT_USAGE, "trainer: another rank rejected its network "
                          "or optimizer (see its message)");
        return -1;
    }
    if (agree[1] != -agree[2] || agree[3] != -agree[4])
        return dt_fail(err, DT_EXIT_USAGE, "trainer: the ranks' networks differ: %lld..%lld "
                       "trainable parameters, batch %lld..%lld (every rank must build the same "
                       "model with the same per-rank batch)", -agree[2], agree[1], -agree[4],
                       agree[3]);
    if (agree[5] != -agree[6])
        return dt_fail(err, DT_EXIT_USAGE, "trainer: some ranks shard the optimizer state and "
                       "some do not (every rank must make its optimizer alike)");
    t->net = net;
    t->opt = opt;
    t->accumulate = 1;
    t->comm = comm;
    MPI_Comm_rank(comm, &t->rank);
    MPI_Comm_size(comm, &t->size);

    // Each rank draws its own dropout masks (its samples differ from the other ranks').
    net->dropout_seed = dt_mix64(net->dropout_seed ^ dt_mix64((uint64_t)t->rank + 1));

    // Broadcast rank 0's parameters (and running statistics): identical replicas.
    dt_device *d = net->dev;
    if (!d->device_memory) {
        bcast_floats(net->params, net->n_total, 0, comm);
    } else {
        float *host = mallocCheck(net->n_total * sizeof(float));
        d->to_host(d, host, net->params, net->n_total * sizeof(float));
        bcast_floats(host, net->n_total, 0, comm);
        d->from_host(d, net->params, host, net->n_total * sizeof(float));
        free(host);
    }
    // Until told otherwise: the MPI library's allreduce over one bucket, after backward.
    dt_coll_opts co = dt_coll_opts_default();
    co.algo = DT_ALGO_MPI;
    return dt_trainer_set_comm(t, &co, NULL, 0, err);
}

void dt_trainer_free(dt_trainer *t) {
    if (!t) return;
    free(t->events);
    free(t->buckets);
    free(t->bucket_start);
    free(t->bucket_end);
    dt_zero_free(t);
    dt_norm_plan_free(t->norms);
    if (t->coll) dt_coll_free(t->coll);
    memset(t, 0, sizeof *t);
}

// g = (1/P) * sum over ranks of g_r, in place on every rank (Goyal et al. 2017, §2.1).
// buf (n floats of device memory) = its mean over the ranks, in place.
static void average_floats(dt_trainer *t, float *buf, size_t n) {
    dt_device *d = t->net->dev;
    dt_allreduce(t->coll, buf, n, DT_F32, NULL);
    d->scale(d, buf, 1.0f / (float)t->size, n);
}

// Between "gradients reduced and averaged" and "optimizer step": with loss scaling on, agree
// whether any rank's gradient overflowed (after the allreduce all hold the same sum, but an
// fp16 wire or a NaN can differ in where it shows first: one MAX settles it), then skip
// (halve the scale) or unscale. Returns whether to apply the update.
// This rank's part of the reduced gradient: all of it (plain), its shard of net->grads
// (ZeRO stage 1), its pieces (stages 2, 3: train_zero.c).
static float *reduced_grad(const dt_trainer *t, size_t *n) {
    const dt_net *net = t->net;
    if (t->zero) return *n = t->zero->shard, t->zero->gshard;
    if (!t->opt->sharded) return *n = net->n_trainable, net->grads;
    *n = t->opt->shard_hi - t->opt->shard_lo;
    return net->grads + t->opt->shard_lo;
}

// ---- the norms from the pieces (optim.h dt_norm_plan) ----

// The units the pieces are cut from: ZeRO's (stages 2, 3), the whole buffer (stage 1: one
// shard per rank), the plain run's fusion buckets (those a sharded run matches bit for bit).
dt_norm_plan *dt_trainer_norm_plan(dt_trainer *t) {
    if (t->norms) return t->norms;
    const dt_net *net = t->net;
    size_t *lo = mallocCheck(((size_t)t->n_buckets + 2) * sizeof(size_t));
    int n = 0;
    if (t->zero) {
        t->norms = dt_norm_plan_create(net, t->zero->n, t->zero->lo, t->size);
        free(lo);
        return t->norms;
    }
    lo[n++] = 0;
    if (!t->opt->sharded)  // the buckets, listed top down: ascending from the last
        for (int b = t->n_buckets - 1; b >= 0; b--)
            if (t->buckets[b].lo > lo[n - 1] && t->buckets[b].lo < net->n_trainable)
                lo[n++] = t->buckets[b].lo;
    lo[n] = net->n_trainable;
    t->norms = dt_norm_plan_create(net, n, lo, t->size);
    free(lo);
    return t->norms;
}

// dt_sum_fn: v summed over the ranks (the zero-padded vectors of optim_norms.c: exact)
void dt_trainer_sum_ranks(void *ctx, double *v, size_t n) {
    dt_trainer *t = ctx;
    dt_error err;
    if (n && dt_allreduce(t->coll, v, n, DT_F64, &err)) {  // options checked at set_comm
        fprintf(stderr, "dtlab: internal error: %s\n", err.msg);
        abort();
    }
}

// Clipping by global norm (optim.h dt_clip_grad_norm's rule) of this rank's part of the
// averaged gradient: the whole when plain, the norm summed from the pieces when sharded or
// piece_norms.
static void clip_gradient(dt_trainer *t) {
    dt_net *net = t->net;
    int sharded = t->opt->sharded;
    if (!sharded && !t->piece_norms) {
        t->last_grad_norm = dt_clip_grad_norm(net, t->clip_norm);
        return;
    }
    dt_norm_plan *pl = dt_trainer_norm_plan(t);
    size_t gn;
    float *g = reduced_grad(t, &gn);
    double *sq = mallocCheck(((size_t)pl->n + 1) * sizeof(double));
    dt_norm_plan_sumsq(pl, net->dev, sharded ? t->rank : -1, g, sharded, sq);
    if (sharded) dt_trainer_sum_ranks(t, sq, (size_t)pl->n);
    double norm = sqrt(dt_norm_plan_total(pl, sq));
    free(sq);
    double coef = t->clip_norm / (norm + 1e-6);  // torch.nn.utils.clip_grad_norm_
    if (coef < 1.0 && gn) net->dev->scale(net->dev, g, (float)coef, gn);
    t->last_grad_norm = norm;
}

static int loss_scaling_allows_update(dt_trainer *t) {
    t->last_skipped = 0;
    dt_net *net = t->net;
    dt_device *d = net->dev;
    size_t n;
    float *g = reduced_grad(t, &n);
    if (t->fault_inf_grad && n) d->fill(d, g, INFINITY, 1);
    t->fault_inf_grad = 0;
    if (!t->loss_scaling) return 1;
    int overflow = d->nonfinite(d, g, n) > 0;
    MPI_Allreduce(MPI_IN_PLACE, &overflow, 1, MPI_INT, MPI_MAX, t->comm);
    float s = t->scaler.scale;  // the scale backward ran with
    if (!dt_loss_scaler_update(&t->scaler, overflow)) {
        t->last_skipped = 1;
        return 0;
    }
    d->scale(d, g, 1.0f / s, n);
    return 1;
}

// The step of dt_train_step (images: x_local_host) and dt_train_step_tokens (gpt models:
// tokens_host, y_local_host their targets).
static float train_step(dt_trainer *t, const float *x_local_host, const int32_t *tokens_host,
                        const int32_t *y_local_host, float lr) {
    DT_ASSERT(t && t->net && (x_local_host || tokens_host) && y_local_host);
    dt_net *net = t->net;
    int K = t->accumulate > 0 ? t->accumulate : 1;
    size_t image = (size_t)net->in_c * net->in_h * net->in_w, B = (size_t)net->B;
    size_t T = net->seq > 0 ? (size_t)net->seq : 1;  // loss rows per sample
    float loss = 0.0f;
    if (t->zero) dt_trainer_zero_begin(t);  // ZeRO 2, 3: the gather and bucket hooks on
    for (int k = 0; k < K; k++) {  // micro-batches: gradients summed in net->grads
        if (tokens_host)
            dt_net_set_tokens(net, tokens_host + k * B * T, y_local_host + k * B * T);
        else
            dt_net_set_batch(net, x_local_host + k * B * image, y_local_host + k * B);
        dt_net_forward(net, 1);
        loss += dt_net_loss(net) / (float)K;  // mean over this rank's K*B samples
        net->keep_grads = k > 0;
        if (t->zero) {  // each unit reduce-scattered as it completes, every micro-batch
            t->zero->accum = k > 0;
            dt_trainer_backward_zero(t);
        } else if (k < K - 1)
            dt_net_backward(net, t->loss_scaling ? t->scaler.scale : 1.0f, NULL, NULL);
        else if (t->opt->sharded)
            dt_trainer_backward_reduce_scatter(t);  // this rank's shard of the sum
        else
            dt_trainer_backward_allreduce(t);  // grads = sum over the ranks (overlapping)
    }
    net->keep_grads = 0;
    size_t gn;
    float *g = reduced_grad(t, &gn);
    net->dev->scale(net->dev, g, 1.0f / ((float)t->size * (float)K), gn);
    // Batch-norm running statistics were updated from this rank's slice only; average them
    // so the replicas stay identical (PyTorch DDP instead broadcasts rank 0's buffers). The
    // running mean becomes exactly the global batch's; the running variance the mean of the
    // ranks' unbiased variances.
    if (net->n_total > net->n_trainable)
        average_floats(t, dt_net_p(net, (ssize_t)net->n_trainable),
                       net->n_total - net->n_trainable);

    // Every rank has B samples, so the global mean is the mean of the ranks' means.
    MPI_Allreduce(MPI_IN_PLACE, &loss, 1, MPI_FLOAT, MPI_SUM, t->comm);
    loss /= (float)t->size;
    if (t->zero) dt_trainer_zero_end(t);  // (the step below runs no layer)
    if (!isfinite(loss)) return NAN;  // the same on every rank: all stop together

    if (!loss_scaling_allows_update(t)) return loss;  // every rank skips together
    // clipping by global norm, of the averaged gradient: the same on every replica
    if (t->clip_norm > 0) clip_gradient(t);
    if (t->zero) dt_trainer_zero_step(t, lr);  // the pieces (stage 2: then allgather)
    else if (t->opt->sharded) dt_trainer_shard_step(t, lr);  // the shard, then allgather
    else if (t->opt->cfg.kind == DT_OPT_LAMB && t->piece_norms)  // a sharded run's sums
        dt_optim_step_plan(t->opt, net, dt_trainer_norm_plan(t), -1, net->params, 0,
                           net->grads, 0, lr, NULL, NULL);
    else dt_optim_step(t->opt, net, lr);
    t->step++;
    return loss;
}

float dt_train_step(dt_trainer *t, const float *x_local_host, const int32_t *y_local_host,
                    float lr) {
    return train_step(t, x_local_host, NULL, y_local_host, lr);
}

float dt_train_step_tokens(dt_trainer *t, const int32_t *tokens_host,
                           const int32_t *targets_host, float lr) {
    DT_ASSERT(t && t->net && t->net->seq > 0);
    return train_step(t, NULL, tokens_host, targets_host, lr);
}

int dt_trainer_set_accumulate(dt_trainer *t, int K, dt_error *err) {
    DT_ASSERT(t);
    if (K < 1)
        return dt_fail(err, DT_EXIT_USAGE, "trainer: accumulate %d micro-batches per step: "
                       "expected 1 or more", K);
    t->accumulate = K;
    return 0;
}

void dt_trainer_set_loss_scaling(dt_trainer *t, const dt_loss_scaler *ls) {
    DT_ASSERT(t);
    t->loss_scaling = ls != NULL;
    if (ls) t->scaler = *ls;
    t->last_skipped = 0;
}
