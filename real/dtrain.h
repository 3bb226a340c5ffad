// dtrain.h — the options of the `dtrain` program (real data-parallel training with MPI) and
// the pieces a run is made of. dtrain.c sets a run up and tears it down; dtrain_loop.c runs
// the training loop and reports; dtrain_opts.c parses and checks the command line;
// dtrain_device.c picks the device; dtrain_eval.c measures test top-1.
#ifndef DT_DTRAIN_H
#define DT_DTRAIN_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "bpe.h"
#include "checkpoint.h"
#include "coll/coll.h"
#include "coll/fusion.h"
#include "data.h"
#include "loader.h"
#include "net.h"
#include "optim.h"
#include "train.h"
#include "train_pipe.h"
#include "train_tp.h"

typedef struct {
    char model[32];          // --model
    char data[512];          // --data: fashion-mnist | synthetic | folder:ROOT | fortunes |
                             // text:FILE (the last two for gpt models)
    char data_dir[512];      // --data-dir (fashion-mnist), default Debian's path
    int image_size;          // --image-size (folder crop, synthetic side)
    int classes;             // --classes (synthetic)
    int64_t synthetic_n;     // --synthetic-examples
    int64_t train_examples;  // --train-examples N: train on the first N only (0: all)
    int epochs;              // --epochs
    int global_batch;        // --batch (over all ranks)
    int accumulate;          // --accumulate K: micro-batches per step (1)
    float lr;                // --lr peak; <= 0: linear scaling rule 0.1 * batch / 256 (SGD)
    double warmup_epochs;    // --warmup
    dt_opt_kind optimizer;   // --optimizer sgd|lars|adamw|lamb
    dt_lr_schedule_kind lr_schedule;  // --lr-schedule const|step|poly|cosine (old: --schedule)
    float momentum, weight_decay, trust;  // --momentum --wd --trust
    int nesterov;            // --nesterov
    float dropout;           // --dropout (AlexNet / smallcnn classifier), default 0.5
    uint64_t seed;           // --seed
    int threads;             // --threads per rank (0: cores / ranks on this node)
    char checkpoint_dir[512];  // --checkpoint-dir
    int resume;              // --resume
    int eval_every;          // --eval-every N epochs (0: never)
    int64_t eval_every_steps;  // --eval-every-steps N (0: never)
    int64_t checkpoint_every;  // --checkpoint-every N steps (0: at epoch ends only)
    char log_steps[512];     // --log-steps FILE.csv: one row per step
    char log_csv[512];       // --log FILE.csv
    int json;                // --json
    char profile[512];       // --profile FILE: the step per layer kind (dtrain_profile.h)
    int64_t max_steps;       // --max-steps (0: no limit), stop early (tests, benchmarks)
    char save_weights[512];  // --save-weights FILE.safetensors at the end
    char weights[512];       // --weights FILE.safetensors: start from these (torchvision names)
    char save_hf[512];       // --save-hf DIR: final weights in Hugging Face's GPT-2 layout
    char trace[512];         // --trace FILE.json: a Chrome trace of --trace-steps steps
    int trace_steps;         // --trace-steps N (5): the steps after the first that it holds
    int slow_rank;           // --slow-rank R:F: this rank's layers F times slower (-1: none)
    double slow_factor;      //   F >= 1 (dtrain_slow.h)
    int weights_new_head;    // --weights-new-head: the classifier keeps its initialisation
    int quiet;               // --quiet: no progress line
    int64_t fault_die_step;  // --fault-die-at-step N (testing: rank 1 exits abruptly)
    int64_t fault_nan_step;  // --fault-nan-at-step N (testing: rank 0's batch gets a NaN)
    dt_coll_opts coll;       // --algo --fp16-grads --group --inner --hier-rs --torus
    dt_fusion_opts fusion;   // --fusion
    int overlap;             // --no-overlap clears it
    int device_cuda;         // --device cuda (else cpu)
    int cuda_aware;          // --cuda-aware: GPU buffers straight to MPI (coll.gpu_direct)
    int deterministic;       // --deterministic: bit-reproducible GPU math
    int shard_optimizer;     // any --shard stage (the optimizer state is sharded in all)
    int shard;               // --shard optimizer|gradients|parameters: ZeRO stage 1..3
                             // (nn/train.h dt_shard_stage; --shard-optimizer: 1)
    char shard_flag[32];     // how the stage was asked for, for messages
    dt_amp precision;        // --precision fp32|fp16|bf16 (nn/net_half.c)
    float loss_scale;        // --loss-scale S: fp16's initial scale (65536); 0 = off
    int loss_scale_interval; // --loss-scale-interval N: double after N clean steps (2000)
    int64_t fault_inf_step;  // --fault-inf-grad-at-step N (testing: rank 1's reduced
                             // gradient gets an Inf, which every rank must agree to skip)
    int seq_len;             // --seq-len T: tokens per sequence (gpt models; 0: the context)
    int windows_fixed;       // --windows fixed: training windows at i*T (default random)
    int vocab;               // --vocab N: a BPE of N tokens learned from the corpus (0: bytes)
    char tokenizer[512];     // --tokenizer DIR: the BPE of DIR/merges.txt
    double clip;             // --clip X: max global gradient norm (0: off; gpt models 1.0)
    int generate;            // --generate N: sample N tokens from --weights, no training
    int64_t sample_every;    // --sample-every N: a sample every N steps while training
    int sample_tokens;       // --sample-tokens N: its length (64)
    char prompt[1024];       // --prompt TEXT: what a sample continues ("\n")
    double temperature;      // --temperature X (0.8; 0: the most likely token)
    int top_k;               // --top-k K (200; 0: the whole vocabulary)
    int pp;                  // --pp P: pipeline stages (gpt models; 0: none; dtrain_pipe.c)
    int tp;                  // --tp T: tensor-parallel ranks (gpt models; 1: none)
    int pp_schedule;         // --pp-schedule gpipe|1f1b (nn/pipe/pipe_sched.h dt_pipe_kind)
    int64_t pp_message;      // --pp-message: floats in one message of the tied weight at most
    int recompute;           // --recompute none|full|selective (nn/train_pipe.h dt_recompute;
                             // -1: not given, full)
} dtrain_opts;

