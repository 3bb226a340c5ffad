// dtrain_opts.c — dtrain's command line: its table of options (nn/opt_table.h; the allreduce
// options are nn/coll/coll_cli.c's, the same as dtsim's), defaults that train something
// meaningful with no arguments (Fashion-MNIST's 2-conv baseline, smallcnn, to ~91.6 % top-1
// in 5 epochs: about 6 minutes on 2 cores), and checks that name the option and what was
// expected (exit code 2: docs/conventions.md, "Exit codes").
#include <stdlib.h>
#include <string.h>

#include "coll/coll_cli.h"
#include "dtrain.h"
#include "models.h"
#include "opt_table.h"

#define AT(member) DT_OPT_AT(dtrain_opts, member)
#define WHOLE .offset = 0, .size = sizeof(dtrain_opts)  // a custom row that sets two fields

static int data_src(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err) {
    if (strcmp(s, "fashion-mnist") && strcmp(s, "synthetic") && strncmp(s, "folder:", 7) &&
        strcmp(s, "fortunes") && strcmp(s, "fortunes-all") &&
        (strncmp(s, "text:", 5) || !s[5]) && (strncmp(s, "tokens:", 7) || !s[7]))
        return dt_opt_bad(err, what, s, d->want);
    return dt_opt_set(&(dt_opt){.type = DT_OPT_STRING, .size = d->size}, what, s, v, err);
}

// --slow-rank R:F, dtsim's --straggler rank:R:F (sim/straggler.h)
static int slow_rank(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err) {
    (void)d;
    dtrain_opts *o = v;
    const char *colon = strchr(s, ':');
    char r[32];
    long long rank;
    double f;
    if (!colon || colon - s >= (long)sizeof r)
        return dt_opt_bad(err, what, s, "RANK:FACTOR, e.g. 1:1.5");
    snprintf(r, sizeof r, "%.*s", (int)(colon - s), s);
    if (dt_parse_int(r, 0, 1 << 20, &rank))
        return dt_opt_bad(err, what, s, "RANK:FACTOR with RANK a rank number >= 0");
    if (dt_parse_real(colon + 1, 1, 100, &f))
        return dt_opt_bad(err, what, s, "RANK:FACTOR with FACTOR in [1, 100] (how many times "
                          "slower; 1 is full speed)");
    o->slow_rank = (int)rank, o->slow_factor = f;
    return 0;
}

// --shard NAME: the trainer's strategy, an entry of its registry (nn/train.h dt_shard_parse:
// ZeRO's optimizer, gradients, parameters), other than the default (replicate);
// --shard-optimizer is --shard optimizer
static int shard(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err) {
    (void)d;
    dtrain_opts *o = v;
    char names[256];
    if (dt_shard_parse(s, &o->shard) || o->shard == DT_SHARD_NONE)
        return dt_opt_bad(err, what, s, dt_shard_choices(names, sizeof names));
    o->shard_optimizer = dt_shard_sharded(o->shard);
    snprintf(o->shard_flag, sizeof o->shard_flag, "--shard %s", s);
    return 0;
}
static const char *shard_help(char *b, size_t n) { return dt_shard_help(b, n); }

// --clip X|off: the largest global gradient norm (0: off)
static int clip(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err) {
    if (!strcmp(s, "off")) return *(double *)v = 0.0, 0;
    if (dt_parse_real(s, 1e-12, 1e12, v)) return dt_opt_bad(err, what, s, d->want);
    return 0;
}

static int loss_scale(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err) {
    double x;
    if (!strcmp(s, "off")) return *(float *)v = 0.0f, 0;
    if (dt_parse_real(s, 1.0, 3.0e38, &x)) return dt_opt_bad(err, what, s, d->want);
    *(float *)v = (float)x;
    return 0;
}

static const char *model_names(char *b, size_t n) {
    return snprintf(b, n, "%s", dt_model_names()), b;
}
static const char *fmnist_dir(char *b, size_t n) {
    return snprintf(b, n, "%s", DT_FASHION_MNIST_DIR), b;
}

