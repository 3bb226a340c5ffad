// grader.c — lesson 09's grader: the student's half.c against references computed here in
// float64 from the IEEE 754 binary16 definition (value = (-1)^s x 2^(e-15) x (1 + m/1024),
// subnormals m x 2^-24), not from any conversion code:
//  - from_half on every one of the 65,536 bit patterns, bit for bit;
//  - to_half: every half's value back to itself, every midpoint between neighbours to the
//    even one, random floats across and beyond the range to the nearest half (found by
//    binary search in the sorted table of halves), overflow, subnormals, signed zeros, NaN;
//  - scaler_step against a reference state machine (overflow skips and halves, never below
//    1; S doubles after exactly `interval` clean steps), on random sequences;
//  - wire_pack + wire_accumulate: P ranks' fp16 gradients summed in fp32, against float64,
//    writing nothing past n.
// Fresh random inputs each run from the printed seed (DT_LESSON_SEED=N replays it).
// `grader --instructor` (instructor/grade.sh, not in the handout) runs the same checks on
// what the public run does not try: every one of the 16,777,214 NaN bit patterns (public:
// five), a sweep over all 2^32 floats in steps of 257 bit patterns, every exponent (public:
// 400,000 drawn from 2^-30 .. 2^17), the loss scaler at PyTorch GradScaler's defaults (S from
// 65536, interval 2000) over 200,000 steps, and the wire sum of 64 ranks' gradients.
// The grader is split (lessons/kit/subject.h): half.c runs in a process of its own
// (subject09.c); the checks that call a function thousands of times hand it a whole array
// (to_half_each, from_half_each, scaler_steps: remote.c, one request per million), the
// others call remote.c's stubs of the student's own functions.
#include <math.h>
#include <string.h>

#include "../kit/grade.h"
#include "half.h"
#include "subject09.h"

static int instructor;  // --instructor: the cases above (set once in main)

#define NFIN 0x7c00  // positive finite halves 0x0000 .. 0x7bff; 0x7c00 is +Inf

static double ref_decode(uint16_t h) {
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return s ? -v : v;
}

// The positive halves in order, +Inf last (its value 65536 makes 65520 the tie that rounds
// to it: Inf's code is even, 65504's odd).
static double table[NFIN + 1];

static void make_table(void) {
    for (int k = 0; k < NFIN; k++) table[k] = ref_decode((uint16_t)k);
    table[NFIN] = 65536.0;
}

// The nearest half to finite v, ties to the even code (the code's last bit is the
// mantissa's); NaN and Inf are handled by the callers.
static uint16_t ref_encode(double v) {
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    double a = fabs(v);
    if (a >= table[NFIN]) return sign | 0x7c00;
    int lo = 0, hi = NFIN;  // table[lo] <= a < table[hi]
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (table[mid] <= a) lo = mid;
        else hi = mid;
    }
    double dl = a - table[lo], dh = table[hi] - a;
    int k = dl < dh ? lo : dh < dl ? hi : (lo % 2 == 0 ? lo : hi);
    return (uint16_t)(sign | k);
}

static float bits_to_float(uint32_t b) {
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static void check_from_half(grade_t *g) {
    static uint16_t codes[65536];
    static float vals[65536];
    for (int h = 0; h < 65536; h++) codes[h] = (uint16_t)h;
    from_half_each(codes, vals, 65536);
    for (int h = 0; h < 65536; h++) {
        float got = vals[h];
        double want = ref_decode((uint16_t)h);
        int ok = isnan(want) ? isnan(got) != 0 : (double)got == want && !signbit(got) == !signbit(want);
        if (!ok) {
            grade_check(g, 0, "from_half_all_65536_exact", "from_half(0x%04x) = %.9g, expected %.9g",
                        h, (double)got, want);
            return;
        }
    }
    grade_check(g, 1, "from_half_all_65536_exact", "every bit pattern, bit for bit");
}

static void check_round_trip(grade_t *g) {
    static float x[65536];
    static uint16_t code[65536], got[65536];
    size_t n = 0;
    for (int h = 0; h < 65536; h++) {
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) continue;  // NaNs: their own check
        x[n] = (float)ref_decode((uint16_t)h), code[n++] = (uint16_t)h;
    }
    to_half_each(x, got, n);
    for (size_t i = 0; i < n; i++) {
        int h = code[i];
        if (got[i] != h) {
            grade_check(g, 0, "to_half_round_trips_every_half", "to_half(%.9g) = 0x%04x, expected "
                        "0x%04x (the value IS that half)", ref_decode((uint16_t)h), got[i], h);
            return;
        }
    }
    grade_check(g, 1, "to_half_round_trips_every_half", "63,490 values, Inf and signed zeros");
}

