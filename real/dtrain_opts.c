// dtrain_opts.c — dtrain's command line: getopt_long, defaults that train something
// meaningful with no arguments (Fashion-MNIST's 2-conv baseline, smallcnn, to ~91.6 % top-1
// in 5 epochs: about 6 minutes on 2 cores), and checks that name the option and what was
// expected (exit code 2: docs/conventions.md, "Exit codes").
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dtrain.h"
#include "models.h"

void dtrain_usage(FILE *f) {
    fprintf(f,
        "usage: mpirun -np P dtrain [options]\n"
        "Data-parallel training on the CPU or on GPUs (--device cuda): the global batch is split\n"
        "over the P ranks and the gradients are averaged with dtlab's allreduce, so the\n"
        "replicas stay identical.\n"
        "\n"
        "  --model NAME          %s (default smallcnn)\n"
        "  --data SRC            fashion-mnist | synthetic | folder:ROOT (ROOT/class/*.png|jpg);\n"
        "                        gpt models: fortunes (Debian's fortunes-min, default) |\n"
        "                        text:FILE, byte-level tokens, the last 10 %% held out\n"
        "  --seq-len T           gpt models: tokens per sequence (default: the context)\n"
        "  --data-dir DIR        Fashion-MNIST idx.gz files (default %s)\n"
        "  --image-size N        crop side for folder data, side of synthetic images (224 / 32)\n"
        "  --classes N           classes of synthetic data (10)\n"
        "  --synthetic-examples N  examples of synthetic data (60000)\n"
        "  --train-examples N    train on the first N training examples only (default all)\n"
        "  --epochs N            (default 5)\n"
        "  --batch N             global batch over all ranks (default 128)\n"
        "  --accumulate K        K micro-batches per step, one allreduce (Horovod's\n"
        "                        backward_passes_per_step): micro-batch = batch/(ranks x K)\n"
        "  --lr X                peak learning rate (default: 0.1 x batch/256, linear scaling)\n"
        "  --warmup EPOCHS       linear warm-up (default 0.5)\n"
        "  --optimizer sgd|lars|adamw|lamb  (default sgd; gpt models adamw)\n"
        "  --lr-schedule const|step|poly|cosine   decay after warm-up (default poly, power\n"
        "                        2; gpt models cosine to 0.1 x peak)\n"
        "  --clip X|off          clip the gradient's global norm to X (gpt models 1.0; off)\n"
        "  --momentum X --wd X --trust X --nesterov   (0.9, 5e-4, LARS trust 0.001)\n"
        "  gpt models' defaults: --batch 16 --lr 3e-3 (lamb 3e-2) --wd 0.1 --warmup 1,\n"
        "                        betas (0.9, 0.95) (docs/dtrain.md)\n"
        "  --dropout P           classifier dropout of alexnet and smallcnn (0.5)\n"
        "  --seed N              shuffles, augmentation, dropout and initial weights (1)\n"
        "  --threads N           threads per rank (default: cores / ranks on the node)\n"
        "  --device cpu|cuda     where the math runs (cpu); cuda: one GPU per rank, by local rank\n"
        "  --deterministic       cuda: bit-reproducible math (fp32 gemms, no TF32)\n"
        "  --precision P         fp32 | fp16 | bf16: activations and their gradients stored\n"
        "                        in half, fp32 master weights and math (default fp32)\n"
        "  --loss-scale S|off    fp16: initial dynamic loss scale (65536); off: none\n"
        "  --loss-scale-interval N  fp16: double the scale after N clean steps (2000)\n"
        "  --checkpoint-dir DIR  write DIR/checkpoint.safetensors after every epoch (and\n"
        "                        at SIGTERM/Ctrl-C, after the step in flight)\n"
        "  --resume              continue from DIR/checkpoint.safetensors\n"
        "  --eval-every N        test top-1 every N epochs (1; 0 never)\n"
        "  --log FILE.csv        one row per epoch\n"
        "  --json                print the final summary as JSON on stdout\n"
        "  --max-steps N         stop after N optimizer steps in total\n"
        "  --profile FILE.json   time the step per layer kind (after 2 warm-up steps; the\n"
        "                        device waited for at every layer) for `dtsim calibrate`\n"
        "  --save-weights FILE   final weights as safetensors (torchvision names)\n"
        "  --weights FILE        start from these weights (safetensors with torchvision's\n"
        "                        state_dict names, e.g. safetensors.torch.save_file(\n"
        "                        model.state_dict(), FILE)); every tensor must match\n"
        "  --weights-new-head    fine-tuning: the classifier (fc, classifier.6) keeps its\n"
        "                        fresh initialisation; the file's may have another shape\n"
        "  --trace FILE.json     a Chrome trace (Perfetto, chrome://tracing) of every rank:\n"
        "                        forward, each layer's backward, each bucket's allreduce,\n"
        "                        the step; the same event names as dtsim --trace\n"
        "  --trace-steps N       the steps it holds, after the first (5)\n"
        "  --slow-rank R:F       rank R a straggler: after each layer's forward and\n"
        "                        backward it waits F-1 times what the layer took (dtsim\n"
        "                        --straggler rank:R:F; the allreduce is not slowed)\n"
        "  --quiet               no live progress line\n"
        "communication:\n"
        "  --algo NAME           allreduce: %s (default ring)\n"
        "  --fusion SPEC         gradient buckets: %s\n"
        "                        (default 64MiB, Horovod's threshold)\n"
        "  --no-overlap          start the allreduces after backward, not during it\n"
        "  --shard-optimizer     ZeRO stage 1: reduce-scatter the gradient, each rank keeps\n"
        "                        and steps the momentum of its 1/P shard, allgather the\n"
        "                        parameters (2 or more ranks)\n"
        "  --fp16-grads          gradients in fp16 on the wire, summed in fp32\n"
        "  --group N             hier: ranks per group (default: ranks per node from mpirun)\n"
        "  --inner ring|rhd      hier/torus2d: the allreduce between groups (ring)\n"
        "  --hier-rs             hier: reduce-scatter/allgather variant (default reduce/bcast)\n"
        "  --torus XxY           torus2d grid (default: the squarest)\n"
        "  --cuda-aware          cuda: hand GPU buffers to a CUDA-aware MPI (default: staged\n"
        "                        through pinned host memory in chunks)\n"
        "  --help\n",
        dt_model_names(), DT_FASHION_MNIST_DIR, DT_ALGO_VALID, DT_FUSION_VALID);
}

