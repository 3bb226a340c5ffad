// grader.c — lesson 08's grader: the student's lr_at and lars_step against float64
// re-computations of the formulas (Goyal et al. 2017 §2.1-2.2; You et al. 2017 Alg. 1 in
// MLPerf's form, docs/formulas.md "LARS"), on random schedules and random tensors:
//  - lr_at: the linear scaling rule (at the end of warm-up, batches that are not multiples
//    of 256), the warm-up line from s x lr0, the polynomial decay to 0 at T and after;
//  - lars_step: the returned trust ratio, the weights and momentum after 3 steps, the
//    zero-norm rule (a zero tensor, a zero gradient), the exclusion of biases and batch
//    norm, and that only n elements of w and v are touched and g is not.
// Fresh random inputs each run from the printed seed (DT_LESSON_SEED=N replays it).
// `grader --instructor` (instructor/grade.sh, not in the handout) runs the same checks on
// what the public run never draws: layer-sized tensors (1-2.4 M elements, ResNet-50's fc and
// largest conv) whose norms four large elements dominate (w's first, g's last) — a sum of
// squares kept in float stops adding the small ones once the large ones are in, the reason
// the contract says double — and landmark-scale schedules (batches 8k-64k, the multiples of 256
// included; up to 100,000 steps).
// The grader is split (lessons/kit/subject.h): lr_at and lars_step here are remote.c's,
// which ask the student's large_batch.c, run in a process of its own (subject08.c).
#include <math.h>
#include <string.h>

#include "../kit/grade.h"
#include "large_batch.h"
#include "subject08.h"

#define TOL 2e-6   // float32 against float64, relative to the sum of the magnitudes that
                   // entered each element (a few float roundings per step; bugs are 1e-4+)
#define GUARD LESSON08_GUARD  // sentinels past n (they travel to the subject too)
#define SENTINEL 4321.0f

static int instructor;  // --instructor: the cases above (set once in main)

static double ref_lr(const schedule *s, long t) {
    double lr0 = s->lr_per_256 * (double)s->batch / 256;
    if (t < s->warmup_steps)
        return lr0 * (s->warmup_start + (1 - s->warmup_start) * t / (double)s->warmup_steps);
    if (t >= s->total_steps) return 0;
    double frac = (double)(t - s->warmup_steps) / (double)(s->total_steps - s->warmup_steps);
    return lr0 * pow(1 - frac, s->power);
}

static schedule draw_schedule(uint64_t *r) {
    schedule s;
    s.lr_per_256 = 0.05 + 0.1 * (grade_uniform(r) + 1);
    if (instructor) {  // Goyal et al.'s 8k to You et al.'s 64k, whole multiples of 256 too
        s.batch = grade_int(r, 0, 1) ? 256 * grade_int(r, 32, 256) : grade_int(r, 8000, 65536);
        s.warmup_steps = grade_int(r, 500, 5000);
        s.warmup_start = 0.05 + 0.2 * (grade_uniform(r) + 1);
        s.total_steps = s.warmup_steps + grade_int(r, 10000, 95000);
        s.power = grade_int(r, 0, 1) ? 2.0 : 1.0 + (grade_uniform(r) + 1);
        return s;
    }
    do s.batch = grade_int(r, 300, 70000); while (s.batch % 256 == 0);
    s.warmup_steps = grade_int(r, 5, 500);
    s.warmup_start = 0.05 + 0.2 * (grade_uniform(r) + 1);
    s.total_steps = s.warmup_steps + grade_int(r, 10, 5000);
    s.power = grade_int(r, 0, 1) ? 2.0 : 1.0 + (grade_uniform(r) + 1);
    return s;
}

static int close_rel(double got, double want) {
    return fabs(got - want) <= 1e-9 * (1e-12 + fabs(want));
}

// one check over 200 random schedules at the steps `pick` chooses
static void check_lr(grade_t *g, uint64_t seed, const char *name, int which) {
    uint64_t r = seed ^ (0x1a2b3c + (uint64_t)which);
    for (int k = 0; k < 200; k++) {
        schedule s = draw_schedule(&r);
        long ts[4];
        int nt = 0;
        if (which == 0) ts[nt++] = s.warmup_steps;  // the scaled rate itself
        if (which == 1) ts[nt++] = 0, ts[nt++] = grade_int(&r, 1, (int)s.warmup_steps - 1),
                        ts[nt++] = s.warmup_steps - 1;
        if (which == 2) ts[nt++] = s.warmup_steps + grade_int(&r, 1, (int)(s.total_steps - s.warmup_steps) - 1),
                        ts[nt++] = s.total_steps - 1, ts[nt++] = s.total_steps,
                        ts[nt++] = s.total_steps + grade_int(&r, 1, 1000);
        for (int i = 0; i < nt; i++) {
            double got = lr_at(&s, ts[i]), want = ref_lr(&s, ts[i]);
            if (!close_rel(got, want)) {
                grade_check(g, 0, name, "lr_per_256 %g, batch %d, warm-up %ld steps from %g, "
                            "T %ld, power %g: lr_at(%ld) = %.9g, expected %.9g", s.lr_per_256,
                            s.batch, s.warmup_steps, s.warmup_start, s.total_steps, s.power,
                            ts[i], got, want);
                return;
            }
        }
    }
    grade_check(g, 1, name, "200 random schedules");
}