static void check_ties(grade_t *g) {
    static float mids[2 * NFIN];
    static uint16_t gots[2 * NFIN];
    for (int k = 0; k < NFIN; k++)  // exact in float: neighbours have 11 significant bits,
        for (int s = 0; s < 2; s++)  // their midpoint 12
            mids[2 * k + s] = (float)((table[k] + table[k + 1]) / 2) * (s ? -1.0f : 1.0f);
    to_half_each(mids, gots, 2 * NFIN);
    for (int k = 0; k < NFIN; k++)
        for (int s = 0; s < 2; s++) {
            float mid = mids[2 * k + s];
            uint16_t want = (uint16_t)((s ? 0x8000 : 0) | (k % 2 == 0 ? k : k + 1));
            uint16_t got = gots[2 * k + s];
            if (got != want) {
                grade_check(g, 0, "to_half_ties_to_even", "to_half(%.9g), halfway between 0x%04x "
                            "and 0x%04x: 0x%04x, expected the even 0x%04x", (double)mid, k, k + 1,
                            got, want);
                return;
            }
        }
    grade_check(g, 1, "to_half_ties_to_even", "all 63,488 midpoints, both signs");
}

// The instructor's sweep: every 257th bit pattern of all 2^32 floats, NaN left to
// check_nan, LESSON09_CHUNK floats a pass.
static void check_sweep(grade_t *g, uint64_t seed) {
    float *x = malloc(LESSON09_CHUNK * sizeof *x);
    uint16_t *got = malloc(LESSON09_CHUNK * sizeof *got);
    for (uint64_t b = seed % 257; b < (1ull << 32);) {
        size_t n = 0;
        for (; b < (1ull << 32) && n < LESSON09_CHUNK; b += 257)
            if (!isnan(x[n] = bits_to_float((uint32_t)b))) n++;
        to_half_each(x, got, n);
        for (size_t i = 0; i < n; i++) {
            uint16_t want = ref_encode(x[i]);
            uint32_t bits;
            memcpy(&bits, &x[i], sizeof bits);
            if (got[i] != want) {
                grade_check(g, 0, "to_half_rounds_to_nearest_random", "to_half(%.9g) (bits "
                            "0x%08x) = 0x%04x, expected 0x%04x, the nearest half", (double)x[i],
                            (unsigned)bits, got[i], want);
                free(x), free(got);
                return;
            }
        }
    }
    free(x), free(got);
    grade_check(g, 1, "to_half_rounds_to_nearest_random", "16.7 million floats, every 257th "
                "bit pattern");
}

#define NRANDOM 400000

static void check_random(grade_t *g, uint64_t seed) {
    if (instructor) return check_sweep(g, seed);
    static float xs[NRANDOM];
    static uint16_t got[NRANDOM];
    uint64_t r = seed ^ 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < NRANDOM; i++) {
        // exponents 2^-30 .. 2^17 (float biased 97 .. 144): subnormal halves, normals and
        // overflow; a random mantissa; a fifth of them one float ulp from a midpoint
        uint32_t b = (uint32_t)(grade_next(&r) & 0x807fffffu) | (uint32_t)grade_int(&r, 97, 144) << 23;
        float x = bits_to_float(b);
        if (i % 5 == 0) {
            int k = grade_int(&r, 0, NFIN - 1);
            float mid = (float)((table[k] + table[k + 1]) / 2);
            x = grade_int(&r, 0, 1) ? nextafterf(mid, INFINITY) : nextafterf(mid, 0.0f);
        }
        xs[i] = x;
    }
    to_half_each(xs, got, NRANDOM);
    for (int i = 0; i < NRANDOM; i++) {
        float x = xs[i];
        uint16_t want = ref_encode(x);
        if (got[i] != want) {
            grade_check(g, 0, "to_half_rounds_to_nearest_random", "to_half(%.9g) = 0x%04x "
                        "(%.9g), expected 0x%04x (%.9g), the nearest half", (double)x, got[i],
                        ref_decode(got[i]), want, ref_decode(want));
            return;
        }
    }
    grade_check(g, 1, "to_half_rounds_to_nearest_random", "400,000 random floats");
}

