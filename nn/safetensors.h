// safetensors.h — the safetensors format (huggingface/safetensors: an 8-byte little-endian
// header length N, N bytes of JSON {"name": {"dtype", "shape", "data_offsets": [b, e]}, ...,
// "__metadata__": {str: str}}, then the raw little-endian tensor bytes), so that weights move
// to and from PyTorch with torchvision's state_dict names. Files are written atomically:
// to PATH.tmp.<pid>, fsync, rename; a failure leaves no partial file behind.
// Not here: pickle, sharded files, dtypes other than F32, F16, BF16, I64, I32, U8.
#ifndef DT_SAFETENSORS_H
#define DT_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "dt.h"
#include "net.h"

typedef enum { DT_ST_F32, DT_ST_F16, DT_ST_BF16, DT_ST_I64, DT_ST_I32, DT_ST_U8 } dt_st_dtype;
#define DT_ST_NDTYPES 6
#define DT_ST_MAX_HEADER_BYTES (100u * 1000u * 1000u)  // larger headers are rejected as absurd

const char *dt_st_dtype_name(dt_st_dtype t);  // "F32", "F16", ... (safetensors spelling)
size_t dt_st_dtype_size(dt_st_dtype t);       // bytes per element
// Bytes of a tensor of this shape and dtype, or -1 if ndim is outside 0..8, an entry is
// negative or the size overflows int64.
int64_t dt_st_shape_bytes(int ndim, const int64_t *shape, dt_st_dtype dtype);

typedef struct {
    char name[128];
    dt_st_dtype dtype;
    int ndim;
    int64_t shape[8];
    size_t nbytes;
    const void *data;  // writer: caller's host memory (kept until dt_st_write);
                       // reader: points into the loaded file image, NOT necessarily aligned
                       // for its dtype (memcpy out of it)
} dt_st_tensor;

// CRC-32 (ISO-HDLC, zlib's and PNG's crc32: reflected polynomial 0xEDB88320) of n bytes,
// continuing from crc (0 to start): dt_st_crc32(dt_st_crc32(0, a, n), b, m) is the CRC of
// a followed by b. The writer records the data section's under this metadata key as 8 hex
// digits, and the reader checks it when present (files from other writers have none).
uint32_t dt_st_crc32(uint32_t crc, const void *p, size_t n);
#define DT_ST_CRC_KEY "dtlab.data_crc32"

// ---- writing ----
typedef struct dt_st_writer dt_st_writer;
dt_st_writer *dt_st_writer_new(void);
// shape may be NULL when ndim == 0 (a scalar); data is host memory, not copied. A bad
// argument (empty or too long name, unknown dtype, negative shape) is recorded and reported
// by dt_st_write, which then writes nothing.
void dt_st_add(dt_st_writer *w, const char *name, dt_st_dtype dtype, int ndim,
               const int64_t *shape, const void *data);
void dt_st_add_metadata(dt_st_writer *w, const char *key, const char *value);
// Write atomically (nn/safetensors_write.c): data laid out without holes, largest element
// size first, header padded with spaces so every tensor is aligned; the JSON lists tensors
// in the order added, "__metadata__" first. Returns 0, or -1 with err naming the file:
// DT_EXIT_USAGE for a bad dt_st_add (or a name added twice), DT_EXIT_RUNTIME for I/O
// failures (the temporary file is removed and an existing PATH is left untouched).
int dt_st_write(dt_st_writer *w, const char *path, dt_error *err);
void dt_st_writer_free(dt_st_writer *w);

// ---- reading: the whole file is read and validated (header length within the file, JSON
// well formed, dtypes known, offsets inside the data and consistent with shape x dtype) ----
typedef struct dt_st_file dt_st_file;
// NULL with err naming the file (and the tensor): DT_EXIT_USAGE for a missing or malformed
// file (shorter than 8 bytes, header length > DT_ST_MAX_HEADER_BYTES or past the end,
// malformed JSON or duplicate keys, unknown dtype, negative or overflowing shape, offsets
// negative, outside the data, overlapping or not matching shape x dtype, metadata values
// that are not strings, a data section whose CRC-32 differs from the one the header
// records), DT_EXIT_RUNTIME for a read error. Holes between tensors are allowed.
dt_st_file *dt_st_open(const char *path, dt_error *err);
int dt_st_count(const dt_st_file *f);
const dt_st_tensor *dt_st_get(const dt_st_file *f, int i);
const dt_st_tensor *dt_st_find(const dt_st_file *f, const char *name);
const char *dt_st_metadata(const dt_st_file *f, const char *key);  // NULL if absent
void dt_st_close(dt_st_file *f);

