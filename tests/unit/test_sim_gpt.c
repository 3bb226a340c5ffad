// test_sim_gpt.c — the transformer on the model device and ZeRO's formulas (sim/zero.h),
// against closed forms recomputed here:
//  - GPT-2 124M's forward on the model device charges Kaplan et al. 2020's forward FLOPs
//    per token, 2*N + 2*n_layer*n_ctx*d_model + 2*d_model*n_vocab (N = 12*L*C^2, the logits),
//    within 2 % (the elementwise work the closed form leaves out), on a random sequence
//    length; a training step charges 3x the forward within 3 % (Kaplan's 6N);
//  - what the model device charges for the forward equals the layers' own counts
//    (dt_net_forward_flops, nn/gpt_cost.h shared), the cpu-side figure;
//  - the ZeRO paper's Figure 1 (Rajbhandari et al. 2020): Ψ = 7.5B, N = 64, K = 12 gives
//    120, 31.4, 16.6 and 1.9 GB per GPU at stages 0-3; fp32 keeps 4+4+8 bytes per parameter;
//    stage 3 sends 1.5x the elements of an allreduce, stages 1 and 2 the same;
//  - the stage names parse both ways; anything else is refused.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_model.h"
#include "gpu.h"
#include "net.h"
#include "testutil.h"
#include "zero.h"

static void test_forward_flops_match_kaplan(void **state) {
    (void)state;
    tu_rng rng = tu_rng_new(tu_seed());
    int T = tu_int(&rng, 64, 1024);
    dt_error err = {0};
    dt_modeldev_config mc = {.gpu = dt_gpu_find("v100"), .precision = DT_PREC_FP32,
                             .reuse_arena = 1};
    dt_device *dev = dt_device_model_create(&mc, &err);
    assert_non_null(dev);
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = 2;
    cfg.seq_len = T;
    dt_net *net = dt_model_create("gpt2", dev, &cfg, &err);
    if (!net) fail_msg("%s", err.msg);
    double L = 12, C = 768, V = 50257, tokens = 2.0 * T;
    double kaplan = tokens * (2 * 12 * L * C * C + 2 * L * T * C + 2 * C * V);
    dt_device_model_reset_stats(dev);
    dt_net_forward(net, 1);
    double fwd = dt_device_model_stats(dev).flops;
    printf("T %d: forward %.6g FLOPs, Kaplan %.6g (%+.2f %%); layers' count %.6g\n", T, fwd,
           kaplan, 100 * (fwd / kaplan - 1), dt_net_forward_flops(net));
    assert_true(fabs(fwd / kaplan - 1) < 0.02);
    assert_true(fabs(fwd / dt_net_forward_flops(net) - 1) < 1e-12);
    dt_net_loss(net);
    dt_device_model_reset_stats(dev);
    dt_net_backward(net, 1.0f, NULL, NULL);
    double bwd = dt_device_model_stats(dev).flops;
    printf("backward %.6g FLOPs = %.3f x forward\n", bwd, bwd / fwd);
    assert_true(fabs((fwd + bwd) / (3 * fwd) - 1) < 0.03);
    dt_net_free(net);
    dev->destroy(dev);
}

static void test_zero_memory_matches_the_paper(void **state) {
    (void)state;
    const double psi = 7.5e9, paper_gb[4] = {120, 31.4, 16.6, 1.9};
    for (int s = 0; s < 4; s++) {
        dt_zero_mem m = dt_zero_memory(psi, s, 64, 1, 2, 0);
        printf("stage %d: %.4g GB (paper %.3g)\n", s, m.total / 1e9, paper_gb[s]);
        assert_true(fabs(m.total / 1e9 - paper_gb[s]) < 0.05);  // the paper rounds to 0.1 GB
        assert_true(fabs(m.total - (m.params + m.grads + m.optim)) < 1);
    }
    // fp32 Adam: weights 4, gradients 4, two moments 8 bytes per parameter, none sharded
    dt_zero_mem f = dt_zero_memory(1e6, 0, 8, 0, 2, 123);
    assert_true(f.params == 4e6 && f.grads == 4e6 && f.optim == 8e6 && f.total == 16e6 + 123);
    // SGD with momentum in mixed precision: K = 4 (master) + 4, stage 2 on 4 GPUs
    dt_zero_mem g = dt_zero_memory(1e6, 2, 4, 1, 1, 0);
    assert_true(g.params == 2e6 && g.grads == 0.5e6 && g.optim == 2e6);
    double ar = dt_zero_comm_elems(1e9, 0, 64);
    assert_true(fabs(ar - 2e9 * 63 / 64) < 1);
    assert_true(dt_zero_comm_elems(1e9, 1, 64) == ar && dt_zero_comm_elems(1e9, 2, 64) == ar);
    assert_true(fabs(dt_zero_comm_elems(1e9, 3, 64) / ar - 1.5) < 1e-12);
    assert_true(dt_zero_comm_elems(1e9, 3, 1) == 0);
}

static void test_stage_names(void **state) {
    (void)state;
    const char *names[] = {"none", "optimizer", "gradients", "parameters"};
    for (int s = 0; s < 4; s++) {
        int a = -1, b = -1;
        char digit[2] = {(char)('0' + s), 0};
        assert_int_equal(dt_zero_parse(names[s], &a), 0);
        assert_int_equal(dt_zero_parse(digit, &b), 0);
        assert_int_equal(a, s);
        assert_int_equal(b, s);
        assert_string_equal(dt_zero_name(s), names[s]);
    }
    int x;
    assert_int_equal(dt_zero_parse("4", &x), -1);
    assert_int_equal(dt_zero_parse("params", &x), -1);
    assert_int_equal(dt_zero_parse(NULL, &x), -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forward_flops_match_kaplan),
        cmocka_unit_test(test_zero_memory_matches_the_paper),
        cmocka_unit_test(test_stage_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
