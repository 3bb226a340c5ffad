// dtrain.c — real data-parallel training with MPI (`mpirun -np P dtrain`): the global batch
// is split over the ranks, each rank computes the gradient of its slice, the gradients are
// averaged over the ranks by dtlab's allreduce library (nn/train.c; fusion buckets whose
// allreduces overlap backward, nn/train_comm.c; the algorithm named by --algo, nn/coll) and
// every replica applies the same update (Goyal et al. 2017, §2). This file sets a run up and
// tears it down; the training loop and its reports are in dtrain_loop.c. Data comes from a
// prefetching thread (real/loader.c); checkpoints are atomic safetensors files
// (real/checkpoint.c) from which --resume continues bit-identically. --device cuda puts the
// math on one GPU per rank (dtrain_device.c).
// Not here: the allreduce algorithms (nn/coll), the cuda device (real/cuda).
#define _GNU_SOURCE  // sched_getaffinity, CPU_COUNT
#include <errno.h>
#include <limits.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtrain.h"
#include "kernels.h"
#include "safetensors.h"
#include "train_trace.h"

// The lowest failing rank prints its message, every rank returns the worst code (dtrain.h).
int dtrain_agree(int failed_code, const dt_error *err, int rank) {
    int worst = failed_code, first = failed_code ? rank : INT_MAX;
    MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!worst) return 0;
    MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == rank) fprintf(stderr, "dtrain: %s\n", err && err->msg[0] ? err->msg : "failed");
    return worst;
}

// Cores this process may run on (mpirun binds each rank to one core by default when it
// starts few ranks), 0 if unknown.
static int bound_cores(void) {
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}

static int default_threads(int ranks) {
    int per_node = dt_coll_local_size();  // the launcher's ranks per node (coll/coll.h)
    if (!per_node) per_node = ranks;
    if (per_node < 1) per_node = 1;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int t = (int)(cores / per_node), mine = bound_cores();
    if (mine > 0 && mine < t) t = mine;  // the launcher bound this rank to fewer cores
    return t < 1 ? 1 : t;
}

// The training and test sets named by --data.
static int load_data(dtrain_run *r, dt_dataset **train, dt_dataset **test, dt_error *err) {
    const dtrain_opts *o = r->o;
    *train = *test = NULL;
    if (dtrain_text_path(o, NULL, 0)) {  // gpt models (dtrain_text.c)
        return dtrain_load_text(o, train, test, &r->bpe, &r->bytes_per_token, err);
    } else if (!strcmp(o->data, "fashion-mnist")) {
        *train = dt_dataset_load_idx(o->data_dir, "train", err);
        if (*train) *test = dt_dataset_load_idx(o->data_dir, "t10k", err);
    } else if (!strcmp(o->data, "synthetic")) {
        int side = o->image_size ? o->image_size : 32;
        *train = dt_dataset_synthetic(o->synthetic_n, 3, side, side, o->classes, o->seed, err);
        int64_t nt = o->synthetic_n / 6 > 0 ? o->synthetic_n / 6 : 1;
        if (*train) *test = dt_dataset_synthetic(nt, 3, side, side, o->classes, o->seed + 1, err);
    } else {  // folder:ROOT — ROOT/train and ROOT/val as in ImageNet's layout, else ROOT alone
        const char *root = o->data + 7;
        char tr[1024], va[1024];
        struct stat sb;
        snprintf(tr, sizeof tr, "%s/train", root);
        snprintf(va, sizeof va, "%s/val", root);
        int split = stat(tr, &sb) == 0 && S_ISDIR(sb.st_mode);
        dt_folder_opts fo = {.resize = 0, .crop = o->image_size, .train = 1};
        *train = dt_dataset_folder(split ? tr : root, &fo, err);
        fo.train = 0;
        if (*train && split && stat(va, &sb) == 0) *test = dt_dataset_folder(va, &fo, err);
    }
    if (!*train || (!*test && err->code)) {
        dt_dataset_free(*train);
        *train = NULL;
        return err->code ? err->code : DT_EXIT_USAGE;
    }
    return 0;
}

// ---- set-up ----

// The datasets, and the steps per epoch they give.
static int set_up_data(dtrain_run *r) {
    r->text = dtrain_text_path(r->o, NULL, 0);
    r->T = r->text ? dtrain_text_seq_len(r->o) : 0;
    int rc = dtrain_agree(load_data(r, &r->train, &r->test, &r->err), &r->err, r->rank);
    if (rc) return rc;
    // --train-examples N: the first N examples only (torch.utils.data.Subset of a range)
    if (r->o->train_examples > 0 && r->o->train_examples < r->train->n)
        r->train->n = r->o->train_examples;
    // before any buffer is sized by the batch: an absurd --batch is an error, not an OOM
    r->spe = dt_steps_per_epoch(r->train->n, r->o->global_batch, 1);
    if (r->spe < 1) {
        if (r->rank == 0)
            fprintf(stderr, "dtrain: --batch %d is larger than the training set (%lld "
                            "examples)\n", r->o->global_batch, (long long)r->train->n);
        return 2;
    }
    return 0;
}

