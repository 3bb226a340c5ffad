// gpt_sample.h — text from a trained gpt model: the next token drawn from the model's
// distribution with a temperature and a top-k cut (Holtzman et al. 2020 discuss both; the
// rule is nanoGPT's sample.py: logits / temperature, every logit below the k-th largest
// dropped, softmax, one multinomial draw), and the loop that feeds each token back.
// Used by `dtrain --generate` and `dtrain --sample-every` (real/dtrain_generate.c).
// Not here: the forward pass (nn/net_run.c), the weights (nn/safetensors_weights.c).
#ifndef DT_GPT_SAMPLE_H
#define DT_GPT_SAMPLE_H

#include <stdint.h>

#include "dt.h"
#include "net.h"

typedef struct {
    double temperature;  // 0: the most likely token (greedy); else logits / temperature
    int top_k;           // draw among the k most likely tokens only (0: the whole vocabulary)
    uint64_t seed;       // the draws: the same seed, weights and prompt give the same text
} dt_sample_opts;

// The token drawn from probs (V probabilities, the model's softmax) by draw number i of
// s->seed. Its probability is proportional to probs[t]^(1/temperature) (= softmax of
// logits / temperature) among the top_k most likely tokens (ties: the lower id first), 0
// elsewhere. order: scratch space for V ints.
int dt_sample_token(const float *probs, int V, const dt_sample_opts *s, uint64_t i, int *order);

// n_new tokens after the n_prompt tokens of prompt (n_prompt >= 1), written to out: each
// from the model's distribution at the last position of the context's last net->seq tokens
// (row 0 of the net's batch; the others are left zero). The forward pass runs in evaluation
// mode; net's activations are overwritten (call it between training steps, not inside one).
// 0, or an error (bad arguments: DT_EXIT_USAGE).
int dt_gpt_generate(dt_net *net, const int32_t *prompt, int n_prompt, int n_new,
                    const dt_sample_opts *s, int32_t *out, dt_error *err);

#endif
