// optim.c — SGD with momentum (and Nesterov), LARS (You, Gitman, Ginsburg 2017), AdamW
// (Loshchilov & Hutter 2019) and LAMB (You et al. 2019) over the trainable tensors of a
// network, and clipping by global norm: the per-tensor loop, the choice of which tensors take
// weight decay, and the LARS trust ratio from the norms. The per-element arithmetic runs on
// the device (sgd_update / lars_update, formulas in nn/kernels.h); only per-tensor scalars
// are computed here on the host. Not here: learning-rate schedules and loss scaling
// (nn/lr_schedule.c), gradient averaging (coll/), clipping.
#include "optim.h"

#include <math.h>

#include "kernels.h"

dt_optim_config dt_optim_config_default(dt_opt_kind kind) {
    dt_optim_config c;
    c.kind = kind;
    c.momentum = 0.9f;        // Goyal et al. 2017
    c.weight_decay = 1e-4f;   // Goyal et al. 2017
    c.nesterov = 0;
    c.trust = 0.001f;         // LARS eta (docs/formulas.md, "LARS")
    c.eps = 1e-9f;            // LARS epsilon (docs/formulas.md, "LARS")
    c.beta1 = 0.9f, c.beta2 = 0.999f;  // Kingma & Ba 2015; torch.optim.AdamW
    if (kind == DT_OPT_ADAMW || kind == DT_OPT_LAMB) {
        c.momentum = 0.0f;
        c.weight_decay = 0.01f;                       // torch.optim.AdamW; You et al. 2019
        c.eps = kind == DT_OPT_ADAMW ? 1e-8f : 1e-6f;  // torch's; LAMB's BERT runs
    }
    return c;
}

// Checks a configuration; the message names the field and what was expected.
static int check_config(const dt_optim_config *c, dt_error *err) {
    if (c->kind != DT_OPT_SGD && c->kind != DT_OPT_LARS && c->kind != DT_OPT_ADAMW &&
        c->kind != DT_OPT_LAMB)
        return dt_fail(err, DT_EXIT_USAGE,
                       "optimizer: kind %d is not sgd, lars, adamw or lamb", (int)c->kind);
    if (!(c->momentum >= 0.0f && c->momentum < 1.0f))
        return dt_fail(err, DT_EXIT_USAGE, "optimizer: momentum %g must be in [0, 1)",
                       (double)c->momentum);
    if (!(c->weight_decay >= 0.0f && isfinite(c->weight_decay)))
        return dt_fail(err, DT_EXIT_USAGE,
                       "optimizer: weight decay %g must be finite and >= 0",
                       (double)c->weight_decay);
    if (c->nesterov && c->kind != DT_OPT_SGD)
        return dt_fail(err, DT_EXIT_USAGE,
                       "optimizer: nesterov momentum is for sgd only, not lars");
    if (c->nesterov && c->momentum <= 0.0f)  // as torch.optim.SGD
        return dt_fail(err, DT_EXIT_USAGE, "optimizer: nesterov needs momentum > 0");
    if (c->kind == DT_OPT_ADAMW || c->kind == DT_OPT_LAMB) {
        if (!(c->beta1 >= 0.0f && c->beta1 < 1.0f && c->beta2 >= 0.0f && c->beta2 < 1.0f))
            return dt_fail(err, DT_EXIT_USAGE,
                           "optimizer: betas (%g, %g) must each be in [0, 1)",
                           (double)c->beta1, (double)c->beta2);
        if (!(c->eps > 0.0f && isfinite(c->eps)))
            return dt_fail(err, DT_EXIT_USAGE, "optimizer: epsilon %g must be finite and > 0",
                           (double)c->eps);
    }
    if (c->kind == DT_OPT_LARS) {
        if (!(c->trust > 0.0f && isfinite(c->trust)))
            return dt_fail(err, DT_EXIT_USAGE,
                           "optimizer: LARS trust coefficient %g must be finite and > 0",
                           (double)c->trust);
        if (!(c->eps >= 0.0f && isfinite(c->eps)))
            return dt_fail(err, DT_EXIT_USAGE,
                           "optimizer: LARS epsilon %g must be finite and >= 0",
                           (double)c->eps);
    }
    return 0;
}

