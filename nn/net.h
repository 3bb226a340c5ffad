// net.h — a network: its layers, its one parameter buffer and one gradient buffer (llm.c's
// single allocation with a table pointing into it: a fusion bucket is a range of the gradient
// buffer), the parameter table with torchvision state_dict names, and the model zoo.
//
// Memory layout of net->params (device memory, fp32):
//   [ trainable tensors, in state_dict order | running statistics, in state_dict order ]
// net->grads holds n_trainable elements at the same offsets as the trainable tensors.
// Layers are added in torchvision module order, so gradients of later layers sit at higher
// offsets: walking the gradient buffer downwards follows backward (fusion buckets, coll/).
#ifndef DT_NET_H
#define DT_NET_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "dt.h"
#include "layer.h"

typedef enum {
    DT_PARAM_WEIGHT,        // conv or linear weight
    DT_PARAM_BIAS,          // conv or linear bias
    DT_PARAM_BN_GAMMA,      // batchnorm weight
    DT_PARAM_BN_BETA,       // batchnorm bias
    DT_PARAM_RUNNING_MEAN,  // batchnorm running_mean (not trainable)
    DT_PARAM_RUNNING_VAR,   // batchnorm running_var (not trainable)
    DT_PARAM_LN_GAMMA,      // layernorm weight
    DT_PARAM_LN_BETA,       // layernorm bias
} dt_param_kind;

typedef struct {
    char name[80];       // "layer1.0.bn1.running_mean", as in torchvision's state_dict
    dt_param_kind kind;
    int ndim;            // 1, 2 or 4
    int shape[4];        // conv (OC,C,KH,KW); linear (OUT,IN); vectors (C)
    size_t offset;       // elements into net->params (== into net->grads when trainable)
    size_t count;        // elements
    int trainable;       // weight, bias, gamma, beta
    int layer;           // index of the owning layer
} dt_param;

const char *dt_param_kind_name(dt_param_kind kind);  // "weight", "bias", "bn_gamma", ...

// Mixed precision (Micikevicius et al. 2018; Jia et al. 2018 §3; nn/net_half.c): fp32
// master weights, activations and their gradients stored in half precision, every kernel
// computing in fp32 on half-rounded inputs. DT_AMP_FP32 is plain fp32 training.
typedef enum { DT_AMP_FP32, DT_AMP_FP16, DT_AMP_BF16 } dt_amp;
const char *dt_amp_name(dt_amp a);                 // "fp32", "fp16", "bf16"
int dt_amp_parse(const char *s, dt_amp *out);      // 0, or -1 for an unknown name
// The unit roundoff of the format's storage: 2^-24 (fp32), 2^-11 (fp16), 2^-8 (bf16).
double dt_amp_unit_roundoff(dt_amp a);

// Model configuration; dt_model_config_default() fills sensible values.
typedef struct {
    int batch;               // per-rank batch
    int in_c, in_h, in_w;    // input image shape
    int num_classes;
    int zero_init_residual;  // zero gamma of the last BN in every residual block (Goyal et al.)
    float dropout;           // AlexNet classifier dropout (torchvision: 0.5)
    uint64_t seed;           // parameter initialisation
    dt_amp amp;              // storage of activations and gradients (default fp32)
    int seq_len;             // gpt models: tokens per sample T (0: the model's context)
    int vocab;               // gpt models: vocabulary size (0: the model's own, 50257)
    // gpt models, one rank of Megatron-LM's tensor parallelism (Shoeybi et al. 2019): the
    // layers of 1/tp of every block (0 or 1: the whole model; nn/models_gpt.c), and the
    // number of blocks built (0: the model's; a pipeline stage's share of them)
    int tp, blocks;
    // gpt models, one stage of a pipeline (nn/train_pipe.h): its first block's index (the
    // names' transformer.h.<i>), and the model's ends it leaves out (DT_GPT_NO_*: a stage
    // without the embedding reads (1, T, C) activations as its input, one without the head
    // ends with its last block's output; 0: both ends, as sim/dtsim_3d.c times them)
    int block0, ends;
    // gpt models under tensor parallelism (tp > 1): 1 keeps the embedding and the head whole
    // on every rank (dtrain --tp: nn/train_tp.c), 0 splits them over the vocabulary
    // (Megatron-LM's vocabulary-parallel ends, as sim/dtsim_3d.c prices them)
    int tp_vocab_whole;
    // gpt models: a shape of one's own over the named model's (0: the model's): blocks L,
    // width C, attention heads (Megatron-LM's table of models, Narayanan et al. 2021)
    int layers, width, heads;
} dt_model_config;

