// dtsim_gpt.c — transformers and sharded data parallel in the dtsim launcher: the --shard
// option (ZeRO's stage, Rajbhandari et al. 2020; sim/zero.h), the gpt models' defaults (AdamW,
// or LAMB with --optimizer lamb; a data set of tokens), the memory each modelled GPU needs
// (the model states by stage, and the activations of the network dtsim builds) with the
// refusal of a configuration that does not fit the GPU's memory, --analytic under a stage, and
// the lines and JSON fields of the report. Not here: the simulated step of a stage
// (sim/rank_zero.c), the formulas (sim/zero.c), the primitives (sim/device_model_gpt.c).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_cost.h"
#include "device_model.h"
#include "dtsim.h"
#include "layer.h"
#include "models.h"
#include "net.h"
#include "zero.h"

#define GIB 1073741824.0
// GPT-3's training set, tokens (Brown et al. 2020, §2.2: every model trained on 300 billion
// tokens): the default "data set" of a gpt model's time-to-train, one pass over it
#define GPT_TRAIN_TOKENS 300e9

void dtsim_gpt_config(const dtsim_opts *o, dt_model_config *cfg) {
    cfg->seq_len = o->seq_len, cfg->vocab = o->vocab;  // gpt models (0: the model's)
    cfg->layers = o->layers, cfg->width = o->hidden, cfg->heads = o->heads;
}

const dt_gpt_shape *dtsim_gpt_shape(const dtsim_opts *o, dt_gpt_shape *buf) {
    const dt_gpt_shape *s = dt_sim_is_gpt(o->model) ? dt_gpt_find(o->model) : NULL;
    if (!s) return NULL;
    dt_model_config cfg = dt_model_config_default();
    dtsim_gpt_config(o, &cfg);
    *buf = dt_gpt_shape_of(s, &cfg);
    return buf;
}

const char *dtsim_optim_label(const dtsim_opts *o) {
    switch (dt_sim_optim_kind(o->model, o->lars)) {
    case DT_OPT_LARS: return "LARS";
    case DT_OPT_ADAMW: return "AdamW";
    case DT_OPT_LAMB: return "LAMB";
    default: return "SGD";
    }
}

static int refuse(const char *msg) {
    fprintf(stderr, "dtsim: %s\n", msg);
    return 2;
}

int dtsim_gpt_check(dtsim_opts *o, int optim_set) {
    int gpt = dt_sim_is_gpt(o->model);
    int adam = !strcmp(o->optimizer, "adamw") || !strcmp(o->optimizer, "lamb");
    if (gpt && optim_set && !adam)
        return refuse("--optimizer: the gpt models train with adamw or lamb (the Adam family, "
                      "as GPT-2 and GPT-3 were)");
    if (!gpt && adam)
        return refuse("--optimizer adamw|lamb: for the gpt models; the image models train "
                      "with lars or sgd");
    if (gpt && !optim_set) o->lars = !strcmp(o->cluster.optimizer, "lamb");  // AdamW
    if (gpt && o->cpu)
        return refuse("--device cpu trains the image models on synthetic images; the gpt "
                      "models run on the modelled GPU (dtrain trains them for real)");
    int preset_model = !strcmp(o->model, o->cluster.model);  // the preset's own network
    if (gpt && preset_model && !o->seq_len) o->seq_len = o->cluster.seq_len;
    if (gpt && preset_model && !o->vocab) o->vocab = o->cluster.vocab;
    if (!gpt && (o->seq_len || o->vocab || o->attention[0]))
        return refuse("--seq-len, --vocab and --attention: for the gpt models (an image "
                      "model's input is its image)");
    // fused attention where FlashAttention runs (A100 and later); a preset as its source ran
    const dt_gpu_profile *g = dt_gpu_find(o->cluster.gpu);
    o->flash = o->attention[0] ? !strcmp(o->attention, "flash")
             : gpt && !preset_model && g && g->bf16;
    const dt_gpt_shape *s = gpt ? dt_gpt_find(o->model) : NULL;
    if (s && o->dataset == 1281167 && o->epochs == 90) {  // ImageNet's, the defaults
        o->dataset = GPT_TRAIN_TOKENS / (o->seq_len ? o->seq_len : s->context);  // sequences
        o->epochs = 1;
    }
    if (o->shard == 0) return 0;
    if (o->gpus < 2 && !o->sweep)
        return refuse("--shard: one GPU has nobody to shard with (ZeRO divides the model "
                      "states over the data-parallel GPUs: give --gpus 2 or more)");
    if (o->cpu)
        return refuse("--shard: with the modelled GPU only (--device cpu runs dtrain's "
                      "plain data parallel)");
    if (o->accumulate > 1)
        return refuse("--shard with --accumulate: not modelled (one micro-batch per step)");
    return 0;
}

