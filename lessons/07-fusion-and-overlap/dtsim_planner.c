// dtsim_planner.c — lesson 07's planner inside dtsim. The rank program
// build/lessons/07/<variant>/dtsim_rank.so is linked with -Wl,--wrap=dt_fusion_plan, so the
// trainer's call (nn/train_comm.c) lands here: --fusion segments:K runs the student's
// plan_segments, a byte threshold their plan_bytes; none and auto stay dtlab's. The plan is
// held to nn/coll/fusion.h's contract before the trainer runs it (a plan that drops
// gradients would simulate no communication at all, and look fast); the given plan_times()
// fills the element ranges and the one-channel model's times, as dt_fusion_plan does. Rank
// 0 prints the plan on stderr, one line (the answer sheet's question 3 reads it). Provided
// by the lesson; `DTSIM_RANK_SO=build/lessons/07/student/dtsim_rank.so build/dtsim ...` runs it.
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "student_fusion.h"

int __real_dt_fusion_plan(const dt_grad_event *ev, int n_ev, size_t elem_bytes,
                          const dt_fusion_opts *o, dt_comm_cost_fn cost, void *ctx,
                          dt_bucket *out, dt_error *err);
int __wrap_dt_fusion_plan(const dt_grad_event *ev, int n_ev, size_t elem_bytes,
                          const dt_fusion_opts *o, dt_comm_cost_fn cost, void *ctx,
                          dt_bucket *out, dt_error *err);

// What is wrong with the plan (NULL: nothing), in words, into why.
static const char *bad_plan(const dt_grad_event *ev, int n_ev, const dt_bucket *b, int nb,
                            int want, char *why, size_t n) {
    int m = 0;
    for (int i = 0; i < n_ev; i++) m += ev[i].lo < ev[i].hi;
    if (want > 0 && nb != want) {
        snprintf(why, n, "%d buckets, expected min(K, m) = %d (m = %d nonempty events)", nb,
                 want, m);
        return why;
    }
    if (nb < 1 || nb > n_ev) {
        snprintf(why, n, "%d buckets for %d events (%d nonempty): every gradient must be in "
                 "one", nb, n_ev, m);
        return why;
    }
    for (int j = 0; j < nb; j++) {
        int first = j == 0 ? 0 : b[j - 1].last_event + 1;
        if (b[j].first_event != first || b[j].last_event < b[j].first_event ||
            b[j].last_event >= n_ev) {
            snprintf(why, n, "bucket %d holds events %d..%d; it must start at event %d and "
                     "end before event %d", j, b[j].first_event, b[j].last_event, first, n_ev);
            return why;
        }
        int full = 0;
        for (int i = b[j].first_event; i <= b[j].last_event; i++) full += ev[i].lo < ev[i].hi;
        if (!full || (j < nb - 1 && ev[b[j].last_event].lo == ev[b[j].last_event].hi)) {
            snprintf(why, n, "bucket %d (events %d..%d) %s", j, b[j].first_event,
                     b[j].last_event, full ? "ends at an empty event (it joins the bucket "
                     "below)" : "holds no gradient");
            return why;
        }
    }
    if (b[nb - 1].last_event != n_ev - 1) {
        snprintf(why, n, "the last bucket ends at event %d, not at event %d (the last)",
                 b[nb - 1].last_event, n_ev - 1);
        return why;
    }
    return NULL;
}

int __wrap_dt_fusion_plan(const dt_grad_event *ev, int n_ev, size_t elem_bytes,
                          const dt_fusion_opts *o, dt_comm_cost_fn cost, void *ctx,
                          dt_bucket *out, dt_error *err) {
    // none, auto, and the trainer's one whole-buffer bucket (a threshold of SIZE_MAX, the
    // step that measures the ready times for segments:K) are not the lesson's
    if ((o->mode != DT_FUSION_SEGMENTS && o->mode != DT_FUSION_BYTES) ||
        (o->mode == DT_FUSION_BYTES && o->bytes == SIZE_MAX))
        return __real_dt_fusion_plan(ev, n_ev, elem_bytes, o, cost, ctx, out, err);
    int segments = o->mode == DT_FUSION_SEGMENTS, m = 0, rank = 0;
    for (int i = 0; i < n_ev; i++) m += ev[i].lo < ev[i].hi;
    if (m == 0) return 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *fn = segments ? "plan_segments" : "plan_bytes";
    int nb = segments ? plan_segments(ev, n_ev, elem_bytes, o->segments, cost, ctx, out)
                      : plan_bytes(ev, n_ev, elem_bytes, o->bytes, out);
    char why[300];
    if (bad_plan(ev, n_ev, out, nb, segments ? (o->segments < m ? o->segments : m) : 0, why,
                 sizeof why)) {
        if (rank == 0) fprintf(stderr, "lesson 07: your %s: %s\n", fn, why);
        return dt_fail(err, DT_EXIT_RUNTIME, "lesson 07: your %s: %s", fn, why);
    }
    plan_times(ev, elem_bytes, cost, ctx, out, nb);
    if (rank == 0) {
        char line[4096];
        int at = snprintf(line, sizeof line, "lesson 07: your %s cut %d events into %d "
                          "bucket%s, in backward order (MB, events):", fn, n_ev, nb,
                          nb == 1 ? "" : "s");
        for (int j = 0; j < nb && at > 0 && (size_t)at < sizeof line; j++)
            at += snprintf(line + at, sizeof line - (size_t)at, " %.2f (%d..%d)",
                           (double)(out[j].hi - out[j].lo) * (double)elem_bytes / 1e6,
                           out[j].first_event, out[j].last_event);
        fprintf(stderr, "%s\n", line);
    }
    return nb;
}
