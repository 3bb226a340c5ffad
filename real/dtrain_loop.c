// dtrain_loop.c — dtrain's training loop and what it reports, once set-up (dtrain.c) has
// built everything: one optimizer step per batch from the loader (nn/train.c's
// dt_train_step), the live progress line, at the end of each epoch its line, the test set
// and a checkpoint, and at the end the check that the replicas are identical, the final
// weights and the --json summary. Every way out (a signal, a NaN, a failed checkpoint) is
// agreed on by all ranks, so none is left waiting in a collective.
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtrain.h"
#include "dtrain_profile.h"
#include "dtrain_slow.h"
#include "kernels.h"
#include "models.h"
#include "safetensors.h"
#include "train_trace.h"

// Set by SIGINT/SIGTERM; the loop finishes its step, all ranks agree, and the run stops
// without writing: the last complete checkpoint stays as it was. While the loop runs, the
// thread that runs it blocks both signals (stop_signals): a signal delivered in the middle of
// its kernels corrupted the heap about one run in seven on an AVX-512/AMX Xeon (oneDNN's
// sgemm and then free() failing; never without the signal), so the signal goes to another
// thread's handler, or waits pending until stop_requested takes it between two steps.
static volatile sig_atomic_t stop_signal;
static void on_signal(int sig) { stop_signal = sig; }

static void stop_signals(int how) {
    sigset_t stops;
    sigemptyset(&stops), sigaddset(&stops, SIGINT), sigaddset(&stops, SIGTERM);
    pthread_sigmask(how, &stops, NULL);
}

// Data parallelism keeps the replicas identical (same start, same averaged gradient, same
// update); check it at the end of a run with a hash of every rank's parameters.
static int replicas_identical(const dt_net *net, MPI_Comm comm) {
    float *p = mallocCheck(net->n_total * sizeof(float));
    net->dev->to_host(net->dev, p, net->params, net->n_total * sizeof(float));
    uint64_t h = 0x243F6A8885A308D3ull;
    const uint32_t *u = (const uint32_t *)p;
    for (size_t i = 0; i < net->n_total; i++) h = dt_mix64(h ^ u[i]);
    free(p);
    unsigned long long lo = h, hi = h;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm);
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

typedef struct {
    double train_loss, test_top1, test_loss, seconds, images_per_s, data_wait_s;
    double comm_s, hidden_s;  // allreduce time in flight, and the part hidden by backward
} epoch_stats;

// What the loop measures (wall clock) for the live line, the epoch lines and the summary.
typedef struct {
    int live;                        // the live progress line is shown
    double t_run, t_epoch, t_last_line;
    double wait_epoch, loss_sum;     // this epoch's data wait and sum of step losses
    int64_t n_loss, steps_run;       // steps in this epoch, steps in this run
    double run_comm, run_hidden;     // allreduce time over the finished epochs
    epoch_stats last;                // the last finished epoch
} dtrain_progress;

// ---- reporting ----

static void progress_line(int epoch, int64_t s, int64_t spe, float loss, double ips,
                          const char *unit, double eta_s) {
    fprintf(stdout, "\r  epoch %d  step %lld/%lld  loss %.4f  %.0f %s  ETA %d:%02d   ", epoch,
            (long long)s, (long long)spe, loss, ips, unit, (int)(eta_s / 60),
            (int)fmod(eta_s, 60));
    fflush(stdout);
}

int dtrain_log_row(FILE *f, const char *line) {
    long at = ftell(f);
    if (fputs(line, f) >= 0 && fflush(f) == 0) return 0;
    int e = errno;
    __fpurge(f);  // what stdio still holds of the line must not reach the file at fclose
    clearerr(f);
    if (at >= 0 && ftruncate(fileno(f), (off_t)at) == 0) fseek(f, at, SEEK_SET);
    errno = e;
    return -1;
}

