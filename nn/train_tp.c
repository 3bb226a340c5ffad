// train_tp.c — see train_tp.h: the tensor-parallel group's sums, hooked into the net's
// forward and backward (net.h on_tensor), and the norm over the group's slices.
#include "train_tp.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels.h"
#include "layers.h"
#include "net_part.h"


// x (n floats of device memory) summed over the group, in place, the same bits on every rank:
// the library's ring (coll/coll_ring.c: each element summed in one place, then copied; NCCL's
// ring inside a node, as Megatron-LM's allreduces run), which stages a GPU's memory itself and
// on the simulator's model device keeps its buffers in the device's arena and charges its
// additions as kernels (MPI's own allreduce there reduced real temporary copies of every
// activation: 20 GiB of SimGrid at 128 GPUs of gpt3-175b)
static void sum(dt_tensor_par *tp, float *x, size_t n) {
    tp->sums++;
    dt_error err = {0};
    if (dt_allreduce(tp->coll, x, n, DT_F32, &err)) {  // (options checked at dt_tp_init)
        fprintf(stderr, "dtlab: internal error: tensor parallelism: %s\n", err.msg);
        abort();
    }
}

// Under mixed precision a tensor the net stores in half (nn/net_half.c): each slice's part,
// already rounded to half as the layer's output or gradient, widened, summed in fp32 and
// rounded once more (Megatron-LM sums the bf16 parts; NCCL adds them in fp32 and rounds)
static void sum_half(dt_tensor_par *tp, dt_net *net, uint16_t *h, size_t n) {
    float *x = net->half_scratch[0];  // (free between layers)
    DT_ASSERT(n <= net->half_scratch_floats);
    dt_net_half_widen(net, h, x, n);
    sum(tp, x, n);
    dt_net_half_bits(net, x, h, n);
}

// net.h on_tensor: g after a row-parallel linear's forward, f before a layer norm's backward
static void on_tensor(void *ctx, dt_net *net, int layer, int phase) {
    dt_tensor_par *tp = ctx;
    dt_layer *l = net->layers[layer];
    size_t n = (size_t)l->B * dt_layer_out_size(l);
    if (phase == DT_PHASE_FORWARD && tp->sum_out[layer]) {
        if (l->out_h) sum_half(tp, net, l->out_h, n);
        else sum(tp, l->out, n);
    }
    if (phase == DT_PHASE_BACKWARD && tp->sum_dout[layer]) {
        if (l->dout_h) sum_half(tp, net, l->dout_h, n);
        else sum(tp, l->dout, n);
    }
}

// ---- the vocabulary-parallel head's loss (Megatron-LM's vocab_parallel_cross_entropy) ----
// Row b's loss, log sum_k exp(z_k - M) + M - z_y over the whole vocabulary, from each rank's
// slice: M the group's maximum of the rows' maxima, the sum of exponentials and z_y (held
// by one rank) added over the group. The probabilities of this rank's slice are left in
// net->probs, exp(z_k - M) / sum, as dt_softmax_xent_row leaves them (nn/kernels.h). The
// passes are the device's (nn/device.h xent_part_*), the sums the group's allreduces of B T
// numbers.
static float loss_part(void *ctx, dt_net *net) {
    dt_tensor_par *tp = ctx;
    dt_device *d = net->dev;
    const dt_layer *last = net->layers[net->n_layers - 1];
    int R = net->B * net->seq, K = net->num_classes;
    DT_ASSERT(K == tp->vocab_n);
    d->xent_part_max(d, last->out, R, K, tp->row_max);
    MPI_Allreduce(MPI_IN_PLACE, tp->row_max, R, MPI_FLOAT, MPI_MAX, tp->comm);
    d->xent_part_exp(d, last->out, net->labels, tp->vocab_lo, R, K, tp->row_max, net->probs,
                     tp->row_sum, tp->row_tgt);
    MPI_Allreduce(MPI_IN_PLACE, tp->row_sum, R, MPI_DOUBLE, MPI_SUM, tp->comm);
    MPI_Allreduce(MPI_IN_PLACE, tp->row_tgt, R, MPI_DOUBLE, MPI_SUM, tp->comm);
    tp->sums += 3;
    d->xent_part_scale(d, net->probs, tp->row_sum, R, K);
    double total = 0.0;
    int V = K * tp->size;
    for (int b = 0; b < R; b++) {
        int y = net->labels[b];
        total += y >= 0 && y < V
                     ? log(tp->row_sum[b]) + (double)tp->row_max[b] - tp->row_tgt[b]
                     : (double)NAN;  // (a label outside the vocabulary: NaN, as the device's)
    }
    return (float)(total / R);
}

