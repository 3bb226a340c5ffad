// coll_algos.c — the registry of allreduce algorithms: one entry each (coll_sched.h's
// dt_algo_def: name, schedule builder, cost, constraints). Everything that names an
// algorithm reads this table: dt_algo_parse (dtrain --algo, dtsim --algo, dtcoll-bench
// --algos, DTCOLL_ALGO), dt_coll_create's checks, the cost model behind `auto` and the
// fusion planner, and the request that builds the schedule. Adding an algorithm is one
// entry here, its builder beside its schedule.
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "coll_btree.h"
#include "coll_cost.h"
#include "coll_sched.h"
#include "../opt_table.h"

// ---- what the built-ins check and complete ----

// hier "rs" pairs local rank i of every group: the groups must be equal.
static int hier_check(const dt_coll_opts *o, int p, dt_error *err) {
    if (o->hier_rs && p % o->group)
        return dt_fail(err, DT_EXIT_USAGE, "allreduce: hier rs needs equal groups, but %d ranks "
                       "do not split into groups of %d (use the reduce variant or another group "
                       "size)", p, o->group);
    return 0;
}

// auto takes hier only where there are groups to speak of, and a grid only where the user
// drew one (its X rings are costed as intra links).
static int hier_in_auto(const dt_coll_opts *o, int p) { return o->group > 1 && o->group < p; }
static int torus2d_in_auto(const dt_coll_opts *o, int p) {
    (void)p;
    return o->tx > 1 && o->ty > 1;
}

// torus2d without a grid given: the squarest (coll.c has checked a given one)
static void torus2d_settle(dt_coll_opts *o, int p) {
    if (!o->tx && !o->ty) dt_torus_shape(p, &o->tx, &o->ty);
}

// dbtree's depth, O(P log P) once per communicator, not per cost call (coll.h); also for
// auto, which may choose dbtree
static void dbtree_settle(dt_coll_opts *o, int p) { o->dbtree_depth = p > 1 ? dt_dtree_depth(p) : 1; }

// A build adds algorithms without editing this table: compile this file into the program
// with -DDT_ALGO_EXTRA='"file.h"', a header that declares their builders and defines
// DT_ALGO_EXTRA_ENTRIES as more entries like the ones below, each `{"name", builder, cost,
// check, in_auto, flags, settle, comms, sums_by},` on one line (tests/coll/algo_reverse_ring.h
// does; so can a lesson's ring). Their numbers follow DT_ALGO_COUNT. The library's own copy
// of this file is then overridden: its functions are weak symbols.
// (A whole build's extras, cmake -DDT_ALGO_EXTRA=..., nn/CMakeLists.txt, keep the library's
// copy weak: DT_ALGO_WEAK.)
#ifdef DT_ALGO_EXTRA
#include DT_ALGO_EXTRA
#endif
#if defined(DT_ALGO_EXTRA) && !defined(DT_ALGO_WEAK)
#define DT_REGISTRY
#else
#define DT_REGISTRY __attribute__((weak))
#endif
#ifndef DT_ALGO_EXTRA_ENTRIES
#define DT_ALGO_EXTRA_ENTRIES
#endif

// The built-ins, one line each (cmake/dtlab_algos.cmake reads these lines for the test
// lists: keep an entry on one line, its flags by name). Each names its place in coll.h's
// dt_algo, so the order of the lines does not matter, and the assertion below fails the
// build when an enumerator has no line or a line no enumerator.
//   enumerator         name       builder           cost             check       in auto          flags                                         settle          comms             sums_by
#define DT_ALGO_BUILTINS(X)                                                                                                                                                                  \
    X(DT_ALGO_MPI,     {"mpi",     dt_build_native,  NULL,            NULL,       NULL,            DT_ALGO_SUMS_IN_WIRE_TYPE,                    NULL,           NULL,             "the MPI library"}) \
    X(DT_ALGO_PS,      {"ps",      dt_build_ps,      dt_cost_ps,      NULL,       NULL,            0,                                            NULL,           NULL,             NULL}) \
    X(DT_ALGO_RING,    {"ring",    dt_build_ring,    dt_cost_ring,    NULL,       NULL,            0,                                            NULL,           NULL,             NULL}) \
    X(DT_ALGO_RHD,     {"rhd",     dt_build_rhd,     dt_cost_rhd,     NULL,       NULL,            0,                                            NULL,           NULL,             NULL}) \
    X(DT_ALGO_DBTREE,  {"dbtree",  dt_build_dbtree,  dt_cost_dbtree,  NULL,       NULL,            0,                                            dbtree_settle,  NULL,             NULL}) \
    X(DT_ALGO_HIER,    {"hier",    dt_build_hier,    dt_cost_hier,    hier_check, hier_in_auto,    DT_ALGO_USES_GROUPS,                          NULL,           dt_comms_hier,    NULL}) \
    X(DT_ALGO_TORUS2D, {"torus2d", dt_build_torus2d, dt_cost_torus2d, NULL,       torus2d_in_auto, DT_ALGO_USES_GRID,                            torus2d_settle, dt_comms_torus2d, NULL}) \
    X(DT_ALGO_NCCL,    {"nccl",    NULL,             NULL,            NULL,       NULL,            DT_ALGO_SUMS_IN_WIRE_TYPE | DT_ALGO_EXTERNAL, NULL,           NULL,             "NCCL"}) \
    X(DT_ALGO_AUTO,    {"auto",    NULL,             NULL,            NULL,       NULL,            DT_ALGO_CHOOSES,                              dbtree_settle,  NULL,             NULL})

