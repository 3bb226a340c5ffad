// goodput.c — failures, checkpoints and goodput (goodput.h): the closed forms and the
// Monte-Carlo that checks them. docs/formulas.md, "Failures, checkpoints, goodput", has the
// derivations.
#include <math.h>
#include <stddef.h>

#include "goodput.h"

// A failure process this fast never lets a segment finish: the expectation is e^{X/M}
// attempts, so beyond this ratio the answer is "never" rather than a number.
#define DT_GOODPUT_MAX_RATIO 40.0

// The expected time to complete x seconds of uninterrupted work, a failure costing the
// restart r each time (failures during the restart start it over): M e^{r/M} (e^{x/M} - 1)
// (Daly 2006, "A higher order estimate of the optimum checkpoint interval for restart
// dumps", his expected segment time with restarts). x for M = inf.
static double segment_time(double x, double r, double m) {
    if (isinf(m)) return x;
    if (x / m > DT_GOODPUT_MAX_RATIO || r / m > DT_GOODPUT_MAX_RATIO) return INFINITY;
    return m * exp(r / m) * expm1(x / m);
}

// The run's segments: n_ckpt of `interval` seconds each followed by a checkpoint, then the
// last one, of `last` seconds in (0, interval], with none after it (the run ends).
static void segments(const dt_goodput_in *in, double *n_ckpt, double *last) {
    double n = ceil(in->work_s / in->interval_s - 1e-9);
    if (n < 1) n = 1;
    *n_ckpt = n - 1;
    *last = in->work_s - (n - 1) * in->interval_s;
}

// Training stands still per checkpoint: the stall, and asynchronously also the wait for the
// previous write when it outlasts a segment (one background writer: a snapshot waits for it,
// as an async save waits on the previous one's future), save - interval
static double ckpt_stall(const dt_goodput_in *in) {
    return in->stall_s + (in->async ? fmax(0.0, in->save_s - in->interval_s) : 0.0);
}

static dt_goodput finish(const dt_goodput_in *in, double wall, double n_ckpt) {
    dt_goodput g;
    g.wall_s = wall;
    g.ckpt_s = n_ckpt * ckpt_stall(in);
    g.failures = isinf(in->mtbf_s) ? 0 : wall / in->mtbf_s;  // Wald: failures arrive at 1/M
    g.lost_s = wall - in->work_s - g.ckpt_s;
    g.goodput = isfinite(wall) && wall > 0 ? in->work_s / wall : 0;
    return g;
}

// Asynchronous checkpoints, to first order in X/M: a failure costs the restart, half a segment
// X = interval + stall (+ the wait for the writer, ckpt_stall) on average, and the segment
// before it when it strikes within save_s of the snapshot (its write not yet on storage):
// probability min(save, X) / X. The wall time W solves W = (work + checkpoints' stalls) +
// (W / M) (cost of one failure).
static double async_wall(const dt_goodput_in *in, double n_ckpt) {
    double busy = in->work_s + n_ckpt * ckpt_stall(in);
    if (isinf(in->mtbf_s)) return busy;
    double x = in->interval_s + ckpt_stall(in);
    double per_failure = in->restart_s + x / 2 + in->interval_s * fmin(in->save_s, x) / x;
    double denom = 1 - per_failure / in->mtbf_s;
    return denom > 0 ? busy / denom : INFINITY;
}

dt_goodput dt_goodput_expected(const dt_goodput_in *in) {
    double n_ckpt, last;
    segments(in, &n_ckpt, &last);
    double wall;
    if (in->async) {
        wall = async_wall(in, n_ckpt);
    } else {
        double full = segment_time(in->interval_s + in->stall_s, in->restart_s, in->mtbf_s);
        wall = n_ckpt * full + segment_time(last, in->restart_s, in->mtbf_s);
    }
    return finish(in, wall, n_ckpt);
}

// ---- Monte-Carlo ----

// SplitMix64 (Steele, Lea & Flood 2014): a small counter-based generator, state in the caller.
static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// The time to the next failure: exponential of mean m (memoryless, so drawn afresh whenever
// an attempt starts).
static double next_failure(uint64_t *s, double m) {
    if (isinf(m)) return INFINITY;
    double u = ((double)(splitmix64(s) >> 11) + 1.0) * 0x1.0p-53;  // (0, 1]
    return -m * log(u);
}

// One restart, started over by every failure during it. Returns its duration.
static double restart(const dt_goodput_in *in, uint64_t *s, double *failures) {
    double t = 0;
    for (;;) {
        double f = next_failure(s, in->mtbf_s);
        if (f >= in->restart_s) return t + in->restart_s;
        t += f;
        *failures += 1;
    }
}

