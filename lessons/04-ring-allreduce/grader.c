// grader.c — lesson 04's grader: the ring of ring.c (student_ring), run by dtlab's allreduce
// library as the registry entry "student" (registry.c; dt_algo_parse("student")).
// Under mpirun (grade.sh: P = 1..7), for the counts 0, 1, P-1, P, P+1, 1013, 131071 and the
// halves the nonblocking runs use:
//   schedule_messages_match_and_cannot_deadlock  rank 0 builds every rank's schedule and plays
//       it without sending anything: every peer a rank, every range inside the buffer, every
//       send met by a receive of the same length, no round waiting forever (a send completes
//       only once its receive is posted, as large messages do), no receive landing on memory
//       its round also sends or receives. A schedule that fails is not run (it would hang or
//       crash MPI).
//   rounds_are_2p_minus_2_each_one_send_one_receive  the ring's shape: with count >= P every
//       rank runs exactly 2(P-1) rounds of one send and one receive (fewer when chunks are
//       empty), which is what makes its latency term 2(P-1)α.
//   schedule_follows_off_and_comm  built for [off, off+n) on another communicator, the
//       schedule is the same with every offset moved by off and every op on that communicator
//       (dtlab runs rings on parts of a buffer and on sub-communicators).
//   allreduce_equals_mpi_allreduce  integer-valued floats, whose sums are exact in any order,
//       blocking (dt_allreduce) and nonblocking (two requests, start / progress / wait), in
//       place: every element of every rank equals MPI_Allreduce's.
//   ranks_hold_bit_identical_results  random floats (where the order of the additions shows):
//       every rank holds the same bits, and they are the sum (the float64 sum, within
//       the rounding of P-1 float additions: ranks agreeing on a wrong result fail) —
//       each element summed once, on one rank, then copied.
//   sums_in_the_same_order_as_dtlab_ring  the same random floats through dtlab's own ring
//       (algo ring, nn/coll/coll_ring.c): the same bits, so dtrain --algo student trains
//       loss for loss like --algo ring.
// Under smpirun (grade.sh: --timing BYTES at P = 64 and 256 on tests/coll/flat1024.xml):
//   schedule_messages_match_and_cannot_deadlock, as above, for that count
//   simulated_time_within_5pc_of_ring_closed_form  one allreduce of n bytes takes
//       2(P-1)α + 2(P-1)/P·nβ of simulated time, within 5 % (α, β of the platform: --alpha,
//       --beta; γ = 0, computation is not simulated), computed here, not by coll_cost.c.
// --schedule-count N (instructor/grade.sh): one more count for the schedule checks alone (the
// dry run needs no buffer: a count of a 1.2 GB bucket costs nothing), where offsets
// computed in int, c·n/P, overflow.
// Part 1 (ring_mpi.c, MPI's point-to-point calls alone) is graded by `--raw SECONDS`:
// grader_mpi.c.
// Only rank 0 prints; the ranks agree on every verdict first.
#include <getopt.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kit/grade.h"
#include "coll/coll.h"
#include "schedule_play.h"
#include "student_ring.h"

// part 1's checks (grader_mpi.c): the ring of ring_mpi.c under `--raw SECONDS`
int grade_raw(grade_t *g, int r, int P, unsigned secs);

#define MSG 600  // a failure's hint
#define CHECK_SAFE "schedule_messages_match_and_cannot_deadlock"
#define CHECK_ROUNDS "rounds_are_2p_minus_2_each_one_send_one_receive"
#define CHECK_RANGE "schedule_follows_off_and_comm"
#define CHECK_EXACT "allreduce_equals_mpi_allreduce"
#define CHECK_SAME "ranks_hold_bit_identical_results"
#define CHECK_ORDER "sums_in_the_same_order_as_dtlab_ring"
#define CHECK_TIME "simulated_time_within_5pc_of_ring_closed_form"

