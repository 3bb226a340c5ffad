// train_zero.c — ZeRO stages 2 and 3 (Rajbhandari et al. 2020 §5.2 "P_os+g", §5.3
// "P_os+g+p"; PyTorch FSDP's flat parameters per unit): the trainer's state in units, each
// unit a range of the flat trainable parameters split over the ranks as the ring splits a
// buffer (coll.h dt_shard_lo), so rank r owns piece r of every unit.
//   stage 2: the units are the fusion buckets. Backward writes each bucket's gradient into
//            a buffer allocated when its first layer runs; as soon as the bucket is
//            complete it is reduce-scattered (one at a time, in backward order, as the
//            plain trainer's allreduces), this rank's piece is kept and the buffer freed.
//            The optimizer steps the pieces; each bucket's parameters are allgathered.
//   stage 3: the units are the layers' parameters, kept only as this rank's pieces. Before
//            a layer's forward (and again before its backward) its units are allgathered
//            into buffers, the next layer's gather started before this layer computes
//            (prefetch), and freed when neither this nor the next layer reads them.
//            Gradients as in stage 2, per layer.
// Each unit's reduce-scatter sums its elements in the order the allreduce of the same
// bucket does (coll.h, "the ring's two halves"), and the update is elementwise, so a step
// gives the plain step's bits when the plain trainer's buckets are these units (stage 2:
// the same --fusion; stage 3: a bucket per layer). The hooks run from dt_net_forward and
// dt_net_backward (net.h on_params, installed by dt_shard_units_begin and left on: a forward
// outside a step, on gathered parameters, finds nothing to do in them); the layers reach
// the unit buffers through dt_net_p / dt_net_g. Not here: stage 1 (train_shard.c), the
// set-up (train_zero_setup.c), the update (optim_shard.c), the step (train.c).
#include <string.h>

#include "train_strategy.h"
#include "train_zero.h"

static void fail_internal(const dt_error *err) {  // options were checked at set_shard
    fprintf(stderr, "dtlab: internal error: %s\n", err->msg);
    abort();
}

static size_t ulen(const dt_zero *z, int k) { return z->lo[k + 1] - z->lo[k]; }

// ---- accounting: transient buffers, as allocated ----

// n elements of `size` bytes (4: fp32, 2: a unit's half bits)
static void *zalloc_b(dt_zero *z, dt_device *d, size_t n, size_t size, int grad) {
    size_t *live = grad ? &z->g_live : &z->p_live, *peak = grad ? &z->g_peak : &z->p_peak;
    *live += n * size;
    z->g_resident += grad;
    if (*live > *peak) *peak = *live;
    return d->alloc(d, (n ? n : 1) * size);  // zero-filled
}
static float *zalloc(dt_zero *z, dt_device *d, size_t n, int grad) {
    return zalloc_b(z, d, n, sizeof(float), grad);
}

static void zfree_b(dt_zero *z, dt_device *d, void *p, size_t n, size_t size, int grad) {
    *(grad ? &z->g_live : &z->p_live) -= n * size;
    z->g_resident -= grad;
    d->free(d, p);
}
static void zfree(dt_zero *z, dt_device *d, float *p, size_t n, int grad) {
    zfree_b(z, d, p, n, sizeof(float), grad);
}

// This rank's piece of unit k from the master into dst (the unit's buffer, or the whole
// net->params at stage 2), at the piece's place: mixed precision rounds it to the half copy
// the unsharded forward reads (net_half.c), so the gather moves the half-rounded values.
static void put_piece(dt_trainer *t, int k, float *unit) {
    dt_zero *z = t->state;
    dt_device *d = t->net->dev;
    float *dst = unit + (z->plo[k] - z->lo[k]);
    size_t n = z->phi[k] - z->plo[k];
    d->copy(d, dst, z->pshard + z->at[k], n * sizeof(float));
    if (z->half) dt_net_half_round(t->net, dst, z->plo[k], n);
}

// ---- stage 3: the parameters of a unit, gathered ----

static void gather_start(dt_trainer *t, int k) {
    dt_zero *z = t->state;
    dt_device *d = t->net->dev;
    size_t n = ulen(z, k);
    z->params[k] = zalloc(z, d, n, 0);
    put_piece(t, k, z->params[k]);
    dt_error err;
    z->preq[k] = dt_allgather_start(z->pcoll, z->params[k], n, NULL, DT_F32, &err);
    if (!z->preq[k]) fail_internal(&err);
    z->resident[z->n_resident++] = k;
}