// The epoch line on stdout and its --log row; -1 (errno set) if the row could not be written.
static int log_epoch(FILE *csv, int epoch, int64_t step, float lr, const epoch_stats *e,
                     const dt_trainer *tr, int T, double bpt) {
    char scaler[96] = "";
    if (tr->loss_scaling)  // fp16: the dynamic loss scale now, and the steps it skipped
        snprintf(scaler, sizeof scaler, "  loss scale %g (%ld skipped)",
                 (double)tr->scaler.scale, tr->scaler.skipped);
    if (T > 0)  // text: the held-out split's loss per token, next-token accuracy, tokens/s
        printf("epoch %3d  step %7lld  lr %.3g  train loss %.4f  val loss %.4f (%.3f bits per "
               "byte)  val next-token top-1 %5.2f %%  %6.1f s  %8.0f tok/s  data wait %.2f s  "
               "comm %.2f s (%.0f %% hidden)\n", epoch, (long long)step, lr, e->train_loss,
               e->test_loss, DTRAIN_BITS(e->test_loss, bpt), 100 * e->test_top1, e->seconds,
               e->images_per_s * T, e->data_wait_s, e->comm_s,
               e->comm_s > 0 ? 100 * e->hidden_s / e->comm_s : 0.0);
    else
        printf("epoch %3d  step %7lld  lr %.4f  train loss %.4f  test top-1 %6.2f %%  test "
               "loss %.4f  %6.1f s  %7.1f img/s  data wait %.2f s  comm %.2f s (%.0f %% "
               "hidden)%s\n", epoch, (long long)step, lr, e->train_loss, 100 * e->test_top1,
               e->test_loss, e->seconds, e->images_per_s, e->data_wait_s, e->comm_s,
               e->comm_s > 0 ? 100 * e->hidden_s / e->comm_s : 0.0, scaler);
    fflush(stdout);
    if (!csv) return 0;
    char row[512];
    snprintf(row, sizeof row, "%d,%lld,%.6g,%.6f,%.6f,%.6f,%.3f,%.2f,%.3f,%.4f,%.4f\n", epoch,
             (long long)step, lr, e->train_loss, e->test_top1, e->test_loss, e->seconds,
             e->images_per_s * (T > 0 ? T : 1), e->data_wait_s, e->comm_s, e->hidden_s);
    return dtrain_log_row(csv, row);
}