enum { DT_GPT_NO_EMBED = 1, DT_GPT_NO_HEAD = 2 };

dt_model_config dt_model_config_default(void);  // batch 32, 3x224x224, 1000 classes, zero-init

struct dt_net {
    char model[32];          // "resnet50", ...
    dt_device *dev;
    dt_model_config cfg;
    int B, in_c, in_h, in_w; // input shape (per rank batch)
    int num_classes;         // classes; gpt models: the vocabulary
    int seq;                 // tokens per sample (gpt models; 0 for images): the loss then
                             // runs over B*seq rows of num_classes logits, labels (B, seq)
    int32_t *tokens;         // device, (B, seq) token ids (gpt models), else NULL

    dt_layer **layers;
    int n_layers, cap_layers;

    dt_param *params_table;
    int n_params, cap_params;
    size_t n_trainable;      // elements of trainable parameters (= length of grads)
    size_t n_total;          // elements of params (trainable + running statistics)

    float *params;           // device, n_total
    float *grads;            // device, n_trainable
    float *input;            // device, (B, in_c, in_h, in_w)
    float *dinput;           // device, same shape (gradient w.r.t. input; for tests)
    int32_t *labels;         // device, (B), or (B, seq) next-token targets
    float *probs;            // device, (B, num_classes)
    float *workspace;        // device, shared scratch (im2col columns)
    size_t workspace_floats;
    long bn_batches_tracked; // torchvision's num_batches_tracked (same for every BN)
    int keep_grads;          // backward adds into grads instead of zeroing them first
                             // (gradient accumulation over micro-batches, nn/train.c)
    uint64_t dropout_seed;   // advanced by dt_net_forward(training) so each step draws anew
    // optional: told whose work follows, before each layer's forward (phase
    // DT_PHASE_FORWARD) and backward (DT_PHASE_BACKWARD), and with layer -1 once a pass has
    // been through its last layer (what follows is no layer's: loss, optimizer, upload).
    // dtrain --profile times the layer kinds with it; dtsim's profiled model device learns
    // which kind's kernels it charges (sim/device_model.h). NULL: nothing is called.
    void (*on_layer)(void *ctx, const dt_net *net, int layer, int phase);
    void *on_layer_ctx;

    // ---- mixed precision (nn/net_half.c), cfg.amp != DT_AMP_FP32 only ----
    dt_amp amp;
    float *params_lp;        // device, n_total: the copy forward and backward read, with
                             // conv/linear weights and biases rounded to half each forward
    float *master;           // the fp32 master params while params points at params_lp
    float *half_scratch[3];  // device, half_scratch_floats each: fp32 views of half tensors
    size_t half_scratch_floats;
    uint16_t *params_bf16;   // device, n_total: params_lp's bits in half (net->amp's format)
                             // where the layers run convolutions on half storage
                             // (nn/device.h im2col_bf16, gemm_batched_h)
    // Under a sharded trainer (nn/train_zero.c) the fp32 master is its pieces: params_lp
    // and params_bf16 are made by a forward that finds net->params whole and unrounded
    // (after dt_trainer_gather_params) and freed by the trainer; params_half says that
    // net->params holds the half-rounded copy itself (stage 2's gathered copy), which
    // forward then reads as it is.
    int params_half;

