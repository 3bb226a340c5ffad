// net_step.h — for the lessons' experiments (08's trust ratios, 09's underflow): a real
// network of nn/ on the cpu device, one training forward and backward on random images
// (roughly unit variance) and labels from a seed. The CIFAR ResNets take 32x32 images of 10
// classes, smallcnn Fashion-MNIST's 1x28x28 (as dtrain trains it), every other model
// ImageNet's 224x224 of 1000. Header-only, not part of nn/.
#ifndef DT_LESSON_NET_STEP_H
#define DT_LESSON_NET_STEP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net.h"

typedef struct {
    dt_device *dev;
    dt_net *net;
    float loss;
} lesson_net;

// Builds `model` at `batch` (zero_init: the last BN gamma of every residual block at 0) and
// runs one step; on_layer (may be NULL) is told of each layer during backward only. 0, or 2
// with a message on stderr naming `who`.
static inline int lesson_net_step(lesson_net *ln, const char *who, const char *model, int batch,
                                  unsigned seed, int zero_init,
                                  void (*on_layer)(void *, const dt_net *, int, int), void *ctx) {
    memset(ln, 0, sizeof *ln);
    if (batch < 1 || batch > 4096) {
        fprintf(stderr, "%s: batch %d: expected 1 .. 4096\n", who, batch);
        return 2;
    }
    ln->dev = dt_device_cpu_create(0);
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = batch;
    cfg.zero_init_residual = zero_init;
    if (!strncmp(model, "resnet", 6) && strcmp(model, "resnet18") && strcmp(model, "resnet34") &&
        strcmp(model, "resnet50"))
        cfg.in_h = cfg.in_w = 32, cfg.num_classes = 10;  // the CIFAR ResNets
    if (!strcmp(model, "smallcnn")) cfg.in_c = 1, cfg.in_h = cfg.in_w = 28, cfg.num_classes = 10;
    dt_error err = {0};
    ln->net = dt_model_create(model, ln->dev, &cfg, &err);
    if (!ln->net) {
        fprintf(stderr, "%s: %s\n", who, err.msg);
        ln->dev->destroy(ln->dev);
        return 2;
    }
    dt_net *net = ln->net;
    size_t image = (size_t)net->in_c * net->in_h * net->in_w;
    float *x = malloc((size_t)batch * image * sizeof(float));
    int32_t *y = malloc((size_t)batch * sizeof(int32_t));
    srand(seed);
    for (size_t i = 0; i < (size_t)batch * image; i++)
        x[i] = (float)(((double)rand() / RAND_MAX - 0.5) * 3.4);
    for (int i = 0; i < batch; i++) y[i] = rand() % net->num_classes;
    dt_net_set_batch(net, x, y);
    dt_net_forward(net, 1);
    ln->loss = dt_net_loss(net);
    net->on_layer = on_layer, net->on_layer_ctx = ctx;
    dt_net_backward(net, 1.0f, NULL, NULL);
    net->on_layer = NULL;
    free(x), free(y);
    return 0;
}

static inline void lesson_net_free(lesson_net *ln) {
    if (ln->net) dt_net_free(ln->net);
    if (ln->dev) ln->dev->destroy(ln->dev);
}

#endif
