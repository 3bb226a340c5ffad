// schedule_play.c — lesson 04's grader, its dry run: every rank's schedule of the student's
// ring built and played without MPI (grader.c's checks schedule_messages_match_and_
// cannot_deadlock, rounds_are_2p_minus_2_each_one_send_one_receive and
// schedule_follows_off_and_comm; what each proves: grader.c's header).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule_play.h"
#include "student_ring.h"

void lane_free(dt_lane *l) {
    free(l->ops), free(l->round_start), free(l->delay), free(l->key);
    memset(l, 0, sizeof *l);
}
int is_recv(int k) { return k == DT_OP_RECV_ADD || k == DT_OP_RECV_COPY; }
static const char *kind_name(int k) {
    return k == DT_OP_SEND ? "send" : k == DT_OP_RECV_ADD ? "receive-add"
         : k == DT_OP_RECV_COPY ? "receive-copy" : "op";
}
int chunk_of(size_t n, int P, size_t i) {  // the chunk (dt_chunk_lo's) holding i
    int c = 0;
    while (c + 1 < P && dt_chunk_lo(n, P, c + 1) <= i) c++;
    return c;
}

// " (chunk c)" when [off, off+count) is chunk c of the P chunks of n (dt_chunk_lo's), else "".
static const char *chunk_name(size_t n, int P, size_t off, size_t count, char *buf, size_t len) {
    buf[0] = 0;
    for (int c = 0; c < P; c++)
        if (dt_chunk_lo(n, P, c) == off && dt_chunk_lo(n, P, c + 1) == off + count) {
            snprintf(buf, len, " (chunk %d)", c);
            break;
        }
    return buf;
}

// Each op's place among the messages between its two ranks (MPI matches a pair's messages of
// one tag in the order they were posted: the k-th send from a to b meets b's k-th receive
// from a). posted[dir][a * P + b]: the counts posted so far, dir 0 sends a->b, 1 receives.
typedef struct {
    size_t *v;
    int n, cap;
} list_t;
static void list_push(list_t *l, size_t x) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 8;
        l->v = realloc(l->v, (size_t)l->cap * sizeof *l->v);
    }
    l->v[l->n++] = x;
}

// The ops of one round alone: kinds, communicator, peers, ranges; no receive-copy landing on
// memory another op of its round uses (the runner sends from the buffer itself, and copies
// land in place while the round runs). 0, or -1 with why.
static int round_ok(const dt_lane *L, int q, int k, int P, size_t n, char *why) {
    for (int i = L->round_start[k]; i < L->round_start[k + 1]; i++) {
        const dt_op *o = &L->ops[i];
        if (o->kind != DT_OP_SEND && !is_recv(o->kind))
            return snprintf(why, WHY, "rank %d round %d: op kind %d (only DT_OP_SEND, "
                            "DT_OP_RECV_ADD and DT_OP_RECV_COPY belong in a ring)", q, k, o->kind), -1;
        if (o->comm != DT_COMM_ALL)
            return snprintf(why, WHY, "rank %d round %d: communicator %d, but the ring runs "
                            "over the `comm` it is given (DT_COMM_ALL)", q, k, o->comm), -1;
        if (o->peer < 0 || o->peer >= P)
            return snprintf(why, WHY, "rank %d round %d: a %s with peer %d, not a rank of 0..%d "
                            "(in C, -1 %% p is -1)", q, k, kind_name(o->kind), o->peer, P - 1), -1;
        if (o->off > n || o->count > n - o->off) {
            // dt_chunk_lo of a negative chunk index: (unsigned)c is near 2^32
            int neg = 0;
            for (int c = -1; c >= -2 * P && !neg; c--)
                if (dt_chunk_lo(n, P, c) == o->off) neg = c;
            if (neg)
                return snprintf(why, WHY, "rank %d round %d: a %s of chunk %d, which is no chunk: "
                                "the chunk index went negative (in C, (r - k) %% p is "
                                "negative when r < k: add p before taking %% p); its "
                                "elements [%zu, ...) are far outside the buffer of %zu", q, k,
                                kind_name(o->kind), neg, o->off, n), -1;
            // an offset or a count past 2^63: a negative int made size_t (c·n/P in int
            // arithmetic wraps once c·n passes 2^31)
            int wrapped = o->off > (size_t)-1 / 2 || o->count > (size_t)-1 / 2;
            return snprintf(why, WHY, "rank %d round %d: a %s of elements [%zu, %zu), outside "
                            "the buffer of %zu%s", q, k, kind_name(o->kind), o->off,
                            o->off + o->count, n, wrapped ? " (a negative int made size_t: "
                            "is an offset computed in int, c*n overflowing past 2^31?)" : ""), -1;
        }
        for (int j = L->round_start[k]; j < L->round_start[k + 1]; j++) {
            const dt_op *b = &L->ops[j];
            if (j == i || o->kind != DT_OP_RECV_COPY || b->off >= o->off + o->count ||
                o->off >= b->off + b->count)
                continue;
            return snprintf(why, WHY, "rank %d round %d: a receive-copy into [%zu, %zu) "
                            "overlaps its round's %s of [%zu, %zu): the copy would land "
                            "while the round still uses that memory", q, k, o->off,
                            o->off + o->count, kind_name(b->kind), b->off, b->off + b->count), -1;
        }
    }
    return 0;
}

