// grader.c — lesson 06's grader: student_hier and student_torus2d (student_hier.h) run
// through dtlab's allreduce library as the registry entries "student_hier" and
// "student_torus2d", against independent references. An MPI program, compiled for both
// worlds; grade.sh runs it under mpirun for P = 1..8 (groups of 2, 3 and 4, most of them
// uneven; every torus shape X×Y = P) and under smpirun at P = 256 (groups of 8 and a 16×16
// torus on a fat tree of 8-GPU nodes) and P = 1024 (hier timed on the flat platform). On
// each run:
//  - the schedules, read before they run (schedule_check.c): ops on the algorithm's own
//    communicators, on real peers, inside the range; every send meets its receive with no
//    deadlock; the rounds and the traffic of the three phases;
//  - integer-valued floats (exact in any order of summation), blocking and as 3 requests
//    in flight, against MPI_Allreduce element for element, counts 0, 1, P-1, P+1, 1009 and
//    a large one (--few: the large one only, for the 1024-rank run);
//  - random floats: every rank must end with rank 0's bits;
//  - --timing BYTES (smpirun): the simulated time of hier at --group G against its closed
//    form (student_hier.h), within 5 % (--no-data: the schedules and the time only);
//  - --versus-flat (with --timing; grade.sh: P = 1024 in nodes of 8, 4 MiB): the
//    performance target, CS149-style: the flat ring (dtlab's, every rank in one ring) timed
//    on the same platform, and hier's simulated speedup over it against the speedup the
//    cost model predicts, 2(P-1)(α + nβ/P) over hier's closed form: full marks within 5 %
//    of it (more is messages missing); the line says how far above or below. --flat-ring-time S: the flat ring's
//    simulated time given instead (grade.sh: simulated once; 1024 ranks round by round take
//    ~40 s, and simulated time is the same bits on every machine); with --versus-flat too
//    (the instructor's cases) the ring is simulated and must give S (to 1e-9)
//    (flat_ring_reference_time_is_the_simulated_one). --coarsen K merges K of the flat
//    ring's rounds (coll_coarsen.c).
#include <getopt.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kit/grade.h"
#include "coll/coll.h"
#include "schedule_check.h"
#include "student_hier.h"
#include "../kit/timing.h"

#define CHECK_FORM "schedule_ops_on_their_communicators_inside_the_range"
#define CHECK_MATCH "schedule_sends_meet_matching_receives_without_deadlock"
#define CHECK_HSHAPE "hier_rounds_and_traffic_are_the_three_phases"
#define CHECK_TSHAPE "torus2d_rounds_and_traffic_are_the_three_phases"
#define CHECK_HIER "hier_uneven_groups_match_mpi_allreduce_exactly"
#define CHECK_TORUS "torus2d_every_shape_matches_mpi_allreduce_exactly"
#define CHECK_BITS "every_rank_holds_the_bit_identical_result"
#define CHECK_TIME "hier_simulated_time_within_5pc_of_closed_form"
#define CHECK_RACE "hier_beats_the_flat_ring_by_the_models_margin"
#define CHECK_RING_REF "flat_ring_reference_time_is_the_simulated_one"
#define RACE_MARGIN 0.05  // full marks within 5 % of the speedup the model predicts

#define MAX_SHAPES 64

