// grader.h — what lesson 01's grader files share: a check that is evaluated on several
// random cases and prints one line (the first failing case's hint, or how many cases
// passed), float64 buffers, and the comparison that names the worst element.
#ifndef LESSON01_GRADER_H
#define LESSON01_GRADER_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kit/grade.h"
#include "layers01.h"

// The tolerances, relative to |reference| + 1% of the largest reference element (as
// tests/unit/test_layers_gradcheck.c): fp32 forward against float64, fp32 gradients against
// float64 central differences.
#define TOL_FWD 1e-4
#define TOL_GRAD 5e-4
#define FD_H 1e-6

// A value the grader leaves in an output before calling you: seeing it back means an entry
// was never written.
#define STALE (-777.0f)

// One check over several cases: fails on its first failing case, whose hint it keeps.
typedef struct {
    const char *name;
    int cases, failed;
    double worst;  // the largest relative error seen
    char hint[640];
} check_acc;

static inline check_acc acc_new(const char *name) {
    check_acc a;
    memset(&a, 0, sizeof a);
    a.name = name;
    return a;
}

// Records one case: ok, its error, and (when it fails, for the first failure only) a hint.
static inline void acc_case(check_acc *a, int ok, double err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline void acc_case(check_acc *a, int ok, double err, const char *fmt, ...) {
    a->cases++;
    if (err > a->worst || err != err) a->worst = err;
    if (ok) return;
    if (!a->failed++) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(a->hint, sizeof a->hint, fmt, ap);
        va_end(ap);
    }
}

// Prints the check's one line.
static inline int acc_report(grade_t *g, const check_acc *a, const char *what) {
    if (a->failed)
        return grade_check(g, 0, a->name, "%s (%d of %d cases failed)", a->hint, a->failed,
                           a->cases);
    return grade_check(g, a->cases > 0, a->name, "%d cases (%s), worst relative error %.1e",
                       a->cases, what, a->worst);
}

static inline double *dalloc(size_t n) {
    double *p = calloc(n ? n : 1, sizeof(double));
    if (!p) abort();
    return p;
}
static inline float *falloc(size_t n) {
    float *p = calloc(n ? n : 1, sizeof(float));
    if (!p) abort();
    return p;
}
static inline void fill_uniform(uint64_t *r, float *x, size_t n, double lo, double hi) {
    for (size_t i = 0; i < n; i++) x[i] = (float)(lo + (hi - lo) * 0.5 * (grade_uniform(r) + 1));
}
static inline void fill_value(float *x, size_t n, float v) {
    for (size_t i = 0; i < n; i++) x[i] = v;
}
static inline void to_double(const float *x, double *y, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = x[i];
}
static inline double max_abs(const double *v, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++)
        if (fabs(v[i]) > m) m = fabs(v[i]);
    return m;
}

// The element index i of a tensor with trailing dims d1, d2, d3 as "[a,b,c,d]"; a trailing
// dim of 0 is left out ("[a,b,c]" for d3 = 0, "[a,b]" for d2 = d3 = 0, "[a]" for all 0).
#define WHERE_LEN 96  // where4's buffer: room for four 20-digit indices
static inline const char *where4(char *buf, size_t i, int d1, int d2, int d3) {
    if (!d1) {  // a vector
        snprintf(buf, WHERE_LEN, "[%zu]", i);
        return buf;
    }
    size_t e2 = d2 ? (size_t)d2 : 1, e3 = d3 ? (size_t)d3 : 1, plane = (size_t)d1 * e2 * e3;
    size_t a = i / plane, r = i % plane;
    if (!d2)
        snprintf(buf, WHERE_LEN, "[%zu,%zu]", a, r);
    else if (!d3)
        snprintf(buf, WHERE_LEN, "[%zu,%zu,%zu]", a, r / e2, r % e2);
    else
        snprintf(buf, WHERE_LEN, "[%zu,%zu,%zu,%zu]", a, r / (e2 * e3), r / e3 % e2, r % e3);
    return buf;
}

