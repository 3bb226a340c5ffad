// dtcoll_mpi.c — libdtcoll_mpi.so: dtlab's allreduce algorithms (nn/coll) under an existing
// MPI program, through the MPI profiling interface. `mpirun -x LD_PRELOAD=libdtcoll_mpi.so
// -x DTCOLL_ALGO=rhd ./prog` runs prog's MPI_Allreduce and MPI_Iallreduce of MPI_FLOAT or
// MPI_DOUBLE with MPI_SUM, count > 0, on any intra-communicator, on our algorithms, at every
// thread level; every other call, and every other type, operation or inter-communicator,
// goes to PMPI unchanged. This file: configuration, the per-communicator state, the two
// allreduces, MPI_Comm_free / MPI_Comm_disconnect and MPI_Finalize. Our requests and every
// MPI completion call: dtcoll_mpi_wait.c; progress while the program blocks elsewhere:
// dtcoll_mpi_block.c. Not here: the algorithms (nn/coll).
//
// Environment (read once, at the first intercepted call; the same on every rank):
//   DTCOLL_ALGO     mpi ps ring rhd dbtree hier torus2d auto (default ring); an unknown name
//                   prints the valid ones and ends the job with exit code 2 (MPI_Abort)
//   DTCOLL_FP16=1   fp16 on the wire for MPI_FLOAT (MPI_DOUBLE keeps full precision)
//   DTCOLL_GROUP=G  hier's ranks per group (default: the launcher's ranks per node),
//                   capped at each communicator's size
//   DTCOLL_INNER    ring or rhd: hier's and torus2d's inner allreduce (default ring)
//   DTCOLL_VERBOSE=1  rank 0 of each communicator prints one line when the library takes
//                   it over: "dtcoll: MPI_Allreduce via ALGO on N ranks (...)"
//   DTCOLL_CHECK=1  (read by nn/coll) every call checks that the ranks passed one count; a
//                   blocking check inside the call, so refused under MPI_THREAD_MULTIPLE
//
// Design choices:
//  - One state per communicator (dtc_comm), created by the first intercepted call on it (a
//    collective call, so every rank creates it at the same point) and cached as an MPI
//    attribute of the communicator, so a handle MPI reuses for a new communicator never
//    finds an old state. The copy callback is MPI_COMM_NULL_COPY_FN (a duplicate gets its
//    own state on first use). The delete callback (MPI_Comm_free, MPI_Finalize) only marks
//    the state freed: Open MPI 4.1 runs it holding its attribute lock, under which an MPI
//    call on another communicator (freeing ours) deadlocks at MPI_THREAD_MULTIPLE. A freed
//    state's allreduces in flight go on (MPI_Comm_free lets pending operations complete,
//    MPI-3.1 §6.4.3) and the state is freed with its last one (dtc_reap), at the latest in
//    MPI_Finalize.
//  - The library's communicators are MPI_Comm_split copies of the application's, made once
//    per state (base); nn/coll uses base itself (share_comm) and makes no communicator of
//    its own (one_comm: hier's and torus2d's sub-groups are addressed by their ranks in
//    base), so every rank holds the same communicators and they run out on all together.
//    MPI copies attributes only in MPI_Comm_dup and MPI_Comm_idup (MPI-3.1 §6.7.2): so the
//    application's copy callbacks never see the library's communicators. Under fp16 wire a second dt_coll on a
//    second base serves MPI_DOUBLE (two contexts on one communicator would reuse tags).
//  - Threads: one lock (dtc_lock) around the library's state and every nn/coll call; a
//    thread-local depth counter sends the MPI calls nn/coll makes back to PMPI. No call
//    blocks while holding the lock at MPI_THREAD_MULTIPLE (a thread blocked in our allreduce
//    on one communicator would stop another thread's on another, whose peers may be the
//    ones the first waits for), so there every wait polls; and a state is built (collective
//    calls) without the lock. Below MPI_THREAD_MULTIPLE one thread calls at a time, and a
//    wait on the only allreduce of ours in flight blocks in nn/coll (no polling).
//  - sendbuf != MPI_IN_PLACE: sendbuf is copied into recvbuf first (memmove), then the sum
//    runs in place in recvbuf. count 0, a NULL recvbuf, a negative count: passed to PMPI,
//    which does nothing or reports the error in its own way.
//  - Only the C bindings are intercepted (Fortran's mpi_allreduce_ is not).
//  - Symbols: the library is built with hidden visibility, so only the MPI_* functions are
//    exported and nn/coll's dt_* functions cannot clash with a program's own copy.
#include "dtcoll_mpi.h"
#include "coll/coll_cli.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// This library's state: one MPI process (real/, not nn/), guarded by `lock`.
static struct {
    int ready;         // the environment has been read
    int multiple;      // MPI_THREAD_MULTIPLE
    int verbose;
    const char *level; // the thread level's name, for the verbose line
    dt_coll_opts opts;
    int keyval;
    dtc_comm *states;
} g = {0, 0, 0, "single", {0}, MPI_KEYVAL_INVALID, NULL};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int orphans;  // states marked freed and not yet reaped
_Thread_local int dtc_depth;