dt_optim *dt_optim_create(const dt_net *net, const dt_optim_config *cfg, dt_error *err) {
    if (!net || !cfg) {
        dt_fail(err, DT_EXIT_USAGE, "optimizer: %s is NULL", net ? "config" : "network");
        return NULL;
    }
    if (!net->finalized || !net->dev || (net->n_trainable > 0 && !net->grads)) {
        dt_fail(err, DT_EXIT_USAGE,
                "optimizer: network '%s' is not finalized (call dt_net_finalize first)",
                net->model);
        return NULL;
    }
    if (check_config(cfg, err) != 0) return NULL;
    int adam = cfg->kind == DT_OPT_ADAMW || cfg->kind == DT_OPT_LAMB;
    if (adam && (cfg->kind == DT_OPT_ADAMW ? !net->dev->adamw_update
                                           : !net->dev->lamb_direction)) {
        dt_fail(err, DT_EXIT_USAGE, "optimizer: the %s device has no %s update; use the cpu "
                "device or sgd/lars", net->dev->name ? net->dev->name : "?",
                cfg->kind == DT_OPT_ADAMW ? "adamw" : "lamb");
        return NULL;
    }
    dt_optim *opt = callocCheck(1, sizeof *opt);
    opt->cfg = *cfg;
    opt->dev = net->dev;
    opt->n = net->n_trainable;
    // One buffer at the offsets of net->grads, zero-filled by alloc: v_0 = 0.
    opt->velocity = opt->n ? opt->dev->alloc(opt->dev, opt->n * sizeof(float)) : NULL;
    opt->state_bytes = opt->n * sizeof(float);
    opt->step = 0;
    if (adam && opt->n) opt->second = opt->dev->alloc(opt->dev, opt->n * sizeof(float));
    if (cfg->kind == DT_OPT_LAMB && opt->n)
        opt->direction = opt->dev->alloc(opt->dev, opt->n * sizeof(float));
    opt->state_bytes += (size_t)(opt->second != NULL) * opt->n * sizeof(float)
                        + (size_t)(opt->direction != NULL) * opt->n * sizeof(float);
    if (cfg->kind == DT_OPT_LARS || cfg->kind == DT_OPT_LAMB) {
        opt->norm_cap = 2 * net->n_params;
        opt->norm_x = callocCheck((size_t)opt->norm_cap + 1, sizeof *opt->norm_x);
        opt->norm_n = callocCheck((size_t)opt->norm_cap + 1, sizeof *opt->norm_n);
        opt->norm_out = callocCheck((size_t)opt->norm_cap + 1, sizeof *opt->norm_out);
    }
    return opt;
}

// ZeRO stage 1: the same optimizer with momentum for [lo, hi) only (optim_shard.c steps it).
dt_optim *dt_optim_create_shard(const dt_net *net, const dt_optim_config *cfg, size_t lo,
                                size_t hi, dt_error *err) {
    if (net && !(lo <= hi && hi <= net->n_trainable)) {
        dt_fail(err, DT_EXIT_USAGE, "optimizer: shard [%zu, %zu) is not inside the %zu "
                "trainable parameters", lo, hi, net->n_trainable);
        return NULL;
    }
    dt_optim_config c = cfg ? *cfg : dt_optim_config_default(DT_OPT_SGD);
    if (cfg && check_config(cfg, err)) return NULL;
    if (!net || !net->finalized) return dt_optim_create(net, cfg ? &c : NULL, err);
    dt_net shell = *net;  // the checks and tables of dt_optim_create, without its state
    shell.n_trainable = 0;
    dt_optim *opt = dt_optim_create(&shell, &c, err);
    if (!opt) return NULL;
    opt->n = net->n_trainable;
    opt->sharded = 1;
    opt->shard_lo = lo, opt->shard_hi = hi;
    dt_optim_alloc_state(opt, hi - lo);
    return opt;
}

