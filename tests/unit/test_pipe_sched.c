// test_pipe_sched.c — the pipeline schedules (nn/pipe/pipe_sched.h) against independent
// references: with uniform costs, the step and the bubble of GPipe and 1F1B against the closed
// form (m + p - 1)(f + b) and (p - 1)/(m + p - 1), interleaved 1F1B's against
// m(f + b) + (p - 1)(f + b)/v (Narayanan et al. 2021, §2.2); activations in flight against
// GPipe's m and 1F1B's min(p - s, m); with random costs, messages and recomputation, the step
// against a longest path through the schedule's dependency graph computed by memoised
// recursion (another algorithm than the runner's sweep), each virtual stage costing its own;
// deadlocks, missing and repeated ops,
// and bad sizes refused with a message. Inputs: random p, m, v and costs from tu_seed().
// Tolerance: 1e-12 relative (the same float64 additions, another order).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe/pipe_sched.h"
#include "testutil.h"

static void build(dt_pipe_sched *s, dt_pipe_kind k, int p, int m, int v) {
    dt_error err = {0};
    if (dt_pipe_build(s, k, p, m, v, &err))
        fail_msg("%s p %d m %d v %d: %s", dt_pipe_kind_name(k), p, m, v, err.msg);
}

static dt_pipe_price run(const dt_pipe_sched *s, const dt_pipe_cost *c, int *inflight) {
    dt_pipe_price pr;
    char why[256];
    if (dt_pipe_run(s, c, 1, &pr, inflight, why, sizeof why))
        fail_msg("p %d m %d v %d: %s", s->p, s->m, s->v, why);
    return pr;
}

static void close_to(const char *what, double got, double want) {
    if (fabs(got - want) > 1e-12 * fmax(1.0, fabs(want)))
        fail_msg("%s: %.17g, expected %.17g", what, got, want);
}

static void test_gpipe_and_1f1b_take_m_plus_p_minus_1_slots(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int rep = 0; rep < 200; rep++) {
        int p = tu_int(&r, 1, 16), m = tu_int(&r, 1, 64);
        dt_pipe_cost c = {tu_uniform(&r, 0.1, 2), tu_uniform(&r, 0.1, 4), 0, 0};
        for (int k = DT_PIPE_GPIPE; k <= DT_PIPE_1F1B; k++) {
            dt_pipe_sched s;
            build(&s, (dt_pipe_kind)k, p, m, 1);
            int *in = calloc((size_t)p, sizeof(int));
            dt_pipe_price pr = run(&s, &c, in);
            close_to("step", pr.step_s, (m + p - 1) * (c.fwd + c.bwd));
            close_to("busiest stage", pr.busy_s, m * (c.fwd + c.bwd));
            close_to("bubble", pr.bubble, (double)(p - 1) / (m + p - 1));
            for (int st = 0; st < p; st++) {
                int want = k == DT_PIPE_GPIPE ? m : (p - st < m ? p - st : m);
                if (in[st] != want)
                    fail_msg("%s p %d m %d: stage %d holds %d micro-batches, expected %d",
                             dt_pipe_kind_name((dt_pipe_kind)k), p, m, st, in[st], want);
            }
            free(in);
            dt_pipe_free(&s);
        }
    }
}

static void test_interleaving_divides_the_bubble_by_v(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed() ^ 1);
    for (int rep = 0; rep < 100; rep++) {
        int p = tu_int(&r, 2, 8), v = tu_int(&r, 2, 4), m = p * tu_int(&r, 1, 6);
        double f = tu_uniform(&r, 0.1, 2), b = tu_uniform(&r, 0.1, 4);
        dt_pipe_cost c = {f / v, b / v, 0, 0};  // one chunk: 1/v of the stage's layers
        dt_pipe_sched s;
        build(&s, DT_PIPE_INTERLEAVED, p, m, v);
        dt_pipe_price pr = run(&s, &c, NULL);
        close_to("interleaved step", pr.step_s, m * (f + b) + (p - 1) * (f + b) / v);
        close_to("interleaved bubble", pr.bubble, (double)(p - 1) / (v * m + p - 1));
        dt_pipe_free(&s);
    }
}

// The reference: an op's finish is its duration after the later of the previous op of its
// stage and its input (+ a message when that ran on another stage), by recursion over the
// ops, each computed once.
typedef struct {
    const dt_pipe_sched *s;
    const dt_pipe_cost *c;
    double *memo;
    int *where;  // [bwd][vstage][micro] -> index into ops
} ref_ctx;

static double ref_finish(ref_ctx *x, int i, int st) {
    if (x->memo[i] >= 0) return x->memo[i];
    const dt_pipe_sched *s = x->s;
    const dt_pipe_op *o = &s->ops[i];
    int p = s->p, V = p * s->v, m = s->m, k = o->chunk * p + st;
    double t = i > s->start[st] ? ref_finish(x, i - 1, st) : 0.0;
    int dk = o->bwd ? (k == V - 1 ? k : k + 1) : k - 1, db = o->bwd && k < V - 1;
    if (dk >= 0) {
        int d = x->where[((size_t)db * V + dk) * m + o->micro];
        double in = ref_finish(x, d, dk % p) + (dk % p != st ? x->c[dk].p2p : 0.0);
        t = fmax(t, in);
    }
    x->memo[i] = t + (o->bwd ? x->c[k].recompute + x->c[k].bwd : x->c[k].fwd);
    return x->memo[i];
}