double dtsim_net_saved_bytes(const dtsim_opts *o, const dt_net *net, int attention_only) {
    double bytes = 0;  // (whole numbers of bytes: exact in any order)
    for (int i = 0; i < net->n_layers; i++) {
        const dt_layer *l = net->layers[i];
        int attention = l->type == DT_LAYER_ATTENTION;
        if (attention_only && !attention) continue;
        // fused attention keeps its row statistics (B x H x T), not the (B,H,T,T) scores
        bytes += o->flash && attention ? (double)l->B * l->heads * l->h * sizeof(float)
                                       : (double)l->aux_bytes;
    }
    return bytes * (o->prec == DT_PREC_FP16 ? 2.0 : 4.0) / 4.0;
}

double dtsim_net_activation_bytes(const dtsim_opts *o, const dt_net *net) {
    size_t scratch = 0;
    double bytes = (double)dt_net_activation_bytes(net, &scratch) + (double)scratch;
    return bytes * (o->prec == DT_PREC_FP16 ? 2.0 : 4.0) / 4.0 + dtsim_net_saved_bytes(o, net, 0);
}

// Bytes the network on the modelled GPU keeps for activations during a step: every layer's
// output and the shared gradient buffers (dt_net_activation_bytes), mixed precision's
// scratch, and the layers' saved state (attention's probabilities, the statistics of the
// norms): in fp16 half of the fp32 the model device allocates.
// Stage 3 also holds the parameters the trainer gathers at once: the layer that runs and
// the next one (sim/zero.h dt_zero3_units: *gathered, elements at the peak).
static int activation_bytes(const dtsim_opts *o, double *act, double *psi, double *gathered) {
    dt_error err = {0};
    dt_modeldev_config mc = {dt_gpu_find(o->cluster.gpu), o->prec, NULL, NULL, NULL, 0, 1, 0,
                             o->flash};
    dt_device *dev = dt_device_model_create(&mc, &err);
    dt_net *net = NULL;
    if (dev) {
        dt_model_config cfg = dt_model_config_default();
        cfg.batch = o->per_gpu_batch / o->accumulate;
        dt_model_shape(o->model, o->model_side, o->model_classes, &cfg.in_h, &cfg.num_classes);
        cfg.in_w = cfg.in_h;
        dtsim_gpt_config(o, &cfg);
        net = dt_model_create(o->model, dev, &cfg, &err);
    }
    if (!net) {
        if (dev) dev->destroy(dev);
        return fprintf(stderr, "dtsim: %s\n", err.msg), 2;
    }
    *act = dtsim_net_activation_bytes(o, net);
    *psi = (double)net->n_trainable;
    size_t *lo = callocCheck((size_t)net->n_layers + 1, sizeof(size_t));
    int *gathers = callocCheck((size_t)net->n_layers + 1, sizeof(int));
    dt_zero3_units(net, o->shard_blocks, lo, gathers, gathered);
    free(lo), free(gathers);
    dt_net_free(net);
    dev->destroy(dev);
    return 0;
}