static const dt_opt dtrain_table[] = {
    {.type = DT_OPT_SECTION, .help =
        "usage: mpirun -np P dtrain [options]\n"
        "Data-parallel training on the CPU or on GPUs (--device cuda): the global batch is split\n"
        "over the P ranks and the gradients are averaged with dtlab's allreduce, so the\n"
        "replicas stay identical.\n"},
    {.name = "model", .arg = "NAME", .type = DT_OPT_STRING, AT(model),
     .help = "%s (default smallcnn)", .help_arg = model_names},
    {.name = "data", .arg = "SRC", .type = DT_OPT_CUSTOM, AT(data), .parse = data_src,
     .want = "fashion-mnist, synthetic, folder:ROOT, fortunes, fortunes-all, text:FILE or "
             "tokens:DIR",
     .help = "fashion-mnist | synthetic | folder:ROOT (ROOT/class/*.png|jpg);\ngpt models: "
     "fortunes (Debian's fortunes-min, default) |\nfortunes-all (every file of Debian's "
     "fortunes packages) |\ntext:FILE|DIR (a directory: its files in name order),\nthe last "
     "10 % held out; bytes, or BPE with --vocab |\ntokens:DIR (dttok prepare's train.bin, "
     "val.bin and\ntokenizer)"},
    {.name = "vocab", .arg = "N", .type = DT_OPT_INT, AT(vocab), .lo = 258, .hi = DT_BPE_MAX_VOCAB,
     .want = "258 .. 1048576 tokens",
     .help = "gpt models: a byte-level BPE of N tokens (GPT-2's), learned\nfrom the training "
     "split, instead of bytes; the model's\nvocabulary is N (dttok does the same ahead of time)"},
    {.name = "tokenizer", .arg = "DIR", .type = DT_OPT_STRING, AT(tokenizer),
     .help = "gpt models: the BPE of DIR/merges.txt and vocab.json\n(dttok train, --save-hf); "
     "--generate reads it from --weights\nwhen they carry one"},
    {.name = "windows", .arg = "random|fixed", .type = DT_OPT_CHOICE, AT(windows_fixed),
     .choices = "random|fixed", .help = "gpt models: each training window starts 0..T-1 "
     "tokens\npast i*T, drawn per epoch (random, default), or at i*T"},
    {.name = "seq-len", .arg = "T", .type = DT_OPT_INT, AT(seq_len), .lo = 1, .hi = 1 << 20,
     .want = "a positive number of tokens",
     .help = "gpt models: tokens per sequence (default: the context)"},
    {.name = "data-dir", .arg = "DIR", .type = DT_OPT_STRING, AT(data_dir),
     .help = "Fashion-MNIST idx.gz files (default %s)", .help_arg = fmnist_dir},
    {.name = "image-size", .arg = "N", .type = DT_OPT_INT, AT(image_size), .lo = 1, .hi = 4096,
     .want = "1..4096", .help = "crop side for folder data, side of synthetic images (224 / 32)"},
    {.name = "classes", .arg = "N", .type = DT_OPT_INT, AT(classes), .lo = 2, .hi = 100000,
     .want = "2..100000", .help = "classes of synthetic data (10)"},
    {.name = "synthetic-examples", .arg = "N", .type = DT_OPT_I64, AT(synthetic_n), .lo = 1,
     .hi = 1LL << 40, .want = "a positive count", .help = "examples of synthetic data (60000)"},
    {.name = "train-examples", .arg = "N", .type = DT_OPT_I64, AT(train_examples), .lo = 1,
     .hi = 1LL << 40, .want = "a positive count",
     .help = "train on the first N training examples only (default all)"},
    {.name = "epochs", .arg = "N", .type = DT_OPT_INT, AT(epochs), .lo = 1, .hi = 100000,
     .want = "1..100000", .help = "(default 5)"},
    {.name = "batch", .arg = "N", .type = DT_OPT_INT, AT(global_batch), .lo = 1, .hi = 1 << 24,
     .want = "a positive batch size", .help = "global batch over all ranks (default 128)"},
    {.name = "accumulate", .arg = "K", .type = DT_OPT_INT, AT(accumulate), .lo = 1,
     .hi = 1 << 20, .want = "a positive number of micro-batches",
     .help = "K micro-batches per step, one allreduce (Horovod's\n"
             "backward_passes_per_step): micro-batch = batch/(ranks x K)"},
    {.name = "lr", .arg = "X", .type = DT_OPT_FLOAT, AT(lr), .lo = 1e-12, .hi = 1e4,
     .want = "a positive learning rate",
     .help = "peak learning rate (default: 0.1 x batch/256, linear scaling)"},
    {.name = "warmup", .arg = "EPOCHS", .type = DT_OPT_REAL, AT(warmup_epochs), .lo = 0,
     .hi = 1e5, .want = "epochs >= 0", .help = "linear warm-up (default 0.5)"},
    {.name = "optimizer", .arg = "sgd|lars|adamw|lamb", .type = DT_OPT_CHOICE, AT(optimizer),
     .choices = "sgd|lars|adamw|lamb", .help = "(default sgd; gpt models adamw)"},
    {.name = "lr-schedule", .arg = "const|step|poly|cosine", .type = DT_OPT_CHOICE,
     AT(lr_schedule), .choices = "const|step|poly|cosine",
     .help = "decay after warm-up (default poly, power 2;\ngpt models cosine to 0.1 x peak)"},
    {.name = "clip", .arg = "X|off", .type = DT_OPT_CUSTOM, AT(clip), .parse = clip,
     .want = "a positive gradient norm, or off",
     .help = "clip the gradient's global norm to X (gpt models 1.0; off)"},
    {.type = DT_OPT_SECTION, .help = "  gpt models' defaults: --batch 16 --lr 3e-3 (lamb 3e-2) --wd "
     "0.1 --warmup 1,\n                        betas (0.9, 0.95) (docs/dtrain.md)"},
    {.name = "schedule", .arg = "S", .type = DT_OPT_CHOICE, AT(lr_schedule),
     .choices = "const|step|poly|cosine"},  // the old name of --lr-schedule, still accepted
    {.name = "momentum", .arg = "X", .type = DT_OPT_FLOAT, AT(momentum), .lo = 0, .hi = 0.9999,
     .want = "in [0, 1)", .help = "(0.9)"},
    {.name = "wd", .arg = "X", .type = DT_OPT_FLOAT, AT(weight_decay), .lo = 0, .hi = 1,
     .want = "in [0, 1]", .help = "weight decay (5e-4)"},
    {.name = "trust", .arg = "X", .type = DT_OPT_FLOAT, AT(trust), .lo = 1e-9, .hi = 10,
     .want = "a positive trust coefficient", .help = "LARS trust coefficient (0.001)"},
    {.name = "nesterov", .type = DT_OPT_SWITCH, AT(nesterov), .help = "Nesterov momentum"},
    {.name = "dropout", .arg = "P", .type = DT_OPT_FLOAT, AT(dropout), .lo = 0, .hi = 0.99,
     .want = "in [0, 0.99]", .help = "classifier dropout of alexnet and smallcnn (0.5)"},
    {.name = "seed", .arg = "N", .type = DT_OPT_U64, AT(seed), .lo = 0, .hi = 0x1p62,
     .want = "a non-negative integer",
     .help = "shuffles, augmentation, dropout and initial weights (1)"},
    {.name = "threads", .arg = "N", .type = DT_OPT_INT, AT(threads), .lo = 1, .hi = 1024,
     .want = "1..1024", .help = "threads per rank (default: cores / ranks on the node)"},
    {.name = "device", .arg = "cpu|cuda", .type = DT_OPT_CHOICE, AT(device_cuda),
     .choices = "cpu|cuda",
     .help = "where the math runs (cpu); cuda: one GPU per rank, by local rank"},
    {.name = "deterministic", .type = DT_OPT_SWITCH, AT(deterministic),
     .help = "cuda: bit-reproducible math (fp32 gemms, no TF32)"},
    {.name = "precision", .arg = "P", .type = DT_OPT_CHOICE, AT(precision),
     .choices = "fp32|fp16|bf16", .help = "fp32 | fp16 | bf16: activations and their gradients "
     "stored\nin half, fp32 master weights and math (default fp32)"},
    {.name = "loss-scale", .arg = "S|off", .type = DT_OPT_CUSTOM, AT(loss_scale),
     .parse = loss_scale, .want = "a scale >= 1, or off",
     .help = "fp16: initial dynamic loss scale (65536); off: none"},
    {.name = "loss-scale-interval", .arg = "N", .type = DT_OPT_INT, AT(loss_scale_interval),
     .lo = 1, .hi = 1 << 30, .want = "a positive step count",
     .help = "fp16: double the scale after N clean steps (2000)"},
    {.name = "checkpoint-dir", .arg = "DIR", .type = DT_OPT_STRING, AT(checkpoint_dir),
     .help = "write DIR/checkpoint.safetensors after every epoch (and\nat SIGTERM/Ctrl-C, "
     "after the step in flight)"},
    {.name = "checkpoint-every", .arg = "N", .type = DT_OPT_I64, AT(checkpoint_every),
     .lo = 0, .hi = 1LL << 50, .want = "steps >= 0",
     .help = "also every N optimizer steps (0: at epoch ends only)"},
    {.name = "resume", .type = DT_OPT_SWITCH, AT(resume),
     .help = "continue from DIR/checkpoint.safetensors"},
    {.name = "eval-every", .arg = "N", .type = DT_OPT_INT, AT(eval_every), .lo = 0,
     .hi = 100000, .want = "epochs >= 0", .help = "the held-out split every N epochs (1; 0 never): top-1\nand loss (text: bits per byte too)"},
    {.name = "eval-every-steps", .arg = "N", .type = DT_OPT_I64, AT(eval_every_steps),
     .lo = 0, .hi = 1LL << 50, .want = "steps >= 0",
     .help = "also every N optimizer steps (0 never): the held-out\nloss, in bits per byte "
     "for text"},
    {.name = "log", .arg = "FILE.csv", .type = DT_OPT_STRING, AT(log_csv),
     .help = "one row per epoch"},
    {.name = "log-steps", .arg = "FILE.csv", .type = DT_OPT_STRING, AT(log_steps),
     .help = "one row per optimizer step (its loss; the held-out\nloss where "
     "--eval-every-steps evaluated); --json\nholds the steps' losses too"},
    {.name = "json", .type = DT_OPT_SWITCH, AT(json),
     .help = "print the final summary as JSON on stdout"},
    {.name = "max-steps", .arg = "N", .type = DT_OPT_I64, AT(max_steps), .lo = 1,
     .hi = 1LL << 50, .want = "a positive count", .help = "stop after N optimizer steps in total"},
    {.name = "profile", .arg = "FILE.json", .type = DT_OPT_STRING, AT(profile),
     .help = "time the step per layer kind (after 2 warm-up steps; the\ndevice waited for at "
     "every layer) for `dtsim calibrate`"},
    {.name = "save-weights", .arg = "FILE", .type = DT_OPT_STRING, AT(save_weights),
     .help = "final weights as safetensors (torchvision names)"},
    {.name = "weights", .arg = "FILE|DIR", .type = DT_OPT_STRING, AT(weights),
     .help = "start from these weights (safetensors with torchvision's\nstate_dict names, e.g. "
     "safetensors.torch.save_file(\nmodel.state_dict(), FILE)); every tensor must match;\n"
     "gpt models: or a Hugging Face directory (save_pretrained)"},
    {.name = "save-hf", .arg = "DIR", .type = DT_OPT_STRING, AT(save_hf),
     .help = "gpt models: final weights in Hugging Face's GPT-2 layout\n(DIR/model.safetensors, "
     "config.json): GPT2LMHeadModel.\nfrom_pretrained(DIR) loads them"},
    {.name = "weights-new-head", .type = DT_OPT_SWITCH, AT(weights_new_head),
     .help = "fine-tuning: the classifier (fc, classifier.6) keeps its\nfresh initialisation; "
     "the file's may have another shape"},
    {.name = "trace", .arg = "FILE.json", .type = DT_OPT_STRING, AT(trace),
     .help = "a Chrome trace (Perfetto, chrome://tracing) of every rank:\nforward, each layer's "
     "backward, each bucket's allreduce,\nthe step; the same event names as dtsim --trace"},
    {.name = "trace-steps", .arg = "N", .type = DT_OPT_INT, AT(trace_steps), .lo = 1,
     .hi = 1000, .want = "1 .. 1000 steps", .help = "the steps it holds, after the first (5)"},
    {.name = "slow-rank", .arg = "R:F", .type = DT_OPT_CUSTOM, WHOLE, .parse = slow_rank,
     .help = "rank R a straggler: after each layer's forward and\nbackward it waits F-1 times "
     "what the layer took (dtsim\n--straggler rank:R:F; the allreduce is not slowed)"},
    {.name = "quiet", .type = DT_OPT_SWITCH, AT(quiet), .help = "no live progress line"},
    {.name = "shard-optimizer", .type = DT_OPT_SWITCH, AT(shard_optimizer),
     .help = "ZeRO stage 1: reduce-scatter the gradient, each rank keeps\nand steps the "
     "optimizer state (momentum, Adam's moments) of\nits 1/P shard, allgather the parameters "
     "(2 or more ranks)"},
    {.name = "shard", .arg = "NAME", .type = DT_OPT_CUSTOM, WHOLE, .parse = shard,
     .help = "how the gradient is summed and the update applied, one of\n%s\nZeRO: SGD, LARS, "
     "AdamW or LAMB, fp32, fp16 or bf16; 2 or\nmore ranks, no --fp16-grads; gradients and "
     "parameters:\n--fusion a byte threshold or none", .help_arg = shard_help},
    {.name = "pp", .arg = "P", .type = DT_OPT_INT, AT(pp), .lo = 1, .hi = 4096,
     .want = "a positive number of stages",
     .help = "pipeline parallelism (gpt models): the blocks cut into P\nstages, data "
     "parallelism over ranks / P, --accumulate\nmicro-batches; any --precision, ZeRO stages "
     "0-2. --pp 1: the\nsame arithmetic on one stage, the run each P repeats bit for bit"},
    {.name = "tp", .arg = "T", .type = DT_OPT_INT, AT(tp), .lo = 1, .hi = 4096,
     .want = "a positive number of ranks",
     .help = "tensor parallelism (gpt models): each block's attention heads\nand MLP split "
     "over T consecutive ranks, their outputs\nsummed (Megatron-LM); T divides the heads; "
     "with --pp"},
    {.name = "pp-schedule", .arg = "NAME", .type = DT_OPT_CHOICE, AT(pp_schedule),
     .choices = "gpipe|1f1b", .help = "the pipeline's schedule: gpipe | 1f1b (default 1f1b)"},
    {.name = "recompute", .arg = "R", .type = DT_OPT_CHOICE, AT(recompute),
     .choices = "none|full|selective",
     .help = "with --pp, what a stage keeps of each micro-batch in flight:\nfull (default) its "
     "input, its forward run again before its\nbackward; selective all but the attention "
     "scores, their\nforward run again; none all (Korthikanti et al. 2022);\nthe same bits"},
    {.name = "pp-message", .arg = "N", .type = DT_OPT_I64, AT(pp_message), .lo = 1,
     .hi = DT_PIPE_MSG_MAX, .want = "a number of floats from 1 to 134217728",
     .help = "the tied embedding and its gradient go between the first\nand last stages in "
     "messages of at most N floats\n(default 134217728: 512 MiB)"},
    {.name = "cuda-aware", .type = DT_OPT_SWITCH, AT(cuda_aware),
     .help = "cuda: hand GPU buffers to a CUDA-aware MPI (default: staged\nthrough pinned host "
     "memory in chunks)"},
    {.type = DT_OPT_SECTION, .help = "gpt models, text (nanoGPT's sample.py rule):"},
    {.name = "generate", .arg = "N", .type = DT_OPT_INT, AT(generate), .lo = 1, .hi = 1 << 20,
     .want = "a positive number of tokens",
     .help = "print --prompt and N tokens sampled from --weights (no\ntraining; --json: the "
     "token ids)"},
    {.name = "sample-every", .arg = "N", .type = DT_OPT_I64, AT(sample_every), .lo = 1,
     .hi = 1LL << 50, .want = "a positive step count",
     .help = "while training, print a sample every N steps"},
    {.name = "sample-tokens", .arg = "N", .type = DT_OPT_INT, AT(sample_tokens), .lo = 1,
     .hi = 1 << 20, .want = "a positive number of tokens", .help = "its length (64)"},
    {.name = "prompt", .arg = "TEXT", .type = DT_OPT_STRING, AT(prompt),
     .help = "what a sample continues, as bytes (default a newline)"},
    {.name = "temperature", .arg = "X", .type = DT_OPT_REAL, AT(temperature), .lo = 0,
     .hi = 100, .want = "in [0, 100]",
     .help = "logits / X before the draw (0.8; 0: the most likely token)"},
    {.name = "top-k", .arg = "K", .type = DT_OPT_INT, AT(top_k), .lo = 0, .hi = 1 << 30,
     .want = "a count >= 0", .help = "draw among the K most likely tokens (200; 0: all)"},
    {.type = DT_OPT_SECTION, .help = ""},
    // testing only (tests/mpi): faults injected at a step
    {.name = "fault-die-at-step", .arg = "N", .type = DT_OPT_I64, AT(fault_die_step), .lo = 0,
     .hi = 1LL << 50, .want = "a step number"},
    {.name = "fault-nan-at-step", .arg = "N", .type = DT_OPT_I64, AT(fault_nan_step), .lo = 0,
     .hi = 1LL << 50, .want = "a step number"},
    {.name = "fault-inf-grad-at-step", .arg = "N", .type = DT_OPT_I64, AT(fault_inf_step),
     .lo = 0, .hi = 9e18, .want = "a step number"},
    {.type = DT_OPT_SECTION, .help = "  --help                this text"},
    {.type = DT_OPT_SECTION, .help = "allreduce (the same options in dtsim; dtrain's defaults: "
     "--algo ring, --fusion 64MiB,\nHorovod's threshold; --group: the ranks per node from "
     "mpirun):"},
};
#define DTRAIN_OPTS ((int)(sizeof dtrain_table / sizeof *dtrain_table))

