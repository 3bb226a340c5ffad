// schedule_check.c — the dry run of schedule_check.h: the student's schedules read op by op,
// every rank's at once, before any message is sent. (Lesson 05's checker, with messages on
// several communicators: an op's peer is translated to a world rank first.)
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

void sc_free(dt_lane *lanes, int p) {
    for (int r = 0; r < p; r++) {
        dt_sched s = {.lanes = {lanes[r]}, .n_lanes = 1};
        dt_sched_free(&s);
    }
    free(lanes);
}

static const char *kind_name(int k) {
    return k == DT_OP_SEND ? "send" : k == DT_OP_RECV_ADD ? "receive-add"
         : k == DT_OP_RECV_COPY ? "receive-copy" : "other";
}
static const char *comm_name(int c) {
    static const char *const names[DT_COMM_COUNT] = {"DT_COMM_ALL", "DT_COMM_GROUP",
        "DT_COMM_LEADERS", "DT_COMM_CROSS", "DT_COMM_ROW", "DT_COMM_COL"};
    return c >= 0 && c < DT_COMM_COUNT ? names[c] : "an unknown communicator";
}
static int is_recv(int k) { return k == DT_OP_RECV_ADD || k == DT_OP_RECV_COPY; }
static int overlap(const dt_op *a, const dt_op *b) {
    return a->off < b->off + b->count && b->off < a->off + a->count;
}
static void shape_str(const sc_shape *sh, char *s, size_t n) {
    if (sh->torus) snprintf(s, n, "P %d as %d×%d (X×Y)", sh->p, sh->X, sh->Y);
    else snprintf(s, n, "P %d in groups of %d", sh->p, sh->g);
}

int sc_well_formed(const dt_lane *lanes, const sc_shape *sh, size_t off, size_t n, char *hint,
                   size_t hn) {
    char shape[64];
    shape_str(sh, shape, sizeof shape);
    for (int r = 0; r < sh->p; r++) {
        const dt_lane *l = &lanes[r];
        for (int k = 0; k < l->n_rounds; k++)
            for (int i = l->round_start[k]; i < l->round_start[k + 1]; i++) {
                const dt_op *op = &l->ops[i];
                const char *bad = NULL;
                char why[220] = "";
                int me, size;
                sc_place(sh, r, op->comm, &me, &size);
                if (op->kind != DT_OP_SEND && !is_recv(op->kind))
                    bad = "is not a send, receive-add or receive-copy";
                else if (size == 0)
                    snprintf(why, sizeof why, "is on %s, which %s", comm_name(op->comm),
                             op->comm == DT_COMM_LEADERS ? "only the leaders (rank 0 of each "
                             "group) belong to" : sh->torus ? "is not a torus communicator "
                             "(DT_COMM_ROW, DT_COMM_COL)" : "is not a hier communicator "
                             "(DT_COMM_GROUP, DT_COMM_LEADERS)"), bad = why;
                else if (op->peer < 0 || op->peer >= size)
                    snprintf(why, sizeof why, "names peer %d, outside 0..%d of %s (peers are "
                             "ranks in that communicator)", op->peer, size - 1,
                             comm_name(op->comm)), bad = why;
                else if (op->peer == me)
                    snprintf(why, sizeof why, "names the rank itself (rank %d of %s) as its "
                             "peer", me, comm_name(op->comm)), bad = why;
                else if (op->off < off || op->off + op->count > off + n)
                    snprintf(why, sizeof why, "covers elements [%zu, %zu), outside the range "
                             "[%zu, %zu) (offsets are absolute: add `off`)", op->off,
                             op->off + op->count, off, off + n), bad = why;
                for (int j = l->round_start[k]; !bad && j < l->round_start[k + 1]; j++) {
                    const dt_op *o2 = &l->ops[j];
                    if (j != i && op->kind == DT_OP_RECV_COPY && overlap(op, o2))
                        snprintf(why, sizeof why, "overlaps the %s of [%zu, %zu) in the same "
                                 "round: the copy lands while that one is in flight",
                                 kind_name(o2->kind), o2->off, o2->off + o2->count), bad = why;
                }
                if (bad) {
                    snprintf(hint, hn, "%s, range [%zu, %zu): rank %d's round %d, its %s of "
                             "%zu elements at %zu with peer %d on %s, %s", shape, off, off + n,
                             r, k, kind_name(op->kind), op->count, op->off, op->peer,
                             comm_name(op->comm), bad);
                    return 0;
                }
            }
    }
    return 1;
}

// One message end, in world ranks: its communicator, its place among the messages between
// the pair on it, the round and the op's index in its lane.
typedef struct {
    int src, dst, comm, seq, round, idx;
    size_t count;
} end_t;

