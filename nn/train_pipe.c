// train_pipe.c — see train_pipe.h: a gpt model's stages, the step of one stage run in its
// schedule's order with the activations sent point to point, and what the stages agree on
// after the data-parallel sum (the loss, the tied weight's gradient, the norm).
#include "train_pipe.h"

#include <stdio.h>
#include <string.h>

#include "models.h"
#include "net_part.h"
#include "train_strategy.h"
#include "train_tp.h"

// Tags: micro-batch j's activations 2j, their gradient 2j + 1; the tied weight's halves
// after them. MPI promises tags up to 32767.
enum { TAG_TIED_HEAD = 32000, TAG_TIED_SUM = 32001, MAX_MICRO = 15999 };

void dt_pipeline_blocks(int layers, int stage, int stages, int *lo, int *n) {
    int q = layers / stages, r = layers % stages;
    *n = q + (stage < r);
    *lo = stage * q + (stage < r ? stage : r);
}

dt_net *dt_pipeline_stage_net(const char *name, dt_device *dev, const dt_model_config *cfg,
                              int stage, int stages, int tp_rank, const dt_net *whole,
                              dt_error *err) {
    const dt_gpt_shape *g = dt_gpt_find(name);
    if (!g) {
        dt_fail(err, DT_EXIT_USAGE, "pipeline: model %s is not a gpt model (pipeline "
                "parallelism cuts a transformer's blocks into stages)", name ? name : "?");
        return NULL;
    }
    dt_gpt_shape s = dt_gpt_shape_of(g, cfg);
    if (stages < 1 || stages > s.layers || stage < 0 || stage >= stages) {
        dt_fail(err, DT_EXIT_USAGE, "pipeline: %d stages for %s's %d blocks (1 to %d stages, "
                "each with a block at least)", stages, name, s.layers, s.layers);
        return NULL;
    }
    dt_model_config c = *cfg;
    dt_pipeline_blocks(s.layers, stage, stages, &c.block0, &c.blocks);
    c.ends = (stage > 0 ? DT_GPT_NO_EMBED : 0) | (stage < stages - 1 ? DT_GPT_NO_HEAD : 0);
    dt_net *net = dt_model_create(name, dev, &c, err);
    if (net && whole && dt_net_part_copy(net, whole, tp_rank, c.tp, err)) {
        dt_net_free(net);  // (the plain run's weights, by name)
        return NULL;
    }
    return net;
}

// The tied weight's elements in this stage's net: the embedding's wte on the first stage,
// its copy lm_head.weight on the last (none with one stage: the head reads wte).
static void find_tied(dt_pipeline *p, const dt_net *net) {
    for (int i = 0; i < net->n_params && p->stages > 1; i++) {
        const dt_param *q = &net->params_table[i];
        if (!strcmp(q->name, "lm_head.weight") || !strcmp(q->name, "transformer.wte.weight"))
            p->tied_lo = q->offset, p->tied_n = q->count;
    }
}

// The messages' buffers: the device's memory where MPI reads it (host memory: the cpu
// device, the simulator's model device, whose copies are then charged as the device's own),
// else host memory that the device's copies go through (a GPU's).
static float *buffer(dt_device *d, int direct, size_t n) {
    return direct ? d->alloc(d, n * sizeof(float)) : mallocCheck(n * sizeof(float));
}

// dst (device) <- src (a message buffer), and a message buffer <- device memory
static void take_in(dt_device *d, int direct, float *dst, const float *src, size_t n) {
    if (direct) d->copy(d, dst, src, n * sizeof(float));
    else d->from_host(d, dst, src, n * sizeof(float));
}
static void put_out(dt_device *d, int direct, float *dst, const float *src, size_t n) {
    if (direct) d->copy(d, dst, src, n * sizeof(float));
    else d->to_host(d, dst, src, n * sizeof(float));
}

