// dtsim_3d_report.c — the lines and JSON fields of a run with tensor and pipeline
// parallelism (sim/dtsim_3d.c): the layout as laid out, the step's parts, the model FLOP/s per
// GPU as Megatron-LM counts them (what its papers publish), and the busiest GPU's memory.
#include <stdio.h>

#include "dtsim.h"
#include "pipe/pipe_sched.h"

#define GIB 1073741824.0

void dtsim_3d_report(FILE *f, const dtsim_opts *o, const dtsim_result *r) {
    const dt_gpu_profile *g = dt_gpu_find(o->cluster.gpu);
    int T = dtsim_seq_tokens(o), p = o->pp, m = r->micro_batches;
    int v = o->pp_kind == DT_PIPE_INTERLEAVED ? o->pp_chunks : 1;
    char sched[64];
    if (v > 1) snprintf(sched, sizeof sched, "interleaved (%d chunks a stage)", v);
    else snprintf(sched, sizeof sched, "%s", dt_pipe_kind_name((dt_pipe_kind)o->pp_kind));
    fprintf(f, "3D layout: tp %d x pp %d x dp %d = %d GPUs (tensor-parallel ranks inside a node, "
               "then data-parallel, then the stages: Megatron-LM's order); %s over %d "
               "micro-batches of %d; recomputation %s%s\n", o->tp, p, r->dp, r->gpus, sched, m,
            o->micro_batch, dt_recompute_name(o->recompute),
            o->seq_par && o->tp > 1 ? "; sequence parallelism (the activations a tensor-"
            "parallel rank keeps: 1/t of each; the same bytes on the wire)" : "");
    if (r->analytic_iter_s > 0)  // --simgrid (sim/rank.c): the trainer's own parts
        fprintf(f, "simulated by SimGrid: step %.2f ms, the trainer's pipeline and tensor "
                   "parallelism (nn/train_pipe.c, train_tp.c) on modelled GPUs, the embedding and "
                   "head split over the vocabulary as dtrain runs them; the cost "
                   "model's step (below): %.2f ms (%+.1f %%)\n", 1e3 * r->iter_s,
                1e3 * r->analytic_iter_s, 100 * (r->analytic_iter_s / r->iter_s - 1));
    fprintf(f, "step: pipeline %.2f ms (bubble %.1f %%; with equal stages and free messages "
               "(p-1)/(%sm+p-1) = %.1f %%) + data-parallel allreduce %.2f ms (%s of %d, after "
               "the flush) + optimizer %.2f ms; of the pipeline, tensor-parallel allreduces "
               "%.2f ms a GPU, a message between stages %.3f ms\n",
            1e3 * r->pipeline_s, 100 * r->pp_bubble, v > 1 ? "v" : "",
            100.0 * (p - 1) / ((double)v * m + p - 1), 1e3 * r->dp_comm_s, r->algo, r->dp,
            1e3 * r->opt_s, 1e3 * r->tp_comm_s, 1e3 * r->p2p_s);
    double per_gpu = r->model_flops / r->iter_s / r->gpus;
    double peak = g ? dt_gpu_peak(g, o->prec) : 0;
    fprintf(f, "model FLOPs: %.1f TFLOP/s per GPU", per_gpu / 1e12);
    if (peak > 0) fprintf(f, ", %.1f %% of the %s's %.0f", 100 * per_gpu / peak, g->name,
                          peak / 1e12);
    fprintf(f, " (Narayanan et al. 2021's count: %s B s l h^2 (1 + s/6h%s + V/16lh)%s)\n",
            o->recompute == 1 ? "96" : "72", o->recompute == 2 ? " + s/18h" : "",
            o->recompute == 1 ? ", with the recomputation"
            : o->recompute == 2 ? ", with the attention's core again (4 B s^2 h a block)" : "");
    fprintf(f, "tokens/s: %.0f (%d sequences of %d tokens a step; %.0f tokens/s per GPU)\n",
            r->images_s * T, r->global_batch, T, r->images_s * T / r->gpus);
    fprintf(f, "memory per GPU, the busiest stage: %.2f GiB = parameters %.2f + gradients %.2f "
               "+ %s state %.2f%s + activations %.2f, of the %s's %.0f GiB (%.3g parameters a "
               "GPU)\n", r->mem_total / GIB, r->mem_params / GIB, r->mem_grads / GIB,
            dtsim_optim_label(o), r->mem_optim / GIB,
            o->shard >= 1 ? " (ZeRO stage 1 over the data-parallel ranks)" : "",
            r->mem_act / GIB, g ? g->name : "GPU", g ? g->mem_bytes / GIB : 0, r->stage_params);
}

void dtsim_3d_json(dt_json_writer *w, const dtsim_opts *o, const dtsim_result *r) {
    const dt_gpu_profile *g = dt_gpu_find(o->cluster.gpu);
    int T = dtsim_seq_tokens(o);
    dt_json_write_int(w, "seq_len", T);
    dt_json_write_real(w, "tokens_per_s", r->images_s * T);
    dt_json_write_real(w, "sequences_per_s", r->images_s);
    dt_json_write_int(w, "tp", o->tp);
    dt_json_write_int(w, "pp", o->pp);
    dt_json_write_int(w, "dp", r->dp);
    dt_json_write_int(w, "micro_batch", o->micro_batch);
    dt_json_write_int(w, "micro_batches", r->micro_batches);
    dt_json_write_string(w, "pp_schedule", dt_pipe_kind_name((dt_pipe_kind)o->pp_kind));
    dt_json_write_int(w, "pp_chunks", o->pp_kind == DT_PIPE_INTERLEAVED ? o->pp_chunks : 1);
    dt_json_write_string(w, "recompute", dt_recompute_name(o->recompute));
    dt_json_write_bool(w, "sequence_parallel", o->seq_par && o->tp > 1);
    dt_json_write_real(w, "pipeline_s", r->pipeline_s);
    if (r->analytic_iter_s > 0) dt_json_write_real(w, "analytic_iter_s", r->analytic_iter_s);
    dt_json_write_real(w, "pp_bubble", r->pp_bubble);
    dt_json_write_real(w, "tp_comm_s", r->tp_comm_s);
    dt_json_write_real(w, "p2p_s", r->p2p_s);
    dt_json_write_real(w, "dp_comm_s", r->dp_comm_s);
    dt_json_write_real(w, "optimizer_s", r->opt_s);
    dt_json_write_real(w, "model_flops_per_gpu", r->model_flops / r->iter_s / r->gpus);
    dt_json_write_int(w, "shard", o->shard);
    dt_json_write_real(w, "mem_params_bytes", r->mem_params);
    dt_json_write_real(w, "mem_grads_bytes", r->mem_grads);
    dt_json_write_real(w, "mem_optim_bytes", r->mem_optim);
    dt_json_write_real(w, "mem_activations_bytes", r->mem_act);
    dt_json_write_real(w, "mem_total_bytes", r->mem_total);
    dt_json_write_real(w, "gpu_mem_bytes", g ? g->mem_bytes : 0);
}