static int by_pair(const void *a, const void *b) {
    const end_t *x = a, *y = b;
    if (x->src != y->src) return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
    if (x->comm != y->comm) return x->comm < y->comm ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

int sc_matched(const dt_lane *lanes, const sc_shape *sh, char *hint, size_t hn) {
    int p = sh->p;
    char shape[64];
    shape_str(sh, shape, sizeof shape);
    size_t total = 0;
    for (int r = 0; r < p; r++) total += lanes[r].n_rounds ? (size_t)lanes[r].n_ops : 0;
    end_t *snd = calloc(total + 1, sizeof *snd), *rcv = calloc(total + 1, sizeof *rcv);
    int *seq = calloc((size_t)p * DT_COMM_COUNT, sizeof *seq);
    int **other = calloc((size_t)p, sizeof *other), **world = calloc((size_t)p, sizeof *world);
    size_t ns = 0, nrv = 0;
    if (!snd || !rcv || !seq || !other || !world) abort();
    for (int r = 0; r < p; r++) {
        other[r] = malloc(((size_t)lanes[r].n_ops + 1) * sizeof(int));
        world[r] = malloc(((size_t)lanes[r].n_ops + 1) * sizeof(int));
        if (!other[r] || !world[r]) abort();
    }
    // in the order the runner posts them: round by round, the receives, then the sends
    for (int pass = 0; pass < 2; pass++)
        for (int r = 0; r < p; r++) {
            const dt_lane *l = &lanes[r];
            memset(seq, 0, (size_t)p * DT_COMM_COUNT * sizeof *seq);
            for (int k = 0; k < l->n_rounds; k++)
                for (int i = l->round_start[k]; i < l->round_start[k + 1]; i++) {
                    const dt_op *op = &l->ops[i];
                    int q = world_of(sh, r, op->comm, op->peer), *s = &seq[q * DT_COMM_COUNT + op->comm];
                    world[r][i] = q;
                    if (pass == 0 && is_recv(op->kind))
                        rcv[nrv++] = (end_t){q, r, op->comm, (*s)++, k, i, op->count};
                    if (pass == 1 && op->kind == DT_OP_SEND)
                        snd[ns++] = (end_t){r, q, op->comm, (*s)++, k, i, op->count};
                }
        }
    qsort(snd, ns, sizeof *snd, by_pair);
    qsort(rcv, nrv, sizeof *rcv, by_pair);
    int ok = 1;
    size_t a = 0, b = 0;
    while (ok && (a < ns || b < nrv)) {
        int c = a == ns ? 1 : b == nrv ? -1 : by_pair(&snd[a], &rcv[b]);
        if (c < 0) {
            snprintf(hint, hn, "%s: rank %d's message %d to rank %d on %s (its round %d, %zu "
                     "elements) is never received: rank %d posts fewer receives from rank %d "
                     "there", shape, snd[a].src, snd[a].seq + 1, snd[a].dst,
                     comm_name(snd[a].comm), snd[a].round, snd[a].count, snd[a].dst,
                     snd[a].src), ok = 0;
        } else if (c > 0) {
            snprintf(hint, hn, "%s: rank %d waits for a message %d from rank %d on %s (its "
                     "round %d, %zu elements) that rank %d never sends", shape, rcv[b].dst,
                     rcv[b].seq + 1, rcv[b].src, comm_name(rcv[b].comm), rcv[b].round,
                     rcv[b].count, rcv[b].src), ok = 0;
        } else if (snd[a].count != rcv[b].count) {
            snprintf(hint, hn, "%s: rank %d's message %d to rank %d on %s (its round %d) has "
                     "%zu elements, but rank %d's matching receive (its round %d) expects %zu",
                     shape, snd[a].src, snd[a].seq + 1, snd[a].dst, comm_name(snd[a].comm),
                     snd[a].round, snd[a].count, rcv[b].dst, rcv[b].round, rcv[b].count), ok = 0;
        } else {  // each end learns the round of the other's op
            other[snd[a].src][snd[a].idx] = rcv[b].round;
            other[rcv[b].dst][rcv[b].idx] = snd[a].round;
            a++, b++;
        }
    }
    // Run the rounds: a rank's round completes once every peer has posted the other end of
    // each of its messages (that peer is in that round or past it).
    int *cur = calloc((size_t)p, sizeof *cur);
    if (!cur) abort();
    for (int moved = 1; ok && moved;) {
        moved = 0;
        for (int r = 0; r < p; r++) {
            const dt_lane *l = &lanes[r];
            while (cur[r] < l->n_rounds) {
                int ready = 1;
                for (int i = l->round_start[cur[r]]; ready && i < l->round_start[cur[r] + 1]; i++)
                    ready = cur[world[r][i]] >= other[r][i];
                if (!ready) break;
                cur[r]++, moved = 1;
            }
        }
    }
    for (int r = 0; ok && r < p; r++) {
        const dt_lane *l = &lanes[r];
        if (cur[r] == l->n_rounds) continue;
        for (int i = l->round_start[cur[r]]; i < l->round_start[cur[r] + 1]; i++) {
            int q = world[r][i];
            if (cur[q] >= other[r][i]) continue;
            snprintf(hint, hn, "%s: deadlock: rank %d waits in its round %d (its %s with "
                     "rank %d) for rank %d to reach its round %d, but rank %d waits in its "
                     "round %d (a message needs both ends posted: MPI's rendezvous for large "
                     "messages)", shape, r, cur[r], kind_name(l->ops[i].kind), q, q,
                     other[r][i], q, cur[q]);
            ok = 0;
            break;
        }
    }
    for (int r = 0; r < p; r++) free(other[r]), free(world[r]);
    free(other), free(world), free(cur), free(seq), free(snd), free(rcv);
    return ok;
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
