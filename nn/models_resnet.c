// models_resnet.c — residual networks (He et al. 2016, "Deep Residual Learning for Image
// Recognition"), as layer lists for nn/net.c:
//  - the ImageNet ResNets of torchvision (torchvision/models/resnet.py): 18 and 34 with
//    BasicBlock, 50, 101 and 152 with Bottleneck "v1.5" (the stride-2 sits on the 3x3 conv2,
//    not on the 1x1 conv1 as in the paper); parameter names exactly as its state_dict;
//  - the CIFAR ResNets of He et al. 2016 §4.2 (depth 6n+2: 20, 32, 44, 56, 110).
// Not here: layer arithmetic (the layers), initialisation (dt_net_finalize, Kaiming normal
// fan_out as torchvision), training.
#include <stdio.h>

#include "models.h"

// One block's names: "layer<stage>.<block>".
static void block_prefix(char *buf, size_t n, int stage, int block) {
    snprintf(buf, n, "layer%d.%d", stage, block);
}

// conv (no bias: the BN that follows has its own beta) then batchnorm, named
// "<prefix>.<conv>" and "<prefix>.<bn>"; returns the BN's index.
static int conv_bn(dt_net *net, const char *prefix, const char *conv, const char *bn, int in,
                   int oc, int k, int stride, int pad) {
    char cname[64], bname[64];
    snprintf(cname, sizeof cname, "%s%s%s", prefix, *prefix ? "." : "", conv);
    snprintf(bname, sizeof bname, "%s%s%s", prefix, *prefix ? "." : "", bn);
    int c = dt_net_add_conv(net, cname, in, oc, k, stride, pad, 0);
    return dt_net_add_bn(net, bname, c);
}

// The shortcut of a block: the input itself, or, where the shape changes, torchvision's
// `downsample` = Sequential(conv1x1(stride), BatchNorm2d), named downsample.0 / downsample.1.
// Added after the main branch, as torchvision registers `downsample` last in the block.
static int shortcut(dt_net *net, const char *prefix, int in, int in_c, int oc, int stride) {
    if (stride == 1 && in_c == oc) return in;
    return conv_bn(net, prefix, "downsample.0", "downsample.1", in, oc, 1, stride, 0);
}

// BasicBlock (expansion 1): x -> conv3x3(stride) bn relu conv3x3 bn, + shortcut(x), relu.
// x is (B,in_c,H,W) -> (B,planes,H/stride,W/stride).
static int basic_block(dt_net *net, const char *prefix, int x, int in_c, int planes,
                       int stride) {
    int y = conv_bn(net, prefix, "conv1", "bn1", x, planes, 3, stride, 1);
    y = dt_net_add_relu(net, y);
    y = conv_bn(net, prefix, "conv2", "bn2", y, planes, 3, 1, 1);
    int s = shortcut(net, prefix, x, in_c, planes, stride);
    return dt_net_add_relu(net, dt_net_add_add(net, y, s));  // main branch first: zero-init
}

// Bottleneck v1.5 (expansion 4): x -> conv1x1 bn relu conv3x3(stride) bn relu conv1x1 bn,
// + shortcut(x), relu. x is (B,in_c,H,W) -> (B,4*planes,H/stride,W/stride).
static int bottleneck_block(dt_net *net, const char *prefix, int x, int in_c, int planes,
                            int stride) {
    int y = conv_bn(net, prefix, "conv1", "bn1", x, planes, 1, 1, 0);
    y = dt_net_add_relu(net, y);
    y = conv_bn(net, prefix, "conv2", "bn2", y, planes, 3, stride, 1);
    y = dt_net_add_relu(net, y);
    y = conv_bn(net, prefix, "conv3", "bn3", y, 4 * planes, 1, 1, 0);
    int s = shortcut(net, prefix, x, in_c, 4 * planes, stride);
    return dt_net_add_relu(net, dt_net_add_add(net, y, s));  // main branch first: zero-init
}

// One stage ("layer<stage>"): `blocks` blocks, the first with `stride`; *c tracks channels.
static int stage(dt_net *net, int stage_no, int x, int *c, int planes, int blocks, int stride,
                 int bottleneck) {
    char prefix[32];
    for (int b = 0; b < blocks; b++) {
        block_prefix(prefix, sizeof prefix, stage_no, b);
        int s = b == 0 ? stride : 1;
        if (bottleneck) {
            x = bottleneck_block(net, prefix, x, *c, planes, s);
            *c = 4 * planes;
        } else {
            x = basic_block(net, prefix, x, *c, planes, s);
            *c = planes;
        }
        if (dt_build_status(net) != 0) return -1;
    }
    return x;
}

