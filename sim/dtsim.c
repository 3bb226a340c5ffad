// dtsim.c — "how fast would this cluster train ResNet-50, and how well would it scale?"
// The launcher: parses the command line, describes the cluster (a preset of the landmark
// runs, a custom one, or the user's SimGrid platform), runs the simulation (dtsim_run.c:
// SimGrid runs the same trainer step, allreduce and LARS code of nn/ on modeled GPUs) and
// reports (dtsim_report.c). `dtsim sweep` repeats it over GPU counts and algorithms.
// With no arguments: ResNet-50 on 1024 V100 (128 nodes × 8, NVLink, EDR InfiniBand, fat
// tree), hierarchical allreduce in 2 fusion segments overlapping backward, global batch 32K
// with LARS (You et al. 2017; Jia et al. 2018).
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "dtsim.h"
#include "net.h"

static void usage(FILE *f) {
    fprintf(f,
        "usage: dtsim [options]            simulate one configuration\n"
        "       dtsim sweep [options]      over --sweep-gpus and --sweep-algos, with --plot\n"
        "       dtsim calibrate --step P.json [--intra A.csv] [--inter B.csv] --out F.json\n"
        "                                  a profile from your measurements (--help there)\n"
        "       dtsim plan --price h100=6,... [--deadline H] [--budget USD]  the cheapest\n"
        "                                  cluster that meets them, ranked (--help there)\n"
        "cluster:\n"
        "  --preset NAME       %s\n"
        "  --gpus N            GPUs (default 1024, or the preset's)\n"
        "  --gpu NAME          GPU profile: %s (default v100); without a preset it\n"
        "                      brings its generation's node and NIC (docs/hardware.md: h100\n"
        "                      NVSwitch 450 GB/s + 400 Gb/s NDR, a100 NVSwitch 300 + 200 Gb/s)\n"
        "  --gpus-per-node N   (default 8)\n"
        "  --intra KIND        nvlink | nvswitch | pcie (alone: that link of the GPU's generation)\n"
        "  --intra-bw BW       one direction per GPU pair   --net-bw BW  per NIC, one direction\n"
        "                      BW: 400Gb, 400Gb/s, 50GB, 50GB/s; a plain number is GB/s\n"
        "  --nics N (default 1)  --net-lat us   --strict  refuse a bandwidth beyond any link\n"
        "  --topology KIND     flat | fat-tree | torus | dragonfly\n"
        "  --platform FILE.xml your own SimGrid platform (ranks on its hosts in turn)\n"
        "training:\n"
        "  --model NAME        (default resnet50)\n"
        "  --batch N           global batch (default 32768)   --per-gpu-batch N\n"
        "  --accumulate K      K micro-batches of per-gpu-batch/K per step, one allreduce\n"
        "  --precision P       fp32 | tf32 | fp16 (mixed precision; default fp32, or the preset's)\n"
        "  --profile FILE      calibrate from your measurements: `dtsim calibrate` turns a\n"
        "                      `dtrain --profile` step and `dtcoll-bench --csv` tables into\n"
        "                      FILE; every layer kind then takes its measured time, the links\n"
        "                      their fitted latency and bandwidth (docs/formulas.md)\n"
        "  --gpu-img-s X       calibrate: one GPU trains X images/s at this per-GPU batch and\n"
        "                      precision (your framework's measured figure); every modelled\n"
        "                      kernel is scaled to match (default: the roofline's own, or the\n"
        "                      preset's paper figure; 0 = the roofline's)\n"
        "  --optimizer lars|sgd  (default lars; gpt models: adamw (default) or lamb)\n"
        "  --algo NAME         %s (default hier; nccl\n"
        "                      only on real GPUs; auto: the fastest simulated, bench/AUTO.md)\n"
        "  --fusion SPEC       %s (default segments:2)\n"
        "  --no-overlap        allreduce after backward instead of during it\n"
        "  --fp16-grads        gradients in fp16 on the wire\n"
        "  --group N --inner ring|rhd --hier-rs --torus XxY   algorithm shape\n"
        "  --iters N --warmup N  iterations simulated after warm-up (2, 1)\n"
        "  --dataset-size N --epochs N  for time per epoch and time-to-train (ImageNet: 1281167, 90)\n"
        "  --analytic          the cost model, roofline and fusion schedule without SimGrid:\n"
        "                      milliseconds at any GPU count (its error: bench/ANALYTIC.md)\n"
        "output:\n"
        "  --csv FILE|- --json (stdout: nothing else) --trace FILE.json --trace-ranks N (2)\n"
        "  --plot FILE.png (sweep)   --price-gpu-hour X: the cost of the GPU-hours to train\n"
        "  --coarsen K         merge K ring steps per simulated message (default: automatic)\n"
        "  --coarsen-dbtree K  merge K of dbtree's pipeline segments likewise (default 1: none;\n"
        "                      minutes saved above 1024 GPUs, the time moved: bench/DTSIM-SPEED.md)\n"
        "  --keep --quiet --help\n"
        "  --no-memory-check   simulate even past the memory estimate (bench/DTSIM-SPEED.md)\n"
        "real numbers (small scale):\n"
        "  --device cpu        run the steps with the cpu device on dtrain's synthetic data and\n"
        "                      print each step's loss: the same losses as `mpirun -np GPUS\n"
        "                      dtrain --data synthetic --lr-schedule const --warmup 0` with the\n"
        "                      same values of (steps: --warmup + --iters; the default optimizer,\n"
        "                      algorithm and fusion are dtrain's: sgd, ring, 64MiB):\n"
        "  --seed N --lr X --image-size N (32) --classes N (10) --synthetic-examples N (1024)\n"
        "sweep:\n"
        "  --sweep-gpus LIST   (8,16,32,...,1024)   --sweep-algos LIST (ring,rhd,hier,dbtree)\n",
        dt_cluster_preset_names(), dt_gpu_names(), DT_ALGO_VALID, DT_FUSION_VALID);
    dtsim_fault_usage(f);
    dtsim_jobs_usage(f);
    dtsim_gpt_usage(f);
}