// ---- text from a gpt model (dtrain_generate.c, nn/gpt_sample.h) ----
// --generate: rank 0 loads --weights into a model of one sequence and prints the prompt and
// N sampled tokens (with --json, one JSON line of the token ids instead); 0 or 2
int dtrain_generate(const dtrain_opts *o, int rank);
// --sample-every: rank 0 prints a sample of --sample-tokens after --prompt from net (its
// replica, whose weights are whole), draws numbered from step's; bpe: the run's tokenizer
// (NULL: bytes)
void dtrain_sample_now(const dtrain_opts *o, dt_net *net, const dt_bpe *bpe, int64_t step);

// ---- the gpt models on byte-level text (dtrain_text.c) ----
#define DT_FORTUNES_FILE "/usr/share/games/fortunes/fortunes"  // Debian's fortunes-min
#define DT_FORTUNES_DIR "/usr/share/games/fortunes"  // every fortune file: fortunes(-min)
#define DTRAIN_VAL_FRACTION 0.1  // the corpus's last 10 % is the validation split
// The corpus file of --data fortunes | text:FILE (or the directory of tokens:DIR) into path
// (may be NULL); 0 if --data is not text.
int dtrain_text_path(const dtrain_opts *o, char *path, size_t n);
// Tokens per sequence: --seq-len, else the model's context.
int dtrain_text_seq_len(const dtrain_opts *o);
// The training and validation splits of the corpus (nn/dataset.h dt_dataset_text) and its
// tokenizer (*bpe: --vocab's, learned; --tokenizer's; tokens:DIR's; NULL for bytes), and the
// validation split's bytes per token (1 for bytes); 0, or the exit code with err naming the
// file (and the package, for --data fortunes).
int dtrain_load_text(const dtrain_opts *o, dt_dataset **train, dt_dataset **val, dt_bpe **bpe,
                     double *bytes_per_token, dt_error *err);
