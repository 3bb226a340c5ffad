// dtcoll_mpi.c — libdtcoll_mpi.so: dtlab's allreduce algorithms (nn/coll) under an existing
// MPI program, through the MPI profiling interface. `mpirun -x LD_PRELOAD=libdtcoll_mpi.so
// -x DTCOLL_ALGO=rhd ./prog` runs prog's MPI_Allreduce and MPI_Iallreduce of MPI_FLOAT or
// MPI_DOUBLE with MPI_SUM, on any intra-communicator, on our algorithms; every other call,
// and every other type, operation or inter-communicator, goes to PMPI unchanged.
// Not here: the algorithms (nn/coll), or a progress thread (see "Progress" below).
//
// Environment (read once, at the first intercepted call; the same on every rank):
//   DTCOLL_ALGO     mpi ps ring rhd dbtree hier torus2d auto (default ring); an unknown name
//                   prints the valid ones and ends the job with exit code 2 (MPI_Abort)
//   DTCOLL_FP16=1   fp16 on the wire for MPI_FLOAT (MPI_DOUBLE keeps full precision)
//   DTCOLL_GROUP=G  hier's ranks per group (default: the launcher's ranks per node),
//                   capped at each communicator's size
//   DTCOLL_INNER    ring or rhd: hier's and torus2d's inner allreduce (default ring)
//   DTCOLL_VERBOSE=1  MPI_COMM_WORLD's rank 0 prints once "dtcoll: MPI_Allreduce via ALGO"
//   DTCOLL_CHECK=1  (read by nn/coll) every call checks that the ranks passed one count
//
// Design choices:
//  - One dt_coll per communicator, created lazily by the first intercepted call on it (a
//    collective call, so every rank of the communicator creates it at the same point) and
//    cached as an MPI attribute of the communicator (MPI_Comm_create_keyval). The copy
//    callback is MPI_COMM_NULL_COPY_FN (a duplicate gets its own on first use); the delete
//    callback, run by MPI_Comm_free, completes that communicator's requests and frees the
//    dt_coll. Under fp16 wire a second, full-precision dt_coll serves MPI_DOUBLE.
//  - The library's own MPI calls (MPI_Testall, MPI_Waitsome inside nn/coll's runner) come
//    back through the MPI_* symbols defined here: a depth counter sends every call made
//    while inside the library straight to PMPI. The `mpi` algorithm calls PMPI_Iallreduce
//    and DTCOLL_CHECK's count check PMPI_Allreduce, so nothing recurses.
//  - sendbuf != MPI_IN_PLACE: sendbuf is copied into recvbuf first (memmove), then the sum
//    runs in place in recvbuf. count 0, a NULL recvbuf, a negative count: passed to PMPI,
//    which does nothing or reports the error in its own way.
//  - Under MPI_THREAD_MULTIPLE everything passes to PMPI (this file's state is not locked).
//  - Only the C bindings are intercepted (Fortran's mpi_allreduce_ is not).
//  - Symbols: the library is built with hidden visibility, so only the MPI_* functions below
//    are exported and nn/coll's dt_* functions cannot clash with a program's own copy.
//
// Progress. MPI_Iallreduce starts our nonblocking allreduce and returns a generalized request
// (MPI_Grequest_start); a list of (generalized request, dt_coll_req) holds those in flight.
// With no progress thread, our requests advance only inside the calls intercepted here:
// MPI_Test/Testall/Testany/Testsome advance every one of ours once (nonblocking) and then
// pass on; MPI_Wait/Waitall/Waitany/Waitsome, while any of ours are in flight, poll (advance
// ours, PMPI_Test* the caller's requests) until the caller's condition holds — so waiting on
// a plain request never starves a collective that another rank is waiting on; a blocking
// MPI_Allreduce, while others are in flight, polls them all likewise. A finished one is
// completed with MPI_Grequest_complete, after which PMPI's own Wait/Test returns it.
// MPI_Finalize first completes all of ours (blocking), then frees every cached dt_coll.
// Limit: a rank blocked in a call not intercepted here (MPI_Recv, MPI_Barrier, ...) does not
// advance its Iallreduce, so a program that needs that progress to make its MPI_Recv match
// can hang (as with any MPI library lacking asynchronous progress).
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll/coll.h"

#define EXPORT __attribute__((visibility("default")))

// The state of one communicator (the attribute's value).
typedef struct comm_state {
    MPI_Comm comm;            // the caller's communicator (for MPI_Finalize's clean-up)
    int inter;                // an inter-communicator: everything passes to PMPI
    dt_coll *c32, *c64;       // for MPI_FLOAT and MPI_DOUBLE (the same one unless fp16 wire)
    struct comm_state *next;  // every state, for MPI_Finalize
} comm_state;