void dtc_lock(void) {
    pthread_mutex_lock(&lock);
    dtc_depth++;
}

void dtc_unlock(void) {
    dtc_depth--;
    pthread_mutex_unlock(&lock);
}

int dtc_multiple(void) { return g.multiple; }

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

void dtc_fail(MPI_Comm comm, const dt_error *err) {
    fprintf(stderr, "dtcoll: %s\n", err->msg);
    fflush(stderr);
    PMPI_Abort(comm, err->code ? err->code : DT_EXIT_RUNTIME);
}

static int env_flag(MPI_Comm comm, const char *name) {
    const char *v = getenv(name);
    if (!v || !*v || strcmp(v, "0") == 0) return 0;
    if (strcmp(v, "1") == 0) return 1;
    dt_error err;
    dt_opt_bad(&err, name, v, "0 or 1");
    usage_abort(comm, err.msg);
    return 0;
}

static void configure(MPI_Comm comm) {
    if (g.ready) return;
    g.ready = 1;
    int level = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&level);
    g.multiple = level == MPI_THREAD_MULTIPLE;
    g.level = level == MPI_THREAD_MULTIPLE ? "multiple" : level == MPI_THREAD_SERIALIZED ?
              "serialized" : level == MPI_THREAD_FUNNELED ? "funneled" : "single";
    g.verbose = env_flag(comm, "DTCOLL_VERBOSE");
    // DTCOLL_ALGO, DTCOLL_INNER, DTCOLL_GROUP, DTCOLL_FP16: the rows of the allreduce options'
    // table (nn/coll/coll_cli.c) that name them, read as dtrain reads --algo, --inner, ...
    dt_coll_cli cli = {.coll = dt_coll_opts_default()};
    dt_opt_table table = dt_coll_cli_table(&cli, NULL);
    dt_error err;
    if (dt_opts_env(&table, &err)) usage_abort(comm, err.msg);
    dt_coll_opts o = cli.coll;
    if (o.algo == DT_ALGO_NCCL)
        usage_abort(comm, "DTCOLL_ALGO: nccl runs only inside dtrain --device cuda (this "
                    "library reduces host buffers); use ring, rhd, ...");
    if (o.wire_f16 && o.algo == DT_ALGO_MPI)
        usage_abort(comm, "DTCOLL_FP16=1 needs one of our algorithms (the MPI library's "
                    "MPI_Allreduce has no fp16 sum); not DTCOLL_ALGO=mpi");
    const char *v;
    v = getenv("DTCOLL_CHECK");
    if (g.multiple && v && *v && strcmp(v, "0"))
        usage_abort(comm, "DTCOLL_CHECK=1 adds a blocking check inside every allreduce, which "
                    "can deadlock threads calling allreduces on different communicators: "
                    "not at MPI_THREAD_MULTIPLE (unset it, or initialise MPI with a lower "
                    "thread level)");
    g.opts = o;
}

// ---- the communicator's state ----

// The attribute's delete callback (MPI_Comm_free, MPI_Comm_disconnect, MPI_Finalize): no MPI
// call and no lock here (see the top of this file); dtc_reap frees the state.
static int on_delete(MPI_Comm comm, int keyval, void *val, void *extra) {
    (void)comm, (void)keyval, (void)extra;
    dtc_comm *s = val;
    atomic_store(&s->freed, 1);
    atomic_fetch_add(&orphans, 1);
    return MPI_SUCCESS;
}

static void free_state(dtc_comm *s) {
    if (s->c64 && s->c64 != s->c32) dt_coll_free(s->c64);
    dt_coll_free(s->c32);
    for (int i = 0; i < 2; i++)
        if (s->base[i] != MPI_COMM_NULL) PMPI_Comm_free(&s->base[i]);
    free(s);
}

