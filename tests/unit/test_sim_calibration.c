// test_sim_calibration.c — the GPU profiles of sim/gpu_profiles.c reproduce the published
// single-GPU ResNet-50 training throughput (docs/hardware.md, "Published throughputs": NVIDIA
// DeepLearningExamples, PyTorch, batch 256) within 10 %: V100 fp32 367 img/s, V100 AMP 1200,
// A100 TF32 938, A100 AMP 2470. One training step runs as nn/train.c runs it on one rank
// (forward in training mode, loss, backward, SGD step; no allreduce with one GPU; the host
// batch copy is left out, as a data loader overlaps it with compute) on the model device, which
// does no math, and images/s = 256 / simulated seconds. Also checked: the FLOPs the device
// charged match the layers' own counts (dt_net_step_flops, nn/layer_*.c) within 1 %, and
// building the network at batch 256 (~25 GiB of device buffers) leaves the resident set small.
// The derived profiles (P100, P40, H100) are printed, not asserted: no published figure.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "device_model.h"
#include "gpu.h"
#include "net.h"
#include "optim.h"
#include "testutil.h"

#define BATCH 256
#define TOL 0.10

typedef struct {
    double img_s, flops, layer_flops, arena_gib, rss_growth;
    long kernels;
} step_result;

static double rss_bytes(void) {
    FILE *fp = fopen("/proc/self/statm", "r");
    long size = 0, resident = 0;
    if (!fp || fscanf(fp, "%ld %ld", &size, &resident) != 2) fail_msg("cannot read statm");
    fclose(fp);
    return (double)resident * (double)sysconf(_SC_PAGESIZE);
}

// One ResNet-50 training step at batch 256, 3x224x224, 1000 classes.
static step_result train_step(const char *gpu, dt_precision p) {
    double rss0 = rss_bytes();
    dt_error err = {0};
    dt_modeldev_config c = {.gpu = dt_gpu_find(gpu), .precision = p};
    dt_device *d = dt_device_model_create(&c, &err);
    if (!d) fail_msg("model device %s: %s", gpu, err.msg);
    dt_model_config mc = dt_model_config_default();
    mc.batch = BATCH, mc.in_c = 3, mc.in_h = 224, mc.in_w = 224, mc.num_classes = 1000;
    dt_net *net = dt_model_create("resnet50", d, &mc, &err);
    if (!net) fail_msg("resnet50: %s", err.msg);
    dt_optim_config oc = dt_optim_config_default(DT_OPT_SGD);
    dt_optim *opt = dt_optim_create(net, &oc, &err);
    if (!opt) fail_msg("optimizer: %s", err.msg);

    dt_device_model_reset_stats(d);
    dt_net_forward(net, 1);
    float loss = dt_net_loss(net);
    assert_true(isfinite(loss));
    dt_net_backward(net, 1.0f, NULL, NULL);
    dt_optim_step(opt, net, 0.1f);
    d->sync(d);

    dt_model_stats st = dt_device_model_stats(d);
    step_result r = {.img_s = BATCH / st.seconds, .flops = st.flops,
                     .layer_flops = dt_net_step_flops(net), .kernels = st.kernels,
                     .arena_gib = st.arena_used / 1073741824.0,
                     .rss_growth = rss_bytes() - rss0};
    dt_optim_free(opt);
    dt_net_free(net);
    d->destroy(d);
    return r;
}

static void check(const char *gpu, dt_precision p, double published) {
    step_result r = train_step(gpu, p);
    double err = r.img_s / published - 1.0;
    printf("# %-5s %s  simulated %7.1f img/s  published %6.0f  error %+5.1f %%  (%ld kernels, "
           "%.2f TFLOP/step, device %.1f GiB, resident +%.1f MiB)\n",
           gpu, dt_precision_name(p), r.img_s, published, 100 * err, r.kernels, r.flops / 1e12,
           r.arena_gib, r.rss_growth / 1048576.0);
    if (fabs(err) > TOL)
        fail_msg("%s %s: %.1f img/s is %.1f %% off the published %.0f", gpu,
                 dt_precision_name(p), r.img_s, 100 * err, published);
    // the device's FLOPs against the layers' own cost counts (elementwise terms differ)
    if (fabs(r.flops / r.layer_flops - 1.0) > 0.01)
        fail_msg("device charged %.4g FLOPs, the layers count %.4g", r.flops, r.layer_flops);
    // ~25 GiB of device buffers must not become resident (the model device touches nothing)
    assert_true(r.rss_growth < 64.0 * 1048576.0);
}

static void test_v100_fp32_resnet50_matches_published_367_img_s(void **state) {
    (void)state;
    check("v100", DT_PREC_FP32, 367);
}

static void test_v100_amp_resnet50_matches_published_1200_img_s(void **state) {
    (void)state;
    check("v100", DT_PREC_FP16, 1200);
}

static void test_a100_tf32_resnet50_matches_published_938_img_s(void **state) {
    (void)state;
    check("a100", DT_PREC_TF32, 938);
}

static void test_a100_amp_resnet50_matches_published_2470_img_s(void **state) {
    (void)state;
    check("a100", DT_PREC_FP16, 2470);
}

// No published figure (docs/hardware.md, "Published throughputs"): printed for the reader, only
// required to be finite and ordered as the datasheets are (newer GPU, more images per second).
static void test_derived_profiles_print_and_order_by_generation(void **state) {
    (void)state;
    double p40 = train_step("p40", DT_PREC_FP32).img_s;
    double p100 = train_step("p100", DT_PREC_FP32).img_s;
    double v100 = train_step("v100", DT_PREC_FP32).img_s;
    double a100 = train_step("a100", DT_PREC_FP16).img_s;
    double h100 = train_step("h100", DT_PREC_FP16).img_s;
    printf("# derived: p40 fp32 %.1f, p100 fp32 %.1f, h100 tf32 %.1f, h100 fp16 %.1f img/s\n",
           p40, p100, train_step("h100", DT_PREC_TF32).img_s, h100);
    assert_true(p40 > 0 && p40 < p100 && p100 < v100 && a100 < h100);
}

int main(void) {
    tu_seed();  // nothing random here; printed for uniformity with the other programs
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v100_fp32_resnet50_matches_published_367_img_s),
        cmocka_unit_test(test_v100_amp_resnet50_matches_published_1200_img_s),
        cmocka_unit_test(test_a100_tf32_resnet50_matches_published_938_img_s),
        cmocka_unit_test(test_a100_amp_resnet50_matches_published_2470_img_s),
        cmocka_unit_test(test_derived_profiles_print_and_order_by_generation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
