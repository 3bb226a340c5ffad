// test_device_cpu_bn.c — the cpu device's batch normalisation (nn/device_cpu_nn.c): the
// training forward's statistics, output and unbiased running update against the definition
// in float64, and the backward against finite differences of a float64 loss, in its add and
// set forms; on fresh random shapes (Ioffe & Szegedy 2015, Algorithm 1; the running
// variance unbiased by m/(m-1) as in their Algorithm 2).
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reflayers.h"  // ref_bn_train: the batch statistics and output in float64
#include "testutil.h"

static uint64_t g_seed;

// ---- batch normalisation ----

static void test_bn_forward_train_stats_output_and_unbiased_running_update(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 24);
    dt_device *d = dt_device_cpu_create(2);
    for (int trial = 0; trial < 12; trial++) {
        int B = tu_int(&r, 1, 4), C = tu_int(&r, 1, 9), HW = tu_int(&r, 1, 300);
        if (trial == 0) B = 1, HW = 2;  // n = 2: unbiased factor 2
        if (trial == 1) B = 16, C = 64, HW = 196;  // parallel path
        size_t n = (size_t)B * C * HW;
        float *x = d->alloc(d, n * 4), *y = d->alloc(d, n * 4), *gm = d->alloc(d, C * 4);
        float *bt = d->alloc(d, C * 4), *rm = d->alloc(d, C * 4), *rv = d->alloc(d, C * 4);
        float *sm = d->alloc(d, C * 4), *si = d->alloc(d, C * 4);
        double *xd = malloc(n * 8), *yd = malloc(n * 8), *gd = malloc(C * 8), *bd = malloc(C * 8);
        double *md = malloc(C * 8), *vd = malloc(C * 8), *ref = malloc(C * 8);
        // a large common offset: a one-pass E[x^2]-E[x]^2 in float would fail here
        double offset = tu_uniform(&r, -50, 50);
        for (size_t i = 0; i < n; i++) x[i] = (float)(offset + tu_normal(&r) * 2), xd[i] = x[i];
        tu_fill_uniform(&r, gm, C, 0.5, 2);
        tu_fill_uniform(&r, bt, C, -1, 1);
        tu_fill_uniform(&r, rm, C, -1, 1);
        tu_fill_uniform(&r, rv, C, 0.5, 2);
        for (int c = 0; c < C; c++) gd[c] = gm[c], bd[c] = bt[c];
        double eps = 1e-5, mom = tu_uniform(&r, 0.05, 0.5);
        double *rm0 = malloc(C * 8), *rv0 = malloc(C * 8);
        for (int c = 0; c < C; c++) rm0[c] = rm[c], rv0[c] = rv[c];
        d->bn_forward_train(d, x, B, C, HW, gm, bt, (float)eps, (float)mom, rm, rv, sm, si, y);
        ref_bn_train(B, C, HW, xd, gd, bd, eps, yd, md, vd);
        tu_assert_close("bn y", y, yd, n, 1e-4, 1.0);
        tu_assert_close("bn save_mean", sm, md, C, 1e-6, 1.0);
        for (int c = 0; c < C; c++) ref[c] = 1.0 / sqrt(vd[c] + eps);
        tu_assert_close("bn save_invstd", si, ref, C, 1e-5, 1e-3);
        double nn = (double)B * HW;
        for (int c = 0; c < C; c++) ref[c] = (1 - mom) * rm0[c] + mom * md[c];
        tu_assert_close("bn running_mean", rm, ref, C, 1e-5, 1.0);
        for (int c = 0; c < C; c++) {
            double unb = nn > 1 ? vd[c] * nn / (nn - 1) : vd[c];
            ref[c] = (1 - mom) * rv0[c] + mom * unb;
        }
        tu_assert_close("bn running_var (unbiased)", rv, ref, C, 1e-5, 1.0);
        // eval with the updated running mean and a small running variance, so eps matters
        tu_fill_uniform(&r, rv, C, 1e-5, 1e-3);
        d->bn_forward_eval(d, x, B, C, HW, gm, bt, (float)eps, rm, rv, y);
        for (size_t i = 0; i < n; i++) {
            int c = (int)(i / HW % C);
            yd[i] = gd[c] * (xd[i] - rm[c]) / sqrt((double)rv[c] + eps) + bd[c];
        }
        tu_assert_close("bn eval", y, yd, n, 1e-4, 1.0);
        float *ptr[] = {x, y, gm, bt, rm, rv, sm, si};
        for (int i = 0; i < 8; i++) d->free(d, ptr[i]);
        double *dp[] = {xd, yd, gd, bd, md, vd, ref, rm0, rv0};
        for (int i = 0; i < 9; i++) free(dp[i]);
    }
    d->destroy(d);
}

