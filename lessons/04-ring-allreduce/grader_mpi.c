// grader_mpi.c — lesson 04, part 1's checks: the ring of ring_mpi.c (student_ring_mpi), MPI's
// point-to-point calls alone, run by `grader --raw SECONDS` under mpirun (grade.sh: P = 1..4):
//   mpi_ring_equals_mpi_allreduce  integer-valued floats (exact in any order), counts 0, 1,
//       P-1, P, P+1, 1013 (messages below Open MPI's eager limit): every element of every
//       rank equals MPI_Allreduce's.
//   mpi_ring_sends_2p_minus_2_messages_of_n_over_p  the ring's cost: every rank sends
//       2(P-1) messages (fewer only when chunks are empty), none of more than ceil(n/P)
//       floats, counted by the profiling interface (MPI 4.0 §15.2, PMPI_: the wrappers
//       below are what the student's MPI_Send, MPI_Isend, MPI_Sendrecv, ... call), each
//       carrying a partial sum of the ranks' values (carries_partial_sums: not dummy sends
//       beside values found another way, through files or shared memory).
//   mpi_ring_completes_beyond_the_eager_limit  (P >= 2) the same with messages of 1 KiB,
//       2 KiB, 4000 B, 4 KiB, 8 KiB, 64 KiB, 1 MiB. Open MPI delivers a message up to its
//       eager limit (shared memory: 4 KiB, header included) at once; above it MPI_Send waits
//       for the matching receive (rendezvous), so a ring that sends before it receives
//       deadlocks there (MPI 4.0 §3.5: an "unsafe" program).
// A call into the student's ring that has not returned after SECONDS is a hang: a watchdog
// (alarm) ends the run with status 124 after rank 0 printed "# hang: " lines naming the
// size where it stuck and why (lessons/kit/runs.sh shows them under its HANG line).
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kit/grade.h"
#include "student_ring_mpi.h"
#include "subject04.h"

#define CHECK_MPI_EXACT "mpi_ring_equals_mpi_allreduce"
#define CHECK_MPI_COST "mpi_ring_sends_2p_minus_2_messages_of_n_over_p"
#define CHECK_MPI_BIG "mpi_ring_completes_beyond_the_eager_limit"
#define MSG 600

// ---- what the student's ring sends (the grader's own MPI calls are not counted) ----
// Globals: the profiling interface's wrappers have MPI's signatures and no other way in.
// (not static: the split grader's two sides set and read them, subject04_mpi.c and
// remote.c: the subject counts its sends, the judge takes the counts from its record)
static int counting;
long lesson04_sent_msgs;                // messages of at least one element
size_t lesson04_sent_max;               // the largest, in floats
// and what each carried (its first LESSON04_KEPT floats): a message of the right size that
// carries no partial sum of the ranks' values is not the ring's (carries_partial_sums)
lesson04_msg lesson04_sent[LESSON04_MAX_MSGS];
int lesson04_n_sent;

void lesson04_forget_sends(void) {
    for (int i = 0; i < lesson04_n_sent; i++) free(lesson04_sent[i].v);
    lesson04_n_sent = 0, lesson04_sent_msgs = 0, lesson04_sent_max = 0;
}