static void test_random_costs_match_the_longest_path(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed() ^ 2);
    for (int rep = 0; rep < 150; rep++) {
        int k = tu_int(&r, 0, 2), p = tu_int(&r, 1, 8), v = 1, m = tu_int(&r, 1, 24);
        if (k == DT_PIPE_INTERLEAVED) p = tu_int(&r, 2, 6), v = tu_int(&r, 2, 3),
                                      m = p * tu_int(&r, 1, 4);
        dt_pipe_cost c[64];  // virtual stage k's costs (p v <= 18)
        int recompute = tu_int(&r, 0, 1);
        for (int q = 0; q < p * v; q++)
            c[q] = (dt_pipe_cost){tu_uniform(&r, 0.01, 2), tu_uniform(&r, 0.01, 4),
                                  tu_uniform(&r, 0, 1), recompute ? tu_uniform(&r, 0, 2) : 0};
        dt_pipe_sched s;
        build(&s, (dt_pipe_kind)k, p, m, v);
        int n = s.start[p], V = p * v;
        ref_ctx x = {&s, c, malloc((size_t)n * sizeof(double)),
                     malloc((size_t)2 * V * m * sizeof(int))};
        for (int st = 0; st < p; st++)
            for (int i = s.start[st]; i < s.start[st + 1]; i++) {
                const dt_pipe_op *o = &s.ops[i];
                x.where[((size_t)o->bwd * V + o->chunk * p + st) * m + o->micro] = i;
                x.memo[i] = -1;
            }
        double want = 0, busy = 0;
        for (int st = 0; st < p; st++)
            if (s.start[st + 1] > s.start[st])
                want = fmax(want, ref_finish(&x, s.start[st + 1] - 1, st));
        for (int st = 0; st < p; st++) {  // stage st runs chunks st, st + p, ...
            double mine = 0;
            for (int q = st; q < p * v; q += p) mine += m * (c[q].fwd + c[q].bwd + c[q].recompute);
            busy = fmax(busy, mine);
        }
        dt_pipe_price pr;
        char why[256];
        if (dt_pipe_run(&s, c, p * v, &pr, NULL, why, sizeof why)) fail_msg("%s", why);
        close_to("step", pr.step_s, want);
        close_to("busiest stage", pr.busy_s, busy);
        if (dt_pipe_run(&s, c, 2, &pr, NULL, why, sizeof why) == 0 && p * v != 2)
            fail_msg("2 costs for %d virtual stages were taken", p * v);
        free(x.memo), free(x.where);
        dt_pipe_free(&s);
    }
}

static void expect_refusal(const dt_pipe_sched *s, const char *needle) {
    dt_pipe_cost c = {1, 2, 0.5, 0};
    char why[256] = "";
    if (dt_pipe_run(s, &c, 1, NULL, NULL, why, sizeof why) == 0)
        fail_msg("a broken schedule ran (expected \"%s\")", needle);
    if (!strstr(why, needle)) fail_msg("the refusal \"%s\" does not say \"%s\"", why, needle);
}

static void test_broken_schedules_are_refused_with_the_op(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed() ^ 3);
    for (int rep = 0; rep < 50; rep++) {
        int p = tu_int(&r, 2, 8), m = tu_int(&r, 2, 16);
        dt_pipe_sched s;
        build(&s, DT_PIPE_1F1B, p, m, 1);
        // stage st's first backward moved before everything it runs: it waits for a
        // gradient that needs this stage's own forward
        int st = tu_int(&r, 0, p - 1), i = s.start[st], b = i;
        while (!s.ops[b].bwd) b++;
        dt_pipe_op op = s.ops[b];
        memmove(&s.ops[i + 1], &s.ops[i], (size_t)(b - i) * sizeof op);
        s.ops[i] = op;
        expect_refusal(&s, "deadlock");
        dt_pipe_free(&s);
        build(&s, DT_PIPE_GPIPE, p, m, 1);
        s.ops[s.start[st]] = s.ops[s.start[st] + 1];  // a forward twice, another never
        expect_refusal(&s, "runs twice");
        dt_pipe_free(&s);
        build(&s, DT_PIPE_GPIPE, p, m, 1);
        s.ops[s.start[st]].micro = m;
        expect_refusal(&s, "outside");
        dt_pipe_free(&s);
    }
}

static void test_bad_sizes_are_refused_as_usage_errors(void **state) {
    (void)state;
    struct { int k, p, m, v; const char *needle; } bad[] = {
        {DT_PIPE_1F1B, 0, 4, 1, "stages"}, {DT_PIPE_GPIPE, 2, 0, 1, "micro-batches"},
        {DT_PIPE_INTERLEAVED, 4, 6, 2, "multiple"}, {DT_PIPE_INTERLEAVED, 4, 8, 1, "chunks"},
        {DT_PIPE_1F1B, 4, 8, 2, "only the interleaved"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dt_pipe_sched s;
        dt_error err = {0};
        if (dt_pipe_build(&s, (dt_pipe_kind)bad[i].k, bad[i].p, bad[i].m, bad[i].v, &err) == 0)
            fail_msg("case %zu was built", i);
        assert_int_equal(err.code, DT_EXIT_USAGE);
        if (!strstr(err.msg, bad[i].needle)) fail_msg("\"%s\" lacks \"%s\"", err.msg,
                                                      bad[i].needle);
    }
    assert_int_equal(dt_pipe_kind_parse("1f1b"), DT_PIPE_1F1B);
    assert_int_equal(dt_pipe_kind_parse("interleaved"), DT_PIPE_INTERLEAVED);
    assert_int_equal(dt_pipe_kind_parse("pipedream"), -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpipe_and_1f1b_take_m_plus_p_minus_1_slots),
        cmocka_unit_test(test_interleaving_divides_the_bubble_by_v),
        cmocka_unit_test(test_random_costs_match_the_longest_path),
        cmocka_unit_test(test_broken_schedules_are_refused_with_the_op),
        cmocka_unit_test(test_bad_sizes_are_refused_as_usage_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