int dtsim_gpt_prepare(const dtsim_opts *o, dtsim_result *r) {
    int gpt = dt_sim_is_gpt(o->model);
    if (!gpt && o->shard == 0) return 0;  // the image models' runs report no memory
    double act, psi, gathered;
    int rc = activation_bytes(o, &act, &psi, &gathered);
    if (rc) return rc;
    int moments = dt_zero_moments(dt_sim_optim_kind(o->model, o->lars));
    dt_zero_mem m = dt_zero_memory(psi, o->shard, o->gpus, o->prec == DT_PREC_FP16, moments,
                                   act);
    r->mem_gathered = 0;
    if (o->shard >= 3) {  // the prefetch buffer, parameters at their width
        r->mem_gathered = gathered * (o->prec == DT_PREC_FP16 ? 2.0 : 4.0);
        m.params += r->mem_gathered, m.total += r->mem_gathered;
    }
    r->has_mem = 1;
    r->mem_params = m.params, r->mem_grads = m.grads, r->mem_optim = m.optim;
    r->mem_act = m.activations, r->mem_total = m.total;
    const dt_gpu_profile *g = dt_gpu_find(o->cluster.gpu);
    if (!gpt || !g || m.total <= g->mem_bytes) return 0;
    fprintf(stderr, "dtsim: %s does not fit: one %s has %.0f GiB, and at ZeRO stage %d (%s) on "
            "%d GPUs each keeps %.1f GiB (parameters %.1f + gradients %.1f + %s state %.1f + "
            "activations %.1f of %d sequences per GPU); shard more (--shard 3), fewer "
            "sequences per GPU (--per-gpu-batch), more GPUs, or a GPU with more memory\n",
            o->model, g->name, g->mem_bytes / GIB, o->shard, dt_zero_name(o->shard), o->gpus,
            m.total / GIB, m.params / GIB, m.grads / GIB, dtsim_optim_label(o), m.optim / GIB,
            m.activations / GIB, o->per_gpu_batch);
    return 2;
}

// Stage 3's step on one link, the trainer's schedule (nn/train_zero.c) with the collectives
// progressing while the layers compute (as NCCL's stream does, and as the stage-0 analytic
// lets a ring's rounds run: what it leaves out is the simulation's polls). Unit k computes
// f[k] forward and b[k] backward; its gather and its reduce-scatter cost h[k] each (half a
// ring allreduce), one after another on one channel in the order they are issued:
//   forward, units 0..n-1: unit k starts when its gather is done and unit k-1 has computed;
//     as it starts, unit k+1's gather is issued (one unit of prefetch);
//   backward, units n-1..0: the same with the units' second gathers (the first issued when
//     forward ends), and unit k's reduce-scatter issued when its backward is done;
//   the step ends when the last unit has computed and the channel is idle.
// A tied unit's extra gather (the head's: gathers[k] > 2) is added whole, unhidden.
static double zero3_timeline(int n, const double *f, const double *b, const double *h,
                             const int *gathers) {
    const double *g = h, *s = h;
    double ch = g[0], c = 0, extra = 0;  // the channel's free time, the compute's
    double *done = callocCheck((size_t)n + 1, sizeof(double));
    done[0] = g[0];
    for (int k = 0; k < n; k++) {
        double start = fmax(c, done[k]);
        if (k + 1 < n) done[k + 1] = ch = fmax(ch, start) + g[k + 1];
        c = start + f[k];
        if (gathers[k] > 2) extra += (gathers[k] - 2) * g[k];
    }
    c += extra;
    done[n - 1] = ch = fmax(ch, c) + g[n - 1];  // backward's first unit, issued at forward's end
    for (int k = n - 1; k >= 0; k--) {
        double start = fmax(c, done[k]);
        if (k > 0) done[k - 1] = ch = fmax(ch, start) + g[k - 1];
        c = start + b[k];
        ch = fmax(ch, c) + s[k];
    }
    free(done);
    return fmax(c, ch);
}

