// dtsim_opts.c — dtsim's command line: its table of options (nn/opt_table.h; the allreduce
// options are nn/coll/coll_cli.c's, the same as dtrain's; the failure and job options'
// rows are dtsim_faults.c's and dtsim_jobs.c's), --help generated from them, and the checks
// between options once all are read, by concern: the cluster (a preset, the default, the
// user's changes), what is trained (the batch, one GPU's figure), the outputs (creatable
// before minutes of simulation), what runs (sweeps, faults, jobs).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "coll/coll_cli.h"
#include "dtsim.h"
#include "dtsim_opts_values.h"
#include "pipe/pipe_sched.h"
#include "opt_table.h"
#include "zero.h"


// What the command line sets: dtsim's options, the allreduce's, and the figures the
// cluster is built from once all are read
typedef struct {
    dtsim_opts o;
    dt_coll_cli cc;
    int gpus, batch, pgb;
    double gpu_img_s;  // -1: not given
    dtsim_cluster_args ca;
    const dt_opt_table *t;  // the tables read (main_tables), with what the user gave
} dtsim_cli;

// Whether the user gave option `name` (a row of dtsim's or the allreduce's): a preset's, the
// GPU's or --device cpu's default yields to it
static int given(const dtsim_cli *c, const char *name) {
    return dt_opt_given(&c->t[0], name) || dt_opt_given(&c->t[2], name);
}

static int dtsim_bad_option(const char *opt, const char *val, const char *want) {
    dt_error err;
    dt_opt_bad(&err, opt, val, want);
    fprintf(stderr, "dtsim: %s (see dtsim --help)\n", err.msg);
    return 2;
}


static const char *presets(char *b, size_t n) {
    return snprintf(b, n, "%s", dt_cluster_preset_names()), b;
}
static const char *gpu_names(char *b, size_t n) { return snprintf(b, n, "%s", dt_gpu_names()), b; }

#define AT(member) DT_OPT_AT(dtsim_cli, member)