// torchvision resnet.py: blocks per stage for each depth.
int dt_build_resnet_imagenet(dt_net *net, const dt_model_config *cfg, int depth) {
    static const struct { int depth, bottleneck, blocks[4]; } CONFIGS[] = {
        {18, 0, {2, 2, 2, 2}},  {34, 0, {3, 4, 6, 3}},   {50, 1, {3, 4, 6, 3}},
        {101, 1, {3, 4, 23, 3}}, {152, 1, {3, 8, 36, 3}},
    };
    int k = -1;
    for (int i = 0; i < (int)(sizeof CONFIGS / sizeof CONFIGS[0]); i++)
        if (CONFIGS[i].depth == depth) k = i;
    if (k < 0) return dt_fail(&net->build_err, DT_EXIT_USAGE, "resnet: no depth %d", depth);

    // stem: conv1 7x7/2 pad 3 (64), bn1, relu, maxpool 3/2 pad 1: (B,C,H,W) -> (B,64,H/4,W/4)
    int x = conv_bn(net, "", "conv1", "bn1", -1, 64, 7, 2, 3);
    x = dt_net_add_relu(net, x);
    x = dt_net_add_maxpool(net, x, 3, 2, 1);
    if (dt_build_status(net) != 0) return -1;

    static const int PLANES[4] = {64, 128, 256, 512};
    int c = 64;
    for (int s = 0; s < 4; s++) {
        x = stage(net, s + 1, x, &c, PLANES[s], CONFIGS[k].blocks[s], s == 0 ? 1 : 2,
                  CONFIGS[k].bottleneck);
        if (x < 0) return -1;
    }
    // global average pool, fc: (B,c,h,w) -> (B,c,1,1) -> (B,classes)
    x = dt_net_add_avgpool(net, x, 1, 1);
    dt_net_add_linear(net, "fc", x, cfg->num_classes, 1);
    return dt_build_status(net);
}

// He et al. 2016 §4.2: a 3x3 conv with 16 filters, then three stages of n BasicBlocks on
// maps of 32, 16, 8 (for 32x32 inputs) with 16, 32, 64 filters, stride 2 opening stages 2 and
// 3, global average pool, fc: 6n+2 weighted layers. The paper's CIFAR shortcuts are option A
// (identity, zero-padded channels, no parameters); here a shortcut that changes shape is
// option B, the 1x1 conv + BN projection (torchvision's downsample), because the layer set
// has no strided zero-padding layer. It adds 2 projections (16->32, 32->64: 2,752 parameters
// with their BNs), so resnet20 has 272,474 parameters where the paper's has 269,722 (0.27M).
int dt_build_resnet_cifar(dt_net *net, const dt_model_config *cfg, int depth) {
    if (depth < 8 || (depth - 2) % 6 != 0)
        return dt_fail(&net->build_err, DT_EXIT_USAGE, "cifar resnet: depth %d is not 6n+2",
                       depth);
    int n = (depth - 2) / 6;
    int x = conv_bn(net, "", "conv1", "bn1", -1, 16, 3, 1, 1);
    x = dt_net_add_relu(net, x);
    if (dt_build_status(net) != 0) return -1;
    static const int PLANES[3] = {16, 32, 64};
    int c = 16;
    for (int s = 0; s < 3; s++) {
        x = stage(net, s + 1, x, &c, PLANES[s], n, s == 0 ? 1 : 2, 0);
        if (x < 0) return -1;
    }
    x = dt_net_add_avgpool(net, x, 1, 1);
    dt_net_add_linear(net, "fc", x, cfg->num_classes, 1);
    return dt_build_status(net);
}

void dt_resnet_zero_init_residual(dt_net *net) {
    dt_device *dev = net->dev;
    for (int i = 0; i < net->n_layers; i++) {
        const dt_layer *l = net->layers[i];
        if (l->type != DT_LAYER_ADD || l->in < 0) continue;
        const dt_layer *bn = net->layers[l->in];
        if (bn->type != DT_LAYER_BN || bn->w_off < 0) continue;
        // gamma is (oc) elements at w_off
        DT_CALL(dev, fill, net->params + bn->w_off, 0.0f, (size_t)bn->oc);
    }
}