// dlogits += scale (p - onehot(y)) on this rank's slice: the device's softmax_xent_backward
// with the labels of the slice (y - lo; another slice's is no column of it)
static void seed_part(void *ctx, dt_net *net, float scale, float *dlogits) {
    dt_tensor_par *tp = ctx;
    int R = net->B * net->seq, K = net->num_classes;
    for (int b = 0; b < R; b++) {
        int y = net->labels[b] - tp->vocab_lo;
        tp->labels_part[b] = y >= 0 && y < K ? y : -1;
    }
    net->dev->softmax_xent_backward(net->dev, net->probs, tp->labels_part, R, K, scale,
                                    dlogits);
}

int dt_tp_init(dt_tensor_par *tp, dt_trainer *t, MPI_Comm comm, dt_error *err) {
    DT_ASSERT(tp && t && t->net && t->coll);
    memset(tp, 0, sizeof *tp);
    dt_net *net = t->net;
    tp->comm = comm;
    MPI_Comm_rank(comm, &tp->rank);
    MPI_Comm_size(comm, &tp->size);
    int bad = 0;
    if (net->seq <= 0 || net->cfg.tp != tp->size)
        bad = dt_fail(err, DT_EXIT_USAGE, "tensor parallelism: a net of %d slices on a group "
                      "of %d ranks (build a gpt model with cfg.tp = the group's size)",
                      net->cfg.tp, tp->size);
    else if (t->shard != DT_SHARD_NONE && t->shard != DT_SHARD_OPTIMIZER &&
             t->shard != DT_SHARD_GRADIENTS)
        bad = dt_fail(err, DT_EXIT_USAGE, "tensor parallelism: ZeRO's stage %d: the "
                      "replicated strategy or ZeRO stages 1 and 2 only, so far", t->shard);
    else if (!net->cfg.tp_vocab_whole && !dt_tp_vocab_split_ok(net->dev))
        bad = dt_fail(err, DT_EXIT_USAGE, "tensor parallelism: the vocabulary split over the "
                      "group on %s, which lacks its kernels (nn/device.h embed_part_*, "
                      "xent_part_*): the cpu and the simulator's model only, so far "
                      "(cfg.tp_vocab_whole)", net->dev->name);
    int any = bad;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, comm);
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, t->comm);
    if (any) {
        if (!bad) dt_fail(err, DT_EXIT_USAGE, "tensor parallelism: another rank refused (see "
                          "its message)");
        return -1;
    }
    // the group's ring: the trainer's options (its device for the additions, the simulator's
    // sweep and cost parameters) but the ring over the group, on the group's communicator
    dt_coll_opts co = *dt_coll_get_opts(t->coll);
    co.algo = DT_ALGO_RING, co.wire_f16 = t->act_wire_half, co.checked = 0, co.coarsen = 0;
    co.share_comm = 0, co.one_comm = 0;
    co.group = tp->size;  // the group's ranks share a node (the data-parallel group's node
                          // size, which may be larger than the group: dtsim --tp 2 --pp 1)
    tp->coll = dt_coll_create(comm, t->comm_dev ? t->comm_dev : net->dev, &co, err);
    bad = !tp->coll;
    any = bad;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, comm);
    if (any) {
        if (tp->coll) dt_coll_free(tp->coll);
        tp->coll = NULL;
        if (!bad) dt_fail(err, DT_EXIT_USAGE, "tensor parallelism: another rank's allreduce "
                          "was refused (see its message)");
        return -1;
    }
    // the vocabulary's rows this rank holds: its wte's, or its head's copy's (one of the two
    // on every stage that holds an end)
    const dt_param *w = dt_net_find_param(net, "transformer.wte.weight");
    if (!w) w = dt_net_find_param(net, "lm_head.weight");
    int wte_rows = w ? w->shape[0] : 0;
    tp->sum_out = callocCheck((size_t)net->n_layers, 1);
    tp->sum_dout = callocCheck((size_t)net->n_layers, 1);
    tp->split = callocCheck((size_t)net->n_params + 1, 1);
    for (int i = 0; i < net->n_layers; i++) {
        dt_layer *l = net->layers[i];
        if (l->type == DT_LAYER_LINEAR && (dt_name_ends_with(l->name, "attn.c_proj") ||
                                           dt_name_ends_with(l->name, "mlp.c_proj"))) {
            tp->sum_out[i] = 1;  // partial products over the slices' inputs
            l->bias_elsewhere = tp->rank > 0;
        }
        if (l->type == DT_LAYER_LAYERNORM && (dt_name_ends_with(l->name, ".ln_1") ||
                                              dt_name_ends_with(l->name, ".ln_2")))
            tp->sum_dout[i] = 1;  // its output feeds a column-parallel c_attn or c_fc
        if (net->cfg.tp_vocab_whole) continue;
        if (l->type == DT_LAYER_EMBED) {  // its rows of the vocabulary
            tp->sum_out[i] = 1;
            l->bias_elsewhere = tp->rank > 0;  // (the positions)
            l->vocab_n = wte_rows, l->vocab_lo = tp->rank * wte_rows;
        }
        if (l->type == DT_LAYER_LAYERNORM && !strcmp(l->name, "transformer.ln_f"))
            tp->sum_dout[i] = 1;  // its output feeds the head's slice of the vocabulary
    }
    if (!net->cfg.tp_vocab_whole) {  // the head's (or the embedding's) slice
        tp->vocab_n = wte_rows, tp->vocab_lo = tp->rank * wte_rows;
        size_t R = (size_t)net->B * (size_t)net->seq + 1;
        tp->row_max = mallocCheck(R * sizeof(float));
        tp->row_sum = mallocCheck(R * sizeof(double));
        tp->row_tgt = mallocCheck(R * sizeof(double));
        tp->labels_part = mallocCheck(R * sizeof(int32_t));
        if (!(net->cfg.ends & DT_GPT_NO_HEAD)) {
            DT_ASSERT(net->num_classes == wte_rows);
            net->loss_part = loss_part, net->seed_part = seed_part;
        }
    }
    for (int i = 0; i < net->n_params; i++)
        tp->split[i] = dt_net_part_split(net, &net->params_table[i]) != 0;
    net->on_tensor = on_tensor;
    net->on_tensor_ctx = tp;
    t->tp = tp;
    return 0;
}