static const dt_opt dtsim_table[] = {
    {.type = DT_OPT_SECTION, .help =
        "usage: dtsim [options]            simulate one configuration\n"
        "       dtsim sweep [options]      over --sweep-gpus and --sweep-algos, with --plot\n"
        "       dtsim calibrate --step P.json [--intra A.csv] [--inter B.csv] --out F.json\n"
        "                                  a profile from your measurements (--help there)\n"
        "       dtsim plan --price h100=6,... [--deadline H] [--budget USD]  the cheapest\n"
        "                                  cluster that meets them, ranked (--help there)\n"
        "cluster:"},
    {.name = "preset", .arg = "NAME", .type = DT_OPT_TEXT, AT(ca.preset),
     .help = "%s", .help_arg = presets},
    {.name = "gpus", .arg = "N", .type = DT_OPT_CUSTOM, AT(gpus), .parse = dtsim_parse_gpu_count,
     .help = "GPUs (default 1024, or the preset's)"},
    {.name = "gpu", .arg = "NAME", .type = DT_OPT_TEXT, AT(ca.gpu),
     .help = "GPU profile: %s (default v100); without a preset it\nbrings its generation's "
     "node and NIC (docs/hardware.md: h100\nNVSwitch 450 GB/s + 400 Gb/s NDR, a100 NVSwitch "
     "300 + 200 Gb/s)", .help_arg = gpu_names},
    {.name = "gpus-per-node", .arg = "N", .type = DT_OPT_INT, AT(ca.gpn), .lo = 1, .hi = 1024,
     .want = "1..1024", .help = "(default 8)"},
    {.name = "intra", .arg = "KIND", .type = DT_OPT_TEXT, AT(ca.intra),
     .help = "nvlink | nvswitch | pcie (alone: that link of the GPU's generation)"},
    {.name = "intra-bw", .arg = "BW", .type = DT_OPT_CUSTOM, AT(ca), .parse = dtsim_parse_intra_bw,
     .help = "one direction per GPU pair; BW: 400Gb, 400Gb/s, 50GB, 50GB/s;\na plain number "
     "is GB/s"},
    {.name = "net-bw", .arg = "BW", .type = DT_OPT_CUSTOM, AT(ca), .parse = dtsim_parse_net_bw,
     .help = "per NIC, one direction"},
    {.name = "nics", .arg = "N", .type = DT_OPT_INT, AT(ca.nics), .lo = 1, .hi = 64,
     .want = "1..64", .help = "NICs per node (default 1)"},
    {.name = "net-lat", .arg = "us", .type = DT_OPT_CUSTOM, AT(ca.net_lat),
     .parse = dtsim_parse_micros,
     .want = "microseconds >= 0", .help = "the network's latency"},
    {.name = "strict", .type = DT_OPT_SWITCH, AT(o.strict),
     .help = "refuse a bandwidth beyond any link"},
    {.name = "topology", .arg = "KIND", .type = DT_OPT_TEXT, AT(ca.topo),
     .help = "flat | fat-tree | rail | torus | dragonfly (rail: NIC i of every\nnode on rail i's "
     "leaf switch, 32 nodes a leaf; docs/hardware.md)"},
    {.name = "oversubscription", .arg = "R:1", .type = DT_OPT_CUSTOM, AT(ca.oversub),
     .parse = dtsim_parse_oversub, .want = "a ratio R:1 or R with 1 <= R <= 64 (e.g. 3:1)",
     .help = "a fat tree's (or rail's) leaves keep 1/R of their nodes' bandwidth\ntowards the "
     "spine (3:1: a third); default 1:1, non-blocking"},
    {.name = "sharp", .type = DT_OPT_SWITCH, AT(cc.coll.sharp),
     .help = "the switches reduce (SHARP on HDR/NDR InfiniBand): hier's allreduce\nbetween "
     "nodes is theirs, each GPU's share crossing its NIC once each\nway (docs/hardware.md)"},
    {.name = "platform", .arg = "FILE.xml", .type = DT_OPT_STRING, AT(o.platform_file),
     .help = "your own SimGrid platform (ranks on its hosts in turn)"},
    {.type = DT_OPT_SECTION, .help = "training:"},
    {.name = "model", .arg = "NAME", .type = DT_OPT_STRING, AT(o.model),
     .help = "(default resnet50)"},
    {.name = "batch", .arg = "N", .type = DT_OPT_INT, AT(batch), .lo = 1, .hi = 1 << 30,
     .want = "a positive batch", .help = "global batch (default 32768)"},
    {.name = "per-gpu-batch", .arg = "N", .type = DT_OPT_INT, AT(pgb), .lo = 1, .hi = 1 << 20,
     .want = "a positive batch", .help = "images per GPU per step (default 32)"},
    {.name = "accumulate", .arg = "K", .type = DT_OPT_INT, AT(o.accumulate), .lo = 1,
     .hi = 1 << 20, .want = "a positive number of micro-batches",
     .help = "K micro-batches of per-gpu-batch/K per step, one allreduce"},
    {.name = "precision", .arg = "P", .type = DT_OPT_CUSTOM, AT(o.prec_name),
     .parse = dtsim_parse_precision, .want = "fp32, tf32, fp16 or bf16",
     .help = "fp32 | tf32 | fp16 | bf16 (fp16, bf16: mixed precision). Default:\n"
     "mixed precision where the GPU has tensor cores (bf16 on A100\nand later, fp16 on "
     "V100), fp32 on P100 and P40, or the preset's"},
    {.name = "profile", .arg = "FILE", .type = DT_OPT_STRING, AT(o.profile_path),
     .help = "calibrate from your measurements: `dtsim calibrate` turns a\n`dtrain --profile` "
     "step and `dtcoll-bench --csv` tables into\nFILE; every layer kind then takes its "
     "measured time, the links\ntheir fitted latency and bandwidth (docs/formulas.md)"},
    {.name = "gpu-img-s", .arg = "X", .type = DT_OPT_REAL, AT(gpu_img_s), .lo = 0, .hi = 1e9,
     .want = "images/s >= 0 (0: the roofline's own figure)",
     .help = "calibrate: one GPU trains X images/s at this per-GPU batch and\nprecision (your "
     "framework's measured figure); every modelled\nkernel is scaled to match (default: the "
     "roofline's own, or the\npreset's paper figure; 0 = the roofline's)"},
    {.name = "calib", .arg = "NAME", .type = DT_OPT_STRING, AT(o.calib_arg),
     .help = "one GPU's speed from a row of the calibration table (`dtsim\ncalibrations` lists "
     "them), `table` (the row of the GPU, model\nfamily and precision, also for a preset), or "
     "`none` (the\nroofline alone). Default: --gpu-img-s, a preset's paper figure,\nelse the "
     "table's row"},
    {.name = "optimizer", .arg = "lars|sgd", .type = DT_OPT_CUSTOM, AT(o.optimizer),
     .parse = dtsim_parse_optimizer, .want = "lars or sgd (gpt models: adamw or lamb)",
     .help = "(default lars; gpt models: adamw (default) or lamb)"},
    {.name = "iters", .arg = "N", .type = DT_OPT_INT, AT(o.iters), .lo = 1, .hi = 1000,
     .want = "1..1000", .help = "iterations simulated after warm-up (1; 2 with --straggler or "
     "--device cpu,\nwhose steps differ: the others repeat the same step to the bit)"},
    {.name = "warmup", .arg = "N", .type = DT_OPT_INT, AT(o.warmup), .lo = 0, .hi = 1000,
     .want = "0..1000", .help = "warm-up iterations, not timed (1)"},
    {.name = "dataset-size", .arg = "N", .type = DT_OPT_REAL, AT(o.dataset), .lo = 1,
     .hi = 1e12, .want = "a positive count",
     .help = "for time per epoch and time-to-train (ImageNet: 1281167)"},
    {.name = "epochs", .arg = "N", .type = DT_OPT_REAL, AT(o.epochs), .lo = 1e-3, .hi = 1e6,
     .want = "a positive number", .help = "for time-to-train (90)"},
    {.name = "analytic", .type = DT_OPT_SWITCH, AT(o.analytic),
     .help = "the cost model, roofline and fusion schedule without SimGrid:\nmilliseconds at "
     "any GPU count (its error: bench/ANALYTIC.md)"},
    {.type = DT_OPT_SECTION, .help = "output:"},
    {.name = "csv", .arg = "FILE|-", .type = DT_OPT_STRING, AT(o.csv),
     .help = "the results as CSV (-: on stdout)"},
    {.name = "json", .type = DT_OPT_SWITCH, AT(o.json),
     .help = "the results as JSON on stdout (nothing else there)"},
    {.name = "trace", .arg = "FILE.json", .type = DT_OPT_STRING, AT(o.trace),
     .help = "a Chrome trace of the simulated ranks"},
    {.name = "trace-ranks", .arg = "N", .type = DT_OPT_INT, AT(o.rank.trace_ranks), .lo = 1,
     .hi = 1 << 20, .want = "a positive count", .help = "ranks in the trace (2)"},
    {.name = "plot", .arg = "FILE.png", .type = DT_OPT_STRING, AT(o.plot),
     .help = "scaling curves (sweep)"},
    {.name = "max-sim-minutes", .arg = "M", .type = DT_OPT_REAL, AT(o.max_sim_minutes),
     .lo = 0, .hi = 1e6, .want = "minutes >= 0 (0: no limit)",
     .help = "a run whose simulation is estimated longer (bench/DTSIM-SPEED.md)\nis answered "
     "with --analytic, saying so (120; 0: no limit)"},
    {.name = "price-gpu-hour", .arg = "X", .type = DT_OPT_REAL, AT(o.price), .lo = 1e-9,
     .hi = 1e12, .want = "a price per GPU-hour > 0",
     .help = "the cost of the GPU-hours to train"},
    {.name = "coarsen", .arg = "K", .type = DT_OPT_INT, AT(o.coarsen), .lo = 1, .hi = 1 << 20,
     .want = "a positive count",
     .help = "merge K ring steps per simulated message (default: automatic)"},
    {.name = "coarsen-dbtree", .arg = "K", .type = DT_OPT_INT, AT(cc.coll.coarsen_tree),
     .lo = 1, .hi = 1 << 20, .want = "a positive count",
     .help = "merge K of dbtree's pipeline segments likewise (default 1: none;\nminutes saved "
     "above 1024 GPUs, the time moved: bench/DTSIM-SPEED.md)"},
    {.name = "keep", .type = DT_OPT_SWITCH, AT(o.keep), .help = "keep the platform files"},
    {.name = "quiet", .type = DT_OPT_SWITCH, AT(o.quiet), .help = "no progress, no report"},
    {.name = "no-memory-check", .type = DT_OPT_SWITCH, AT(o.no_memory_check),
     .help = "simulate even past the memory estimate (bench/DTSIM-SPEED.md)"},
    {.type = DT_OPT_SECTION, .help = "  --help                this text"},
    {.type = DT_OPT_SECTION, .help = "real numbers (small scale):"},
    {.name = "device", .arg = "cpu", .type = DT_OPT_CHOICE, AT(o.cpu), .choices = "model|cpu",
     .want = "cpu (real numbers) or model (the default)",
     .help = "run the steps with the cpu device on dtrain's synthetic data and\nprint each "
     "step's loss: the same losses as `mpirun -np GPUS\ndtrain --data synthetic --lr-schedule "
     "const --warmup 0` with the\nsame values of (steps: --warmup + --iters; the default "
     "optimizer,\nalgorithm and fusion are dtrain's: sgd, ring, 64MiB):"},
    {.name = "seed", .arg = "N", .type = DT_OPT_U64, AT(o.seed), .lo = 0, .hi = 1.8e19,
     .want = "a seed >= 0", .help = "(1; also the stragglers' draws)"},
    {.name = "lr", .arg = "X", .type = DT_OPT_REAL, AT(o.rank.lr), .lo = 1e-9, .hi = 100,
     .want = "a learning rate > 0", .help = "(0.1)"},
    {.name = "image-size", .arg = "N", .type = DT_OPT_INT, AT(o.rank.image_size), .lo = 4,
     .hi = 4096, .want = "4..4096", .help = "(32)"},
    {.name = "classes", .arg = "N", .type = DT_OPT_INT, AT(o.rank.classes), .lo = 2,
     .hi = 1 << 20, .want = "2 or more", .help = "(10)"},
    {.name = "synthetic-examples", .arg = "N", .type = DT_OPT_I64, AT(o.rank.synthetic_n),
     .lo = 1, .hi = 1 << 30, .want = "a positive count", .help = "(1024)"},
    {.type = DT_OPT_SECTION, .help = "transformers and sharded data parallel (ZeRO, Rajbhandari "
     "et al. 2020): --model gpt2-tiny, gpt2,\ngpt2-medium ... gpt2-xl, gpt3-small ... "
     "gpt3-175b: one sample is a sequence of the model's context\n(gpt2-tiny 64 tokens, GPT-2 "
     "1024, GPT-3 2048); time-to-train is one pass over GPT-3's 300B tokens"},
    {.name = "shard", .arg = "S", .type = DT_OPT_CUSTOM, AT(o.shard),
     .parse = dtsim_parse_zero_stage,
     .want = "0|none, 1|optimizer, 2|gradients or 3|parameters",
     .help = "ZeRO stage: 0|none (default), 1|optimizer, 2|gradients,\n3|parameters: the model "
     "states each GPU keeps 1/N of (stage\n1-2: reduce-scatter + allgather, 3: 1.5x the data); "
     "the memory\nper GPU is reported, and a gpt run that does not fit the GPU's\nmemory is "
     "refused"},
    {.name = "shard-units", .arg = "U", .type = DT_OPT_CUSTOM, AT(o.shard_blocks),
     .parse = dtsim_parse_shard_units, .want = "layer or block",
     .help = "stage 3 gathers a layer (default: dtlab's trainer) or a block at\na time (FSDP's "
     "auto-wrap: a transformer block, a ResNet bottleneck)"},
    {.name = "seq-len", .arg = "T", .type = DT_OPT_INT, AT(o.seq_len), .lo = 1, .hi = 1 << 20,
     .want = "a number of tokens >= 1", .help = "gpt models: tokens per sequence (default the "
     "context, or a\npreset's)"},
    {.name = "vocab", .arg = "V", .type = DT_OPT_INT, AT(o.vocab), .lo = 1, .hi = 1 << 24,
     .want = "a vocabulary size >= 1", .help = "gpt models: vocabulary size (default the "
     "model's, 50257 or\ngpt2-tiny's 256, or a preset's)"},
    {.name = "attention", .arg = "KIND", .type = DT_OPT_CUSTOM, AT(o.attention),
     .parse = dtsim_parse_attention, .want = "flash or naive",
     .help = "gpt models: flash (fused: the scores never reach memory,\nbackward recomputes "
     "them; FlashAttention, Dao et al. 2022) or\nnaive (the (B,H,T,T) scores written and "
     "kept). Default: flash\non A100 and later (FlashAttention 2 needs them), naive before,\n"
     "and a preset's as its source ran"},
    {.name = "layers", .arg = "L", .type = DT_OPT_INT, AT(o.layers), .lo = 1, .hi = 4096,
     .want = "a number of blocks >= 1", .help = "gpt models: a shape of your own, over "
     "--model's: blocks,"},
    {.name = "hidden", .arg = "C", .type = DT_OPT_INT, AT(o.hidden), .lo = 1, .hi = 1 << 20,
     .want = "a width >= 1", .help = "its width (d_model) and"},
    {.name = "heads", .arg = "H", .type = DT_OPT_INT, AT(o.heads), .lo = 1, .hi = 4096,
     .want = "a number of heads >= 1", .help = "its attention heads (with --analytic or "
     "--tp/--pp; the\nsimulated trainer builds the named models)"},
    {.type = DT_OPT_SECTION, .help = "tensor and pipeline parallelism (Megatron-LM: Shoeybi et al. 2019, Narayanan et al.\n"
     "2021), gpt models, answered by the analytic model (docs/parallelism.md):\n"
     "GPUs = tp x pp x data-parallel; --batch is the global batch (or --per-gpu-batch\n"
     "sequences per data-parallel replica)"},
    {.name = "tp", .arg = "T", .type = DT_OPT_INT, AT(o.tp), .lo = 1, .hi = 1024,
     .want = "a tensor-parallel degree >= 1", .help = "tensor-parallel degree, inside a node "
     "(default 1)"},
    {.name = "pp", .arg = "P", .type = DT_OPT_INT, AT(o.pp), .lo = 1, .hi = 4096,
     .want = "a pipeline depth >= 1", .help = "pipeline stages (default 1)"},
    {.name = "micro-batch", .arg = "B", .type = DT_OPT_INT, AT(o.micro_batch), .lo = 1,
     .hi = 1 << 20, .want = "sequences >= 1", .help = "sequences per micro-batch (default 1)"},
    {.name = "pp-schedule", .arg = "S", .type = DT_OPT_CUSTOM, AT(o),
     .parse = dtsim_parse_pp_schedule, .want = "gpipe, 1f1b or interleaved:V (V >= 2)",
     .help = "gpipe | 1f1b (default) | interleaved:V (V chunks per stage)"},
    {.name = "simgrid", .type = DT_OPT_SWITCH, AT(o.simgrid_3d),
     .help = "--tp/--pp simulated by SimGrid too: the trainer's own pipeline\nand tensor "
     "parallelism on modelled GPUs, every op of every\nmicro-batch (the cost model's step "
     "beside it)"},
    {.name = "sequence-parallel", .type = DT_OPT_SWITCH, AT(o.seq_par),
     .help = "with --tp: the layer norms', dropouts' and residual\nstream's activations split "
     "along the sequence over the\ntensor-parallel group (Korthikanti et al. 2022): 1/t of "
     "every\nactivation; the same bytes on the wire (cost model only)"},
    {.name = "recompute", .arg = "R", .type = DT_OPT_CUSTOM, AT(o.recompute),
     .parse = dtsim_parse_recompute, .want = "none, full or selective",
     .help = "activation recomputation: none (default) | full (each block's\ninput kept, its "
     "forward run again before its backward) |\nselective (all but the attention's scores "
     "kept, its core\nrun again: Korthikanti et al. 2022)"},
    {.type = DT_OPT_SECTION, .help = "sweep:"},
    {.name = "sweep-gpus", .arg = "LIST", .type = DT_OPT_CUSTOM, AT(o),
     .parse = dtsim_parse_gpu_list,
     .help = "(8,16,32,...,1024)"},
    {.name = "sweep-algos", .arg = "LIST", .type = DT_OPT_CUSTOM, AT(o),
     .parse = dtsim_parse_algo_list,
     .help = "(ring,rhd,hier,dbtree)"},
};
#define DTSIM_OPTS ((int)(sizeof dtsim_table / sizeof *dtsim_table))