static int bad(const char *opt, const char *val, const char *want) {
    fprintf(stderr, "dtsim: option %s: '%s' is not %s (see dtsim --help)\n", opt, val, want);
    return 2;
}

int dtsim_bad_option(const char *opt, const char *val, const char *want) {
    return bad(opt, val, want);
}

static int to_int(const char *s, long lo, long hi, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

static int to_double(const char *s, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

// The most GPUs dtsim simulates: SimGrid's ranks are threads of one process, and the
// memory of a run grows as the square of its ranks (bench/DTSIM-SPEED.md)
#define MAX_GPUS (1 << 20)

// A GPU count: 0, or 2 with a message that says what is wrong with it
static int gpu_count(const char *opt, const char *s, int *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || v < 1) return bad(opt, s, "a positive count of GPUs");
    if (errno || v > MAX_GPUS) {
        fprintf(stderr, "dtsim: option %s: %s GPUs is too many: dtsim simulates at most %d "
                        "(2^20), and this machine's memory about %d (bench/DTSIM-SPEED.md)\n",
                opt, s, MAX_GPUS, dtsim_gpus_that_fit());
        return 2;
    }
    *out = (int)v;
    return 0;
}

// A comma-separated list of GPU counts: their number, or -2 with a message printed
static int parse_list(const char *s, int *out, int max) {
    int n = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        if (n == max) return bad("--sweep-gpus", s, "a list of at most 32 GPU counts"), -2;
        if (gpu_count("--sweep-gpus", t, &out[n])) return -2;
        n++;
    }
    if (!n) return bad("--sweep-gpus", s, "a comma-separated list of GPU counts"), -2;
    return n;
}

// A bandwidth option: 0, or 2 with a message
static int bandwidth(const char *opt, const char *s, double *bw, dt_bw_unit *unit,
                     const char **typed) {
    dt_error err;
    if (dt_parse_bandwidth(s, opt, bw, unit, &err))
        return fprintf(stderr, "dtsim: %s\n", err.msg), 2;
    *typed = s;
    return 0;
}

