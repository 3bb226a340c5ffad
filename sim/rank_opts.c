// rank_opts.c — the table of rank_opts.h and the two walks over it: writing a dt_rank_opts
// as arguments (the launcher) and reading them back (the rank program).
#include "rank_opts.h"
#include "opt_table.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

// Significant digits of a real on the command line: 9. Every float comes back exactly, and a
// double (the α-β-γ figures) comes back rounded to 9 digits; the simulated times depend on
// that rounding (tests/sim/same_bits.sh holds them bit for bit), so it is part of the format.
#define DT_RANK_OPT_DIGITS 9

#define OPT(name, type, member, help) \
    {name, type, offsetof(dt_rank_opts, member), sizeof(((dt_rank_opts *)0)->member), help}

const dt_rank_opt dt_rank_opt_table[] = {
    OPT("model", DT_RANK_OPT_STRING, model, "network (nn/models.h)"),
    OPT("gpu", DT_RANK_OPT_STRING, gpu, "GPU profile (sim/gpu.h)"),
    OPT("precision", DT_RANK_OPT_PRECISION, prec, "conv/gemm math: fp32, tf32 or fp16"),
    OPT("batch", DT_RANK_OPT_INT, batch, "images per GPU"),
    OPT("accumulate", DT_RANK_OPT_INT, accumulate, "micro-batches per step"),
    OPT("iters", DT_RANK_OPT_INT, iters, "timed steps"),
    OPT("warmup", DT_RANK_OPT_INT, warmup, "untimed steps before them"),
    OPT("lars", DT_RANK_OPT_INT, lars, "1: LARS, 0: SGD"),
    OPT("algo", DT_RANK_OPT_ALGO, coll.algo, "allreduce algorithm (nn/coll/coll.h)"),
    OPT("fusion", DT_RANK_OPT_FUSION, fusion, "fusion buckets (nn/coll/fusion.h)"),
    OPT("overlap", DT_RANK_OPT_INT, overlap, "1: allreduces start during backward"),
    OPT("fp16-grads", DT_RANK_OPT_INT, coll.wire_f16, "1: gradients in fp16 on the wire"),
    OPT("group", DT_RANK_OPT_INT, coll.group, "hier: ranks per group"),
    OPT("inner", DT_RANK_OPT_ALGO, coll.inner, "hier's and torus2d's inner allreduce"),
    OPT("hier-rs", DT_RANK_OPT_INT, coll.hier_rs, "1: hier as reduce-scatter/allgather"),
    OPT("tx", DT_RANK_OPT_INT, coll.tx, "torus2d: X (0: automatic)"),
    OPT("ty", DT_RANK_OPT_INT, coll.ty, "torus2d: Y (0: automatic)"),
    OPT("coarsen", DT_RANK_OPT_INT, coll.coarsen, "ring rounds merged per simulated message"),
    OPT("coarsen-dbtree", DT_RANK_OPT_INT, coll.coarsen_tree,
        "dbtree pipeline segments merged per simulated message"),
    OPT("alpha", DT_RANK_OPT_REAL, coll.cost.alpha, "cost model: seconds per message"),
    OPT("beta", DT_RANK_OPT_REAL, coll.cost.beta, "cost model: seconds per byte sent"),
    OPT("alpha-intra", DT_RANK_OPT_REAL, coll.cost.alpha_intra, "the same inside a node"),
    OPT("beta-intra", DT_RANK_OPT_REAL, coll.cost.beta_intra, "the same inside a node"),
    OPT("gamma", DT_RANK_OPT_REAL, coll.cost.gamma, "cost model: seconds per byte reduced"),
    OPT("share", DT_RANK_OPT_REAL, coll.cost.share, "ranks of a node sharing its NICs"),
    OPT("arena", DT_RANK_OPT_U64, arena, "bytes of the shared device arena (0: 8 GiB)"),
    OPT("time-scale", DT_RANK_OPT_REAL, time_scale,
        "every modelled kernel's time x this (0: none; dtsim --gpu-img-s)"),
    OPT("kind-scales", DT_RANK_OPT_STRING, kind_scales,
        "a profile's factor per layer kind, comma-separated (empty: none; dtsim --profile)"),
    OPT("trace", DT_RANK_OPT_STRING, trace, "Chrome trace file (empty: none)"),
    OPT("trace-ranks", DT_RANK_OPT_INT, trace_ranks, "ranks in the trace"),
    OPT("model-side", DT_RANK_OPT_INT, model_side, "input side modelled (0: the model's)"),
    OPT("model-classes", DT_RANK_OPT_INT, model_classes, "classes modelled (0: the model's)"),
    OPT("progress", DT_RANK_OPT_INT, progress, "1: rank 0 shows its progress on stderr"),
    OPT("result", DT_RANK_OPT_STRING, result, "rank 0's result, JSON (empty: stdout)"),
    OPT("cpu", DT_RANK_OPT_INT, cpu, "1: real numbers on the cpu device"),
    OPT("image-size", DT_RANK_OPT_INT, image_size, "cpu: synthetic images' side"),
    OPT("classes", DT_RANK_OPT_INT, classes, "cpu: synthetic classes"),
    OPT("synthetic-examples", DT_RANK_OPT_I64, synthetic_n, "cpu: synthetic examples"),
    OPT("seed", DT_RANK_OPT_U64, seed, "seed of the cpu device's weights and data, and of "
        "the stragglers' draws"),
    OPT("lr", DT_RANK_OPT_REAL, lr, "cpu: learning rate"),
    OPT("momentum", DT_RANK_OPT_REAL, momentum, "cpu: SGD momentum"),
    OPT("wd", DT_RANK_OPT_REAL, wd, "cpu: weight decay"),
    OPT("straggler", DT_RANK_OPT_STRING, straggler, "slow GPUs (sim/straggler.h; \"\": none)"),
    OPT("gpus-per-node", DT_RANK_OPT_INT, gpus_per_node, "GPUs per node, for node: stragglers"),
    OPT("shard", DT_RANK_OPT_INT, shard, "ZeRO stage 0-3 (sim/rank_zero.c; 0: plain data parallel)"),
    OPT("seq-len", DT_RANK_OPT_INT, seq_len, "gpt models: tokens per sequence (0: the context)"),
    OPT("vocab", DT_RANK_OPT_INT, vocab, "gpt models: vocabulary size (0: the model's)"),
    OPT("flash", DT_RANK_OPT_INT, flash, "1: attention fused (FlashAttention: sim/device_model_gpt.c)"),
};
const int dt_rank_opt_count = (int)(sizeof dt_rank_opt_table / sizeof *dt_rank_opt_table);

