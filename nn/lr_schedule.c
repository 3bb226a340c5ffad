// lr_schedule.c — the learning rate as a function of the step: linear warm-up (Goyal et al.
// 2017, sec. 2.2 "gradual warmup") followed by a constant rate, step decay at milestones
// (Goyal et al.: x0.1 at epochs 30, 60, 80), polynomial decay (You et al. 2017; MLPerf
// LARS: power 2) or cosine decay (Loshchilov & Hutter 2017; GPT-3); the linear scaling
// rule; and dynamic loss scaling for fp16 gradients (Micikevicius et al. 2018, sec. 3.2). Host-side scalars only, apart from the loss
// scaler's two device calls (formulas: docs/formulas.md, "Learning-rate schedules" and
// "Mixed precision and loss scaling"). Not here: the optimizers themselves (nn/optim.c).
#include <math.h>

#include "optim.h"

int dt_lr_schedule_check(const dt_lr_schedule *s, dt_error *err) {
    if (!s) return dt_fail(err, DT_EXIT_USAGE, "lr schedule: NULL");
    if (s->kind != DT_LR_CONST && s->kind != DT_LR_STEP && s->kind != DT_LR_POLY &&
        s->kind != DT_LR_COSINE)
        return dt_fail(err, DT_EXIT_USAGE,
                       "lr schedule: kind %d is not const, step, poly or cosine", (int)s->kind);
    if (!(s->base_lr > 0.0f && isfinite(s->base_lr)))
        return dt_fail(err, DT_EXIT_USAGE, "lr schedule: base lr %g must be finite and > 0",
                       (double)s->base_lr);
    if (!(s->warmup_steps >= 0.0 && isfinite(s->warmup_steps)))
        return dt_fail(err, DT_EXIT_USAGE,
                       "lr schedule: warm-up steps %g must be finite and >= 0",
                       s->warmup_steps);
    if (s->warmup_steps > 0.0 && !(s->warmup_start >= 0.0f && s->warmup_start <= 1.0f))
        return dt_fail(err, DT_EXIT_USAGE,
                       "lr schedule: warm-up start %g (a fraction of the base lr) must be in "
                       "[0, 1]",
                       (double)s->warmup_start);
    if (s->kind == DT_LR_POLY) {
        if (!(s->total_steps > s->warmup_steps && isfinite(s->total_steps)))
            return dt_fail(err, DT_EXIT_USAGE,
                           "lr schedule: poly total steps %g must exceed the warm-up steps %g",
                           s->total_steps, s->warmup_steps);
        if (!(s->power > 0.0f && isfinite(s->power)))
            return dt_fail(err, DT_EXIT_USAGE, "lr schedule: poly power %g must be > 0",
                           (double)s->power);
    }
    if (s->kind == DT_LR_COSINE) {
        if (!(s->total_steps > s->warmup_steps && isfinite(s->total_steps)))
            return dt_fail(err, DT_EXIT_USAGE,
                           "lr schedule: cosine total steps %g must exceed the warm-up steps %g",
                           s->total_steps, s->warmup_steps);
        if (!(s->final_frac >= 0.0f && s->final_frac <= 1.0f))
            return dt_fail(err, DT_EXIT_USAGE,
                           "lr schedule: cosine final fraction %g must be in [0, 1]",
                           (double)s->final_frac);
    }
    if (s->kind == DT_LR_STEP) {
        int n = s->n_milestones;
        int cap = (int)(sizeof s->milestones / sizeof s->milestones[0]);
        if (n < 0 || n > cap)
            return dt_fail(err, DT_EXIT_USAGE, "lr schedule: %d milestones, expected 0 to %d",
                           n, cap);
        if (!(s->gamma > 0.0f && isfinite(s->gamma)))
            return dt_fail(err, DT_EXIT_USAGE, "lr schedule: step gamma %g must be > 0",
                           (double)s->gamma);
        for (int i = 0; i < n; i++) {
            double m = s->milestones[i];
            if (!(m >= s->warmup_steps && isfinite(m)))
                return dt_fail(err, DT_EXIT_USAGE,
                               "lr schedule: milestone %d (step %g) falls inside the warm-up "
                               "(%g steps); milestones start at or after its end",
                               i, m, s->warmup_steps);
            if (i > 0 && m < s->milestones[i - 1])
                return dt_fail(err, DT_EXIT_USAGE,
                               "lr schedule: milestones must not decrease (%g after %g)", m,
                               s->milestones[i - 1]);
        }
    }
    return 0;
}

