// cuda_check.c — the shared half of the cuda-vs-cpu test (cuda_check.h): the seed and the
// random stream, tensors on both devices, and the comparisons that print one line each.
// Not here: any check of a primitive (test_device_cuda.c, test_device_cuda_nn.c).
#include "cuda_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dt.h"
#include "kernels.h"

// ---- random inputs ----

uint64_t cc_seed(void) {
    const char *env = getenv("DT_SEED");
    uint64_t seed;
    if (env && *env) {
        seed = strtoull(env, NULL, 0);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = dt_mix64((uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec ^
                        ((uint64_t)getpid() << 32));
    }
    printf("# seed %llu (replay with DT_SEED=%llu)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    return seed;
}

uint64_t cc_next(cc_ctx *t) {
    t->rng += 0x9E3779B97F4A7C15ull;  // splitmix64 (Steele, Lea, Flood 2014)
    return dt_mix64(t->rng);
}

float cc_unif(cc_ctx *t, float lo, float hi) {
    double u = (double)(cc_next(t) >> 11) * (1.0 / 9007199254740992.0);
    return (float)(lo + (hi - lo) * u);
}

int cc_int(cc_ctx *t, int lo, int hi) {
    return lo + (int)(cc_next(t) % (uint64_t)(hi - lo + 1));
}

float *cc_rand(cc_ctx *t, size_t n, float lo, float hi) {
    float *x = mallocCheck((n ? n : 1) * sizeof(float));
    for (size_t i = 0; i < n; i++) x[i] = cc_unif(t, lo, hi);
    return x;
}

// ---- tensors on both devices ----

cc_buf cc_new(cc_ctx *t, dt_device *gd, const void *host, size_t bytes) {
    cc_buf b = {gd, NULL, NULL, bytes};
    size_t nb = bytes ? bytes : sizeof(float);
    b.c = t->cpu->alloc(t->cpu, nb);
    b.g = gd->alloc(gd, nb);
    if (host && bytes) {
        t->cpu->from_host(t->cpu, b.c, host, bytes);
        gd->from_host(gd, b.g, host, bytes);
    }
    return b;
}

void cc_free(cc_ctx *t, cc_buf *b) {
    t->cpu->free(t->cpu, b->c);
    b->gd->free(b->gd, b->g);
    b->c = b->g = NULL;
}

void *cc_host_copy(dt_device *d, const void *p, size_t bytes) {
    void *h = mallocCheck(bytes ? bytes : 1);
    d->to_host(d, h, p, bytes);
    return h;
}

void cc_fetch(const cc_buf *b, void **c, void **g) {
    *g = cc_host_copy(b->gd, b->g, b->bytes);  // to_host synchronises the cuda stream
    *c = mallocCheck(b->bytes ? b->bytes : 1);
    if (b->bytes) memcpy(*c, b->c, b->bytes);  // the cpu device's memory is host memory
}

// ---- the one line per check ----

static int report(cc_ctx *t, const char *name, int pass, double err, double tol,
                  const char *detail) {
    t->checks++;
    if (pass) {
        printf("ok   %s max_err=%.3g tol=%.3g\n", name, err, tol);
    } else {
        t->failed++;
        printf("FAIL %s max_err=%.3g tol=%.3g%s%s\n", name, err, tol, detail[0] ? " " : "",
               detail);
    }
    fflush(stdout);
    return pass;
}

static int same_float(float a, float b) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    uint32_t x, y;
    memcpy(&x, &a, 4);
    memcpy(&y, &b, 4);
    return x == y;
}

int cc_cmp_exact(cc_ctx *t, const char *name, const float *got, float *want, size_t n) {
    if (t->brk && n) {  // the neighbouring float (or 0 for NaN/Inf)
        float *w = &want[n / 2];
        *w = isfinite(*w) ? nextafterf(*w, INFINITY) : 0.0f;
    }
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        if (!same_float(got[i], want[i]) && bad++ == 0) first = i;
    }
    char detail[160] = "";
    if (bad)
        snprintf(detail, sizeof detail, "(%zu of %zu differ; first at %zu: got %.9g want %.9g)",
                 bad, n, first, got[first], want[first]);
    return report(t, name, bad == 0, (double)bad, 0.0, detail);
}