// --analytic under a stage: the step's compute with the optimizer on 1/N of the parameters
// and the stage's collectives, each half of a ring allreduce's price (α-β-γ,
// nn/coll/coll_cost.c). Stages 1-2: a reduce-scatter and an allgather of the whole model
// after backward, as the simulated step runs them (sim/rank_zero.c), nothing overlapped.
// Stage 3: per layer unit its allgathers (sim/zero.h dt_zero3_units: two, a tied unit more)
// and a reduce-scatter, on zero3_timeline's one channel beside the layers' compute: unit k's
// backward is the time between the ready events (ev, seconds since backward began) that
// carry its elements, its forward fw in the same proportions.
int dtsim_gpt_analytic(const dtsim_opts *o, dtsim_result *r, double opt_s, const dt_net *net,
                       const dt_grad_event *ev, int n_ev, double fw, double bw) {
    dt_coll_opts co = dtsim_coll_for(o, &o->cluster);
    dt_error err = {0};
    if (dt_coll_opts_resolve(&co, o->gpus, &err)) return fprintf(stderr, "dtsim: %s\n", err.msg), 2;
    double wire = co.wire_f16 ? 2 : 4, bytes = (double)r->params * wire;
    double half = o->gpus > 1 ? dt_coll_cost(DT_ALGO_RING, &co, o->gpus, bytes) / 2 : 0;
    double comm = 2 * half, f = o->gpus > 1 ? (o->gpus - 1.0) / o->gpus : 0;
    double step = r->compute_s + comm;  // stages 1-2: one after another
    r->buckets = 1;
    r->comm_bytes = 2 * bytes * f;  // what a GPU sends: a ring's (N-1)/N of each
    if (o->shard >= 3 && o->gpus > 1) {
        size_t *lo = callocCheck((size_t)net->n_layers + 1, sizeof(size_t));
        int *gathers = callocCheck((size_t)net->n_layers + 1, sizeof(int));
        double peak;
        int n = r->buckets = dt_zero3_units(net, o->shard_blocks, lo, gathers, &peak);
        double *uf = callocCheck(3 * (size_t)n + 3, sizeof(double));
        double *ub = uf + n + 1, *uh = ub + n + 1;
        comm = r->comm_bytes = 0;
        for (int k = 0; k < n; k++) {
            double u = (double)(lo[k + 1] - lo[k]) * wire;
            uh[k] = dt_coll_cost(DT_ALGO_RING, &co, o->gpus, u) / 2;
            comm += (gathers[k] + 1) * uh[k];
            r->comm_bytes += (gathers[k] + 1) * u * f;
        }
        double prev = 0, spread = 0;
        for (int i = 0; i < n_ev; i++) {  // each event's time over the units it completes
            double dt = ev[i].ready - prev, len = (double)(ev[i].hi - ev[i].lo);
            if (len <= 0) continue;  // its time goes to the next event with elements
            prev = ev[i].ready;
            for (int k = 0; k < n; k++) {
                double a = fmax((double)lo[k], (double)ev[i].lo);
                double z = fmin((double)lo[k + 1], (double)ev[i].hi);
                if (z > a) ub[k] += dt * (z - a) / len;
            }
        }
        ub[0] += bw - prev;  // what runs after the last gradient (the embedding's)
        for (int k = 0; k < n; k++) spread += ub[k];
        for (int k = 0; k < n; k++) uf[k] = spread > 0 ? fw * ub[k] / spread : fw / n;
        step = r->compute_s - fw - bw + zero3_timeline(n, uf, ub, uh, gathers);
        free(uf), free(lo), free(gathers);
    }
    r->compute_s += opt_s / o->gpus - opt_s;
    step += opt_s / o->gpus - opt_s;
    r->comm_s = r->model_comm_s = comm;
    r->exposed_s = step - r->compute_s;
    r->iter_s = step;
    r->iter_p50_s = r->iter_p95_s = r->iter_max_s = r->iter_s;
    snprintf(r->algo, sizeof r->algo, "ring");
    r->images_s = o->per_gpu_batch * (double)o->gpus / r->iter_s;
    r->efficiency = r->images_s / (o->gpus * o->per_gpu_batch / r->single_iter_s);
    r->epoch_s = o->dataset / r->images_s;
    r->train_s = r->epoch_s * o->epochs;
    r->gpu_hours = o->gpus * r->train_s / 3600;
    return 0;
}