typedef struct {
    float x;
    uint16_t want;
    const char *what;
} fixed_case;

static int run_fixed(grade_t *g, const char *check, const fixed_case *c, int n) {
    for (int i = 0; i < n; i++) {
        uint16_t got = to_half(c[i].x);
        if (got != c[i].want)
            return grade_check(g, 0, check, "to_half(%.9g) (%s) = 0x%04x, expected 0x%04x",
                               (double)c[i].x, c[i].what, got, c[i].want);
    }
    return 1;
}

static void check_overflow(grade_t *g) {
    const fixed_case c[] = {
        {65504.0f, 0x7bff, "the largest half"},
        {nextafterf(65520.0f, 0.0f), 0x7bff, "just below the tie with Inf"},
        {65520.0f, 0x7c00, "the tie between 65504 (odd) and Inf (even)"},
        {1e5f, 0x7c00, "past the range"},
        {3.4e38f, 0x7c00, "float's largest"},
        {-1e9f, 0xfc00, "negative, past the range"},
        {INFINITY, 0x7c00, "Inf"},
        {-INFINITY, 0xfc00, "-Inf"},
    };
    if (run_fixed(g, "to_half_overflow_to_inf", c, (int)(sizeof c / sizeof c[0])))
        grade_check(g, 1, "to_half_overflow_to_inf", "65504, 65520, 1e5, 3.4e38, -1e9, +-Inf");
}

static void check_subnormals(grade_t *g) {
    const fixed_case c[] = {
        {0x1p-24f, 0x0001, "the smallest subnormal"},
        {0x1p-25f, 0x0000, "half of it: a tie, to the even zero"},
        {nextafterf(0x1p-25f, 1.0f), 0x0001, "just above that tie"},
        {0x3p-25f, 0x0002, "1.5 x 2^-24: a tie, to the even 2"},
        {0x7ffp-25f, 0x0400, "1023.5 x 2^-24: a tie, carries into the smallest normal"},
        {0x3ffp-24f, 0x03ff, "the largest subnormal"},
        {-0.0f, 0x8000, "-0"},
        {-1e-30f, 0x8000, "a tiny negative: -0"},
        {1e-40f, 0x0000, "a float subnormal"},
        {-0x1p-24f, 0x8001, "-2^-24"},
    };
    if (run_fixed(g, "to_half_subnormals_and_signed_zero", c, (int)(sizeof c / sizeof c[0])))
        grade_check(g, 1, "to_half_subnormals_and_signed_zero", "ties, carries and signs near 0");
}

// The NaN bit patterns, public: five; instructor: every one, each sign's in turn, in passes
// of LESSON09_CHUNK (their bits moved by memcpy: a signalling NaN stays one on its way).
static uint32_t nan_bits(size_t i) {
    static const uint32_t nans[] = {0x7fc00000u, 0x7f800001u, 0xffc00000u, 0x7fffffffu,
                                    0xff800100u};
    return instructor ? (i & 1 ? 0xff800000u : 0x7f800000u) | (uint32_t)(i / 2 + 1) : nans[i];
}

static void check_nan(grade_t *g) {
    size_t count = instructor ? 2 * ((size_t)1 << 23) - 2 : 5;
    float *x = malloc(LESSON09_CHUNK * sizeof *x);
    uint16_t *got = malloc(LESSON09_CHUNK * sizeof *got);
    for (size_t at = 0; at < count; at += LESSON09_CHUNK) {
        size_t n = count - at < LESSON09_CHUNK ? count - at : LESSON09_CHUNK;
        for (size_t i = 0; i < n; i++) {
            uint32_t b = nan_bits(at + i);
            memcpy(&x[i], &b, sizeof b);
        }
        to_half_each(x, got, n);
        for (size_t i = 0; i < n; i++) {
            uint32_t b = nan_bits(at + i);
            uint16_t h = got[i];
            int ok = (h & 0x7c00) == 0x7c00 && (h & 0x200) && (h >> 15) == (b >> 31);
            if (!ok) {
                grade_check(g, 0, "to_half_nan_stays_nan", "to_half(NaN 0x%08x) = 0x%04x, "
                            "expected a quiet NaN half (0x7e00 set) with the same sign", b, h);
                free(x), free(got);
                return;
            }
        }
    }
    free(x), free(got);
    grade_check(g, 1, "to_half_nan_stays_nan", "%s", instructor ? "all 16,777,214 NaNs"
                : "quiet and signalling, both signs");
}