// dx, dgamma, dbeta of L = sum(wt * y) by central differences of the double forward, and
// the primitive must ADD them into dx, dgamma, dbeta; bn_backward_set must WRITE dx (over
// NaN garbage) and still add into dgamma, dbeta.
static void test_bn_backward_matches_finite_differences_adds_and_set_overwrites(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(g_seed ^ 25);
    dt_device *d = dt_device_cpu_create(2);
    for (int trial = 0; trial < 6; trial++) {
        int B = tu_int(&r, 1, 3), C = tu_int(&r, 1, 4), HW = tu_int(&r, 1, 9);
        if (B * HW < 2) HW = 2;
        size_t n = (size_t)B * C * HW;
        float *x = d->alloc(d, n * 4), *y = d->alloc(d, n * 4), *dy = d->alloc(d, n * 4);
        float *dx = d->alloc(d, n * 4), *gm = d->alloc(d, C * 4), *bt = d->alloc(d, C * 4);
        float *sm = d->alloc(d, C * 4), *si = d->alloc(d, C * 4), *dg = d->alloc(d, C * 4);
        float *db = d->alloc(d, C * 4);
        double *xd = malloc(n * 8), *yd = malloc(n * 8), *gd = malloc(C * 8), *bd = malloc(C * 8);
        double *md = malloc(C * 8), *vd = malloc(C * 8);
        double *rdx = malloc(n * 8), *rdg = malloc(C * 8), *rdb = malloc(C * 8);
        tu_fill_uniform(&r, x, n, -2, 2);
        tu_fill_uniform(&r, dy, n, -1, 1);
        tu_fill_uniform(&r, dx, n, -1, 1);
        tu_fill_uniform(&r, gm, C, 0.5, 2);
        tu_fill_uniform(&r, bt, C, -1, 1);
        tu_fill_uniform(&r, dg, C, -1, 1);
        tu_fill_uniform(&r, db, C, -1, 1);
        double *dx0 = malloc(n * 8), dg0[4], db0[4];
        for (size_t i = 0; i < n; i++) xd[i] = x[i], rdx[i] = dx[i], dx0[i] = dx[i];
        for (int c = 0; c < C; c++) gd[c] = gm[c], bd[c] = bt[c], rdg[c] = dg[c], rdb[c] = db[c];
        for (int c = 0; c < C; c++) dg0[c] = dg[c], db0[c] = db[c];
        double eps = 1e-5, h = 1e-6;
        // L(x, gamma, beta) = sum dy*y
#define LOSS(out)                                                  \
    do {                                                           \
        ref_bn_train(B, C, HW, xd, gd, bd, eps, yd, md, vd);       \
        out = 0;                                                   \
        for (size_t k = 0; k < n; k++) out += (double)dy[k] * yd[k]; \
    } while (0)
        double lp, lm;
        for (size_t i = 0; i < n; i++) {
            double s = xd[i];
            xd[i] = s + h;
            LOSS(lp);
            xd[i] = s - h;
            LOSS(lm);
            xd[i] = s;
            rdx[i] += (lp - lm) / (2 * h);
        }
        for (int c = 0; c < C; c++) {
            double s = gd[c];
            gd[c] = s + h;
            LOSS(lp);
            gd[c] = s - h;
            LOSS(lm);
            gd[c] = s;
            rdg[c] += (lp - lm) / (2 * h);
            s = bd[c];
            bd[c] = s + h;
            LOSS(lp);
            bd[c] = s - h;
            LOSS(lm);
            bd[c] = s;
            rdb[c] += (lp - lm) / (2 * h);
        }
#undef LOSS
        d->bn_forward_train(d, x, B, C, HW, gm, bt, (float)eps, 0.1f, NULL, NULL, sm, si, y);
        d->bn_backward(d, dy, x, B, C, HW, gm, sm, si, dx, dg, db);
        tu_assert_close("bn dx", dx, rdx, n, 2e-3, 1.0);
        tu_assert_close("bn dgamma", dg, rdg, C, 1e-4, 1.0);
        tu_assert_close("bn dbeta", db, rdb, C, 1e-4, 1.0);
        // set: dx = the finite differences alone (rdx minus the dx it started from)
        float *dx2 = d->alloc(d, n * 4);
        for (size_t i = 0; i < n; i++) dx2[i] = NAN, rdx[i] -= dx0[i];
        for (int c = 0; c < C; c++) rdg[c] += rdg[c] - dg0[c], rdb[c] += rdb[c] - db0[c];
        d->bn_backward_set(d, dy, x, B, C, HW, gm, sm, si, dx2, dg, db);
        tu_assert_close("bn_backward_set dx", dx2, rdx, n, 2e-3, 1.0);
        tu_assert_close("bn_backward_set dgamma (adds)", dg, rdg, C, 1e-4, 1.0);
        tu_assert_close("bn_backward_set dbeta (adds)", db, rdb, C, 1e-4, 1.0);
        d->free(d, dx2);
        float *ptr[] = {x, y, dy, dx, gm, bt, sm, si, dg, db};
        for (int i = 0; i < 10; i++) d->free(d, ptr[i]);
        double *dp[] = {xd, yd, gd, bd, md, vd, rdx, rdg, rdb, dx0};
        for (int i = 0; i < 10; i++) free(dp[i]);
    }
    d->destroy(d);
}

int main(void) {
    g_seed = tu_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bn_forward_train_stats_output_and_unbiased_running_update),
        cmocka_unit_test(test_bn_backward_matches_finite_differences_adds_and_set_overwrites),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
