// train_step.c — benchmark: one training step (forward + backward + SGD update) of a model on
// the cpu device (or --device cuda), images/s; in the same run, PyTorch's torchvision model
// doing the same step on the same kind of device (bench/pytorch_step.py, through Debian's
// python3 or $DT_PYTHON) and OpenBLAS's sgemm rate, so the table shows ours, the peer's, the
// ratio, and how close our convolutions come to sgemm.
// Not a test: speed is measured here, never in ctest. Usage: bench_train_step --help
#include <cblas.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "net.h"
#include "opt_table.h"
#include "optim.h"
#if defined(DT_HAVE_CUDA)
#include "device_cuda.h"
#endif

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// The median of v[0..n) (sorts v): the middle one, or the mean of the two middle ones.
static double median(double *v, int n) {
    qsort(v, n, sizeof v[0], cmp_double);
    return 0.5 * (v[(n - 1) / 2] + v[n / 2]);
}

// OpenBLAS sgemm GFLOP/s on an n x n x n product, median of reps
static double sgemm_gflops(int n, int reps) {
    float *A = malloc(sizeof(float) * n * n), *B = malloc(sizeof(float) * n * n),
          *C = malloc(sizeof(float) * n * n);
    for (int i = 0; i < n * n; i++) A[i] = B[i] = dt_uniform(1, i) - 0.5f, C[i] = 0;
    double t[16];
    for (int r = 0; r < reps; r++) {
        double t0 = dt_now_s();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, A, n, B, n, 0.0f,
                    C, n);
        t[r] = dt_now_s() - t0;
    }
    qsort(t, reps, sizeof t[0], cmp_double);
    free(A), free(B), free(C);
    return 2.0 * n * n * n / t[reps / 2] / 1e9;
}

static double peer_images_per_s(const char *script, const char *model, int batch, int size,
                                int threads, int warmup, int steps, const char *device,
                                int tf32, const char *amp) {
    char cmd[1024];
    const char *py = getenv("DT_PYTHON") ? getenv("DT_PYTHON") : "/usr/bin/python3";
    snprintf(cmd, sizeof cmd,
             "%s %s --model %s --batch %d --size %d --threads %d --warmup %d "
             "--steps %d --device %s --tf32 %d --amp %s 2>/dev/null",
             py, script, model, batch, size, threads, warmup, steps, device, tf32, amp);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    char line[256];
    double ips = -1;
    while (fgets(line, sizeof line, p)) {
        if (sscanf(line, "images_per_s %lf", &ips) == 1) continue;
        fprintf(stderr, "peer: %s", line);
    }
    pclose(p);
    return ips;
}

// ---- --profile: where one step's time goes, by layer kind ----
enum { K_CONV1, K_CONV3, K_CONVK, K_BN, K_RELU, K_POOL, K_LINEAR, K_ADD, K_OTHER, K_N };
static const char *const KIND[K_N] = {"conv 1x1", "conv 3x3", "conv other", "batchnorm", "relu",
                                      "pool", "linear", "residual add", "other"};
