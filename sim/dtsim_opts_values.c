// dtsim_opts_values.c — the values of dtsim's options that take more than a number or a
// word (sim/dtsim_opts.c's table names these parsers): GPU counts and lists, algorithm
// lists, bandwidths with units, an oversubscription ratio, microseconds, the optimizer, the
// precision, the attention, ZeRO's stage and its units. Each fills the option's field, or
// fails with what it expected (nn/opt_table.h, dt_opt_parse_fn).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtsim.h"
#include "dtsim_opts_values.h"
#include "pipe/pipe_sched.h"
#include "zero.h"

// A GPU count, with the limit when there are too many
int dtsim_parse_gpu_count(const dt_opt *d, const char *what, const char *s, void *v,
        dt_error *err) {
    (void)d;
    long long n;
    if (!dt_parse_int(s, 1, MAX_GPUS, &n)) return *(int *)v = (int)n, 0;
    if (!*s || strspn(s, "0123456789") < strlen(s) || strspn(s, "0") == strlen(s))
        return dt_opt_bad(err, what, s, "a positive count of GPUs");
    return dt_fail(err, DT_EXIT_USAGE, "option %s: %s GPUs is too many: dtsim simulates at most "
                   "%d (2^20), and this machine's memory about %d (bench/DTSIM-SPEED.md)", what,
                   s, MAX_GPUS, dtsim_gpus_that_fit());
}

// --sweep-gpus 8,16,...: up to 32 GPU counts
int dtsim_parse_gpu_list(const dt_opt *d, const char *what, const char *s, void *v,
        dt_error *err) {
    dtsim_opts *o = v;
    char buf[512];
    (void)d;
    o->n_sweep_gpus = 0;
    snprintf(buf, sizeof buf, "%s", s);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        if (o->n_sweep_gpus == 32)
            return dt_opt_bad(err, what, s, "a list of at most 32 GPU counts");
        if (dtsim_parse_gpu_count(d, what, t, &o->sweep_gpus[o->n_sweep_gpus++], err)) return -1;
    }
    if (!o->n_sweep_gpus) return dt_opt_bad(err, what, s, "a comma-separated list of GPU counts");
    return 0;
}

// --sweep-algos ring,hier,...: up to 8 simulated algorithms
int dtsim_parse_algo_list(const dt_opt *d, const char *what, const char *s, void *v,
        dt_error *err) {
    dtsim_opts *o = v;
    char buf[256];
    (void)d;
    o->n_sweep_algos = 0;
    snprintf(buf, sizeof buf, "%s", s);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        if (o->n_sweep_algos == 8) return dt_opt_bad(err, what, s, "at most 8 algorithms");
        dt_algo *a = &o->sweep_algos[o->n_sweep_algos++];
        if (dt_algo_parse(t, what, a, err)) return -1;
        if (*a == DT_ALGO_NCCL)
            return dt_fail(err, DT_EXIT_USAGE, "%s: nccl runs only on real GPUs (dtrain "
                           "--device cuda)", what);
    }
    if (!o->n_sweep_algos) return dt_opt_bad(err, what, s, "a comma-separated list of algorithms");
    return 0;
}

static int bandwidth(const char *what, const char *s, double *bw, dt_bw_unit *unit,
                     const char **typed, dt_error *err) {
    if (dt_parse_bandwidth(s, what, bw, unit, err)) return -1;
    *typed = s;
    return 0;
}
int dtsim_parse_intra_bw(const dt_opt *d, const char *what, const char *s, void *v,
        dt_error *err) {
    dtsim_cluster_args *a = v;
    (void)d;
    return bandwidth(what, s, &a->intra_bw, &a->intra_unit, &a->intra_typed, err);
}
int dtsim_parse_net_bw(const dt_opt *d, const char *what, const char *s, void *v,
        dt_error *err) {
    dtsim_cluster_args *a = v;
    (void)d;
    return bandwidth(what, s, &a->net_bw, &a->net_unit, &a->net_typed, err);
}