// The tokenizer that --generate uses: --tokenizer DIR's, else the one --weights carries
// (DIR/merges.txt, or a weights file's DTRAIN_BPE_KEY), else NULL (bytes). 0, or -1 with err.
#define DTRAIN_BPE_KEY "dtlab.bpe_merges"  // a weights file's metadata: merges.txt's text
int dtrain_tokenizer_of(const dtrain_opts *o, dt_bpe **bpe, dt_error *err);
// A loader batch of b windows (T+1 floats each) into tokens and targets, (b, T) each.
void dtrain_text_batch(const dt_batch *b, int T, int32_t *tokens, int32_t *targets);
// Next-token accuracy over every window of ds, sharded over the ranks of comm and summed;
// *mean_loss the mean cross-entropy per token (nats). -1 with err on failure.
double dtrain_evaluate_text(dt_net *net, const dt_dataset *ds, MPI_Comm comm,
                            double *mean_loss, dt_error *err);

// The device of this rank (dtrain_device.c): the cpu device on `threads` threads, or with
// --device cuda the GPU of its local rank; desc names it for the banner. 0, or -1 with err.
int dtrain_make_device(const dtrain_opts *o, int threads, dt_device **out, char *desc,
                       size_t desc_n, dt_error *err);
// --algo nccl: attach NCCL to the trainer's allreduce context (collective). 0, or -1 with err.
int dtrain_attach_algo(const dtrain_opts *o, dt_coll *c, dt_device *dev, dt_error *err);

// Parse argv into o (defaults first). Returns 0 to run, 1 when --help was printed, or 2 with
// a message on stderr naming the option and what was expected (rank 0 prints only).
int dtrain_parse(int argc, char **argv, dtrain_opts *o, int rank);
void dtrain_usage(FILE *f);

// Top-1 accuracy on ds (no augmentation), sharded over the ranks of comm and summed: each
// rank evaluates its contiguous part in batches of net->B (a short last batch is padded and
// the padding not counted). Returns the fraction correct in [0,1], or -1 with err.
double dtrain_evaluate(dt_net *net, const dt_dataset *ds, MPI_Comm comm, double *mean_loss,
                       dt_error *err);

// ---- one run: dtrain.c sets it up and tears it down, dtrain_loop.c trains ----

// What a run holds from set-up to tear-down: set_up makes it, the loop and the reports use
// it, tear_down releases it (any part may still be missing there).
typedef struct {
    const dtrain_opts *o;
    int rank, ranks, threads;
    dt_error err;            // the failure that dtrain_agree prints
    dt_dataset *train, *test;
    int64_t spe;             // optimizer steps per epoch
    dt_device *dev;
    char dev_desc[256];      // the device, for the banner
    dt_net *net;
    dt_optim *opt;
    dt_trainer tr;
    dt_train_state st;       // epochs and steps completed: what a checkpoint records
    char ckpt[1100];         // DIR/checkpoint.safetensors, "" without --checkpoint-dir
    dt_optim_state resumed;  // --resume: the optimizer state read, until the trainer (and
                             // its shards, if any) takes it (m NULL: none)
    dt_lr_schedule lr_schedule;
    dt_loader *ld;
    FILE *csv;               // --log, on rank 0
    struct dt_trace *trace;  // --trace: this rank's events (nn/train_trace.h), else NULL
    int text, T;             // a gpt model on text, T tokens per sequence (dtrain_text.c)
    dt_bpe *bpe;             // text: its BPE tokenizer (NULL: bytes)
    double bytes_per_token;  // text: of the validation split (1 for bytes), for bits per byte
    int32_t *tok, *tgt;      // text: a step's token ids and targets, (K*B, T) each
    FILE *steps_csv;         // --log-steps, on rank 0
    float *step_loss;        // every step's loss of this run, for --json (rank 0)
    int64_t n_step_loss, cap_step_loss;
    // --pp, --tp (dtrain_pipe.c): rank = (stage x dp + dp_rank) x tp + tp_rank, Megatron-LM's
    // order; the data-parallel group (the trainer's comm) holds one stage's one slice, the
    // pipeline one slice of every stage, the tensor-parallel group every slice of one stage,
    // the model group every part of one replica. Without them: dp = ranks, dp_comm
    // MPI_COMM_WORLD, no pipeline (--pp 1: one stage), no slices.
    int dp, dp_rank, stage, tp_rank;
    MPI_Comm dp_comm, pipe_comm, tp_comm, model_comm;
    dt_net *whole;           // --pp, --tp: the whole model, the weights evaluated and saved
    dt_pipeline pipe;
    dt_tensor_par tpar;
    int piped, tensored;     // the pipeline, the tensor-parallel hooks set up
} dtrain_run;