static int set_up_device(dtrain_run *r) {
    const dtrain_opts *o = r->o;
    int failed = dtrain_make_device(o, r->threads, &r->dev, r->dev_desc, sizeof r->dev_desc,
                                    &r->err) ? 2 : 0;
    int rc = dtrain_agree(failed, &r->err, r->rank);
    if (rc) return rc;
    if (o->device_cuda && r->rank == 0 && bound_cores() == 1)
        fprintf(stderr, "dtrain: note: this rank is bound to one core (mpirun's default for "
                "few ranks), so data decoding runs on one core and may starve the GPU; "
                "mpirun --bind-to none, or --map-by slot:pe=N, gives it more\n");
    return 0;
}

// This rank's replica of the model, for its slice of the global batch, and its optimizer.
static int set_up_model(dtrain_run *r) {
    const dtrain_opts *o = r->o;
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = o->global_batch / r->dp / o->accumulate;  // the micro-batch
    cfg.in_c = r->train->c, cfg.in_h = r->train->h, cfg.in_w = r->train->w;
    cfg.num_classes = r->train->num_classes;
    cfg.seed = o->seed;
    cfg.dropout = o->dropout;
    cfg.amp = o->precision;
    cfg.seq_len = r->T;  // gpt models (0 for images)
    cfg.vocab = r->bpe ? dt_bpe_vocab(r->bpe) : 0;  // the tokenizer's, else the model's own
    dt_net *whole = dt_model_create(o->model, r->dev, &cfg, &r->err);
    // --weights: every rank loads them before the trainer broadcasts rank 0's (so a bad
    // file stops every rank with the same message, before any step)
    dt_weights_opts wo = {1, o->weights_new_head, 0};
    r->net = whole;
    if (r->net && o->weights[0] && dt_weights_load_path(r->net, o->weights, &wo, &r->err)) {
        int h = dt_weights_head(r->net);
        char head[100];
        snprintf(head, sizeof head, "'%s' has shape",
                 h < r->net->n_params ? r->net->params_table[h].name : "");
        size_t len = strlen(r->err.msg);
        if (strstr(r->err.msg, head) && len + 120 < sizeof r->err.msg)
            snprintf(r->err.msg + len, sizeof r->err.msg - len, " (another number of classes? "
                     "--weights-new-head keeps this model's own classifier)");
        if (r->text && strstr(r->err.msg, "'transformer.wte.weight' has shape") &&
            len + 120 < sizeof r->err.msg)  // the tied head: its rows are the vocabulary
            snprintf(r->err.msg + len, sizeof r->err.msg - len, " (a model of another "
                     "vocabulary: this tensor has a row per token, --model %s has %d)",
                     o->model, r->net->num_classes);
        dt_net_free(r->net);
        r->net = NULL;
    }
    if (r->net) r->net = dtrain_pipe_net(r, r->net, &cfg);  // --pp: this rank's stage
    dt_optim_config oc = dt_optim_config_default(o->optimizer);
    oc.momentum = o->momentum, oc.weight_decay = o->weight_decay, oc.trust = o->trust;
    oc.nesterov = o->nesterov;
    // AdamW and LAMB: GPT-3's beta2 (Brown et al. 2020, app. B: betas 0.9, 0.95), as llm.c
    if (o->optimizer == DT_OPT_ADAMW || o->optimizer == DT_OPT_LAMB) oc.beta2 = 0.95f;
    if (r->net && o->shard_optimizer && r->dp < 2) {  // (the same on every rank)
        dt_fail(&r->err, DT_EXIT_USAGE, "%s needs 2 or more %sranks: with one there is no "
                "other to hold the rest of the %s (drop it, or run under mpirun -np N)",
                o->shard_flag, r->whole ? "data-parallel " : "",
                o->shard == DT_SHARD_PARAMETERS ? "model state"
                : o->shard == DT_SHARD_GRADIENTS ? "gradient and optimizer state"
                : "optimizer state");
        dt_net_free(r->net);
        r->net = NULL;
    }
    if (r->net && o->shard_optimizer)  // ZeRO stage 1: momentum for this rank's shard only
        r->opt = dt_optim_create_shard(r->net, &oc,
                                       dt_shard_lo(r->net->n_trainable, r->dp, r->dp_rank),
                                       dt_shard_lo(r->net->n_trainable, r->dp,
                                                   r->dp_rank + 1),
                                       &r->err);
    else
        r->opt = r->net ? dt_optim_create(r->net, &oc, &r->err) : NULL;
    return dtrain_agree(r->opt ? 0 : (r->err.code ? r->err.code : 1), &r->err, r->rank);
}

