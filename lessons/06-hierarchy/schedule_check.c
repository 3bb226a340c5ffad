// schedule_check.c — lesson 06's side of the dry run (schedule_check.h): the shapes'
// communicators (an op's peer translated to a world rank), the student's schedules built for
// every rank and played by the kit's checks (lessons/kit/schedule_check.c), and the rounds
// and traffic of hier and the torus.
#include "schedule_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ceil_lg(int p) {
    int lg = 0;
    while ((1 << lg) < p) lg++;
    return lg;
}

void sc_place(const sc_shape *sh, int r, int comm, int *rank, int *size) {
    *rank = -1, *size = 0;
    int p = sh->p;
    if (!sh->torus && comm == DT_COMM_GROUP) {
        int first = r / sh->g * sh->g;
        *rank = r - first, *size = p - first < sh->g ? p - first : sh->g;
    } else if (!sh->torus && comm == DT_COMM_LEADERS && r % sh->g == 0) {
        *rank = r / sh->g, *size = (p + sh->g - 1) / sh->g;
    } else if (sh->torus && comm == DT_COMM_ROW) {
        *rank = r % sh->X, *size = sh->X;
    } else if (sh->torus && comm == DT_COMM_COL) {
        *rank = r / sh->X, *size = sh->Y;
    }
}

// The world rank of rank `peer` of communicator comm, seen from rank r (a member)
static int world_of(const sc_shape *sh, int r, int comm, int peer) {
    switch (comm) {
    case DT_COMM_GROUP: return r / sh->g * sh->g + peer;
    case DT_COMM_LEADERS: return peer * sh->g;
    case DT_COMM_ROW: return r / sh->X * sh->X + peer;
    default: return peer * sh->X + r % sh->X;  // DT_COMM_COL
    }
}

dt_lane *sc_build(const sc_shape *sh, size_t off, size_t n) {
    dt_lane *lanes = calloc((size_t)sh->p, sizeof *lanes);
    if (!lanes) abort();
    for (int r = 0; r < sh->p; r++) {
        int a, as, b, bs;
        if (sh->torus) {
            sc_place(sh, r, DT_COMM_ROW, &a, &as);
            sc_place(sh, r, DT_COMM_COL, &b, &bs);
            student_torus2d(&lanes[r], a, as, b, bs, off, n);
        } else {
            sc_place(sh, r, DT_COMM_GROUP, &a, &as);
            sc_place(sh, r, DT_COMM_LEADERS, &b, &bs);
            student_hier(&lanes[r], a, as, b, bs, off, n);
        }
        dt_lane_close(&lanes[r]);
    }
    return lanes;
}

void sc_free(dt_lane *lanes, int p) { sck_free(lanes, p); }

static void shape_str(const sc_shape *sh, char *s, size_t n) {
    if (sh->torus) snprintf(s, n, "P %d as %d×%d (X×Y)", sh->p, sh->X, sh->Y);
    else snprintf(s, n, "P %d in groups of %d", sh->p, sh->g);
}

// The shape's communicators, for the kit's dry run (lessons/kit/schedule_check.c)
static void place(const void *ctx, int r, int comm, int *rank, int *size) {
    sc_place(ctx, r, comm, rank, size);
}
static int world(const void *ctx, int r, int comm, int peer) {
    return world_of(ctx, r, comm, peer);
}
static void not_member(const void *ctx, int comm, char *why, size_t n) {
    const sc_shape *sh = ctx;
    snprintf(why, n, "is on %s, which %s", sck_comm_name(comm),
             comm == DT_COMM_LEADERS ? "only the leaders (rank 0 of each group) belong to"
             : sh->torus ? "is not a torus communicator (DT_COMM_ROW, DT_COMM_COL)"
             : "is not a hier communicator (DT_COMM_GROUP, DT_COMM_LEADERS)");
}
static sck_world shape_world(const sc_shape *sh) {
    sck_world w = {.p = sh->p, .name_comms = 1, .place = place, .world = world,
                   .not_member = not_member, .ctx = sh};
    shape_str(sh, w.shape, sizeof w.shape);
    return w;
}

int sc_well_formed(const dt_lane *lanes, const sc_shape *sh, size_t off, size_t n, char *hint,
                   size_t hn) {
    sck_world w = shape_world(sh);
    return sck_well_formed(lanes, &w, off, n, hint, hn);
}

int sc_matched(const dt_lane *lanes, const sc_shape *sh, char *hint, size_t hn) {
    sck_world w = shape_world(sh);
    return sck_matched(lanes, &w, hint, hn);
}

// Elements sent and received by rank r on communicator comm
static void traffic(const dt_lane *l, int comm, size_t *sent, size_t *recv) {
    *sent = *recv = 0;
    for (int i = 0; l->n_rounds && i < l->round_start[l->n_rounds]; i++)
        if (l->ops[i].comm != comm) continue;
        else if (l->ops[i].kind == DT_OP_SEND) *sent += l->ops[i].count;
        else *recv += l->ops[i].count;
}

