// gpt_step.c — benchmark: one training step (forward, backward, AdamW) of a gpt model on the
// cpu device, tokens/s, the median of timed steps after warm-up. bench/gpt_step.py runs it
// beside the same step of a PyTorch reference module and prints the table row.
// Not a test: speed is measured here, never in ctest.
// usage: bench_gpt_step MODEL BATCH SEQ THREADS WARMUP STEPS [fp32|bf16|fp16]
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dt.h"
#include "kernels.h"
#include "optim.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 7 && argc != 8) {
        fprintf(stderr, "usage: bench_gpt_step MODEL BATCH SEQ THREADS WARMUP STEPS "
                "[fp32|bf16|fp16]\n");
        return DT_EXIT_USAGE;
    }
    const char *prec = argc == 8 ? argv[7] : "fp32";
    dt_amp amp = !strcmp(prec, "bf16") ? DT_AMP_BF16 : !strcmp(prec, "fp16") ? DT_AMP_FP16
                 : DT_AMP_FP32;
    if (amp == DT_AMP_FP32 && strcmp(prec, "fp32")) {
        fprintf(stderr, "bench_gpt_step: precision %s, expected fp32, bf16 or fp16\n", prec);
        return DT_EXIT_USAGE;
    }
    int B = atoi(argv[2]), T = atoi(argv[3]), threads = atoi(argv[4]);
    int warm = atoi(argv[5]), steps = atoi(argv[6]);
    if (B <= 0 || T <= 0 || threads <= 0 || warm < 0 || steps <= 0 || steps > 1000) {
        fprintf(stderr, "bench_gpt_step: sizes must be positive, steps 1..1000\n");
        return DT_EXIT_USAGE;
    }
    dt_device *dev = dt_device_cpu_create(threads);
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = B, cfg.seq_len = T, cfg.amp = amp;
    dt_error err = {0};
    dt_net *net = dt_model_create(argv[1], dev, &cfg, &err);
    if (!net) return fprintf(stderr, "bench_gpt_step: %s\n", err.msg), err.code;
    dt_optim_config oc = dt_optim_config_default(DT_OPT_ADAMW);
    dt_optim *opt = dt_optim_create(net, &oc, &err);
    int32_t *tok = malloc(sizeof(int32_t) * B * T), *tgt = malloc(sizeof(int32_t) * B * T);
    for (int i = 0; i < B * T; i++)
        tok[i] = (int32_t)(dt_mix64(i) % (uint64_t)net->num_classes),
        tgt[i] = (int32_t)(dt_mix64(i + 7) % (uint64_t)net->num_classes);
    dt_net_set_tokens(net, tok, tgt);
    double *t = malloc(sizeof(double) * steps);
    for (int s = 0; s < warm + steps; s++) {
        double t0 = dt_now_s();
        dt_net_forward(net, 1);
        dt_net_loss(net);
        dt_net_backward(net, 1.0f, NULL, NULL);
        dt_optim_step(opt, net, 1e-4f);
        dev->sync(dev);
        if (s >= warm) t[s - warm] = dt_now_s() - t0;
    }
    qsort(t, (size_t)steps, sizeof(double), cmp_double);
    printf("tokens_per_s %.1f step_ms %.3f gflop_per_step %.4f\n", B * T / t[steps / 2],
           1e3 * t[steps / 2], dt_net_step_flops(net) / 1e9);
    free(t), free(tok), free(tgt);
    dt_optim_free(opt);
    dt_net_free(net);
    dev->destroy(dev);
    return 0;
}