int cc_cmp_bytes(cc_ctx *t, const char *name, const void *got, void *want, size_t bytes) {
    const unsigned char *g = got;
    unsigned char *w = want;
    if (t->brk && bytes) w[bytes / 2] ^= 1;
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < bytes; i++) {
        if (g[i] != w[i] && bad++ == 0) first = i;
    }
    char detail[160] = "";
    if (bad)
        snprintf(detail, sizeof detail, "(%zu of %zu bytes differ; first at byte %zu: "
                 "got 0x%02x want 0x%02x)", bad, bytes, first, g[first], w[first]);
    return report(t, name, bad == 0, (double)bad, 0.0, detail);
}

// |got - want| / mag: 0 when equal (infinities too), infinite when mag is 0 or one side
// is NaN or infinite and the other is not
static double rel_err(float got, float want, double mag) {
    if (isnan(got) || isnan(want)) return isnan(got) && isnan(want) ? 0.0 : INFINITY;
    if (got == want) return 0.0;
    if (isinf(got) || isinf(want) || !(mag > 0.0)) return INFINITY;
    return fabs((double)got - (double)want) / mag;
}

int cc_cmp_close(cc_ctx *t, const char *name, const float *got, float *want,
                 const double *mag, size_t n, double tol) {
    if (t->brk && n) {  // well past the tolerance, and never absorbed by rounding
        size_t i = n / 2;
        double m = mag ? mag[i] : fabs(want[i]);
        double delta = fmax(fmax(4.0 * tol * m, 1e-3 * fabs(want[i])), 1e-20);
        want[i] = isfinite(want[i]) ? (float)(want[i] + delta) : 0.0f;
    }
    double worst = 0.0;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        double e = rel_err(got[i], want[i], mag ? mag[i] : fabs(want[i]));
        if (!(e <= worst)) worst = e, at = i;  // NaN errors cannot happen; keep the first
    }
    int pass = worst <= tol;
    char detail[200] = "";
    if (!pass)
        snprintf(detail, sizeof detail, "(worst at %zu of %zu: got %.9g want %.9g mag %.3g)",
                 at, n, got[at], want[at], mag ? mag[at] : fabs(want[at]));
    return report(t, name, pass, worst, tol, detail);
}

int cc_cmp_scalar(cc_ctx *t, const char *name, double got, double want, double mag,
                  double tol) {
    if (t->brk) want = isfinite(want) ? want + fmax(fmax(4.0 * tol * mag, 1e-3 * fabs(want)), 1.0)
                                      : 0.0;
    double e;
    if (isnan(got) || isnan(want)) {
        e = isnan(got) && isnan(want) ? 0.0 : INFINITY;
    } else if (got == want) {
        e = 0.0;
    } else {
        e = mag > 0.0 && isfinite(got) && isfinite(want) ? fabs(got - want) / mag : INFINITY;
    }
    char detail[120];
    snprintf(detail, sizeof detail, "(got %.17g want %.17g)", got, want);
    return report(t, name, e <= tol, e, tol, detail);
}

int cc_exact(cc_ctx *t, const char *name, const cc_buf *b) {
    void *c, *g;
    cc_fetch(b, &c, &g);
    int ok = cc_cmp_exact(t, name, g, c, b->bytes / sizeof(float));
    free(c);
    free(g);
    return ok;
}

int cc_bytes(cc_ctx *t, const char *name, const cc_buf *b) {
    void *c, *g;
    cc_fetch(b, &c, &g);
    int ok = cc_cmp_bytes(t, name, g, c, b->bytes);
    free(c);
    free(g);
    return ok;
}

int cc_close(cc_ctx *t, const char *name, const cc_buf *b, const double *mag, double tol) {
    void *c, *g;
    cc_fetch(b, &c, &g);
    int ok = cc_cmp_close(t, name, g, c, mag, b->bytes / sizeof(float), tol);
    free(c);
    free(g);
    return ok;
}
