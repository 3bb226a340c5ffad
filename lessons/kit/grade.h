// grade.h — what every lesson's grader shares: one line per check ("PASS name details" or
// "FAIL name: hint"), fresh random inputs with the seed printed (DT_LESSON_SEED=N replays
// a run), and float64 comparisons that say which element differed, expected vs got.
// Header-only, for the graders in lessons/NN-topic/ (not part of nn/).
#ifndef DT_LESSON_GRADE_H
#define DT_LESSON_GRADE_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    int passed, failed;
    int quiet;          // 1 on MPI ranks other than 0: they count but do not print
    uint64_t seed;
    int stop;           // the check LESSON_STOP_AT_FAIL names has failed (grade_stopped)
} grade_t;

// The run's seed: DT_LESSON_SEED if set, else fresh from the clock; printed so that a
// failure can be replayed.
static inline grade_t grade_begin(const char *lesson, int quiet) {
    grade_t g = {0, 0, quiet, 0, 0};
    const char *s = getenv("DT_LESSON_SEED");
    if (s && *s) {
        g.seed = strtoull(s, NULL, 10);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        g.seed = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec;
    }
    if (!quiet) printf("# lesson %s, seed %llu (replay: DT_LESSON_SEED=%llu)\n", lesson,
                       (unsigned long long)g.seed, (unsigned long long)g.seed);
    return g;
}

// One check: ok, the check's name, and a hint (printf format) shown when it failed or,
// after "PASS name", as the details.
static inline int grade_check(grade_t *g, int ok, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline int grade_check(grade_t *g, int ok, const char *name, const char *fmt, ...) {
    if (ok) g->passed++;
    else g->failed++;
    const char *stop = getenv("LESSON_STOP_AT_FAIL");
    if (!ok && stop && !strcmp(stop, name)) g->stop = 1;
    if (g->quiet) return ok;
    printf("%s %s%s", ok ? "PASS" : "FAIL", name, ok ? " " : ": ");
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    return ok;
}

// 1 once the check LESSON_STOP_AT_FAIL names (CI's mutant of it: lessons/kit/run_grader.sh)
// has failed: a grader leaves out its costly checks after that, saying so once.
static inline int grade_stopped(grade_t *g) {
    if (g->stop == 1 && !g->quiet)
        printf("# %s failed: the checks after it are left out (LESSON_STOP_AT_FAIL)\n",
               getenv("LESSON_STOP_AT_FAIL"));
    if (g->stop) g->stop = 2;
    return g->stop != 0;
}

// The grader's exit code: 0 only when every check passed.
static inline int grade_end(const grade_t *g) {
    if (!g->quiet) printf("# %d of %d checks passed\n", g->passed, g->passed + g->failed);
    return g->failed || !g->passed ? 1 : 0;
}

// xorshift64*: the inputs' generator (seeded per purpose: seed ^ a constant)
static inline uint64_t grade_next(uint64_t *s) {
    *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}
static inline double grade_uniform(uint64_t *s) {  // in [-1, 1)
    return (double)(grade_next(s) >> 11) * 0x1.0p-52 - 1.0;
}
static inline int grade_int(uint64_t *s, int lo, int hi) {  // in [lo, hi]
    return lo + (int)(grade_next(s) % (uint64_t)(hi - lo + 1));
}

// The worst element of got against want (float64), relative to scale + |want|: its index
// in *at, the error as the return value. NaN anywhere is the worst.
static inline double grade_worst(const float *got, const double *want, size_t n, double scale,
                                 size_t *at) {
    double worst = 0;
    *at = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - want[i]) / (scale + fabs(want[i]));
        if (e != e) e = INFINITY;
        if (e > worst) worst = e, *at = i;
    }
    return worst;
}

// The first element of an allreduce's result (the same on every rank, res) that is not the
// sum over the p ranks' inputs input(seed, rank, i): the float64 sum, within the rounding of
// p-1 float additions (1e-6·p·Σ|x|; a wrong chunk is off by whole inputs). Its index, or -1;
// *want: that sum. So that a check of "the same bits on every rank" cannot pass on ranks
// that agree on a wrong result.
static inline long grade_wrong_sum(const float *res, size_t n, int p,
                                   float (*input)(uint64_t, int, size_t), uint64_t seed,
                                   double *want) {
    for (size_t i = 0; i < n; i++) {
        double sum = 0, mag = 0;
        for (int q = 0; q < p; q++) {
            double v = input(seed, q, i);
            sum += v, mag += fabs(v);
        }
        if (!(fabs((double)res[i] - sum) <= 1e-6 * p * mag + 1e-30)) {
            *want = sum;
            return (long)i;
        }
    }
    return -1;
}

#endif