static const dt_opt dtsim_coll_heading[] = {
    {.type = DT_OPT_SECTION, .help = "allreduce (the same options in dtrain; dtsim's defaults: "
     "--algo hier, --fusion segments:2,\nwith --device cpu dtrain's; --group: the GPUs per "
     "node):"},
};

// dtsim's tables in --help's order: its own rows (into c), the allreduce heading, the
// allreduce rows (into cc), the failure and the job rows (into c's options); c NULL: for
// --help alone
static void main_tables(dtsim_cli *c, dt_coll_cli *cc, unsigned char *given,
                        unsigned char *cgiven, dt_opt_table *t) {
    t[0] = (dt_opt_table){.opts = dtsim_table, .n = DTSIM_OPTS, .base = c, .given = given};
    t[1] = (dt_opt_table){.opts = dtsim_coll_heading, .n = 1};
    t[2] = dt_coll_cli_table(cc, cgiven);
    t[3] = dtsim_fault_table(c ? &c->o : NULL, NULL, NULL);
    t[4] = dtsim_jobs_table(c ? &c->o.par : NULL, NULL);
}

int dtsim_main_tables(dt_coll_cli *cc, dt_opt_table *t) {
    main_tables(NULL, cc, NULL, NULL, t);
    return DTSIM_MAIN_TABLES;
}

