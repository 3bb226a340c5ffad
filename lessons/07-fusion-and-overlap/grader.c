// grader.c — lesson 07's grader: the bucket planner and the overlap (student_fusion.h).
// An MPI program; grade.sh runs it under mpirun for P = 1, 2 and 3.
//  - the planner, on random backward passes (empty events, ties, thresholds met exactly):
//    plan_bytes against the grader's own walk of the threshold rule, event for event;
//    plan_segments' buckets tile backward as the contract says, and their modelled finish
//    equals the best over every possible split (enumerated: m <= 12 nonempty events);
//  - the overlap, on a real network of nn/ (resnet8, a different random batch per rank):
//    one backward with overlap_ready as its gradient-ready callback, then overlap_finish.
//    Every call of dt_allreduce_start is intercepted (the grader is linked with
//    -Wl,--wrap=dt_allreduce_start): no bucket may start before its last gradient is final,
//    and each must start in the callback of that very event; the gradients must then hold
//    the bits of reducing the same buckets one by one after backward, without overlap.
//    Two plans: a byte threshold (a few buckets) and no fusion (one per layer).
// `grader --instructor` (instructor/grade.sh, not in the handout): the planner's passes up to
// 16 events and K up to 10 (public: 12 events, K <= 5).
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kit/grade.h"
#include "grader_overlap.h"
#include "student_fusion.h"

#define CHECK_BYTES "bytes_buckets_close_at_the_threshold"
#define CHECK_TILE "segments_buckets_tile_backward"
#define CHECK_MIN "segments_minimise_the_modelled_finish"
#define CHECK_EARLY "overlap_no_bucket_starts_before_its_last_gradient"
#define CHECK_SOON "overlap_starts_each_bucket_as_soon_as_it_is_ready"
#define CHECK_BITS "overlap_result_bit_identical_without_overlap"

#define MAX_EV 20
#define CASES 300

static int max_events = 12, max_k = 5;  // the passes drawn; --instructor: 16 and 10 (main)

// ---------------------------------------------------------------- random backward passes
typedef struct {
    dt_grad_event ev[MAX_EV];
    int n_ev, m;  // m: nonempty events
    size_t elem_bytes;
} pass_t;

static void random_pass(uint64_t *rng, pass_t *p) {
    p->n_ev = grade_int(rng, 1, max_events);
    p->elem_bytes = grade_int(rng, 0, 1) ? 4 : 2;
    size_t size[MAX_EV], n = 0;
    p->m = 0;
    for (int i = 0; i < p->n_ev; i++) {
        int empty = grade_int(rng, 0, 9) < 3;
        size[i] = empty ? 0 : (size_t)grade_int(rng, 1, grade_int(rng, 0, 3) ? 5000 : 50);
        n += size[i], p->m += !empty;
    }
    double t = 0;
    for (int i = 0; i < p->n_ev; i++) {
        t += grade_int(rng, 0, 4) ? (grade_uniform(rng) + 1.0) * 1e-3 : 0.0;  // ties too
        p->ev[i].ready = t;
        p->ev[i].hi = i == 0 ? n : p->ev[i - 1].lo;
        p->ev[i].lo = p->ev[i].hi - size[i];
    }
}

static void describe(const pass_t *p, char *s, size_t cap) {
    size_t k = (size_t)snprintf(s, cap, "events (elements, ready ms) in backward order:");
    for (int i = 0; i < p->n_ev && k < cap; i++)
        k += (size_t)snprintf(s + k, cap - k, " %d:(%zu, %.3g)", i, p->ev[i].hi - p->ev[i].lo,
                              p->ev[i].ready * 1e3);
}
static void buckets_str(const dt_bucket *b, int nb, char *s, size_t cap) {
    size_t k = (size_t)snprintf(s, cap, "%d bucket%s", nb, nb == 1 ? "" : "s");
    for (int j = 0; j < nb && j < 12 && k < cap; j++)
        k += (size_t)snprintf(s + k, cap - k, " [%d..%d]", b[j].first_event, b[j].last_event);
}

// The threshold rule, the grader's way: the nonempty events as units; a bucket closes at a
// unit when its bytes reach the threshold or at the last unit; then events are assigned.
static int ref_bytes(const pass_t *p, size_t threshold, dt_bucket *out) {
    int unit[MAX_EV], m = 0, nb = 0;
    for (int i = 0; i < p->n_ev; i++)
        if (p->ev[i].hi > p->ev[i].lo) unit[m++] = i;
    size_t held = 0;
    int first = 0;
    for (int u = 0; u < m; u++) {
        held += (p->ev[unit[u]].hi - p->ev[unit[u]].lo) * p->elem_bytes;
        if (held >= threshold || u == m - 1) {
            out[nb].first_event = first;
            out[nb].last_event = u == m - 1 ? p->n_ev - 1 : unit[u];
            first = out[nb].last_event + 1, nb++, held = 0;
        }
    }
    return nb;
}