void dt_rank_opts_default(dt_rank_opts *o) {
    memset(o, 0, sizeof *o);
    snprintf(o->model, sizeof o->model, "resnet50");
    snprintf(o->gpu, sizeof o->gpu, "v100");
    o->batch = 32, o->iters = 3, o->warmup = 1, o->overlap = 1, o->accumulate = 1;
    o->coll = dt_coll_opts_default();
    o->fusion = (dt_fusion_opts){DT_FUSION_SEGMENTS, 0, 2};
    o->image_size = 32, o->classes = 10, o->synthetic_n = 1024, o->seed = 1;
    o->lr = 0.1, o->momentum = 0.9, o->wd = 5e-4;  // dtrain's defaults
    o->gpus_per_node = 8;
}

// Where the option's value lives in o; checks that the table's row fits its type.
static void *value_of(const dt_rank_opt *d, const dt_rank_opts *o) {
    static const size_t bytes[] = {
        [DT_RANK_OPT_INT] = sizeof(int), [DT_RANK_OPT_I64] = sizeof(int64_t),
        [DT_RANK_OPT_U64] = sizeof(uint64_t), [DT_RANK_OPT_REAL] = sizeof(double),
        [DT_RANK_OPT_PRECISION] = sizeof(dt_precision), [DT_RANK_OPT_ALGO] = sizeof(dt_algo),
        [DT_RANK_OPT_FUSION] = sizeof(dt_fusion_opts)};
    DT_ASSERT(d->type == DT_RANK_OPT_STRING || d->size == bytes[d->type]);
    return (char *)o + d->offset;
}

static char *format_value(const dt_rank_opt *d, const dt_rank_opts *o) {
    const void *v = value_of(d, o);
    char val[1024], arg[1100];
    switch (d->type) {
    case DT_RANK_OPT_INT: snprintf(val, sizeof val, "%d", *(const int *)v); break;
    case DT_RANK_OPT_I64: snprintf(val, sizeof val, "%" PRId64, *(const int64_t *)v); break;
    case DT_RANK_OPT_U64: snprintf(val, sizeof val, "%" PRIu64, *(const uint64_t *)v); break;
    case DT_RANK_OPT_REAL:
        snprintf(val, sizeof val, "%.*g", DT_RANK_OPT_DIGITS, *(const double *)v);
        break;
    case DT_RANK_OPT_STRING: snprintf(val, sizeof val, "%s", (const char *)v); break;
    case DT_RANK_OPT_PRECISION:
        snprintf(val, sizeof val, "%s", dt_precision_name(*(const dt_precision *)v));
        break;
    case DT_RANK_OPT_ALGO:
        snprintf(val, sizeof val, "%s", dt_algo_name(*(const dt_algo *)v));
        break;
    case DT_RANK_OPT_FUSION: dt_fusion_format(v, val, sizeof val); break;
    }
    snprintf(arg, sizeof arg, "--%s=%s", d->name, val);
    return strdup(arg);
}