float dt_lr_at(const dt_lr_schedule *s, double t) {
    if (!(t > 0.0)) t = 0.0;  // negative or NaN: the start
    double base = s->base_lr;
    double w = s->warmup_steps > 0.0 ? s->warmup_steps : 0.0;
    // Goyal et al. 2017 sec. 2.2: lr grows linearly from warmup_start*base to base.
    if (t < w) {
        double start = s->warmup_start;
        return (float)(base * (start + (1.0 - start) * t / w));
    }
    switch (s->kind) {
    case DT_LR_STEP: {
        // multiply by gamma once per milestone reached (torch MultiStepLR: at t == m too)
        int n = s->n_milestones < 0 ? 0 : s->n_milestones > 8 ? 8 : s->n_milestones;
        double lr = base;
        for (int i = 0; i < n; i++)
            if (t >= s->milestones[i]) lr *= s->gamma;
        return (float)lr;
    }
    case DT_LR_POLY: {
        // base*(1 - (t - w)/(T - w))^power, 0 at and past T (and for a degenerate T <= w)
        double span = s->total_steps - w;
        if (!(span > 0.0) || t >= s->total_steps) return 0.0f;
        return (float)(base * pow(1.0 - (t - w) / span, s->power));
    }
    case DT_LR_COSINE: {
        double span = s->total_steps - w, fin = base * s->final_frac;
        if (!(span > 0.0) || t >= s->total_steps) return (float)fin;
        return (float)(fin + (base - fin) * 0.5 * (1.0 + cos(M_PI * (t - w) / span)));
    }
    case DT_LR_CONST:
    default:
        return (float)base;
    }
}

// Goyal et al. 2017 sec. 2.1: "when the minibatch size is multiplied by k, multiply the
// learning rate by k", with lr = 0.1 for 256 images.
float dt_linear_scaling_lr(float lr_per_256, int global_batch) {
    return (float)((double)lr_per_256 * (double)global_batch / 256.0);
}

dt_loss_scaler dt_loss_scaler_default(void) {
    dt_loss_scaler ls;
    ls.scale = 65536.0f;       // 2^16 (torch.cuda.amp.GradScaler's init_scale)
    ls.growth_interval = 2000; // GradScaler's growth_interval
    ls.good_steps = 0;
    ls.skipped = 0;
    return ls;
}

// Micikevicius et al. 2018 sec. 3.2, dynamic loss scaling: an overflow (any NaN/Inf in the
// gradients) halves S and skips the update; after growth_interval overflow-free steps S
// doubles. S never drops below 1 (a scale under 1 would shrink gradients, not protect them)
// and never grows past the largest finite float; growth_interval <= 0 turns growth off.
int dt_loss_scaler_update(dt_loss_scaler *ls, int overflow) {
    DT_ASSERT(ls && ls->scale > 0.0f && isfinite(ls->scale));
    if (overflow) {
        ls->scale = ls->scale * 0.5f < 1.0f ? 1.0f : ls->scale * 0.5f;
        ls->good_steps = 0;
        ls->skipped++;
        return 0;
    }
    if (ls->growth_interval > 0 && ++ls->good_steps >= ls->growth_interval) {
        if (isfinite(ls->scale * 2.0f)) ls->scale *= 2.0f;
        ls->good_steps = 0;
    }
    return 1;
}

int dt_loss_scaler_unscale(dt_loss_scaler *ls, dt_net *net) {
    DT_ASSERT(ls && net && ls->scale > 0.0f && isfinite(ls->scale));
    dt_device *d = net->dev;
    size_t n = net->n_trainable;
    size_t bad = n ? DT_CALL(d, nonfinite, net->grads, n) : 0;
    float s = ls->scale;  // the scale this backward ran with
    if (!dt_loss_scaler_update(ls, bad > 0)) return 0;
    if (n) DT_CALL(d, scale, net->grads, 1.0f / s, n);
    return 1;
}