#define DT_ALGO_BIT(e, ...) | 1ull << (e)
_Static_assert((0ull DT_ALGO_BUILTINS(DT_ALGO_BIT)) == (1ull << DT_ALGO_COUNT) - 1,
               "coll.h's dt_algo and DT_ALGO_BUILTINS must name the same algorithms");

// Entry i into *out (when out is not NULL and i names an entry); returns the number of
// entries. The tables are built in this function's frame, not kept in static storage: a
// static table of function pointers is written once by the loader (-fPIC relocations), and
// nn/ keeps no storage that is written at run time at all.
static int table(int i, dt_algo_def *out) {
#define DT_ALGO_ENTRY(e, ...) [e] = __VA_ARGS__,
    const dt_algo_def builtin[] = {DT_ALGO_BUILTINS(DT_ALGO_ENTRY)};
    // (a build's entries may stop after the flags: the hooks after them are optional)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
    const dt_algo_def extra[] = {DT_ALGO_EXTRA_ENTRIES {NULL}};  // (NULL: the end)
#pragma GCC diagnostic pop
    _Static_assert(sizeof builtin / sizeof builtin[0] == DT_ALGO_COUNT, "a dt_algo without entry");
    int n = (int)DT_ALGO_COUNT + (int)(sizeof extra / sizeof extra[0]) - 1;
    if (out && i >= 0 && i < n) *out = i < DT_ALGO_COUNT ? builtin[i] : extra[i - DT_ALGO_COUNT];
    return n;
}

DT_REGISTRY int dt_algo_count(void) { return table(-1, NULL); }

DT_REGISTRY int dt_algo_get(dt_algo a, dt_algo_def *out) {
    if ((int)a < 0 || (int)a >= table(-1, NULL)) return -1;
    table((int)a, out);
    return 0;
}

DT_REGISTRY const char *dt_algo_name(dt_algo a) {
    dt_algo_def d;
    return dt_algo_get(a, &d) ? "?" : d.name;  // (a string literal: it outlives d)
}

// "mpi, ps, ring, ..." into buf
DT_REGISTRY const char *dt_algo_names(char *buf, size_t n) {
    size_t len = 0;
    buf[0] = 0;
    dt_algo_def d;
    for (int i = 0; i < dt_algo_count() && len < n; i++) {
        dt_algo_get((dt_algo)i, &d);
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", d.name);
    }
    return buf;
}

DT_REGISTRY int dt_algo_parse(const char *s, const char *what, dt_algo *out, dt_error *err) {
    dt_algo_def d;
    for (int i = 0; s && i < dt_algo_count(); i++)
        if (!dt_algo_get((dt_algo)i, &d) && strcasecmp(s, d.name) == 0) {
            *out = (dt_algo)i;
            return 0;
        }
    char names[DT_ALGO_NAMES_MAX], want[DT_ALGO_NAMES_MAX + 40];
    snprintf(want, sizeof want, "an allreduce algorithm (valid: %s)",
             dt_algo_names(names, sizeof names));
    return dt_opt_bad(err, what ? what : "algorithm", s ? s : "(null)", want);
}

DT_REGISTRY double dt_coll_cost(dt_algo a, const dt_coll_opts *o, int p, double bytes) {
    dt_algo_def d;
    return !dt_algo_get(a, &d) && d.cost ? d.cost(o, p, bytes) : NAN;
}

// The cheapest by the cost model; ring unless another is strictly cheaper.
DT_REGISTRY dt_algo dt_coll_cheapest(const dt_coll_opts *o, int p, double bytes) {
    dt_algo best = DT_ALGO_RING;
    double tbest = dt_cost_ring(o, p, bytes);
    for (int i = 0, n = dt_algo_count(); i < n; i++) {
        dt_algo_def d;
        if (dt_algo_get((dt_algo)i, &d)) continue;
        if (i == DT_ALGO_RING || !d.cost || (d.in_auto && !d.in_auto(o, p))) continue;
        double t = d.cost(o, p, bytes);
        if (t < tbest) tbest = t, best = (dt_algo)i;  // NaN never compares less
    }
    return best;
}