static void usage(FILE *f) {
    dt_coll_cli cc;
    dt_opt_table t[DTSIM_MAIN_TABLES];
    main_tables(NULL, &cc, NULL, NULL, t);
    for (int i = 0; i < DTSIM_MAIN_TABLES; i++) dt_opts_usage(f, &t[i]);
}

dt_opt_table dtsim_opts_table(dtsim_opts *o, const char *only) {
    dt_opt_table t = {.opts = dtsim_table, .n = DTSIM_OPTS, .base = o, .only = only};
    for (int i = 0; i < DTSIM_OPTS; i++)  // the rows of dtsim_opts only (dtsim_cli starts so)
        DT_ASSERT(dt_opt_find(&t, dtsim_table[i].name ? dtsim_table[i].name : "") < 0 ||
                  dtsim_table[i].offset + dtsim_table[i].size <= sizeof(dtsim_opts));
    return t;
}

static void defaults(dtsim_cli *c) {
    dtsim_opts *o = &c->o;
    memset(c, 0, sizeof *c);
    o->seed = 1;
    // the rank program's own: 2 ranks traced; --device cpu's data and SGD as dtrain's defaults
    o->rank = (dt_rank_settings){.trace_ranks = 2, .image_size = 32, .classes = 10,
                                 .synthetic_n = 1024, .lr = 0.1, .momentum = 0.9, .wd = 5e-4};
    snprintf(o->model, sizeof o->model, "resnet50");
    o->lars = 1, o->overlap = 1, o->iters = 0, o->warmup = 1, o->coarsen = -1;
    o->accumulate = 1, o->max_sim_minutes = 120;
    o->tp = o->pp = o->micro_batch = o->pp_chunks = 1, o->pp_kind = DT_PIPE_1F1B;
    o->dataset = 1281167, o->epochs = 90;
    o->coll = dt_coll_opts_default();
    o->coll.algo = DT_ALGO_HIER;
    o->fusion = (dt_fusion_opts){DT_FUSION_SEGMENTS, 0, 2};
    o->restart_s = -1;
    c->gpu_img_s = -1;
    c->cc = (dt_coll_cli){.coll = o->coll, .fusion = o->fusion, .overlap = o->overlap};
}