static int kind_of(const dt_layer *l) {
    switch (l->type) {
    case DT_LAYER_CONV: return l->kh == 1 ? K_CONV1 : l->kh == 3 ? K_CONV3 : K_CONVK;
    case DT_LAYER_BN: return K_BN;
    case DT_LAYER_RELU: return K_RELU;
    case DT_LAYER_MAXPOOL: case DT_LAYER_AVGPOOL: return K_POOL;
    case DT_LAYER_LINEAR: return K_LINEAR;
    case DT_LAYER_ADD: return K_ADD;
    default: return K_OTHER;
    }
}
// Timed through the network's on_layer hook (nn/net.h), so every layer runs as in training:
// under --precision bf16|fp16 too, where a layer reads and writes half storage
// (nn/net_half.c) and calling its forward directly would find no fp32 output.
typedef struct {
    double fwd[K_N], bwd[K_N], fwd_flops[K_N], bwd_flops[K_N], last;
    int cur, phase;  // the layer running since `last` (-1: none) and its phase
} profile;
static void on_layer(void *ctx, const dt_net *net, int layer, int phase) {
    profile *p = ctx;
    net->dev->sync(net->dev);  // a GPU layer's time is its kernels', not their launch
    double t = dt_now_s();
    if (p->cur >= 0) {
        const dt_layer *l = net->layers[p->cur];
        int k = kind_of(l), fw = p->phase == DT_PHASE_FORWARD;
        (fw ? p->fwd : p->bwd)[k] += t - p->last;
        (fw ? p->fwd_flops : p->bwd_flops)[k] += fw ? l->fwd_flops : l->bwd_flops;
    }
    p->cur = layer, p->phase = phase, p->last = t;
}
static void print_profile(dt_net *net, int reps) {
    profile p = {.cur = -1};
    net->on_layer = on_layer, net->on_layer_ctx = &p;
    for (int r = 0; r < reps; r++) {
        dt_net_forward(net, 1);
        dt_net_loss(net);
        dt_net_backward(net, 1.0f, NULL, NULL);
    }
    net->on_layer = NULL;
    double total = 0;
    for (int k = 0; k < K_N; k++) total += p.fwd[k] + p.bwd[k];
    printf("\n| layer kind | forward ms | backward ms | share | forward GFLOP/s | backward GFLOP/s |\n");
    printf("|---|---|---|---|---|---|\n");
    for (int k = 0; k < K_N; k++) {
        if (p.fwd[k] + p.bwd[k] == 0) continue;
        printf("| %s | %.1f | %.1f | %.0f %% | %.1f | %.1f |\n", KIND[k], 1e3 * p.fwd[k] / reps,
               1e3 * p.bwd[k] / reps, 100 * (p.fwd[k] + p.bwd[k]) / total,
               p.fwd[k] > 0 ? p.fwd_flops[k] / p.fwd[k] / 1e9 : 0,
               p.bwd[k] > 0 ? p.bwd_flops[k] / p.bwd[k] / 1e9 : 0);
    }
}

// The options, one row each (nn/opt_table.h: the parser, --help and the refusals of every
// dtlab program; docs/options.md)
typedef struct {
    const char *model, *script;
    int batch, size, threads, warmup, steps, rounds, no_peer, profile, cuda, determ, amp;
} bench_opts;
#define AT(m) DT_OPT_AT(bench_opts, m)
static const dt_opt bench_rows[] = {
    {.name = "model", .arg = "NAME", .type = DT_OPT_TEXT, AT(model),
     .help = "the network (default resnet50; nn/models.c's names)"},
    {.name = "batch", .arg = "N", .type = DT_OPT_INT, AT(batch), .lo = 1, .hi = 4096,
     .want = "a batch of 1 to 4096 images", .help = "images per step (default 16)"},
    {.name = "size", .arg = "PX", .type = DT_OPT_INT, AT(size), .lo = 1, .hi = 4096,
     .want = "an image side of 1 to 4096 pixels", .help = "image side in pixels (default 224)"},
    {.name = "threads", .arg = "N", .type = DT_OPT_INT, AT(threads), .lo = 1, .hi = 1024,
     .want = "1 to 1024 threads", .help = "threads of both sides (default 2)"},
    {.name = "warmup", .arg = "N", .type = DT_OPT_INT, AT(warmup), .lo = 0, .hi = 1000,
     .want = "0 to 1000 steps", .help = "untimed steps before the first round (default 2)"},
    {.name = "steps", .arg = "N", .type = DT_OPT_INT, AT(steps), .lo = 1, .hi = 1000,
     .want = "1 to 1000 steps", .help = "timed steps per round (default 5)"},
    {.name = "rounds", .arg = "N", .type = DT_OPT_INT, AT(rounds), .lo = 1, .hi = 16,
     .want = "1 to 16 rounds", .help = "rounds, ours and the peer's alternating (default 3)"},
    {.name = "no-peer", .type = DT_OPT_SWITCH, AT(no_peer), .help = "time dtlab only"},
    {.name = "peer-script", .arg = "PATH", .type = DT_OPT_TEXT, AT(script),
     .help = "the peer's script (default bench/pytorch_step.py)"},
    {.name = "profile", .type = DT_OPT_SWITCH, AT(profile),
     .help = "time per layer kind, at the end"},
    {.name = "device", .arg = "cpu|cuda", .type = DT_OPT_CHOICE, AT(cuda), .choices = "cpu|cuda",
     .help = "the device (default cpu)"},
    {.name = "deterministic", .type = DT_OPT_SWITCH, AT(determ),
     .help = "cuda: fp32, no TF32, deterministic kernels"},
    // the position of each name is its dt_amp (nn/net.h: fp32, fp16, bf16)
    {.name = "precision", .arg = "fp32|fp16|bf16", .type = DT_OPT_CHOICE, AT(amp),
     .choices = "fp32|fp16|bf16",
     .help = "mixed precision; the peer runs torch.autocast in the same half type\n(bf16 on "
             "the cpu, fp16 with a GradScaler on cuda; none for cpu fp16)"},
};
#undef AT