// Unit k's gather complete; with `use`, also its half bits made where the convolutions
// read them (nn/net.h dt_net_p_h).
static void gather_wait(dt_trainer *t, int k, int use) {
    dt_zero *z = t->state;
    if (!z->preq[k]) return;
    dt_allreduce_wait(z->preq[k]);
    z->preq[k] = NULL;
    if (use && z->params_h) {
        z->params_h[k] = zalloc_b(z, t->net->dev, ulen(z, k), sizeof(uint16_t), 0);
        dt_net_half_bits(t->net, z->params[k], z->params_h[k], ulen(z, k));
    }
}

static void release(dt_trainer *t, int slot) {
    dt_zero *z = t->state;
    int k = z->resident[slot];
    gather_wait(t, k, 0);
    zfree(z, t->net->dev, z->params[k], ulen(z, k), 0);
    z->params[k] = NULL;
    if (z->params_h && z->params_h[k])
        zfree_b(z, t->net->dev, z->params_h[k], ulen(z, k), sizeof(uint16_t), 0);
    if (z->params_h) z->params_h[k] = NULL;
    z->resident[slot] = z->resident[--z->n_resident];
}

static int layer_uses(const dt_zero *z, int layer, int k) {
    return layer >= 0 && (z->lu[2 * layer] == k || z->lu[2 * layer + 1] == k);
}

// Layer i runs now and layer j (-1: none) after it: free what neither reads, start the
// gathers of both (i's first), wait for i's.
static void params_for(dt_trainer *t, int i, int j) {
    dt_zero *z = t->state;
    for (int s = z->n_resident - 1; s >= 0; s--) {
        int k = z->resident[s];
        if (!layer_uses(z, i, k) && !layer_uses(z, j, k)) release(t, s);
    }
    int want[4] = {z->lu[2 * i], z->lu[2 * i + 1], j >= 0 ? z->lu[2 * j] : -1,
                   j >= 0 ? z->lu[2 * j + 1] : -1};
    for (int w = 0; w < 4; w++)
        if (want[w] >= 0 && !z->params[want[w]]) gather_start(t, want[w]);
    for (int w = 0; w < 2; w++)
        if (want[w] >= 0) gather_wait(t, want[w], 1);
}

static void release_all(dt_trainer *t) {
    dt_zero *z = t->state;
    while (z->n_resident) release(t, z->n_resident - 1);
}

// ---- stages 2 and 3: the gradient of a unit, reduce-scattered ----

static void rs_finish(dt_trainer *t, int k) {
    dt_zero *z = t->state;
    dt_device *d = t->net->dev;
    dt_allreduce_wait(z->greq[k]);
    z->greq[k] = NULL;
    float *piece = z->grads[k] + (z->plo[k] - z->lo[k]);
    if (z->accum)  // gradient accumulation: each micro-batch reduce-scattered, summed here
        d->add(d, z->gshard + z->at[k], piece, z->phi[k] - z->plo[k]);
    else
        d->copy(d, z->gshard + z->at[k], piece, (z->phi[k] - z->plo[k]) * sizeof(float));
    zfree(z, d, z->grads[k], ulen(z, k), 1);
    z->grads[k] = NULL;
    z->g_inflight = -1;
}

static void rs_start(dt_trainer *t, int k) {
    dt_zero *z = t->state;
    if (!z->grads[k]) z->grads[k] = zalloc(z, t->net->dev, ulen(z, k), 1);  // no writer
    dt_error err;
    z->greq[k] = dt_reduce_scatter_start(t->coll, z->grads[k], ulen(z, k), NULL, DT_F32, &err);
    if (!z->greq[k]) fail_internal(&err);
    z->g_inflight = k;
}

// One channel, as the plain trainer's buckets (train_comm.c start_next): the next unit
// (from the top) starts once it is complete and the one before it has finished.
static void rs_poll(dt_trainer *t) {
    dt_zero *z = t->state;
    if (z->g_inflight >= 0 && dt_allreduce_progress(z->greq[z->g_inflight]))
        rs_finish(t, z->g_inflight);
    if (z->g_inflight < 0 && z->g_next >= 0 && z->lo[z->g_next] >= z->final_lo)
        rs_start(t, z->g_next--);
}

// ---- the hooks ----

// After a layer, while the step communicates: a world that charges the layers' time only
// where it is waited for (the simulator's model device) lets it pass before the polls, as
// replicate does while an allreduce is in flight (train_replicate.c)
static void layer_wait(dt_trainer *t, dt_net *net) {
    if (t->layer_wait) t->layer_wait(t->layer_wait_ctx, net, 1);
}