void dt_tp_free(dt_tensor_par *tp, dt_trainer *t) {
    if (!tp) return;
    if (t && t->net && t->net->on_tensor_ctx == tp) {
        t->net->on_tensor = NULL, t->net->on_tensor_ctx = NULL;
        t->net->loss_part = NULL, t->net->seed_part = NULL;
        for (int i = 0; i < t->net->n_layers; i++) {
            dt_layer *l = t->net->layers[i];
            l->bias_elsewhere = 0, l->vocab_lo = l->vocab_n = 0;
        }
    }
    if (t && t->tp == tp) t->tp = NULL;
    if (tp->coll) dt_coll_free(tp->coll);  // (collective, as dt_tp_free is)
    free(tp->sum_out), free(tp->sum_dout), free(tp->split);
    free(tp->row_max), free(tp->row_sum), free(tp->row_tgt), free(tp->labels_part);
    memset(tp, 0, sizeof *tp);
}

int dt_tp_vocab_split_ok(const dt_device *d) {
    return d->embed_part_forward && d->embed_part_backward && d->xent_part_max &&
           d->xent_part_exp && d->xent_part_scale;
}

void dt_tp_norms(dt_trainer *t, const dt_norm_plan *pl, double *sq) {
    dt_tensor_par *tp = t->tp;
    int n = t->net->n_params;  // the same tensors on every rank of the group (their slices)
    double *per = callocCheck((size_t)n + 1, sizeof(double));
    for (int s = 0; s < pl->n; s++) per[pl->param[s]] += sq[s];  // (ascending)
    for (int i = 0; i < n; i++)
        if (tp->rank > 0 && !tp->split[i]) per[i] = 0.0;  // a whole tensor: rank 0's
    MPI_Allreduce(MPI_IN_PLACE, per, n, MPI_DOUBLE, MPI_SUM, tp->comm);
    for (int s = 0; s < pl->n; s++) {  // each tensor's sum on its first segment
        int first = s == 0 || pl->param[s - 1] != pl->param[s];
        sq[s] = first ? per[pl->param[s]] : 0.0;
    }
    free(per);
}
