// dtrain_pipe.c — dtrain --pp P and --tp T: pipeline and tensor parallelism for the gpt
// models (nn/train_pipe.h, nn/train_tp.h). The ranks are laid out as Megatron-LM lays them
// out: rank = (stage x dp + dp_rank) x tp + tp_rank, so a tensor-parallel group is T
// consecutive ranks (inside a node), the data-parallel ranks of a stage follow, and a
// pipeline's stages are dp x tp ranks apart. Each rank builds the whole model (its weights:
// the seed's, or --weights), keeps its part (its stage's blocks, its slices of them) and
// trains it with the trainer of its data-parallel group; the whole model is gathered for
// evaluation, samples and saving, and a checkpoint is the whole model's file (weights and
// optimizer state), which any layout resumes. --pp 1 is a pipeline of one stage: the plain
// model with the pipeline's arithmetic (its tied head's gradient kept apart), the run that
// every --pp P with the same micro-batches repeats bit for bit. What they do not run with
// yet is refused before anything starts.
#include <stdio.h>
#include <string.h>

#include "dtrain.h"
#include "models.h"
#include "net_part.h"

static int parted(const dtrain_opts *o) { return o->pp >= 1 || o->tp > 1; }

int dtrain_pipe_check(const dtrain_opts *o, int ranks, int rank) {
    if (o->recompute >= 0 && o->pp < 1) {
        if (rank == 0)
            fprintf(stderr, "dtrain: --recompute %s: it says what a pipeline's stages keep of "
                    "their micro-batches in flight: give --pp (the data-parallel step keeps "
                    "one micro-batch's activations)\n",
                    dt_recompute_name((dt_recompute)o->recompute));
        return 2;
    }
    if (!parted(o)) return 0;
    const dt_gpt_shape *g = dt_gpt_find(o->model);
    int pp = o->pp >= 1 ? o->pp : 1;
    char what[48];
    if (o->pp >= 1 && o->tp > 1) snprintf(what, sizeof what, "--pp %d --tp %d", o->pp, o->tp);
    else if (o->pp >= 1) snprintf(what, sizeof what, "--pp %d", o->pp);
    else snprintf(what, sizeof what, "--tp %d", o->tp);
    const char *no = o->shard > DT_SHARD_GRADIENTS ? o->shard_flag
                     : o->profile[0] ? "--profile"
                     : o->trace[0] ? "--trace"
                     : NULL;
    char msg[400] = "";
    if (!g)
        snprintf(msg, sizeof msg, "%s cuts a transformer's blocks into parts: it is for the gpt "
                 "models (--model gpt2-tiny, ...), not --model %s", what, o->model);
    else if (ranks % (pp * o->tp))
        snprintf(msg, sizeof msg, "%s: %d stages x %d tensor-parallel ranks do not divide the "
                 "%d ranks (the ranks are stages x data-parallel x tensor-parallel ranks)", what,
                 pp, o->tp, ranks);
    else if (pp > g->layers)
        snprintf(msg, sizeof msg, "--pp %d: --model %s has %d blocks, at most one stage each",
                 o->pp, o->model, g->layers);
    else if (g->heads % o->tp)
        snprintf(msg, sizeof msg, "--tp %d: --model %s's %d attention heads do not split over "
                 "%d ranks (a rank runs whole heads)", o->tp, o->model, g->heads, o->tp);
    else if (no)
        snprintf(msg, sizeof msg, "%s and %s: pipeline and tensor parallelism run the "
                 "replicated strategy or ZeRO stages 1 and 2, without "
                 "profiles or traces so far", what, no);
    if (!msg[0]) return 0;
    if (rank == 0) fprintf(stderr, "dtrain: %s\n", msg);
    return 2;
}

void dtrain_pipe_layout(dtrain_run *r) {
    const dtrain_opts *o = r->o;
    int pp = o->pp >= 1 ? o->pp : 1, tp = o->tp > 1 ? o->tp : 1;
    r->dp = r->ranks / (pp * tp);
    r->tp_rank = r->rank % tp;
    r->dp_rank = r->rank / tp % r->dp;
    r->stage = r->rank / (tp * r->dp);
    r->dp_comm = MPI_COMM_WORLD;
    r->pipe_comm = r->tp_comm = r->model_comm = MPI_COMM_NULL;
    if (!parted(o)) return;
    MPI_Comm_split(MPI_COMM_WORLD, r->stage * tp + r->tp_rank, r->dp_rank, &r->dp_comm);
    MPI_Comm_split(MPI_COMM_WORLD, r->dp_rank * tp + r->tp_rank, r->stage, &r->pipe_comm);
    MPI_Comm_split(MPI_COMM_WORLD, r->stage * r->dp + r->dp_rank, r->tp_rank, &r->tp_comm);
    MPI_Comm_split(MPI_COMM_WORLD, r->dp_rank, r->stage * tp + r->tp_rank, &r->model_comm);
}

dt_net *dtrain_pipe_net(dtrain_run *r, dt_net *m, const dt_model_config *cfg) {
    const dtrain_opts *o = r->o;
    if (!parted(o)) return m;
    r->whole = m;
    dt_model_config c = *cfg;
    // the embedding and the head split over the vocabulary (Megatron-LM's) where the
    // vocabulary divides into the tensor-parallel ranks and the device has the split's
    // kernels (nn/train_tp.c); else whole on every rank
    const dt_gpt_shape *g = dt_gpt_find(o->model);
    int V = c.vocab > 0 ? c.vocab : g ? g->vocab : 0;
    c.tp = o->tp;
    c.tp_vocab_whole = o->tp <= 1 || !dt_tp_vocab_split_ok(r->dev) || V <= 0 || V % o->tp != 0;
    if (o->pp >= 1)
        return dt_pipeline_stage_net(o->model, r->dev, &c, r->stage, o->pp, r->tp_rank, m,
                                     &r->err);
    dt_net *net = dt_model_create(o->model, r->dev, &c, &r->err);
    if (net && dt_net_part_copy(net, m, r->tp_rank, o->tp, &r->err)) {
        dt_net_free(net);
        return NULL;
    }
    return net;
}