    // ---- sharded data parallel, ZeRO stages 2 and 3 (nn/train_zero.c) ----
    // A sharded trainer frees net->grads (stages 2, 3) and net->params (stage 3, between its
    // gathers) and keeps the units it has resident in `units`; layers reach their tensors
    // through dt_net_p / dt_net_g, which read the whole buffers while they exist. on_params
    // is told, like on_layer, before each layer's forward and backward and with layer -1 at
    // a pass's end: the trainer gathers parameters and allocates gradient buckets there.
    struct dt_net_units *units;
    void (*on_params)(void *ctx, dt_net *net, int layer, int phase);
    void *on_params_ctx;
    // ---- tensor parallelism (nn/train_tp.c) ----
    // optional: called after each layer's forward (phase DT_PHASE_FORWARD) and before each
    // layer's backward (DT_PHASE_BACKWARD), where a tensor-parallel group sums a layer's
    // output (Megatron-LM's g) or its output's gradient (f). NULL: nothing is called.
    void (*on_tensor)(void *ctx, dt_net *net, int layer, int phase);
    void *on_tensor_ctx;
    // optional, with on_tensor_ctx: a vocabulary-parallel head's loss, and the gradient of
    // its logits (a slice of the vocabulary: the group's maximum and sums), in place of the
    // device's softmax_xent_forward and softmax_xent_backward
    float (*loss_part)(void *ctx, dt_net *net);
    void (*seed_part)(void *ctx, dt_net *net, float scale, float *dlogits);

    // ---- a tied head's gradient kept apart (dt_net_keep_tied_apart) ----
    // Non-NULL: a tied head (l->tied) adds its weight gradient here, not into the
    // embedding's, and the embedding layer's backward adds this buffer into its wte gradient
    // and zeroes it, unless tied_defer (the trainer sets it for micro-batches that do not
    // communicate): the two halves of a tied weight's gradient summed once per step, as a
    // pipeline whose ends sit on different ranks must sum them (Narayanan et al. 2021).
    float *tied_grad;        // device, the tied weight's elements
    size_t tied_n;
    int tied_defer;

    dt_error build_err;      // first error met while adding layers (reported by finalize)
    int finalized;
};

// Where the tensors of a sharded trainer live (ZeRO stages 2, 3; nn/train_zero.c): unit k is
// the trainable elements [lo[k], lo[k+1]); params[k] / grads[k] its resident copy (NULL when
// not resident); stats the running statistics (elements n_trainable.. of the parameters)
// while net->params is freed.
// Mixed precision: params[k] holds the half-rounded values (dt_net_half_round), and
// params_h[k] (params_h non-NULL where convolutions run on half storage) their half bits.
typedef struct dt_net_units {
    int n;
    const size_t *lo;
    float **params, **grads;
    float *stats;
    uint16_t **params_h;
} dt_net_units;
// The address of parameter (gradient) element off: in net->params (net->grads) while it
// exists, else in its unit's resident copy (a unit not resident is an internal error).
float *dt_net_unit_ptr(const dt_net *net, ssize_t off, int grad);
// The half bits of parameter element off (mixed precision's convolutions on half storage):
// in net->params_bf16 while it exists, else in its unit's params_h.
const uint16_t *dt_net_p_h(const dt_net *net, ssize_t off);
// Mixed precision under a sharded trainer (nn/net_half.c): x holds the n parameters from
// element off on; round those of conv and linear weights and biases to half in place, the
// values the unsharded forward reads (batch and layer norms' stay fp32). And x's half bits
// into h (net->amp's format), and h widened back into x (n elements each).
void dt_net_half_round(dt_net *net, float *x, size_t off, size_t n);
void dt_net_half_bits(dt_net *net, const float *x, uint16_t *h, size_t n);
void dt_net_half_widen(dt_net *net, const uint16_t *h, float *x, size_t n);
// Whether the layers run convolutions on half storage (and read dt_net_p_h).
int dt_net_half_conv_bits(const dt_net *net);
static inline float *dt_net_p(const dt_net *net, ssize_t off) {
    return net->params ? net->params + off : dt_net_unit_ptr(net, off, 0);
}
static inline float *dt_net_g(const dt_net *net, ssize_t off) {
    return net->grads ? net->grads + off : dt_net_unit_ptr(net, off, 1);
}