// ---- the checks between options, once all are read: each 0, or 2 with a message ----

// The cluster: a preset, or the default with the user's changes, its precision and a
// measured profile's links; the GPU count it holds (docs/dtsim.md, "Describing a cluster")
static int finish_cluster(dtsim_cli *cl) {
    dtsim_opts *o = &cl->o;
    int gpus = cl->gpus;
    dtsim_cluster_args ca = cl->ca;
    const char *preset = ca.preset, *gpu = ca.gpu;
    dt_error err;
    if (preset) {
        if (dt_cluster_preset(preset, gpus, &o->cluster, &err)) {
            fprintf(stderr, "dtsim: --preset: %s\n", err.msg);
            return 2;
        }
        if (!cl->pgb && !cl->batch) cl->pgb = o->cluster.per_gpu_batch;
        if (o->cluster.model[0] && !strcmp(o->model, "resnet50"))
            snprintf(o->model, sizeof o->model, "%s", o->cluster.model);
        if (dtsim_preset_training(&o->cluster, o, given(cl, "precision"),
                                  given(cl, "optimizer"), given(cl, "algo"), given(cl, "inner")))
            return 2;
        if (cl->gpu_img_s < 0 && o->cluster.gpu_img_s > 0) {  // the paper's framework
            cl->gpu_img_s = o->cluster.gpu_img_s;
            o->calib_batch = o->cluster.per_gpu_batch;
            o->calib_prec = !strcmp(o->cluster.precision, "fp16") ? DT_PREC_FP16 : DT_PREC_FP32;
        }
    } else {
        o->cluster = dt_cluster_default(gpus ? gpus : 1024);
    }
    dt_cluster *c = &o->cluster;
    if (gpu) {
        if (!dt_gpu_find(gpu)) {
            char want[256];
            snprintf(want, sizeof want, "a GPU profile (valid: %s)", dt_gpu_names());
            return dtsim_bad_option("--gpu", gpu, want);
        }
        gpu = cl->ca.gpu = dt_gpu_find(gpu)->name;  // an alias's profile
        if (strcmp(c->gpu, gpu) && o->calib_batch) {  // the paper measured another GPU
            o->calib_batch = 0;
            if (cl->gpu_img_s >= 0 && cl->gpu_img_s == c->gpu_img_s) cl->gpu_img_s = 0;
        }
    }
    ca.gpus = gpus;
    if (dtsim_cluster_begin(o, &ca)) return 2;
    const dt_gpu_profile *gp = dt_gpu_find(c->gpu);
    if (dtsim_precision(o, gp, given(cl, "precision"), preset && c->precision[0])) return 2;
    if (o->has_profile) {
        if (given(cl, "gpu-img-s") || o->cpu) {
            fprintf(stderr, "dtsim: --profile calibrates from measurements: not with %s\n",
                    o->cpu ? "--device cpu (real numbers, no modelled time)" : "--gpu-img-s");
            return 2;
        }
        o->calib_batch = 0, cl->gpu_img_s = 0;  // the measured profile, not a paper's figure
        if (dtsim_apply_profile(o, c, given(cl, "model"), given(cl, "precision"))) return 2;
        if (!cl->pgb && !cl->batch) cl->pgb = o->profile.batch;
    }
    if (dtsim_cluster_finish(o, &ca)) return 2;
    o->gpus = gpus ? gpus : c->nodes * c->gpus_per_node;
    if (o->platform_file[0]) {
        int hosts, cores;
        if (dt_platform_file_count(o->platform_file, &hosts, &cores, &err)) {
            fprintf(stderr, "dtsim: --platform: %s\n", err.msg);
            return 2;
        }
        if (!gpus) o->gpus = cores;
        if (o->gpus > cores) {
            fprintf(stderr, "dtsim: --gpus %d: the platform %s has only %d host cores (%d hosts); "
                            "one GPU per core\n", o->gpus, o->platform_file, cores, hosts);
            return 2;
        }
    } else if (o->gpus != c->nodes * c->gpus_per_node) {
        fprintf(stderr, "dtsim: --gpus %d is not a whole number of %d-GPU nodes\n", o->gpus,
                c->gpus_per_node);
        return 2;
    }
    if (!o->platform_file[0] && dt_cluster_check(c, &err)) {
        fprintf(stderr, "dtsim: %s\n", err.msg);
        return 2;
    }
    return 0;
}

