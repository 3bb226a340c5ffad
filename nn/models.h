// models.h — private to the model zoo (nn/models.c, nn/models_resnet.c, nn/models_alexnet.c):
// the builder functions that dt_model_create dispatches to. Not a public header: programs
// use dt_model_create from nn/net.h.
//
// A builder appends a model's layers to an empty network (dt_net_new done, cfg already
// validated) with the dt_net_add_* calls, in torchvision module order, so the parameter table
// comes out in state_dict order with torchvision's names. It returns 0, or -1 as soon as the
// network's build_err records a failure (an input too small for the architecture, say).
// It does not finalize: dt_model_create does, then applies post-initialisation tweaks.
#ifndef DT_MODELS_H
#define DT_MODELS_H

#include "net.h"

// torchvision ResNet for ImageNet, depth 18, 34 (BasicBlock), 50, 101, 152 (Bottleneck v1.5).
int dt_build_resnet_imagenet(dt_net *net, const dt_model_config *cfg, int depth);
// He et al. 2016 §4.2 CIFAR ResNet, depth 6n+2 (20, 32, 44, 56, 110).
int dt_build_resnet_cifar(dt_net *net, const dt_model_config *cfg, int depth);
// torchvision AlexNet (bn = 0) or AlexNet-BN of Jia et al. 2018 (bn = 1).
int dt_build_alexnet(dt_net *net, const dt_model_config *cfg, int bn);
// Two conv + pool layers and two fully connected (the Fashion-MNIST README's baseline).
int dt_build_smallcnn(dt_net *net, const dt_model_config *cfg);

// GPT-2-class decoders (nn/models_gpt.c): a shape of the table
typedef struct {
    char name[16];
    int layers, width, heads, context, vocab;  // L, C (d_model), heads, n_ctx, default V
} dt_gpt_shape;
const dt_gpt_shape *dt_gpt_find(const char *name);  // NULL if not a gpt model
// The shape s with cfg's own layers, width and heads where given (dt_model_config)
dt_gpt_shape dt_gpt_shape_of(const dt_gpt_shape *s, const dt_model_config *cfg);
// The closed form V*C + context*C + L*(12C^2 + 13C) + 2C (tied head), vocab 0: the shape's
double dt_gpt_param_count(const dt_gpt_shape *s, int vocab);
// cfg->vocab (0: the shape's) and net->seq tokens, <= the context (the embedding refuses)
int dt_build_gpt(dt_net *net, const dt_model_config *cfg, const dt_gpt_shape *s);

// Goyal et al. 2017 §5.1: zero gamma in the last BN of every residual block, so each block
// starts as the identity. Call after dt_net_finalize; the last BN of a block is the layer
// feeding the first operand of each residual add (the builders add main branch + shortcut).
void dt_resnet_zero_init_residual(dt_net *net);

// Status shared by the builders: 0 while no layer has failed, -1 once build_err is set.
static inline int dt_build_status(const dt_net *net) {
    return net->build_err.code == 0 ? 0 : -1;
}

#endif
