// dtrain.c — real data-parallel training with MPI on the CPU (`mpirun -np P dtrain`): the
// global batch is split over the ranks, each rank computes the gradient of its slice, the
// gradients are averaged with MPI_Allreduce (nn/train.c) and every replica applies the same
// update (Goyal et al. 2017, §2). Data comes from a prefetching thread (real/loader.c);
// checkpoints are atomic safetensors files (real/checkpoint.c) from which --resume continues
// bit-identically. --device cuda puts the math on one GPU per rank (dtrain_device.c).
// Not here: our own allreduce algorithms and overlap (coll/), the cuda device (real/cuda).
#define _GNU_SOURCE  // sched_getaffinity, CPU_COUNT
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint.h"
#include "dtrain.h"
#include "kernels.h"
#include "loader.h"
#include "safetensors.h"
#include "train.h"

// Set by SIGINT/SIGTERM; the loop finishes its step, all ranks agree, and the run stops
// without writing: the last complete checkpoint stays as it was.
static volatile sig_atomic_t stop_signal;
static void on_signal(int sig) { stop_signal = sig; }

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

// Every rank reports whether it failed; if any did, the lowest failing rank prints its
// message and everyone returns the worst exit code, so no rank hangs in a collective that
// another one skipped and the message appears once.
static int agree(int failed_code, const dt_error *err, int rank) {
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
static int load_data(const dtrain_opts *o, dt_dataset **train, dt_dataset **test,
                     dt_error *err) {
    *train = *test = NULL;
    if (!strcmp(o->data, "fashion-mnist")) {
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

// Data parallelism keeps the replicas identical (same start, same averaged gradient, same
// update); check it at the end of a run with a hash of every rank's parameters.
static int replicas_identical(const dt_net *net) {
    float *p = mallocCheck(net->n_total * sizeof(float));
    net->dev->to_host(net->dev, p, net->params, net->n_total * sizeof(float));
    uint64_t h = 0x243F6A8885A308D3ull;
    const uint32_t *u = (const uint32_t *)p;
    for (size_t i = 0; i < net->n_total; i++) h = dt_mix64(h ^ u[i]);
    free(p);
    unsigned long long lo = h, hi = h;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
}

// Index of the first example of the batch holding a NaN or infinity, or -1. A dataset
// format that carries floats could hold them; images cannot, but a guard is cheap here and
// a NaN in the input would otherwise surface as a mysterious NaN loss.
static int first_nonfinite_example(const dt_batch *b) {
    size_t per = (size_t)b->c * b->h * b->w;
    int first = INT_MAX;
#pragma omp parallel for schedule(static) reduction(min : first)
    for (int i = 0; i < b->b; i++)
        for (size_t k = 0; k < per; k++)
            if (!isfinite(b->x[i * per + k])) {
                first = i < first ? i : first;
                break;
            }
    return first == INT_MAX ? -1 : first;
}

static void progress_line(int epoch, int64_t s, int64_t spe, float loss, double ips,
                          double eta_s) {
    fprintf(stdout, "\r  epoch %d  step %lld/%lld  loss %.4f  %.0f img/s  ETA %d:%02d   ", epoch,
            (long long)s, (long long)spe, loss, ips, (int)(eta_s / 60), (int)fmod(eta_s, 60));
    fflush(stdout);
}

typedef struct {
    double train_loss, test_top1, test_loss, seconds, images_per_s, data_wait_s;
    double comm_s, hidden_s;  // allreduce time in flight, and the part hidden by backward
} epoch_stats;

static void log_epoch(FILE *csv, int epoch, int64_t step, float lr, const epoch_stats *e) {
    printf("epoch %3d  step %7lld  lr %.4f  train loss %.4f  test top-1 %6.2f %%  test loss "
           "%.4f  %6.1f s  %7.1f img/s  data wait %.2f s  comm %.2f s (%.0f %% hidden)\n",
           epoch, (long long)step, lr, e->train_loss, 100 * e->test_top1, e->test_loss,
           e->seconds, e->images_per_s, e->data_wait_s, e->comm_s,
           e->comm_s > 0 ? 100 * e->hidden_s / e->comm_s : 0.0);
    fflush(stdout);
    if (csv) {
        fprintf(csv, "%d,%lld,%.6g,%.6f,%.6f,%.6f,%.3f,%.2f,%.3f,%.4f,%.4f\n", epoch,
                (long long)step, lr, e->train_loss, e->test_top1, e->test_loss, e->seconds,
                e->images_per_s, e->data_wait_s, e->comm_s, e->hidden_s);
        fflush(csv);
    }
}

static int run(const dtrain_opts *o, int rank, int ranks) {
    dt_error err = {0};
    if (o->global_batch % ranks) {
        if (rank == 0)
            fprintf(stderr, "dtrain: --batch %d does not divide over %d ranks (need a multiple "
                            "of %d)\n", o->global_batch, ranks, ranks);
        return 2;
    }
    int threads = o->threads ? o->threads : default_threads(ranks);
    omp_set_num_threads(threads);

    dt_dataset *train = NULL, *test = NULL;
    int rc = agree(load_data(o, &train, &test, &err), &err, rank);
    if (rc) return rc;
    // before any buffer is sized by the batch: an absurd --batch is an error, not an OOM
    int64_t spe = dt_steps_per_epoch(train->n, o->global_batch, 1);
    if (spe < 1) {
        if (rank == 0)
            fprintf(stderr, "dtrain: --batch %d is larger than the training set (%lld "
                            "examples)\n", o->global_batch, (long long)train->n);
        dt_dataset_free(train);
        dt_dataset_free(test);
        return 2;
    }

    dt_device *dev = NULL;
    char dev_desc[256];
    rc = agree(dtrain_make_device(o, threads, &dev, dev_desc, sizeof dev_desc, &err) ? 2 : 0,
               &err, rank);
    if (rc) {
        if (dev) dev->destroy(dev);
        dt_dataset_free(train);
        dt_dataset_free(test);
        return rc;
    }
    if (o->device_cuda && rank == 0 && bound_cores() == 1)
        fprintf(stderr, "dtrain: note: this rank is bound to one core (mpirun's default for "
                "few ranks), so data decoding runs on one core and may starve the GPU; "
                "mpirun --bind-to none, or --map-by slot:pe=N, gives it more\n");
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = o->global_batch / ranks;
    cfg.in_c = train->c, cfg.in_h = train->h, cfg.in_w = train->w;
    cfg.num_classes = train->num_classes;
    cfg.seed = o->seed;
    cfg.dropout = o->dropout;
    dt_net *net = dt_model_create(o->model, dev, &cfg, &err);
    dt_optim_config oc = dt_optim_config_default(o->optimizer);
    oc.momentum = o->momentum, oc.weight_decay = o->weight_decay, oc.trust = o->trust;
    oc.nesterov = o->nesterov;
    dt_optim *opt = net ? dt_optim_create(net, &oc, &err) : NULL;
    rc = agree(opt ? 0 : (err.code ? err.code : 1), &err, rank);
    dt_trainer tr = {0};
    dt_loader *ld = NULL;
    FILE *csv = NULL;
    if (rc) goto out;

    dt_train_state st = {.epoch = 0, .step = 0, .seed = (int64_t)o->seed,
                         .global_batch = o->global_batch};
    char ckpt[1100] = "";
    if (o->checkpoint_dir[0]) {
        mkdir(o->checkpoint_dir, 0755);
        snprintf(ckpt, sizeof ckpt, "%s/checkpoint.safetensors", o->checkpoint_dir);
    }
    int bad_ckpt = 0;
    if (o->resume) {
        bad_ckpt = dt_checkpoint_load(ckpt, net, opt, &st, &err) ? err.code : 0;
        if (!bad_ckpt && (st.seed != (int64_t)o->seed || st.global_batch != o->global_batch)) {
            dt_fail(&err, DT_EXIT_USAGE, "checkpoint %s was made with --seed %lld --batch %lld; "
                    "resume with the same values", ckpt, (long long)st.seed,
                    (long long)st.global_batch);
            bad_ckpt = DT_EXIT_USAGE;
        }
    }
    if ((rc = agree(bad_ckpt, &err, rank))) goto out;
    if ((rc = agree(dt_trainer_init(&tr, net, opt, MPI_COMM_WORLD, &err) ? 2 : 0, &err, rank)))
        goto out;
    if ((rc = agree(dt_trainer_set_comm(&tr, &o->coll, &o->fusion, o->overlap, &err) ? 2 : 0,
                    &err, rank)))
        goto out;
    if ((rc = agree(dtrain_attach_algo(o, tr.coll, dev, &err) ? 2 : 0, &err, rank))) goto out;
    // Each rank's dropout stream advances once per training forward (nn/net_run.c): replay
    // it so a resumed run draws the masks the uninterrupted run would have drawn.
    for (int64_t i = 0; i < st.step; i++) net->dropout_seed = dt_mix64(net->dropout_seed);

    dt_lr_schedule lr_schedule = {.kind = o->lr_schedule,
                                  .warmup_steps = o->warmup_epochs * spe, .warmup_start = 0.1f,
                                  .total_steps = (double)o->epochs * spe, .power = 2,
                                  .gamma = 0.1f};
    lr_schedule.base_lr = o->lr > 0 ? o->lr : dt_linear_scaling_lr(0.1f, o->global_batch);
    if (o->lr_schedule == DT_LR_STEP) {  // decay at 50 % and 75 % of training
        lr_schedule.n_milestones = 2;
        lr_schedule.milestones[0] = 0.5 * lr_schedule.total_steps;
        lr_schedule.milestones[1] = 0.75 * lr_schedule.total_steps;
    }
    if (st.epoch >= o->epochs) {
        if (rank == 0) printf("dtrain: checkpoint already holds %lld epochs\n", (long long)st.epoch);
        goto out;
    }
    dt_loader_config lc = {.global_batch = o->global_batch, .ranks = ranks, .rank = rank,
                           .seed = o->seed, .first_epoch = st.epoch,
                           .epochs = o->epochs - st.epoch, .first_step = st.step - st.epoch * spe,
                           .shuffle = 1, .drop_last = 1, .queue = 3,
                           // the cpu device's threads compute; a GPU leaves the cores to
                           // decoding (a 224-pixel batch of 256 is ~40 M pixels per step)
                           .threads = dev->device_memory ? threads : 1};
    ld = dt_loader_create(train, &lc, &err);
    if ((rc = agree(ld ? 0 : 2, &err, rank))) goto out;
    if (rank == 0 && o->log_csv[0]) {
        int exists = access(o->log_csv, F_OK) == 0 && o->resume;
        csv = fopen(o->log_csv, exists ? "a" : "w");
        if (!csv) fprintf(stderr, "dtrain: cannot write --log %s; continuing without\n", o->log_csv);
        else if (!exists)
            fprintf(csv, "epoch,step,lr,train_loss,test_top1,test_loss,seconds,images_per_s,"
                         "data_wait_s,comm_s,comm_hidden_s\n");
    }
    if (rank == 0)
        printf("dtrain: %s on %s, %lld examples, %d ranks x %s, batch %d (%d per rank), "
               "%lld steps/epoch, lr %.4g, %s, allreduce %s%s in %d bucket%s%s\n", o->model,
               train->name, (long long)train->n, ranks, dev_desc, o->global_batch, cfg.batch,
               (long long)spe, lr_schedule.base_lr,
               o->optimizer == DT_OPT_LARS ? "LARS" : "SGD",
               dt_algo_name(o->coll.algo), o->coll.wire_f16 ? " (fp16)" : "", tr.n_buckets,
               tr.n_buckets == 1 ? "" : "s", tr.overlap ? " overlapping backward" : "");
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    // The live line goes to stdout: mpirun gives rank 0's stdout a pseudo-terminal, not stderr.
    int live = rank == 0 && !o->quiet && isatty(STDOUT_FILENO);
    double t_epoch = now_s(), t_run = t_epoch, wait_epoch = 0, loss_sum = 0, t_last_line = 0;
    int64_t n_loss = 0, steps_run = 0;
    double run_comm = 0, run_hidden = 0;
    epoch_stats last = {0};
    dt_batch b;
    double wait;
    int got;
    while ((got = dt_loader_next(ld, &b, &wait, &err)) == 1) {
        if (o->fault_die_step == st.step && rank == 1) _exit(3);  // --fault-die-at-step
        if (o->fault_nan_step == st.step && rank == 0 && b.b > 0) b.x[0] = NAN;  // testing
        int bad_ex = first_nonfinite_example(&b);
        if (bad_ex >= 0)
            dt_fail(&err, DT_EXIT_USAGE, "the input batch of step %lld holds NaN or Inf "
                    "(example %lld of %s); the data is corrupt", (long long)st.step,
                    (long long)b.indices[bad_ex], train->name);
        if ((rc = agree(bad_ex >= 0 ? DT_EXIT_USAGE : 0, &err, rank))) goto out;
        float lr = dt_lr_at(&lr_schedule, (double)st.step);
        float loss = dt_train_step(&tr, b.x, b.labels, lr);
        if (!isfinite(loss)) {
            if (rank == 0)
                fprintf(stderr, "%sdtrain: the loss is %s at step %lld (epoch %lld); stopping. "
                                "Try a smaller --lr or a longer --warmup.\n", live ? "\n" : "",
                        isnan(loss) ? "NaN" : "infinite", (long long)st.step,
                        (long long)b.epoch + 1);
            rc = 1;
            goto out;
        }
        st.step++, steps_run++;
        wait_epoch += wait, loss_sum += loss, n_loss++;
        int stop = stop_signal;
        MPI_Allreduce(MPI_IN_PLACE, &stop, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        double t = now_s();
        if (live && t - t_last_line > 0.5) {
            double ips = (double)n_loss * o->global_batch / (t - t_epoch);
            double left = (double)(o->epochs * spe - st.step) * o->global_batch / ips;
            progress_line((int)b.epoch + 1, b.step + 1, spe, loss, ips, left);
            t_last_line = t;
        }
        if (stop) {
            if (rank == 0)
                fprintf(stderr, "%sdtrain: interrupted at step %lld; %s%s\n", live ? "\n" : "",
                        (long long)st.step, ckpt[0] ? "the last complete checkpoint is " : "",
                        ckpt[0] ? ckpt : "no checkpoint was requested");
            rc = 130;
            goto out;
        }
        int end_epoch = b.step == spe - 1;
        int end_run = o->max_steps && steps_run >= o->max_steps;
        if (end_epoch) {
            st.epoch = b.epoch + 1;
            last.seconds = now_s() - t_epoch;
            last.train_loss = loss_sum / (double)n_loss;
            last.images_per_s = (double)n_loss * o->global_batch / last.seconds;
            last.data_wait_s = wait_epoch;
            last.comm_s = tr.sum_comm;
            last.hidden_s = tr.sum_comm - tr.sum_exposed > 0 ? tr.sum_comm - tr.sum_exposed : 0;
            run_comm += tr.sum_comm, run_hidden += last.hidden_s;
            dt_trainer_reset_stats(&tr);
            last.test_top1 = last.test_loss = NAN;
            if (test && o->eval_every && (st.epoch % o->eval_every == 0 || st.epoch == o->epochs)) {
                last.test_top1 = dtrain_evaluate(net, test, MPI_COMM_WORLD, &last.test_loss, &err);
                if ((rc = agree(last.test_top1 < 0 ? 1 : 0, &err, rank))) goto out;
            }
            if (live) printf("\r%*s\r", 100, "");
            if (rank == 0) log_epoch(csv, (int)st.epoch, st.step, lr, &last);
            t_epoch = now_s(), wait_epoch = 0, loss_sum = 0, n_loss = 0;
        }
        if (ckpt[0] && (end_epoch || end_run)) {
            int failed = rank == 0 && dt_checkpoint_save(ckpt, net, opt, &st, &err) ? 1 : 0;
            if ((rc = agree(failed, &err, rank))) goto out;
        }
        if (end_run) break;
    }
    if (got < 0 && (rc = agree(2, &err, rank))) goto out;
    if (live) printf("\r%*s\r", 100, "");
    int same = replicas_identical(net);
    if (!same) {
        if (rank == 0) fprintf(stderr, "dtrain: the replicas' parameters differ across ranks\n");
        rc = 1;
    }
    if (o->save_weights[0] && rank == 0 && dt_weights_save(net, o->save_weights, &err)) {
        fprintf(stderr, "dtrain: %s\n", err.msg);
        rc = 1;
    }
    double total = now_s() - t_run;
    if (rank == 0 && o->json)
        printf("{\"model\": \"%s\", \"ranks\": %d, \"global_batch\": %d, \"epochs\": %lld, "
               "\"steps\": %lld, \"seconds\": %.3f, \"images_per_s\": %.2f, \"train_loss\": "
               "%.6f, \"test_top1\": %.6f, \"test_loss\": %.6f, \"replicas_identical\": %s, "
               "\"algo\": \"%s\", \"buckets\": %d, \"overlap\": %s, \"comm_s\": %.4f, "
               "\"comm_hidden_s\": %.4f}\n",
               o->model, ranks, o->global_batch, (long long)st.epoch, (long long)st.step, total,
               steps_run * (double)o->global_batch / total, last.train_loss,
               isnan(last.test_top1) ? -1.0 : last.test_top1,
               isnan(last.test_loss) ? -1.0 : last.test_loss, same ? "true" : "false",
               dt_algo_name(o->coll.algo), tr.n_buckets, tr.overlap ? "true" : "false",
               run_comm + tr.sum_comm,
               run_hidden + (tr.sum_comm > tr.sum_exposed ? tr.sum_comm - tr.sum_exposed : 0));
out:
    if (csv) fclose(csv);
    dt_loader_destroy(ld);
    dt_trainer_free(&tr);
    dt_optim_free(opt);
    dt_net_free(net);
    dev->destroy(dev);
    dt_dataset_free(train);
    dt_dataset_free(test);
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