// The state for `elems` elements, zero-filled (alloc): the momentum (AdamW, LAMB: the first
// moment), their second moment, LAMB's direction.
void dt_optim_alloc_state(dt_optim *opt, size_t elems) {
    dt_device *d = opt->dev;
    int adam = opt->cfg.kind == DT_OPT_ADAMW || opt->cfg.kind == DT_OPT_LAMB;
    float **buf[3] = {&opt->velocity, &opt->second, &opt->direction};
    int want[3] = {1, adam, opt->cfg.kind == DT_OPT_LAMB};
    opt->state_bytes = 0;
    for (int k = 0; k < 3; k++) {
        if (*buf[k]) d->free(d, *buf[k]);
        *buf[k] = want[k] && elems ? d->alloc(d, elems * sizeof(float)) : NULL;
        opt->state_bytes += (size_t)want[k] * elems * sizeof(float);
    }
}

void dt_optim_free(dt_optim *opt) {
    if (!opt) return;
    if (opt->velocity) opt->dev->free(opt->dev, opt->velocity);
    if (opt->second) opt->dev->free(opt->dev, opt->second);
    if (opt->direction) opt->dev->free(opt->dev, opt->direction);
    free(opt->norm_x), free(opt->norm_n), free(opt->norm_out);
    free(opt);
}

// torch.optim.SGD (nn/kernels.h dt_sgd_elem): g' = g + wd*w; v = m*v + g';
// w -= lr*(nesterov ? g' + m*v : v). Weight decay only on conv/linear weights (Jia et al.
// 2018: none on biases, BN gamma or beta).
static void sgd_tensor(dt_optim *opt, const dt_param *p, float *w, const float *g, float *v,
                       float lr) {
    float wd = p->kind == DT_PARAM_WEIGHT ? opt->cfg.weight_decay : 0.0f;
    DT_CALL(opt->dev, sgd_update, w, g, v, p->count, lr, opt->cfg.momentum, wd,
            opt->cfg.nesterov);
}

// LARS, You et al. 2017 Alg. 1 in the MLPerf form (docs/formulas.md, "LARS"). For a weight
// tensor:
//   local_lr = eta*|w| / (|g| + wd*|w| + eps)   (dt_lars_local_lr; 1 when |w| = 0 or
//   |g| = 0, as the MLPerf reference: a zero-initialised tensor or one that got no gradient
//   takes a plain momentum step instead of a step of size zero or a division by zero);
//   v = m*v + lr*local_lr*(g + wd*w); w -= v.
// Biases and BN gamma/beta: v = m*v + lr*g; w -= v (no decay, no trust ratio).
// The norms of a weight tensor: sumsq[0] = |w|^2, sumsq[1] = |g|^2 (lars_norms).
static void lars_tensor(dt_optim *opt, const dt_param *p, float *w, const float *g, float *v,
                        float lr, const double *sumsq) {
    const dt_optim_config *c = &opt->cfg;
    if (p->kind != DT_PARAM_WEIGHT) {
        DT_CALL(opt->dev, lars_update, w, g, v, p->count, lr, c->momentum, 0.0f);
        return;
    }
    double wnorm = sqrt(sumsq[0]);
    double gnorm = sqrt(sumsq[1]);
    double local_lr = dt_lars_local_lr(wnorm, gnorm, c->trust, c->weight_decay, c->eps);
    float scaled_lr = (float)((double)lr * local_lr);
    DT_CALL(opt->dev, lars_update, w, g, v, p->count, scaled_lr, c->momentum,
            c->weight_decay);
}

// LARS: |w|^2 and |g|^2 of every weight tensor that takes a trust ratio, in table order, all
// fetched with one device synchronisation (before any update: each tensor's norms are of
// its own w and g, which no other tensor's update touches).
static void lars_norms(dt_optim *opt, const dt_net *net) {
    int k = 0;
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        if (!p->trainable || p->count == 0 || p->kind != DT_PARAM_WEIGHT) continue;
        DT_ASSERT(k + 2 <= opt->norm_cap);
        opt->norm_x[k] = net->params + p->offset, opt->norm_n[k++] = p->count;
        opt->norm_x[k] = net->grads + p->offset, opt->norm_n[k++] = p->count;
    }
    if (k) opt->dev->sumsq_many(opt->dev, k, opt->norm_x, opt->norm_n, opt->norm_out);
}

// Weight decay, and LAMB's trust ratio, apply to weights (conv, linear, embedding) only:
// not to biases or batch/layer norm parameters (You et al. 2019; GPT-2/llm.c decay only the
// 2-D tensors).
static int decays(const dt_param *p) { return p->kind == DT_PARAM_WEIGHT; }