// Play the P schedules: every rank posts its round's ops and moves on once each has met its
// counterpart. Returns 0, or -1 with why (the first problem).
int play(dt_lane *L, int P, size_t n, char *why) {
    list_t *posted = calloc(2 * (size_t)P * P, sizeof *posted);
    int *cur = calloc((size_t)P, sizeof *cur), *mark = calloc((size_t)P, sizeof *mark);
    int rc = 0;
    for (int q = 0; q < P && !rc; q++)
        for (int k = 0; k < L[q].n_rounds && !rc; k++) rc = round_ok(&L[q], q, k, P, n, why);
    // seq[q]: the op's place in its pair, recorded when its round is posted
    int **seq = calloc((size_t)P, sizeof *seq);
    for (int q = 0; q < P; q++) seq[q] = calloc((size_t)L[q].n_ops + 1, sizeof(int));
    for (int progress = 1; progress && !rc;) {
        progress = 0;
        for (int q = 0; q < P && !rc; q++) {
            while (cur[q] < L[q].n_rounds && !rc) {
                int k = cur[q], lo = L[q].round_start[k], hi = L[q].round_start[k + 1];
                if (!mark[q]) {  // post the round
                    for (int i = lo; i < hi; i++) {
                        const dt_op *o = &L[q].ops[i];
                        int rv = is_recv(o->kind);
                        list_t *pl = &posted[(size_t)rv * P * P +
                                             (rv ? (size_t)o->peer * P + q : (size_t)q * P + o->peer)];
                        seq[q][i] = pl->n;
                        list_push(pl, o->count);
                    }
                    mark[q] = 1;
                }
                int done = 1;
                for (int i = lo; i < hi && done && !rc; i++) {
                    const dt_op *o = &L[q].ops[i];
                    int rv = is_recv(o->kind);
                    const list_t *other = &posted[(size_t)(!rv) * P * P +
                                                  (rv ? (size_t)o->peer * P + q : (size_t)q * P + o->peer)];
                    if (other->n <= seq[q][i]) {
                        done = 0;
                    } else if (other->v[seq[q][i]] != o->count) {
                        char cn[32];
                        snprintf(why, WHY, "rank %d round %d: its %s %s rank %d is %zu elements "
                                 "([%zu, %zu)%s), but rank %d's matching %s is %zu: the two ends "
                                 "disagree on which chunk moves (both must compute the same "
                                 "chunk index for this step)", q, k, kind_name(o->kind),
                                 rv ? "from" : "to", o->peer, o->count, o->off, o->off + o->count,
                                 chunk_name(n, P, o->off, o->count, cn, sizeof cn),
                                 o->peer, rv ? "send" : "receive", other->v[seq[q][i]]);
                        rc = -1;
                    }
                }
                if (!done || rc) break;
                cur[q]++, mark[q] = 0, progress = 1;
            }
        }
    }
    for (int q = 0; q < P && !rc; q++) {
        if (cur[q] == L[q].n_rounds) continue;
        int k = cur[q];
        for (int i = L[q].round_start[k]; i < L[q].round_start[k + 1]; i++) {
            const dt_op *o = &L[q].ops[i];
            int rv = is_recv(o->kind);
            const list_t *other = &posted[(size_t)(!rv) * P * P +
                                          (rv ? (size_t)o->peer * P + q : (size_t)q * P + o->peer)];
            if (other->n > seq[q][i]) continue;
            int d = o->peer;
            char where[80];
            if (cur[d] == L[d].n_rounds)
                snprintf(where, sizeof where, "has finished its %d rounds", L[d].n_rounds);
            else
                snprintf(where, sizeof where, "waits in its round %d of %d", cur[d], L[d].n_rounds);
            char cn[32];
            snprintf(why, WHY, "deadlock: rank %d waits forever in round %d of %d: its %s %s "
                     "rank %d ([%zu, %zu)%s) meets no %s, and rank %d %s (a step whose send "
                     "and receive do not pair up: check which chunk each end moves in it)", q,
                     k, L[q].n_rounds, kind_name(o->kind), rv ? "from" : "to", d, o->off,
                     o->off + o->count, chunk_name(n, P, o->off, o->count, cn, sizeof cn),
                     rv ? "send" : "receive", d, where);
            rc = -1;
            break;
        }
    }
    for (size_t i = 0; i < 2 * (size_t)P * P; i++) free(posted[i].v);
    for (int q = 0; q < P; q++) free(seq[q]);
    free(posted), free(cur), free(mark), free(seq);
    return rc;
}