static void on_params(void *ctx, dt_net *net, int layer, int phase) {
    dt_trainer *t = ctx;
    dt_zero *z = t->state;
    int sharded_params = z->stage == DT_SHARD_PARAMETERS && !net->params;
    if (phase == DT_PHASE_FORWARD && !sharded_params) return;  // (stage 2: nothing to do)
    layer_wait(t, net);
    if (z->pcoll) dt_coll_progress_all(z->pcoll);  // the prefetched gathers move on
    if (phase == DT_PHASE_FORWARD) {
        if (layer >= 0) {
            params_for(t, layer, z->nextp[layer]);
        } else {  // forward done: free everything, prefetch backward's first layer
            release_all(t);
            int top = z->prevp[net->n_layers];
            if (top >= 0) params_for(t, top, -1);
        }
        return;
    }
    if (layer < 0) {  // backward done
        if (sharded_params) release_all(t);
        return;
    }
    if (sharded_params) params_for(t, layer, z->prevp[layer]);
    for (int w = 0; w < 2; w++) {  // the buckets this layer's backward adds into
        int k = z->lu[2 * layer + w];
        if (k < 0 || z->grads[k] || z->lo[k] >= z->final_lo) continue;
        // two buckets at a time, one filling while the other is reduced (DeepSpeed's
        // double buffer): a third waits for the reduce-scatter in flight
        while (z->g_resident >= 2 && z->g_inflight >= 0) {
            rs_finish(t, z->g_inflight);
            rs_poll(t);
        }
        z->grads[k] = zalloc(z, net->dev, ulen(z, k), 1);
    }
    rs_poll(t);
}

void dt_shard_units_on_gradient_ready(void *ctx, dt_net *net, int layer, size_t lo, size_t hi) {
    (void)layer, (void)hi;
    dt_trainer *t = ctx;
    dt_zero *z = t->state;
    layer_wait(t, net);
    if (lo < z->final_lo) z->final_lo = lo;
    rs_poll(t);
}

// The whole rounded copies a forward made from a gathered master (net_half.c)
static void free_half_copies(dt_net *net) {
    dt_device *d = net->dev;
    if (net->params_lp) d->free(d, net->params_lp);
    net->params_lp = NULL;
    if (net->params_bf16 && net->units && net->units->params_h) {  // stage 3's whole bits
        d->free(d, net->params_bf16);
        net->params_bf16 = NULL;
    }
}

// Before micro-batch k: the hooks on (the first: a gather_params copy freed, nothing is
// resident between steps), no unit final yet. With accumulation every micro-batch's units
// are reduce-scattered and a later one's pieces add to gshard: the memory of the stage
// kept, at the price of K reduce-scatters a step (DeepSpeed's ZeRO-2 also reduces every
// micro-batch); the sum runs over ranks first, then micro-batches, so it rounds otherwise
// than the plain run's.
void dt_shard_units_begin(dt_trainer *t, int k) {
    dt_net *net = t->net;
    dt_zero *z = t->state;
    if (k == 0 && z->stage == DT_SHARD_PARAMETERS && net->params) {
        net->dev->free(net->dev, net->params);
        net->params = NULL;
        free_half_copies(net);
    }
    net->on_params = on_params;
    net->on_params_ctx = t;
    z->accum = k > 0;
    z->final_lo = net->n_trainable + 1;
    z->g_next = z->n - 1;
    z->g_inflight = -1;
}

// After backward: every unit's reduce-scatter complete, z->gshard holding this rank's pieces
// of the gradient summed over the ranks (not yet divided by P). Returns the seconds of the
// reduce-scatters left after backward.
double dt_shard_units_finish(dt_trainer *t) {
    dt_zero *z = t->state;
    double t0 = MPI_Wtime();
    z->final_lo = 0;
    while (z->g_inflight >= 0 || z->g_next >= 0) {
        if (z->g_inflight >= 0) rs_finish(t, z->g_inflight);
        rs_poll(t);
    }
    return MPI_Wtime() - t0;
}

