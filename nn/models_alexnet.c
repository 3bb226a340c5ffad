// models_alexnet.c — plain convolutional networks as layer lists for nn/net.c:
//  - AlexNet as torchvision builds it (torchvision/models/alexnet.py, the "one weird trick"
//    variant of Krizhevsky 2014: 64/192/384/256/256 filters, no LRN), 61,100,840 parameters
//    at 1000 classes, names features.N / classifier.N as its nn.Sequential indices;
//  - AlexNet-BN (Jia et al. 2018, "Highly Scalable Deep Learning Training System with
//    Mixed-Precision", §5: BN after every convolution and after pool5, which lets AlexNet
//    train at batch 64K with LARS);
//  - smallcnn, the "2 conv + pool" baseline of the Fashion-MNIST README (91.6 % test).
// Not here: layer arithmetic (the layers), initialisation (dt_net_finalize), training.
#include <stdio.h>

#include "models.h"

// Name "features.<i>" or "classifier.<i>".
static const char *seq_name(char *buf, size_t n, const char *seq, int i) {
    snprintf(buf, n, "%s.%d", seq, i);
    return buf;
}

// AlexNet, torchvision:
//   features: 0 conv 11x11/4 pad 2 (64), 1 relu, 2 maxpool 3/2, 3 conv 5x5 pad 2 (192),
//     4 relu, 5 maxpool 3/2, 6 conv 3x3 pad 1 (384), 7 relu, 8 conv 3x3 (256), 9 relu,
//     10 conv 3x3 (256), 11 relu, 12 maxpool 3/2;
//   avgpool: adaptive 6x6;
//   classifier: 0 dropout, 1 linear 9216->4096, 2 relu, 3 dropout, 4 linear 4096->4096,
//     5 relu, 6 linear 4096->classes.
// AlexNet-BN inserts a BatchNorm2d after each conv (before its ReLU) and one after pool5
// (before the adaptive pool and the classifier), numbered as nn.Sequential would number the
// longer list: 0 conv, 1 bn, 2 relu, 3 pool, 4 conv, 5 bn, 6 relu, 7 pool, 8 conv, 9 bn,
// 10 relu, 11 conv, 12 bn, 13 relu, 14 conv, 15 bn, 16 relu, 17 pool, 18 bn (pool5 BN).
// Its convs have no bias (the BN's beta takes that role, as in ResNet), so AlexNet-BN has
// 61,100,840 - 1,152 + 2*(64+192+384+256+256) + 2*256 = 61,102,504 parameters.
// x is (B,C,H,W); H, W >= 63 (smaller maps vanish in a pool) -> logits (B,classes).
int dt_build_alexnet(dt_net *net, const dt_model_config *cfg, int bn) {
    static const struct { int oc, k, stride, pad, pool_after; } CONVS[5] = {
        {64, 11, 4, 2, 1}, {192, 5, 1, 2, 1}, {384, 3, 1, 1, 0}, {256, 3, 1, 1, 0},
        {256, 3, 1, 1, 1},
    };
    char name[64];
    int idx = 0;  // the nn.Sequential index of the next module in `features`
    int x = -1;
    for (int i = 0; i < 5; i++) {
        x = dt_net_add_conv(net, seq_name(name, sizeof name, "features", idx++), x,
                            CONVS[i].oc, CONVS[i].k, CONVS[i].stride, CONVS[i].pad, !bn);
        if (bn) x = dt_net_add_bn(net, seq_name(name, sizeof name, "features", idx++), x);
        x = dt_net_add_relu(net, x);
        idx++;
        if (CONVS[i].pool_after) {
            x = dt_net_add_maxpool(net, x, 3, 2, 0);
            idx++;
        }
        if (dt_build_status(net) != 0) return -1;
    }
    if (bn) x = dt_net_add_bn(net, seq_name(name, sizeof name, "features", idx++), x);
    x = dt_net_add_avgpool(net, x, 6, 6);

    // classifier: (B,256,6,6) flattened to 9216
    x = dt_net_add_dropout(net, x, cfg->dropout);
    x = dt_net_add_linear(net, "classifier.1", x, 4096, 1);
    x = dt_net_add_relu(net, x);
    x = dt_net_add_dropout(net, x, cfg->dropout);
    x = dt_net_add_linear(net, "classifier.4", x, 4096, 1);
    x = dt_net_add_relu(net, x);
    dt_net_add_linear(net, "classifier.6", x, cfg->num_classes, 1);
    return dt_build_status(net);
}

// smallcnn, as a PyTorch module with attributes conv1, conv2, fc1, fc2:
//   conv1 5x5 pad 2 (32), relu, maxpool 2/2, conv2 5x5 pad 2 (64), relu, maxpool 2/2,
//   fc1 (64*H/4*W/4 -> 1024), relu, dropout, fc2 (1024 -> classes).
// At 1x28x28 and 10 classes: 3,274,634 parameters. x is (B,C,H,W), H, W >= 4.
int dt_build_smallcnn(dt_net *net, const dt_model_config *cfg) {
    int x = dt_net_add_conv(net, "conv1", -1, 32, 5, 1, 2, 1);
    x = dt_net_add_relu(net, x);
    x = dt_net_add_maxpool(net, x, 2, 2, 0);
    x = dt_net_add_conv(net, "conv2", x, 64, 5, 1, 2, 1);
    x = dt_net_add_relu(net, x);
    x = dt_net_add_maxpool(net, x, 2, 2, 0);
    if (dt_build_status(net) != 0) return -1;
    x = dt_net_add_linear(net, "fc1", x, 1024, 1);
    x = dt_net_add_relu(net, x);
    x = dt_net_add_dropout(net, x, cfg->dropout);
    dt_net_add_linear(net, "fc2", x, cfg->num_classes, 1);
    return dt_build_status(net);
}