// ---- a network's weights, with torchvision state_dict names ----
// Saves every entry of the parameter table (F32) plus "<bn>.num_batches_tracked" (I64
// scalar, net->bn_batches_tracked) for each batchnorm, as torch.save(model.state_dict())
// would name them, with metadata {"format": "pt", "model": net->model}.
int dt_weights_save(const dt_net *net, const char *path, dt_error *err);
// The same with one more metadata entry key: value (none when either is NULL), such as the
// tokenizer that dtrain's gpt models were trained with.
int dt_weights_save_meta(const dt_net *net, const char *path, const char *key,
                         const char *value, dt_error *err);
// The same tensors added to a writer of the caller's (a checkpoint adds more beside them):
// params_host is the network's whole parameter buffer on the host (n_total floats) and
// tracked the num_batches_tracked value; both must stay valid until dt_st_write.
void dt_weights_add(dt_st_writer *w, const dt_net *net, const float *params_host,
                    const int64_t *tracked);
// Loads every parameter-table entry by name; F32, F16 and BF16 are accepted and converted;
// num_batches_tracked is read if present (the first one found sets bn_batches_tracked);
// other tensors in the file are ignored. A missing tensor, a shape mismatch or an unknown
// dtype is an error naming the file and the tensor (err->code DT_EXIT_USAGE), and leaves
// the network unchanged: everything is validated before anything is uploaded.
int dt_weights_load(dt_net *net, const char *path, dt_error *err);
// dt_weights_load with PyTorch's load_state_dict choices (dtrain --weights):
//   strict:   a tensor in the file that the model does not have (other than a batchnorm's
//             num_batches_tracked) is an error naming it, as load_state_dict(strict=True)'s
//             "Unexpected key(s)": a file for another model is caught, not half loaded;
//   new_head: the classifier — the parameters of the last layer that has any (torchvision's
//             fc / classifier.6) — keeps the network's own initialisation, and the file's
//             copy may have any shape or be absent (fine-tuning to another number of
//             classes, as replacing model.fc does in PyTorch).
//   conv1d:   Hugging Face's GPT-2 layout: the four linear weights of a block (attn.c_attn,
//             attn.c_proj, mlp.c_fc, mlp.c_proj) are stored as its Conv1D holds them, (in,
//             out), and transposed on load (dt_weights_load_path sets it for a directory).
// Either way, a 2-D tensor whose shape is the transpose of the model's is refused with a
// message that names the two layouts.
typedef struct {
    int strict, new_head, conv1d;
} dt_weights_opts;
int dt_weights_load_opts(dt_net *net, const char *path, const dt_weights_opts *o,
                         dt_error *err);
// ---- Hugging Face's layout for the gpt models (nn/safetensors_hf.c) ----
// 1 if a parameter of this name is one of GPT-2's Conv1D weights (stored (in, out) there)
int dt_weights_is_conv1d(const char *name);
// DIR/model.safetensors in GPT-2's layout (the Conv1D weights transposed, lm_head left to
// the tie, metadata format pt) and DIR/config.json (model_type gpt2, GPT2LMHeadModel, the
// model's sizes, gelu_new, layer norm epsilon 1e-5, no dropout), so that
// transformers.GPT2LMHeadModel.from_pretrained(DIR) loads it; DIR is created if absent.
// Each file is written atomically. 0, or -1 with err (DT_EXIT_USAGE: not a gpt model, a
// directory that cannot be made).
// With bpe (nn/bpe.h), its vocab.json, merges.txt and tokenizer_config.json beside them
// (GPT2TokenizerFast.from_pretrained reads them); without, the model's tokens are bytes and
// such files left in DIR by an earlier run are removed.
struct dt_bpe;
int dt_weights_save_hf(const dt_net *net, const char *dir, const struct dt_bpe *bpe,
                       dt_error *err);
// dt_weights_load_opts, where path may also be a directory written by save_pretrained or
// dt_weights_save_hf: its config.json must describe this model (model_type gpt2, n_embd,
// n_layer, n_head, vocab_size, n_positions, a tanh GELU, epsilon 1e-5: each mismatch named)
// and its model.safetensors is read in the conv1d layout.
int dt_weights_load_path(dt_net *net, const char *path, const dt_weights_opts *o,
                         dt_error *err);

// The first parameter-table entry of the classifier (the last layer with parameters):
// entries [dt_weights_head(net), n_params) are the head. n_params when there is none.
int dt_weights_head(const dt_net *net);

#endif