int main(int argc, char **argv) {
    bench_opts o = {.model = "resnet50", .script = DT_BENCH_DIR "/pytorch_step.py", .batch = 16,
                    .size = 224, .threads = 2, .warmup = 2, .steps = 5, .rounds = 3};
    dt_opt_table t = {bench_rows, (int)(sizeof bench_rows / sizeof bench_rows[0]), &o, NULL,
                      NULL, NULL};
    int rc = dt_opts_parse(argc, argv, &t, 1, "bench_train_step", 0);
    if (rc == 1) {
        printf("usage: bench_train_step [options]\n"
               "Times forward+backward+SGD of MODEL on the cpu (or cuda) device and, in the same\n"
               "run, torchvision's MODEL in PyTorch on the same kind of device (Debian's "
               "python3,\nor $DT_PYTHON), and prints the ratio.\n");
        dt_opts_usage(stdout, &t);
        return 0;
    }
    if (rc) return 2;
    const char *model = o.model, *script = o.script;
    int batch = o.batch, size = o.size, threads = o.threads, warmup = o.warmup, steps = o.steps,
        peer = !o.no_peer, prof = o.profile, rounds = o.rounds, cuda = o.cuda, determ = o.determ;
    dt_amp amp = (dt_amp)o.amp;
    omp_set_num_threads(threads);
    openblas_set_num_threads(threads);

    dt_device *dev = NULL;
    char gpu[160] = "";
    if (cuda) {
#if defined(DT_HAVE_CUDA)
        dt_error e = {0};
        dev = dt_device_cuda_create(0, determ ? DT_CUDA_DETERMINISTIC : 0u, &e);
        if (!dev) {
            fprintf(stderr, "bench_train_step: %s\n", e.msg);
            return 2;
        }
        dt_cuda_describe(0, gpu, sizeof gpu);
#else
        fprintf(stderr, "bench_train_step: --device cuda: this build has no cuda device\n");
        return 2;
#endif
    } else {
        dev = dt_device_cpu_create(threads);
    }
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = batch;
    cfg.in_h = cfg.in_w = size;
    cfg.amp = amp;
    // the peer's autocast type: PyTorch 1.13 autocasts the cpu to bf16 only
    const char *peer_amp = amp == DT_AMP_FP32 ? "none" : dt_amp_name(amp);
    if (amp == DT_AMP_FP16 && !cuda) peer = 0;
    dt_error err = {0};
    dt_net *net = dt_model_create(model, dev, &cfg, &err);
    if (!net) {
        fprintf(stderr, "bench_train_step: %s\n", err.msg);
        return err.code ? err.code : 1;
    }
    dt_optim_config oc = dt_optim_config_default(DT_OPT_SGD);
    dt_optim *opt = dt_optim_create(net, &oc, &err);

    size_t nx = (size_t)batch * cfg.in_c * size * size;
    float *x = malloc(nx * sizeof(float));
    int32_t *y = malloc(batch * sizeof(int32_t));
    for (size_t i = 0; i < nx; i++) x[i] = 2.0f * dt_uniform(7, i) - 1.0f;
    for (int i = 0; i < batch; i++) y[i] = (int32_t)(dt_mix64(i) % (uint64_t)cfg.num_classes);
    dt_net_set_batch(net, x, y);

    // Rounds alternate ours and the peer, so that a slow spell of a shared machine hits both;
    // each side's figure is the median over rounds of its median step, and the ratio the
    // median of the per-round ratios.
    double r_ours[16], r_theirs[16], r_ratio[16], r_sgemm[16];
    for (int r = 0; r < rounds; r++) {
        double t[1000];
        int w = r == 0 ? warmup : 0;
        for (int i = 0; i < w + steps; i++) {
            double t0 = dt_now_s();
            dt_net_forward(net, 1);
            dt_net_loss(net);
            // fp16: a constant loss scale, unscaled before the update (the speed does not
            // depend on the scale; the trainer's dynamic scaler adds one NaN count per step)
            dt_net_backward(net, amp == DT_AMP_FP16 ? 1024.0f : 1.0f, NULL, NULL);
            if (amp == DT_AMP_FP16) dev->scale(dev, net->grads, 1.0f / 1024.0f, net->n_trainable);
            dt_optim_step(opt, net, 0.01f);
            dev->sync(dev);
            if (i >= w) t[i - w] = dt_now_s() - t0;
        }
        qsort(t, steps, sizeof t[0], cmp_double);
        r_ours[r] = batch / t[steps / 2];
        r_sgemm[r] = sgemm_gflops(2048, 5);
        r_theirs[r] = peer ? peer_images_per_s(script, model, batch, size, threads, warmup, steps,
                                               cuda ? "cuda" : "cpu", cuda && !determ, peer_amp)
                           : -1;
        r_ratio[r] = r_theirs[r] > 0 ? r_ours[r] / r_theirs[r] : -1;
        fprintf(stderr, "round %d: dtlab %.2f img/s, PyTorch %.2f img/s\n", r + 1, r_ours[r],
                r_theirs[r]);
    }
    double ours = median(r_ours, rounds), theirs = median(r_theirs, rounds);
    double ratio = median(r_ratio, rounds);
    double step_gflops = dt_net_step_flops(net) * ours / batch / 1e9;
    double sgemm = median(r_sgemm, rounds);

    if (cuda) printf("device: %s%s (sgemm column: OpenBLAS on the host)\n", gpu,
                     determ ? ", deterministic fp32" : ", TF32 gemms (and TF32 in PyTorch)");
    else printf("device: cpu, gemms on %s (sgemm column: OpenBLAS)\n",
                dt_device_cpu_gemm_name(dev));
    printf("| model | precision | batch | size | threads | dtlab img/s | PyTorch img/s | ratio | "
           "dtlab GFLOP/s | sgemm GFLOP/s | of sgemm |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    printf("| %s | %s | %d | %d | %d | %.2f | ", model, dt_amp_name(amp), batch, size, threads,
           ours);
    if (theirs > 0)
        printf("%.2f | %.2f |", theirs, ratio);
    else
        printf("n/a | n/a |");
    printf(" %.1f | %.1f | %.0f %% |\n", step_gflops, sgemm, 100.0 * step_gflops / sgemm);
    if (prof) print_profile(net, 2);
    dt_optim_free(opt);
    dt_net_free(net);
    free(x), free(y);
    dev->destroy(dev);
    return 0;
}