// A message of n activations or gradients (device memory x) and back: fp32, or under mixed
// precision their half bits in p->msg_n words, rounded as the whole net stores the tensor
// between those two layers (nn/net_half.c: every layer's output and output gradient but the
// logits'), so that the stages compute what the whole net does, bit for bit, and a message
// is 2 bytes an element, as Megatron-LM's bf16 sends.
static void pack(dt_pipeline *p, dt_net *net, float *msg, const float *x, size_t n) {
    dt_device *d = net->dev;
    if (!p->half) {
        put_out(d, p->direct, msg, x, n);
        return;
    }
    uint16_t *h = (uint16_t *)(p->direct ? msg : p->bits);
    dt_net_half_bits(net, x, h, n);
    if (!p->direct) d->to_host(d, msg, h, p->msg_n * sizeof(float));
}

static void unpack(dt_pipeline *p, dt_net *net, float *x, const float *msg, size_t n) {
    dt_device *d = net->dev;
    if (!p->half) {
        take_in(d, p->direct, x, msg, n);
        return;
    }
    const uint16_t *h = (const uint16_t *)msg;
    if (!p->direct) {
        d->from_host(d, p->bits, msg, p->msg_n * sizeof(float));
        h = (const uint16_t *)p->bits;
    }
    dt_net_half_widen(net, h, x, n);
}

// The micro-batches this stage holds at once under its schedule (dt_pipe_run's peak: 1F1B
// min(p - s, m), GPipe m): the slots of its buffers. Refused (-1) where the stages run the
// backwards in different orders: a slot's gradient send then might wait for a stage that
// waits for this one (every schedule of pipe_sched.c runs them in one order).
static int stage_slots(const dt_pipe_sched *s, int stage, dt_error *err) {
    int m = s->m;
    const dt_pipe_op *o0 = s->ops + s->start[0];
    for (int st = 1; st < s->p; st++) {
        const dt_pipe_op *o = s->ops + s->start[st];
        for (int i = 0, k = 0, k0 = 0; i < 2 * m; i++) {
            if (!o[i].bwd) continue;
            while (!o0[k0].bwd) k0++;
            if (o[i].micro != o0[k0].micro)
                return dt_fail(err, DT_EXIT_USAGE, "pipeline: stage %d runs its backward %d on "
                               "micro-batch %d, stage 0 on %d: the stages must run the "
                               "backwards in one order", st, k, o[i].micro, o0[k0].micro);
            k++, k0++;
        }
    }
    dt_pipe_cost c = {1, 2, 0, 0};
    dt_pipe_price pr;
    int *held = callocCheck((size_t)s->p, sizeof(int));
    char why[200];
    int rc = dt_pipe_run(s, &c, 1, &pr, held, why, sizeof why);
    int n = held[stage];
    free(held);
    if (rc) return dt_fail(err, DT_EXIT_USAGE, "pipeline: its schedule does not run: %s", why);
    return n > 0 ? n : 1;
}

static void pipe_reduced(dt_trainer *t, float *loss);
static void pipe_updated(dt_trainer *t);