enum { PRESET = 256, GPUS, GPU, GPN, INTRA, INTRABW, NETBW, NICS, NETLAT, TOPO, PLATFORM,
       MODEL, BATCH, PGB, PREC, OPTIM, ALGO, FUSION, NOOVL, FP16G, GROUP, INNER, HIERRS,
       TORUS, ITERS, WARMUP, DATASET, EPOCHS, CSV, JSON, TRACE, TRACER, PLOT, COARSEN, COARSENT,
       KEEP, QUIET, NOMEMCHK, HELP, SGPUS, SALGOS, DEVICE, SEED, LR, IMGS, CLASSES, SYNN, ACCUM,
       GPUIMGS, PROFILE, STRICT, PRICE, ANALYTIC };

int dtsim_parse(int argc, char **argv, dtsim_opts *o) {
    memset(o, 0, sizeof *o);
    o->image_size = 32, o->classes = 10, o->synthetic_n = 1024, o->seed = 1, o->lr = 0.1;
    int gpus = 0, batch = 0, pgb = 0;
    dtsim_cluster_args ca = {0};
    const char *preset = NULL, *gpu = NULL;
    snprintf(o->model, sizeof o->model, "resnet50");
    o->lars = 1, o->overlap = 1, o->iters = 2, o->warmup = 1, o->coarsen = -1;
    o->accumulate = 1;
    o->dataset = 1281167, o->epochs = 90, o->trace_ranks = 2;
    o->coll = dt_coll_opts_default();
    o->coll.algo = DT_ALGO_HIER;
    o->fusion = (dt_fusion_opts){DT_FUSION_SEGMENTS, 0, 2};
    if (argc > 1 && !strcmp(argv[1], "sweep")) o->sweep = 1, argv++, argc--;
    static const struct option lo[] = {
        {"preset", 1, 0, PRESET}, {"gpus", 1, 0, GPUS}, {"gpu", 1, 0, GPU},
        {"gpus-per-node", 1, 0, GPN}, {"intra", 1, 0, INTRA}, {"intra-bw", 1, 0, INTRABW},
        {"net-bw", 1, 0, NETBW}, {"nics", 1, 0, NICS}, {"net-lat", 1, 0, NETLAT},
        {"topology", 1, 0, TOPO}, {"platform", 1, 0, PLATFORM}, {"model", 1, 0, MODEL},
        {"batch", 1, 0, BATCH}, {"per-gpu-batch", 1, 0, PGB}, {"precision", 1, 0, PREC},
        {"accumulate", 1, 0, ACCUM}, {"gpu-img-s", 1, 0, GPUIMGS},
        {"profile", 1, 0, PROFILE},
        {"optimizer", 1, 0, OPTIM}, {"algo", 1, 0, ALGO}, {"fusion", 1, 0, FUSION},
        {"no-overlap", 0, 0, NOOVL}, {"fp16-grads", 0, 0, FP16G}, {"group", 1, 0, GROUP},
        {"inner", 1, 0, INNER}, {"hier-rs", 0, 0, HIERRS}, {"torus", 1, 0, TORUS},
        {"iters", 1, 0, ITERS}, {"warmup", 1, 0, WARMUP}, {"dataset-size", 1, 0, DATASET},
        {"epochs", 1, 0, EPOCHS}, {"csv", 1, 0, CSV}, {"json", 0, 0, JSON},
        {"trace", 1, 0, TRACE}, {"trace-ranks", 1, 0, TRACER}, {"plot", 1, 0, PLOT},
        {"coarsen", 1, 0, COARSEN}, {"coarsen-dbtree", 1, 0, COARSENT},
        {"keep", 0, 0, KEEP}, {"quiet", 0, 0, QUIET},
        {"no-memory-check", 0, 0, NOMEMCHK},
        {"strict", 0, 0, STRICT}, {"price-gpu-hour", 1, 0, PRICE}, {"analytic", 0, 0, ANALYTIC},
        {"help", 0, 0, HELP}, {"sweep-gpus", 1, 0, SGPUS}, {"sweep-algos", 1, 0, SALGOS},
        {"device", 1, 0, DEVICE}, {"seed", 1, 0, SEED}, {"lr", 1, 0, LR},
        {"image-size", 1, 0, IMGS}, {"classes", 1, 0, CLASSES}, {"synthetic-examples", 1, 0, SYNN},
        {0, 0, 0, 0}};
    // and those of slow GPUs and failures, parallel runs, ZeRO (dtsim_faults/jobs/gpt.c)
    struct option all[sizeof lo / sizeof *lo + 48];
    size_t nf = (size_t)dtsim_fault_option_count, nj = (size_t)dtsim_jobs_option_count;
    size_t nl = sizeof lo / sizeof *lo - 1, ng = (size_t)dtsim_gpt_option_count + 1;
    DT_ASSERT(nf < 16 && nj < 16 && ng < 16);
    memcpy(all, lo, nl * sizeof *lo);
    memcpy(all + nl, dtsim_fault_options, nf * sizeof *lo);
    memcpy(all + nl + nf, dtsim_jobs_options, nj * sizeof *lo);
    memcpy(all + nl + nf + nj, dtsim_gpt_options, ng * sizeof *lo);  // its terminator too
    o->restart_s = -1;
    dt_error err;
    int algo_set = 0, fusion_set = 0, optim_set = 0, prec_set = 0, inner_set = 0, model_set = 0;
    double gpu_img_s = -1;  // -1: not given
    int img_s_given = 0;
    opterr = 0;
    optind = 1;
    for (int c; (c = getopt_long(argc, argv, "j:", all, NULL)) != -1;) {
        const char *name = argv[optind - 1];
        switch (c) {
        case PRESET: preset = optarg; break;
        case GPUS: if (gpu_count("--gpus", optarg, &gpus)) return 2; break;
        case GPU: gpu = optarg; break;
        case GPN: if (to_int(optarg, 1, 1024, &ca.gpn)) return bad("--gpus-per-node", optarg, "1..1024"); break;
        case INTRA: ca.intra = optarg; break;
        case INTRABW: if (bandwidth("--intra-bw", optarg, &ca.intra_bw, &ca.intra_unit, &ca.intra_typed)) return 2; break;
        case NETBW: if (bandwidth("--net-bw", optarg, &ca.net_bw, &ca.net_unit, &ca.net_typed)) return 2; break;
        case NICS: if (to_int(optarg, 1, 64, &ca.nics)) return bad("--nics", optarg, "1..64"); break;
        case NETLAT: if (to_double(optarg, 0, 1e6, &ca.net_lat)) return bad("--net-lat", optarg, "microseconds >= 0"); ca.net_lat *= 1e-6; break;
        case TOPO: ca.topo = optarg; break;
        case STRICT: o->strict = 1; break;
        case PRICE: if (to_double(optarg, 1e-9, 1e12, &o->price)) return bad("--price-gpu-hour", optarg, "a price per GPU-hour > 0"); break;
        case PLATFORM: snprintf(o->platform_file, sizeof o->platform_file, "%s", optarg); break;
        case MODEL: snprintf(o->model, sizeof o->model, "%s", optarg), model_set = 1; break;
        case PROFILE: snprintf(o->profile_path, sizeof o->profile_path, "%s", optarg), o->has_profile = 1; break;
        case BATCH: if (to_int(optarg, 1, 1 << 30, &batch)) return bad("--batch", optarg, "a positive batch"); break;
        case PGB: if (to_int(optarg, 1, 1 << 20, &pgb)) return bad("--per-gpu-batch", optarg, "a positive batch"); break;
        case ACCUM: if (to_int(optarg, 1, 1 << 20, &o->accumulate)) return bad("--accumulate", optarg, "a positive number of micro-batches"); break;
        case GPUIMGS: img_s_given = 1; if (to_double(optarg, 0, 1e9, &gpu_img_s)) return bad("--gpu-img-s", optarg, "images/s >= 0 (0: the roofline's own figure)"); break;
        case PREC:
            prec_set = 1;
            if (!strcmp(optarg, "fp32")) o->prec = DT_PREC_FP32;
            else if (!strcmp(optarg, "tf32")) o->prec = DT_PREC_TF32;
            else if (!strcmp(optarg, "fp16")) o->prec = DT_PREC_FP16;
            else return bad("--precision", optarg, "fp32, tf32 or fp16");
            break;
        case OPTIM:
            if (dtsim_optimizer_option(optarg, o)) return 2;
            optim_set = 1;
            break;
        case ALGO: case INNER:
            algo_set |= c == ALGO;
            inner_set |= c == INNER;
            // the option's name, not argv[optind - 1]: with "--algo X" that is the value
            if (dt_algo_parse(optarg, c == ALGO ? "--algo" : "--inner",
                              c == ALGO ? &o->coll.algo : &o->coll.inner, &err)) {
                fprintf(stderr, "dtsim: %s\n", err.msg);
                return 2;
            }
            if (o->coll.algo == DT_ALGO_NCCL) {
                fprintf(stderr, "dtsim: --algo nccl: NCCL runs only on real GPUs (dtrain "
                                "--device cuda); simulate ring, dbtree or hier instead\n");
                return 2;
            }
            break;
        case FUSION:
            fusion_set = 1;
            if (dt_fusion_parse(optarg, &o->fusion, &err)) {
                fprintf(stderr, "dtsim: %s\n", err.msg);
                return 2;
            }
            break;
        case NOOVL: o->overlap = 0; break;
        case FP16G: o->coll.wire_f16 = 1; break;
        case GROUP: if (to_int(optarg, 1, 1 << 20, &o->coll.group)) return bad("--group", optarg, "a positive group size"); break;
        case HIERRS: o->coll.hier_rs = 1; break;
        case TORUS: {
            char tail;
            if (sscanf(optarg, "%dx%d%c", &o->coll.tx, &o->coll.ty, &tail) != 2 || o->coll.tx < 1 || o->coll.ty < 1)
                return bad("--torus", optarg, "XxY, e.g. 32x32");
            break;
        }
        case ITERS: if (to_int(optarg, 1, 1000, &o->iters)) return bad("--iters", optarg, "1..1000"); break;
        case WARMUP: if (to_int(optarg, 0, 1000, &o->warmup)) return bad("--warmup", optarg, "0..1000"); break;
        case DATASET: if (to_double(optarg, 1, 1e12, &o->dataset)) return bad("--dataset-size", optarg, "a positive count"); break;
        case EPOCHS: if (to_double(optarg, 1e-3, 1e6, &o->epochs)) return bad("--epochs", optarg, "a positive number"); break;
        case CSV: snprintf(o->csv, sizeof o->csv, "%s", optarg), o->csv_stdout = !strcmp(optarg, "-"); break;
        case JSON: o->json = 1; break;
        case TRACE: snprintf(o->trace, sizeof o->trace, "%s", optarg); break;
        case TRACER: if (to_int(optarg, 1, 1 << 20, &o->trace_ranks)) return bad("--trace-ranks", optarg, "a positive count"); break;
        case PLOT: snprintf(o->plot, sizeof o->plot, "%s", optarg); break;
        case COARSEN: if (to_int(optarg, 1, 1 << 20, &o->coarsen)) return bad("--coarsen", optarg, "a positive count"); break;
        case COARSENT: if (to_int(optarg, 1, 1 << 20, &o->coll.coarsen_tree)) return bad("--coarsen-dbtree", optarg, "a positive count"); break;
        case KEEP: o->keep = 1; break;
        case NOMEMCHK: o->no_memory_check = 1; break;
        case QUIET: o->quiet = 1; break;
        case SGPUS:
            if ((o->n_sweep_gpus = parse_list(optarg, o->sweep_gpus, 32)) < 1) return 2;
            break;
        case SALGOS: {
            char buf[256];
            snprintf(buf, sizeof buf, "%s", optarg);
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                if (o->n_sweep_algos == 8) return bad("--sweep-algos", optarg, "at most 8 algorithms");
                if (dt_algo_parse(t, "--sweep-algos", &o->sweep_algos[o->n_sweep_algos++], &err)) {
                    fprintf(stderr, "dtsim: %s\n", err.msg);
                    return 2;
                }
                if (o->sweep_algos[o->n_sweep_algos - 1] == DT_ALGO_NCCL) {
                    fprintf(stderr, "dtsim: --sweep-algos: nccl runs only on real GPUs "
                                    "(dtrain --device cuda)\n");
                    return 2;
                }
            }
            break;
        }
        case DEVICE:
            if (strcmp(optarg, "cpu") && strcmp(optarg, "model"))
                return bad("--device", optarg, "cpu (real numbers) or model (the default)");
            o->cpu = !strcmp(optarg, "cpu");
            break;
        case SEED: {
            double v;
            if (to_double(optarg, 0, 1.8e19, &v)) return bad("--seed", optarg, "a seed >= 0");
            o->seed = strtoull(optarg, NULL, 10);
            break;
        }
        case LR: if (to_double(optarg, 1e-9, 100, &o->lr)) return bad("--lr", optarg, "a learning rate > 0"); break;
        case IMGS: if (to_int(optarg, 4, 4096, &o->image_size)) return bad("--image-size", optarg, "4..4096"); break;
        case CLASSES: if (to_int(optarg, 2, 1 << 20, &o->classes)) return bad("--classes", optarg, "2 or more"); break;
        case SYNN: {
            int v;
            if (to_int(optarg, 1, 1 << 30, &v)) return bad("--synthetic-examples", optarg, "a positive count");
            o->synthetic_n = v;
            break;
        }
        case ANALYTIC: o->analytic = 1; break;
        case HELP: usage(stdout); return 1;
        default:
            {
                int fr = dtsim_fault_option(c, optarg, o);
                if (fr < 0) fr = dtsim_jobs_option(c, optarg, "dtsim", &o->par);
                if (fr < 0) fr = dtsim_gpt_option(c, optarg, o);
                if (fr > 0) return fr;
                if (fr == 0) break;
            }
            fprintf(stderr, "dtsim: unknown option or missing value: %s (see dtsim --help)\n", name);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "dtsim: unexpected argument '%s' (see dtsim --help)\n", argv[optind]);
        return 2;
    }
    // the cluster: a preset, or the default with the user's changes
    if (preset) {
        if (dt_cluster_preset(preset, gpus, &o->cluster, &err)) {
            fprintf(stderr, "dtsim: --preset: %s\n", err.msg);
            return 2;
        }
        if (!pgb && !batch) pgb = o->cluster.per_gpu_batch;
        if (o->cluster.model[0] && !strcmp(o->model, "resnet50"))
            snprintf(o->model, sizeof o->model, "%s", o->cluster.model);
        if (dtsim_preset_training(&o->cluster, o, prec_set, optim_set, algo_set, inner_set))
            return 2;
        if (gpu_img_s < 0 && o->cluster.gpu_img_s > 0) {  // the paper's framework
            gpu_img_s = o->cluster.gpu_img_s;
            o->calib_batch = o->cluster.per_gpu_batch;
            o->calib_prec = !strcmp(o->cluster.precision, "fp16") ? DT_PREC_FP16 : DT_PREC_FP32;
        }
    } else {
        o->cluster = dt_cluster_default(gpus ? gpus : 1024);
    }
    dt_cluster *c = &o->cluster;
    if (gpu) {
        if (!dt_gpu_find(gpu)) {
            fprintf(stderr, "dtsim: option --gpu: unknown GPU '%s' (valid: %s)\n", gpu, dt_gpu_names());
            return 2;
        }
        if (strcmp(c->gpu, gpu) && o->calib_batch) {  // the paper measured another GPU
            o->calib_batch = 0;
            if (gpu_img_s >= 0 && gpu_img_s == c->gpu_img_s) gpu_img_s = 0;
        }
    }
    ca.preset = preset, ca.gpu = gpu, ca.gpus = gpus;
    if (dtsim_cluster_begin(o, &ca)) return 2;
    const dt_gpu_profile *gp = dt_gpu_find(c->gpu);
    snprintf(o->src.prec, sizeof o->src.prec, "%s", prec_set ? "--precision"
             : preset && c->precision[0] ? "preset"
             : gp && gp->peak_tf32 > 0 ? "default; its tensor cores: --precision tf32|fp16"
                                       : "default");
    if (o->has_profile) {
        if (img_s_given || o->cpu) {
            fprintf(stderr, "dtsim: --profile calibrates from measurements: not with %s\n",
                    o->cpu ? "--device cpu (real numbers, no modelled time)" : "--gpu-img-s");
            return 2;
        }
        o->calib_batch = 0, gpu_img_s = 0;  // the measured profile, not a paper's figure
        if (dtsim_apply_profile(o, c, model_set, prec_set)) return 2;
        if (!pgb && !batch) pgb = o->profile.batch;
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
    if (batch) {
        if (batch % o->gpus) {
            fprintf(stderr, "dtsim: --batch %d does not divide over %d GPUs (need a multiple "
                            "of %d, or give --per-gpu-batch)\n", batch, o->gpus, o->gpus);
            return 2;
        }
        pgb = batch / o->gpus;
    }
    o->per_gpu_batch = pgb ? pgb : 32;  // 32 per GPU: 32K on the default 1024 GPUs
    o->global_batch = o->per_gpu_batch * o->gpus;
    if (preset && o->calib_batch && strcmp(o->model, o->cluster.model)) {
        o->calib_batch = 0;  // the paper measured ResNet-50, not this model
        if (gpu_img_s == o->cluster.gpu_img_s) gpu_img_s = 0;
    }
    o->gpu_img_s = gpu_img_s > 0 ? gpu_img_s : 0;
    if (!o->calib_batch) o->calib_batch = o->per_gpu_batch, o->calib_prec = o->prec;
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
    if (o->sweep && !o->n_sweep_gpus) {
        for (int g = 8; g <= 1024; g *= 2) o->sweep_gpus[o->n_sweep_gpus++] = g;
    }
    if (o->sweep && !o->n_sweep_algos) {
        const dt_algo def[] = {DT_ALGO_RING, DT_ALGO_RHD, DT_ALGO_HIER, DT_ALGO_DBTREE};
        for (int i = 0; i < 4; i++) o->sweep_algos[o->n_sweep_algos++] = def[i];
    }
    if (o->json && o->csv_stdout) {
        fprintf(stderr, "dtsim: --json and --csv - both print on stdout: give --csv a file\n");
        return 2;
    }
    if (o->cpu && (o->json || o->csv[0])) {
        fprintf(stderr, "dtsim: --device cpu prints the real losses, not simulated times: "
                        "not with %s\n", o->json ? "--json" : "--csv");
        return 2;
    }
    if (!o->cpu) dtsim_batch_warning(o);
    if (dtsim_faults_check(o) || dtsim_jobs_check(&o->par, "dtsim")) return 2;
    if ((o->par.jobs > 1 || o->par.slice_n || o->par.gather[0] || o->par.slurm[0]) && !o->sweep) {
        fprintf(stderr, "dtsim: -j, --slurm, --slice and --gather run many simulations: use "
                        "them with `dtsim sweep` or `dtsim plan`\n");
        return 2;
    }
    o->no_memory_check |= o->par.gather[0] != 0;  // read back, not simulated here
    if (o->cpu && !algo_set) o->coll.algo = DT_ALGO_RING;  // dtrain's defaults
    if (o->cpu && !optim_set) o->lars = 0;
    if (dtsim_gpt_check(o, optim_set)) return 2;
    if (o->cpu && !fusion_set) o->fusion = (dt_fusion_opts){DT_FUSION_BYTES, (size_t)64 << 20, 1};
    if (o->cpu && (o->sweep || o->gpus > 64)) {
        fprintf(stderr, "dtsim: --device cpu computes real numbers on every simulated GPU: "
                        "one run of at most 64 GPUs (this one: %s%d)\n", o->sweep ? "a sweep, " : "",
                o->gpus);
        return 2;
    }
    if (o->plot[0] && !o->sweep) {
        fprintf(stderr, "dtsim: --plot draws scaling curves: use it with `dtsim sweep`\n");
        return 2;
    }
    // the output files must be creatable before minutes of simulation, not after
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

// --device cpu: real numbers; the rank program's losses are the result (time is not modeled).
static int run_cpu(const dtsim_opts *o) {
    dtsim_result r;
    int rc = dtsim_run_one(o, &r);
    if (rc) return rc;
    if (!o->quiet)
        printf("dtsim --device cpu: %d ranks x batch %d of %s, real numbers on the cpu "
               "device (SimGrid carried the messages; compute time is not modeled)\n",
               o->gpus, o->per_gpu_batch, o->model);
    return 0;
}

// Where the human-readable report goes: stdout, or stderr when stdout carries the JSON or
// the CSV (--json, --csv -), and nowhere then with --quiet
static FILE *report_stream(const dtsim_opts *o) {
    if (o->json || o->csv_stdout) return o->quiet ? NULL : stderr;
    return stdout;
}

static int machine_output(const dtsim_opts *o, const dtsim_result *r, int n) {
    int rc = 0;
    if (o->csv[0] && dtsim_write_csv(o, o->csv, r, n)) rc = 1;
    if (o->json) dtsim_print_json(o, r, n);
    fflush(stdout);
    return rc;
}

static int run_single(const dtsim_opts *o) {
    dtsim_result r;
    FILE *out = report_stream(o);
    int rc = dtsim_prepare(o, &r);  // every refusal before the header
    if (rc) return rc;
    if (out && !o->quiet) dtsim_print_header(out, o);
    rc = o->coll.algo == DT_ALGO_AUTO ? dtsim_auto(o, &r) : dtsim_simulate(o, &r);
    if (!rc) rc = dtsim_faults_run(o, &r);
    if (rc) return rc;
    if (out) dtsim_print_result(out, o, &r, 0);
    if (out) dtsim_faults_report(out, o, &r);
    if (out && o->analytic) dtsim_analytic_note(out, o);
    return machine_output(o, &r, 1);
}

// The sweep's configuration of g GPUs and algorithm a: o's cluster with g GPUs. 0, or 2 when
// g is not a whole number of nodes.
static int sweep_point(const dtsim_opts *o, int g, dt_algo a, dtsim_opts *p) {
    *p = *o;
    p->gpus = g;
    p->coll.algo = a;
    if (p->gpus % p->cluster.gpus_per_node && !p->platform_file[0]) {
        fprintf(stderr, "dtsim: --sweep-gpus %d is not a whole number of %d-GPU nodes\n",
                p->gpus, p->cluster.gpus_per_node);
        return 2;
    }
    p->cluster.nodes = p->gpus / p->cluster.gpus_per_node;
    p->cluster.topo_params[0] = 0;
    p->global_batch = p->per_gpu_batch * p->gpus;
    return 0;
}

// Every GPU count x algorithm, the per-GPU batch held fixed (weak scaling): every point
// prepared (its refusals) before the header, then simulated; one table, then the CSV, JSON
// and plots of all rows.
static int run_sweep(const dtsim_opts *o) {
    int n = o->n_sweep_gpus * o->n_sweep_algos, rc = 0;
    dtsim_result *res = calloc((size_t)n, sizeof *res);
    dtsim_opts *pts = calloc((size_t)n, sizeof *pts);
    FILE *out = report_stream(o);
    for (int a = 0, i = 0; a < o->n_sweep_algos && !rc; a++)
        for (int g = 0; g < o->n_sweep_gpus && !rc; g++, i++)
            if (!(rc = sweep_point(o, o->sweep_gpus[g], o->sweep_algos[a], &pts[i])))
                rc = dtsim_prepare(&pts[i], &res[i]);
    if (o->par.slice_n) out = NULL;  // a slice saves its results; --gather prints them
    if (!rc && out && !o->quiet) dtsim_print_header(out, o);
    if (!rc) rc = dtsim_sweep_points(o, pts, res, n, out);
    if (!rc && !o->par.slice_n) {  // a failed CSV still leaves the JSON and the plots
        if (out) dtsim_print_sweep_band(out, o, res, n);
        if (out && o->analytic) dtsim_analytic_note(out, o);
        rc = machine_output(o, res, n);
        if (o->plot[0] && dtsim_plot(o->plot, o, res, n)) rc = 1;
    }
    free(res);
    free(pts);
    return rc;
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "calibrate")) return dtsim_calibrate_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "plan")) return dtsim_plan_main(argc - 1, argv + 1);
    dtsim_opts o;
    int rc = dtsim_parse(argc, argv, &o);
    if (rc) return rc == 1 ? 0 : rc;  // 1: --help was printed
    if (o.cpu) return run_cpu(&o);
    if (o.par.slurm[0])  // the slices' job script, nothing simulated here
        return dtsim_slurm_write(&o.par, "sweep", argc - 1, argv + 1,
                                 o.n_sweep_gpus * o.n_sweep_algos);
    return o.sweep ? run_sweep(&o) : run_single(&o);
}