// ---- LARS ----

typedef struct {
    size_t n;
    float *w, *g, *v;            // n + GUARD each
    double *rw, *rv;             // the reference's float64 copies
    double *mag;                 // per element: |w| + |m v| + |lr local d| of the step
} tensor;

static tensor make_tensor(uint64_t *r, size_t n, double wscale, double gscale) {
    tensor t = {n, malloc((n + GUARD) * sizeof(float)), malloc((n + GUARD) * sizeof(float)),
                malloc((n + GUARD) * sizeof(float)), malloc(n * sizeof(double)),
                malloc(n * sizeof(double)), calloc(n, sizeof(double))};
    for (size_t i = 0; i < n + GUARD; i++) {
        int in = i < n;
        t.w[i] = in ? (float)(wscale * grade_uniform(r)) : SENTINEL;
        t.g[i] = in ? (float)(gscale * grade_uniform(r)) : SENTINEL;
        t.v[i] = in ? (float)(0.01 * grade_uniform(r)) : SENTINEL;
        if (in) t.rw[i] = t.w[i], t.rv[i] = t.v[i];
    }
    if (instructor)  // heavy tails: four large elements (w's first, g's last), the rest 10^-4
        for (size_t i = 0; i < n; i++) {
            double sw = i < 4 ? 1.0 : 1e-4, sg = i + 4 >= n ? 1.0 : 1e-4;
            t.w[i] = (float)(sw * wscale * (grade_uniform(r) > 0 ? 1 : -1));
            t.g[i] = (float)(sg * gscale * (grade_uniform(r) > 0 ? 1 : -1));
            t.rw[i] = t.w[i];
        }
    return t;
}

static void free_tensor(tensor *t) {
    free(t->w), free(t->g), free(t->v), free(t->rw), free(t->rv), free(t->mag);
}

// the reference step in float64, on rw, rv; g as given (float)
static double ref_lars(tensor *t, int is_weight, double lr, const lars_config *c) {
    double local = 1, ww = 0, gg = 0;
    if (is_weight) {
        for (size_t i = 0; i < t->n; i++) ww += t->rw[i] * t->rw[i], gg += (double)t->g[i] * t->g[i];
        double wn = sqrt(ww), gn = sqrt(gg);
        if (wn > 0 && gn > 0) local = c->trust * wn / (gn + c->wd * wn + c->eps);
    }
    for (size_t i = 0; i < t->n; i++) {
        double d = is_weight ? t->g[i] + c->wd * t->rw[i] : t->g[i];
        t->mag[i] += fabs(t->rw[i]) + fabs(c->momentum * t->rv[i]) + fabs(lr * local * d);
        t->rv[i] = c->momentum * t->rv[i] + lr * local * d;
        t->rw[i] -= t->rv[i];
    }
    return local;
}

// runs `steps` steps of both; 0 and a message on the first difference. Each step's reference
// starts from the student's w and v as that step receives them (float, widened): a step is
// checked against float64 on its own inputs, so that the float trajectory's own drift over
// the steps (a one-element tensor whose w nearly cancels makes ||w|| lose digits) is never
// counted as the step's error.
static int run_lars(tensor *t, int is_weight, float lr, const lars_config *c, int steps,
                    char *msg, size_t size) {
    for (int s = 0; s < steps; s++) {
        for (size_t i = 0; i < t->n; i++) t->rw[i] = t->w[i], t->rv[i] = t->v[i], t->mag[i] = 0;
        double got = lars_step(t->w, t->g, t->v, t->n, is_weight, lr, c);
        double want = ref_lars(t, is_weight, lr, c);
        if (!(fabs(got - want) <= 1e-5 * fabs(want))) {
            snprintf(msg, size, "step %d, n %zu, %s: returned local %.9g, expected %.9g", s,
                     t->n, is_weight ? "weight" : "bias/BN", got, want);
            return 0;
        }
        for (size_t i = 0; i < t->n; i++) {
            double scale = t->mag[i] + 1e-30;
            double ew = fabs(t->w[i] - t->rw[i]) / scale, ev = fabs(t->v[i] - t->rv[i]) / scale;
            if (!(ew <= TOL && ev <= TOL)) {
                snprintf(msg, size, "step %d, n %zu, %s: element %zu: w %.9g v %.9g, expected "
                         "w %.9g v %.9g", s, t->n, is_weight ? "weight" : "bias/BN", i,
                         (double)t->w[i], (double)t->v[i], t->rw[i], t->rv[i]);
                return 0;
            }
        }
    }
    return 1;
}