// The checkpoint's path and, with --resume, what it holds: weights, running statistics,
// momentum, and the epochs and steps completed.
static int set_up_checkpoint(dtrain_run *r) {
    const dtrain_opts *o = r->o;
    dt_train_state *st = &r->st;
    *st = (dt_train_state){.epoch = 0, .step = 0, .seed = (int64_t)o->seed,
                           .global_batch = o->global_batch};
    if (o->checkpoint_dir[0]) {
        mkdir(o->checkpoint_dir, 0755);
        snprintf(r->ckpt, sizeof r->ckpt, "%s/checkpoint.safetensors", o->checkpoint_dir);
        char stale[600];
        int k = r->rank == 0 ? dt_checkpoint_remove_stale(r->ckpt, stale, sizeof stale) : 0;
        if (k)
            printf("dtrain: removed %s%s, left by a run killed while writing its checkpoint\n",
                   stale, k > 1 ? " and others" : "");
    }
    int bad_ckpt = 0;
    if (o->resume) {
        bad_ckpt = dt_checkpoint_load_state(r->ckpt, r->whole ? r->whole : r->net,
                                            r->opt->cfg.kind, &r->resumed, st,
                                            &r->err) ? r->err.code : 0;
        if (!bad_ckpt && (st->seed != (int64_t)o->seed || st->global_batch != o->global_batch)) {
            dt_fail(&r->err, DT_EXIT_USAGE, "checkpoint %s was made with --seed %lld --batch "
                    "%lld; resume with the same values", r->ckpt, (long long)st->seed,
                    (long long)st->global_batch);
            bad_ckpt = DT_EXIT_USAGE;
        }
        if (!bad_ckpt && r->whole) dtrain_pipe_resumed(r);  // this part of the whole's
        if (!bad_ckpt && r->rank == 0)
            printf("dtrain: resuming from %s at epoch %lld, step %lld\n", r->ckpt,
                   (long long)st->epoch, (long long)st->step);
    }
    return dtrain_agree(bad_ckpt, &r->err, r->rank);
}

// The trainer (it broadcasts rank 0's weights to every replica) and its allreduce: --algo,
// --fusion, --no-overlap, and NCCL for --algo nccl.
static int set_up_trainer(dtrain_run *r) {
    const dtrain_opts *o = r->o;
    int failed = dt_trainer_init(&r->tr, r->net, r->opt, r->dp_comm, &r->err) ? 2 : 0;
    int rc = dtrain_agree(failed, &r->err, r->rank);
    if (rc) return rc;
    failed = dt_trainer_set_comm(&r->tr, &o->coll, &o->fusion, o->overlap, &r->err) ||
                     dt_trainer_set_accumulate(&r->tr, o->accumulate, &r->err) ||
                     dt_trainer_set_shard(&r->tr, o->shard, &r->err) ? 2 : 0;
    if ((rc = dtrain_agree(failed, &r->err, r->rank))) return rc;
    failed = dtrain_attach_algo(o, r->tr.coll, r->dev, &r->err) ? 2 : 0;
    if ((rc = dtrain_agree(failed, &r->err, r->rank))) return rc;
    if ((rc = dtrain_pipe_attach(r))) return rc;  // --pp: the stage's schedule
    if (r->resumed.m) {  // the checkpoint's optimizer state: whole, or this rank's pieces
        dt_trainer_scatter_state(&r->tr, r->resumed.m, r->resumed.v, r->resumed.step);
        dt_optim_state_free(&r->resumed);
    }
    dt_trainer_set_clip(&r->tr, o->clip);
    // clipping's and LAMB's norms summed from the pieces a sharded run's ranks hold, in the
    // plain run too: --shard STAGE then gives the plain run's bits (nn/optim_norms.c)
    r->tr.piece_norms = 1;
    // fp16 keeps its gradients above underflow with a dynamic loss scale (Micikevicius et
    // al. 2018 §3.2), resumed where the checkpoint left it; bf16 has fp32's exponent range
    // and needs none, like fp32.
    if (o->precision == DT_AMP_FP16 && o->loss_scale > 0) {
        dt_loss_scaler ls = dt_loss_scaler_default();
        ls.scale = r->st.loss_scale > 0 ? r->st.loss_scale : o->loss_scale;
        ls.good_steps = (int)r->st.loss_scale_good_steps;
        ls.skipped = (long)r->st.skipped_steps;
        ls.growth_interval = o->loss_scale_interval;
        dt_trainer_set_loss_scaling(&r->tr, &ls);
    }
    // Each rank's dropout stream advances once per training forward (nn/net_run.c): replay
    // it so a resumed run draws the masks the uninterrupted run would have drawn.
    dt_net *net = r->net;
    for (int64_t i = 0; i < r->st.step; i++) net->dropout_seed = dt_mix64(net->dropout_seed);
    return 0;
}