// got (fp32) against want (float64), element by element; the error of element i is
//   |got - want| / (|want| + 1% of max|want| + 5% of mag[i])
// where mag[i] (mag NULL: 0) is the sum of the absolute values of the terms that make
// want[i]. fp32 rounds those terms, so a result that is a small difference of large terms
// (a bias gradient that sums to almost 0, batch norm's dx for n = 2, the loss of a
// confident row) carries an error of the terms' size, not of its own; a missing or wrong
// term still shows (one term of m is about mag/m). ok when the worst error is within tol;
// *at is the worst element (a NaN is the worst), *err its error.
static inline int close_enough(const float *got, const double *want, const double *mag,
                               size_t n, double tol, size_t *at, double *err) {
    double scale = 0.01 * max_abs(want, n) + 1e-30;
    *at = 0, *err = 0;
    for (size_t i = 0; i < n; i++) {
        double den = scale + fabs(want[i]) + (mag ? 0.05 * mag[i] : 0);
        double e = fabs((double)got[i] - want[i]) / den;
        if (e != e) e = INFINITY;
        if (e > *err) *err = e, *at = i;
    }
    return *err <= tol;
}

// What a wrong value looks like to the student.
static inline const char *got_note(float got) {
    if (got == STALE) return " (never written: that is the stale value the grader left there)";
    if (got == 0.0f) return " (zero: not computed?)";
    if (got != got) return " (NaN)";
    return "";
}

// The "backward ADDS" contract, one tensor: the output held pre[] before the call, g0[] is
// what the same call wrote into zeros, after[] what it left on top of pre[]: after must be
// pre + g0. A call that wrote nothing into zeros fails too (nothing to add is no proof).
static inline void adds_case(check_acc *a, const char *fn, const char *tensor,
                             const char *what, const float *pre, const float *g0,
                             const float *after, size_t n) {
    double *want = calloc(n ? n : 1, sizeof(double)), *mag = calloc(n ? n : 1, sizeof(double));
    if (!want || !mag) abort();
    double g0max = 0;
    for (size_t i = 0; i < n; i++) {
        want[i] = (double)pre[i] + g0[i];
        mag[i] = fabs(pre[i]) + fabs(g0[i]);
        if (fabs(g0[i]) > g0max) g0max = fabs(g0[i]);
    }
    size_t at;
    double err;
    int ok = close_enough(after, want, mag, n, 1e-3, &at, &err);
    if (g0max == 0.0) {
        acc_case(a, 0, INFINITY, "%s: %s wrote nothing into %s (all zeros after the call)",
                 what, fn, tensor);
    } else {
        acc_case(a, ok, err,
                 "%s: %s must ADD into %s: element %zu held %.6g before the call and the "
                 "gradient is %.6g, so expected %.6g, got %.6g%s",
                 what, fn, tensor, at, pre[at], g0[at], want[at], after[at],
                 (float)after[at] == g0[at] ? " (overwritten)" : "");
    }
    free(want), free(mag);
}

// The parts of the grader (grader_conv.c, grader_bn_xent.c): each runs its checks on
// fresh random cases from the seed and prints one line per check.
// adds: the shared check backward_adds_into_its_outputs, which all three feed.
void grade_conv(grade_t *g, dt_device *d, check_acc *adds);
void grade_bn(grade_t *g, dt_device *d, check_acc *adds);
void grade_xent(grade_t *g, check_acc *adds);
// --time: the student's im2col, gemm and col2im on ResNet-50 layer shapes (grader_time.c,
// run by the subject, subject01.c, where the student's code is)
int time_conv(dt_device *d, int argc, char **argv);
// The grader's --time: runs the subject with the same arguments in its place (remote01.c)
int time_conv_exec(int argc, char **argv);

#endif