// One MPI_Iallreduce in flight.
typedef struct pending {
    MPI_Request greq;  // what the caller holds
    dt_coll_req *req;
    comm_state *s;
    struct pending *next;
} pending;

// This library's state: one MPI process, one thread in MPI at a time (real/, not nn/).
static struct {
    int ready;          // the environment has been read
    int passthrough;    // MPI_THREAD_MULTIPLE: intercept nothing
    int verbose, printed;
    dt_coll_opts opts;
    int keyval;
    int depth;          // > 0 while inside nn/coll: every call goes to PMPI
    pending *inflight;  // our MPI_Iallreduce requests, newest first
    comm_state *states;
} g = {0, 0, 0, 0, {0}, MPI_KEYVAL_INVALID, 0, NULL, NULL};

// ---- configuration ----

// Bad settings are the same on every rank: rank 0 of the communicator in use says why, the
// others give it a second to do so, and the job ends with exit code 2.
static void usage_abort(MPI_Comm comm, const char *msg) {
    int r = 0;
    PMPI_Comm_rank(comm, &r);
    if (r == 0) {
        fprintf(stderr, "dtcoll: %s\n", msg);
        fflush(stderr);
    } else {
        sleep(1);
    }
    PMPI_Abort(comm, DT_EXIT_USAGE);
    exit(DT_EXIT_USAGE);
}

static int env_flag(MPI_Comm comm, const char *name) {
    const char *v = getenv(name);
    if (!v || !*v || strcmp(v, "0") == 0) return 0;
    if (strcmp(v, "1") == 0) return 1;
    char m[256];
    snprintf(m, sizeof m, "%s='%s': expected 0 or 1", name, v);
    usage_abort(comm, m);
    return 0;
}

static void configure(MPI_Comm comm) {
    if (g.ready) return;
    g.ready = 1;
    int level = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&level);
    g.passthrough = level == MPI_THREAD_MULTIPLE;
    g.verbose = env_flag(comm, "DTCOLL_VERBOSE");
    dt_coll_opts o = dt_coll_opts_default();
    dt_error err;
    const char *v = getenv("DTCOLL_ALGO");
    if (v && *v && dt_algo_parse(v, "DTCOLL_ALGO", &o.algo, &err)) usage_abort(comm, err.msg);
    if (o.algo == DT_ALGO_NCCL)
        usage_abort(comm, "DTCOLL_ALGO: nccl runs only inside dtrain --device cuda (this "
                    "library reduces host buffers); use ring, rhd, ...");
    v = getenv("DTCOLL_INNER");
    if (v && *v && dt_algo_parse(v, "DTCOLL_INNER", &o.inner, &err)) usage_abort(comm, err.msg);
    if (o.inner != DT_ALGO_RING && o.inner != DT_ALGO_RHD)
        usage_abort(comm, "DTCOLL_INNER: expected ring or rhd");
    v = getenv("DTCOLL_GROUP");
    if (v && *v) {
        char *end;
        long x = strtol(v, &end, 10);
        if (*end || x < 1 || x > 1 << 20) {
            char m[256];
            snprintf(m, sizeof m, "DTCOLL_GROUP='%s': expected a positive number of ranks", v);
            usage_abort(comm, m);
        }
        o.group = (int)x;
    }
    o.wire_f16 = env_flag(comm, "DTCOLL_FP16");
    if (o.wire_f16 && o.algo == DT_ALGO_MPI)
        usage_abort(comm, "DTCOLL_FP16=1 needs one of our algorithms (the MPI library's "
                    "MPI_Allreduce has no fp16 sum); not DTCOLL_ALGO=mpi");
    g.opts = o;
}

// ---- the communicator cache ----

static void complete(pending *p);
static void wait_for(dt_coll_req *target);

static int delete_state(MPI_Comm comm, int keyval, void *val, void *extra) {
    (void)comm, (void)keyval, (void)extra;
    comm_state *s = val;
    g.depth++;
    for (pending *p = g.inflight, *nx; p; p = nx) {  // MPI_Comm_free lets them finish
        nx = p->next;
        if (p->s == s) {
            wait_for(p->req);
            complete(p);
            nx = g.inflight;  // the list changed under us
        }
    }
    if (s->c64 && s->c64 != s->c32) dt_coll_free(s->c64);
    dt_coll_free(s->c32);
    for (comm_state **q = &g.states; *q; q = &(*q)->next)
        if (*q == s) {
            *q = s->next;
            break;
        }
    free(s);
    g.depth--;
    return MPI_SUCCESS;
}