#ifndef DT_SMPI  // (part 1 runs under mpirun only; SMPI has its own MPI_Send)
static void count_send(const void *b, int count, MPI_Datatype t, int dest) {
    int size = 0;
    if (!counting || dest == MPI_PROC_NULL || count <= 0) return;
    MPI_Type_size(t, &size);
    size_t floats = (size_t)count * (size_t)size / sizeof(float);
    lesson04_sent_msgs++;
    if (floats > lesson04_sent_max) lesson04_sent_max = floats;
    if (lesson04_n_sent < LESSON04_MAX_MSGS) {
        lesson04_msg *m = &lesson04_sent[lesson04_n_sent++];
        m->count = floats, m->kept = floats < LESSON04_KEPT ? floats : LESSON04_KEPT;
        m->v = malloc((m->kept + 1) * sizeof(float));
        if (t == MPI_FLOAT) memcpy(m->v, b, m->kept * sizeof(float));
        else m->kept = LESSON04_NOT_FLOAT;  // (its bytes are not read: a derived type's gaps)
    }
}
int MPI_Send(const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c) {
    count_send(b, n, t, dest);
    return PMPI_Send(b, n, t, dest, tag, c);
}
int MPI_Ssend(const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c) {
    count_send(b, n, t, dest);
    return PMPI_Ssend(b, n, t, dest, tag, c);
}
int MPI_Isend(const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c,
              MPI_Request *q) {
    count_send(b, n, t, dest);
    return PMPI_Isend(b, n, t, dest, tag, c, q);
}
int MPI_Issend(const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c,
               MPI_Request *q) {
    count_send(b, n, t, dest);
    return PMPI_Issend(b, n, t, dest, tag, c, q);
}
int MPI_Sendrecv(const void *sb, int sn, MPI_Datatype st, int dest, int stag, void *rb, int rn,
                 MPI_Datatype rt, int src, int rtag, MPI_Comm c, MPI_Status *s) {
    count_send(sb, sn, st, dest);
    return PMPI_Sendrecv(sb, sn, st, dest, stag, rb, rn, rt, src, rtag, c, s);
}
int MPI_Sendrecv_replace(void *b, int n, MPI_Datatype t, int dest, int stag, int src,
                         int rtag, MPI_Comm c, MPI_Status *s) {
    count_send(b, n, t, dest);
    return PMPI_Sendrecv_replace(b, n, t, dest, stag, src, rtag, c, s);
}
#endif

// ---- the watchdog: a call of the student's ring that never returns ----
static char hang_text[1600];
static size_t hang_len;

static void on_alarm(int sig) {
    (void)sig;
    if (hang_len && write(STDOUT_FILENO, hang_text, hang_len) < 0) _exit(124);
    _exit(124);
}

// Arms the watchdog for one call with messages of msg bytes; ok_bytes: the largest that
// went through. Only rank 0 says why (the text is written before: a signal handler may
// only write(2)).
static void arm(int r, int P, size_t n, size_t msg, size_t ok_bytes, unsigned secs) {
    hang_len = 0;
    if (r == 0) {
        char went[120] = "none went through before it";
        if (ok_bytes) snprintf(went, sizeof went, "messages of up to %zu B went through", ok_bytes);
        snprintf(hang_text, sizeof hang_text,
            "# hang: P=%d, n = %zu floats: with messages of %zu B every rank waited in MPI for "
            "%u s, a deadlock (%s).\n"
            "# hang: Open MPI delivers a message of up to its eager limit (shared memory: about "
            "4 KiB, header included; `ompi_info --param btl vader --level 4`) at once and "
            "buffers it at the receiver, so MPI_Send returns before anyone receives. A larger "
            "one goes by the rendezvous protocol: MPI_Send waits until the receiver has posted "
            "the matching receive (MPI_Ssend always does).\n"
            "# hang: a ring in which every rank first sends to its right and only then "
            "receives from its left is then a cycle of ranks each waiting in MPI_Send for a "
            "receive no rank reaches (MPI 4.0 §3.5 calls such a program unsafe). Exchange "
            "with MPI_Sendrecv, or post MPI_Irecv and MPI_Isend and MPI_Waitall "
            "(HINTS.md, part 1).\n",
            P, n, msg, secs, went);
        hang_len = strlen(hang_text);
    }
    alarm(r == 0 ? secs : secs + 1);  // rank 0 first: it says why
}