void dtc_reap(void) {
    if (!atomic_load(&orphans)) return;
    for (dtc_comm **q = &g.states; *q;) {
        dtc_comm *s = *q;
        if (!atomic_load(&s->freed) || s->busy) {
            q = &s->next;
            continue;
        }
        *q = s->next;
        free_state(s);
        atomic_fetch_sub(&orphans, 1);
    }
}

// A dt_coll on a fresh split of comm (see "The library's communicators" above), or NULL when
// the MPI library could not make its communicators (it has run out): the split's errors are
// returned on the library's own (MPI_ERRORS_RETURN); an error on the application's comm goes
// to its handler, as the application's own calls' would.
static dt_coll *make_coll(MPI_Comm comm, int wire_f16, MPI_Comm *base) {
    int r, p;
    PMPI_Comm_rank(comm, &r);
    PMPI_Comm_size(comm, &p);
    if (PMPI_Comm_split(comm, 0, r, base) != MPI_SUCCESS || *base == MPI_COMM_NULL) {
        *base = MPI_COMM_NULL;
        return NULL;
    }
    PMPI_Comm_set_errhandler(*base, MPI_ERRORS_RETURN);
    dt_coll_opts o = g.opts;
    o.wire_f16 = wire_f16;
    o.share_comm = 1;
    o.one_comm = 1;  // no communicator of nn/coll's own (coll_opts.h)
    if (o.group > p) o.group = p;
    dt_error err = {0};
    dt_coll *c = dt_coll_create(*base, NULL, &o, &err);
    if (!c && err.code == DT_EXIT_USAGE) usage_abort(comm, err.msg);
    return c;
}

// Collective over comm; called without the lock (dtc_depth raised: nn/coll's calls to PMPI).
// The library's one communicator per context is the split's (nn/coll makes none: one_comm),
// and the MPI library agrees on a new communicator's context id among all the ranks inside
// MPI_Comm_split: when it has none left, the split fails on every rank alike (and when the
// ranks' own communicators differ so that one rank runs out first, the MPI library's split
// fails or hangs as the program's own MPI_Comm_dup would). So every rank sees the same
// outcome without a word: if the split failed, it frees what it made and the communicator's
// calls go to PMPI, with one line from its rank 0.
static dtc_comm *new_state(MPI_Comm comm) {
    dtc_comm *s = callocCheck(1, sizeof *s);
    s->comm = comm;
    s->base[0] = s->base[1] = MPI_COMM_NULL;
    PMPI_Comm_test_inter(comm, &s->inter);
    if (s->inter) return s;
    dtc_depth++;
    s->c32 = make_coll(comm, g.opts.wire_f16, &s->base[0]);
    s->c64 = !g.opts.wire_f16 ? s->c32 : s->c32 ? make_coll(comm, 0, &s->base[1]) : NULL;
    int ok = s->c32 && s->c64;
    int r, p;
    PMPI_Comm_rank(comm, &r);
    PMPI_Comm_size(comm, &p);
    if (!ok) {
        if (s->c64 && s->c64 != s->c32) dt_coll_free(s->c64);
        dt_coll_free(s->c32);
        s->c32 = s->c64 = NULL;
        for (int i = 0; i < 2; i++)
            if (s->base[i] != MPI_COMM_NULL) PMPI_Comm_free(&s->base[i]);
        s->fallback = 1;
        if (r == 0)
            fprintf(stderr, "dtcoll: the MPI library could not make the communicators this "
                    "library needs for a communicator of %d ranks (it has run out of them); "
                    "its allreduces go to the MPI library's own\n", p);
    }
    dtc_depth--;
    if (g.verbose && r == 0 && !s->fallback) {
        const dt_coll_opts *ro = dt_coll_get_opts(s->c32);
        printf("dtcoll: MPI_Allreduce via %s on %d ranks (fp16 wire %s, group %d, inner %s, "
               "thread level %s)\n", dt_algo_name(ro->algo), p, ro->wire_f16 ? "on" : "off",
               ro->group, dt_algo_name(ro->inner), g.level);
        fflush(stdout);
    }
    return s;
}

