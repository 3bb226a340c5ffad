// schedule_check.c — lesson 05's side of the dry run (schedule_check.h): the student's
// schedule built for every rank, played by the kit's checks (lessons/kit/schedule_check.c),
// and Rabenseifner's rounds and sizes.
#include "schedule_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

dt_lane *sc_build(int p, int comm, size_t off, size_t n) {
    dt_lane *lanes = calloc((size_t)p, sizeof *lanes);
    if (!lanes) abort();
    for (int r = 0; r < p; r++) {
        student_rhd(&lanes[r], comm, r, p, off, n);
        dt_lane_close(&lanes[r]);
    }
    return lanes;
}

void sc_free(dt_lane *lanes, int p) { sck_free(lanes, p); }

// The one communicator of Rabenseifner's schedule, for the kit's dry run
// (lessons/kit/schedule_check.c): every rank is rank r of p on `comm`.
typedef struct {
    int p, comm;
} one_comm;
static void place(const void *ctx, int r, int comm, int *rank, int *size) {
    const one_comm *c = ctx;
    *rank = comm == c->comm ? r : -1, *size = comm == c->comm ? c->p : 0;
}
static int world(const void *ctx, int r, int comm, int peer) {
    (void)ctx, (void)r, (void)comm;
    return peer;
}
static void not_member(const void *ctx, int comm, char *why, size_t n) {
    snprintf(why, n, "is on communicator %d, not the `comm` argument (%d)", comm,
             ((const one_comm *)ctx)->comm);
}
static sck_world world_of(const one_comm *c) {
    sck_world w = {.p = c->p, .name_comms = 0, .place = place, .world = world,
                   .not_member = not_member, .ctx = c,
                   .self_hint = " (a partner nr ^ mask used as a real rank, or the fold's "
                                "partner wrong?)"};
    snprintf(w.shape, sizeof w.shape, "p %d", c->p);
    return w;
}

int sc_well_formed(const dt_lane *lanes, int p, int comm, size_t off, size_t n, char *hint,
                   size_t hn) {
    one_comm c = {p, comm};
    sck_world w = world_of(&c);
    return sck_well_formed(lanes, &w, off, n, hint, hn);
}

int sc_matched(const dt_lane *lanes, int p, char *hint, size_t hn) {
    one_comm c = {p, DT_COMM_ALL};
    sck_world w = world_of(&c);
    return sck_matched(lanes, &w, hint, hn);
}

int sc_rounds_and_sizes(const dt_lane *lanes, int p, size_t n, char *hint, size_t hn) {
    int pp = 1, lg = 0;
    while (pp * 2 <= p) pp *= 2, lg++;
    int fold = pp != p;
    int want_rounds = 2 * lg + 2 * fold, most = 0, at = 0;
    // Rabenseifner's elements through one rank, each way: n(p'-1)/p' halving, the same
    // doubling, and n for a rank of the fold
    double want = 2.0 * (double)n * (pp - 1) / pp + (fold ? (double)n : 0.0);
    double slack = pp + 2 * lg;
    for (int r = 0; r < p; r++) {
        const dt_lane *l = &lanes[r];
        size_t sent = 0, recv = 0;
        for (int i = 0; l->n_rounds && i < l->round_start[l->n_rounds]; i++)
            if (l->ops[i].kind == DT_OP_SEND) sent += l->ops[i].count;
            else recv += l->ops[i].count;
        if (l->n_rounds > most) most = l->n_rounds, at = r;
        if (sent > want + slack || recv > want + slack) {
            snprintf(hint, hn, "p %d, n %zu: rank %d sends %zu and receives %zu elements; "
                     "Rabenseifner moves at most 2n(p'-1)/p'%s = %.0f each way through a "
                     "rank (p' = %d): whole windows sent where half of one would do?", p, n,
                     r, sent, recv, fold ? " + n" : "", want, pp);
            return 0;
        }
    }
    if (most != want_rounds) {
        snprintf(hint, hn, "p %d, n %zu: the longest rank (rank %d) has %d rounds; "
                 "Rabenseifner's has 2·lg p' = %d%s (p' = %d)%s", p, n, at, most, 2 * lg,
                 fold ? " + 2 for the fold in and out" : "", pp,
                 most == 0 ? ": the schedule is empty" : "");
        return 0;
    }
    return 1;
}