// ---- loss scaling ----

static int ref_step(scaler *s, int overflow) {
    if (overflow) {
        s->scale = s->scale / 2 < 1 ? 1 : s->scale / 2;
        s->good = 0;
        s->skipped++;
        return 0;
    }
    s->good++;
    if (s->good == s->interval) s->scale *= 2, s->good = 0;
    return 1;
}

static int same(const scaler *a, const scaler *b) {
    return a->scale == b->scale && a->good == b->good && a->skipped == b->skipped &&
           a->interval == b->interval;
}

static void check_scaler_overflow(grade_t *g, uint64_t seed) {
    uint64_t r = seed ^ 0x5ca1e;
    float start = ldexpf(1.0f, grade_int(&r, 4, 16));
    int good = grade_int(&r, 1, 1999);
    scaler s = {start, 2000, good, 5};
    int ret = scaler_step(&s, 1);
    if (ret != 0 || s.scale != start / 2 || s.good != 0 || s.skipped != 6) {
        grade_check(g, 0, "scaler_overflow_skips_and_halves", "from S = %g, good %d, skipped 5, "
                    "an overflow gave return %d, S = %g, good %d, skipped %ld; expected 0, %g, 0, 6",
                    start, good, ret, s.scale, s.good, s.skipped, start / 2);
        return;
    }
    for (int i = 0; i < 40; i++) scaler_step(&s, 1);
    grade_check(g, s.scale == 1.0f && s.skipped == 46, "scaler_overflow_skips_and_halves",
                "40 more overflows: S = %g (expected 1: never below), skipped %ld (expected 46)",
                s.scale, s.skipped);
}

static void check_scaler_growth(grade_t *g, uint64_t seed) {
    uint64_t r = seed ^ 0x920d;
    int n = grade_int(&r, 2, 50);
    scaler s = {1024.0f, n, 0, 0};
    for (int round = 0; round < 2; round++)
        for (int i = 1; i <= n; i++) {
            float before = s.scale;
            int ret = scaler_step(&s, 0);
            float want = i == n ? before * 2 : before;
            if (ret != 1 || s.scale != want || s.good != (i == n ? 0 : i)) {
                grade_check(g, 0, "scaler_grows_after_interval_clean_steps", "interval %d, clean "
                            "step %d of %d: return %d, S = %g, good %d; expected 1, %g, %d", n,
                            i, n, ret, s.scale, s.good, want, i == n ? 0 : i);
                return;
            }
        }
    grade_check(g, 1, "scaler_grows_after_interval_clean_steps", "interval %d: 1024 -> 2048 -> "
                "4096 exactly every %d clean steps", n, n);
}

static void check_scaler_sequence(grade_t *g, uint64_t seed) {
    uint64_t r = seed ^ 0x5e9;
    scaler s = {ldexpf(1.0f, grade_int(&r, 0, 20)), grade_int(&r, 3, 40), 0, 0}, ref = s;
    int steps = 3000, odds = 20;  // an overflow 1 step in odds
    if (instructor)  // GradScaler's defaults; clean runs long enough to double S often
        s = ref = (scaler){65536.0f, 2000, 0, 0}, steps = 200000, odds = 4000;
    // the whole sequence in one request: the overflows drawn first, then every step's
    // return and state compared with the reference's in order
    unsigned char *overflow = malloc((size_t)steps);
    int *got = malloc((size_t)steps * sizeof *got);
    scaler *after = malloc((size_t)steps * sizeof *after);
    for (int i = 0; i < steps; i++) overflow[i] = grade_int(&r, 0, odds - 1) == 0;
    scaler_steps(&s, overflow, (size_t)steps, got, after);
    for (int i = 0; i < steps; i++) {
        int want = ref_step(&ref, overflow[i]);
        const scaler *a = &after[i];
        if (got[i] != want || !same(a, &ref)) {
            grade_check(g, 0, "scaler_matches_reference_sequence", "step %d (%s, interval %d): "
                        "return %d, S = %g, good %d, skipped %ld; expected %d, %g, %d, %ld", i,
                        overflow[i] ? "overflow" : "clean", a->interval, got[i], a->scale,
                        a->good, a->skipped, want, ref.scale, ref.good, ref.skipped);
            free(overflow), free(got), free(after);
            return;
        }
    }
    free(overflow), free(got), free(after);
    grade_check(g, 1, "scaler_matches_reference_sequence", "%d random steps, 1 in %d overflows, "
                "interval %d, S at the end %g", steps, odds, s.interval, s.scale);
}