static void print_banner(const dtrain_run *r) {
    const dtrain_opts *o = r->o;
    const dt_trainer *tr = &r->tr;
    if (r->rank != 0) return;
    char per_rank[64];
    if (o->accumulate > 1)
        snprintf(per_rank, sizeof per_rank, "%d per rank in %d micro-batches of %d",
                 o->global_batch / r->dp, o->accumulate, r->net->B);
    else
        snprintf(per_rank, sizeof per_rank, "%d per rank", o->global_batch / r->dp);
    static const char *const opt_names[] = {"SGD", "LARS", "AdamW", "LAMB"};
    char what[128] = "examples", clip[48] = "";
    if (o->clip > 0) snprintf(clip, sizeof clip, ", gradient norm clipped to %g", o->clip);
    if (r->text && r->bpe)
        snprintf(what, sizeof what, "sequences of %d tokens of a byte-level BPE of %d (%.2f "
                 "bytes per token; +%lld held out)", r->T, dt_bpe_vocab(r->bpe),
                 r->bytes_per_token, r->test ? (long long)r->test->n : 0LL);
    else if (r->text)
        snprintf(what, sizeof what, "sequences of %d byte tokens (+%lld held out)", r->T,
                 r->test ? (long long)r->test->n : 0LL);
    printf("dtrain: %s on %s, %lld %s, %d ranks x %s, batch %d (%s), "
           "%lld steps/epoch, lr %.4g, %s%s, allreduce %s%s in %d bucket%s%s\n", o->model,
           r->train->name, (long long)r->train->n, what, r->ranks, r->dev_desc,
           o->global_batch, per_rank, (long long)r->spe, r->lr_schedule.base_lr,
           opt_names[o->optimizer], clip,
           dt_algo_name(o->coll.algo),
           o->coll.wire_f16 ? " (fp16)" : "", tr->n_buckets, tr->n_buckets == 1 ? "" : "s",
           tr->overlap && !o->shard_optimizer ? " overlapping backward" : "");
    if (o->pp >= 1) {
        dt_recompute rc = r->pipe.recompute;
        printf("dtrain: pipeline of %d stages (%s), %d data-parallel ranks each: rank 0 holds "
               "blocks %d..%d of %d and the embedding; %s recomputation: %s\n", o->pp,
               dt_pipe_kind_name((dt_pipe_kind)o->pp_schedule), r->dp, r->pipe.blocks_lo,
               r->pipe.blocks_lo + r->pipe.blocks_n - 1,
               dt_gpt_shape_of(dt_gpt_find(o->model), &r->net->cfg).layers,
               dt_recompute_name(rc),
               rc == DT_RECOMPUTE_FULL ? "a stage runs each micro-batch's forward again "
               "before its backward unless it ran last"
               : rc == DT_RECOMPUTE_NONE ? "a stage keeps each micro-batch's activations"
               : "a stage keeps each micro-batch's activations but the attention scores, "
               "and runs the attention again");
    }
    if (o->tp > 1) {
        int heads = dt_gpt_shape_of(dt_gpt_find(o->model), &r->net->cfg).heads;
        printf("dtrain: tensor parallelism over %d ranks: each holds %d of the %d attention "
               "heads and 1/%d of each MLP; the slices' outputs summed 2x in forward and 2x "
               "in backward per block (Megatron-LM)\n", o->tp, heads / o->tp, heads, o->tp);
    }
    // the optimizer state, as allocated (nn/optim.c): sharded, each rank holds 1/P of it
    if (o->shard == DT_SHARD_OPTIMIZER)
        printf("dtrain: optimizer state sharded (ZeRO stage 1): %.3f MiB of momentum per rank "
               "(unsharded %.3f MiB, 1/%d), reduce-scatter + allgather after backward\n",
               r->opt->state_bytes / 1048576.0,
               r->net->n_trainable * sizeof(float) / 1048576.0, r->dp);
    dt_trainer_memory m;
    dt_trainer_memory_report(tr, &m);
    if (o->shard == DT_SHARD_GRADIENTS)
        printf("dtrain: gradients and optimizer state sharded (ZeRO stage 2): each of %d "
               "buckets reduce-scattered as backward completes it, 1/%d kept; allgather of "
               "the parameters per bucket after the update\n", m.units, r->dp);
    else if (o->shard == DT_SHARD_PARAMETERS)
        printf("dtrain: parameters, gradients and optimizer state sharded (ZeRO stage 3): %d "
               "layers' parameters each allgathered before its forward and its backward "
               "(the next one prefetched), its gradient reduce-scattered; 1/%d kept\n",
               m.units, r->dp);
    // mixed precision: what is stored in half, the memory it saves, and the loss scaling
    size_t scratch, act = dt_net_activation_bytes(r->net, &scratch);
    if (o->precision == DT_AMP_FP32) {
        printf("dtrain: fp32, activations and their gradients %.1f MiB per rank\n",
               act / 1048576.0);
        return;
    }
    printf("dtrain: %s mixed precision: fp32 master weights and math, activations and their "
           "gradients stored in %s, %.1f MiB per rank (+ %.1f MiB of fp32 scratch); %s\n",
           dt_amp_name(o->precision), dt_amp_name(o->precision), act / 1048576.0,
           scratch / 1048576.0,
           o->precision == DT_AMP_BF16 ? "bf16 needs no loss scaling (fp32's 8 exponent bits)"
           : tr->loss_scaling ? "dynamic loss scaling" : "loss scaling off (--loss-scale off)");
}

