// test_kernels_gelu.c — GELU's tanh form and its derivative (nn/kernels.h dt_tanh, dt_gelu,
// dt_gelu_grad) against float64: tanh(u) from libm's tanh in double, GELU
// 0.5 x (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3))) and its derivative by the closed form in
// double. Fresh random inputs over [-12, 12], near 0 (where (1 - e)/(1 + e) cancels) and at
// the extremes (where exp(-2|u|) underflows). Bounds: tanh within 1.5e-7 absolute (measured
// 9e-8: about one ulp of 1), GELU and its derivative within 3e-7 (1 + |x|) (float rounding of
// the cubic and the product). Inputs from tu_seed().
#include <math.h>
#include <stdio.h>

#include "kernels.h"
#include "testutil.h"

static double ref_tanh_arg(double x) { return sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x); }

static void test_tanh_gelu_and_its_derivative_match_float64(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    double worst[3] = {0, 0, 0};
    for (int i = 0; i < 200000; i++) {
        double range = i % 4 == 0 ? 1e-3 : i % 4 == 1 ? 1.0 : 12.0;
        float x = (float)tu_uniform(&r, -range, range);
        if (i == 0) x = 0.0f;
        if (i == 1) x = 60.0f;
        if (i == 2) x = -60.0f;
        double xd = x, u = ref_tanh_arg(xd), th = tanh(u);
        double e0 = fabs((double)dt_tanh(x) - tanh(xd));
        double g = 0.5 * xd * (1.0 + th);
        double dg = 0.5 * (1.0 + th) +
                    0.5 * xd * (1.0 - th * th) * sqrt(2.0 / M_PI) * (1.0 + 3 * 0.044715 * xd * xd);
        double e1 = fabs((double)dt_gelu(x) - g) / (1.0 + fabs(xd));
        double e2 = fabs((double)dt_gelu_grad(x) - dg) / (1.0 + fabs(xd));
        if (e0 > worst[0]) worst[0] = e0;
        if (e1 > worst[1]) worst[1] = e1;
        if (e2 > worst[2]) worst[2] = e2;
        if (e0 > 1.5e-7 || e1 > 3e-7 || e2 > 3e-7)
            fail_msg("x = %.9g: tanh %.9g (float64 %.9g), gelu %.9g (%.9g), gelu' %.9g (%.9g)",
                     (double)x, (double)dt_tanh(x), tanh(xd), (double)dt_gelu(x), g,
                     (double)dt_gelu_grad(x), dg);
    }
    printf("#   worst: tanh %.3g, gelu %.3g (1 + |x|), gelu' %.3g (1 + |x|)\n", worst[0],
           worst[1], worst[2]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tanh_gelu_and_its_derivative_match_float64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