int dt_pipeline_init(dt_pipeline *p, dt_trainer *t, MPI_Comm pipe_comm, int stages,
                     dt_pipe_kind kind, dt_recompute recompute, dt_error *err) {
    DT_ASSERT(p && t && t->net);
    memset(p, 0, sizeof *p);
    dt_net *net = t->net;
    p->comm = pipe_comm;
    MPI_Comm_rank(pipe_comm, &p->stage);
    int size;
    MPI_Comm_size(pipe_comm, &size);
    p->stages = stages;
    int m = t->accumulate, bad = 0;
    p->blocks_lo = net->cfg.block0;
    p->blocks_n = net->cfg.blocks;
    if (size != stages || net->seq <= 0)
        bad = dt_fail(err, DT_EXIT_USAGE, "pipeline: %d ranks in the pipeline's communicator "
                      "for %d stages of a gpt model", size, stages);
    else if (t->shard != DT_SHARD_NONE && t->shard != DT_SHARD_OPTIMIZER &&
             t->shard != DT_SHARD_GRADIENTS)
        bad = dt_fail(err, DT_EXIT_USAGE, "pipeline: ZeRO's %s stage (--shard %s): a pipeline "
                      "runs with the replicated strategy or ZeRO stages 1 and 2, so far",
                      dt_shard_name(t->shard), dt_shard_name(t->shard));
    else if (m > MAX_MICRO)
        bad = dt_fail(err, DT_EXIT_USAGE, "pipeline: %d micro-batches, at most %d", m,
                      MAX_MICRO);
    else if (dt_pipe_build(&p->sched, kind, stages, m, 1, err) ||
             (p->slots = stage_slots(&p->sched, p->stage, err)) < 0)
        bad = 1;
    else if (find_tied(p, net), dt_net_keep_tied_apart(net) && stages > 1)
        bad = dt_fail(err, DT_EXIT_USAGE, "pipeline: stage %d holds no tied weight",
                      p->stage);
    int any = bad;  // every rank of the pipeline and of the data-parallel group alike
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, pipe_comm);
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, t->comm);
    if (any) {
        if (!bad) dt_fail(err, DT_EXIT_USAGE, "pipeline: another rank refused (see its "
                          "message)");
        dt_pipeline_free(p, t);
        return -1;
    }
    dt_device *d = net->dev;
    p->act_n = (size_t)net->B * (size_t)net->seq * (size_t)dt_gpt_shape_of(
                   dt_gpt_find(net->model), &net->cfg).width;
    p->direct = !d->device_memory;
    p->wire_half = p->direct && t->act_wire_half;
    p->half = net->amp != DT_AMP_FP32 && !p->wire_half;
    p->msg_n = p->half ? (p->act_n + 1) / 2 : p->act_n;
    size_t host_n = p->act_n > p->tied_n ? p->act_n : p->tied_n;
    size_t slots_n = (size_t)p->slots * p->msg_n;
    if (t->tp && t->tp->coll && dt_coll_size(t->tp->coll) > 1 && p->direct) {
        p->sg = t->tp->coll;
        p->sg_rank = dt_coll_rank(p->sg), p->sg_size = dt_coll_size(p->sg);
    }
    // (Narayanan et al. 2021 §2.2.1: with full recomputation a stage keeps the input of each
    // micro-batch in flight, sb h, not its activations)
    if (p->stage > 0) p->stash = buffer(d, p->direct, slots_n);
    if (p->stage > 0) p->bsend = buffer(d, p->direct, slots_n);
    if (p->stage < stages - 1) p->fsend = buffer(d, p->direct, slots_n);
    p->buffer_bytes = (p->stage > 0 ? 2 : 0) + (p->stage < stages - 1);
    p->buffer_bytes *= slots_n * sizeof(float);
    p->tied_send = buffer(d, p->direct, p->tied_n + 1);
    p->host = p->direct ? NULL : mallocCheck(host_n * sizeof(float));
    p->seed = d->alloc(d, p->act_n * sizeof(float));
    if (p->half && p->stage < stages - 1) p->grecv = buffer(d, p->direct, p->msg_n);
    if (p->half && !p->direct) p->bits = d->alloc(d, p->msg_n * sizeof(float));
    p->n_req = 2 * p->slots;
    p->req = mallocCheck((size_t)p->n_req * sizeof(MPI_Request));
    for (int i = 0; i < p->n_req; i++) p->req[i] = MPI_REQUEST_NULL;
    p->msg_max = DT_PIPE_MSG_MAX;
    p->holder = mallocCheck((size_t)p->slots * sizeof(int));
    p->slot_of = mallocCheck((size_t)m * sizeof(int));
    p->cur = -1;
    p->recompute = recompute;
    if (recompute != DT_RECOMPUTE_FULL) {  // a set per slot, no forward again (net_acts.h)
        p->acts = dt_net_acts_create(net, p->slots, recompute == DT_RECOMPUTE_NONE);
        p->acts_bytes = dt_net_acts_bytes(p->acts);
    }
    t->pipe = p;
    t->hooks.reduced = pipe_reduced;
    t->hooks.updated = pipe_updated;
    return 0;
}