// --oversubscription R:1 or R
int dtsim_parse_oversub(const dt_opt *d, const char *what, const char *s, void *v,
        dt_error *err) {
    char buf[32], *colon;
    snprintf(buf, sizeof buf, "%s", s);
    if ((colon = strchr(buf, ':'))) {
        if (strcmp(colon, ":1")) return dt_opt_bad(err, what, s, d->want);
        *colon = 0;
    }
    if (dt_parse_real(buf, 1, 64, v)) return dt_opt_bad(err, what, s, d->want);
    return 0;
}

int dtsim_parse_micros(const dt_opt *d, const char *what, const char *s, void *v,
        dt_error *err) {
    if (dt_parse_real(s, 0, 1e6, v)) return dt_opt_bad(err, what, s, d->want);
    *(double *)v *= 1e-6;
    return 0;
}

// --optimizer: lars | sgd, and for the gpt models adamw | lamb (sim/dtsim_gpt.c checks which
// fits the model once all options are read)
int dtsim_parse_optimizer(const dt_opt *d, const char *what, const char *s, void *v,
        dt_error *err) {
    if (strcmp(s, "lars") && strcmp(s, "sgd") && strcmp(s, "adamw") && strcmp(s, "lamb"))
        return dt_opt_bad(err, what, s, d->want);
    snprintf(v, d->size, "%s", s);
    return 0;
}

// --precision: fp32 | tf32 | fp16 | bf16 (resolved against the GPU in finish)
int dtsim_parse_precision(const dt_opt *d, const char *what, const char *s, void *v,
        dt_error *err) {
    if (strcmp(s, "fp32") && strcmp(s, "tf32") && strcmp(s, "fp16") && strcmp(s, "bf16"))
        return dt_opt_bad(err, what, s, d->want);
    snprintf(v, d->size, "%s", s);
    return 0;
}

// --attention: flash | naive (resolved in sim/dtsim_gpt.c)
int dtsim_parse_attention(const dt_opt *d, const char *what, const char *s, void *v,
        dt_error *err) {
    if (strcmp(s, "flash") && strcmp(s, "naive")) return dt_opt_bad(err, what, s, d->want);
    snprintf(v, d->size, "%s", s);
    return 0;
}

// --shard-units: layer (0) | block (1)
int dtsim_parse_shard_units(const dt_opt *d, const char *what, const char *s, void *v,
        dt_error *err) {
    if (strcmp(s, "layer") && strcmp(s, "block")) return dt_opt_bad(err, what, s, d->want);
    *(int *)v = !strcmp(s, "block");
    return 0;
}

// --shard: ZeRO's stage by number or name (sim/zero.c)
int dtsim_parse_zero_stage(const dt_opt *d, const char *what, const char *s, void *v,
        dt_error *err) {
    return dt_zero_parse(s, v) ? dt_opt_bad(err, what, s, d->want) : 0;
}

// --pp-schedule: gpipe | 1f1b | interleaved:V, into pp_kind and pp_chunks (nn/pipe/pipe_sched.h)
int dtsim_parse_pp_schedule(const dt_opt *d, const char *what, const char *s, void *v,
        dt_error *err) {
    dtsim_opts *o = v;
    long long chunks = 1;
    const char *colon = strchr(s, ':');
    char name[16];
    snprintf(name, sizeof name, "%.*s", colon ? (int)(colon - s) : (int)strlen(s), s);
    int k = dt_pipe_kind_parse(name);
    if (k < 0 || (k == DT_PIPE_INTERLEAVED) != (colon != NULL) ||
        (colon && dt_parse_int(colon + 1, 2, 64, &chunks)))
        return dt_opt_bad(err, what, s, d->want);
    o->pp_kind = k, o->pp_chunks = (int)chunks;
    return 0;
}

// --recompute: none (0) | full (1) | selective (2)
int dtsim_parse_recompute(const dt_opt *d, const char *what, const char *s, void *v,
        dt_error *err) {
    for (int r = 0; r < 3; r++)
        if (!strcmp(s, dt_recompute_name(r))) return *(int *)v = r, 0;
    return dt_opt_bad(err, what, s, d->want);
}