// Warm-up over --warmup epochs from a tenth of the peak, then --lr-schedule: constant, x0.1
// at 50 % and 75 % of training (step), or down to 0 as (1 - progress)^2 (poly). The peak is
// --lr, else the linear scaling rule's 0.1 x batch/256.
static dt_lr_schedule make_lr_schedule(const dtrain_opts *o, int64_t spe) {
    dt_lr_schedule s = {.kind = o->lr_schedule, .warmup_steps = o->warmup_epochs * spe,
                        .warmup_start = 0.1f, .total_steps = (double)o->epochs * spe,
                        .power = 2, .gamma = 0.1f};
    s.base_lr = o->lr > 0 ? o->lr : dt_linear_scaling_lr(0.1f, o->global_batch);
    s.final_frac = 0.1f;  // cosine: down to a tenth of the peak, as nanoGPT's min_lr
    if (o->lr_schedule == DT_LR_STEP) {  // decay at 50 % and 75 % of training
        s.n_milestones = 2;
        s.milestones[0] = 0.5 * s.total_steps, s.milestones[1] = 0.75 * s.total_steps;
    }
    return s;
}

// The loader's thread, from where the run stands (a resumed run starts mid-epoch).
static int set_up_loader(dtrain_run *r) {
    const dtrain_opts *o = r->o;
    dt_loader_config lc = {.global_batch = o->global_batch, .ranks = r->dp, .rank = r->dp_rank,
                           .seed = o->seed, .first_epoch = r->st.epoch,
                           .epochs = o->epochs - r->st.epoch,
                           .first_step = r->st.step - r->st.epoch * r->spe,
                           .shuffle = 1, .drop_last = 1, .queue = 3,
                           // the cpu device's threads compute; a GPU leaves the cores to
                           // decoding (a 224-pixel batch of 256 is ~40 M pixels per step)
                           .threads = r->dev->device_memory ? r->threads : 1};
    r->ld = dt_loader_create(r->train, &lc, &r->err);
    return dtrain_agree(r->ld ? 0 : 2, &r->err, r->rank);
}

// --log: rank 0 writes one row per epoch; a resumed run appends to the file it finds. A
// file that cannot be created is bad input (exit 2, before any step).
static int open_log(dtrain_run *r) {
    const dtrain_opts *o = r->o;
    if (!o->log_csv[0]) return 0;
    int bad = 0;
    if (r->rank == 0) {
        int exists = access(o->log_csv, F_OK) == 0 && o->resume;
        r->csv = fopen(o->log_csv, exists ? "a" : "w");
        if (!r->csv) {
            dt_fail(&r->err, DT_EXIT_USAGE, "--log %.400s: cannot write the file: %s (expected "
                    "a writable path in an existing directory)", o->log_csv, strerror(errno));
            bad = DT_EXIT_USAGE;
        } else if (!exists &&
                   dtrain_log_row(r->csv, r->text
                                  ? "epoch,step,lr,train_loss,val_top1,val_loss,seconds,"
                                    "tokens_per_s,data_wait_s,comm_s,comm_hidden_s\n"
                                  : "epoch,step,lr,train_loss,test_top1,test_loss,seconds,"
                                    "images_per_s,data_wait_s,comm_s,comm_hidden_s\n")) {
            dt_fail(&r->err, DT_EXIT_RUNTIME, "--log %.400s: write failed: %s", o->log_csv,
                    strerror(errno));
            bad = DT_EXIT_RUNTIME;
        }
    }
    return dtrain_agree(bad, &r->err, r->rank);
}