void dt_pipeline_free(dt_pipeline *p, dt_trainer *t) {
    if (!p) return;
    dt_pipe_free(&p->sched);
    dt_device *d = t && t->net ? t->net->dev : NULL;
    float *bufs[] = {p->stash, p->fsend, p->bsend, p->tied_send, p->grecv};
    for (int i = 0; i < 5; i++) {
        if (!bufs[i]) continue;
        if (p->direct && d) d->free(d, bufs[i]);
        else if (!p->direct) free(bufs[i]);
    }
    free(p->host), free(p->req), free(p->tied_req), free(p->holder), free(p->slot_of);
    if (p->seed && d) d->free(d, p->seed);
    if (p->bits && d) d->free(d, p->bits);
    if (p->acts && t && t->net) dt_net_acts_free(p->acts, t->net);
    if (t && t->pipe == p) t->pipe = NULL, t->hooks.reduced = NULL, t->hooks.updated = NULL;
    memset(p, 0, sizeof *p);
}

// ---- one step ----

// A send from buf, whose request is req (the one before it on that buffer completed)
static void post(dt_pipeline *p, void *buf, size_t n, int to, int tag, MPI_Request *req) {
    MPI_Isend(buf, (int)n, MPI_FLOAT, to, tag, p->comm, req);
}

// Micro-batch j's first forward takes a free slot: its input (received), its output (sent
// on), the gradient this stage sends back. The slot's last output has been received (its
// micro-batch's backward ran, after the next stage's), so the wait here is no wait; its
// last gradient is waited for before the slot's next one is written (backward).
static int take_slot(dt_pipeline *p, int j) {
    for (int k = 0; k < p->slots; k++)
        if (p->holder[k] < 0) {
            MPI_Wait(&p->req[2 * k], MPI_STATUS_IGNORE);
            p->holder[k] = j, p->slot_of[j] = k;
            return k;
        }
    DT_ASSERT(!"a pipeline stage ran more micro-batches at once than its schedule holds");
    return -1;
}

// An activation message's count: n floats, or under the simulator's act_wire_half (train.h)
// their bytes at 2 an element (the model device's buffers hold no numbers)
static size_t act_count(const dt_pipeline *p, size_t n) {
    return p->wire_half ? (n + 1) / 2 : n;
}

static void recv(dt_pipeline *p, float *buf, size_t n, int from, int tag) {
    MPI_Recv(buf, (int)n, MPI_FLOAT, from, tag, p->comm, MPI_STATUS_IGNORE);
}

// Megatron-LM's scatter/gather between stages (Narayanan et al. 2021, §4.1): a stage's
// output and its input's gradient are the same on every rank of a tensor-parallel group (after
// the group's sums), so each rank sends its shard of n (dt_shard_lo's even split) to its peer
// of the next stage, and the receivers allgather them over the group, inside a node, instead
// of t whole copies crossing the fabric. The same bits: the numbers are only moved.
static void act_shard(const dt_pipeline *p, size_t n, size_t *lo, size_t *c) {
    *lo = p->sg ? dt_shard_lo(n, p->sg_size, p->sg_rank) : 0;
    *c = (p->sg ? dt_shard_lo(n, p->sg_size, p->sg_rank + 1) : n) - *lo;
}

static void send_act(dt_pipeline *p, float *buf, size_t n, int to, int tag, MPI_Request *req) {
    size_t lo, c;
    act_shard(p, n, &lo, &c);
    post(p, buf + lo, act_count(p, c), to, tag, req);
}