// The ring's shape: 2(P-1) rounds of one send and one receive (fewer when n < P).
int shape(const dt_lane *L, int P, size_t n, char *why) {
    for (int q = 0; q < P; q++) {
        if (n >= (size_t)P ? L[q].n_rounds != 2 * (P - 1) : L[q].n_rounds > 2 * (P - 1))
            return snprintf(why, WHY, "count %zu: rank %d runs %d rounds, expected %s2(P-1) = %d "
                            "(P-1 of reduce-scatter, P-1 of allgather)", n, q, L[q].n_rounds,
                            n >= (size_t)P ? "" : "at most ", 2 * (P - 1)), -1;
        for (int k = 0; k < L[q].n_rounds; k++) {
            int s = 0, rv = 0;
            for (int i = L[q].round_start[k]; i < L[q].round_start[k + 1]; i++)
                s += L[q].ops[i].kind == DT_OP_SEND, rv += is_recv(L[q].ops[i].kind);
            if (s > 1 || rv > 1 || (n >= (size_t)P && (s != 1 || rv != 1)))
                return snprintf(why, WHY, "count %zu: rank %d's round %d has %d sends and %d "
                                "receives, expected one of each (one chunk to the right, one "
                                "from the left)", n, q, k, s, rv), -1;
        }
    }
    return 0;
}

// The schedule of [off, off+n) over communicator comm is the one of [0, n) over DT_COMM_ALL
// with every offset moved by off and every op on comm (hier and torus2d run rings on parts of
// the buffer and on sub-communicators: dt_sched_ring_rs/_ag).
int follows(const dt_lane *L, int P, size_t n, char *why) {
    const size_t off = 1000003;
    const int comm = DT_COMM_GROUP;
    int rc = 0;
    for (int q = 0; q < P && !rc; q++) {
        dt_lane m = {0};
        student_ring(&m, comm, q, P, off, n);
        if (m.n_ops != L[q].n_ops || m.n_rounds != L[q].n_rounds) {
            snprintf(why, WHY, "count %zu: rank %d's schedule of [%zu, %zu) has %d rounds and %d "
                     "ops, that of [0, %zu) %d and %d: only the offsets may change", n, q, off,
                     off + n, m.n_rounds, m.n_ops, n, L[q].n_rounds, L[q].n_ops);
            rc = -1;
        }
        for (int i = 0; i < m.n_ops && !rc; i++) {
            const dt_op *a = &L[q].ops[i], *b = &m.ops[i];
            if (b->comm != comm || b->kind != a->kind || b->peer != a->peer ||
                b->count != a->count || b->off != a->off + off) {
                snprintf(why, WHY, "count %zu: rank %d's op %d, built for [off, off+n) = [%zu, %zu) "
                         "on communicator %d: a %s %s rank %d of [%zu, %zu) on communicator %d; "
                         "expected [%zu, %zu) on %d (chunk c starts at off + dt_chunk_lo(n, p, c))",
                         n, q, i, off, off + n, comm, kind_name(b->kind),
                         is_recv(b->kind) ? "from" : "to", b->peer, b->off, b->off + b->count,
                         b->comm, a->off + off, a->off + off + a->count, comm);
                rc = -1;
            }
        }
        lane_free(&m);
    }
    return rc;
}