static dt_coll *make_coll(MPI_Comm comm, int wire_f16) {
    int p;
    PMPI_Comm_size(comm, &p);
    dt_coll_opts o = g.opts;
    o.wire_f16 = wire_f16;
    if (o.group > p) o.group = p;
    dt_error err;
    dt_coll *c = dt_coll_create(comm, NULL, &o, &err);
    if (!c) usage_abort(comm, err.msg);
    if (g.verbose && !g.printed) {
        int wr;
        PMPI_Comm_rank(MPI_COMM_WORLD, &wr);
        const dt_coll_opts *ro = dt_coll_get_opts(c);
        if (wr == 0)
            printf("dtcoll: MPI_Allreduce via %s (fp16 wire %s, group %d, inner %s; first "
                   "communicator has %d ranks)\n", dt_algo_name(ro->algo), ro->wire_f16 ?
                   "on" : "off", ro->group, dt_algo_name(ro->inner), p);
        fflush(stdout);
        g.printed = 1;
    }
    return c;
}

static comm_state *state_of(MPI_Comm comm) {
    if (g.keyval == MPI_KEYVAL_INVALID)
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &g.keyval, NULL);
    comm_state *s = NULL;
    int flag = 0;
    PMPI_Comm_get_attr(comm, g.keyval, &s, &flag);
    if (flag) return s;
    s = callocCheck(1, sizeof *s);
    s->comm = comm;
    PMPI_Comm_test_inter(comm, &s->inter);
    if (!s->inter) {
        g.depth++;
        s->c32 = make_coll(comm, g.opts.wire_f16);
        s->c64 = g.opts.wire_f16 ? make_coll(comm, 0) : s->c32;
        g.depth--;
    }
    PMPI_Comm_set_attr(comm, g.keyval, s);
    s->next = g.states;
    g.states = s;
    return s;
}

// Is this call ours? Sets *s (the communicator's state), *c (the context) and *t (the
// element type) when it is.
static int ours(void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                comm_state **s, dt_coll **c, dt_dtype *t) {
    if (g.depth || op != MPI_SUM || (dt != MPI_FLOAT && dt != MPI_DOUBLE) || count <= 0 ||
        !recvbuf || comm == MPI_COMM_NULL)
        return 0;
    configure(comm);
    if (g.passthrough) return 0;
    *s = state_of(comm);
    if ((*s)->inter) return 0;
    *t = dt == MPI_FLOAT ? DT_F32 : DT_F64;
    *c = *t == DT_F32 ? (*s)->c32 : (*s)->c64;
    return 1;
}

static void to_recvbuf(const void *sendbuf, void *recvbuf, int count, dt_dtype t) {
    if (sendbuf != MPI_IN_PLACE && sendbuf != recvbuf)
        memmove(recvbuf, sendbuf, (size_t)count * (t == DT_F32 ? sizeof(float) : sizeof(double)));
}

static void fail(MPI_Comm comm, const dt_error *err) {
    fprintf(stderr, "dtcoll: %s\n", err->msg);
    fflush(stderr);
    PMPI_Abort(comm, err->code ? err->code : DT_EXIT_RUNTIME);
}

// ---- our requests in flight ----

static pending *find(MPI_Request r) {
    if (r == MPI_REQUEST_NULL) return NULL;
    for (pending *p = g.inflight; p; p = p->next)
        if (p->greq == r) return p;
    return NULL;
}

// The allreduce of p has finished (or finishes now): free it and complete the caller's request.
static void complete(pending *p) {
    g.depth++;
    dt_allreduce_wait(p->req);
    PMPI_Grequest_complete(p->greq);
    g.depth--;
    for (pending **q = &g.inflight; *q; q = &(*q)->next)
        if (*q == p) {
            *q = p->next;
            break;
        }
    free(p);
}

// Advance every one of ours once; complete those that finished.
static void progress_all(void) {
    g.depth++;
    for (pending *p = g.inflight, *nx; p; p = nx) {
        nx = p->next;
        if (dt_allreduce_progress(p->req)) complete(p);
    }
    g.depth--;
}

// Run `target` (not in the list, or in it) to completion while advancing every other one;
// the runner's own blocking wait when nothing else is in flight.
static void wait_for(dt_coll_req *target) {
    g.depth++;
    int others = 0;
    for (pending *p = g.inflight; p; p = p->next) others += p->req != target;
    if (!others) {
        g.depth--;
        return;  // the caller's dt_allreduce_wait blocks efficiently
    }
    while (!dt_allreduce_progress(target)) progress_all();
    g.depth--;
}

// Every one of ours to completion (MPI_Finalize).
static void complete_all(void) {
    while (g.inflight) {
        wait_for(g.inflight->req);
        complete(g.inflight);
    }
}