static void check_bytes(grade_t *g, uint64_t *rng) {
    char hint[1500] = "";
    int ok = 1, cases = 0;
    for (int c = 0; ok && c < CASES; c++) {
        pass_t p;
        random_pass(rng, &p);
        size_t total = p.ev[0].hi * p.elem_bytes, prefix = 0;
        int upto = grade_int(rng, 1, p.n_ev);  // a threshold met exactly by a prefix
        for (int i = 0; i < upto; i++) prefix += (p.ev[i].hi - p.ev[i].lo) * p.elem_bytes;
        size_t ths[4] = {prefix, (size_t)grade_int(rng, 0, (int)total + 1), 0, total + 1};
        for (int t = 0; ok && t < 4; t++) {
            dt_bucket want[MAX_EV], got[MAX_EV + 1];
            memset(got, 0, sizeof got);
            int nw = ref_bytes(&p, ths[t], want), ng = plan_bytes(p.ev, p.n_ev, p.elem_bytes, ths[t], got);
            int same = nw == ng;
            for (int j = 0; same && j < nw; j++)
                same = want[j].first_event == got[j].first_event &&
                       want[j].last_event == got[j].last_event;
            cases++;
            if (!same) {
                char d[700], w[200], gt[200], why[200] = "";
                describe(&p, d, sizeof d);
                buckets_str(want, nw, w, sizeof w);
                buckets_str(got, ng < 0 ? 0 : ng > MAX_EV ? MAX_EV : ng, gt, sizeof gt);
                // the one difference a hint can name: the last bucket's end (trailing empty
                // events), or the first bucket's close at a threshold met exactly
                int tail_only = ng == nw && nw > 0, first_differs = ng > 0 && nw > 0 &&
                    got[0].last_event != want[0].last_event;
                for (int j = 0; tail_only && j < nw; j++)
                    tail_only = got[j].first_event == want[j].first_event &&
                                (j == nw - 1 || got[j].last_event == want[j].last_event);
                if (tail_only && got[nw - 1].last_event < p.n_ev - 1)
                    snprintf(why, sizeof why, " (events %d..%d come after the last gradient and "
                             "are empty: they join the last bucket, which ends at event n_ev-1 = "
                             "%d)", got[nw - 1].last_event + 1, p.n_ev - 1, p.n_ev - 1);
                else if (ths[t] == prefix && t == 0 && first_differs)
                    snprintf(why, sizeof why, " (the threshold equals the bytes of the first "
                             "events: >= closes there)");
                snprintf(hint, sizeof hint, "threshold %zu bytes, %zu bytes per element; %s: "
                         "expected %s (first..last event), got %s%s", ths[t], p.elem_bytes, d,
                         w, gt, why);
                ok = 0;
            }
        }
    }
    if (ok) snprintf(hint, sizeof hint, "(%d random backward passes and thresholds, some met "
                     "exactly)", cases);
    grade_check(g, ok, CHECK_BYTES, "%s", hint);
}

// ---------------------------------------------------------------- segments
typedef struct { double alpha, beta; } cost_ctx;
static double cost_ab(void *ctx, size_t bytes) {
    const cost_ctx *c = ctx;
    return c->alpha + (double)bytes * c->beta;
}

// Valid as the contract says? 1, or 0 with the reason in why.
static int tiles(const pass_t *p, int k, const dt_bucket *b, int nb, char *why, size_t n) {
    int want = k < p->m ? k : p->m;
    if (nb != want)
        return snprintf(why, n, "%d buckets, expected min(K, m) = min(%d, %d) = %d", nb, k,
                        p->m, want), 0;
    for (int j = 0; j < nb; j++) {
        int first = j == 0 ? 0 : b[j - 1].last_event + 1, last = b[j].last_event, nonempty = 0;
        if (b[j].first_event != first)
            return snprintf(why, n, "bucket %d starts at event %d, expected %d (the event after "
                            "the previous bucket)", j, b[j].first_event, first), 0;
        if (last < first || last >= p->n_ev || (j == nb - 1 && last != p->n_ev - 1))
            return snprintf(why, n, "bucket %d ends at event %d; %s", j, last, j == nb - 1
                            ? "the last bucket ends at event n_ev-1" : "out of order"), 0;
        for (int i = first; i <= last; i++) nonempty += p->ev[i].hi > p->ev[i].lo;
        if (!nonempty)
            return snprintf(why, n, "bucket %d (events %d..%d) holds no gradient", j, first,
                            last), 0;
        if (j < nb - 1 && p->ev[last].hi == p->ev[last].lo)
            return snprintf(why, n, "bucket %d ends at event %d, which is empty: an empty event "
                            "joins the bucket below it, so a bucket ends at a nonempty event",
                            j, last), 0;
    }
    return 1;
}