static void recv_act(dt_pipeline *p, float *buf, size_t n, int from, int tag) {
    size_t lo, c;
    act_shard(p, n, &lo, &c);
    recv(p, buf + lo, act_count(p, c), from, tag);
    dt_error err = {0};
    // (under act_wire_half the group's ring carries 2 bytes an element itself: train_tp.c)
    if (p->sg && dt_allgather(p->sg, buf, n, NULL, DT_F32, &err)) {
        fprintf(stderr, "dtlab: pipeline: the tensor-parallel allgather: %s\n", err.msg);
        DT_ASSERT(!"the group's allgather of a message between stages failed");
    }
}

// The tied weight and its gradient (a vocabulary's embedding: 2.5 GB for GPT-3) go in
// messages of at most p->msg_max floats, in order (MPI's non-overtaking rule): an MPI count
// is an int, and SimGrid 3.32 copies a message of 2 GiB or more whole (its size cast to int
// makes it "small", so detached: 20 GB of copies at 128 GPUs of gpt3-175b; train.h)
static int pieces(const dt_pipeline *p, size_t n) {
    return n ? (int)((n + p->msg_max - 1) / p->msg_max) : 0;
}

static size_t piece(const dt_pipeline *p, size_t n, int i, size_t *lo) {
    *lo = (size_t)i * p->msg_max;
    return n - *lo < p->msg_max ? n - *lo : p->msg_max;
}

// non-blocking, the requests in p->tied_req (their last ones completed at the step's end)
static void post_pieces(dt_pipeline *p, float *buf, size_t n, int to, int tag) {
    int k = pieces(p, n);
    if (k > p->n_tied_req) {
        free(p->tied_req);
        p->tied_req = mallocCheck((size_t)k * sizeof(MPI_Request));
        p->n_tied_req = k;
    }
    for (int i = 0; i < p->n_tied_req; i++) {
        size_t lo, c = i < k ? piece(p, n, i, &lo) : 0;
        p->tied_req[i] = MPI_REQUEST_NULL;
        if (c) MPI_Isend(buf + lo, (int)c, MPI_FLOAT, to, tag, p->comm, &p->tied_req[i]);
    }
}

static void send_pieces(dt_pipeline *p, const float *buf, size_t n, int to, int tag) {
    for (int i = 0; i < pieces(p, n); i++) {
        size_t lo, c = piece(p, n, i, &lo);
        MPI_Send(buf + lo, (int)c, MPI_FLOAT, to, tag, p->comm);
    }
}

static void recv_pieces(dt_pipeline *p, float *buf, size_t n, int from, int tag) {
    for (int i = 0; i < pieces(p, n); i++) {
        size_t lo, c = piece(p, n, i, &lo);
        recv(p, buf + lo, c, from, tag);
    }
}

// Micro-batch j's forward on this stage: its input (the tokens, or the activations the
// previous stage sent, kept for a later recomputation), the targets on the last stage, and
// there its loss. Returns the loss (0 elsewhere).
static float forward(dt_pipeline *p, dt_trainer *t, const int32_t *tokens,
                     const int32_t *targets, int j, int again) {
    dt_net *net = t->net;
    size_t bt = (size_t)net->B * (size_t)net->seq, n = p->act_n, w = p->msg_n;
    int k = again ? p->slot_of[j] : take_slot(p, j);
    float *in = p->stash ? p->stash + (size_t)k * w : NULL;
    int last = p->stage == p->stages - 1;
    if (p->stage == 0) dt_net_set_tokens(net, tokens + j * bt, NULL);
    else if (!again) recv_act(p, in, w, p->stage - 1, 2 * j);
    if (p->stage > 0) unpack(p, net, net->input, in, n);
    if (last) dt_net_set_tokens(net, NULL, targets + j * bt);
    if (p->acts) dt_net_acts_use(p->acts, net, k);
    uint64_t seed = net->dropout_seed;
    dt_net_forward(net, 1);
    if (again) net->dropout_seed = seed, p->recomputed++;  // the same masks again
    p->cur = j;
    if (last) return dt_net_loss(net);
    if (!again) {
        float *out = p->fsend + (size_t)k * w;
        pack(p, net, out, net->layers[net->n_layers - 1]->out, n);
        send_act(p, out, w, p->stage + 1, 2 * j, &p->req[2 * k]);
    }
    return 0.0f;
}