// --sharp (nn/coll/coll_sharp.c): the allreduce between nodes of hier or torus2d, on
// dtsim's own cluster (its NICs price the bytes), timed on the model device
static int check_sharp(const dtsim_opts *o) {
    const char *why = NULL;
    if (!o->coll.sharp) return 0;
    if (o->sweep) why = "not with sweep, whose other algorithms reduce between hosts";
    else if (o->coll.algo != DT_ALGO_HIER && o->coll.algo != DT_ALGO_TORUS2D)
        why = "it is hier's or torus2d's allreduce between nodes: give --algo hier or torus2d";
    else if (o->shard) why = "not with --shard: ZeRO's reduce-scatter and allgather run as rings";
    else if (dtsim_is_3d(o)) why = "not with --tp or --pp (their cost model has no switches "
                                   "that reduce)";
    else if (o->cpu) why = "not with --device cpu: the switches' sums are not computed";
    else if (o->platform_file[0]) why = "not with --platform: its NICs are dtsim's own cluster's";
    if (why) fprintf(stderr, "dtsim: --sharp: %s\n", why);
    return why != NULL;
}

// What is trained: the batch per GPU and its micro-batches, one GPU's measured figure
// (--gpu-img-s, a preset's paper, the calibration table: sim/dtsim_calib.c), --device cpu's
// defaults (dtrain's) and the gpt models' (sim/dtsim_gpt.c)
static int finish_training(dtsim_cli *cl) {
    dtsim_opts *o = &cl->o;
    int dp = o->gpus % (o->tp * o->pp) == 0 ? o->gpus / (o->tp * o->pp) : o->gpus;
    if (dtsim_is_3d(o)) {  // 3D: sequences per data-parallel replica (sim/dtsim_3d.c checks)
        if (cl->batch && cl->batch % dp == 0) cl->pgb = cl->batch / dp;
    } else if (cl->batch) {
        if (cl->batch % o->gpus) {
            fprintf(stderr, "dtsim: --batch %d does not divide over %d GPUs (need a multiple "
                            "of %d, or give --per-gpu-batch)\n", cl->batch, o->gpus, o->gpus);
            return 2;
        }
        cl->pgb = cl->batch / o->gpus;
    }
    o->per_gpu_batch = cl->pgb ? cl->pgb : 32;  // 32 per GPU: 32K on the default 1024 GPUs
    o->global_batch = o->per_gpu_batch * dp;
    if (cl->ca.preset && o->calib_batch && strcmp(o->model, o->cluster.model)) {
        o->calib_batch = 0;  // the paper measured ResNet-50, not this model
        if (cl->gpu_img_s == o->cluster.gpu_img_s) cl->gpu_img_s = 0;
    }
    o->gpu_img_s = cl->gpu_img_s > 0 ? cl->gpu_img_s : 0;
    if (o->gpu_img_s && o->cpu) {
        fprintf(stderr, "dtsim: --gpu-img-s calibrates the modelled GPU; --device cpu computes "
                        "real numbers and models no time\n");
        return 2;
    }
    if (o->per_gpu_batch % o->accumulate) {
        fprintf(stderr, "dtsim: --accumulate %d does not divide the per-GPU batch %d (need a "
                        "multiple of %d)\n", o->accumulate, o->per_gpu_batch, o->accumulate);
        return 2;
    }
    if (o->cpu && !given(cl, "algo")) o->coll.algo = DT_ALGO_RING;  // dtrain's defaults
    if (o->cpu && !given(cl, "optimizer")) o->lars = 0;
    if (dtsim_gpt_check(o, given(cl, "optimizer"))) return 2;
    if (dtsim_3d_check(o, cl->batch)) return 2;
    if (check_sharp(o)) return 2;
    // one GPU's speed (sim/dtsim_calib.c), once the model's sequence is known
    if (dtsim_calib_choose(o, given(cl, "gpu-img-s"))) return 2;
    if (!o->calib_batch) o->calib_batch = o->per_gpu_batch, o->calib_prec = o->prec;
    if (o->cpu && !given(cl, "fusion"))
        o->fusion = (dt_fusion_opts){DT_FUSION_BYTES, (size_t)64 << 20, 1};
    return 0;
}