static int query_fn(void *extra, MPI_Status *st) {
    (void)extra;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int free_fn(void *extra) { (void)extra; return MPI_SUCCESS; }
static int cancel_fn(void *extra, int done) { (void)extra, (void)done; return MPI_SUCCESS; }

// ---- the intercepted calls ----

EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                         MPI_Op op, MPI_Comm comm) {
    comm_state *s;
    dt_coll *c;
    dt_dtype t;
    if (!ours(recvbuf, count, dt, op, comm, &s, &c, &t))
        return PMPI_Allreduce(sendbuf, recvbuf, count, dt, op, comm);
    to_recvbuf(sendbuf, recvbuf, count, t);
    g.depth++;
    dt_error err;
    dt_coll_req *r = dt_allreduce_start(c, recvbuf, (size_t)count, t, &err);
    if (!r) fail(comm, &err);
    wait_for(r);
    dt_allreduce_wait(r);
    g.depth--;
    return MPI_SUCCESS;
}

EXPORT int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                          MPI_Op op, MPI_Comm comm, MPI_Request *request) {
    comm_state *s;
    dt_coll *c;
    dt_dtype t;
    if (!ours(recvbuf, count, dt, op, comm, &s, &c, &t))
        return PMPI_Iallreduce(sendbuf, recvbuf, count, dt, op, comm, request);
    to_recvbuf(sendbuf, recvbuf, count, t);
    g.depth++;
    dt_error err;
    pending *p = callocCheck(1, sizeof *p);
    p->req = dt_allreduce_start(c, recvbuf, (size_t)count, t, &err);
    if (!p->req) fail(comm, &err);
    p->s = s;
    PMPI_Grequest_start(query_fn, free_fn, cancel_fn, NULL, &p->greq);
    p->next = g.inflight;
    g.inflight = p;
    *request = p->greq;
    g.depth--;
    return MPI_SUCCESS;
}

EXPORT int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st) {
    if (!g.depth && g.inflight) progress_all();
    return PMPI_Test(req, flag, st);
}

EXPORT int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[]) {
    if (!g.depth && g.inflight) progress_all();
    return PMPI_Testall(n, reqs, flag, sts);
}

EXPORT int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st) {
    if (!g.depth && g.inflight) progress_all();
    return PMPI_Testany(n, reqs, idx, flag, st);
}

EXPORT int MPI_Testsome(int n, MPI_Request reqs[], int *n_out, int idx[], MPI_Status sts[]) {
    if (!g.depth && g.inflight) progress_all();
    return PMPI_Testsome(n, reqs, n_out, idx, sts);
}

EXPORT int MPI_Wait(MPI_Request *req, MPI_Status *st) {
    if (g.depth || !g.inflight) return PMPI_Wait(req, st);
    pending *p = find(*req);
    if (p) {  // one of ours: run it to completion, advancing the others
        wait_for(p->req);
        complete(p);
        return PMPI_Wait(req, st);
    }
    for (;;) {
        int flag = 0, rc = PMPI_Test(req, &flag, st);
        if (rc != MPI_SUCCESS || flag) return rc;
        progress_all();
        if (!g.inflight) return PMPI_Wait(req, st);
    }
}

EXPORT int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[]) {
    for (;;) {
        if (g.depth || !g.inflight) return PMPI_Waitall(n, reqs, sts);
        int flag = 0, rc = PMPI_Testall(n, reqs, &flag, sts);
        if (rc != MPI_SUCCESS || flag) return rc;
        progress_all();
    }
}

EXPORT int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st) {
    for (;;) {
        if (g.depth || !g.inflight) return PMPI_Waitany(n, reqs, idx, st);
        int flag = 0, rc = PMPI_Testany(n, reqs, idx, &flag, st);
        if (rc != MPI_SUCCESS || flag) return rc;
        progress_all();
    }
}

EXPORT int MPI_Waitsome(int n, MPI_Request reqs[], int *n_out, int idx[], MPI_Status sts[]) {
    for (;;) {
        if (g.depth || !g.inflight) return PMPI_Waitsome(n, reqs, n_out, idx, sts);
        int rc = PMPI_Testsome(n, reqs, n_out, idx, sts);
        if (rc != MPI_SUCCESS || *n_out != 0) return rc;  // MPI_UNDEFINED: none active
        progress_all();
    }
}

EXPORT int MPI_Finalize(void) {
    if (g.depth) return PMPI_Finalize();
    complete_all();
    while (g.states) {  // the delete callback frees the dt_coll and unlinks the state
        comm_state *s = g.states;
        PMPI_Comm_delete_attr(s->comm, g.keyval);
        if (g.states == s) g.states = s->next;  // (not ours after all: do not loop)
    }
    if (g.keyval != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&g.keyval);
    return PMPI_Finalize();
}