// The best finish over every split of the m units into k buckets (enumerated)
static double best_finish(const pass_t *p, int k, cost_ctx *cc) {
    int unit[MAX_EV], m = 0;
    for (int i = 0; i < p->n_ev; i++)
        if (p->ev[i].hi > p->ev[i].lo) unit[m++] = i;
    if (k > m) k = m;
    double best = INFINITY;
    for (unsigned mask = 0; mask < (1u << (m - 1)); mask++) {  // bit u: a cut after unit u
        if (__builtin_popcount(mask) != k - 1) continue;
        dt_bucket b[MAX_EV];
        int nb = 0, first = 0;
        for (int u = 0; u < m; u++)
            if (u == m - 1 || (mask >> u & 1u)) {
                b[nb].first_event = first;
                b[nb].last_event = u == m - 1 ? p->n_ev - 1 : unit[u];
                first = b[nb].last_event + 1, nb++;
            }
        plan_times(p->ev, p->elem_bytes, cost_ab, cc, b, nb);
        if (b[nb - 1].finish < best) best = b[nb - 1].finish;
    }
    return best;
}

static void check_segments(grade_t *g, uint64_t *rng) {
    char hint[2][1500] = {"", ""};
    int ok[2] = {1, 1}, cases = 0;
    for (int c = 0; (ok[0] || ok[1]) && c < CASES; c++) {
        pass_t p;
        random_pass(rng, &p);
        int k = grade_int(rng, 1, max_k);
        cost_ctx cc = {(grade_uniform(rng) + 1.0) * 5e-4, (grade_uniform(rng) + 1.0) * 1e-7};
        dt_bucket got[MAX_EV + 1];
        memset(got, 0, sizeof got);
        int ng = plan_segments(p.ev, p.n_ev, p.elem_bytes, k, cost_ab, &cc, got);
        char why[300], d[700];
        describe(&p, d, sizeof d);
        cases++;
        if (!tiles(&p, k, got, ng < 0 || ng > MAX_EV ? -1 : ng, why, sizeof why)) {
            if (ok[0]) snprintf(hint[0], sizeof hint[0], "K = %d; %s: %s", k, d, why);
            ok[0] = ok[1] = 0;
            snprintf(hint[1], sizeof hint[1], "not checked: fix %s first (%s)", CHECK_TILE, why);
            continue;
        }
        if (p.m == 0) continue;
        plan_times(p.ev, p.elem_bytes, cost_ab, &cc, got, ng);
        double best = best_finish(&p, k, &cc), f = got[ng - 1].finish;
        if (ok[1] && fabs(f - best) > 1e-12 + 1e-9 * fabs(best)) {
            char b[200];
            buckets_str(got, ng, b, sizeof b);
            snprintf(hint[1], sizeof hint[1], "K = %d, cost %.3g s + bytes × %.3g s/B, %zu bytes "
                     "per element; %s: your %s finish at %.6f ms; the best split of %d buckets "
                     "finishes at %.6f ms", k, cc.alpha, cc.beta, p.elem_bytes, d, b, f * 1e3,
                     ng, best * 1e3);
            ok[1] = 0;
        }
    }
    if (ok[0]) snprintf(hint[0], sizeof hint[0], "(%d random passes, K = 1..%d)", cases, max_k);
    if (ok[1]) snprintf(hint[1], sizeof hint[1], "(%d random passes, K = 1..%d, against every "
                        "split)", cases, max_k);
    grade_check(g, ok[0], CHECK_TILE, "%s", hint[0]);
    grade_check(g, ok[1], CHECK_MIN, "%s", hint[1]);
}


int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc > 1 && strcmp(argv[1], "--instructor") == 0) max_events = 16, max_k = 10;
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    grade_t g = grade_begin("07 fusion and overlap", rank != 0);
    MPI_Bcast(&g.seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("# P %d\n", p);
    uint64_t rng = g.seed ^ 0x46555349304eull;
    if (!rng) rng = 1;
    // the planner: pure arithmetic, the same on every rank (only rank 0 prints)
    check_bytes(&g, &rng);
    check_segments(&g, &rng);
    check_overlap(&g, g.seed);
    int rc = grade_end(&g);
    MPI_Finalize();
    return rank == 0 ? rc : 0;
}