// Without full recomputation, micro-batch j's activations back in the net: its slot's set,
// its input (the tokens, the received activations) and targets, and under selective
// recomputation the attention layers run again.
static void restore(dt_pipeline *p, dt_net *net, const int32_t *tokens,
                    const int32_t *targets, int j) {
    size_t bt = (size_t)net->B * net->seq;
    int k = p->slot_of[j];
    dt_net_acts_use(p->acts, net, k);
    if (p->stage == 0) dt_net_set_tokens(net, tokens + j * bt, NULL);
    else unpack(p, net, net->input, p->stash + (size_t)k * p->msg_n, p->act_n);
    if (p->stage == p->stages - 1) dt_net_set_tokens(net, NULL, targets + j * bt);
    if (p->recompute == DT_RECOMPUTE_SELECTIVE)
        dt_net_acts_rerun_attention(net), p->recomputed++;
    p->cur = j;
}

// Micro-batch j's backward, the k-th of the step: its activations (recomputed or restored
// unless it was the last forward), the gradient the next stage sent, and the strategy's
// hooks on the last (k = m - 1; on every one for a strategy that communicates after each,
// ZeRO 2), where the first stage also adds the head's half of the tied gradient.
static void backward(dt_pipeline *p, dt_trainer *t, const dt_strategy *s,
                     const int32_t *tokens, const int32_t *targets, int j, int k) {
    dt_net *net = t->net;
    dt_device *d = net->dev;
    size_t n = p->act_n;
    int last = p->stage == p->stages - 1, m = p->sched.m, final = k == m - 1;
    int communicate = final || (s->flags & DT_STRATEGY_EACH_MICRO);
    if (p->cur != j && p->acts) restore(p, net, tokens, targets, j);
    else if (p->cur != j) forward(p, t, tokens, targets, j, 1);
    if (!last && p->half) {  // (the half bits, widened)
        recv_act(p, p->grecv, p->msg_n, p->stage + 1, 2 * j + 1);
        unpack(p, net, p->seed, p->grecv, n);
    } else if (!last) {  // straight into the device's memory where MPI reads it
        recv_act(p, p->direct ? p->seed : p->host, n, p->stage + 1, 2 * j + 1);
        if (!p->direct) d->from_host(d, p->seed, p->host, n * sizeof(float));
    }
    if (p->stage == 0 && p->stages > 1 && final) {
        recv_pieces(p, p->direct ? net->tied_grad : p->host, p->tied_n, p->stages - 1,
                    TAG_TIED_HEAD);
        if (!p->direct) d->from_host(d, net->tied_grad, p->host, p->tied_n * sizeof(float));
    }
    if (s->begin) s->begin(t, k);
    net->keep_grads = k > 0;
    dt_trainer_backward_begin(t, s, communicate, final, last ? NULL : p->seed);
    int slot = p->slot_of[j];
    if (p->stage > 0) {  // (the previous stage receives the slot's last gradient before it
                         // needs anything more of this one: one order of backwards)
        MPI_Wait(&p->req[2 * slot + 1], MPI_STATUS_IGNORE);
        float *g = p->bsend + (size_t)slot * p->msg_n;
        pack(p, net, g, net->dinput, n);
        send_act(p, g, p->msg_n, p->stage - 1, 2 * j + 1, &p->req[2 * slot + 1]);
    }
    // the data-parallel sums end after the gradient went on (Megatron-LM sums after the
    // flush): waiting first held every stage's backward back by its allreduce, 16 of them in
    // a row for GPT-3's pipeline under SimGrid (docs/parallelism.md)
    dt_trainer_backward_end(t, s, communicate);
    if (last && p->stages > 1 && final) {  // the head's half, summed over the step
        put_out(d, p->direct, p->tied_send, net->tied_grad, p->tied_n);
        d->fill(d, net->tied_grad, 0.0f, p->tied_n);
        post_pieces(p, p->tied_send, p->tied_n, 0, TAG_TIED_HEAD);
    }
    p->holder[slot] = -1;
}