// --json: the run's summary on one line. train_loss is the mean step loss of the last epoch
// that ran: over the steps it ran when --max-steps stopped the run inside it (that epoch
// has no line of its own; its steps are still counted), else the last epoch line's; the
// test loss and top-1 are those of the weights the run ends with (evaluate_last).
static void print_summary_json(const dtrain_run *r, const dtrain_progress *p, int same,
                               double total, const dt_trainer_memory *m) {
    const dtrain_opts *o = r->o;
    const dt_trainer *tr = &r->tr;
    const epoch_stats *e = &p->last;
    double train_loss = p->n_loss > 0 ? p->loss_sum / (double)p->n_loss : e->train_loss;
    printf("{\"model\": \"%s\", \"ranks\": %d, \"global_batch\": %d, \"epochs\": %lld, "
           "\"steps\": %lld, \"seconds\": %.3f, \"images_per_s\": %.2f, \"train_loss\": "
           "%.6f, \"test_top1\": %.6f, \"test_loss\": %.6f, \"replicas_identical\": %s, "
           "\"algo\": \"%s\", \"buckets\": %d, \"overlap\": %s, \"comm_s\": %.4f, "
           "\"comm_hidden_s\": %.4f, \"precision\": \"%s\", \"loss_scale\": %g, "
           "\"skipped_steps\": %ld, \"activation_bytes\": %zu, \"accumulate\": %d, "
           "\"micro_batch\": %d, \"shard_optimizer\": %s, \"optimizer_state_bytes\": %zu, "
           "\"seq_len\": %d, \"tokens_per_s\": %.2f, \"pp\": %d, \"tp\": %d, ",
           o->model, r->ranks, o->global_batch, (long long)r->st.epoch, (long long)r->st.step,
           total, p->steps_run * (double)o->global_batch / total, train_loss,
           isnan(e->test_top1) ? -1.0 : e->test_top1,
           isnan(e->test_loss) ? -1.0 : e->test_loss, same ? "true" : "false",
           dt_algo_name(o->coll.algo), tr->n_buckets, tr->overlap ? "true" : "false",
           p->run_comm + tr->sum_comm,
           p->run_hidden + (tr->sum_comm > tr->sum_exposed ? tr->sum_comm - tr->sum_exposed : 0),
           dt_amp_name(o->precision), tr->loss_scaling ? (double)tr->scaler.scale : 0.0,
           tr->loss_scaling ? tr->scaler.skipped : 0L, dt_net_activation_bytes(r->net, NULL),
           o->accumulate, r->net->B, o->shard_optimizer ? "true" : "false",
           r->opt->state_bytes, r->T, p->steps_run * (double)o->global_batch * r->T / total,
           o->pp, o->tp);
    // the memory per rank, the largest over the ranks (ZeRO's model states, activations)
    printf("\"shard\": \"%s\", \"shard_units\": %d, \"trainable_elements\": %zu, "
           "\"buffer_elements\": %zu, \"mem_params_bytes\": %zu, \"mem_grads_bytes\": %zu, "
           "\"mem_optim_bytes\": %zu, \"mem_activation_bytes\": %zu, "
           "\"mem_params_peak_bytes\": %zu, \"mem_grads_peak_bytes\": %zu, "
           "\"mem_unit_max_bytes\": %zu, \"mem_half_copy_bytes\": %zu, "
           "\"mem_pipe_buffer_bytes\": %zu, \"mem_pipe_activation_bytes\": %zu, "
           "\"pp_recompute\": \"%s\", \"pp_recomputed\": %ld",
           dt_shard_name(o->shard), m->units, r->net->n_trainable,
           r->net->n_total - r->net->n_trainable, m->params, m->grads, m->optim,
           m->activations, m->params_peak, m->grads_peak, m->unit_max, m->half, m->pipe,
           m->pipe_acts, r->piped ? dt_recompute_name(r->pipe.recompute) : "none",
           r->piped ? r->pipe.recomputed : 0L);
    if (r->text)  // the held-out loss in bits per byte, and per token as a perplexity
        printf(", \"tokenizer\": \"%s\", \"vocab\": %d, \"test_bits_per_byte\": %.6f, "
               "\"test_perplexity\": %.6f", r->bpe ? "bpe" : "bytes",
               (r->whole ? r->whole : r->net)->num_classes,
               isnan(e->test_loss) ? -1.0 : DTRAIN_BITS(e->test_loss, r->bytes_per_token),
               isnan(e->test_loss) ? -1.0 : exp(e->test_loss));
    dtrain_steps_json(r, stdout);
    printf("}\n");
}