static int bad(int rank, const char *opt, const char *val, const char *want) {
    if (rank == 0)
        fprintf(stderr, "dtrain: option %s: '%s' is not %s (see dtrain --help)\n", opt, val,
                want);
    return 2;
}

static int parse_long(const char *s, long lo, long hi, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

static int parse_float(const char *s, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

static void copy_str(char *dst, size_t n, const char *src) { snprintf(dst, n, "%s", src); }

static void defaults(dtrain_opts *o) {
    memset(o, 0, sizeof *o);
    copy_str(o->model, sizeof o->model, "smallcnn");
    copy_str(o->data, sizeof o->data, "fashion-mnist");
    copy_str(o->data_dir, sizeof o->data_dir, DT_FASHION_MNIST_DIR);
    o->image_size = 0;
    o->classes = 10;
    o->synthetic_n = 60000;
    o->epochs = 5;
    o->global_batch = 128;
    o->lr = 0;
    o->warmup_epochs = 0.5;
    o->optimizer = DT_OPT_SGD;
    o->lr_schedule = DT_LR_POLY;
    o->momentum = 0.9f;
    o->weight_decay = 5e-4f;
    o->trust = 0.001f;
    o->seed = 1;
    o->eval_every = 1;
    o->fault_die_step = -1;
    o->fault_nan_step = -1;
    o->dropout = 0.5f;
    o->coll = dt_coll_opts_default();
    o->fusion = (dt_fusion_opts){DT_FUSION_BYTES, (size_t)64 << 20, 2};
    o->overlap = 1;
    o->accumulate = 1;
    o->precision = DT_AMP_FP32;
    o->loss_scale = 65536.0f;  // torch.cuda.amp.GradScaler's init_scale and growth_interval
    o->loss_scale_interval = 2000;
    o->fault_inf_step = -1;
    o->trace_steps = 5;
    o->slow_rank = -1;
}

int dtrain_parse(int argc, char **argv, dtrain_opts *o, int rank) {
    enum { MODEL = 256, DATA, DATA_DIR, IMG, CLASSES, SYN_N, EPOCHS, BATCH, LR, WARMUP, OPT,
           LR_SCHED, MOM, WD, TRUST, NEST, SEED, THREADS, CKPT, RESUME, EVAL, LOG, JSON, MAXS,
           SAVEW, QUIET, DIE, FNAN, DROP, HELP, ALGO, FUSION, NOOVL, FP16G, GROUP,
           INNER, HIERRS, TORUS, DEVICE, CUDAAWARE, DETERM, PREC, LSCALE, LSINT, FINF, TRAINN, ACCUM, PROFILE,
           WEIGHTS, NEWHEAD, TRACE, TRACESTEPS, SLOWRANK, SHARDOPT, SEQLEN, CLIP };
    static const struct option opts[] = {
        {"model", 1, 0, MODEL}, {"data", 1, 0, DATA}, {"data-dir", 1, 0, DATA_DIR},
        {"image-size", 1, 0, IMG}, {"classes", 1, 0, CLASSES},
        {"synthetic-examples", 1, 0, SYN_N}, {"epochs", 1, 0, EPOCHS}, {"batch", 1, 0, BATCH},
        {"lr", 1, 0, LR}, {"warmup", 1, 0, WARMUP}, {"optimizer", 1, 0, OPT},
        {"lr-schedule", 1, 0, LR_SCHED}, {"momentum", 1, 0, MOM}, {"wd", 1, 0, WD},
        {"trust", 1, 0, TRUST}, {"nesterov", 0, 0, NEST}, {"seed", 1, 0, SEED},
        {"threads", 1, 0, THREADS}, {"checkpoint-dir", 1, 0, CKPT}, {"resume", 0, 0, RESUME},
        {"eval-every", 1, 0, EVAL}, {"log", 1, 0, LOG}, {"json", 0, 0, JSON},
        {"profile", 1, 0, PROFILE},
        {"max-steps", 1, 0, MAXS}, {"save-weights", 1, 0, SAVEW}, {"quiet", 0, 0, QUIET},
        {"weights", 1, 0, WEIGHTS}, {"weights-new-head", 0, 0, NEWHEAD},
        {"trace", 1, 0, TRACE}, {"trace-steps", 1, 0, TRACESTEPS},
        {"slow-rank", 1, 0, SLOWRANK},
        {"fault-die-at-step", 1, 0, DIE},
        {"fault-nan-at-step", 1, 0, FNAN}, {"dropout", 1, 0, DROP}, {"help", 0, 0, HELP},
        {"algo", 1, 0, ALGO}, {"fusion", 1, 0, FUSION}, {"no-overlap", 0, 0, NOOVL},
        {"fp16-grads", 0, 0, FP16G}, {"group", 1, 0, GROUP}, {"inner", 1, 0, INNER},
        {"hier-rs", 0, 0, HIERRS}, {"torus", 1, 0, TORUS}, {"device", 1, 0, DEVICE},
        {"precision", 1, 0, PREC}, {"loss-scale", 1, 0, LSCALE},
        {"loss-scale-interval", 1, 0, LSINT}, {"fault-inf-grad-at-step", 1, 0, FINF},
        {"train-examples", 1, 0, TRAINN}, {"accumulate", 1, 0, ACCUM},
        {"cuda-aware", 0, 0, CUDAAWARE}, {"deterministic", 0, 0, DETERM},
        {"shard-optimizer", 0, 0, SHARDOPT},
        {"seq-len", 1, 0, SEQLEN}, {"clip", 1, 0, CLIP},
        {"schedule", 1, 0, LR_SCHED},  // the old name of --lr-schedule, still accepted
        {0, 0, 0, 0}};
    defaults(o);
    // gpt models take other defaults for these where the command line leaves them
    int given_data = 0, given_opt = 0, given_sched = 0, given_wd = 0, given_clip = 0,
        given_batch = 0, given_lr = 0, given_warmup = 0;
    opterr = 0;
    optind = 1;
    for (int c, li; (li = -1, c = getopt_long(argc, argv, "", opts, &li)) != -1;) {
        long v;
        double x;
        // The option for messages: a known one by its full name (argv[optind - 1] is the
        // value when that came as a separate word), anything else as typed.
        char known[48];
        const char *name = optind > 1 ? argv[optind - 1] : "?";
        if (li >= 0) snprintf(known, sizeof known, "--%s", opts[li].name), name = known;
        switch (c) {
        case MODEL: copy_str(o->model, sizeof o->model, optarg); break;
        case DATA:
            if (strcmp(optarg, "fashion-mnist") && strcmp(optarg, "synthetic") &&
                strncmp(optarg, "folder:", 7) && strcmp(optarg, "fortunes") &&
                (strncmp(optarg, "text:", 5) || !optarg[5]))
                return bad(rank, "--data", optarg, "fashion-mnist, synthetic, folder:ROOT, "
                           "fortunes or text:FILE");
            copy_str(o->data, sizeof o->data, optarg);
            given_data = 1;
            break;
        case DATA_DIR: copy_str(o->data_dir, sizeof o->data_dir, optarg); break;
        case IMG:
            if (parse_long(optarg, 1, 4096, &v)) return bad(rank, "--image-size", optarg, "1..4096");
            o->image_size = (int)v;
            break;
        case CLASSES:
            if (parse_long(optarg, 2, 100000, &v)) return bad(rank, "--classes", optarg, "2..100000");
            o->classes = (int)v;
            break;
        case SYN_N:
            if (parse_long(optarg, 1, 1L << 40, &v)) return bad(rank, name, optarg, "a positive count");
            o->synthetic_n = v;
            break;
        case ACCUM:
            if (parse_long(optarg, 1, 1 << 20, &v))
                return bad(rank, "--accumulate", optarg, "a positive number of micro-batches");
            o->accumulate = (int)v;
            break;
        case TRAINN:
            if (parse_long(optarg, 1, 1L << 40, &v)) return bad(rank, "--train-examples", optarg, "a positive count");
            o->train_examples = v;
            break;
        case EPOCHS:
            if (parse_long(optarg, 1, 100000, &v)) return bad(rank, "--epochs", optarg, "1..100000");
            o->epochs = (int)v;
            break;
        case BATCH:
            if (parse_long(optarg, 1, 1 << 24, &v)) return bad(rank, "--batch", optarg, "a positive batch size");
            o->global_batch = (int)v;
            given_batch = 1;
            break;
        case LR:
            if (parse_float(optarg, 1e-12, 1e4, &x)) return bad(rank, "--lr", optarg, "a positive learning rate");
            o->lr = (float)x;
            given_lr = 1;
            break;
        case WARMUP:
            if (parse_float(optarg, 0, 1e5, &x)) return bad(rank, "--warmup", optarg, "epochs >= 0");
            o->warmup_epochs = x;
            given_warmup = 1;
            break;
        case OPT:
            if (!strcmp(optarg, "sgd")) o->optimizer = DT_OPT_SGD;
            else if (!strcmp(optarg, "lars")) o->optimizer = DT_OPT_LARS;
            else if (!strcmp(optarg, "adamw")) o->optimizer = DT_OPT_ADAMW;
            else if (!strcmp(optarg, "lamb")) o->optimizer = DT_OPT_LAMB;
            else return bad(rank, "--optimizer", optarg, "sgd, lars, adamw or lamb");
            given_opt = 1;
            break;
        case LR_SCHED:  // --lr-schedule, or its old name --schedule (messages name the one used)
            if (!strcmp(optarg, "const")) o->lr_schedule = DT_LR_CONST;
            else if (!strcmp(optarg, "step")) o->lr_schedule = DT_LR_STEP;
            else if (!strcmp(optarg, "poly")) o->lr_schedule = DT_LR_POLY;
            else if (!strcmp(optarg, "cosine")) o->lr_schedule = DT_LR_COSINE;
            else return bad(rank, name, optarg, "const, step, poly or cosine");
            given_sched = 1;
            break;
        case MOM:
            if (parse_float(optarg, 0, 0.9999, &x)) return bad(rank, "--momentum", optarg, "in [0, 1)");
            o->momentum = (float)x;
            break;
        case WD:
            if (parse_float(optarg, 0, 1, &x)) return bad(rank, "--wd", optarg, "in [0, 1]");
            o->weight_decay = (float)x;
            given_wd = 1;
            break;
        case TRUST:
            if (parse_float(optarg, 1e-9, 10, &x)) return bad(rank, "--trust", optarg, "a positive trust coefficient");
            o->trust = (float)x;
            break;
        case NEST: o->nesterov = 1; break;
        case SEED:
            if (parse_long(optarg, 0, 1L << 62, &v)) return bad(rank, "--seed", optarg, "a non-negative integer");
            o->seed = (uint64_t)v;
            break;
        case THREADS:
            if (parse_long(optarg, 1, 1024, &v)) return bad(rank, "--threads", optarg, "1..1024");
            o->threads = (int)v;
            break;
        case CKPT: copy_str(o->checkpoint_dir, sizeof o->checkpoint_dir, optarg); break;
        case RESUME: o->resume = 1; break;
        case EVAL:
            if (parse_long(optarg, 0, 100000, &v)) return bad(rank, "--eval-every", optarg, "epochs >= 0");
            o->eval_every = (int)v;
            break;
        case LOG: copy_str(o->log_csv, sizeof o->log_csv, optarg); break;
        case JSON: o->json = 1; break;
        case PROFILE: copy_str(o->profile, sizeof o->profile, optarg); break;
        case MAXS:
            if (parse_long(optarg, 1, 1L << 50, &v)) return bad(rank, "--max-steps", optarg, "a positive count");
            o->max_steps = v;
            break;
        case SAVEW: copy_str(o->save_weights, sizeof o->save_weights, optarg); break;
        case WEIGHTS: copy_str(o->weights, sizeof o->weights, optarg); break;
        case NEWHEAD: o->weights_new_head = 1; break;
        case TRACE: copy_str(o->trace, sizeof o->trace, optarg); break;
        case TRACESTEPS:
            if (parse_long(optarg, 1, 1000, &v)) return bad(rank, "--trace-steps", optarg, "1 .. 1000 steps");
            o->trace_steps = (int)v;
            break;
        case SLOWRANK: {  // R:F, dtsim's --straggler rank:R:F (sim/straggler.h)
            char *colon = strchr(optarg, ':'), r_str[32];
            if (!colon || colon - optarg >= (long)sizeof r_str)
                return bad(rank, "--slow-rank", optarg, "RANK:FACTOR, e.g. 1:1.5");
            memcpy(r_str, optarg, (size_t)(colon - optarg));
            r_str[colon - optarg] = 0;
            if (parse_long(r_str, 0, 1 << 20, &v))
                return bad(rank, "--slow-rank", optarg, "RANK:FACTOR with RANK a rank number >= 0");
            if (parse_float(colon + 1, 1, 100, &x))
                return bad(rank, "--slow-rank", optarg, "RANK:FACTOR with FACTOR in [1, 100] "
                           "(how many times slower; 1 is full speed)");
            o->slow_rank = (int)v, o->slow_factor = x;
            break;
        }
        case QUIET: o->quiet = 1; break;
        case DIE:
            if (parse_long(optarg, 0, 1L << 50, &v)) return bad(rank, name, optarg, "a step number");
            o->fault_die_step = v;
            break;
        case FNAN:
            if (parse_long(optarg, 0, 1L << 50, &v)) return bad(rank, name, optarg, "a step number");
            o->fault_nan_step = v;
            break;
        case DROP:
            if (parse_float(optarg, 0, 0.99, &x)) return bad(rank, "--dropout", optarg, "in [0, 0.99]");
            o->dropout = (float)x;
            break;
        case ALGO:
        case INNER:
        case FUSION: {
            dt_error e;
            dt_algo a;
            int fail = c == FUSION ? dt_fusion_parse(optarg, &o->fusion, &e)
                                   : dt_algo_parse(optarg, name, &a, &e);
            if (fail) {
                if (rank == 0) fprintf(stderr, "dtrain: %s\n", e.msg);
                return 2;
            }
            if (c == ALGO) o->coll.algo = a;
            if (c == INNER && a != DT_ALGO_RING && a != DT_ALGO_RHD)
                return bad(rank, "--inner", optarg, "ring or rhd");
            if (c == INNER) o->coll.inner = a;
            break;
        }
        case NOOVL: o->overlap = 0; break;
        case DEVICE:
            if (strcmp(optarg, "cpu") && strcmp(optarg, "cuda"))
                return bad(rank, "--device", optarg, "cpu or cuda");
            o->device_cuda = strcmp(optarg, "cuda") == 0;
            break;
        case CUDAAWARE: o->cuda_aware = o->coll.gpu_direct = 1; break;
        case DETERM: o->deterministic = 1; break;
        case SHARDOPT: o->shard_optimizer = 1; break;
        case SEQLEN:
            if (parse_long(optarg, 1, 1 << 20, &v)) return bad(rank, "--seq-len", optarg, "a positive number of tokens");
            o->seq_len = (int)v;
            break;
        case CLIP:
            if (!strcmp(optarg, "off")) o->clip = 0;
            else if (parse_float(optarg, 1e-12, 1e12, &x)) return bad(rank, "--clip", optarg, "a positive gradient norm, or off");
            else o->clip = x;
            given_clip = 1;
            break;
        case FP16G: o->coll.wire_f16 = 1; break;
        case PREC:
            if (dt_amp_parse(optarg, &o->precision))
                return bad(rank, "--precision", optarg, "fp32, fp16 or bf16");
            break;
        case LSCALE:
            if (!strcmp(optarg, "off")) o->loss_scale = 0.0f;
            else if (parse_float(optarg, 1.0, 3.0e38, &x))
                return bad(rank, "--loss-scale", optarg, "a scale >= 1, or off");
            else o->loss_scale = (float)x;
            break;
        case LSINT:
            if (parse_long(optarg, 1, 1L << 30, &v))
                return bad(rank, "--loss-scale-interval", optarg, "a positive step count");
            o->loss_scale_interval = (int)v;
            break;
        case FINF:
            if (parse_long(optarg, 0, LONG_MAX, &v)) return bad(rank, "--fault-inf-grad-at-step", optarg, "a step number");
            o->fault_inf_step = v;
            break;
        case HIERRS: o->coll.hier_rs = 1; break;
        case GROUP:
            if (parse_long(optarg, 1, 1 << 20, &v)) return bad(rank, "--group", optarg, "a positive group size");
            o->coll.group = (int)v;
            break;
        case TORUS: {
            int x, y;
            char tail;
            if (sscanf(optarg, "%dx%d%c", &x, &y, &tail) != 2 || x < 1 || y < 1)
                return bad(rank, "--torus", optarg, "XxY with positive X and Y, e.g. 4x2");
            o->coll.tx = x, o->coll.ty = y;
            break;
        }
        case HELP:
            if (rank == 0) dtrain_usage(stdout);
            return 1;
        default:
            if (rank == 0)
                fprintf(stderr, "dtrain: unknown option or missing value: %s (see dtrain --help)\n",
                        name);
            return 2;
        }
    }
    if (optind < argc) {
        if (rank == 0) fprintf(stderr, "dtrain: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    // The gpt models train on text (dtrain_text.c) with the recipe of GPT-2/3 and llm.c:
    // AdamW, weight decay 0.1, cosine decay, gradients clipped to norm 1 (Brown et al.
    // 2020, app. B); the peak lr (AdamW 3e-3, LAMB 3e-2) and batch 16 are the best of a
    // sweep of gpt2-tiny on fortunes (docs/dtrain.md).
    const dt_gpt_shape *gpt = dt_gpt_find(o->model);
    int text = !strcmp(o->data, "fortunes") || !strncmp(o->data, "text:", 5);
    if (gpt) {
        if (!given_data) copy_str(o->data, sizeof o->data, "fortunes"), text = 1;
        if (!given_opt) o->optimizer = DT_OPT_ADAMW;
        if (!given_sched) o->lr_schedule = DT_LR_COSINE;
        if (!given_wd) o->weight_decay = 0.1f;
        if (!given_clip) o->clip = 1.0;
        if (!given_batch) o->global_batch = 16;
        if (!given_lr) o->lr = o->optimizer == DT_OPT_LAMB ? 3e-2f : 3e-3f;
        if (!given_warmup) o->warmup_epochs = 1;
    }
    if (gpt && !text) {
        if (rank == 0)
            fprintf(stderr, "dtrain: --model %s is a language model: it trains on text "
                            "(--data fortunes or text:FILE), not --data %s\n", o->model, o->data);
        return 2;
    }
    if (!gpt && text) {
        if (rank == 0)
            fprintf(stderr, "dtrain: --data %s is text: it trains the gpt models (--model "
                            "gpt2-tiny, ...), not --model %s\n", o->data, o->model);
        return 2;
    }
    if (o->seq_len && !gpt) {
        if (rank == 0) fprintf(stderr, "dtrain: --seq-len is for the gpt models (got --model %s)\n", o->model);
        return 2;
    }
    if (gpt && o->precision != DT_AMP_FP32) {
        if (rank == 0)
            fprintf(stderr, "dtrain: --precision %s: the gpt models' layers (embedding, layer "
                            "norm, attention) run in fp32 only; drop --precision\n",
                    dt_amp_name(o->precision));
        return 2;
    }
    if (gpt && o->seq_len > gpt->context) {
        if (rank == 0)
            fprintf(stderr, "dtrain: --seq-len %d is longer than --model %s's context of %d "
                            "tokens (its position embedding has %d rows)\n", o->seq_len,
                    o->model, gpt->context, gpt->context);
        return 2;
    }
    if ((o->cuda_aware || o->coll.algo == DT_ALGO_NCCL) && !o->device_cuda) {
        if (rank == 0)
            fprintf(stderr, "dtrain: %s needs --device cuda\n",
                    o->cuda_aware ? "--cuda-aware" : "--algo nccl");
        return 2;
    }
    if (o->deterministic &&
        (o->fusion.mode == DT_FUSION_SEGMENTS || o->fusion.mode == DT_FUSION_AUTO)) {
        if (rank == 0)
            fprintf(stderr, "dtrain: --deterministic needs a byte-threshold --fusion (K "
                            "segments and auto plan from measured times, which vary)\n");
        return 2;
    }
    if (o->trace[0] && o->profile[0]) {
        if (rank == 0)
            fprintf(stderr, "dtrain: --trace and --profile both time the layers (and --profile "
                            "waits for the device at each one): use one at a time\n");
        return 2;
    }
    if (o->weights_new_head && !o->weights[0]) {
        if (rank == 0) fprintf(stderr, "dtrain: --weights-new-head needs --weights FILE\n");
        return 2;
    }
    if (o->weights[0] && o->resume) {
        if (rank == 0)
            fprintf(stderr, "dtrain: --weights %s and --resume: the checkpoint holds the "
                            "weights to continue from; give one of them\n", o->weights);
        return 2;
    }
    if (o->shard_optimizer && (o->checkpoint_dir[0] || o->coll.wire_f16)) {
        if (rank == 0)
            fprintf(stderr, "dtrain: --shard-optimizer and %s: %s\n",
                    o->coll.wire_f16 ? "--fp16-grads" : "--checkpoint-dir",
                    o->coll.wire_f16 ? "the allgather of the parameters would round them to "
                                       "fp16; drop one of the two"
                                     : "a checkpoint holds the whole momentum, which no rank "
                                       "has when it is sharded; drop one of the two");
        return 2;
    }
    if (o->resume && !o->checkpoint_dir[0]) {
        if (rank == 0) fprintf(stderr, "dtrain: --resume needs --checkpoint-dir DIR\n");
        return 2;
    }
    // AdamW and LAMB keep two moments and a step count that neither a checkpoint
    // (real/checkpoint.h: one momentum buffer) nor a stage-1 shard (nn/optim_shard.c) holds
    int adam = o->optimizer == DT_OPT_ADAMW || o->optimizer == DT_OPT_LAMB;
    if (adam && (o->checkpoint_dir[0] || o->shard_optimizer)) {
        if (rank == 0)
            fprintf(stderr, "dtrain: --optimizer %s and %s: %s\n",
                    o->optimizer == DT_OPT_ADAMW ? "adamw" : "lamb",
                    o->shard_optimizer ? "--shard-optimizer" : "--checkpoint-dir",
                    o->shard_optimizer ? "the sharded optimizer steps SGD and LARS only"
                                       : "a checkpoint holds SGD's momentum, not Adam's two "
                                         "moments; drop --checkpoint-dir");
        return 2;
    }
    if (o->clip > 0 && o->shard_optimizer) {
        if (rank == 0)
            fprintf(stderr, "dtrain: --clip and --shard-optimizer: clipping needs the whole "
                            "gradient's norm, which no rank holds when it is sharded; "
                            "--clip off\n");
        return 2;
    }
    return 0;
}
