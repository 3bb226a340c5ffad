// train_tp.c — see train_tp.h: the tensor-parallel group's sums, hooked into the net's
// forward and backward (net.h on_tensor), and the norm over the group's slices.
#include "train_tp.h"

#include <stdio.h>
#include <string.h>

#include "layers.h"
#include "net_part.h"

static int ends_with(const char *s, const char *tail) {
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && !strcmp(s + a - b, tail);
}

// x (n floats of device memory) summed over the group, in place, the same bits on every rank
static void sum(dt_tensor_par *tp, dt_device *d, float *x, size_t n) {
    tp->sums++;
    if (!d->device_memory) {
        MPI_Allreduce(MPI_IN_PLACE, x, (int)n, MPI_FLOAT, MPI_SUM, tp->comm);
        return;
    }
    if (tp->host_n < n) {
        free(tp->host);
        tp->host = mallocCheck(n * sizeof(float));
        tp->host_n = n;
    }
    d->to_host(d, tp->host, x, n * sizeof(float));
    MPI_Allreduce(MPI_IN_PLACE, tp->host, (int)n, MPI_FLOAT, MPI_SUM, tp->comm);
    d->from_host(d, x, tp->host, n * sizeof(float));
}

// net.h on_tensor: g after a row-parallel linear's forward, f before a layer norm's backward
static void on_tensor(void *ctx, dt_net *net, int layer, int phase) {
    dt_tensor_par *tp = ctx;
    dt_layer *l = net->layers[layer];
    size_t n = (size_t)l->B * dt_layer_out_size(l);
    if (phase == DT_PHASE_FORWARD && tp->sum_out[layer]) sum(tp, net->dev, l->out, n);
    if (phase == DT_PHASE_BACKWARD && tp->sum_dout[layer]) sum(tp, net->dev, l->dout, n);
}

int dt_tp_init(dt_tensor_par *tp, dt_trainer *t, MPI_Comm comm, dt_error *err) {
    DT_ASSERT(tp && t && t->net);
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
    else if (net->amp != DT_AMP_FP32)
        bad = dt_fail(err, DT_EXIT_USAGE, "tensor parallelism: %s storage: fp32 only, so far",
                      dt_amp_name(net->amp));
    else if (t->shard != DT_SHARD_NONE && t->shard != DT_SHARD_OPTIMIZER)
        bad = dt_fail(err, DT_EXIT_USAGE, "tensor parallelism: ZeRO's stage %d: the "
                      "replicated strategy or ZeRO stage 1 (--shard optimizer) only, so far",
                      t->shard);
    int any = bad;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, comm);
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, t->comm);
    if (any) {
        if (!bad) dt_fail(err, DT_EXIT_USAGE, "tensor parallelism: another rank refused (see "
                          "its message)");
        return -1;
    }
    tp->sum_out = callocCheck((size_t)net->n_layers, 1);
    tp->sum_dout = callocCheck((size_t)net->n_layers, 1);
    tp->split = callocCheck((size_t)net->n_params + 1, 1);
    for (int i = 0; i < net->n_layers; i++) {
        dt_layer *l = net->layers[i];
        if (l->type == DT_LAYER_LINEAR && (ends_with(l->name, "attn.c_proj") ||
                                           ends_with(l->name, "mlp.c_proj"))) {
            tp->sum_out[i] = 1;  // partial products over the slices' inputs
            l->bias_elsewhere = tp->rank > 0;
        }
        if (l->type == DT_LAYER_LAYERNORM && (ends_with(l->name, ".ln_1") ||
                                              ends_with(l->name, ".ln_2")))
            tp->sum_dout[i] = 1;  // its output feeds a column-parallel c_attn or c_fc
    }
    for (int i = 0; i < net->n_params; i++)
        tp->split[i] = dt_net_part_split(&net->params_table[i]) != 0;
    net->on_tensor = on_tensor;
    net->on_tensor_ctx = tp;
    t->tp = tp;
    return 0;
}

void dt_tp_free(dt_tensor_par *tp, dt_trainer *t) {
    if (!tp) return;
    if (t && t->net && t->net->on_tensor_ctx == tp) {
        t->net->on_tensor = NULL, t->net->on_tensor_ctx = NULL;
        for (int i = 0; i < t->net->n_layers; i++) t->net->layers[i]->bias_elsewhere = 0;
    }
    if (t && t->tp == tp) t->tp = NULL;
    free(tp->sum_out), free(tp->sum_dout), free(tp->split), free(tp->host);
    memset(tp, 0, sizeof *tp);
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