typedef struct {
    size_t large;
    double timing, alpha, beta, alpha_in, beta_in;
    int group, no_data, few;  // few: the large count only (the 1024-rank run)
    int versus, coarsen;      // versus: also time the flat ring (coarsen: its rounds merged)
    double ring_time;         // the flat ring's simulated time, given (--flat-ring-time)
    const char *groups, *tori;
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
static dt_algo algo_named(const char *name) {
    dt_algo a = DT_ALGO_COUNT;
    dt_error err;
    if (dt_algo_parse(name, "grader", &a, &err)) {
        fprintf(stderr, "grader: %s\n", err.msg);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return a;
}
static int ceil_lg(int p) {
    int lg = 0;
    while ((1 << lg) < p) lg++;
    return lg;
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
// integers in [-1000, 1000]: their sums over up to 1024 ranks are exact in float32
static float int_input(uint64_t seed, int r, size_t i) {
    return (float)((int)(key(seed, r, i) % 2001u) - 1000);
}
static float real_input(uint64_t seed, int r, size_t i) {  // in [-1, 1)
    return (float)(key(seed, r, i) >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

// ---- the shapes of this run: hier's group sizes (--groups, each at most P) and the torus
// shapes (--tori: "all" = every X×Y = P, or a list like 32x32) ----
static int shapes_of(const args_t *a, sc_shape *sh) {
    int p = world_size(), n = 0;
    char list[256];
    snprintf(list, sizeof list, "%s", a->groups);
    for (char *t = strtok(list, ","); t && n < MAX_SHAPES; t = strtok(NULL, ",")) {
        int g = atoi(t) < p ? atoi(t) : p, dup = 0;
        for (int i = 0; i < n; i++) dup |= sh[i].g == g;
        if (g >= 1 && !dup) sh[n++] = (sc_shape){p, 0, g, 0, 0};
    }
    if (!strcmp(a->tori, "all")) {
        for (int X = 1; X <= p && n < MAX_SHAPES; X++)
            if (p % X == 0) sh[n++] = (sc_shape){p, 1, 0, X, p / X};
    } else {
        snprintf(list, sizeof list, "%s", a->tori);
        for (char *t = strtok(list, ","); t && n < MAX_SHAPES; t = strtok(NULL, ",")) {
            int X = 0, Y = 0;
            if (sscanf(t, "%dx%d", &X, &Y) == 2 && X > 0 && (long)X * Y == p)
                sh[n++] = (sc_shape){p, 1, 0, X, Y};
        }
    }
    return n;
}
static void shape_str(const sc_shape *sh, char *s, size_t n) {
    if (sh->torus) snprintf(s, n, "torus %d×%d", sh->X, sh->Y);
    else snprintf(s, n, "hier in groups of %d", sh->g);
}

// The library's options for a shape: the student's algorithm, its group or its grid
static dt_coll_opts shape_opts(const sc_shape *sh) {
    dt_coll_opts o = dt_coll_opts_default();
    o.algo = algo_named(sh->torus ? "student_torus2d" : "student_hier");
    if (sh->torus) o.tx = sh->X, o.ty = sh->Y, o.group = 1;
    else o.group = sh->g;
    return o;
}

// ---- the schedules, read before they run: rank 0 reads, everyone agrees ----
// ok[0..3]: form, match, hier's shape, the torus's shape (1 also where no shape of that kind)
static void schedule_checks(grade_t *g, const sc_shape *shapes, int ns, size_t large,
                            int ok[4]) {
    int rank = world_rank(), p = world_size();
    char hint[4][700] = {"", "", "", ""};
    size_t counts[7] = {0, 1, p > 1 ? (size_t)p - 1 : 2, (size_t)p + 1, 1009, large, large};
    for (int k = 0; k < 4; k++) ok[k] = 1;
    if (rank == 0)
        for (int s = 0; s < ns; s++)
            for (int j = 0; j < 7; j++) {
                size_t off = j == 6 ? 7 : 0, n = counts[j];
                dt_lane *l = sc_build(&shapes[s], off, n);
                int t = shapes[s].torus ? 3 : 2;
                if (ok[0] && !sc_well_formed(l, &shapes[s], off, n, hint[0], sizeof hint[0]))
                    ok[0] = 0;
                if (ok[0] && ok[1] && !sc_matched(l, &shapes[s], hint[1], sizeof hint[1]))
                    ok[1] = 0;
                if (ok[0] && ok[t] && j == 5 &&
                    !sc_rounds_and_traffic(l, &shapes[s], n, hint[t], sizeof hint[t]))
                    ok[t] = 0;
                sc_free(l, p);
            }
    MPI_Bcast(ok, 4, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok[0])
        for (int k = 1; k < 4; k++) {
            ok[k] = 0;
            snprintf(hint[k], sizeof hint[k], "not checked: fix %s first", CHECK_FORM);
        }
    char list[400] = "";
    for (int s = 0; s < ns; s++) {
        char one[48];
        shape_str(&shapes[s], one, sizeof one);
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", s ? ", " : "", one);
    }
    const char *names[4] = {CHECK_FORM, CHECK_MATCH, CHECK_HSHAPE, CHECK_TSHAPE};
    int has[4] = {1, 1, 0, 0};
    for (int s = 0; s < ns; s++) has[shapes[s].torus ? 3 : 2] = 1;
    for (int k = 0; k < 4; k++)  // a shape check only where this run has that kind
        if (has[k]) grade_check(g, ok[k], names[k], "%s", ok[k] ? list : hint[k]);
}

// ---- running it through the library: blocking, or 3 requests in flight over slices ----
static void run_student(dt_coll *c, float *buf, size_t count, int nonblocking) {
    dt_error err;
    if (!nonblocking) {
        if (dt_allreduce(c, buf, count, DT_F32, &err)) {
            fprintf(stderr, "grader: dt_allreduce: %s\n", err.msg);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        return;
    }
    enum { K = 3 };
    dt_coll_req *req[K];
    for (int j = 0; j < K; j++) {  // the top of the buffer first, as backward does
        size_t lo = count * (size_t)(K - 1 - j) / K, hi = count * (size_t)(K - j) / K;
        if (!(req[j] = dt_allreduce_start(c, buf + lo, hi - lo, DT_F32, &err))) {
            fprintf(stderr, "grader: dt_allreduce_start: %s\n", err.msg);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        dt_coll_progress_all(c);
    }
    for (int j = 0; j < K; j++) dt_allreduce_wait(req[j]);
}

// One rank's first wrong element (the ranks gather these; rank 0 explains the first).
typedef struct {
    int rank, failed;
    long elem;
    float got, want, own;
} fail_t;

static int gather_fail(const fail_t *mine, fail_t *first) {
    int rank = world_rank(), p = world_size(), any = mine->failed;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!any) return 0;
    fail_t *all = rank == 0 ? calloc((size_t)p, sizeof *all) : NULL;
    MPI_Gather(mine, sizeof *mine, MPI_BYTE, all, sizeof *mine, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = p - 1; r >= 0; r--)
            if (all[r].failed) *first = all[r];
        free(all);
    }
    return 1;
}

// Where rank r sits in the shape, for a hint
static void role(const sc_shape *sh, int r, char *s, size_t n) {
    int a, as, b, bs;
    if (sh->torus) {
        sc_place(sh, r, DT_COMM_ROW, &a, &as);
        sc_place(sh, r, DT_COMM_COL, &b, &bs);
        snprintf(s, n, "x %d of its row, y %d of its column", a, b);
    } else {
        sc_place(sh, r, DT_COMM_GROUP, &a, &as);
        snprintf(s, n, "rank %d of its group of %d%s", a, as, a == 0 ? ", the leader" : "");
    }
}

// Integer-valued inputs through each shape of one kind, against MPI_Allreduce, bit for bit
static void exact_check(grade_t *g, const sc_shape *shapes, int ns, int torus, size_t large,
                        int few, uint64_t seed) {
    int rank = world_rank(), p = world_size(), ok = 1, any = 0;
    size_t counts[6] = {0, 1, p > 1 ? (size_t)p - 1 : 2, (size_t)p + 1, 1009, large};
    size_t nc = 6;
    if (few) counts[0] = large, nc = 1;
    char hint[900] = "", shape[48] = "";
    for (int s = 0; ok && s < ns; s++) {
        if (shapes[s].torus != torus) continue;
        any = 1;
        shape_str(&shapes[s], shape, sizeof shape);
        dt_coll_opts o = shape_opts(&shapes[s]);
        dt_error err;
        dt_coll *c = dt_coll_create(MPI_COMM_WORLD, NULL, &o, &err);
        if (!c) {
            fprintf(stderr, "grader: dt_coll_create: %s\n", err.msg);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (size_t j = 0; ok && j < nc; j++)
            for (int mode = 0; ok && mode < 2; mode++) {
                size_t n = counts[j];
                uint64_t sd = mix(seed + 17 * j + 101 * (uint64_t)s + (uint64_t)mode);
                float *buf = malloc((n + 1) * sizeof *buf), *ref = malloc((n + 1) * sizeof *ref);
                for (size_t i = 0; i < n; i++) buf[i] = ref[i] = int_input(sd, rank, i);
                MPI_Allreduce(MPI_IN_PLACE, ref, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
                run_student(c, buf, n, mode);
                fail_t f = {rank, 0, 0, 0, 0, 0}, first = f;
                for (size_t i = 0; i < n && !f.failed; i++)
                    if (memcmp(&buf[i], &ref[i], sizeof(float)))
                        f = (fail_t){rank, 1, (long)i, buf[i], ref[i], int_input(sd, rank, i)};
                if (gather_fail(&f, &first)) {
                    ok = 0;
                    if (rank == 0) {
                        char who[120], whose[160] = "";
                        size_t i = (size_t)first.elem;
                        role(&shapes[s], first.rank, who, sizeof who);
                        for (int q = 0; q < p && !whose[0]; q++) {
                            float x = int_input(sd, q, i);
                            if (x != 0 && first.want - first.got == x)
                                snprintf(whose, sizeof whose, " (rank %d's input %.9g is "
                                         "missing from it)", q, x);
                            else if (x != 0 && first.got - first.want == x)
                                snprintf(whose, sizeof whose, " (rank %d's input %.9g is "
                                         "counted twice)", q, x);
                        }
                        snprintf(hint, sizeof hint, "P %d, %s, count %zu, %s: rank %d (%s) "
                                 "holds %.9g at element %zu, MPI_Allreduce gives %.9g%s",
                                 p, shape, n, mode ? "3 requests in flight" : "blocking",
                                 first.rank, who, first.got, i, first.want,
                                 first.got == first.own && first.got != first.want
                                     ? " (its own input: nothing arrived there)" : whose);
                    }
                }
                free(buf), free(ref);
            }
        dt_coll_free(c);
    }
    if (!any) return;
    if (ok && few)
        snprintf(hint, sizeof hint, "P %d: count %zu, blocking and 3 requests in flight, "
                 "every %s shape of this run: every element equals MPI_Allreduce's", p, large,
                 torus ? "torus" : "group");
    else if (ok)
        snprintf(hint, sizeof hint, "P %d: counts 0, 1, %zu, %zu, 1009, %zu, blocking and 3 "
                 "requests in flight, every %s shape of this run: every element equals "
                 "MPI_Allreduce's", p, counts[2], counts[3], large, torus ? "torus" : "group");
    grade_check(g, ok, torus ? CHECK_TORUS : CHECK_HIER, "%s", hint);
}

// Random floats (their sums depend on the order): every rank's result against rank 0's
static void bits_check(grade_t *g, const sc_shape *shapes, int ns, size_t large, int few,
                       uint64_t seed) {
    int rank = world_rank(), p = world_size(), ok = 1;
    size_t counts[3] = {(size_t)p + 1, 1009, large};
    int nc = few ? 1 : 3;
    if (few) counts[0] = large;
    char hint[700] = "";
    for (int s = 0; ok && s < ns; s++) {
        dt_coll_opts o = shape_opts(&shapes[s]);
        dt_error err;
        dt_coll *c = dt_coll_create(MPI_COMM_WORLD, NULL, &o, &err);
        if (!c) {
            fprintf(stderr, "grader: dt_coll_create: %s\n", err.msg);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (int j = 0; ok && j < nc; j++) {
            size_t n = counts[j];
            uint64_t sd = mix(seed ^ 0xb175u) + (uint64_t)(j + 3 * s);
            float *buf = malloc((n + 1) * sizeof *buf), *r0 = malloc((n + 1) * sizeof *r0);
            for (size_t i = 0; i < n; i++) buf[i] = real_input(sd, rank, i);
            run_student(c, buf, n, 0);
            memcpy(r0, buf, n * sizeof *buf);
            MPI_Bcast(r0, (int)n, MPI_FLOAT, 0, MPI_COMM_WORLD);
            fail_t f = {rank, 0, 0, 0, 0, 0}, first = f;
            for (size_t i = 0; i < n && !f.failed; i++)
                if (memcmp(&buf[i], &r0[i], sizeof(float)))
                    f = (fail_t){rank, 1, (long)i, buf[i], r0[i], real_input(sd, rank, i)};
            if (gather_fail(&f, &first)) {
                ok = 0;
                if (rank == 0) {
                    char who[120], shape[48];
                    role(&shapes[s], first.rank, who, sizeof who);
                    shape_str(&shapes[s], shape, sizeof shape);
                    snprintf(hint, sizeof hint, "P %d, %s, count %zu: element %ld is %.9g on "
                             "rank %d (%s)%s, but %.9g on rank 0: each element must be summed "
                             "once, on one rank, then copied", p, shape, n, first.elem,
                             first.got, first.rank, who,
                             first.got == first.own ? ", its own input: nothing arrived there"
                                                    : "", first.want);
                }
            } else {  // the ranks agree: on the sum? (rank 0 checks; every rank learns it)
                double want = 0;
                long bad = rank == 0 ? grade_wrong_sum(r0, n, p, real_input, sd, &want) : -1;
                MPI_Bcast(&bad, 1, MPI_LONG, 0, MPI_COMM_WORLD);
                if (bad >= 0) {
                    ok = 0;
                    if (rank == 0) {
                        char shape[48];
                        shape_str(&shapes[s], shape, sizeof shape);
                        snprintf(hint, sizeof hint, "P %d, %s, count %zu: element %ld is %.9g "
                                 "on every rank, but the sum over the ranks is %.9g: the ranks "
                                 "agree only on a wrong result (see the checks of the sums)", p,
                                 shape, n, bad, r0[bad], want);
                    }
                }
            }
            free(buf), free(r0);
        }
        dt_coll_free(c);
    }
    if (ok && few)
        snprintf(hint, sizeof hint, "P %d: %zu random floats, every shape of this run: the "
                 "same bits on every rank", p, large);
    else if (ok)
        snprintf(hint, sizeof hint, "P %d: counts %zu, 1009, %zu of random floats, every shape "
                 "of this run: the same bits on every rank", p, counts[0], large);
    grade_check(g, ok, CHECK_BITS, "%s", hint);
}

// ---- simulated time: hier at --group G against its closed form (student_hier.h): the
// binomial reduce and broadcast inside a node, ⌈lg g⌉ rounds each of α' + nβ', and the
// leaders' ring, 2(L-1) rounds of α + (n/L)β. No γ: the simulation does not time additions.
static double closed_form(const args_t *a, int p, double bytes) {
    int g = a->group, L = (p + g - 1) / g;
    return 2 * ceil_lg(g) * (a->alpha_in + bytes * a->beta_in) +
           2 * (L - 1) * (a->alpha + bytes / L * a->beta);
}

static void timing_check(grade_t *g, const args_t *a, int sched_ok) {
    int p = world_size();
    size_t count = (size_t)(a->timing / 4);
    double bytes = (double)count * 4;
    int L = (p + a->group - 1) / a->group;
    if (!sched_ok) {
        grade_check(g, 0, CHECK_TIME, "P %d: not timed: the schedule fails %s or %s (above)",
                    p, CHECK_FORM, CHECK_MATCH);
        return;
    }
    sc_shape sh = {p, 0, a->group, 0, 0};
    dt_coll_opts o = shape_opts(&sh);
    o.cost.alpha = a->alpha, o.cost.beta = a->beta, o.cost.gamma = 0.0;
    o.cost.alpha_intra = a->alpha_in, o.cost.beta_intra = a->beta_in;
    double t = timing_one(&o, count), model = closed_form(a, p, bytes), ratio = t / model;
    int ok = fabs(ratio - 1.0) <= 0.05;
    const char *why = ok ? ""
        : ratio < 0.01 ? ": next to nothing was sent (an empty schedule?)"
        : ratio > 1 ? ": slower than the three phases: more rounds, or more bytes across the "
                      "network (see " CHECK_HSHAPE ")"
                    : ": faster than the closed form: is it the three phases? (the leaders' "
                      "ring, 2(L-1) rounds of n/L bytes, cannot be skipped)";
    grade_check(g, ok, CHECK_TIME, "P %d in groups of %d (L = %d leaders), %.0f bytes, α %g s, "
                "β %g s/B, inside a node α' %g s, β' %g s/B: simulated %.4e s, closed form "
                "2⌈lg g⌉(α' + nβ') + 2(L-1)(α + nβ/L) = %.4e s, ratio %.4f%s", p, a->group, L,
                bytes, a->alpha, a->beta, a->alpha_in, a->beta_in, t, model, ratio, why);
}

// (perf) hier against the flat ring at the same P and size, both simulated: the speedup the
// cost model predicts, within RACE_MARGIN. Simulated time is the same bits on every machine
// (docs/conventions.md, "Same bits everywhere"), so the verdict is too.
static void race_check(grade_t *g, const args_t *a, int sched_ok) {
    int p = world_size();
    size_t count = (size_t)(a->timing / 4);
    double bytes = (double)count * 4;
    if (!sched_ok) {
        grade_check(g, 0, CHECK_RACE, "P %d: not timed: the schedule fails %s or %s (above)",
                    p, CHECK_FORM, CHECK_MATCH);
        return;
    }
    sc_shape sh = {p, 0, a->group, 0, 0};
    dt_coll_opts o = shape_opts(&sh);
    o.cost.alpha = a->alpha, o.cost.beta = a->beta, o.cost.gamma = 0.0;
    o.cost.alpha_intra = a->alpha_in, o.cost.beta_intra = a->beta_in;
    double th = timing_one(&o, count), tr = a->ring_time;
    if (a->versus) {  // the flat ring simulated here (1024 ranks round by round: ~40 s)
        o.algo = algo_named("ring"), o.coarsen = a->coarsen;
        tr = timing_one(&o, count);
        if (a->ring_time > 0) {  // grade.sh's reference time must be this one (to 1e-9:
            int same = fabs(tr / a->ring_time - 1.0) <= 1e-9;  // runs differ in the last bit)
            grade_check(g, same, CHECK_RING_REF, "P %d, %.0f bytes: the flat ring simulated "
                        "%.17g s, grade.sh's --flat-ring-time %.17g s%s", p, bytes, tr,
                        a->ring_time, same ? "" : ": update grade.sh");
        }
    }
    // the flat ring's step is as slow as its slowest hop, one between two nodes
    double ring_model = 2.0 * (p - 1) * (a->alpha + bytes / p * a->beta);
    double want = ring_model / closed_form(a, p, bytes), got = th > 0 ? tr / th : 0.0;
    double off = got / want - 1.0;
    int ok = fabs(off) <= RACE_MARGIN;  // above too: an empty schedule is very fast
    grade_check(g, ok, CHECK_RACE, "P %d in groups of %d, %.0f bytes: hier %.4e s, the flat "
                "ring %.4e s%s: %.3fx faster; the model predicts %.3fx (ring 2(P-1)(α + nβ/P) "
                "= %.4e s over hier's closed form): %.1f %% %s it (full marks within %.0f %% "
                "either way)%s", p, a->group, bytes, th, tr,
                a->coarsen > 1   ? " (its rounds merged by --coarsen)"
                : !a->versus     ? " (simulated once, the same bits on every machine)"
                                 : "", got, want, ring_model,
                fabs(off) * 100, off >= 0 ? "above" : "below", RACE_MARGIN * 100,
                ok ? "" : off > 0 ? ": faster than three phases can be: are messages missing? "
                                    "(an empty schedule simulates in no time)"
                   : ": slower than three phases should be: more rounds among the leaders, "
                     "or more bytes across the network than a ring of n/L chunks");
}

static double parse_size(const char *s) {
    char *end;
    double v = strtod(s, &end);
    if (*end == 'K' || *end == 'k') v *= 1024;
    else if (*end == 'M' || *end == 'm') v *= 1048576;
    return v;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = world_rank(), p = world_size();
    args_t a = {.large = 100003, .alpha = 2e-6, .beta = 8e-10, .alpha_in = 1e-7,
                .beta_in = 1e-11, .group = 8, .groups = "2,3,4", .tori = "all"};
    static const struct option lo[] = {
        {"large", 1, 0, 'L'}, {"timing", 1, 0, 't'}, {"alpha", 1, 0, 'A'}, {"beta", 1, 0, 'B'},
        {"alpha-intra", 1, 0, 'a'}, {"beta-intra", 1, 0, 'b'}, {"group", 1, 0, 'g'},
        {"groups", 1, 0, 'G'}, {"tori", 1, 0, 'T'}, {"no-data", 0, 0, 'n'}, {"few", 0, 0, 'f'},
        {"versus-flat", 0, 0, 'v'}, {"coarsen", 1, 0, 'c'}, {"flat-ring-time", 1, 0, 'R'},
        {0, 0, 0, 0}};
    for (int ch; (ch = getopt_long(argc, argv, "", lo, NULL)) != -1;) {
        switch (ch) {
        case 'L': a.large = strtoull(optarg, NULL, 10); break;
        case 't': a.timing = parse_size(optarg); break;
        case 'A': a.alpha = atof(optarg); break;
        case 'B': a.beta = atof(optarg); break;
        case 'a': a.alpha_in = atof(optarg); break;
        case 'b': a.beta_in = atof(optarg); break;
        case 'g': a.group = atoi(optarg); break;
        case 'G': a.groups = optarg; break;
        case 'T': a.tori = optarg; break;
        case 'n': a.no_data = 1; break;
        case 'f': a.few = 1; break;
        case 'v': a.versus = 1; break;
        case 'c': a.coarsen = atoi(optarg); break;
        case 'R': a.ring_time = atof(optarg); break;
        default:
            if (rank == 0) fprintf(stderr, "grader: options: --large N --groups LIST --tori "
                                   "all|XxY,... --timing BYTES --group G --alpha --beta "
                                   "--alpha-intra --beta-intra --no-data --few --versus-flat --flat-ring-time S --coarsen K (grader.c's header)\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (a.group < 1 || a.group > p) a.group = p;
    grade_t g = grade_begin("06 hierarchy", rank != 0);
    MPI_Bcast(&g.seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    sc_shape shapes[MAX_SHAPES];
    int ns = a.timing > 0 && a.no_data ? 0 : shapes_of(&a, shapes), ok[4] = {1, 1, 1, 1};
    if (a.timing > 0 && a.no_data) shapes[ns++] = (sc_shape){p, 0, a.group, 0, 0};
    if (rank == 0) printf("# P %d\n", p);
    fflush(stdout);
    schedule_checks(&g, shapes, ns, a.large, ok);
    int sched_ok = ok[0] && ok[1];
    if (!a.no_data) {
        if (sched_ok) {
            exact_check(&g, shapes, ns, 0, a.large, a.few, g.seed);
            exact_check(&g, shapes, ns, 1, a.large, a.few, g.seed);
            bits_check(&g, shapes, ns, a.large, a.few, g.seed);
        } else {
            const char *why = "not run: the schedule fails " CHECK_FORM " or " CHECK_MATCH
                              " (above); running it could hang or crash";
            grade_check(&g, 0, CHECK_HIER, "P %d: %s", p, why);
            grade_check(&g, 0, CHECK_TORUS, "P %d: %s", p, why);
            grade_check(&g, 0, CHECK_BITS, "P %d: %s", p, why);
        }
    }
    if (a.timing > 0) timing_check(&g, &a, sched_ok);
    if (a.timing > 0 && (a.versus || a.ring_time > 0)) race_check(&g, &a, sched_ok);
    int rc = grade_end(&g);  // the same on every rank (they agreed on every check)
    MPI_Finalize();
    return rank == 0 ? rc : 0;
}
