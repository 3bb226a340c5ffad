// straggler.c — slow GPUs (straggler.h): parsing the spec, each rank's factor per step, and
// the expected maximum of P draws that the simulated penalty is checked against.
#include "straggler.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

static int parse_term(const char *t, const char *what, dt_straggler *s, dt_error *err) {
    char *end;
    if (strncmp(t, "cv:", 3) == 0) {
        double cv = strtod(t + 3, &end);
        if (end == t + 3 || *end || !(cv >= 0 && cv <= 2))
            return dt_fail(err, DT_EXIT_USAGE, "%s: '%s': expected cv:X with X a coefficient "
                           "of variation in [0, 2] (0.05: 5 %% step-to-step variability)", what, t);
        s->cv = cv;
        return 0;
    }
    int node = strncmp(t, "node:", 5) == 0;
    if (!node && strncmp(t, "rank:", 5) != 0)
        return dt_fail(err, DT_EXIT_USAGE, "%s: '%s': expected rank:R:F, node:N:F or cv:X "
                       "(e.g. node:3:1.3,cv:0.05)", what, t);
    long idx = strtol(t + 5, &end, 10);
    double f = 0;
    int ok = end != t + 5 && *end == ':' && idx >= 0 && idx < (1L << 30);
    if (ok) {
        const char *fs = end + 1;
        f = strtod(fs, &end);
        ok = end != fs && !*end && isfinite(f) && f > 0 && f <= 1000;
    }
    if (!ok)
        return dt_fail(err, DT_EXIT_USAGE, "%s: '%s': expected %s:INDEX:FACTOR with INDEX >= 0 "
                       "and FACTOR in (0, 1000] (1.5: 50 %% slower)", what, t,
                       node ? "node" : "rank");
    if (s->n_fixed == DT_STRAGGLER_MAX_FIXED)
        return dt_fail(err, DT_EXIT_USAGE, "%s: more than %d rank: and node: terms", what,
                       DT_STRAGGLER_MAX_FIXED);
    s->fixed[s->n_fixed].node = node;
    s->fixed[s->n_fixed].index = (int)idx;
    s->fixed[s->n_fixed].factor = f;
    s->n_fixed++;
    return 0;
}

int dt_straggler_parse(const char *spec, const char *what, dt_straggler *s, dt_error *err) {
    memset(s, 0, sizeof *s);
    if (!spec || !*spec || strcmp(spec, "none") == 0) return 0;
    char buf[512];
    if (strlen(spec) >= sizeof buf)
        return dt_fail(err, DT_EXIT_USAGE, "%s: longer than %zu characters", what, sizeof buf - 1);
    strcpy(buf, spec);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (parse_term(t, what, s, err)) return -1;
    return 0;
}

int dt_straggler_any(const dt_straggler *s) { return s->n_fixed > 0 || s->cv > 0; }

void dt_straggler_max_index(const dt_straggler *s, int *rank, int *node) {
    *rank = *node = -1;
    for (int i = 0; i < s->n_fixed; i++) {
        int *m = s->fixed[i].node ? node : rank;
        if (s->fixed[i].index > *m) *m = s->fixed[i].index;
    }
}

// A uniform in (0, 1] from a hash of (seed, rank, step, k): splitmix64's finaliser
// (nn/kernels.h), one round per word, as dt_aug_seed mixes (seed, epoch, index).
static double uniform(uint64_t seed, int rank, int step, int k) {
    uint64_t h = dt_mix64(seed ^ 0x7374726167676c72ull);  // "straggler"
    h = dt_mix64(h ^ (uint64_t)(uint32_t)rank);
    h = dt_mix64(h ^ (uint64_t)(uint32_t)step);
    h = dt_mix64(h ^ (uint64_t)k);
    return ((double)(h >> 11) + 1.0) * 0x1.0p-53;
}

// Lognormal of mean 1 and coefficient of variation cv: exp(mu + sigma z), sigma^2 =
// ln(1 + cv^2), mu = -sigma^2 / 2; z standard normal by Box-Muller.
static double lognormal(double cv, uint64_t seed, int rank, int step) {
    double s2 = log1p(cv * cv), sigma = sqrt(s2);
    double u1 = uniform(seed, rank, step, 0), u2 = uniform(seed, rank, step, 1);
    double z = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
    return exp(-s2 / 2 + sigma * z);
}

double dt_straggler_factor(const dt_straggler *s, uint64_t seed, int rank, int gpus_per_node,
                           int step) {
    double f = 1;
    int node = gpus_per_node > 0 ? rank / gpus_per_node : rank;
    for (int i = 0; i < s->n_fixed; i++)
        if (s->fixed[i].index == (s->fixed[i].node ? node : rank)) f *= s->fixed[i].factor;
    if (s->cv > 0) f *= lognormal(s->cv, seed, rank, step);
    return f;
}

// E[max] = integral over x > 0 of 1 - F(x)^p, in t = ln x: integral of (1 - F^p) e^t dt,
// F = Phi((t - mu) / sigma). Below mu - 12 sigma F^p is 0 and the integral is e^t's; Simpson's
// rule on [mu - 12 sigma, mu + 12 sigma] does the rest.
double dt_straggler_expected_max(double cv, int p) {
    if (cv <= 0 || p <= 1) return p >= 1 ? 1.0 : 0.0;
    double s2 = log1p(cv * cv), sigma = sqrt(s2), mu = -s2 / 2;
    double a = mu - 12 * sigma, b = mu + 12 * sigma;
    int n = 20000;  // even
    double h = (b - a) / n, sum = 0;
    for (int i = 0; i <= n; i++) {
        double t = a + i * h;
        double F = 0.5 * erfc(-(t - mu) / (sigma * sqrt(2.0)));
        double g = -expm1(p * log(F)) * exp(t);  // (1 - F^p) e^t; F = 0: e^t
        sum += g * (i == 0 || i == n ? 1 : (i % 2 ? 4 : 2));
    }
    return exp(a) + sum * h / 3;
}