void dtrain_usage(FILE *f) {
    dt_opts_usage(f, &(dt_opt_table){.opts = dtrain_table, .n = DTRAIN_OPTS});
    dt_coll_cli cc;
    dt_opt_table ct = dt_coll_cli_table(&cc, NULL);
    dt_opts_usage(f, &ct);
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
    o->sample_tokens = 64;  // nanoGPT's sample.py: temperature 0.8, top_k 200, start "\n"
    o->temperature = 0.8;
    o->top_k = 200;
    o->tp = 1;
    o->pp = 0;  // none: the data-parallel step (--pp 1: a pipeline of one stage)
    o->pp_schedule = DT_PIPE_1F1B;
    o->pp_message = DT_PIPE_MSG_MAX;
    o->recompute = -1;
    copy_str(o->prompt, sizeof o->prompt, "\n");
}

// The gpt models train on text (dtrain_text.c) with the recipe of GPT-2/3 and llm.c:
// AdamW, weight decay 0.1, cosine decay, gradients clipped to norm 1 (Brown et al. 2020,
// app. B); the peak lr (AdamW 3e-3, LAMB 3e-2) and batch 16 are the best of a sweep of
// gpt2-tiny on fortunes (docs/dtrain.md). Their defaults where the command line leaves
// them, and the checks between a model and its data. 0, or 2 with a message.
static int text_models(dtrain_opts *o, const dt_opt_table *t, int rank) {
    const dt_gpt_shape *gpt = dt_gpt_find(o->model);
    int text = !strncmp(o->data, "fortunes", 8) || !strncmp(o->data, "text:", 5) ||
               !strncmp(o->data, "tokens:", 7);
    if (gpt) {
        if (!dt_opt_given(t, "data")) snprintf(o->data, sizeof o->data, "fortunes"), text = 1;
        if (!dt_opt_given(t, "optimizer")) o->optimizer = DT_OPT_ADAMW;
        if (!dt_opt_given(t, "lr-schedule") && !dt_opt_given(t, "schedule"))
            o->lr_schedule = DT_LR_COSINE;
        if (!dt_opt_given(t, "wd")) o->weight_decay = 0.1f;
        if (!dt_opt_given(t, "clip")) o->clip = 1.0;
        if (!dt_opt_given(t, "batch")) o->global_batch = 16;
        if (!dt_opt_given(t, "lr")) o->lr = o->optimizer == DT_OPT_LAMB ? 3e-2f : 3e-3f;
        if (!dt_opt_given(t, "warmup")) o->warmup_epochs = 1;
    }
    const char *why = NULL;
    char msg[1200];  // room for --data text:PATH (512) and the model name
    if (gpt && !text)
        snprintf(msg, sizeof msg, "--model %s is a language model: it trains on text (--data "
                 "fortunes or text:FILE), not --data %s", o->model, o->data), why = msg;
    else if (!gpt && text)
        snprintf(msg, sizeof msg, "--data %s is text: it trains the gpt models (--model "
                 "gpt2-tiny, ...), not --model %s", o->data, o->model), why = msg;
    else if ((o->vocab || o->tokenizer[0]) && !gpt)
        snprintf(msg, sizeof msg, "--%s is for the gpt models (got --model %s)",
                 o->vocab ? "vocab" : "tokenizer", o->model), why = msg;
    else if (o->vocab && o->tokenizer[0])
        snprintf(msg, sizeof msg, "--vocab %d learns a tokenizer and --tokenizer %s names one: "
                 "give one of them", o->vocab, o->tokenizer), why = msg;
    else if ((o->vocab || o->tokenizer[0]) && !strncmp(o->data, "tokens:", 7))
        snprintf(msg, sizeof msg, "--data %s holds its own tokenizer (DIR/merges.txt): drop "
                 "--%s", o->data, o->vocab ? "vocab" : "tokenizer"), why = msg;
    else if (o->seq_len && !gpt)
        snprintf(msg, sizeof msg, "--seq-len is for the gpt models (got --model %s)", o->model),
            why = msg;
    else if (gpt && o->seq_len > gpt->context)
        snprintf(msg, sizeof msg, "--seq-len %d is longer than --model %s's context of %d "
                 "tokens (its position embedding has %d rows)", o->seq_len, o->model,
                 gpt->context, gpt->context), why = msg;
    else if (!gpt && (o->generate || o->sample_every))
        snprintf(msg, sizeof msg, "--%s samples text from a gpt model (--model gpt2-tiny, "
                 "...), not --model %s", o->generate ? "generate" : "sample-every", o->model),
            why = msg;
    else if (o->generate && !o->weights[0])
        snprintf(msg, sizeof msg, "--generate %d samples from trained weights: give --weights "
                 "FILE.safetensors (dtrain --save-weights writes one)", o->generate), why = msg;
    else if (o->sample_every && o->shard == DT_SHARD_PARAMETERS)
        snprintf(msg, sizeof msg, "--sample-every and %s: no rank holds the whole model "
                 "between steps; sample from --save-weights with --generate", o->shard_flag),
            why = msg;
    else if (!gpt && o->save_hf[0])
        snprintf(msg, sizeof msg, "--save-hf writes Hugging Face's GPT-2 layout: it is for the "
                 "gpt models (--model gpt2-tiny, ...), not --model %s", o->model), why = msg;
    else if ((o->generate || o->sample_every) && !o->prompt[0])
        snprintf(msg, sizeof msg, "--prompt is empty: a sample continues at least one byte "
                 "(the default is a newline)"), why = msg;
    if (why) {
        if (rank == 0) fprintf(stderr, "dtrain: %s\n", why);
        return 2;
    }
    return 0;
}