// What is written: one machine-readable output on stdout at most, none with --device cpu,
// plots of sweeps, every file creatable before minutes of simulation, not after
static int finish_outputs(const dtsim_opts *o) {
    if (o->json && o->csv_stdout) {
        fprintf(stderr, "dtsim: --json and --csv - both print on stdout: give --csv a file\n");
        return 2;
    }
    if (o->cpu && (o->json || o->csv[0])) {
        fprintf(stderr, "dtsim: --device cpu prints the real losses, not simulated times: "
                        "not with %s\n", o->json ? "--json" : "--csv");
        return 2;
    }
    if (o->plot[0] && !o->sweep) {
        fprintf(stderr, "dtsim: --plot draws scaling curves: use it with `dtsim sweep`\n");
        return 2;
    }
    const char *outs[3][2] = {{o->csv_stdout ? "" : o->csv, "--csv"}, {o->trace, "--trace"},
                              {o->plot, "--plot"}};
    for (int i = 0; i < 3; i++) {
        dt_atomic_file a;
        dt_error err;
        if (!outs[i][0][0]) continue;
        if (dt_atomic_open(&a, outs[i][0], outs[i][1], &err)) {
            fprintf(stderr, "dtsim: %s\n", err.msg);
            return 2;
        }
        dt_atomic_abort(&a);
    }
    return 0;
}