// The memory report of every rank, the largest of each figure (dt_trainer_memory_report).
static void memory_max(dt_trainer *tr, dt_trainer_memory *m) {
    dt_trainer_memory_report(tr, m);
    unsigned long long v[9] = {m->params, m->grads, m->optim, m->activations,
                               m->params_peak, m->grads_peak, m->half, m->pipe, m->pipe_acts};
    MPI_Allreduce(MPI_IN_PLACE, v, 9, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    m->params = v[0], m->grads = v[1], m->optim = v[2], m->activations = v[3];
    m->params_peak = v[4], m->grads_peak = v[5], m->half = v[6], m->pipe = v[7];
    m->pipe_acts = v[8];
}

// ---- the training loop ----

// One optimizer step on batch b. A batch holding NaN or Inf stops every rank (exit 2), and
// so does a loss that is not finite (exit 1); the --fault-* options inject failures (tests).
static int train_step(dtrain_run *r, const dtrain_progress *p, dt_batch *b, float lr,
                      float *loss) {
    const dtrain_opts *o = r->o;
    if (o->fault_die_step == r->st.step && r->rank == 1) _exit(3);  // --fault-die-at-step
    if (o->fault_nan_step == r->st.step && r->rank == 0 && b->b > 0) b->x[0] = NAN;  // testing
    int bad_ex = first_nonfinite_example(b);
    if (bad_ex >= 0)
        dt_fail(&r->err, DT_EXIT_USAGE, "the input batch of step %lld holds NaN or Inf "
                "(example %lld of %s); the data is corrupt", (long long)r->st.step,
                (long long)b->indices[bad_ex], r->train->name);
    int rc = dtrain_agree(bad_ex >= 0 ? DT_EXIT_USAGE : 0, &r->err, r->rank);
    if (rc) return rc;
    if (o->fault_inf_step == r->st.step && r->rank == 1) dt_trainer_inject_inf_grad(&r->tr);
    if (r->text) {  // windows of T+1 tokens: the input and its next-token targets
        dtrain_text_batch(b, r->T, r->tok, r->tgt);
        *loss = dtrain_step_tokens(r, lr);
    } else {
        *loss = dt_train_step(&r->tr, b->x, b->labels, lr);
    }
    if (r->tr.loss_scaling) {  // what a checkpoint records of the scaler
        r->st.loss_scale = r->tr.scaler.scale;
        r->st.loss_scale_good_steps = r->tr.scaler.good_steps;
        r->st.skipped_steps = r->tr.scaler.skipped;
    }
    if (!isfinite(*loss)) {
        if (r->rank == 0)
            fprintf(stderr, "%sdtrain: the loss is %s at step %lld (epoch %lld); stopping. "
                            "Try a smaller --lr or a longer --warmup.\n", p->live ? "\n" : "",
                    isnan(*loss) ? "NaN" : "infinite", (long long)r->st.step,
                    (long long)b->epoch + 1);
        return 1;
    }
    return 0;
}

// Whether any rank got SIGINT or SIGTERM (collective: all ranks stop at the same step).
static int stop_requested(void) {
    sigset_t stops, pending;
    sigemptyset(&stops), sigaddset(&stops, SIGINT), sigaddset(&stops, SIGTERM);
    if (!sigpending(&pending) && (sigismember(&pending, SIGINT) || sigismember(&pending, SIGTERM))) {
        struct timespec now = {0, 0};  // taken now, not waited for
        int sig = sigtimedwait(&stops, NULL, &now);
        if (sig > 0) stop_signal = sig;
    }
    int stop = stop_signal;
    MPI_Allreduce(MPI_IN_PLACE, &stop, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return stop;
}

int dtrain_save_checkpoint(dtrain_run *r) {
    if (r->whole) return dtrain_pipe_save(r);  // --pp, --tp: the whole model's file
    if (!r->opt->sharded)
        return r->rank == 0 && dt_checkpoint_save(r->ckpt, r->net, r->opt, &r->st, &r->err);
    dt_trainer_gather_params(&r->tr);  // ZeRO stage 3: the whole model from the shards
    dt_optim_state os = {.kind = r->opt->cfg.kind, .step = r->opt->step};
    if (r->rank == 0) dt_optim_state_alloc(&os, r->net, r->opt->cfg.kind);
    os.step = r->opt->step;
    dt_trainer_gather_state(&r->tr, 0, os.m, os.v);
    int failed = r->rank == 0 && dt_checkpoint_save_state(r->ckpt, r->net, &os, &r->st, &r->err);
    dt_optim_state_free(&os);
    return failed;
}

// Stopped by a signal after a finished step (every rank at the same one): with
// --checkpoint-dir that step is saved, as PyTorch's elastic agents save on SIGTERM, so a
// preempted job resumes where it stopped; then exit 130.
static int interrupted(dtrain_run *r, const dtrain_progress *p) {
    int saved = 0;
    if (r->ckpt[0]) {
        saved = dtrain_agree(dtrain_save_checkpoint(r), &r->err, r->rank) == 0;
    }
    if (r->rank == 0)
        fprintf(stderr, "%sdtrain: interrupted at step %lld; %s%s\n", p->live ? "\n" : "",
                (long long)r->st.step,
                !r->ckpt[0] ? "no checkpoint was requested"
                : saved     ? "saved that step in "
                            : "the last complete checkpoint is ",
                r->ckpt[0] ? r->ckpt : "");
    return 130;
}

// The live line, at most twice a second.
static void show_progress(const dtrain_run *r, dtrain_progress *p, const dt_batch *b,
                          float loss) {
    const dtrain_opts *o = r->o;
    double t = dt_now_s();
    if (!p->live || t - p->t_last_line <= 0.5) return;
    double ips = (double)p->n_loss * o->global_batch / (t - p->t_epoch);
    double left = (double)(o->epochs * r->spe - r->st.step) * o->global_batch / ips;
    progress_line((int)b->epoch + 1, b->step + 1, r->spe, loss, r->text ? ips * r->T : ips,
                  r->text ? "tok/s" : "img/s", left);
    p->t_last_line = t;
}

// The end of an epoch: its figures, test top-1 (every --eval-every epochs and after the
// last), the epoch line and the --log row; then the epoch's counters start again.
static int end_epoch(dtrain_run *r, dtrain_progress *p, const dt_batch *b, float lr) {
    const dtrain_opts *o = r->o;
    dt_trainer *tr = &r->tr;
    epoch_stats *e = &p->last;
    r->st.epoch = b->epoch + 1;
    e->seconds = dt_now_s() - p->t_epoch;
    e->train_loss = p->loss_sum / (double)p->n_loss;
    e->images_per_s = (double)p->n_loss * o->global_batch / e->seconds;
    e->data_wait_s = p->wait_epoch;
    e->comm_s = tr->sum_comm;
    e->hidden_s = tr->sum_comm - tr->sum_exposed > 0 ? tr->sum_comm - tr->sum_exposed : 0;
    p->run_comm += tr->sum_comm, p->run_hidden += e->hidden_s;
    dt_trainer_reset_stats(tr);
    e->test_top1 = e->test_loss = NAN;
    if (r->test && o->eval_every &&
        (r->st.epoch % o->eval_every == 0 || r->st.epoch == o->epochs)) {
        dt_trainer_gather_params(tr);  // ZeRO stage 3: the whole model, for the forward
        e->test_top1 = r->text ? dtrain_evaluate_text(dtrain_whole_net(r), r->test,
                                                      MPI_COMM_WORLD,
                                                      &e->test_loss, &r->err)
                               : dtrain_evaluate(r->net, r->test, MPI_COMM_WORLD,
                                                 &e->test_loss, &r->err);
        int rc = dtrain_agree(e->test_top1 < 0 ? 1 : 0, &r->err, r->rank);
        if (rc) return rc;
    }
    if (p->live) printf("\r%*s\r", 100, "");
    int failed = 0;
    if (r->rank == 0 && log_epoch(r->csv, (int)r->st.epoch, r->st.step, lr, e, tr, r->T,
                                     r->bytes_per_token)) {
        dt_fail(&r->err, DT_EXIT_RUNTIME, "--log %.400s: write failed: %s (the file keeps "
                "its complete rows)", o->log_csv, strerror(errno));
        failed = 1;
    }
    int rc = dtrain_agree(failed, &r->err, r->rank);
    if (rc) return rc;
    p->t_epoch = dt_now_s(), p->wait_epoch = 0, p->loss_sum = 0, p->n_loss = 0;
    return 0;
}

// One step per batch until the loader's last epoch or --max-steps; at the end of each epoch
// its line and, with --checkpoint-dir, a checkpoint (also at --max-steps). Returns 0, or
// the exit code with which every rank stops.
static int train_loop(dtrain_run *r, dtrain_progress *p, dtrain_profiler *prof) {
    const dtrain_opts *o = r->o;
    dt_batch b;
    double wait;
    int got, rc;
    while ((got = dt_loader_next(r->ld, &b, &wait, &r->err)) == 1) {
        float lr = dt_lr_at(&r->lr_schedule, (double)r->st.step), loss = 0;
        if (prof) dtrain_profile_step_begin(prof, (long)p->steps_run);
        double t0 = MPI_Wtime();
        rc = train_step(r, p, &b, lr, &loss);
        if (prof) dtrain_profile_step_end(prof);
        // --trace: the steps after the first (which plans the buckets), as dtsim's are
        if (r->trace && p->steps_run >= 1 && p->steps_run <= o->trace_steps)
            dt_trace_step(r->trace, &r->tr, t0, MPI_Wtime());
        if (rc) return rc;
        r->st.step++, p->steps_run++;
        p->wait_epoch += wait, p->loss_sum += loss, p->n_loss++;
        if ((rc = dtrain_steps_after(r, lr, loss, dt_now_s() - p->t_run))) return rc;
        int stop = stop_requested();
        show_progress(r, p, &b, loss);
        if (o->sample_every && r->st.step % o->sample_every == 0) {
            dt_net *net = dtrain_whole_net(r);  // (--pp, --tp: gathered, collective)
            if (p->live && r->rank == 0) printf("\r%*s\r", 100, "");
            if (r->rank == 0) dtrain_sample_now(o, net, r->bpe, r->st.step);  // between steps
        }
        if (stop) {
            if (b.step == r->spe - 1) r->st.epoch = b.epoch + 1;  // the checkpoint's position
            return interrupted(r, p);
        }
        int end_of_epoch = b.step == r->spe - 1;
        int end_of_run = o->max_steps && p->steps_run >= o->max_steps;
        if (end_of_epoch && (rc = end_epoch(r, p, &b, lr))) return rc;
        int every = o->checkpoint_every && r->st.step % o->checkpoint_every == 0;
        if (r->ckpt[0] && (end_of_epoch || end_of_run || every)) {
            if ((rc = dtrain_agree(dtrain_save_checkpoint(r), &r->err, r->rank))) return rc;
        }
        if (end_of_run) break;
    }
    return got < 0 ? dtrain_agree(2, &r->err, r->rank) : 0;
}

// A language model that --max-steps stopped inside an epoch: the validation split once
// more, on the weights the run ends with (those --save-weights writes), so that --json's
// test loss is theirs, as nanoGPT's last evaluation is (image models keep the last epoch's).
static int evaluate_last(dtrain_run *r, dtrain_progress *p) {
    if (p->n_loss == 0 || !r->text || !r->test || !r->o->eval_every) return 0;
    epoch_stats *e = &p->last;
    e->test_top1 = dtrain_evaluate_text(dtrain_whole_net(r), r->test, MPI_COMM_WORLD,
                                        &e->test_loss,
                                        &r->err);
    int rc = dtrain_agree(e->test_top1 < 0 ? 1 : 0, &r->err, r->rank);
    if (!rc && r->rank == 0)
        printf("end     step %7lld  val loss %.4f (%.3f bits per byte)  val next-token top-1 "
               "%5.2f %%\n", (long long)r->st.step, e->test_loss,
               DTRAIN_BITS(e->test_loss, r->bytes_per_token), 100 * e->test_top1);
    return rc;
}

// After the loop: the replicas must still be identical (exit 1 if not), then
// --save-weights and the --json summary.
static int finish(dtrain_run *r, dtrain_progress *p) {
    const dtrain_opts *o = r->o;
    int rc = 0;
    if (p->live) printf("\r%*s\r", 100, "");
    dt_trainer_gather_params(&r->tr);  // ZeRO stage 3: the whole model from the shards
    if ((rc = evaluate_last(r, p))) return rc;
    int same = replicas_identical(r->net, r->dp_comm);  // (--pp: a stage's replicas)
    dt_net *net = dtrain_whole_net(r);
    if (!same) {
        if (r->rank == 0) fprintf(stderr, "dtrain: the replicas' parameters differ across ranks\n");
        rc = 1;
    }
    char *merges = r->bpe && r->rank == 0 ? dt_bpe_merges_text(r->bpe) : NULL;  // carried along
    if (o->save_weights[0] && r->rank == 0 &&
        dt_weights_save_meta(net, o->save_weights, DTRAIN_BPE_KEY, merges, &r->err)) {
        fprintf(stderr, "dtrain: %s\n", r->err.msg);
        rc = 1;
    }
    free(merges);
    if (o->save_hf[0] && r->rank == 0 &&
        dt_weights_save_hf(net, o->save_hf, r->bpe, &r->err)) {
        fprintf(stderr, "dtrain: --save-hf %s: %s\n", o->save_hf, r->err.msg);
        rc = 1;
    }
    double total = dt_now_s() - p->t_run;
    dt_trainer_memory m;
    memory_max(&r->tr, &m);
    if (r->rank == 0) {
        const double mib = 1048576.0;
        char half[64] = "";  // mixed precision: the half copy's part of the parameters
        if (o->precision != DT_AMP_FP32)
            snprintf(half, sizeof half, "; %.3f of it the %s copy", m.half / mib,
                     dt_amp_name(o->precision));
        char pipe[160] = "";
        if (m.pipe)
            snprintf(pipe, sizeof pipe, ", the pipeline's micro-batches in flight %.3f MiB",
                     (m.pipe + m.pipe_acts) / mib);
        if (m.pipe_acts)  // (without full recomputation: nn/net_acts.h)
            snprintf(pipe + strlen(pipe), sizeof pipe - strlen(pipe), " (%.3f of it their "
                     "activations)", m.pipe_acts / mib);
        printf("dtrain: memory per rank (largest over the ranks; ZeRO %s): parameters %.3f "
               "MiB (peak %.3f%s), gradients %.3f MiB (peak %.3f), optimizer state %.3f MiB, "
               "activations %.3f MiB%s\n", dt_shard_name(o->shard), m.params / mib,
               m.params_peak / mib, half, m.grads / mib, m.grads_peak / mib, m.optim / mib,
               m.activations / mib, pipe);
    }
    if (r->rank == 0 && o->json) print_summary_json(r, p, same, total, &m);
    return rc;
}

// The banner, then the loop, then the end of the run.
int dtrain_train(dtrain_run *r) {
    print_banner(r);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    stop_signals(SIG_BLOCK);
    dtrain_progress p = {0};
    p.last.test_top1 = p.last.test_loss = NAN;  // --json says -1 until an epoch is evaluated
    // The live line goes to stdout: mpirun gives rank 0's stdout a pseudo-terminal, not stderr.
    p.live = r->rank == 0 && !r->o->quiet && isatty(STDOUT_FILENO);
    p.t_epoch = p.t_run = dt_now_s();
    dtrain_profiler prof;
    if (r->o->profile[0]) dtrain_profile_attach(&prof, r);
    dtrain_slow slow;
    dtrain_slow_attach(&slow, r);  // after the profiler: it then times the slowed layers
    int rc = train_loop(r, &p, r->o->profile[0] ? &prof : NULL);
    stop_signals(SIG_UNBLOCK);  // (one still pending runs the handler now: nothing to stop)
    dtrain_slow_report(&slow, r);
    if (!rc && r->o->profile[0]) {
        int failed = dtrain_profile_write(&prof, r, &r->err) ? 2 : 0;
        rc = dtrain_agree(failed, &r->err, r->rank);
    }
    if (!rc && r->trace) {  // collective: every rank's part, joined by rank 0
        int failed = dt_trace_write(r->trace, r->o->trace, r->rank, r->ranks, "dtrain",
                                    &r->err) ? 1 : 0;
        rc = dtrain_agree(failed, &r->err, r->rank);
    }
    dt_trace_free(r->trace);
    r->trace = NULL;
    return rc ? rc : finish(r, &p);
}