// --trace: rank 0 makes sure the file can be created where it was asked, before any step
// (the trace itself is written at the end, dt_trace_write); every rank keeps its events.
static int set_up_trace(dtrain_run *r) {
    const dtrain_opts *o = r->o;
    if (!o->trace[0]) return 0;
    int bad = 0;
    if (r->rank == 0) {
        char probe[600];
        snprintf(probe, sizeof probe, "%s.tmp.%d", o->trace, (int)getpid());
        FILE *f = fopen(probe, "w");
        if (!f) {
            dt_fail(&r->err, DT_EXIT_USAGE, "--trace %s: cannot create a file there (a "
                    "missing or read-only directory?)", o->trace);
            bad = DT_EXIT_USAGE;
        } else {
            fclose(f);
            remove(probe);
        }
    }
    if ((bad = dtrain_agree(bad, &r->err, r->rank))) return bad;
    r->trace = dt_trace_new(r->rank);
    return 0;
}

// Set-up, step by step, each step agreed on by all ranks (dtrain_agree): the data, the
// device, the model and its optimizer, the checkpoint to resume from, the trainer, the lr
// schedule, the loader and the log. Returns 0 (*done = 1: the checkpoint already holds
// every epoch) or the exit code, the same on every rank.
static int set_up(dtrain_run *r, int *done) {
    const dtrain_opts *o = r->o;
    *done = 0;
    int rc = dtrain_pipe_check(o, r->ranks, r->rank);
    if (rc) return rc;
    dtrain_pipe_layout(r);  // without --pp: every rank a data-parallel replica
    const char *of = o->pp >= 1 || o->tp > 1 ? " data-parallel" : "";
    if (o->global_batch % r->dp) {
        if (r->rank == 0)
            fprintf(stderr, "dtrain: --batch %d does not divide over %d%s ranks (need a "
                            "multiple of %d)\n", o->global_batch, r->dp, of, r->dp);
        return 2;
    }
    if ((o->global_batch / r->dp) % o->accumulate) {
        if (r->rank == 0)
            fprintf(stderr, "dtrain: --batch %d over %d%s ranks x --accumulate %d "
                            "micro-batches does not divide (need a multiple of %d)\n",
                    o->global_batch, r->dp, of, o->accumulate, r->dp * o->accumulate);
        return 2;
    }
    if (o->slow_rank >= r->ranks) {
        if (r->rank == 0)
            fprintf(stderr, "dtrain: --slow-rank %d:%g: there are only %d ranks (0 .. %d)\n",
                    o->slow_rank, o->slow_factor, r->ranks, r->ranks - 1);
        return 2;
    }
    r->threads = o->threads ? o->threads : default_threads(r->ranks);
    omp_set_num_threads(r->threads);
    if ((rc = set_up_data(r)) || (rc = set_up_device(r)) || (rc = set_up_model(r)) ||
        (rc = set_up_checkpoint(r)) || (rc = set_up_trainer(r)) || (rc = set_up_trace(r)))
        return rc;
    r->lr_schedule = make_lr_schedule(o, r->spe);
    if (r->st.epoch >= o->epochs) {
        if (r->rank == 0)
            printf("dtrain: checkpoint already holds %lld epochs\n", (long long)r->st.epoch);
        *done = 1;
        return 0;
    }
    if ((rc = set_up_loader(r))) return rc;
    if (r->text) {  // a step's token ids and targets (dt_train_step_tokens)
        size_t n = (size_t)(o->global_batch / r->dp) * (size_t)r->T;
        r->tok = mallocCheck(n * sizeof(int32_t));
        r->tgt = mallocCheck(n * sizeof(int32_t));
    }
    return (rc = open_log(r)) ? rc : dtrain_steps_open(r);
}

static void tear_down(dtrain_run *r) {
    if (r->csv) fclose(r->csv);
    dtrain_steps_close(r);
    free(r->tok);
    free(r->tgt);
    dt_loader_destroy(r->ld);
    dtrain_pipe_free(r);  // (before the trainer: it unhooks itself)
    dt_trainer_free(&r->tr);
    dt_optim_state_free(&r->resumed);
    dt_optim_free(r->opt);
    dt_net_free(r->net);
    if (r->dev) r->dev->destroy(r->dev);
    dt_dataset_free(r->train);
    dt_bpe_free(r->bpe);
    dt_dataset_free(r->test);
}

// ---- main ----

static int run(const dtrain_opts *o, int rank, int ranks) {
    if (o->generate) return dtrain_generate(o, rank);  // text from --weights, no training
    dtrain_run r = {.o = o, .rank = rank, .ranks = ranks};
    int done, rc = set_up(&r, &done);
    if (!rc && !done) rc = dtrain_train(&r);
    tear_down(&r);
    return rc;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    dtrain_opts o;
    int rc = dtrain_parse(argc, argv, &o, rank);
    if (rc == 0) rc = run(&o, rank, ranks);
    else if (rc == 1) rc = 0;  // --help
    MPI_Finalize();
    return rc;
}