// What runs: a sweep's GPU counts and algorithms, the batch's warning, slow GPUs and
// failures (sim/dtsim_faults.c), many runs at once (sim/dtsim_jobs.c), --device cpu's scale
static int finish_runs(dtsim_opts *o) {
    // a second timed step only where steps differ (each draws its stragglers; real numbers):
    // elsewhere it repeats the first to the bit, and its mean with it is the same double
    if (!o->iters) o->iters = o->straggler[0] || o->cpu ? 2 : 1;
    if (o->sweep && !o->n_sweep_gpus) {
        for (int g = 8; g <= 1024; g *= 2) o->sweep_gpus[o->n_sweep_gpus++] = g;
    }
    if (o->sweep && !o->n_sweep_algos) {
        const dt_algo def[] = {DT_ALGO_RING, DT_ALGO_RHD, DT_ALGO_HIER, DT_ALGO_DBTREE};
        for (int i = 0; i < 4; i++) o->sweep_algos[o->n_sweep_algos++] = def[i];
    }
    if (!o->cpu) dtsim_batch_warning(o);
    if (dtsim_faults_check(o) || dtsim_jobs_check(&o->par, "dtsim")) return 2;
    if ((o->par.jobs > 1 || o->par.slice_n || o->par.gather[0] || o->par.slurm[0]) && !o->sweep) {
        fprintf(stderr, "dtsim: -j, --slurm, --slice and --gather run many simulations: use "
                        "them with `dtsim sweep` or `dtsim plan`\n");
        return 2;
    }
    o->no_memory_check |= o->par.gather[0] != 0;  // read back, not simulated here
    if (o->cpu && (o->sweep || o->gpus > 64)) {
        fprintf(stderr, "dtsim: --device cpu computes real numbers on every simulated GPU: "
                        "one run of at most 64 GPUs (this one: %s%d)\n",
                o->sweep ? "a sweep, " : "", o->gpus);
        return 2;
    }
    return 0;
}

// All of them, in this order (a command line with two mistakes is told of the first)
static int finish(dtsim_cli *c) {
    return finish_cluster(c) || finish_training(c) || finish_outputs(&c->o) ||
           finish_runs(&c->o) ? 2 : 0;
}

int dtsim_parse(int argc, char **argv, dtsim_opts *out) {
    dtsim_cli *c = calloc(1, sizeof *c);
    DT_ASSERT(c);
    defaults(c);
    int sweep = argc > 1 && !strcmp(argv[1], "sweep");
    if (sweep) argv++, argc--;
    unsigned char own_given[DTSIM_OPTS] = {0}, coll_given[DT_COLL_CLI_COUNT] = {0};
    dt_opt_table t[DTSIM_MAIN_TABLES];
    main_tables(c, &c->cc, own_given, coll_given, t);
    int rc = dt_opts_parse(argc, argv, t, DTSIM_MAIN_TABLES, "dtsim", 0);
    if (rc == 1) usage(stdout);
    if (!rc) {
        dtsim_opts *o = &c->o;
        o->sweep = sweep;
        o->coll = c->cc.coll, o->fusion = c->cc.fusion, o->overlap = c->cc.overlap;
        c->t = t;
        o->has_profile = given(c, "profile");
        if (o->optimizer[0])  // the layer-wise ones: LARS, and LAMB for the gpt models
            o->lars = !strcmp(o->optimizer, "lars") || !strcmp(o->optimizer, "lamb");
        o->csv_stdout = !strcmp(o->csv, "-");
        if (o->coll.algo == DT_ALGO_NCCL) {
            fprintf(stderr, "dtsim: --algo nccl: NCCL runs only on real GPUs (dtrain "
                            "--device cuda); simulate ring, dbtree or hier instead\n");
            rc = 2;
        } else {
            rc = finish(c);
        }
    }
    *out = c->o;
    free(c);
    return rc;
}
