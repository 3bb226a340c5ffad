// grader.c — lesson 02's grader, part 1: the student's sgd_step against a float64
// re-computation of torch.optim.SGD's documented update (dampening 0), over several
// consecutive steps with the momentum buffer carried, for random lr, momentum, weight
// decay and sizes, with and without Nesterov, including momentum 0, weight decay 0 and the
// first-step rule. Part 2 (grader_train.c) grades the training loop. Every run draws fresh
// inputs from the printed seed (DT_LESSON_SEED=N replays it). The grader is split
// (lessons/kit/subject.h): sgd.c and train_loop.c run in another process (subject02.c),
// which remote02.c's functions of the same names ask.
#include <string.h>

#include "grader.h"
#include "subject02.h"

#define STEPS 5     // consecutive steps per case: the momentum buffer is carried
#define GUARD LESSON02_GUARD  // sentinel elements after each buffer (subject02.h)
#define SENTINEL 12345.0f
#define TOL 1e-5    // float32 against float64 after STEPS steps, relative to 1 + |want|

// torch.optim.SGD's algorithm (its documentation's box, dampening 0), in float64:
//   d = g + wd*w; if mu != 0 { b = first ? d : mu*b + d; d = nesterov ? d + mu*b : b }
//   w = w - lr*d
static void ref_sgd(double *w, const double *g, double *b, size_t n, double lr, double mu,
                    double wd, int nesterov, int first) {
    for (size_t i = 0; i < n; i++) {
        double d = g[i] + wd * w[i];
        if (mu != 0) {
            b[i] = first ? d : mu * b[i] + d;
            d = nesterov ? d + mu * b[i] : b[i];
        }
        w[i] -= lr * d;
    }
}

typedef struct {
    size_t n;
    float lr, mu, wd;
    int nesterov;
    int v_garbage;  // the buffer holds garbage before the first step (else zeros)
    int v_null;     // mu == 0: the buffer must stay as it was (a sentinel pattern here)
} sgd_case;

// momentum in [0.15, 0.95), weight decay in [0.002, 0.1)
static float rand_momentum(uint64_t *rng) { return (float)(0.55 + 0.4 * grade_uniform(rng)); }
static float rand_decay(uint64_t *rng) { return (float)(0.051 + 0.049 * grade_uniform(rng)); }

// A case with a random lr in [0.01, 0.5) and size (one in four: 1 to 7 elements, else up to
// 4000), random momentum and weight decay where asked for (else 0).
static sgd_case draw_case(uint64_t *rng, int momentum, int decay, int nesterov) {
    sgd_case c = {0};
    c.mu = momentum ? rand_momentum(rng) : 0.0f;
    c.wd = decay ? rand_decay(rng) : 0.0f;
    c.nesterov = nesterov;
    c.lr = (float)(0.01 + 0.49 * (0.5 + 0.5 * grade_uniform(rng)));
    int tiny = grade_int(rng, 0, 3) == 0;
    c.n = (size_t)(tiny ? grade_int(rng, 1, 7) : grade_int(rng, 8, 4000));
    return c;
}

// Whether sgd_step kept to its n elements of w and v and left g alone, over every case run.
typedef struct {
    int ok;
    char msg[320];  // the first violation
} range_state;

// Runs STEPS steps of one case; 1 if w and v stayed within TOL of the float64 re-computation
// (and, with v_null, v unchanged), else 0 with the first difference described in msg. A
// write outside the n elements (or into g) fails the case and is recorded in *rs.
static int run_case(const sgd_case *c, uint64_t *rng, char *msg, size_t cap, range_state *rs) {
    size_t n = c->n, m = n + GUARD;
    float *w = malloc(m * sizeof *w), *gr = malloc(m * sizeof *gr), *v = malloc(m * sizeof *v);
    float *g0 = malloc(m * sizeof *g0);
    double *rw = malloc(n * sizeof *rw), *rg = malloc(n * sizeof *rg), *rb = calloc(n, sizeof *rb);
    for (size_t i = 0; i < m; i++) w[i] = v[i] = gr[i] = SENTINEL;
    for (size_t i = 0; i < n; i++) {
        w[i] = (float)grade_uniform(rng), rw[i] = w[i];
        if (c->v_null) v[i] = SENTINEL + (float)i;
        else if (c->v_garbage) v[i] = (float)(50 * grade_uniform(rng));  // not zero, not d
        else v[i] = 0.0f;
    }
    int ok = 1;
    char cfg[160];
    snprintf(cfg, sizeof cfg, "lr=%.4g mu=%.4g wd=%.4g nesterov=%d n=%zu", (double)c->lr,
             (double)c->mu, (double)c->wd, c->nesterov, n);
    sgd_config sc = {c->lr, c->mu, c->wd, c->nesterov};
    for (int s = 0; s < STEPS && ok; s++) {
        for (size_t i = 0; i < n; i++) gr[i] = (float)grade_uniform(rng), rg[i] = gr[i];
        memcpy(g0, gr, m * sizeof *g0);
        sgd_step(w, gr, v, n, &sc, s == 0);
        ref_sgd(rw, rg, rb, n, c->lr, c->mu, c->wd, c->nesterov, s == 0);
        char where[320] = "";
        for (size_t i = n; i < m && !where[0]; i++)
            if (w[i] != SENTINEL || v[i] != SENTINEL)
                snprintf(where, sizeof where, "step %d (%s): %s[%zu], past the last of the "
                         "%zu elements, was written", s + 1, cfg, w[i] != SENTINEL ? "w" : "v",
                         i, n);
        if (!where[0] && memcmp(g0, gr, m * sizeof *g0) != 0)
            snprintf(where, sizeof where, "step %d (%s): g was written (it is only read)",
                     s + 1, cfg);
        if (where[0]) {
            if (rs->ok) snprintf(rs->msg, sizeof rs->msg, "%s", where);
            rs->ok = 0;
            snprintf(msg, cap, "%s", where);
            ok = 0;
            break;
        }
        size_t at;
        double ew = grade_worst(w, rw, n, 1.0, &at);
        if (!(ew <= TOL)) {
            const char *rule = c->mu == 0.0f ? "w -= lr*(g + wd*w)"
                               : c->nesterov ? "w -= lr*(d + mu*v), d = g + wd*w, v the new buffer"
                                             : "w -= lr*v, v = mu*v + g + wd*w";
            snprintf(msg, cap, "step %d (%s): w[%zu] expected %.7g, got %.7g (g %.7g; %s%s)",
                     s + 1, cfg, at, rw[at], (double)w[at], rg[at], rule,
                     s == 0 && c->v_garbage ? "; on the first step v's old contents are "
                                              "ignored: v = g + wd*w" : "");
            ok = 0;
            break;
        }
        if (c->v_null) {
            for (size_t i = 0; i < n; i++)
                if (v[i] != SENTINEL + (float)i) {
                    snprintf(msg, cap, "step %d (%s): v[%zu] was written (%.7g); with "
                             "momentum 0 torch keeps no buffer: v is neither read nor "
                             "written", s + 1, cfg, i, (double)v[i]);
                    ok = 0;
                    break;
                }
        } else {
            double ev = grade_worst(v, rb, n, 1.0, &at);
            if (!(ev <= TOL)) {
                snprintf(msg, cap, "step %d (%s): momentum buffer v[%zu] expected %.7g, got "
                         "%.7g%s", s + 1, cfg, at, rb[at], (double)v[at],
                         s == 0 ? " (first step: v = g + wd*w, whatever v held)"
                                : " (v = mu*v + g + wd*w)");
                ok = 0;
            }
        }
    }
    free(w), free(gr), free(v), free(g0), free(rw), free(rg), free(rb);
    return ok;
}

