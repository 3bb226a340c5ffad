// testutil.h — what every unit test shares: fresh random inputs (a seed from the clock,
// printed so a failure can be replayed with DT_TEST_SEED=...), float64 comparison helpers,
// and a cpu device. Tests compare against an independent reference (float64 loops, finite
// differences, closed forms) with a stated tolerance.
#ifndef DT_TESTUTIL_H
#define DT_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "device.h"

// The test's seed: DT_TEST_SEED if set, else from the clock; printed once.
uint64_t tu_seed(void);
// A small deterministic generator (splitmix64) for test inputs.
typedef struct { uint64_t s; } tu_rng;
tu_rng tu_rng_new(uint64_t seed);
double tu_uniform(tu_rng *r, double lo, double hi);
int tu_int(tu_rng *r, int lo, int hi);  // inclusive
double tu_normal(tu_rng *r);
void tu_fill_uniform(tu_rng *r, float *x, size_t n, double lo, double hi);

// max |a-b| / max(|b|, floor) over n elements, a float, b double
double tu_max_rel_err(const float *a, const double *b, size_t n, double floor);
// Fails the test (with a message naming what) if the error exceeds tol.
void tu_assert_close(const char *what, const float *a, const double *b, size_t n, double tol,
                     double floor);

// A gradient g (fp32, n elements) of a float64 reference loss(ctx), a function of `vals`
// (n doubles the loss reads), checked along a random unit direction and along g/|g|:
// |g·v - central difference of loss along v| <= tol·|g|, or the test fails naming `what`.
// A ReLU or max-pool kink within the step makes central differences wrong: two step sizes
// (1e-5, 2.5e-6) then disagree, and the random direction is drawn again (at most 8 times);
// the gradient's own direction is skipped where it meets one.
void tu_check_directions(tu_rng *r, double *vals, const float *g, size_t n,
                         double (*loss)(void *ctx), void *ctx, double tol, const char *what);

// The group fixture most tests share: a cpu device with 2 threads and a generator seeded
// from tu_seed(). Use with cmocka_run_group_tests(tests, tu_fixture_setup, tu_fixture_teardown).
typedef struct {
    dt_device *dev;
    tu_rng rng;
} tu_fixture;
int tu_fixture_setup(void **state);
int tu_fixture_teardown(void **state);

// host <-> device helpers
float *tu_dev_upload(dt_device *d, const float *host, size_t n);
void tu_dev_download(dt_device *d, float *host, const float *dev, size_t n);

#endif