int dtrain_parse(int argc, char **argv, dtrain_opts *o, int rank) {
    defaults(o);
    dt_coll_cli cli = {.coll = o->coll, .fusion = o->fusion, .overlap = o->overlap};
    unsigned char given[DTRAIN_OPTS] = {0};
    dt_opt_table t[2] = {{.opts = dtrain_table, .n = DTRAIN_OPTS, .base = o, .given = given},
                         dt_coll_cli_table(&cli, NULL)};
    int rc = dt_opts_parse(argc, argv, t, 2, "dtrain", rank != 0);
    if (rc == 1 && rank == 0) dtrain_usage(stdout);
    if (rc) return rc;
    rc = text_models(o, &t[0], rank);
    if (rc) return rc;
    o->coll = cli.coll, o->fusion = cli.fusion, o->overlap = cli.overlap;
    o->coll.gpu_direct = o->cuda_aware;
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
    if (o->shard_optimizer && !o->shard) {
        o->shard = DT_SHARD_OPTIMIZER;
        snprintf(o->shard_flag, sizeof o->shard_flag, "--shard-optimizer");
    }
    if (o->shard_optimizer && o->coll.wire_f16) {
        if (rank == 0)
            fprintf(stderr, "dtrain: %s and --fp16-grads: the allgather of the parameters "
                    "would round them to fp16; drop one of the two\n", o->shard_flag);
        return 2;
    }
    // stages 2 and 3 cut their shards from buckets known before the first step
    if ((o->shard == DT_SHARD_GRADIENTS || o->shard == DT_SHARD_PARAMETERS) &&
        (o->fusion.mode == DT_FUSION_SEGMENTS || o->fusion.mode == DT_FUSION_AUTO)) {
        if (rank == 0)
            fprintf(stderr, "dtrain: %s and --fusion segments/auto: the buckets are planned "
                    "from the first step's times, the shards are needed before it (give a "
                    "byte threshold or none)\n", o->shard_flag);
        return 2;
    }
    if (o->checkpoint_every && !o->checkpoint_dir[0]) {
        if (rank == 0)
            fprintf(stderr, "dtrain: --checkpoint-every %lld needs --checkpoint-dir DIR\n",
                    (long long)o->checkpoint_every);
        return 2;
    }
    if (o->resume && !o->checkpoint_dir[0]) {
        if (rank == 0) fprintf(stderr, "dtrain: --resume needs --checkpoint-dir DIR\n");
        return 2;
    }
    return 0;
}