// AdamW and LAMB, step t = opt->step + 1 (bias corrections 1 - beta^t in double).
static void adam_family_step(dt_optim *opt, dt_net *net, float lr) {
    const dt_optim_config *c = &opt->cfg;
    dt_device *d = opt->dev;
    double t = (double)(opt->step + 1);
    double bc1 = 1.0 - pow(c->beta1, t), bc2 = 1.0 - pow(c->beta2, t);
    int k = 0;
    for (int i = 0; i < net->n_params; i++) {  // LAMB: every direction first, then the norms
        const dt_param *p = &net->params_table[i];
        if (!p->trainable || p->count == 0) continue;
        float *w = net->params + p->offset, *m = opt->velocity + p->offset;
        float *v = opt->second + p->offset;
        const float *g = net->grads + p->offset;
        float wd = decays(p) ? c->weight_decay : 0.0f;
        if (c->kind == DT_OPT_ADAMW) {
            d->adamw_update(d, w, g, m, v, p->count, lr, c->beta1, c->beta2, c->eps, wd,
                            (float)((double)lr / bc1), (float)sqrt(bc2));
            continue;
        }
        float *r = opt->direction + p->offset;
        d->lamb_direction(d, w, g, m, v, r, p->count, c->beta1, c->beta2, c->eps, wd,
                          (float)bc1, (float)bc2);
        if (!decays(p)) continue;
        DT_ASSERT(k + 2 <= opt->norm_cap);
        opt->norm_x[k] = w, opt->norm_n[k++] = p->count;
        opt->norm_x[k] = r, opt->norm_n[k++] = p->count;
    }
    if (c->kind != DT_OPT_LAMB) return;
    if (k) d->sumsq_many(d, k, opt->norm_x, opt->norm_n, opt->norm_out);
    const double *sumsq = opt->norm_out;
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        if (!p->trainable || p->count == 0) continue;
        double ratio = 1.0;  // phi(|w|)/|r| with phi the identity; 1 where a norm is 0
        if (decays(p)) {
            double wn = sqrt(sumsq[0]), rn = sqrt(sumsq[1]);
            if (wn > 0.0 && rn > 0.0) ratio = wn / rn;
            sumsq += 2;
        }
        d->axpy(d, (float)(-(double)lr * ratio), opt->direction + p->offset,
                net->params + p->offset, p->count);
    }
}

double dt_clip_grad_norm(dt_net *net, double max_norm) {
    DT_ASSERT(net && net->finalized);
    if (net->n_trainable == 0) return 0.0;
    dt_device *d = net->dev;
    double norm = sqrt(d->sumsq(d, net->grads, net->n_trainable));
    double coef = max_norm / (norm + 1e-6);  // torch.nn.utils.clip_grad_norm_
    if (max_norm > 0.0 && coef < 1.0) d->scale(d, net->grads, (float)coef, net->n_trainable);
    return norm;
}

void dt_optim_step(dt_optim *opt, dt_net *net, float lr) {
    // A different network than the one the state was made for is a programmer error.
    DT_ASSERT(opt && net && net->dev == opt->dev && net->n_trainable == opt->n);
    DT_ASSERT(!opt->sharded);  // (dt_optim_step_shard)
    if (opt->cfg.kind == DT_OPT_ADAMW || opt->cfg.kind == DT_OPT_LAMB) {
        adam_family_step(opt, net, lr);
        opt->step++;
        return;
    }
    if (opt->cfg.kind == DT_OPT_LARS) lars_norms(opt, net);
    const double *sumsq = opt->norm_out;
    for (int i = 0; i < net->n_params; i++) {
        const dt_param *p = &net->params_table[i];
        if (!p->trainable || p->count == 0) continue;
        DT_ASSERT(p->offset + p->count <= opt->n);
        float *w = net->params + p->offset;
        const float *g = net->grads + p->offset;
        float *v = opt->velocity + p->offset;
        if (opt->cfg.kind == DT_OPT_LARS) {
            lars_tensor(opt, p, w, g, v, lr, sumsq);
            if (p->kind == DT_PARAM_WEIGHT) sumsq += 2;
        } else
            sgd_tensor(opt, p, w, g, v, lr);
    }
    opt->step++;
}
