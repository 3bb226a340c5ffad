// grader.c — lesson 12's grader: the student's one_f_one_b on every stage of many (p, m),
// run on the simulator's model of the stages' clocks (nn/pipe/pipe_sched.h's dt_pipe_run:
// an op starts when its stage is free and its input has arrived; the schedule dtsim prices
// for `--pp`). Five checks:
//  - each stage runs the forward and the backward of each micro-batch once (2m ops, nothing
//    written past them);
//  - each op sends where the contract says (a forward to s + 1, a backward to s - 1, -1
//    at the ends);
//  - the stages never wait for each other forever (no deadlock);
//  - 1F1B's memory: no stage holds more than p - s micro-batches at once (GPipe holds m);
//  - performance: with every forward taking f and every backward b = 2f (free messages),
//    the step is (m + p - 1)(f + b), the bubble (p - 1)/(m + p - 1) of it (Narayanan et
//    al. 2021 §2.2.1) — a schedule that waits longer than it must is slower.
// The public run draws p <= 8 and m >= p; `grader --instructor` (instructor/grade.sh, not
// in the handout) up to 64 stages and 512 micro-batches, and fewer micro-batches than
// stages (m < p: the warm-up is cut to m). Fresh random cases each run from the printed
// seed (DT_LESSON_SEED=N replays it). The bits that a schedule gives a real model are
// dtrain_check.sh's check (grade.sh).
// The grader is split (lessons/kit/subject.h): one_f_one_b here is remote.c's, which asks
// the student's one_f_one_b.c, run in a process of its own (subject12.c).
#include <string.h>

#include "../kit/grade.h"
#include "one_f_one_b.h"
#include "pipe/pipe_sched.h"
#include "subject12.h"

enum { C_ONCE, C_SENDS, C_DEADLOCK, C_MEMORY, C_BUBBLE, N_CHECKS };
static const char NAMES[N_CHECKS][48] = {
    "every_stage_runs_each_op_once", "sends_go_to_the_neighbouring_stage",
    "stages_never_wait_forever", "at_most_p_minus_s_micro_batches_held",
    "bubble_is_p_minus_1_over_m_plus_p_minus_1"};

typedef struct {
    int cases, failed[N_CHECKS];
    char why[N_CHECKS][400];
    double worst_over;  // the largest step over the closed form, relative
    int worst_p, worst_m;
} tally;

static void fail(tally *t, int c, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(tally *t, int c, const char *fmt, ...) {
    if (t->failed[c]++) return;  // the first failure's message
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->why[c], sizeof t->why[c], fmt, ap);
    va_end(ap);
}

static const char *op_name(const pipe_op *o) {
    return o->bwd == 1 ? "backward" : o->bwd == 0 ? "forward" : "(neither)";
}

// Stage s's ops from the student, checked for the first two checks; 0 when they are 2m
// well-formed ops (copied into out), -1 otherwise.
static int stage_ops(tally *t, int p, int m, int s, pipe_op *buf, dt_pipe_op *out) {
    size_t n2 = 2 * (size_t)m;
    for (size_t i = 0; i < n2 + LESSON12_GUARD; i++) buf[i] = (pipe_op){7, -7, -7};
    int n = one_f_one_b(p, m, s, buf);
    if (n != (int)n2) {
        fail(t, C_ONCE, "p = %d, m = %d, stage %d: one_f_one_b returned %d, expected 2m = %zu "
             "ops", p, m, s, n, n2);
        return -1;
    }
    for (int g = 0; g < LESSON12_GUARD; g++)
        if (buf[n2 + g].bwd != 7 || buf[n2 + g].micro != -7 || buf[n2 + g].send_to != -7) {
            fail(t, C_ONCE, "p = %d, m = %d, stage %d: ops[%zu] was written: past the 2m ops",
                 p, m, s, n2 + g);
            return -1;
        }
    char *seen = calloc(n2, 1);
    int rc = 0;
    for (size_t i = 0; i < n2 && !rc; i++) {
        const pipe_op *o = &buf[i];
        if ((o->bwd != 0 && o->bwd != 1) || o->micro < 0 || o->micro >= m) {
            fail(t, C_ONCE, "p = %d, m = %d, stage %d, op %zu: bwd %d, micro %d (expected bwd "
                 "0 or 1, micro 0 to %d)", p, m, s, i, o->bwd, o->micro, m - 1);
            rc = -1;
        } else if (seen[(size_t)o->bwd * m + o->micro]++) {
            fail(t, C_ONCE, "p = %d, m = %d, stage %d, op %zu: the %s of micro-batch %d runs "
                 "twice", p, m, s, i, op_name(o), o->micro);
            rc = -1;
        }
    }
    for (size_t q = 0; q < n2 && !rc; q++)
        if (!seen[q]) {
            fail(t, C_ONCE, "p = %d, m = %d, stage %d never runs the %s of micro-batch %zu",
                 p, m, s, q / m ? "backward" : "forward", q % m);
            rc = -1;
        }
    free(seen);
    for (size_t i = 0; i < n2 && !rc; i++) {
        const pipe_op *o = &buf[i];
        int want = o->bwd ? (s > 0 ? s - 1 : -1) : (s < p - 1 ? s + 1 : -1);
        if (o->send_to != want) {
            fail(t, C_SENDS, "p = %d, m = %d, stage %d, op %zu (the %s of micro-batch %d): "
                 "send_to %d, expected %d (%s)", p, m, s, i, op_name(o), o->micro, o->send_to,
                 want, want < 0 ? "nothing to send to" : o->bwd ? "the gradient goes back "
                 "to the stage before" : "the activations go on to the next stage");
            break;
        }
    }
    for (size_t i = 0; i < n2 && !rc; i++) out[i] = (dt_pipe_op){buf[i].bwd, 0, buf[i].micro};
    return rc;
}