// ---- --pp, --tp: pipeline and tensor parallelism (dtrain_pipe.c, nn/train_pipe.h,
// nn/train_tp.h) ----
// The options they cannot run with, and the ranks they need: 0, or 2 with a message (rank 0)
int dtrain_pipe_check(const dtrain_opts *o, int ranks, int rank);
// The layout (r->dp, dp_rank, stage, the two communicators); collective
void dtrain_pipe_layout(dtrain_run *r);
// This rank's part (a stage, its slices) of the whole model m (kept in r->whole), else m
dt_net *dtrain_pipe_net(dtrain_run *r, dt_net *m, const dt_model_config *cfg);
// After the trainer's set-up: the pipeline of its schedule, the tensor-parallel hooks; 0 or
// the exit code (agreed)
int dtrain_pipe_attach(dtrain_run *r);
// One step of a gpt model: the pipeline's, or the trainer's
float dtrain_step_tokens(dtrain_run *r, float lr);
// The net whose weights are whole on every rank: r->net, or under --pp, --tp r->whole with
// every part's weights gathered into it (collective)
dt_net *dtrain_whole_net(dtrain_run *r);
// The checkpoint of a parted run: the whole model's weights and optimizer state gathered on
// rank 0, which writes the file a plain run writes (collective); 0, or 1 where rank 0 failed
int dtrain_pipe_save(dtrain_run *r);
// After a checkpoint was loaded into r->whole (its state into r->resumed, whole): this part's
// weights and state taken from them
void dtrain_pipe_resumed(dtrain_run *r);
void dtrain_pipe_free(dtrain_run *r);

// ---- per-step curves (dtrain_steps.c) ----
// --log-steps FILE.csv opened on rank 0 with its header (appended to under --resume):
// 0 or the exit code, agreed by every rank
int dtrain_steps_open(dtrain_run *r);
// After each optimizer step: the loss kept for --json; every --eval-every-steps steps the
// validation (or test) loss evaluated (collective) and printed; the --log-steps row.
// 0 or the exit code, the same on every rank.
int dtrain_steps_after(dtrain_run *r, float lr, float loss, double seconds);
// --json's per-step members: ", \"train_loss_steps\": [...]" (rank 0)
void dtrain_steps_json(const dtrain_run *r, FILE *f);
void dtrain_steps_close(dtrain_run *r);
// Bits per byte of a mean loss in nats per token, with bpt bytes per token
#define DTRAIN_BITS(nats, bpt) ((nats) / 0.69314718055994530942 / (bpt))

// The checkpoint of the current step (collective; a sharded run's pieces gathered on rank 0,
// which writes it): 0, or 1 where this rank failed (r->err); the caller agrees.
int dtrain_save_checkpoint(dtrain_run *r);

// Every rank reports whether it failed (failed_code != 0); if any did, the lowest failing
// rank prints its err and everyone returns the worst code, so no rank hangs in a collective
// that another one skipped and the message appears once. Collective over MPI_COMM_WORLD.
int dtrain_agree(int failed_code, const dt_error *err, int rank);
// One line appended to the --log file so that the file holds it whole or not at all: a
// failed write (a full disk) is cut back to where the line began (real/dtrain_loop.c).
// 0, or -1 with errno set.
int dtrain_log_row(FILE *f, const char *line);

// The training loop and its reports on a run that set-up completed (dtrain_loop.c): the
// banner, one step per batch until the last epoch or --max-steps, the epoch lines, test
// top-1, checkpoints, and at the end the replica check, --save-weights and --json. Returns 0
// or the exit code, the same on every rank.
int dtrain_train(dtrain_run *r);

#endif