// ---- building (nn/net.c) ----
// dt_net_new records the input shape; dt_net_add_* append layers and return their index
// (or -1 after recording an error in net->build_err, e.g. an output smaller than 1x1);
// dt_net_finalize allocates every buffer on the device and initialises the parameters
// (conv: Kaiming normal, fan_out, as torchvision ResNet; linear: U(-1/sqrt(in), 1/sqrt(in));
// bn: gamma 1, beta 0, running mean 0, var 1).
dt_net *dt_net_new(dt_device *dev, const char *model, const dt_model_config *cfg);
int dt_net_add_conv(dt_net *net, const char *name, int in, int oc, int k, int stride, int pad,
                    int bias);
int dt_net_add_bn(dt_net *net, const char *name, int in);
int dt_net_add_relu(dt_net *net, int in);
int dt_net_add_maxpool(dt_net *net, int in, int k, int stride, int pad);
int dt_net_add_avgpool(dt_net *net, int in, int oh, int ow);
int dt_net_add_linear(dt_net *net, const char *name, int in, int out, int bias);
int dt_net_add_dropout(dt_net *net, int in, float p);
int dt_net_add_add(dt_net *net, int a, int b);
// Sequence layers (nn/net_seq.c): the network input is (1, 1, T) per sample and
// dt_net_set_tokens fills net->tokens. embed adds "<name>.wte" (vocab, C) and "<name>.wpe"
// (context, C) read with net->tokens (T <= context); layernorm "<name>.weight/.bias" (w);
// linear_tokens a per-token torch.nn.Linear (l->per_token); tied_head a bias-free
// per-token linear whose weight is layer `embed`'s wte (lm_head of GPT-2).
int dt_net_add_embed(dt_net *net, const char *name, int vocab, int context, int C,
                     float init_std);
int dt_net_add_layernorm(dt_net *net, const char *name, int in, float eps);
int dt_net_add_attention(dt_net *net, int in, int heads);
int dt_net_add_gelu(dt_net *net, int in);
int dt_net_add_linear_tokens(dt_net *net, const char *name, int in, int out, int bias,
                             float init_std);
int dt_net_add_tied_head(dt_net *net, const char *name, int in, int embed);
int dt_net_finalize(dt_net *net, dt_error *err);
void dt_net_free(dt_net *net);

// Index of the last layer added (the logits once the model is built).
static inline int dt_net_last(const dt_net *net) { return net->n_layers - 1; }
const dt_param *dt_net_find_param(const dt_net *net, const char *name);
size_t dt_net_count_trainable(const dt_net *net);  // == n_trainable
// The trainable elements split into blocks, as FSDP's auto-wrap units them: a block is the
// run of layers whose names agree up to their first numeric part ("transformer.h.3",
// "layer2.1"); a layer outside any block ("conv1", "transformer.ln_f") is one of its own.
// lo[0..n] ascending (lo[0] = 0, lo[n] = n_trainable), room for n_layers + 1; returns n.
int dt_net_blocks(const dt_net *net, size_t *lo);