static uint64_t mix(uint64_t x) {  // splitmix64's finaliser
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
static float value(uint64_t seed, int q, size_t i) {  // an integer in [-50, 50]
    return (float)((int)(mix(seed ^ mix((uint64_t)q << 40 ^ i)) % 101) - 50);
}

// One allreduce of n integer-valued floats by the student's ring against MPI_Allreduce's;
// the first wrong element of any rank into bad (rank 0's copy; NULL: not wanted), with what
// it looks like.
// Returns 1 when every element of every rank is right.
static int one(uint64_t seed, int r, int P, size_t n, const char *what, char *bad) {
    float *x = malloc((n + 1) * sizeof(float)), *want = malloc((n + 1) * sizeof(float));
    for (size_t i = 0; i < n; i++) x[i] = want[i] = value(seed, r, i);
    MPI_Allreduce(MPI_IN_PLACE, want, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    student_ring_mpi(x, n, MPI_COMM_WORLD);
    char mine[MSG] = "";
    for (size_t i = 0; i < n && !mine[0]; i++) {
        if (x[i] == want[i]) continue;
        char how[200] = "";
        float own = value(seed, r, i);
        if (x[i] == own && P > 1)
            snprintf(how, sizeof how, ": rank %d's own value, nothing added to it", r);
        for (int q = 0; q < P && !how[0]; q++) {
            float v = value(seed, q, i);
            if (v != 0 && x[i] == want[i] - v)
                snprintf(how, sizeof how, ": the sum without rank %d's value (a step missing, "
                         "or a receive that copies where it should add?)", q);
            else if (v != 0 && x[i] == want[i] + v)
                snprintf(how, sizeof how, ": rank %d's value counted twice", q);
        }
        snprintf(mine, MSG, "P=%d n=%zu%s: rank %d element %zu is %g, MPI_Allreduce gives %g%s",
                 P, n, what, r, i, x[i], want[i], how);
    }
    free(x), free(want);
    // the first rank with a wrong element speaks
    int wrong = mine[0] ? r : P, first;
    MPI_Allreduce(&wrong, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == P) return 1;
    if (first != 0) {
        char got[MSG];
        if (r == first) MPI_Send(mine, MSG, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
        if (r == 0) MPI_Recv(got, MSG, MPI_CHAR, first, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (r == 0 && bad) memcpy(bad, got, MSG);
    } else if (r == 0 && bad) {
        memcpy(bad, mine, MSG);
    }
    return 0;
}

// Did every message rank r sent carry a partial sum of the ranks' values: consecutive
// elements of the sum over an arc of the ring that holds r (its own value, and those it
// received and added: the reduce-scatter's chunk so far, the allgather's complete sums),
// either way round? The values are integers, so each such sum is exact in any order. A
// message of the right size that carries anything else (values found another way, and
// dummy sends to make up the count) is not the ring's. Why not, in why.
static int carries_partial_sums(uint64_t seed, int r, int P, size_t n, char *why) {
    float *sum = malloc((n + 1) * sizeof(float));
    int ok = 1;
    for (int k = 0; k < lesson04_n_sent && ok; k++) {
        const lesson04_msg *m = &lesson04_sent[k];
        if (m->kept == LESSON04_NOT_FLOAT) {
            ok = 0;
            snprintf(why, MSG, "P=%d n=%zu: rank %d's message %d (%zu floats' worth) is not sent "
                     "as MPI_FLOAT: the grader reads what each message of the ring carries (send "
                     "the floats as MPI_FLOAT)", P, n, r, k + 1, m->count);
            break;
        }
        int found = 0;
        for (int dir = -1; dir <= 1 && !found; dir += 2)
            for (int len = 1; len <= P && !found && m->count <= n; len++) {
                if (dir == 1 && len == P) break;  // (the whole ring: done the other way)
                for (size_t i = 0; i < n; i++) {
                    float s = 0;
                    for (int a = 0; a < len; a++) s += value(seed, ((r + dir * a) % P + P) % P, i);
                    sum[i] = s;
                }
                for (size_t o = 0; o + m->count <= n && !found; o++) {
                    size_t i = 0;
                    while (i < m->kept && sum[o + i] == m->v[i]) i++;
                    found = i == m->kept;
                }
            }
        if (!found) {
            ok = 0;
            snprintf(why, MSG, "P=%d n=%zu: rank %d's message %d (%zu floats, first %g) is no "
                     "partial sum of the ranks' values over any range: the ring sends what it "
                     "received and added (its own chunk first), and copies complete sums on",
                     P, n, r, k + 1, m->count, m->kept ? (double)m->v[0] : 0.0);
        }
    }
    free(sum);
    return ok;
}

int grade_raw(grade_t *g, int r, int P, unsigned secs) {
    signal(SIGALRM, on_alarm);
    char bad[MSG] = "", cost[MSG] = "";
    int ok = 1, cheap = 1;
    size_t base[] = {0, 1, P > 1 ? (size_t)P - 1 : 2, (size_t)P, (size_t)P + 1, 1013};
    for (size_t j = 0; j < sizeof base / sizeof base[0]; j++) {
        size_t n = base[j], chunk = (n + (size_t)P - 1) / (size_t)P;
        lesson04_forget_sends();
        counting = 1;
        arm(r, P, n, chunk * sizeof(float), 0, secs);
        int right = one(g->seed + j, r, P, n, "", ok ? bad : NULL);
        alarm(0);
        counting = 0;
        ok = ok && right;
        // the cost: 2(P-1) messages when every chunk has an element, none larger than a chunk
        long want = n >= (size_t)P ? 2L * (P - 1) : -1;
        int fine = (want < 0 ? lesson04_sent_msgs <= 2L * (P - 1) : lesson04_sent_msgs == want) && lesson04_sent_max <= chunk;
        char mine[MSG] = "";
        if (!fine)
            snprintf(mine, MSG, "P=%d n=%zu: rank %d sent %ld messages, the largest of %zu "
                     "floats; the ring sends %s2(P-1) = %d, of at most ceil(n/P) = %zu floats%s",
                     P, n, r, lesson04_sent_msgs, lesson04_sent_max, want < 0 ? "at most " : "", 2 * (P - 1),
                     chunk, lesson04_sent_max > chunk ? " (a whole buffer where a chunk should go?)"
                     : lesson04_sent_msgs > 2L * (P - 1) ? " (a step too many?)" : " (a step missing?)");
        if (fine && !carries_partial_sums(g->seed + j, r, P, n, mine)) fine = 0;
        int who = mine[0] ? r : P, first;
        MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (first < P && cheap) {
            cheap = 0;
            if (first == r && r != 0) MPI_Send(mine, MSG, MPI_CHAR, 0, 8, MPI_COMM_WORLD);
            if (r == 0 && first != 0)
                MPI_Recv(cost, MSG, MPI_CHAR, first, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (r == 0 && first == 0) memcpy(cost, mine, MSG);
        }
    }
    grade_check(g, ok, CHECK_MPI_EXACT, "%s", ok ? "counts 0, 1, P-1, P, P+1, 1013: every "
                "element equals MPI_Allreduce's" : bad);
    grade_check(g, cheap, CHECK_MPI_COST, "%s", cheap ? "2(P-1) messages per rank, none over "
                "ceil(n/P) floats" : cost);
    // beyond the eager limit: messages of these many floats (chunks of n = P·m)
    if (P >= 2) {
        size_t msgs[] = {256, 512, 1000, 1024, 2048, 16384, 262144}, done = 0;
        int big = 1;
        bad[0] = 0;
        for (size_t j = 0; j < sizeof msgs / sizeof msgs[0] && big; j++) {
            size_t n = (size_t)P * msgs[j];
            arm(r, P, n, msgs[j] * sizeof(float), done, secs);
            char what[64];
            snprintf(what, sizeof what, " (messages of %zu B)", msgs[j] * sizeof(float));
            big = one(g->seed + 100 + j, r, P, n, what, bad);
            alarm(0);
            if (big) done = msgs[j] * sizeof(float);
        }
        grade_check(g, big, CHECK_MPI_BIG, "%s", big ? "messages of 1 KiB to 1 MiB, "
                    "below and above Open MPI's eager limit" : bad);
    }
    return g->quiet ? 0 : grade_end(g);
}