// The update of this rank's pieces (LARS: |w| and |g| of each weight tensor summed over the
// ranks from the pieces' parts, in float64), then stage 2's allgather of each bucket.
void dt_shard_units_update(dt_trainer *t, float lr) {
    dt_net *net = t->net;
    dt_zero *z = t->state;
    dt_optim_pieces pc = {z->n, z->plo, z->phi, z->at};
    float *w = z->pshard;  // stage 3, mixed precision: the master pieces; else net->params
    double *sums = NULL;
    int k = dt_optim_lars_tensors(net);
    dt_error err;
    dt_opt_kind kind = t->opt->cfg.kind;
    if (kind == DT_OPT_ADAMW || kind == DT_OPT_LAMB) {  // the moments of the pieces alone
        dt_optim_step_plan(t->opt, net, dt_trainer_norm_plan(t), t->rank,
                           w ? w : net->params, w != NULL, z->gshard, 1, lr,
                           dt_trainer_sum_ranks, t);
    } else {
        if (kind == DT_OPT_LARS && k > 0) {
            sums = mallocCheck(2 * (size_t)k * sizeof(double));
            dt_optim_pieces_sumsq(t->opt, net, &pc, z->gshard, sums);
            dt_optim_pieces_sumsq(t->opt, net, &pc, w, sums + k);
            if (dt_allreduce(t->coll, sums, 2 * (size_t)k, DT_F64, &err)) fail_internal(&err);
        }
        dt_optim_step_pieces(t->opt, net, &pc, w, z->gshard, lr, sums, sums ? sums + k : NULL);
    }
    free(sums);
    if (z->stage != DT_SHARD_GRADIENTS) return;
    double t0 = MPI_Wtime();
    for (int u = z->n - 1; u >= 0; u--) {  // the buckets' order (backward's)
        if (w) put_piece(t, u, net->params + z->lo[u]);  // the half copy's piece
        if (dt_allgather(t->coll, net->params + z->lo[u], ulen(z, u), NULL, DT_F32, &err))
            fail_internal(&err);
    }
    double ag = MPI_Wtime() - t0;
    t->last_comm += ag, t->last_exposed += ag;
    if (w) {  // net->params is the half copy: forward reads it as it is
        net->params_half = 1;
        free_half_copies(net);
    }
}

void dt_trainer_gather_params(dt_trainer *t) {
    DT_ASSERT(t);
    dt_zero *z = dt_trainer_zero(t);
    dt_net *net = t->net;
    // stage 3, and stage 2 in mixed precision, hold the master in pieces only
    if (!z || !z->pshard || (net->params && !net->params_half)) return;
    dt_device *d = net->dev;
    int whole = net->params != NULL;  // stage 2: the half copy, overwritten
    if (!whole) net->params = d->alloc(d, net->n_total * sizeof(float));
    net->params_half = 0;
    dt_error err;
    dt_coll *c = z->pcoll ? z->pcoll : t->coll;
    for (int k = 0; k < z->n; k++) {
        d->copy(d, net->params + z->plo[k], z->pshard + z->at[k],
                (z->phi[k] - z->plo[k]) * sizeof(float));
        if (dt_allgather(c, net->params + z->lo[k], ulen(z, k), NULL, DT_F32, &err))
            fail_internal(&err);
    }
    if (!whole && net->n_total > net->n_trainable)
        d->copy(d, net->params + net->n_trainable, z->stats,
                (net->n_total - net->n_trainable) * sizeof(float));
}

// This rank's pieces, and (peak) the gathered units and gradient buckets resident at once
void dt_shard_units_memory(const dt_trainer *t, dt_trainer_memory *m) {
    const dt_net *net = t->net;
    const dt_zero *z = t->state;
    size_t f = sizeof(float);
    m->params = net->n_total * f;
    m->units = z->n;
    for (int k = 0; k < z->n; k++)
        if (ulen(z, k) * f > m->unit_max) m->unit_max = ulen(z, k) * f;
    m->grads = z->shard * f;
    if (z->stage == DT_SHARD_PARAMETERS)
        m->params = (z->shard + net->n_total - net->n_trainable) * f;
    if (net->amp != DT_AMP_FP32) {  // the half copy (net_half.c), counted in the parameters
        size_t bits = dt_net_half_conv_bits(net) ? net->n_total * sizeof(uint16_t) : 0;
        if (z->stage == DT_SHARD_GRADIENTS) {  // the master's pieces; net->params is
            m->half = net->n_total * f + bits;  // the half copy (+ its half bits)
            m->params = z->shard * f;
        }  // (stage 3: the master's pieces; the copies are the gathered units, at the peak)
        m->params += m->half;
    }
    m->params_peak = m->params + z->p_peak;
    m->grads_peak = m->grads + z->g_peak;
}