static int hier_traffic(const dt_lane *lanes, const sc_shape *sh, size_t n, char *hint,
                        size_t hn) {
    int g0 = sh->p < sh->g ? sh->p : sh->g, L = (sh->p + sh->g - 1) / sh->g;
    int want = 2 * ceil_lg(g0) + 2 * (L - 1);
    double cross = 2.0 * (double)n * (L - 1) / L + L, inside = (double)n * ceil_lg(g0);
    char shape[64];
    shape_str(sh, shape, sizeof shape);
    for (int r = 0; r < sh->p; r++) {
        size_t s, v, gs, gv;
        traffic(&lanes[r], DT_COMM_LEADERS, &s, &v);
        traffic(&lanes[r], DT_COMM_GROUP, &gs, &gv);
        if (r % sh->g == 0 && L > 1 && (s == 0 || v == 0)) {
            snprintf(hint, hn, "%s, n %zu: leader rank %d sends %zu and receives %zu elements "
                     "on DT_COMM_LEADERS: the leaders' allreduce is missing", shape, n, r, s, v);
            return 0;
        }
        if (s > cross || v > cross) {
            snprintf(hint, hn, "%s, n %zu: rank %d sends %zu and receives %zu elements across "
                     "the groups; a ring among the L = %d leaders moves 2n(L-1)/L = %.0f each "
                     "way", shape, n, r, s, v, L, cross - L);
            return 0;
        }
        if (gs > inside + 0.5 || gv > inside + 0.5) {
            snprintf(hint, hn, "%s, n %zu: rank %d sends %zu and receives %zu elements inside "
                     "its group; a binomial reduce and broadcast move at most n·⌈lg g⌉ = %.0f "
                     "each way through a rank", shape, n, r, gs, gv, inside);
            return 0;
        }
    }
    if (lanes[0].n_rounds != want) {
        snprintf(hint, hn, "%s, n %zu: rank 0 (a leader, the longest) has %d rounds; hier has "
                 "2⌈lg g⌉ + 2(L-1) = %d + %d (a binomial reduce and broadcast in its group of "
                 "%d, a ring among L = %d leaders)%s", shape, n, lanes[0].n_rounds,
                 2 * ceil_lg(g0), 2 * (L - 1), g0, L,
                 lanes[0].n_rounds == 0 ? ": the schedule is empty" : "");
        return 0;
    }
    return 1;
}

static int torus_traffic(const dt_lane *lanes, const sc_shape *sh, size_t n, char *hint,
                         size_t hn) {
    int X = sh->X, Y = sh->Y, want = 2 * (X - 1) + 2 * (Y - 1), most = 0, at = 0;
    double row = 2.0 * (double)n * (X - 1) / X + X;
    double col = 2.0 * ((double)n / X + 1) * (Y - 1) / Y + Y;
    char shape[64];
    shape_str(sh, shape, sizeof shape);
    for (int r = 0; r < sh->p; r++) {
        size_t s, v, cs, cv;
        traffic(&lanes[r], DT_COMM_ROW, &s, &v);
        traffic(&lanes[r], DT_COMM_COL, &cs, &cv);
        if (s > row || v > row) {
            snprintf(hint, hn, "%s, n %zu: rank %d sends %zu and receives %zu elements along "
                     "its row; a ring reduce-scatter and allgather move 2n(X-1)/X = %.0f each "
                     "way", shape, n, r, s, v, row - X);
            return 0;
        }
        if (cs > col || cv > col) {
            snprintf(hint, hn, "%s, n %zu: rank %d sends %zu and receives %zu elements along "
                     "its column; the column's ring carries the rank's own chunk only, "
                     "2(n/X)(Y-1)/Y = %.0f each way (the whole range along the column is Y "
                     "times too much)", shape, n, r, cs, cv, col - Y);
            return 0;
        }
        if (lanes[r].n_rounds > most) most = lanes[r].n_rounds, at = r;
    }
    if (most != want) {
        snprintf(hint, hn, "%s, n %zu: the longest rank (rank %d) has %d rounds; the 2-D "
                 "torus has 2(X-1) + 2(Y-1) = %d (rings along the row and the column)%s",
                 shape, n, at, most, want, most == 0 ? ": the schedule is empty" : "");
        return 0;
    }
    return 1;
}

int sc_rounds_and_traffic(const dt_lane *lanes, const sc_shape *sh, size_t n, char *hint,
                          size_t hn) {
    return sh->torus ? torus_traffic(lanes, sh, n, hint, hn) : hier_traffic(lanes, sh, n, hint, hn);
}
