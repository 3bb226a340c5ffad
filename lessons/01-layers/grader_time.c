// grader_time.c — `grader --time [BATCH]`: where a convolution's time goes, with YOUR
// im2col and col2im. For ResNet-50's convolution shapes (torchvision, 224x224 input), per
// image: your im2col, the forward gemm through the device (OpenBLAS), your col2im, and nn/'s
// own im2col (nn/device_cpu_nn.c) for comparison; on one thread. Not a check: a
// measurement for the README's questions (how much of a conv is data movement, and what
// 1x1 stride-1 convolutions save by skipping im2col).
#include <time.h>

#include "grader.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

typedef struct {
    const char *name;
    int C, H, OC, K, S, P;
} rn50_conv;

int time_conv(dt_device *d, int argc, char **argv) {
    int B = argc > 1 ? atoi(argv[1]) : 2;
    if (B < 1 || B > 64) {
        fprintf(stderr, "grader --time: BATCH must be 1..64\n");
        return 2;
    }
    static const rn50_conv convs[] = {
        {"conv1 7x7 s2 (stem)", 3, 224, 64, 7, 2, 3},
        {"layer1 1x1 256->64", 256, 56, 64, 1, 1, 0},
        {"layer1 3x3 64->64", 64, 56, 64, 3, 1, 1},
        {"layer2.0 3x3 s2 128", 128, 56, 128, 3, 2, 1},
        {"layer3 3x3 256->256", 256, 14, 256, 3, 1, 1},
        {"layer4 3x3 512->512", 512, 7, 512, 3, 1, 1},
    };
    printf("# per image, batch %d, one thread; ms (best of 5 runs over the batch)\n", B);
    printf("| conv | K x N | your im2col | gemm | gemm GFLOP/s | your col2im | nn im2col | "
           "im2col share |\n|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++) {
        const rn50_conv *c = &convs[i];
        conv_shape s = {B, c->C, c->H, c->H, c->OC, c->K, c->K, c->S, c->P,
                        conv_out(c->H, c->K, c->S, c->P), conv_out(c->H, c->K, c->S, c->P)};
        int K = c->C * c->K * c->K, N = s.OH * s.OW;
        size_t ximg = (size_t)c->C * c->H * c->H;
        float *x = falloc(ximg * B), *dx = falloc(ximg), *w = falloc((size_t)c->OC * K);
        float *y = falloc((size_t)c->OC * N), *col = falloc((size_t)K * N);
        uint64_t r = 12345;
        fill_uniform(&r, x, ximg * B, -1, 1);
        fill_uniform(&r, w, (size_t)c->OC * K, -0.1, 0.1);
        double best[4] = {1e30, 1e30, 1e30, 1e30};
        for (int rep = 0; rep < 5; rep++) {
            double t[4] = {0, 0, 0, 0};
            for (int b = 0; b < B; b++) {
                const float *xb = x + b * ximg;
                double t0 = now_s();
                im2col(xb, c->C, c->H, c->H, c->K, c->K, c->S, c->P, col);
                double t1 = now_s();
                d->gemm(d, 0, 0, c->OC, N, K, 1.0f, w, K, col, N, 0.0f, y, N);
                double t2 = now_s();
                col2im(col, c->C, c->H, c->H, c->K, c->K, c->S, c->P, dx);
                double t3 = now_s();
                d->im2col(d, xb, 1, c->C, c->H, c->H, c->K, c->K, c->S, c->P, col);
                double t4 = now_s();
                t[0] += t1 - t0, t[1] += t2 - t1, t[2] += t3 - t2, t[3] += t4 - t3;
            }
            for (int j = 0; j < 4; j++) best[j] = t[j] < best[j] ? t[j] : best[j];
        }
        for (int j = 0; j < 4; j++) best[j] *= 1e3 / B;
        printf("| %s | %d x %d | %.2f | %.2f | %.1f | %.2f | %.2f | %.0f %% |\n", c->name, K, N,
               best[0], best[1], 2.0 * c->OC * K * N / (best[1] * 1e-3) / 1e9, best[2], best[3],
               100 * best[0] / (best[0] + best[1]));
        free(x), free(dx), free(w), free(y), free(col);
    }
    return 0;
}