float dt_pipeline_step_tokens(dt_trainer *t, const int32_t *tokens, const int32_t *targets,
                              float lr) {
    DT_ASSERT(t && t->pipe && t->net && t->net->seq > 0);
    dt_pipeline *p = t->pipe;
    DT_ASSERT((p->stage > 0 || tokens) && (p->stage < p->stages - 1 || targets));
    dt_strategy s;
    DT_ASSERT(!dt_strategy_get(t->shard, &s));
    const dt_pipe_op *op = p->sched.ops + p->sched.start[p->stage];
    int n_ops = p->sched.start[p->stage + 1] - p->sched.start[p->stage], k = 0;
    float loss = 0.0f;
    p->cur = -1;
    for (int k = 0; k < p->slots; k++) p->holder[k] = -1;
    for (int i = 0; i < n_ops; i++) {
        if (op[i].bwd) backward(p, t, &s, tokens, targets, op[i].micro, k++);
        else loss += forward(p, t, tokens, targets, op[i].micro, 0) / (float)p->sched.m;
    }
    MPI_Waitall(p->n_req, p->req, MPI_STATUSES_IGNORE);
    if (p->n_tied_req) MPI_Waitall(p->n_tied_req, p->tied_req, MPI_STATUSES_IGNORE);
    return dt_trainer_step_end(t, &s, loss, lr);
}

// After the data-parallel sums (the step's hook): the last stage's loss to every stage.
static void pipe_reduced(dt_trainer *t, float *loss) {
    dt_pipeline *p = t->pipe;
    MPI_Bcast(loss, 1, MPI_FLOAT, p->stages - 1, p->comm);
}

// After the update: the first stage's tied weight, updated from the whole gradient (both
// halves, summed over the data-parallel ranks), replaces the last stage's copy, whose own
// gradient is zero (the head's half went to the first stage). One message of the weight a
// step, as Megatron-LM's allreduce of the two copies' gradients; any strategy's update.
static void pipe_updated(dt_trainer *t) {
    dt_pipeline *p = t->pipe;
    if (p->stages == 1 || !p->tied_n) return;
    dt_device *d = t->net->dev;
    float *w = t->net->params + p->tied_lo, *h = p->direct ? w : p->host;
    if (p->stage == 0) {
        if (!p->direct) d->to_host(d, h, w, p->tied_n * sizeof(float));
        send_pieces(p, h, p->tied_n, p->stages - 1, TAG_TIED_SUM);
    } else if (p->stage == p->stages - 1) {
        recv_pieces(p, h, p->tied_n, 0, TAG_TIED_SUM);
        if (!p->direct) d->from_host(d, w, h, p->tied_n * sizeof(float));
    }
}

void dt_model_parts_gather(const dt_net *part, dt_net *whole, int tp_rank, int tp,
                           MPI_Comm comm, int root) {
    int me;
    MPI_Comm_rank(comm, &me);
    size_t n = whole->n_trainable;
    float *mine = callocCheck(n + 1, sizeof(float)), *sum = NULL;
    dt_net_part_place(part, whole, tp_rank, tp, mine);
    if (me == root) sum = mallocCheck((n + 1) * sizeof(float));
    // every element is one part's and zero in the others: the sum is exact
    MPI_Reduce(mine, sum, (int)n, MPI_FLOAT, MPI_SUM, root, comm);
    if (me == root) whole->dev->from_host(whole->dev, whole->params, sum, n * sizeof(float));
    free(mine), free(sum);
}