static uint64_t mix(uint64_t x) {  // splitmix64's finaliser
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
// rank q's value at element i: an integer in [-50, 50] (kind 0) or a float in [-1, 1)
static float input(uint64_t seed, int kind, int q, size_t i) {
    uint64_t h = mix(seed ^ mix((uint64_t)kind << 40 ^ (uint64_t)q << 32 ^ i));
    if (kind == 0) return (float)((int)(h % 101) - 50);
    return (float)((double)(h >> 11) * 0x1.0p-52 - 1.0);
}

// every rank's schedule, played without MPI: schedule_play.c

// Rank 0 builds and plays every rank's schedule for each count: safe[j] (broadcast), and the
// two checks' first failures (rank 0's buffers).
static void inspect(int r, int P, const size_t *counts, int nc, int *safe, char *bad_safe,
                    char *bad_shape, char *bad_range) {
    bad_safe[0] = bad_shape[0] = bad_range[0] = 0;
    if (r == 0) {
        dt_lane *L = calloc((size_t)P, sizeof *L);
        for (int j = 0; j < nc; j++) {
            for (int q = 0; q < P; q++) student_ring(&L[q], DT_COMM_ALL, q, P, 0, counts[j]);
            char why[WHY];
            safe[j] = play(L, P, counts[j], why) == 0;
            if (!safe[j] && !bad_safe[0]) snprintf(bad_safe, MSG, "P=%d count %zu: %s", P, counts[j], why);
            if (!bad_shape[0] && shape(L, P, counts[j], why)) snprintf(bad_shape, MSG, "P=%d %s", P, why);
            if (!bad_range[0] && follows(L, P, counts[j], why)) snprintf(bad_range, MSG, "P=%d %s", P, why);
            for (int q = 0; q < P; q++) lane_free(&L[q]);
        }
        free(L);
    }
    MPI_Bcast(safe, nc, MPI_INT, 0, MPI_COMM_WORLD);
}

// ---- the allreduce through the library ----

static dt_coll *coll_for(const char *algo) {
    dt_coll_opts o = dt_coll_opts_default();
    dt_error err;
    if (dt_algo_parse(algo, "grader", &o.algo, &err) != 0) {
        fprintf(stderr, "grader: %s (is registry.c linked in?)\n", err.msg);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    dt_coll *c = dt_coll_create(MPI_COMM_WORLD, NULL, &o, &err);
    if (!c) {
        fprintf(stderr, "grader: %s\n", err.msg);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return c;
}

// In place, blocking (mode 0) or as two requests in flight over the two halves, the top half
// first (as backward makes buckets), progressed by polling (mode 1).
static void allreduce(dt_coll *c, float *buf, size_t n, int mode) {
    dt_error err;
    if (mode == 0) {
        if (dt_allreduce(c, buf, n, DT_F32, &err)) {
            fprintf(stderr, "grader: %s\n", err.msg);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        return;
    }
    size_t h = n / 2;
    dt_coll_req *top = dt_allreduce_start(c, buf + h, n - h, DT_F32, &err);
    dt_coll_req *bottom = top ? dt_allreduce_start(c, buf, h, DT_F32, &err) : NULL;
    if (!bottom) {
        fprintf(stderr, "grader: %s\n", err.msg);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int spin = 0; spin < 1000000 && !(dt_allreduce_progress(top) &
                                           dt_allreduce_progress(bottom)); spin++) {}
    dt_allreduce_wait(top);
    dt_allreduce_wait(bottom);
}

// What rank r's schedule of n elements last did to element i: the kind of the last receive
// that covers it (0: none), that receive's round and peer, and how many receive-adds cover it.
static int last_receive(int r, int P, size_t n, size_t i, int *round, int *peer, int *adds) {
    dt_lane m = {0};
    student_ring(&m, DT_COMM_ALL, r, P, 0, n);
    int kind = 0;
    *adds = 0;
    for (int k = 0; k < m.n_rounds; k++)
        for (int j = m.round_start[k]; j < m.round_start[k + 1]; j++) {
            const dt_op *o = &m.ops[j];
            if (!is_recv(o->kind) || i < o->off || i >= o->off + o->count) continue;
            kind = o->kind, *round = k, *peer = o->peer;
            *adds += o->kind == DT_OP_RECV_ADD;
        }
    lane_free(&m);
    return kind;
}

// What element i of rank r holds, in words: which ranks' values (P <= 7: each 0, 1 or 2
// times) sum to got, if any do, and what rank r's schedule last wrote there. n and i are
// those of the schedule that ran (in a nonblocking run, its half).
static void explain(uint64_t seed, int P, int r, size_t n, size_t i, size_t gi, float got,
                    char *out, size_t len) {
    int round = -1, peer = -1, adds = 0;
    int kind = last_receive(r, P, n, i, &round, &peer, &adds);
    char copied[260] = "";
    if (kind == DT_OP_RECV_COPY)
        snprintf(copied, sizeof copied, "; rank %d last wrote it with the receive-copy of its "
                 "round %d, from rank %d, which had not summed that chunk yet (an allgather step "
                 "passes on a chunk the sender holds complete: after the reduce-scatter rank r "
                 "holds chunk r, then each chunk it has just received)", r, round, peer);
    int m[8] = {0};
    long combos = 1;
    for (int q = 0; q < P; q++) combos *= 3;
    // no rank's value at all (code 0) last: a 0 that is one rank's input of 0 is that rank's
    // value alone, not "the sum without" the others
    for (long k = 1; P <= 7 && k <= combos; k++) {
        long code = k % combos, x = code;
        double s = 0;
        for (int q = 0; q < P; q++, x /= 3) m[q] = (int)(x % 3), s += m[q] * input(seed, 0, q, gi);
        if (s != got) continue;
        int terms = 0, twice = -1, missing = -1, one = -1;
        for (int q = 0; q < P; q++) {
            terms += m[q] > 0;
            if (m[q] == 2 && twice < 0) twice = q;
            if (m[q] == 0 && missing < 0) missing = q;
            if (m[q] == 1) one = q;
        }
        if (terms == 1 && twice < 0 && kind == 0)
            snprintf(out, len, "that is rank %d's value alone: no receive of rank %d's schedule "
                     "covers this element, so its chunk never reaches rank %d (every chunk "
                     "must reach every rank: added in the reduce-scatter or installed in the "
                     "allgather)", one, r, r);
        else if (terms == 1 && twice < 0 && adds == 0 && !copied[0])
            snprintf(out, len, "that is rank %d's value alone, and no receive-add of rank %d "
                     "covers this element (a receive that copies where it should add?)", one, r);
        else if (terms == 1 && twice < 0)
            snprintf(out, len, "that is rank %d's value alone%s", one, copied[0] ? copied :
                     ": the others' were never added");
        else if (twice >= 0)
            snprintf(out, len, "that counts rank %d's value twice (a chunk added again?)", twice);
        else if (missing >= 0)
            snprintf(out, len, "that is the sum without rank %d's value%s", missing,
                     copied[0] ? copied : " (a step missing?)");
        else
            snprintf(out, len, "that is a sum of the ranks' values, but not each once");
        return;
    }
    snprintf(out, len, "that is no sum of the ranks' values (a chunk from the wrong place?)");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int r, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    double timing = 0, alpha = 2e-6, beta = 8e-10, raw = 0;
    size_t sched_only = 0;  // --schedule-count N: schedules only (see the header)
    static const struct option lo[] = {{"timing", 1, 0, 't'}, {"alpha", 1, 0, 'a'},
                                       {"beta", 1, 0, 'b'}, {"raw", 1, 0, 'r'},
                                       {"schedule-count", 1, 0, 's'}, {0, 0, 0, 0}};
    for (int ch; (ch = getopt_long(argc, argv, "", lo, NULL)) != -1;) {
        if (ch == 't') timing = atof(optarg);
        else if (ch == 'a') alpha = atof(optarg);
        else if (ch == 'b') beta = atof(optarg);
        else if (ch == 'r') raw = atof(optarg);
        else if (ch == 's') sched_only = strtoull(optarg, NULL, 10);
        else MPI_Abort(MPI_COMM_WORLD, 2);
    }
    grade_t g = grade_begin("04 (ring allreduce)", r != 0);
    MPI_Bcast(&g.seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (raw > 0) {  // part 1: ring_mpi.c (grader_mpi.c), a hang after raw seconds
        int rc = grade_raw(&g, r, P, (unsigned)raw);
        MPI_Finalize();
        return rc;
    }
    char bad_safe[MSG], bad_shape[MSG], bad_range[MSG];
    if (timing > 0) {
        size_t n = (size_t)(timing / sizeof(float));
        int safe;
        inspect(r, P, &n, 1, &safe, bad_safe, bad_shape, bad_range);
        char what[MSG];
        snprintf(what, sizeof what, "P=%d count %zu", P, n);
        grade_check(&g, safe, CHECK_SAFE, "%s", safe ? what : bad_safe);
        double t = 0, model = 2.0 * (P - 1) * alpha + 2.0 * (P - 1) / P * (double)n * 4 * beta;
        if (safe) {
#ifdef DT_SMPI  // timing only: all ranks' buffers on one block (the data is not checked here)
            float *buf = SMPI_SHARED_MALLOC((n + 1) * sizeof(float));
#else
            float *buf = calloc(n + 1, sizeof(float));
#endif
            dt_coll *c = coll_for("student");
            MPI_Barrier(MPI_COMM_WORLD);
            // from the last rank's start to the last rank's end (the barrier releases the
            // ranks a few latencies apart; tests/coll/coll_check.c does the same)
            double se[2] = {MPI_Wtime(), 0};
            allreduce(c, buf, n, 0);
            se[1] = MPI_Wtime();
            MPI_Allreduce(MPI_IN_PLACE, se, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            t = se[1] - se[0];
            dt_coll_free(c);
#ifdef DT_SMPI
            SMPI_SHARED_FREE(buf);
#else
            free(buf);
#endif
        }
        int ok = safe && fabs(t / model - 1) <= 0.05;
        grade_check(&g, ok, CHECK_TIME, "P=%d n=%.0f B: simulated %.4e s, 2(P-1)α + 2(P-1)/P·nβ "
                    "= %.4e s (α term %.3e, β term %.3e), ratio %.3f%s", P, (double)n * 4, t,
                    model, 2.0 * (P - 1) * alpha, model - 2.0 * (P - 1) * alpha, t / model,
                    !safe ? " (not run: the schedule is unsafe)" : ok ? "" : t < model
                    ? " (faster than the ring can be: are messages missing?)"
                    : " (slower: more rounds, or a chunk larger than n/P?)");
        MPI_Finalize();
        return grade_end(&g);
    }

    // the counts, then the halves the nonblocking runs use
    size_t base[] = {0, 1, P > 1 ? (size_t)P - 1 : 2, (size_t)P, (size_t)P + 1, 1013, 131071};
    enum { NB = sizeof base / sizeof base[0] };
    size_t counts[3 * NB + 1];
    int nc = 0, safe[3 * NB + 1];
    for (int j = 0; j < NB; j++) counts[nc++] = base[j];
    for (int j = 0; j < NB; j++) counts[nc++] = base[j] / 2, counts[nc++] = base[j] - base[j] / 2;
    if (sched_only) counts[nc++] = sched_only;  // checked, never run
    inspect(r, P, counts, nc, safe, bad_safe, bad_shape, bad_range);
    char every[MSG];
    snprintf(every, sizeof every, "every rank's schedule, every count%s: sends meet receives "
             "of their length", sched_only ? " (and a schedule alone for a larger one)" : "");
    grade_check(&g, !bad_safe[0], CHECK_SAFE, "%s", bad_safe[0] ? bad_safe : every);
    grade_check(&g, !bad_shape[0], CHECK_ROUNDS, "%s", bad_shape[0] ? bad_shape :
                "2(P-1) rounds of one send and one receive");
    grade_check(&g, !bad_range[0], CHECK_RANGE, "%s", bad_range[0] ? bad_range :
                "[off, off+n) on another communicator: the same ops, moved by off");

    // each rank's first failure of each check (empty: none), gathered to rank 0
    char mine[3][MSG] = {{0}}, *all = r == 0 ? malloc((size_t)P * 3 * MSG) : NULL;
    int runs = 0;
    dt_coll *stu = coll_for("student"), *ring = coll_for("ring");
    size_t nmax = base[NB - 1];
    float *a = malloc((nmax + 1) * sizeof(float)), *b = malloc((nmax + 1) * sizeof(float));
    float *c0 = malloc((nmax + 1) * sizeof(float));
    for (int j = 0; j < NB; j++) {
        size_t n = base[j];
        if (!safe[j] || !safe[NB + 2 * j] || !safe[NB + 2 * j + 1]) {
            for (int k = 0; k < 3; k++)
                if (!mine[k][0]) snprintf(mine[k], MSG, "P=%d count %zu: not run, its schedule "
                                          "is unsafe (see %s)", P, n, CHECK_SAFE);
            continue;
        }
        for (int mode = 0; mode < 2; mode++, runs++) {
            const char *how = mode ? "nonblocking" : "blocking";
            // exact: integer-valued floats against MPI_Allreduce
            for (size_t i = 0; i < n; i++) a[i] = b[i] = input(g.seed, 0, r, i);
            MPI_Allreduce(MPI_IN_PLACE, b, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            allreduce(stu, a, n, mode);
            for (size_t i = 0; i < n && !mine[0][0]; i++) {
                if (a[i] == b[i]) continue;
                char e[420];
                size_t h = n / 2, sn = mode == 0 ? n : i < h ? h : n - h;
                explain(g.seed, P, r, sn, mode == 0 || i < h ? i : i - h, i, a[i], e, sizeof e);
                snprintf(mine[0], MSG, "P=%d count %zu %s: rank %d element %zu (chunk %d of %d) "
                         "is %g, MPI_Allreduce gives %g: %s", P, n, how, r, i,
                         chunk_of(n, P, i), P, a[i], b[i], e);
            }
            // random floats: the same bits on every rank, and as dtlab's ring
            for (size_t i = 0; i < n; i++) a[i] = b[i] = input(g.seed + (uint64_t)j, 1, r, i);
            allreduce(stu, a, n, mode);
            allreduce(ring, b, n, mode);  // (the same requests: the same chunks)
            memcpy(c0, a, n * sizeof(float));
            MPI_Bcast(c0, (int)n, MPI_FLOAT, 0, MPI_COMM_WORLD);
            int differ = 0;
            for (size_t i = 0; i < n && !differ; i++)
                if (memcmp(&a[i], &c0[i], sizeof(float)) && (differ = 1) && !mine[1][0])
                    snprintf(mine[1], MSG, "P=%d count %zu %s: element %zu (chunk %d of %d) is "
                             "%.9g on rank %d but %.9g on rank 0: each element must be summed "
                             "once, on one rank, and then copied", P, n, how, i,
                             chunk_of(n, P, i), P, a[i], r, c0[i]);
            // the same bits everywhere, and the right sum: the float64 sum of the P values,
            // within the rounding of P-1 float additions (asked once the ranks agree)
            MPI_Allreduce(MPI_IN_PLACE, &differ, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            for (size_t i = 0; i < n && !differ && !mine[1][0]; i++) {
                double sum = 0, mag = 0;
                for (int q = 0; q < P; q++) {
                    double v = input(g.seed + (uint64_t)j, 1, q, i);
                    sum += v, mag += fabs(v);
                }
                if (!(fabs((double)a[i] - sum) <= 1e-6 * P * mag + 1e-30))
                    snprintf(mine[1], MSG, "P=%d count %zu %s: rank %d element %zu (chunk %d of "
                             "%d) is %.9g, but the sum over the ranks is %.9g: the ranks agree "
                             "only on a wrong result (see %s)", P, n, how, r, i,
                             chunk_of(n, P, i), P, a[i], sum, CHECK_EXACT);
            }
            for (size_t i = 0; i < n && !mine[2][0]; i++)
                if (memcmp(&a[i], &b[i], sizeof(float)))
                    snprintf(mine[2], MSG, "P=%d count %zu %s: rank %d element %zu (chunk %d of "
                             "%d) is %.9g, dtlab's ring gives %.9g: %s", P, n, how, r, i,
                             chunk_of(n, P, i), P, a[i], b[i], fabsf(a[i] - b[i]) <=
                             1e-5f * P ? "the same numbers added in another order (chunk c "
                             "goes round from rank c+1 to rank c, chunks by dt_chunk_lo)"
                             : "a different sum");
        }
    }
    MPI_Gather(mine, 3 * MSG, MPI_CHAR, all, 3 * MSG, MPI_CHAR, 0, MPI_COMM_WORLD);
    const char *first[3] = {NULL, NULL, NULL};
    for (int q = 0; r == 0 && q < P; q++)
        for (int k = 0; k < 3; k++)
            if (!first[k] && all[((size_t)q * 3 + k) * MSG]) first[k] = &all[((size_t)q * 3 + k) * MSG];
    if (r == 0) {
        char done[MSG];
        snprintf(done, sizeof done, "P=%d: counts 0, 1, P-1, P, P+1, 1013, 131071, blocking "
                 "and nonblocking (%d allreduces)", P, runs);
        grade_check(&g, !first[0], CHECK_EXACT, "%s", first[0] ? first[0] : done);
        grade_check(&g, !first[1], CHECK_SAME, "%s", first[1] ? first[1] : done);
        grade_check(&g, !first[2], CHECK_ORDER, "%s", first[2] ? first[2] : done);
    }
    // the exit code is rank 0's: the other ranks exit 0, so that mpirun never ends the job
    // (and rank 0's last lines) because another rank returned 1 first
    dt_coll_free(stu), dt_coll_free(ring);
    free(a), free(b), free(c0), free(all);
    MPI_Finalize();
    return g.quiet ? 0 : grade_end(&g);
}