// One check over several cases; its details name the cases.
static int check_cases(grade_t *g, const char *name, const sgd_case *cases, int k,
                       uint64_t *rng, range_state *rs) {
    char msg[512] = "";
    int ok = 1;
    for (int i = 0; i < k && ok; i++) ok = run_case(&cases[i], rng, msg, sizeof msg, rs);
    if (ok)
        return grade_check(g, 1, name, "(%d cases x %d steps, float64 re-computation)", k,
                           STEPS);
    return grade_check(g, 0, name, "%s", msg);
}

sgd_outcome grade_sgd(grade_t *g) {
    uint64_t rng = g->seed ^ 0x5347445f53544550ull;  // "SGD_STEP"
    if (!rng) rng = 1;
    range_state rs = {1, ""};
    int all = 1;
    sgd_case c[3];

    // heavy-ball momentum with weight decay, several steps (one case without decay);
    // the buffer starts at zero, as a calloc'd one would
    for (int i = 0; i < 3; i++) c[i] = draw_case(&rng, 1, i != 2, 0);
    all &= check_cases(g, "sgd_momentum_matches_torch_update", c, 3, &rng, &rs);

    // Nesterov: the step looks ahead along the new buffer, d + mu*v
    for (int i = 0; i < 3; i++) c[i] = draw_case(&rng, 1, i != 2, 1);
    all &= check_cases(g, "sgd_nesterov_matches_torch_update", c, 3, &rng, &rs);

    // the first step ignores whatever the buffer holds (torch creates it: v = d)
    for (int i = 0; i < 2; i++) {
        c[i] = draw_case(&rng, 1, 1, i);
        c[i].v_garbage = 1;
    }
    all &= check_cases(g, "sgd_first_step_sets_buffer_to_gradient", c, 2, &rng, &rs);

    // momentum 0: plain SGD with weight decay, w -= lr*(g + wd*w); no buffer (v untouched)
    for (int i = 0; i < 2; i++) {
        c[i] = draw_case(&rng, 0, i == 0, 0);
        c[i].v_null = 1;
    }
    all &= check_cases(g, "sgd_without_momentum_is_plain_sgd", c, 2, &rng, &rs);

    // exactly n elements, in every case above and in small ones (n < 10) of every kind:
    // guards after w and v, g never written
    c[0] = draw_case(&rng, 1, 1, 0);
    c[1] = draw_case(&rng, 1, 1, 1);
    c[1].v_garbage = 1;
    c[2] = draw_case(&rng, 0, 1, 0);
    c[2].v_null = 1;
    char msg[512];
    for (int i = 0; i < 3; i++) {
        c[i].n = (size_t)grade_int(&rng, 1, 9);
        run_case(&c[i], &rng, msg, sizeof msg, &rs);  // the values were graded above
    }
    if (rs.ok)
        grade_check(g, 1, "sgd_touches_only_n_elements",
                    "(%d guard elements after w and v unchanged, g only read, in every case)",
                    GUARD);
    else
        grade_check(g, 0, "sgd_touches_only_n_elements", "%s", rs.msg);
    all &= rs.ok;
    return (sgd_outcome){rs.ok, all};
}

int main(void) {
    grade_t g = grade_begin("02 training loop", 0);
    sgd_outcome o = grade_sgd(&g);
    grade_train(&g, &o);
    return grade_end(&g);
}