// One (p, m): every stage's schedule, then the clocks' run of it.
static void grade_case(tally *t, int p, int m) {
    t->cases++;
    size_t n2 = 2 * (size_t)m;
    pipe_op *buf = malloc((n2 + LESSON12_GUARD) * sizeof *buf);
    dt_pipe_sched sch = {p, m, 1, malloc((size_t)p * n2 * sizeof(dt_pipe_op)),
                         malloc(((size_t)p + 1) * sizeof(int))};
    int ok = 1;
    for (int s = 0; s < p && ok; s++) {
        sch.start[s] = (int)((size_t)s * n2);
        ok = !stage_ops(t, p, m, s, buf, sch.ops + (size_t)s * n2);
    }
    sch.start[p] = (int)((size_t)p * n2);
    if (!ok) {  // nothing to run: the later checks cannot pass on this case
        for (int c = C_SENDS; c < N_CHECKS; c++)
            fail(t, c, "p = %d, m = %d: not run, the ops are not each forward and backward "
                 "once (%s)", p, m, NAMES[C_ONCE]);
        goto out;
    }
    const double f = 1, b = 2;  // a backward is about twice a forward (Narayanan et al.)
    dt_pipe_cost cost = {f, b, 0, 0};
    dt_pipe_price pr;
    int *held = calloc((size_t)p, sizeof(int));
    char why[200];
    if (dt_pipe_run(&sch, &cost, 1, &pr, held, why, sizeof why)) {
        fail(t, C_DEADLOCK, "p = %d, m = %d: %s", p, m, why);
        for (int c = C_MEMORY; c < N_CHECKS; c++)
            fail(t, c, "p = %d, m = %d: not run, the stages wait forever (%s)", p, m,
                 NAMES[C_DEADLOCK]);
        free(held);
        goto out;
    }
    for (int s = 0; s < p; s++) {
        int cap = p - s < m ? p - s : m;
        if (held[s] > cap) {
            fail(t, C_MEMORY, "p = %d, m = %d: stage %d holds the activations of %d "
                 "micro-batches at once (forward run, backward not yet), at most p - s = %d "
                 "(1F1B: a forward only when the stage needs it to fill the pipeline; GPipe "
                 "holds all m)", p, m, s, held[s], cap);
            break;
        }
    }
    free(held);
    double want = (m + p - 1) * (f + b), over = (pr.step_s - want) / want;
    if (over > t->worst_over || t->cases == 1)
        t->worst_over = over, t->worst_p = p, t->worst_m = m;
    if (fabs(pr.step_s - want) > 1e-9 * want)
        fail(t, C_BUBBLE, "p = %d, m = %d, forward 1, backward 2, free messages: the step takes "
             "%.6g, the target (m + p - 1)(f + b) = %.6g (%+.1f %%); the bubble is %.1f %% of "
             "the step, 1F1B's (p - 1)/(m + p - 1) = %.1f %%%s", p, m, pr.step_s, want,
             100 * over, 100 * (1 - m * (f + b) / pr.step_s), 100.0 * (p - 1) / (m + p - 1),
             over > 0 ? " (does a stage wait for a backward it could have had sooner?)" : "");
out:
    free(buf), free(sch.ops), free(sch.start);
}

int main(int argc, char **argv) {
    int instructor = argc > 1 && !strcmp(argv[1], "--instructor");
    if (argc > 1 && !instructor) {
        fprintf(stderr, "grader: unknown argument '%s' (expected --instructor)\n", argv[1]);
        return 2;
    }
    grade_t g = grade_begin("12", 0);
    uint64_t r = g.seed ^ 0x12f1b;
    tally t;
    memset(&t, 0, sizeof t);
    static const int fixed[][2] = {{1, 1}, {1, 4}, {2, 2}, {2, 3}, {3, 7}, {4, 4}, {4, 8},
                                   {8, 8}, {8, 32}};
    static const int fixed_i[][2] = {{2, 1}, {4, 1}, {4, 3}, {8, 5}, {16, 7}, {32, 512},
                                     {64, 64}, {64, 200}};
    if (!instructor) {
        for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
            grade_case(&t, fixed[i][0], fixed[i][1]);
        for (int k = 0; k < 24; k++) {
            int p = grade_int(&r, 1, 8);
            grade_case(&t, p, grade_int(&r, p, 4 * p));
        }
    } else {
        for (size_t i = 0; i < sizeof fixed_i / sizeof *fixed_i; i++)
            grade_case(&t, fixed_i[i][0], fixed_i[i][1]);
        for (int k = 0; k < 20; k++) {
            int p = grade_int(&r, 2, 64);
            grade_case(&t, p, k % 2 ? grade_int(&r, 1, p - 1) : grade_int(&r, p, 8 * p));
        }
    }
    const char *range = instructor ? "p = 2..64, m = 1..512, m < p too"
                                   : "p = 1..8, m = p..4p";
    for (int c = 0; c < N_CHECKS; c++) {
        if (t.failed[c]) {
            grade_check(&g, 0, NAMES[c], "%s [fails in %d of %d cases]", t.why[c], t.failed[c],
                        t.cases);
        } else if (c == C_BUBBLE) {
            grade_check(&g, 1, NAMES[c], "%d cases (%s): every step (m + p - 1)(f + b) to the "
                        "last digit, target met (worst %+.1f %%, p = %d, m = %d); at p = 8, "
                        "m = 32 the bubble is 7/39 = %.1f %% of the step", t.cases, range,
                        100 * t.worst_over, t.worst_p, t.worst_m, 700.0 / 39);
        } else {
            grade_check(&g, 1, NAMES[c], "%d cases (%s), every stage", t.cases, range);
        }
    }
    return grade_end(&g);
}
