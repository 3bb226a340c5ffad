// testutil.c — see testutil.h.
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels.h"

uint64_t tu_seed(void) {
    const char *env = getenv("DT_TEST_SEED");
    uint64_t seed;
    if (env && *env) {
        seed = strtoull(env, NULL, 0);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec;
    }
    printf("# seed %llu (replay with DT_TEST_SEED=%llu)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    return seed;
}

tu_rng tu_rng_new(uint64_t seed) { return (tu_rng){dt_mix64(seed)}; }

static uint64_t next(tu_rng *r) {
    r->s += 0x9E3779B97F4A7C15ull;
    return dt_mix64(r->s);
}

double tu_uniform(tu_rng *r, double lo, double hi) {
    return lo + (hi - lo) * ((double)(next(r) >> 11) * (1.0 / 9007199254740992.0));
}

int tu_int(tu_rng *r, int lo, int hi) { return lo + (int)(next(r) % (uint64_t)(hi - lo + 1)); }

double tu_normal(tu_rng *r) {
    double u1 = tu_uniform(r, 1e-12, 1.0), u2 = tu_uniform(r, 0.0, 1.0);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

void tu_fill_uniform(tu_rng *r, float *x, size_t n, double lo, double hi) {
    for (size_t i = 0; i < n; i++) x[i] = (float)tu_uniform(r, lo, hi);
}

double tu_max_rel_err(const float *a, const double *b, size_t n, double floor) {
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double den = fabs(b[i]) > floor ? fabs(b[i]) : floor;
        double e = fabs((double)a[i] - b[i]) / den;
        if (!(e <= worst)) worst = e;  // NaN counts as worst
    }
    return worst;
}

void tu_assert_close(const char *what, const float *a, const double *b, size_t n, double tol,
                     double floor) {
    double e = tu_max_rel_err(a, b, n, floor);
    if (!(e <= tol)) {
        fail_msg("%s: max relative error %.3g exceeds tolerance %.3g (n=%zu)", what, e, tol, n);
    }
}

float *tu_dev_upload(dt_device *d, const float *host, size_t n) {
    float *p = d->alloc(d, n * sizeof(float));
    d->from_host(d, p, host, n * sizeof(float));
    return p;
}

void tu_dev_download(dt_device *d, float *host, const float *dev, size_t n) {
    d->to_host(d, host, dev, n * sizeof(float));
}

int tu_fixture_setup(void **state) {
    tu_fixture *f = calloc(1, sizeof *f);
    f->dev = dt_device_cpu_create(2);
    f->rng = tu_rng_new(tu_seed());
    *state = f;
    return 0;
}

int tu_fixture_teardown(void **state) {
    tu_fixture *f = *state;
    f->dev->destroy(f->dev);
    free(f);
    return 0;
}

// Directional derivative of loss along v (on vals), central differences with step h.
static double fd_along(double *vals, const double *v, size_t n, double h,
                       double (*loss)(void *ctx), void *ctx) {
    for (size_t i = 0; i < n; i++) vals[i] += h * v[i];
    double lp = loss(ctx);
    for (size_t i = 0; i < n; i++) vals[i] -= 2 * h * v[i];
    double lm = loss(ctx);
    for (size_t i = 0; i < n; i++) vals[i] += h * v[i];
    return (lp - lm) / (2 * h);
}

void tu_check_directions(tu_rng *r, double *vals, const float *g, size_t n,
                         double (*loss)(void *ctx), void *ctx, double tol, const char *what) {
    double gn = 0.0;
    for (size_t i = 0; i < n; i++) gn += (double)g[i] * g[i];
    gn = sqrt(gn);
    if (!(gn > 0.0)) fail_msg("%s: gradient is zero or not finite (%g)", what, gn);
    double *v = malloc(n * sizeof(double));
    for (int dir = 0, kinks = 0; dir < 2; dir++) {
        double vn = 0.0;
        for (size_t i = 0; i < n; i++) {
            v[i] = dir == 0 ? tu_normal(r) : (double)g[i];
            vn += v[i] * v[i];
        }
        vn = sqrt(vn);
        double an = 0.0;
        for (size_t i = 0; i < n; i++) {
            v[i] /= vn;
            an += (double)g[i] * v[i];
        }
        double fd = fd_along(vals, v, n, 1e-5, loss, ctx);
        double fd2 = fd_along(vals, v, n, 2.5e-6, loss, ctx);
        if (fabs(fd - fd2) > 1e-4 * gn) {
            if (dir == 0 && ++kinks < 8) {
                dir--;
                continue;
            }
            if (dir == 1) continue;  // the gradient's own direction cannot be redrawn
        }
        if (!(fabs(fd - an) <= tol * gn))
            fail_msg("%s, %s direction: backward gives %.8g, finite differences %.8g (|g| %.3g)",
                     what, dir == 0 ? "random" : "gradient", an, fd, gn);
    }
    free(v);
}