int dtrain_pipe_attach(dtrain_run *r) {
    const dtrain_opts *o = r->o;
    if (!parted(o)) return 0;
    int failed = 0;
    if (o->tp > 1) {
        failed = dt_tp_init(&r->tpar, &r->tr, r->tp_comm, &r->err) ? 2 : 0;
        r->tensored = !failed;
    }
    int rc = dtrain_agree(failed, &r->err, r->rank);
    if (rc || o->pp < 1) return rc;
    dt_recompute rc_mode = o->recompute >= 0 ? (dt_recompute)o->recompute : DT_RECOMPUTE_FULL;
    failed = dt_pipeline_init(&r->pipe, &r->tr, r->pipe_comm, o->pp,
                              (dt_pipe_kind)o->pp_schedule, rc_mode, &r->err) ? 2 : 0;
    r->piped = !failed;
    if (r->piped) r->pipe.msg_max = (size_t)o->pp_message;
    return dtrain_agree(failed, &r->err, r->rank);
}

float dtrain_step_tokens(dtrain_run *r, float lr) {
    if (r->piped) return dt_pipeline_step_tokens(&r->tr, r->tok, r->tgt, lr);
    return dt_train_step_tokens(&r->tr, r->tok, r->tgt, lr);
}

dt_net *dtrain_whole_net(dtrain_run *r) {
    if (!r->whole || !r->net) return r->net;
    dt_net *w = r->whole;
    dt_model_parts_gather(r->net, w, r->tp_rank, r->o->tp, r->model_comm, 0);
    dt_device *d = w->dev;  // then from the first part to the others
    float *host = mallocCheck(w->n_trainable * sizeof(float));
    d->to_host(d, host, w->params, w->n_trainable * sizeof(float));
    MPI_Bcast(host, (int)w->n_trainable, MPI_FLOAT, 0, r->model_comm);
    d->from_host(d, w->params, host, w->n_trainable * sizeof(float));
    free(host);
    return w;
}

int dtrain_pipe_save(dtrain_run *r) {
    dt_net *w = dtrain_whole_net(r), *net = r->net;
    const dt_optim *opt = r->opt;
    size_t nw = w->n_trainable;
    dt_optim_state os = {.kind = opt->cfg.kind, .step = opt->step}, part = {0};
    dt_optim_state_alloc(&part, net, opt->cfg.kind);  // this part's, its moments whole
    dt_trainer_gather_state(&r->tr, 0, part.m, part.v);
    if (r->dp_rank == 0) {  // one replica's parts, summed into the whole's layout (exact)
        float *mw = callocCheck(nw + 1, sizeof(float)), *vw = NULL;
        dt_net_part_place_array(net, w, r->tp_rank, r->o->tp, part.m, mw);
        if (part.v) {
            vw = callocCheck(nw + 1, sizeof(float));
            dt_net_part_place_array(net, w, r->tp_rank, r->o->tp, part.v, vw);
        }
        if (r->rank == 0) dt_optim_state_alloc(&os, w, opt->cfg.kind);
        os.step = opt->step;
        MPI_Reduce(mw, os.m, (int)nw, MPI_FLOAT, MPI_SUM, 0, r->model_comm);
        if (vw) MPI_Reduce(vw, os.v, (int)nw, MPI_FLOAT, MPI_SUM, 0, r->model_comm);
        free(mw), free(vw);
    }
    int failed = r->rank == 0 && dt_checkpoint_save_state(r->ckpt, w, &os, &r->st, &r->err);
    dt_optim_state_free(&part);
    dt_optim_state_free(&os);
    return failed;
}

void dtrain_pipe_resumed(dtrain_run *r) {
    dt_net *w = r->whole, *net = r->net;
    DT_ASSERT(!dt_net_part_copy(net, w, r->tp_rank, r->o->tp, &r->err));
    dt_optim_state part = {0};
    dt_optim_state_alloc(&part, net, r->resumed.kind);
    dt_net_part_take_array(net, w, r->tp_rank, r->o->tp, r->resumed.m, part.m);
    if (part.v && r->resumed.v) dt_net_part_take_array(net, w, r->tp_rank, r->o->tp,
                                                       r->resumed.v, part.v);
    part.step = r->resumed.step;
    dt_optim_state_free(&r->resumed);
    r->resumed = part;  // the trainer takes this part's (dt_trainer_scatter_state)
}

void dtrain_pipe_free(dtrain_run *r) {
    if (r->piped) dt_pipeline_free(&r->pipe, &r->tr);
    if (r->tensored) dt_tp_free(&r->tpar, &r->tr);
    r->piped = r->tensored = 0;
    dt_net_free(r->whole);
    r->whole = NULL;
    MPI_Comm *c[] = {&r->dp_comm, &r->pipe_comm, &r->tp_comm, &r->model_comm};
    for (int i = 0; i < 4; i++)
        if (*c[i] && *c[i] != MPI_COMM_WORLD && *c[i] != MPI_COMM_NULL) MPI_Comm_free(c[i]);
}