// ---- running (nn/net_run.c) ----
enum { DT_PHASE_FORWARD, DT_PHASE_BACKWARD };
// The layer kinds profiles are kept by (dtrain --profile, dtsim --profile): a layer type and
// a phase, kind = 2 * type + phase, and DT_KIND_REST for what is no layer's work.
#define DT_N_LAYER_TYPES 12
#define DT_KIND_REST (2 * DT_N_LAYER_TYPES)
#define DT_N_KINDS (DT_KIND_REST + 1)
// "conv", "bn", "relu", "maxpool", "avgpool", "linear", "dropout", "add"; NULL out of range
const char *dt_layer_type_name(int type);
// A kind's name in buf: "conv.forward", "add.backward", "rest"; NULL out of range
const char *dt_kind_name(int kind, char *buf, size_t size);
// Copy a batch from the host: x (B, in_c, in_h, in_w) floats, labels (B) in [0, classes).
void dt_net_set_batch(dt_net *net, const float *x_host, const int32_t *labels_host);
// gpt models: tokens (B, seq) in [0, vocab) and their next-token targets (B, seq); either
// may be NULL (unchanged)
void dt_net_set_tokens(dt_net *net, const int32_t *tokens_host, const int32_t *targets_host);
// forward through every layer; training selects batch statistics and dropout
void dt_net_forward(dt_net *net, int training);
// softmax cross-entropy of the last layer against net->labels (mean over the batch; for
// gpt models over the B*seq tokens)
float dt_net_loss(dt_net *net);
// Called after each layer's backward with the range of the gradient buffer that is now
// final, [lo, hi) in elements (empty for layers without parameters): the hook for fusion
// buckets and compute/communication overlap (coll/).
typedef void (*dt_grad_ready_fn)(void *ctx, dt_net *net, int layer, size_t lo, size_t hi);
// Zero grads (unless net->keep_grads: then the new gradient adds to them) and every dout,
// seed the loss gradient (scaled by loss_scale/B), run backward last layer first, calling
// ready(ctx, ...) after each layer (ready may be NULL).
void dt_net_backward(dt_net *net, float loss_scale, dt_grad_ready_fn ready, void *ctx);
// dt_net_backward seeded with dout (device, the last layer's output size), the gradient of
// the loss with respect to the last layer's output that a later pipeline stage sent, in
// place of the loss's (a stage without the head: no dt_net_loss first).
void dt_net_backward_from(dt_net *net, const float *dout, dt_grad_ready_fn ready, void *ctx);
// Allocates net->tied_grad (zero) for the weight of the net's tied head or of its
// embedding's wte (the half a pipeline stage holds); 0, or -1 when the net has neither.
int dt_net_keep_tied_apart(dt_net *net);
// Bytes of the layers' activation and activation-gradient buffers (out and dout, shared
// ones once), and of the fp32 scratch mixed precision converts them through (0 in fp32).
size_t dt_net_activation_bytes(const dt_net *net, size_t *scratch_bytes);
// Total FLOPs and bytes of one training step (forward + backward), from the layer counts.
double dt_net_step_flops(const dt_net *net);
double dt_net_forward_flops(const dt_net *net);

// ---- the model zoo (nn/models.c; builders in nn/models_resnet.c, nn/models_alexnet.c) ----
// Names: resnet18 resnet34 resnet50 resnet101 resnet152 (torchvision ImageNet v1.5, stride
// on the 3x3), resnet8 resnet14 resnet20 resnet32 resnet44 resnet56 resnet110 (He et al.
// 2016 CIFAR, 6n+2, option A identity shortcuts replaced by 1x1 projection, see
// models_resnet.c), alexnet,
// alexnet-bn (Jia et al. 2018), smallcnn (2 conv + pool, for 28x28 Fashion-MNIST),
// GPT-2 decoders (nn/models_gpt.c): gpt2-tiny, gpt2 (124M), gpt2-medium, gpt2-large,
// gpt2-xl, and the GPT-3 shapes gpt3-small ... gpt3-175b (cfg->seq_len, cfg->vocab).
// Returns a finalized network, or NULL with err set: unknown name (the message lists the
// valid ones), an input too small for the architecture, a non-positive size.
dt_net *dt_model_create(const char *name, dt_device *dev, const dt_model_config *cfg,
                        dt_error *err);
const char *dt_model_names(void);  // "resnet18, resnet34, ..." for messages and --help
// The trainable parameter count and the FLOPs of one forward and of one training step
// (per-rank batch cfg->batch) of a model, from its layers alone: nothing is allocated, so
// it answers for GPT-3 175B too. 0, or -1 with err (DT_EXIT_USAGE) as dt_model_create.
int dt_model_describe(const char *name, dt_device *dev, const dt_model_config *cfg,
                      double *n_trainable, double *fwd_flops, double *step_flops,
                      dt_error *err);

#endif
