// schedule_check.c — see schedule_check.h: the student's schedules read op by op, every
// rank's at once, before any message is sent (lessons 05 and 06).
#include "schedule_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sck_free(dt_lane *lanes, int p) {
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
const char *sck_comm_name(int c) {
    static const char *const names[DT_COMM_COUNT] = {"DT_COMM_ALL", "DT_COMM_GROUP",
        "DT_COMM_LEADERS", "DT_COMM_CROSS", "DT_COMM_ROW", "DT_COMM_COL"};
    return c >= 0 && c < DT_COMM_COUNT ? names[c] : "an unknown communicator";
}
static int is_recv(int k) { return k == DT_OP_RECV_ADD || k == DT_OP_RECV_COPY; }
static int overlap(const dt_op *a, const dt_op *b) {
    return a->off < b->off + b->count && b->off < a->off + a->count;
}

// " on DT_COMM_GROUP" where the lesson's hints name communicators, else ""
static const char *on(const sck_world *w, int comm, char *buf, size_t n) {
    buf[0] = 0;
    if (w->name_comms) snprintf(buf, n, " on %s", sck_comm_name(comm));
    return buf;
}

int sck_well_formed(const dt_lane *lanes, const sck_world *w, size_t off, size_t n,
                    char *hint, size_t hn) {
    for (int r = 0; r < w->p; r++) {
        const dt_lane *l = &lanes[r];
        for (int k = 0; k < l->n_rounds; k++)
            for (int i = l->round_start[k]; i < l->round_start[k + 1]; i++) {
                const dt_op *op = &l->ops[i];
                const char *bad = NULL;
                char why[220] = "";
                int me, size;
                w->place(w->ctx, r, op->comm, &me, &size);
                if (op->kind != DT_OP_SEND && !is_recv(op->kind))
                    bad = "is not a send, receive-add or receive-copy";
                else if (size == 0)
                    w->not_member(w->ctx, op->comm, why, sizeof why), bad = why;
                else if (op->peer < 0 || op->peer >= size) {
                    if (w->name_comms)
                        snprintf(why, sizeof why, "names peer %d, outside 0..%d of %s (peers "
                                 "are ranks in that communicator)", op->peer, size - 1,
                                 sck_comm_name(op->comm));
                    else
                        snprintf(why, sizeof why, "names peer %d, outside 0..%d", op->peer,
                                 size - 1);
                    bad = why;
                } else if (op->peer == me) {
                    if (w->name_comms)
                        snprintf(why, sizeof why, "names the rank itself (rank %d of %s) as "
                                 "its peer", me, sck_comm_name(op->comm));
                    else
                        snprintf(why, sizeof why, "names the rank itself as its peer%s",
                                 w->self_hint ? w->self_hint : "");
                    bad = why;
                } else if (op->off < off || op->off > off + n ||
                           op->count > off + n - op->off) {  // (no sum that could wrap)
                    // past 2^63: a negative int made size_t (an offset c·n/p computed in
                    // int wraps once c·n passes 2^31)
                    int wrapped = op->off > (size_t)-1 / 2 || op->count > (size_t)-1 / 2;
                    snprintf(why, sizeof why, "covers elements [%zu, %zu), outside the range "
                             "[%zu, %zu) (%s)", op->off, op->off + op->count, off, off + n,
                             wrapped ? "a negative int made size_t: is an offset computed in "
                                       "int, c*n overflowing past 2^31?"
                                     : "offsets are absolute: add `off`"), bad = why;
                }
                for (int j = l->round_start[k]; !bad && j < l->round_start[k + 1]; j++) {
                    const dt_op *o2 = &l->ops[j];
                    if (j != i && op->kind == DT_OP_RECV_COPY && overlap(op, o2))
                        snprintf(why, sizeof why, "overlaps the %s of [%zu, %zu) in the same "
                                 "round: the copy lands while that one is in flight",
                                 kind_name(o2->kind), o2->off, o2->off + o2->count), bad = why;
                }
                if (bad) {
                    char oc[40];
                    snprintf(hint, hn, "%s, range [%zu, %zu): rank %d's round %d, its %s of "
                             "%zu elements at %zu with peer %d%s, %s", w->shape, off, off + n,
                             r, k, kind_name(op->kind), op->count, op->off, op->peer,
                             on(w, op->comm, oc, sizeof oc), bad);
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

int sck_matched(const dt_lane *lanes, const sck_world *w, char *hint, size_t hn) {
    int p = w->p;
    const char *there = w->name_comms ? " there" : "";
    char oc[40];
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
                    int q = w->world(w->ctx, r, op->comm, op->peer);
                    int *s = &seq[q * DT_COMM_COUNT + op->comm];
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
            snprintf(hint, hn, "%s: rank %d's message %d to rank %d%s (its round %d, %zu "
                     "elements) is never received: rank %d posts fewer receives from rank %d%s",
                     w->shape, snd[a].src, snd[a].seq + 1, snd[a].dst,
                     on(w, snd[a].comm, oc, sizeof oc), snd[a].round, snd[a].count, snd[a].dst,
                     snd[a].src, there), ok = 0;
        } else if (c > 0) {
            snprintf(hint, hn, "%s: rank %d waits for a message %d from rank %d%s (its "
                     "round %d, %zu elements) that rank %d never sends", w->shape, rcv[b].dst,
                     rcv[b].seq + 1, rcv[b].src, on(w, rcv[b].comm, oc, sizeof oc),
                     rcv[b].round, rcv[b].count, rcv[b].src), ok = 0;
        } else if (snd[a].count != rcv[b].count) {
            snprintf(hint, hn, "%s: rank %d's message %d to rank %d%s (its round %d) has "
                     "%zu elements, but rank %d's matching receive (its round %d) expects %zu",
                     w->shape, snd[a].src, snd[a].seq + 1, snd[a].dst,
                     on(w, snd[a].comm, oc, sizeof oc), snd[a].round, snd[a].count, rcv[b].dst,
                     rcv[b].round, rcv[b].count), ok = 0;
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
                     "messages)", w->shape, r, cur[r], kind_name(l->ops[i].kind), q, q,
                     other[r][i], q, cur[q]);
            ok = 0;
            break;
        }
    }
    for (int r = 0; r < p; r++) free(other[r]), free(world[r]);
    free(other), free(world), free(cur), free(seq), free(snd), free(rcv);
    return ok;
}