// One whole run. The work level on storage (`durable`) is what a failure rolls back to; an
// asynchronous snapshot reaches storage save_s after its stall (blocking: at once). One
// background writer: a snapshot waits until the previous one is on storage.
static double one_run(const dt_goodput_in *in, uint64_t *s, double *failures) {
    double t = 0, done = 0, durable = 0;
    double pending = -1, pending_at = 0;  // a snapshot's level and when it is on storage
    double save = in->async ? in->save_s : 0;
    while (done < in->work_s * (1 - 1e-12)) {
        double step = fmin(in->interval_s, in->work_s - done);
        int last = done + step >= in->work_s * (1 - 1e-12);
        double wait = !last && pending >= 0 ? fmax(0.0, pending_at - (t + step)) : 0.0;
        double x = step + (last ? 0 : wait + in->stall_s);
        double f = next_failure(s, in->mtbf_s);
        if (f >= x) {
            t += x;
            done += step;
            if (pending >= 0 && pending_at <= t) durable = pending;
            if (!last) pending = done, pending_at = t + save;
            continue;
        }
        t += f;
        *failures += 1;
        if (pending >= 0 && pending_at <= t) durable = pending;
        pending = -1;
        done = durable;
        t += restart(in, s, failures);
    }
    return t;
}

dt_goodput dt_goodput_monte_carlo(const dt_goodput_in *in, int trials, uint64_t seed,
                                  double *wall_ci_s) {
    double n_ckpt, last;
    segments(in, &n_ckpt, &last);
    double x = in->interval_s + in->stall_s;
    if (trials < 1 || (isfinite(in->mtbf_s) && (x / in->mtbf_s > DT_GOODPUT_MAX_RATIO ||
                                                 in->restart_s / in->mtbf_s > DT_GOODPUT_MAX_RATIO))) {
        if (wall_ci_s) *wall_ci_s = INFINITY;
        return finish(in, INFINITY, n_ckpt);
    }
    double mean = 0, m2 = 0, fails = 0;  // Welford's running mean and sum of squares
    for (int i = 0; i < trials; i++) {
        uint64_t s = seed ^ (0xD1B54A32D192ED03ull * (uint64_t)(i + 1));  // one stream a trial
        double w = one_run(in, &s, &fails);
        double d = w - mean;
        mean += d / (i + 1);
        m2 += d * (w - mean);
    }
    double var = trials > 1 ? m2 / (trials - 1) : 0;
    if (wall_ci_s) *wall_ci_s = 1.96 * sqrt(var / trials);
    dt_goodput g = finish(in, mean, n_ckpt);
    g.failures = fails / trials;
    return g;
}

// ---- the best interval ----

// The expected wall time per second of work with checkpoints every `tau` (the run taken as
// whole segments): what the interval trades, checkpoints' stalls against lost work.
static double per_work(const dt_goodput_in *in, double tau) {
    dt_goodput_in one = *in;
    one.interval_s = tau;
    one.work_s = tau;
    if (one.async) return async_wall(&one, 1) / tau;  // one segment and its stall
    return segment_time(tau + one.stall_s, one.restart_s, one.mtbf_s) / tau;
}

double dt_goodput_best_interval(const dt_goodput_in *in) {
    if (isinf(in->mtbf_s)) return in->work_s;  // nothing fails: one segment, no checkpoint
    // golden-section search on log(tau): per_work is unimodal (stalls fall as 1/tau, lost
    // work grows with tau)
    double lo = log(fmax(1e-3, 1e-6 * in->mtbf_s)), hi = log(fmax(in->work_s, 1e-3));
    const double phi = 0.6180339887498949;
    double a = hi - phi * (hi - lo), b = lo + phi * (hi - lo);
    double fa = per_work(in, exp(a)), fb = per_work(in, exp(b));
    for (int i = 0; i < 200 && hi - lo > 1e-9; i++) {
        if (fa <= fb) {
            hi = b, b = a, fb = fa;
            a = hi - phi * (hi - lo);
            fa = per_work(in, exp(a));
        } else {
            lo = a, a = b, fa = fb;
            b = lo + phi * (hi - lo);
            fb = per_work(in, exp(b));
        }
    }
    return exp((lo + hi) / 2);
}

// Young 1974, "A first order approximation to the optimum checkpoint interval": sqrt(2 C M).
double dt_goodput_young_interval(double stall_s, double mtbf_s) {
    return sqrt(2 * stall_s * mtbf_s);
}

// Daly 2006's higher-order estimate: sqrt(2 C M) [1 + sqrt(C / 2M) / 3 + (C / 2M) / 9] - C
// for C < 2M, else M.
double dt_goodput_daly_interval(double stall_s, double mtbf_s) {
    if (stall_s >= 2 * mtbf_s) return mtbf_s;
    double q = stall_s / (2 * mtbf_s);
    return sqrt(2 * stall_s * mtbf_s) * (1 + sqrt(q) / 3 + q / 9) - stall_s;
}
