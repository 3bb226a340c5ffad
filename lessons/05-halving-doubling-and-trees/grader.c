// grader.c — lesson 05's grader: student_rhd (Rabenseifner's allreduce as a schedule,
// student_rhd.h) run through dtlab's allreduce library as the registry entry "student_rhd",
// against independent references. An MPI program, compiled for both worlds; grade.sh runs
// it under mpirun for P = 1..8 and under smpirun at P = 64 and 96. On each run:
//  - the schedule, read before it runs (schedule_check.c): ops inside the range on valid
//    peers; every send meets its receive, with no deadlock; Rabenseifner's rounds and sizes;
//  - integer-valued floats (exact in any order) summed by student_rhd, blocking and as 3
//    requests in flight, against MPI_Allreduce, for counts 0, 1, P-1, P+1, 1009, a large one;
//  - random floats: every rank must end with the same bits (each element summed once, on
//    one rank, then copied: docs/architecture.md, "Invariants");
//  - --timing BYTES (smpirun on tests/coll/flat1024.xml, CM02): the simulated time of one
//    allreduce against the closed form (docs/formulas.md, "Collective costs"), within 5 %
//    (--no-data: the schedule and the time only).
//  - --versus-ring BYTES (smpirun; grade.sh: 64 KiB at P = 64 and 256, below n*): the
//    performance target, CS149-style: student_rhd's simulated time against the target (the
//    closed form, which the reference schedule meets), full marks within 5 % of it (faster
//    than that is messages missing: an empty schedule simulates in no time), and
//    faster than dtlab's ring simulated on the same platform (round by round); the line
//    says how far above or below the target it is and how many times faster than the ring.
// --race LIST (the README's experiment): the ring (yours from lesson 04 once it is one:
//    race_ring.c) against student_rhd, simulated and modelled,
// per size; no checks (--coarsen K: as dtsim, ⌈P/16⌉ above 16 ranks). Rank 0 prints.
#include <getopt.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kit/grade.h"
#include "../kit/timing.h"
#include "coll/coll.h"
#include "coll/coll_cost.h"
#include "race_ring.h"
#include "schedule_check.h"
#include "student_rhd.h"

#define CHECK_RANGE "schedule_ops_stay_inside_the_range_with_valid_peers"
#define CHECK_MATCH "schedule_sends_meet_matching_receives_without_deadlock"
#define CHECK_SIZES "schedule_has_rabenseifners_rounds_and_sizes"
#define CHECK_POW2 "power_of_two_ranks_match_mpi_allreduce_exactly"
#define CHECK_OTHER "non_power_of_two_ranks_match_mpi_allreduce_exactly"
#define CHECK_BITS "every_rank_holds_the_bit_identical_result"
#define CHECK_TIME "simulated_time_within_5pc_of_closed_form"
#define CHECK_RACE "beats_the_ring_below_n_star_in_simulated_time"
#define RACE_MARGIN 0.05  // full marks within 5 % of the target

typedef struct {
    size_t large;
    double timing, versus, alpha, beta, alpha_in, beta_in, share;
    int group, no_data, coarsen;  // coarsen: the race's ring (-1: automatic, as dtsim)
    const char *race;
} args_t;