void dt_rank_opts_to_argv(const dt_rank_opts *o, char **argv) {
    for (int i = 0; i < dt_rank_opt_count; i++) argv[i] = format_value(&dt_rank_opt_table[i], o);
}

static int bad_value(const dt_rank_opt *d, const char *s, const char *want, dt_error *err) {
    return dt_fail(err, DT_EXIT_USAGE, "rank program: option --%s: '%s' is not %s", d->name,
                   s, want);
}

// A whole string as a number: strtoll / strtoull / strtod, and nothing after it.
static int whole(const char *s, const char *end) { return end != s && !*end && errno == 0; }

static int parse_value(const dt_rank_opt *d, const char *s, dt_rank_opts *o, dt_error *err) {
    void *v = value_of(d, o);
    char *end;
    errno = 0;
    switch (d->type) {
    case DT_RANK_OPT_INT: {
        long long x;
        if (dt_parse_int(s, INT_MIN, INT_MAX, &x)) return bad_value(d, s, "an int", err);
        *(int *)v = (int)x;
        return 0;
    }
    case DT_RANK_OPT_I64: {
        long long x;
        if (dt_parse_int(s, LLONG_MIN, LLONG_MAX, &x)) return bad_value(d, s, "an integer", err);
        *(int64_t *)v = x;
        return 0;
    }
    case DT_RANK_OPT_U64: {
        unsigned long long x = strtoull(s, &end, 10);
        if (!whole(s, end) || *s == '-') return bad_value(d, s, "an integer >= 0", err);
        *(uint64_t *)v = x;
        return 0;
    }
    case DT_RANK_OPT_REAL:
        if (dt_parse_real(s, -DBL_MAX, DBL_MAX, v)) return bad_value(d, s, "a finite number", err);
        return 0;
    case DT_RANK_OPT_STRING:
        if (strlen(s) >= d->size) return bad_value(d, s, "short enough", err);
        memcpy(v, s, strlen(s) + 1);
        return 0;
    case DT_RANK_OPT_PRECISION:
        for (int p = DT_PREC_FP32; p <= DT_PREC_FP16; p++) {
            if (!strcmp(s, dt_precision_name((dt_precision)p))) {
                *(dt_precision *)v = (dt_precision)p;
                return 0;
            }
        }
        return bad_value(d, s, "fp32, tf32 or fp16", err);
    case DT_RANK_OPT_ALGO: {
        char what[64];
        snprintf(what, sizeof what, "--%s", d->name);
        return dt_algo_parse(s, what, v, err) ? -1 : 0;
    }
    case DT_RANK_OPT_FUSION: return dt_fusion_parse(s, v, err) ? -1 : 0;
    }
    return -1;
}

int dt_rank_opts_parse(int argc, char **argv, dt_rank_opts *o, dt_error *err) {
    dt_rank_opts_default(o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *eq = strchr(a, '=');
        const dt_rank_opt *d = NULL;
        for (int k = 0; k < dt_rank_opt_count && a[0] == '-' && a[1] == '-' && eq; k++) {
            size_t n = strlen(dt_rank_opt_table[k].name);
            if ((size_t)(eq - a - 2) == n && !strncmp(a + 2, dt_rank_opt_table[k].name, n))
                d = &dt_rank_opt_table[k];
        }
        if (!d)
            return dt_fail(err, DT_EXIT_USAGE, "rank program: unknown argument '%s' (it takes "
                           "--name=VALUE; --usage lists the names)", a);
        if (parse_value(d, eq + 1, o, err)) return -1;
    }
    return 0;
}

void dt_rank_opts_usage(FILE *f) {
    dt_rank_opts def;
    dt_rank_opts_default(&def);
    fprintf(f, "dtsim's rank program: SimGrid runs it once per simulated GPU, dtsim passes it "
               "every option.\nusage: smpirun ... dtsim_rank.so --name=VALUE ...\n");
    for (int i = 0; i < dt_rank_opt_count; i++) {
        char *arg = format_value(&dt_rank_opt_table[i], &def);
        fprintf(f, "  %-34s %s\n", arg, dt_rank_opt_table[i].help);
        free(arg);
    }
}
