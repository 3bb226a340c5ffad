// schedule_check.c — the dry run of schedule_check.h: the student's schedule read op by op,
// every rank's at once, before any message is sent.
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
static int is_recv(int k) { return k == DT_OP_RECV_ADD || k == DT_OP_RECV_COPY; }
static int overlap(const dt_op *a, const dt_op *b) {
    return a->off < b->off + b->count && b->off < a->off + a->count;
}

int sc_well_formed(const dt_lane *lanes, int p, int comm, size_t off, size_t n, char *hint,
                   size_t hn) {
    for (int r = 0; r < p; r++) {
        const dt_lane *l = &lanes[r];
        for (int k = 0; k < l->n_rounds; k++)
            for (int i = l->round_start[k]; i < l->round_start[k + 1]; i++) {
                const dt_op *op = &l->ops[i];
                const char *bad = NULL;
                char why[160] = "";
                if (op->kind != DT_OP_SEND && !is_recv(op->kind))
                    bad = "is not a send, receive-add or receive-copy";
                else if (op->comm != comm)
                    snprintf(why, sizeof why, "is on communicator %d, not the `comm` argument "
                             "(%d)", op->comm, comm), bad = why;
                else if (op->peer < 0 || op->peer >= p)
                    snprintf(why, sizeof why, "names peer %d, outside 0..%d", op->peer, p - 1),
                        bad = why;
                else if (op->peer == r)
                    bad = "names the rank itself as its peer (a partner nr ^ mask used as a "
                          "real rank, or the fold's partner wrong?)";
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
                    snprintf(hint, hn, "p %d, range [%zu, %zu): rank %d's round %d, its %s of "
                             "%zu elements at %zu with peer %d, %s", p, off, off + n, r, k,
                             kind_name(op->kind), op->count, op->off, op->peer, bad);
                    return 0;
                }
            }
    }
    return 1;
}

// One message end: rank, round, count; peer; its place among the messages between the pair.
typedef struct {
    int src, dst, seq, round, idx;  // idx: the op's index in its lane
    size_t count;
} end_t;

static int by_pair(const void *a, const void *b) {
    const end_t *x = a, *y = b;
    if (x->src != y->src) return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

int sc_matched(const dt_lane *lanes, int p, char *hint, size_t hn) {
    size_t total = 0;
    for (int r = 0; r < p; r++) total += lanes[r].n_rounds ? (size_t)lanes[r].n_ops : 0;
    end_t *snd = calloc(total + 1, sizeof *snd), *rcv = calloc(total + 1, sizeof *rcv);
    int *seq = calloc((size_t)p, sizeof *seq), **other = calloc((size_t)p, sizeof *other);
    size_t ns = 0, nrv = 0;
    if (!snd || !rcv || !seq || !other) abort();
    // in the order the runner posts them: round by round, the receives, then the sends
    for (int pass = 0; pass < 2; pass++)
        for (int r = 0; r < p; r++) {
            const dt_lane *l = &lanes[r];
            memset(seq, 0, (size_t)p * sizeof *seq);
            for (int k = 0; k < l->n_rounds; k++)
                for (int i = l->round_start[k]; i < l->round_start[k + 1]; i++) {
                    const dt_op *op = &l->ops[i];
                    if (pass == 0 && is_recv(op->kind))
                        rcv[nrv++] = (end_t){op->peer, r, seq[op->peer]++, k, i, op->count};
                    if (pass == 1 && op->kind == DT_OP_SEND)
                        snd[ns++] = (end_t){r, op->peer, seq[op->peer]++, k, i, op->count};
                }
        }
    qsort(snd, ns, sizeof *snd, by_pair);
    qsort(rcv, nrv, sizeof *rcv, by_pair);
    for (int r = 0; r < p; r++) {
        other[r] = malloc(((size_t)lanes[r].n_ops + 1) * sizeof(int));
        if (!other[r]) abort();
    }
    int ok = 1;
    size_t a = 0, b = 0;
    while (ok && (a < ns || b < nrv)) {
        int c = a == ns ? 1 : b == nrv ? -1 : by_pair(&snd[a], &rcv[b]);
        if (c < 0) {
            snprintf(hint, hn, "p %d: rank %d's message %d to rank %d (its round %d, %zu "
                     "elements) is never received: rank %d posts fewer receives from rank %d",
                     p, snd[a].src, snd[a].seq + 1, snd[a].dst, snd[a].round, snd[a].count,
                     snd[a].dst, snd[a].src), ok = 0;
        } else if (c > 0) {
            snprintf(hint, hn, "p %d: rank %d waits for a message %d from rank %d (its round "
                     "%d, %zu elements) that rank %d never sends", p, rcv[b].dst,
                     rcv[b].seq + 1, rcv[b].src, rcv[b].round, rcv[b].count, rcv[b].src), ok = 0;
        } else if (snd[a].count != rcv[b].count) {
            snprintf(hint, hn, "p %d: rank %d's message %d to rank %d (its round %d) has %zu "
                     "elements, but rank %d's matching receive (its round %d) expects %zu",
                     p, snd[a].src, snd[a].seq + 1, snd[a].dst, snd[a].round, snd[a].count,
                     rcv[b].dst, rcv[b].round, rcv[b].count), ok = 0;
        } else {  // each end learns the round of the other's op
            other[snd[a].src][snd[a].idx] = rcv[b].round;
            other[rcv[b].dst][rcv[b].idx] = snd[a].round;
            a++, b++;
        }
    }
    // Run the rounds: a rank's round completes once every peer has posted the other end
    // of each of its messages (that peer is in that round or past it).
    int *cur = calloc((size_t)p, sizeof *cur);
    if (!cur) abort();
    for (int moved = 1; ok && moved;) {
        moved = 0;
        for (int r = 0; r < p; r++) {
            const dt_lane *l = &lanes[r];
            while (cur[r] < l->n_rounds) {
                int ready = 1;
                for (int i = l->round_start[cur[r]]; ready && i < l->round_start[cur[r] + 1]; i++)
                    ready = cur[l->ops[i].peer] >= other[r][i];
                if (!ready) break;
                cur[r]++, moved = 1;
            }
        }
    }
    for (int r = 0; ok && r < p; r++) {
        const dt_lane *l = &lanes[r];
        if (cur[r] == l->n_rounds) continue;
        for (int i = l->round_start[cur[r]]; i < l->round_start[cur[r] + 1]; i++) {
            int q = l->ops[i].peer;
            if (cur[q] >= other[r][i]) continue;
            snprintf(hint, hn, "p %d: deadlock: rank %d waits in its round %d (its %s with "
                     "rank %d) for rank %d to reach its round %d, but rank %d waits in its "
                     "round %d (a message needs both ends posted: MPI's rendezvous for large "
                     "messages)", p, r, cur[r], kind_name(l->ops[i].kind), q, q, other[r][i],
                     q, cur[q]);
            ok = 0;
            break;
        }
    }
    for (int r = 0; r < p; r++) free(other[r]);
    free(other), free(cur), free(seq), free(snd), free(rcv);
    return ok;
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