// Is this call ours? Sets *s (the communicator's state), *c (the context) and *t (the
// element type) when it is.
int dtc_ours(void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
             dtc_comm **s, dt_coll **c, dt_dtype *t) {
    if (dtc_depth || op != MPI_SUM || (dt != MPI_FLOAT && dt != MPI_DOUBLE) || count <= 0 ||
        !recvbuf || comm == MPI_COMM_NULL)
        return 0;
    int flag = 0;
    dtc_lock();
    configure(comm);
    dtc_reap();
    if (g.keyval == MPI_KEYVAL_INVALID)
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_delete, &g.keyval, NULL);
    PMPI_Comm_get_attr(comm, g.keyval, s, &flag);
    dtc_unlock();
    if (!flag) {
        *s = new_state(comm);
        dtc_lock();
        PMPI_Comm_set_attr(comm, g.keyval, *s);
        (*s)->next = g.states;
        g.states = *s;
        dtc_unlock();
    }
    if ((*s)->inter || (*s)->fallback) return 0;
    *t = dt == MPI_FLOAT ? DT_F32 : DT_F64;
    *c = *t == DT_F32 ? (*s)->c32 : (*s)->c64;
    return 1;
}

static void to_recvbuf(const void *sendbuf, void *recvbuf, int count, dt_dtype t) {
    if (sendbuf != MPI_IN_PLACE && sendbuf != recvbuf)
        memmove(recvbuf, sendbuf, (size_t)count * (t == DT_F32 ? sizeof(float) : sizeof(double)));
}

// ---- the intercepted calls ----

DTC_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                             MPI_Op op, MPI_Comm comm) {
    dtc_comm *s;
    dt_coll *c;
    dt_dtype t;
    if (!dtc_ours(recvbuf, count, dt, op, comm, &s, &c, &t))
        DTC_BLOCKING(PMPI_Allreduce(sendbuf, recvbuf, count, dt, op, comm));
    to_recvbuf(sendbuf, recvbuf, count, t);
    dt_error err;
    dtc_lock();
    // Always a request, never nn/coll's blocking dt_allreduce: its `mpi` is MPI_Allreduce,
    // which would not match the MPI_Iallreduce of a rank that has others in flight.
    dt_coll_req *r = dt_allreduce_start(c, recvbuf, (size_t)count, t, &err);
    if (!r) dtc_fail(comm, &err);
    dtc_complete(s, r);
    dtc_unlock();
    return MPI_SUCCESS;
}

void dtc_complete(dtc_comm *s, dt_coll_req *r) {
    s->busy++;
    // alone below MPI_THREAD_MULTIPLE: nn/coll's wait blocks efficiently
    while (g.multiple || atomic_load(&dtc_inflight)) {
        // ours in flight may be what another rank waits for: advance them all
        int done = dt_allreduce_progress(r);
        dtc_step();
        if (done) break;
        if (g.multiple) {  // let the other threads in between polls
            dtc_unlock();
            sched_yield();
            dtc_lock();
        }
    }
    dt_allreduce_wait(r);
    s->busy--;
}

DTC_EXPORT int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                              MPI_Op op, MPI_Comm comm, MPI_Request *request) {
    dtc_comm *s;
    dt_coll *c;
    dt_dtype t;
    if (!dtc_ours(recvbuf, count, dt, op, comm, &s, &c, &t))
        return PMPI_Iallreduce(sendbuf, recvbuf, count, dt, op, comm, request);
    to_recvbuf(sendbuf, recvbuf, count, t);
    dt_error err;
    dtc_lock();
    dt_coll_req *r = dt_allreduce_start(c, recvbuf, (size_t)count, t, &err);
    if (!r) dtc_fail(comm, &err);
    dtc_track(r, s, request);
    dtc_unlock();
    return MPI_SUCCESS;
}

// The delete callback has marked the state; free it now unless ours are still in flight.
DTC_EXPORT int MPI_Comm_free(MPI_Comm *comm) {
    int rc = PMPI_Comm_free(comm);
    if (!dtc_depth && atomic_load(&orphans)) {
        dtc_lock();
        dtc_reap();
        dtc_unlock();
    }
    return rc;
}

DTC_EXPORT int MPI_Comm_disconnect(MPI_Comm *comm) {
    int rc = PMPI_Comm_disconnect(comm);
    if (!dtc_depth && atomic_load(&orphans)) {
        dtc_lock();
        dtc_reap();
        dtc_unlock();
    }
    return rc;
}

// Every allreduce of ours still in flight completes first (requests the application freed or
// never waited for, on communicators it freed or not), then every state is freed.
DTC_EXPORT int MPI_Finalize(void) {
    if (dtc_depth) return PMPI_Finalize();
    dtc_progress_stop();
    dtc_lock();
    dtc_drain();
    for (dtc_comm *s = g.states; s; s = s->next)
        if (!atomic_load(&s->freed)) PMPI_Comm_delete_attr(s->comm, g.keyval);
    dtc_reap();
    if (g.keyval != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&g.keyval);
    dtc_unlock();
    return PMPI_Finalize();
}