// ---- fp16 on the wire ----

#define GUARD LESSON09_GUARD  // sentinels past n (they travel to the subject too)

static void check_wire(grade_t *g, uint64_t seed) {
    uint64_t r = seed ^ 0x3173;
    int P = instructor ? 64 : grade_int(&r, 2, 8);
    size_t n = (size_t)grade_int(&r, 1, instructor ? 200000 : 5000);
    float *acc = malloc((n + GUARD) * sizeof(float)), *grad = malloc(n * sizeof(float));
    uint16_t *wire = malloc((n + GUARD) * sizeof(uint16_t));
    double *want = calloc(n, sizeof(double)), *mag = calloc(n, sizeof(double));
    for (size_t i = 0; i < n + GUARD; i++) acc[i] = i < n ? 0.0f : 777.0f;
    int ok = 1;
    char msg[256] = "";
    for (int p = 0; p < P && ok; p++) {
        for (size_t i = 0; i < n; i++)  // magnitudes 1e-9 .. 1e4, log-uniform, either sign
            grad[i] = (float)(pow(10.0, -9 + 13 * (grade_uniform(&r) + 1) / 2) *
                              (grade_uniform(&r) < 0 ? -1 : 1));
        for (size_t i = n; i < n + GUARD; i++) wire[i] = 0xabcd;
        wire_pack(grad, wire, n);
        for (size_t i = 0; i < n && ok; i++)
            if (wire[i] != ref_encode(grad[i]))
                ok = 0, snprintf(msg, sizeof msg, "rank %d: wire_pack(%.9g) = 0x%04x, expected "
                                 "0x%04x", p, (double)grad[i], wire[i], ref_encode(grad[i]));
        for (size_t i = n; i < n + GUARD && ok; i++)
            if (wire[i] != 0xabcd) ok = 0, snprintf(msg, sizeof msg, "wire_pack wrote past n = %zu", n);
        for (size_t i = 0; i < n; i++) {
            double v = ref_decode(ref_encode(grad[i]));
            want[i] += v, mag[i] += fabs(v);
        }
        if (ok) wire_accumulate(acc, wire, n);
    }
    for (size_t i = 0; i < n && ok; i++)  // fp32 sums of P terms: within P float roundings
        if (!(fabs(acc[i] - want[i]) <= P * 0x1p-24 * mag[i] + 1e-30))
            ok = 0, snprintf(msg, sizeof msg, "element %zu: the fp32 sum is %.9g, expected %.9g "
                             "(float64 of the same halves)", i, (double)acc[i], want[i]);
    for (size_t i = n; i < n + GUARD && ok; i++)
        if (acc[i] != 777.0f) ok = 0, snprintf(msg, sizeof msg, "wire_accumulate wrote past n = %zu", n);
    grade_check(g, ok, "wire_sum_matches_float64", "%s", ok ? "P ranks' fp16 gradients summed in fp32" : msg);
    if (ok) printf("#   %d ranks x %zu gradients\n", P, n);
    free(acc), free(grad), free(wire), free(want), free(mag);
}

int main(int argc, char **argv) {
    instructor = argc > 1 && strcmp(argv[1], "--instructor") == 0;
    if (argc > 1 && !instructor) {
        fprintf(stderr, "grader: unknown argument '%s' (expected --instructor)\n", argv[1]);
        return 2;
    }
    grade_t g = grade_begin("09-mixed-precision", 0);
    make_table();
    check_from_half(&g);
    check_round_trip(&g);
    check_ties(&g);
    check_random(&g, g.seed);
    check_overflow(&g);
    check_subnormals(&g);
    check_nan(&g);
    check_scaler_overflow(&g, g.seed);
    check_scaler_growth(&g, g.seed);
    check_scaler_sequence(&g, g.seed);
    check_wire(&g, g.seed);
    return grade_end(&g);
}