// No globals that differ by rank: smpirun -no-privatize runs every rank in one process.
static int world_rank(void) {
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}
static int world_size(void) {
    int p;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    return p;
}
static dt_algo student_algo(void) {  // the number the registry gave student_rhd.h's entry
    dt_algo a = DT_ALGO_COUNT;
    dt_error err;
    if (dt_algo_parse("student_rhd", "grader", &a, &err)) {
        fprintf(stderr, "grader: %s\n", err.msg);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return a;
}

static int pow2_floor(int p) {
    int pp = 1;
    while (pp * 2 <= p) pp *= 2;
    return pp;
}

static uint64_t mix(uint64_t z) {  // splitmix64: the inputs, by (seed, rank, element)
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static uint64_t key(uint64_t seed, int r, size_t i) {
    return mix(seed ^ mix(((uint64_t)r << 40) ^ (uint64_t)i));
}
// integers in [-1000, 1000]: their sums over up to 1000 ranks are exact in float32
static float int_input(uint64_t seed, int r, size_t i) {
    return (float)((int)(key(seed, r, i) % 2001u) - 1000);
}
static float real_input(uint64_t seed, int r, size_t i) {  // in [-1, 1)
    return (float)(key(seed, r, i) >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

static void die(const char *what, const dt_error *err) {
    fprintf(stderr, "grader (rank %d): %s: %s\n", world_rank(), what, err->msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

// ---- the closed form (docs/formulas.md, "Collective costs"; Thakur, Rabenseifner & Gropp
// 2005): halving step `mask` moves mask of the p' blocks each way, the doubling step the
// same, so over both: 2·lg p'·α + 2n(p'-1)/p'·β; p != p' adds the fold in and out,
// 2(α + nβ). Nodes of g ranks sharing one link (share s): a step whose partner is mask >= g
// ranks away leaves the node, all g ranks at once (α, s·β each); the others, and the fold
// when g >= 2, stay inside (α', β'). No γ: the simulation does not time the additions.
static double closed_form(const args_t *a, int p, double bytes) {
    int pp = pow2_floor(p), g = a->group > 1 ? a->group : 1;
    double s = a->share > 1 ? a->share : 1.0, t = 0.0;
    for (int mask = 1; mask < pp; mask *= 2) {
        int far = mask >= g;
        double al = far ? a->alpha : a->alpha_in, be = far ? s * a->beta : a->beta_in;
        t += 2 * (al + mask * bytes / pp * be);
    }
    if (pp != p) t += 2 * (g >= 2 ? a->alpha_in + bytes * a->beta_in : a->alpha + bytes * a->beta);
    return t;
}

// ---- the schedule, read before it runs (schedule_check.c): rank 0 reads, all agree ----
static int schedule_checks(grade_t *g, size_t large, size_t tcount) {
    int rank = world_rank(), nprocs = world_size();
    int ok[3] = {1, 1, 1}, pp = pow2_floor(nprocs);
    char hint[3][600];
    size_t counts[8] = {0, 1, nprocs > 1 ? (size_t)nprocs - 1 : 2, (size_t)nprocs + 1, 1009,
                        large, large, tcount};
    snprintf(hint[0], sizeof hint[0], "P %d: counts 0, 1, %zu, %zu, 1009, %zu, and %zu at "
             "off 7 on another communicator", nprocs, counts[2], counts[3], large, large);
    snprintf(hint[1], sizeof hint[1], "P %d: every message meets its receive, same size, "
             "and every rank finishes its rounds", nprocs);
    int lg = 0;
    while ((1 << lg) < pp) lg++;
    snprintf(hint[2], sizeof hint[2], "P %d, n %zu: %d rounds on the longest rank (2·lg p' = "
             "%d%s), at most 2n(p'-1)/p'%s elements each way through a rank", nprocs, large,
             2 * lg + 2 * (pp != nprocs), 2 * lg, pp != nprocs ? ", +2 for the fold" : "",
             pp != nprocs ? " + n" : "");
    if (rank == 0)
        for (int j = 0; j < 8; j++) {
            if (j == 7 && !tcount) continue;
            int comm = j == 6 ? DT_COMM_ROW : DT_COMM_ALL;
            size_t off = j == 6 ? 7 : 0, n = counts[j];
            dt_lane *l = sc_build(nprocs, comm, off, n);
            if (ok[0] && !sc_well_formed(l, nprocs, comm, off, n, hint[0], sizeof hint[0]))
                ok[0] = 0;
            if (ok[0] && ok[1] && !sc_matched(l, nprocs, hint[1], sizeof hint[1])) ok[1] = 0;
            if (ok[0] && ok[2] && j == 5 && !sc_rounds_and_sizes(l, nprocs, n, hint[2], sizeof hint[2]))
                ok[2] = 0;
            sc_free(l, nprocs);
        }
    MPI_Bcast(ok, 3, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok[0]) {
        ok[1] = ok[2] = 0;
        snprintf(hint[1], sizeof hint[1], "not checked: fix %s first", CHECK_RANGE);
        snprintf(hint[2], sizeof hint[2], "not checked: fix %s first", CHECK_RANGE);
    }
    for (int k = 0; k < 3; k++)
        grade_check(g, ok[k], k == 0 ? CHECK_RANGE : k == 1 ? CHECK_MATCH : CHECK_SIZES, "%s",
                    hint[k]);
    return ok[0] && ok[1];
}

// ---- running it through the library: blocking, or 3 requests in flight over slices ----
static void run_student(dt_coll *c, float *buf, size_t count, int nonblocking) {
    dt_error err;
    if (!nonblocking) {
        if (dt_allreduce(c, buf, count, DT_F32, &err)) die("dt_allreduce", &err);
        return;
    }
    enum { K = 3 };
    dt_coll_req *req[K];
    for (int j = 0; j < K; j++) {  // the top of the buffer first, as backward does
        size_t lo = count * (size_t)(K - 1 - j) / K, hi = count * (size_t)(K - j) / K;
        if (!(req[j] = dt_allreduce_start(c, buf + lo, hi - lo, DT_F32, &err)))
            die("dt_allreduce_start", &err);
        dt_coll_progress_all(c);
    }
#ifdef DT_SMPI
    int spins = 10;  // SimGrid's clock stands still while a rank polls (smpi/test:0): wait
#else
    int spins = 100000;
#endif
    for (int spin = 0, left = K; left > 0 && spin < spins; spin++) {
        left = 0;
        for (int j = 0; j < K; j++) left += !dt_allreduce_progress(req[j]);
    }
    for (int j = 0; j < K; j++) dt_allreduce_wait(req[j]);
}

// One rank's first wrong element (the ranks gather these; rank 0 explains the first).
typedef struct {
    int rank, failed;
    long elem;
    float got, want, own;
} fail_t;

// What rank r plays in the schedule: "new rank k", or folded out (an even rank of the fold)
static const char *role(int r, int p, char *buf, size_t n) {
    int rem = p - pow2_floor(p);
    if (r < 2 * rem && r % 2 == 0)
        snprintf(buf, n, "folded out: an even one of the first 2·rem = %d ranks, it gets the "
                 "result back in step 4", 2 * rem);
    else snprintf(buf, n, "new rank %d", r < 2 * rem ? r / 2 : r - rem);
    return buf;
}

// Gather every rank's fail_t; 1 if any failed, with rank 0's *first the lowest failing rank.
static int gather_fail(const fail_t *mine, fail_t *first) {
    int rank = world_rank(), nprocs = world_size();
    int any = mine->failed;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!any) return 0;
    fail_t *all = rank == 0 ? calloc((size_t)nprocs, sizeof *all) : NULL;
    MPI_Gather(mine, sizeof *mine, MPI_BYTE, all, sizeof *mine, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = nprocs - 1; r >= 0; r--)
            if (all[r].failed) *first = all[r];
        free(all);
    }
    return 1;
}

static size_t default_counts(size_t large, size_t *c) {
    int nprocs = world_size();
    size_t d[6] = {0, 1, nprocs > 1 ? (size_t)nprocs - 1 : 2, (size_t)nprocs + 1, 1009, large};
    memcpy(c, d, sizeof d);
    return 6;
}

// (a) exact: integer-valued inputs, student_rhd's sums against MPI_Allreduce's, bit for bit
static void exact_check(grade_t *g, dt_coll *c, size_t large, uint64_t seed) {
    int rank = world_rank(), nprocs = world_size();
    int pp = pow2_floor(nprocs);
    const char *name = pp == nprocs ? CHECK_POW2 : CHECK_OTHER;
    size_t counts[6], nc = default_counts(large, counts);
    char hint[900] = "";
    int ok = 1;
    for (size_t j = 0; ok && j < nc; j++)
        for (int mode = 0; ok && mode < 2; mode++) {
            size_t n = counts[j];
            uint64_t s = mix(seed + 17 * j + (uint64_t)mode);
            float *buf = malloc((n + 1) * sizeof *buf), *ref = malloc((n + 1) * sizeof *ref);
            for (size_t i = 0; i < n; i++) buf[i] = ref[i] = int_input(s, rank, i);
            MPI_Allreduce(MPI_IN_PLACE, ref, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            run_student(c, buf, n, mode);
            fail_t f = {rank, 0, 0, 0, 0, 0}, first = f;
            for (size_t i = 0; i < n && !f.failed; i++)
                if (memcmp(&buf[i], &ref[i], sizeof(float)))
                    f = (fail_t){rank, 1, (long)i, buf[i], ref[i], int_input(s, rank, i)};
            if (gather_fail(&f, &first)) {
                ok = 0;
                if (rank == 0) {
                    char who[200];
                    size_t i = (size_t)first.elem;
                    int b = 0;
                    while (b + 1 < pp && dt_chunk_lo(n, pp, b + 1) <= i) b++;
                    int rem = nprocs - pp, owner = b < rem ? 2 * b + 1 : b + rem;
                    // is one rank's input missing from it, or counted twice?
                    char whose[120] = "";
                    for (int q = 0; q < nprocs && !whose[0]; q++) {
                        float x = int_input(s, q, i);
                        if (x != 0 && first.want - first.got == x)
                            snprintf(whose, sizeof whose, " (rank %d's input %.9g is missing "
                                     "from it)", q, x);
                        else if (x != 0 && first.got - first.want == x)
                            snprintf(whose, sizeof whose, " (rank %d's input %.9g is counted "
                                     "twice)", q, x);
                    }
                    snprintf(hint, sizeof hint, "P %d (p' %d), count %zu, %s: rank %d holds "
                             "%.9g at element %zu, MPI_Allreduce gives %.9g%s; rank %d is %s; element "
                             "%zu lies in block %d of the p' = %d blocks, which new rank %d "
                             "(rank %d) sums in step 2", nprocs, pp, n,
                             mode ? "3 requests in flight" : "blocking", first.rank,
                             first.got, i, first.want,
                             first.got == first.own && first.got != first.want
                                 ? " (its own input: nothing arrived there)"
                             : first.got == first.own + first.want
                                 ? " (its own input plus the sum: added where it should copy)"
                                 : whose,
                             first.rank, role(first.rank, nprocs, who, sizeof who), i, b,
                             pp, b, owner);
                }
            }
            free(buf), free(ref);
        }
    if (ok)
        snprintf(hint, sizeof hint, "P %d (p' %d): counts 0, 1, %zu, %zu, 1009, %zu, blocking "
                 "and 3 requests in flight: every element equals MPI_Allreduce's", nprocs, pp,
                 counts[2], counts[3], large);
    grade_check(g, ok, name, "%s", hint);
}

// (b) the same bits everywhere: random floats (their sums depend on the order), every
// rank's result against rank 0's
static void bits_check(grade_t *g, dt_coll *c, size_t large, uint64_t seed) {
    int rank = world_rank(), nprocs = world_size();
    size_t counts[3] = {(size_t)nprocs + 1, 1009, large};
    char hint[700] = "";
    int ok = 1;
    for (int j = 0; ok && j < 3; j++) {
        size_t n = counts[j];
        uint64_t s = mix(seed ^ 0xb175u) + (uint64_t)j;
        float *buf = malloc((n + 1) * sizeof *buf), *r0 = malloc((n + 1) * sizeof *r0);
        for (size_t i = 0; i < n; i++) buf[i] = real_input(s, rank, i);
        run_student(c, buf, n, 0);
        memcpy(r0, buf, n * sizeof *buf);
        MPI_Bcast(r0, (int)n, MPI_FLOAT, 0, MPI_COMM_WORLD);
        fail_t f = {rank, 0, 0, 0, 0, 0}, first = f;
        for (size_t i = 0; i < n && !f.failed; i++)
            if (memcmp(&buf[i], &r0[i], sizeof(float)))
                f = (fail_t){rank, 1, (long)i, buf[i], r0[i], real_input(s, rank, i)};
        if (gather_fail(&f, &first)) {
            ok = 0;
            if (rank == 0) {
                char who[200], who0[200];
                snprintf(hint, sizeof hint, "P %d, count %zu: element %ld is %.9g on rank %d "
                         "(%s)%s, but %.9g on rank 0 (%s)", nprocs, n, first.elem, first.got,
                         first.rank, role(first.rank, nprocs, who, sizeof who),
                         first.got == first.own ? ", its own input: nothing arrived there" : "",
                         first.want, role(0, nprocs, who0, sizeof who0));
            }
        } else {  // the ranks agree: on the sum? (rank 0 checks; every rank learns it)
            double want = 0;
            long bad = rank == 0 ? grade_wrong_sum(r0, n, nprocs, real_input, s, &want) : -1;
            MPI_Bcast(&bad, 1, MPI_LONG, 0, MPI_COMM_WORLD);
            if (bad >= 0) {
                ok = 0;
                if (rank == 0)
                    snprintf(hint, sizeof hint, "P %d, count %zu: element %ld is %.9g on every "
                             "rank, but the sum over the ranks is %.9g: the ranks agree only on "
                             "a wrong result (see the checks of the sums)", nprocs, n, bad,
                             r0[bad], want);
            }
        }
        free(buf), free(r0);
    }
    if (ok)
        snprintf(hint, sizeof hint, "P %d: counts %zu, 1009, %zu of random floats: the same "
                 "bits on every rank", nprocs, counts[0], large);
    grade_check(g, ok, CHECK_BITS, "%s", hint);
}

// ---- simulated time ----
static dt_coll_opts timing_opts(const args_t *a, dt_algo algo) {
    dt_coll_opts o = dt_coll_opts_default();
    o.algo = algo;
    o.cost.alpha = a->alpha, o.cost.beta = a->beta, o.cost.gamma = 0.0;
    o.cost.alpha_intra = a->alpha_in, o.cost.beta_intra = a->beta_in;
    return o;
}

// Seconds of one allreduce of `count` floats, from the last rank's start to the last
// rank's end (tests/coll/coll_check.c's --timing: the barrier releases ranks apart). Every
// rank's buffer is one shared block under SMPI: timing only, the sums are not looked at.
static double time_one(const args_t *a, dt_algo algo, size_t count, int coarsen) {
    dt_coll_opts o = timing_opts(a, algo);
    o.coarsen = coarsen;
    return timing_one(&o, count);
}

// (c) the simulated time of student_rhd against the closed form, within 5 %
static void timing_check(grade_t *g, const args_t *a, int sched_ok) {
    int nprocs = world_size();
    size_t count = (size_t)(a->timing / 4);
    double bytes = (double)count * 4;
    int pp = pow2_floor(nprocs);
    if (!sched_ok) {
        grade_check(g, 0, CHECK_TIME, "P %d: not timed: the schedule fails %s or %s (above)",
                    nprocs, CHECK_RANGE, CHECK_MATCH);
        return;
    }
    double t = time_one(a, student_algo(), count, 0), model = closed_form(a, nprocs, bytes);
    double ratio = t / model;
    int ok = fabs(ratio - 1.0) <= 0.05;
    const char *why = ok ? ""
        : ratio < 0.01 ? ": next to nothing was sent (an empty schedule?)"
        : ratio > 1 ? ": slower than Rabenseifner's: more rounds, or more bytes on the critical "
                      "path (see " CHECK_SIZES ")"
                    : ": faster than the closed form: is it Rabenseifner's schedule? (a ring, "
                      "or one that skips steps, is not)";
    grade_check(g, ok, CHECK_TIME, "P %d (p' %d), %.0f bytes, α %g s, β %g s/B: simulated "
                "%.4e s, closed form 2·lg p'·α + 2n(p'-1)/p'·β%s = %.4e s, ratio %.4f%s",
                nprocs, pp, bytes, a->alpha, a->beta, t, pp != nprocs ? " + 2(α + nβ)" : "",
                model, ratio, why);
}

// (d) performance below n*: student_rhd against the target and against the ring, both
// simulated on the same platform. Simulated time is the same bits on every machine
// (docs/conventions.md, "Same bits everywhere"), so the verdict is too.
static void race_check(grade_t *g, const args_t *a, int sched_ok) {
    int nprocs = world_size();
    size_t count = (size_t)(a->versus / 4);
    double bytes = (double)count * 4;
    if (!sched_ok) {
        grade_check(g, 0, CHECK_RACE, "P %d: not timed: the schedule fails %s or %s (above)",
                    nprocs, CHECK_RANGE, CHECK_MATCH);
        return;
    }
    double th = time_one(a, student_algo(), count, 0), tr = time_one(a, DT_ALGO_RING, count, 0);
    double target = closed_form(a, nprocs, bytes), off = th / target - 1.0;
    int ok = th < tr && fabs(off) <= RACE_MARGIN;  // below too: an empty schedule is fast
    grade_check(g, ok, CHECK_RACE, "P %d, %.0f bytes: student_rhd %.4e s, the ring %.4e s "
                "(%.2fx %s); target (the closed form) %.4e s: %.1f %% %s it (full marks within "
                "%.0f %%)%s", nprocs, bytes, th, tr, th > 0 ? tr / th : 0.0,
                th < tr ? "faster" : "the ring's speed, or slower", target, fabs(off) * 100,
                off > 0 ? "above" : "below", RACE_MARGIN * 100,
                ok ? "" : th >= tr ? ": no faster than the ring: lg p rounds, not p-1 "
                                     "(see " CHECK_SIZES ")"
                       : off < 0 ? ": faster than Rabenseifner's rounds can be: are messages "
                                   "missing? (an empty schedule simulates in no time)"
                               : ": slower than the target: more rounds or bytes than "
                                 "Rabenseifner's");
}

// ---- the README's experiment: the ring against student_rhd, simulated and modelled ----
static double parse_size(const char *s) {
    char *end;
    double v = strtod(s, &end);
    if (*end == 'K' || *end == 'k') v *= 1024;
    else if (*end == 'M' || *end == 'm') v *= 1048576;
    else if (*end == 'G' || *end == 'g') v *= 1073741824.0;
    return v;
}

static void race(const args_t *a) {
    int rank = world_rank(), nprocs = world_size();
    double sizes[32];
    int ns = 0;
    char list[512];
    snprintf(list, sizeof list, "%s", a->race);
    for (char *t = strtok(list, ","); t && ns < 32; t = strtok(NULL, ",")) sizes[ns++] = parse_size(t);
    int ok = 1, pp = pow2_floor(nprocs);
    int k = a->coarsen >= 0 ? a->coarsen : nprocs > 16 ? (nprocs + 15) / 16 : 0;
    if (rank == 0) {  // a broken schedule would hang the simulation: read it first
        char hint[600];
        dt_lane *l = sc_build(nprocs, DT_COMM_ALL, 0, (size_t)(sizes[0] / 4));
        ok = sc_well_formed(l, nprocs, DT_COMM_ALL, 0, (size_t)(sizes[0] / 4), hint, sizeof hint) &&
             sc_matched(l, nprocs, hint, sizeof hint);
        sc_free(l, nprocs);
        if (!ok) fprintf(stderr, "grader --race: student_rhd's schedule is broken (lessons/grade "
                         "05 says more): %s\n", hint);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) return;
    double largest = 0;
    for (int i = 0; i < ns; i++) largest = sizes[i] > largest ? sizes[i] : largest;
    timing_reserve((size_t)(largest / 4 + 1) * sizeof(float));
    dt_algo ring = race_ring(nprocs, (size_t)(sizes[0] / 4));  // yours (lesson 04) or dtlab's
    dt_coll_opts o = timing_opts(a, DT_ALGO_RING);
    double A_ring = dt_cost_ring(&o, nprocs, 0), A_rhd = closed_form(a, nprocs, 0);
    double B_ring = (dt_cost_ring(&o, nprocs, 1e9) - A_ring) / 1e9;
    double B_rhd = (closed_form(a, nprocs, 1e9) - A_rhd) / 1e9;
    if (rank == 0) {
        printf("# %d ranks (p' %d), %d per node%s: α %g s, β %g s/B", nprocs, pp,
               a->group > 1 ? a->group : 1, a->share > 1 ? " sharing its link" : "", a->alpha,
               a->beta);
        if (a->group > 1) printf(", inside a node α' %g s, β' %g s/B", a->alpha_in, a->beta_in);
        if (k > 1) printf("\n# ring simulated with its rounds coarsened by %d (coll_coarsen.c)\n", k);
        else printf("\n# ring simulated round by round\n");
        printf("%12s %12s %12s %12s %12s  %-12s %s\n", "bytes", "ring sim s", "rhd sim s",
               "ring model", "rhd model", "faster (sim)", "faster (model)");
    }
    double prev_diff = 0, prev_b = 0, cross = -1;
    for (int i = 0; i < ns; i++) {
        size_t count = (size_t)(sizes[i] / 4);
        double b = (double)count * 4;
        double tr = time_one(a, ring, count, k), th = time_one(a, student_algo(), count, 0);
        double mr = dt_cost_ring(&o, nprocs, b), mh = closed_form(a, nprocs, b);
        if (rank == 0)
            printf("%12.0f %12.4e %12.4e %12.4e %12.4e  %-12s %s\n", b, tr, th, mr, mh,
                   th < tr ? "rhd" : "ring", mh < mr ? "rhd" : "ring");
        double diff = th - tr;  // where it changes sign, interpolated linearly in bytes
        if (i > 0 && cross < 0 && (prev_diff < 0) != (diff < 0))
            cross = prev_b + (b - prev_b) * (-prev_diff) / (diff - prev_diff);
        prev_diff = diff, prev_b = b;
    }
    if (rank != 0) return;
    printf("# model: ring %.4e s + n·%.4e s/B, rhd %.4e s + n·%.4e s/B: ", A_ring, B_ring,
           A_rhd, B_rhd);
    if (B_rhd > B_ring && A_ring > A_rhd)
        printf("the ring overtakes rhd at n = %.0f bytes\n", (A_ring - A_rhd) / (B_rhd - B_ring));
    else printf("%s is faster at every size\n", A_rhd <= A_ring ? "rhd" : "the ring");
    if (cross > 0) printf("# simulated: the winner changes at about %.0f bytes\n", cross);
    else printf("# simulated: the same winner at every size listed\n");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = world_rank(), nprocs = world_size();
    args_t a = {.large = 100003, .alpha = 2e-6, .beta = 8e-10, .alpha_in = 1e-7,
                .beta_in = 1e-11, .coarsen = -1};
    static const struct option lo[] = {
        {"large", 1, 0, 'L'}, {"timing", 1, 0, 't'}, {"alpha", 1, 0, 'A'}, {"beta", 1, 0, 'B'},
        {"alpha-intra", 1, 0, 'a'}, {"beta-intra", 1, 0, 'b'}, {"group", 1, 0, 'g'},
        {"share", 1, 0, 's'}, {"no-data", 0, 0, 'n'}, {"race", 1, 0, 'r'},
        {"coarsen", 1, 0, 'c'}, {"versus-ring", 1, 0, 'v'}, {0, 0, 0, 0}};
    for (int ch; (ch = getopt_long(argc, argv, "", lo, NULL)) != -1;) {
        switch (ch) {
        case 'L': a.large = strtoull(optarg, NULL, 10); break;
        case 't': a.timing = parse_size(optarg); break;
        case 'A': a.alpha = atof(optarg); break;
        case 'B': a.beta = atof(optarg); break;
        case 'a': a.alpha_in = atof(optarg); break;
        case 'b': a.beta_in = atof(optarg); break;
        case 'g': a.group = atoi(optarg); break;
        case 's': a.share = atof(optarg); break;
        case 'n': a.no_data = 1; break;
        case 'r': a.race = optarg; break;
        case 'c': a.coarsen = atoi(optarg); break;
        case 'v': a.versus = parse_size(optarg); break;
        default:
            if (rank == 0) fprintf(stderr, "grader: options: --large N --timing BYTES --alpha "
                                    "--beta --alpha-intra --beta-intra --group G --share S "
                                    "--no-data --race SIZES --coarsen K --versus-ring BYTES (see grader.c's header)\n");
            MPI_Finalize();
            return 2;
        }
    }
    dt_error err;
    if (a.race) {
        race(&a);
        MPI_Finalize();
        return 0;
    }
    grade_t g = grade_begin("05 halving-doubling", rank != 0);
    MPI_Bcast(&g.seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    int pp = pow2_floor(nprocs);
    if (rank == 0)
        printf("# P %d: p' %d, rem %d%s\n", nprocs, pp, nprocs - pp,
               pp == nprocs ? " (a power of two)" : " (the first 2·rem ranks fold in and out)");
    fflush(stdout);
    int sched_ok = schedule_checks(&g, a.large, a.timing > 0 ? (size_t)(a.timing / 4) : 0);
    if (!a.no_data) {
        if (sched_ok) {
            dt_coll_opts o = dt_coll_opts_default();
            o.algo = student_algo();
            dt_coll *c = dt_coll_create(MPI_COMM_WORLD, NULL, &o, &err);
            if (!c) die("dt_coll_create", &err);
            exact_check(&g, c, a.large, g.seed);
            bits_check(&g, c, a.large, g.seed);
            dt_coll_free(c);
        } else {
            const char *why = "not run: the schedule fails " CHECK_RANGE " or " CHECK_MATCH
                              " (above); running it could hang or crash";
            grade_check(&g, 0, pp == nprocs ? CHECK_POW2 : CHECK_OTHER, "P %d: %s", nprocs, why);
            grade_check(&g, 0, CHECK_BITS, "P %d: %s", nprocs, why);
        }
    }
    if (a.timing > 0) timing_check(&g, &a, sched_ok);
    if (a.versus > 0) race_check(&g, &a, sched_ok);
    int rc = grade_end(&g);  // the same on every rank (they agreed on every check)
    MPI_Finalize();
    return rank == 0 ? rc : 0;  // one exit status for mpirun / smpirun to pass on
}