static lars_config draw_config(uint64_t *r) {
    lars_config c = {(float)(0.8 + 0.15 * (grade_uniform(r) + 1) / 2),
                     (float)(1e-4 + 1e-3 * (grade_uniform(r) + 1) / 2),
                     (float)(0.001 * (1 + (grade_uniform(r) + 1))), 1e-9f};
    return c;
}

// which: 0 the returned ratio (one step), 1 the update over 3 steps, 2 zero norms,
// 3 biases and batch norm
static void check_lars(grade_t *g, uint64_t seed, const char *name, int which, const char *pass) {
    uint64_t r = seed ^ (0x1a25 + (uint64_t)which);
    char msg[400];
    for (int k = 0; k < (instructor ? 4 : 40); k++) {
        lars_config c = draw_config(&r);
        size_t n = (size_t)(grade_int(&r, 0, 3) ? grade_int(&r, 1, 5000) : grade_int(&r, 1, 4));
        if (instructor) n = (size_t)grade_int(&r, 1 << 20, 2400000);
        double ws = pow(10, -2 + 2 * (grade_uniform(&r) + 1) / 2), gs = pow(10, -5 + 3 * (grade_uniform(&r) + 1) / 2);
        float lr = (float)(0.1 + 20 * (grade_uniform(&r) + 1) / 2);
        tensor t = make_tensor(&r, n, ws, gs);
        int is_weight = which != 3, steps = which == 0 ? 1 : 3;
        if (which == 2) {  // a zero tensor (a zero-initialised BN gamma's twin) or a zero gradient
            if (k % 2) for (size_t i = 0; i < n; i++) t.w[i] = 0, t.rw[i] = 0;
            else for (size_t i = 0; i < n; i++) t.g[i] = 0;
            steps = 1;
        }
        int ok = run_lars(&t, is_weight, lr, &c, steps, msg, sizeof msg);
        free_tensor(&t);
        if (!ok) {
            grade_check(g, 0, name, "%s", msg);
            return;
        }
    }
    grade_check(g, 1, name, "%s", pass);
}

static void check_range(grade_t *g, uint64_t seed) {
    uint64_t r = seed ^ 0x7a9e;
    lars_config c = draw_config(&r);
    for (int is_weight = 0; is_weight < 2; is_weight++) {
        size_t n = (size_t)grade_int(&r, 1, 3000);
        tensor t = make_tensor(&r, n, 1, 1e-3);
        float *g0 = malloc(n * sizeof(float));
        memcpy(g0, t.g, n * sizeof(float));
        lars_step(t.w, t.g, t.v, n, is_weight, 0.5f, &c);
        int ok = memcmp(g0, t.g, n * sizeof(float)) == 0;
        for (size_t i = n; i < n + GUARD; i++)
            ok &= t.w[i] == SENTINEL && t.v[i] == SENTINEL && t.g[i] == SENTINEL;
        free(g0);
        free_tensor(&t);
        if (!ok) {
            grade_check(g, 0, "lars_touches_only_n_elements", "%s, n %zu: an element past n of w "
                        "or v was written, or g was changed", is_weight ? "weight" : "bias", n);
            return;
        }
    }
    grade_check(g, 1, "lars_touches_only_n_elements", "w and v end at n, g untouched");
}

int main(int argc, char **argv) {
    instructor = argc > 1 && strcmp(argv[1], "--instructor") == 0;
    if (argc > 1 && !instructor) {
        fprintf(stderr, "grader: unknown argument '%s' (expected --instructor)\n", argv[1]);
        return 2;
    }
    grade_t g = grade_begin("08-large-batch", 0);
    check_lr(&g, g.seed, "lr_linear_scaling_rule", 0);
    check_lr(&g, g.seed, "lr_warmup_is_linear_from_start", 1);
    check_lr(&g, g.seed, "lr_poly_decay_to_zero_at_total", 2);
    check_lars(&g, g.seed, "lars_trust_ratio_matches_reference", 0,
               "40 random tensors, weight decay and trust drawn");
    check_lars(&g, g.seed, "lars_update_matches_float64", 1, "3 steps, momentum carried");
    check_lars(&g, g.seed, "lars_zero_norm_takes_plain_step", 2, "a zero tensor, a zero gradient");
    check_lars(&g, g.seed, "lars_excludes_bias_and_bn", 3, "no trust ratio, no weight decay");
    check_range(&g, g.seed);
    return grade_end(&g);
}