int dtsim_seq_tokens(const dtsim_opts *o) {
    const dt_gpt_shape *s = dt_sim_is_gpt(o->model) ? dt_gpt_find(o->model) : NULL;
    return s ? (o->seq_len ? o->seq_len : s->context) : 0;
}

const char *dtsim_samples(const dtsim_opts *o) {
    return dt_sim_is_gpt(o->model) ? "sequences" : "images";
}

void dtsim_gpt_report(FILE *f, const dtsim_opts *o, const dtsim_result *r) {
    if (dtsim_is_3d(o)) return dtsim_3d_report(f, o, r);
    int T = dtsim_seq_tokens(o);
    if (T > 0)
        fprintf(f, "tokens/s: %.0f (%d sequences of %d tokens per GPU; %.0f tokens/s per GPU)\n",
                r->images_s * T, o->per_gpu_batch, T, r->images_s * T / r->gpus);
    if (!r->has_mem) return;
    const dt_gpu_profile *g = dt_gpu_find(o->cluster.gpu);
    char gathered[96] = "";
    if (o->shard >= 3)
        snprintf(gathered, sizeof gathered, " (%.2f of them gathered: a %s and the next)",
                 r->mem_gathered / GIB, o->shard_blocks ? "block" : "layer");
    fprintf(f, "memory per GPU, ZeRO stage %d (%s): %.2f GiB = parameters %.2f%s + gradients "
               "%.2f + %s state %.2f + activations %.2f, of the %s's %.0f GiB (model states: "
               "Rajbhandari et al. 2020, %s)\n",
            o->shard, dt_zero_name(o->shard), r->mem_total / GIB, r->mem_params / GIB, gathered,
            r->mem_grads / GIB, dtsim_optim_label(o), r->mem_optim / GIB, r->mem_act / GIB,
            g ? g->name : "GPU", g ? g->mem_bytes / GIB : 0,
            o->prec == DT_PREC_FP16 ? "2+2+K bytes per parameter in mixed precision"
                                    : "4+4+K bytes per parameter in fp32");
}

void dtsim_gpt_json(dt_json_writer *w, const dtsim_opts *o, const dtsim_result *r) {
    if (dtsim_is_3d(o)) return dtsim_3d_json(w, o, r);
    int T = dtsim_seq_tokens(o);
    if (T > 0) {
        dt_json_write_int(w, "seq_len", T);
        dt_json_write_real(w, "tokens_per_s", r->images_s * T);
        dt_json_write_real(w, "sequences_per_s", r->images_s);  // (= images_per_s)
    }
    if (!r->has_mem) return;
    const dt_gpu_profile *g = dt_gpu_find(o->cluster.gpu);
    dt_json_write_int(w, "shard", o->shard);
    dt_json_write_real(w, "mem_params_bytes", r->mem_params);
    if (o->shard >= 3) dt_json_write_real(w, "mem_params_gathered_bytes", r->mem_gathered);
    dt_json_write_real(w, "mem_grads_bytes", r->mem_grads);
    dt_json_write_real(w, "mem_optim_bytes", r->mem_optim);
    dt_json_write_real(w, "mem_activations_bytes", r->mem_act);
    dt_json_write_real(w, "mem_total_bytes", r->mem_total);
    dt_json_write_real(w, "gpu_mem_bytes", g ? g->mem_bytes : 0);
    // what the simulated collectives sent (nn/coll dt_coll_bytes_sent); --analytic under a
    // stage: the closed form's
    if (!o->analytic || o->shard > 0) dt_json_write_real(w, "comm_bytes_per_gpu", r->comm_bytes);
}
