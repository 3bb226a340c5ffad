// dtrain_pipe.c — dtrain --pp P: pipeline parallelism for the gpt models (nn/train_pipe.h).
// The ranks are laid out as Megatron-LM lays them out without tensor parallelism: rank =
// stage x dp + dp_rank, so the data-parallel ranks of a stage are consecutive and a
// pipeline's stages are dp ranks apart. Each rank builds the whole model (its weights: the
// seed's, or --weights), keeps its stage's blocks, and trains them with the trainer of its
// stage's data-parallel group; the whole model is gathered for evaluation and saving. What
// a pipeline does not run with yet is refused before anything starts. --pp 1 is a pipeline of
// one stage: the plain model with the pipeline's arithmetic (its tied head's gradient kept
// apart, nn/train_pipe.h), the run that every --pp P with the same micro-batches repeats bit
// for bit.
#include <stdio.h>
#include <string.h>

#include "dtrain.h"
#include "models.h"

int dtrain_pipe_check(const dtrain_opts *o, int ranks, int rank) {
    if (o->pp < 1) return 0;
    const dt_gpt_shape *g = dt_gpt_find(o->model);
    const char *no = o->shard ? o->shard_flag
                     : o->precision != DT_AMP_FP32 ? "--precision fp16 or bf16"
                     : o->checkpoint_dir[0] || o->resume ? "--checkpoint-dir and --resume"
                     : o->sample_every ? "--sample-every"
                     : o->profile[0] ? "--profile"
                     : o->trace[0] ? "--trace"
                     : NULL;
    char msg[300] = "";
    if (!g)
        snprintf(msg, sizeof msg, "--pp %d cuts a transformer's blocks into stages: it is for "
                 "the gpt models (--model gpt2-tiny, ...), not --model %s", o->pp, o->model);
    else if (ranks % o->pp)
        snprintf(msg, sizeof msg, "--pp %d does not divide the %d ranks (the ranks are %d "
                 "stages x data-parallel ranks)", o->pp, ranks, o->pp);
    else if (o->pp > g->layers)
        snprintf(msg, sizeof msg, "--pp %d: --model %s has %d blocks, at most one stage each",
                 o->pp, o->model, g->layers);
    else if (no)
        snprintf(msg, sizeof msg, "--pp %d and %s: a pipeline runs fp32, the replicated "
                 "strategy, without checkpoints, samples, profiles or traces so far "
                 "(--save-weights writes the whole model)", o->pp, no);
    if (!msg[0]) return 0;
    if (rank == 0) fprintf(stderr, "dtrain: %s\n", msg);
    return 2;
}

void dtrain_pipe_layout(dtrain_run *r) {
    int pp = r->o->pp >= 1 ? r->o->pp : 1;
    r->dp = r->ranks / pp;
    r->stage = r->rank / r->dp;
    r->dp_rank = r->rank % r->dp;
    r->dp_comm = MPI_COMM_WORLD;
    r->pipe_comm = MPI_COMM_NULL;
    if (r->o->pp < 1) return;  // (--pp 1: a pipeline of one stage)
    MPI_Comm_split(MPI_COMM_WORLD, r->stage, r->dp_rank, &r->dp_comm);
    MPI_Comm_split(MPI_COMM_WORLD, r->dp_rank, r->stage, &r->pipe_comm);
}

dt_net *dtrain_pipe_net(dtrain_run *r, dt_net *m, const dt_model_config *cfg) {
    if (r->o->pp < 1) return m;
    r->whole = m;
    return dt_pipeline_stage_net(r->o->model, r->dev, cfg, r->stage, r->o->pp, m, &r->err);
}

int dtrain_pipe_attach(dtrain_run *r) {
    if (r->o->pp < 1) return 0;
    int failed = dt_pipeline_init(&r->pipe, &r->tr, r->pipe_comm, r->o->pp,
                                  (dt_pipe_kind)r->o->pp_schedule, &r->err) ? 2 : 0;
    r->piped = !failed;
    return dtrain_agree(failed, &r->err, r->rank);
}

float dtrain_step_tokens(dtrain_run *r, float lr) {
    if (r->piped) return dt_pipeline_step_tokens(&r->tr, r->tok, r->tgt, lr);
    return dt_train_step_tokens(&r->tr, r->tok, r->tgt, lr);
}

dt_net *dtrain_whole_net(dtrain_run *r) {
    if (!r->piped) return r->net;
    dt_net *w = r->whole;
    dt_pipeline_gather(&r->pipe, r->net, r->stage == 0 ? w : NULL, 0);
    dt_device *d = w->dev;  // then from the first stage to the others
    float *host = mallocCheck(w->n_trainable * sizeof(float));
    d->to_host(d, host, w->params, w->n_trainable * sizeof(float));
    MPI_Bcast(host, (int)w->n_trainable, MPI_FLOAT, 0, r->pipe_comm);
    d->from_host(d, w->params, host, w->n_trainable * sizeof(float));
    free(host);
    return w;
}

void dtrain_pipe_free(dtrain_run *r) {
    if (r->piped) dt_pipeline_free(&r->pipe, &r->tr);
    r->piped = 0;
    dt_net_free(r->whole);
    r->whole = NULL;
    if (r->o->pp >= 1 && r->dp_comm != MPI_COMM_WORLD && r->dp_comm != MPI_COMM_NULL &&
        r->dp_comm) {
        MPI_Comm_free(&r->dp_comm);
        MPI_Comm_free(&r->pipe_comm);
    }
}
