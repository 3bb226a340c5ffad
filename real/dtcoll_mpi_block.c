// dtcoll_mpi_block.c — libdtcoll_mpi.so's progress while the program blocks: a nonblocking
// collective must progress while its rank blocks in point-to-point or in another collective
// (MPI-3.1 §5.12), and ours advance only when the library runs, so:
//   point-to-point (MPI_Recv, MPI_Send, MPI_Ssend, MPI_Bsend, MPI_Rsend, MPI_Sendrecv,
//     MPI_Sendrecv_replace, MPI_Probe, MPI_Mprobe, MPI_Mrecv): while any of ours is in
//     flight, the call becomes its nonblocking form and a wait that advances ours
//     (dtc_wait_polling), at every thread level. Matching is unchanged: a blocking and a
//     nonblocking send or receive match each other (MPI-3.1 §3.7).
//   blocking collectives (MPI_Barrier, MPI_Bcast, MPI_Reduce, the gathers, scatters and
//     all-to-alls, MPI_Scan, MPI_Exscan, the communicator constructors, and the reductions the
//     library passes through): they cannot become nonblocking ones, which do not match a
//     blocking call on another rank (§5.12), and a rank does not know whether its peers have
//     ours in flight. At MPI_THREAD_MULTIPLE a progress thread, started at the first such
//     call, advances ours while a thread of the program is inside one; below
//     MULTIPLE no second thread may call MPI, so there they do not advance ours (docs/
//     allreduce.md, "Deploying the preload": wait on the allreduce first, or initialise MPI
//     with MPI_THREAD_MULTIPLE). The thread sleeps on a condition variable otherwise, and
//     between polls with nothing to advance sleeps 20 us (its cost is not measured yet).
// Calls made from inside the library (dtc_depth > 0) and calls with nothing of ours in flight
// go straight to PMPI.
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "dtcoll_mpi.h"

static int converting(void) { return !dtc_depth && atomic_load(&dtc_inflight); }

// ---- the progress thread (MPI_THREAD_MULTIPLE) ----

static pthread_mutex_t pm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pcv = PTHREAD_COND_INITIALIZER;
static pthread_t pth;
static int started, stopping;  // under pm
static atomic_int blocked;     // the program's threads inside a blocking collective

static void *progress_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&pm);
    for (;;) {
        while (!stopping && !atomic_load(&blocked)) pthread_cond_wait(&pcv, &pm);
        if (stopping) break;
        pthread_mutex_unlock(&pm);
        if (!atomic_load(&dtc_inflight) || !dtc_poll()) {  // nothing (left) to advance
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
        pthread_mutex_lock(&pm);
    }
    pthread_mutex_unlock(&pm);
    return NULL;
}

int dtc_block_enter(void) {
    if (!converting() || !dtc_multiple()) return 0;
    pthread_mutex_lock(&pm);
    if (!started && !stopping) started = !pthread_create(&pth, NULL, progress_main, NULL);
    atomic_fetch_add(&blocked, 1);
    pthread_cond_signal(&pcv);
    pthread_mutex_unlock(&pm);
    return 1;
}

void dtc_block_leave(int entered) {
    if (entered) atomic_fetch_sub(&blocked, 1);
}

void dtc_progress_stop(void) {
    pthread_mutex_lock(&pm);
    int join = started;
    stopping = 1;
    pthread_cond_signal(&pcv);
    pthread_mutex_unlock(&pm);
    if (join) pthread_join(pth, NULL);
}

// ---- point-to-point: the nonblocking form, and a wait that advances ours ----

DTC_EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                        MPI_Status *st) {
    if (!converting()) return PMPI_Recv(buf, count, dt, src, tag, comm, st);
    MPI_Request r;
    int rc = PMPI_Irecv(buf, count, dt, src, tag, comm, &r);
    return rc != MPI_SUCCESS ? rc : dtc_wait_polling(&r, st);
}

typedef int (*isend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

static int send_polling(isend_fn f, const void *buf, int count, MPI_Datatype dt, int dest,
                        int tag, MPI_Comm comm) {
    MPI_Request r;
    int rc = f(buf, count, dt, dest, tag, comm, &r);
    return rc != MPI_SUCCESS ? rc : dtc_wait_polling(&r, MPI_STATUS_IGNORE);
}

DTC_EXPORT int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                        MPI_Comm comm) {
    if (!converting()) return PMPI_Send(buf, count, dt, dest, tag, comm);
    return send_polling(PMPI_Isend, buf, count, dt, dest, tag, comm);
}

DTC_EXPORT int MPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                         MPI_Comm comm) {
    if (!converting()) return PMPI_Ssend(buf, count, dt, dest, tag, comm);
    return send_polling(PMPI_Issend, buf, count, dt, dest, tag, comm);
}

DTC_EXPORT int MPI_Bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                         MPI_Comm comm) {
    if (!converting()) return PMPI_Bsend(buf, count, dt, dest, tag, comm);
    return send_polling(PMPI_Ibsend, buf, count, dt, dest, tag, comm);
}

DTC_EXPORT int MPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                         MPI_Comm comm) {
    if (!converting()) return PMPI_Rsend(buf, count, dt, dest, tag, comm);
    return send_polling(PMPI_Irsend, buf, count, dt, dest, tag, comm);
}

// The receive first (its status is the call's), then the send; both complete before return.
static int pair_polling(MPI_Request r[2], MPI_Status *st) {
    int rc = dtc_wait_polling(&r[0], st);
    int rc2 = dtc_wait_polling(&r[1], MPI_STATUS_IGNORE);
    return rc != MPI_SUCCESS ? rc : rc2;
}

DTC_EXPORT int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype sdt, int dest, int stag,
                            void *rbuf, int rcount, MPI_Datatype rdt, int src, int rtag,
                            MPI_Comm comm, MPI_Status *st) {
    if (!converting())
        return PMPI_Sendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, st);
    MPI_Request r[2];
    int rc = PMPI_Irecv(rbuf, rcount, rdt, src, rtag, comm, &r[0]);
    if (rc != MPI_SUCCESS) return rc;
    rc = PMPI_Isend(sbuf, scount, sdt, dest, stag, comm, &r[1]);
    if (rc != MPI_SUCCESS) return rc;
    return pair_polling(r, st);
}

// The outgoing data packed into a copy first (a message sent as MPI_PACKED matches a receive
// of the type it packs, MPI-3.1 §4.2), so that the receive may land in buf at once.
DTC_EXPORT int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag,
                                    int src, int rtag, MPI_Comm comm, MPI_Status *st) {
    if (!converting())
        return PMPI_Sendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, st);
    int size = 0, pos = 0;
    int rc = PMPI_Pack_size(count, dt, comm, &size);
    if (rc != MPI_SUCCESS) return rc;
    char *copy = mallocCheck((size_t)size + 1);
    rc = PMPI_Pack(buf, count, dt, copy, size, &pos, comm);
    MPI_Request r[2];
    if (rc == MPI_SUCCESS) rc = PMPI_Irecv(buf, count, dt, src, rtag, comm, &r[0]);
    if (rc == MPI_SUCCESS) {
        rc = PMPI_Isend(copy, pos, MPI_PACKED, dest, stag, comm, &r[1]);
        if (rc == MPI_SUCCESS) rc = pair_polling(r, st);
    }
    free(copy);
    return rc;
}

DTC_EXPORT int MPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *st) {
    if (!converting()) return PMPI_Probe(src, tag, comm, st);
    for (;;) {
        int left = dtc_poll(), flag = 0, rc = PMPI_Iprobe(src, tag, comm, &flag, st);
        if (rc != MPI_SUCCESS || flag) return rc;
        if (!left) return PMPI_Probe(src, tag, comm, st);
    }
}

DTC_EXPORT int MPI_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message *m, MPI_Status *st) {
    if (!converting()) return PMPI_Mprobe(src, tag, comm, m, st);
    for (;;) {
        int left = dtc_poll(), flag = 0, rc = PMPI_Improbe(src, tag, comm, &flag, m, st);
        if (rc != MPI_SUCCESS || flag) return rc;
        if (!left) return PMPI_Mprobe(src, tag, comm, m, st);
    }
}

DTC_EXPORT int MPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *m, MPI_Status *st) {
    if (!converting()) return PMPI_Mrecv(buf, count, dt, m, st);
    MPI_Request r;
    int rc = PMPI_Imrecv(buf, count, dt, m, &r);
    return rc != MPI_SUCCESS ? rc : dtc_wait_polling(&r, st);
}

// ---- blocking collectives: the progress thread while inside (MPI_THREAD_MULTIPLE) ----

DTC_EXPORT int MPI_Barrier(MPI_Comm comm) { DTC_BLOCKING(PMPI_Barrier(comm)); }

DTC_EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
    DTC_BLOCKING(PMPI_Bcast(buf, count, dt, root, comm));
}

DTC_EXPORT int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                          int root, MPI_Comm comm) {
    DTC_BLOCKING(PMPI_Reduce(sbuf, rbuf, count, dt, op, root, comm));
}

DTC_EXPORT int MPI_Gather(const void *sbuf, int sc, MPI_Datatype sdt, void *rbuf, int rc,
                          MPI_Datatype rdt, int root, MPI_Comm comm) {
    DTC_BLOCKING(PMPI_Gather(sbuf, sc, sdt, rbuf, rc, rdt, root, comm));
}

DTC_EXPORT int MPI_Gatherv(const void *sbuf, int sc, MPI_Datatype sdt, void *rbuf,
                           const int rcs[], const int displs[], MPI_Datatype rdt, int root,
                           MPI_Comm comm) {
    DTC_BLOCKING(PMPI_Gatherv(sbuf, sc, sdt, rbuf, rcs, displs, rdt, root, comm));
}

DTC_EXPORT int MPI_Scatter(const void *sbuf, int sc, MPI_Datatype sdt, void *rbuf, int rc,
                           MPI_Datatype rdt, int root, MPI_Comm comm) {
    DTC_BLOCKING(PMPI_Scatter(sbuf, sc, sdt, rbuf, rc, rdt, root, comm));
}

DTC_EXPORT int MPI_Scatterv(const void *sbuf, const int scs[], const int displs[],
                            MPI_Datatype sdt, void *rbuf, int rc, MPI_Datatype rdt, int root,
                            MPI_Comm comm) {
    DTC_BLOCKING(PMPI_Scatterv(sbuf, scs, displs, sdt, rbuf, rc, rdt, root, comm));
}

DTC_EXPORT int MPI_Allgatherv(const void *sbuf, int sc, MPI_Datatype sdt, void *rbuf,
                              const int rcs[], const int displs[], MPI_Datatype rdt,
                              MPI_Comm comm) {
    DTC_BLOCKING(PMPI_Allgatherv(sbuf, sc, sdt, rbuf, rcs, displs, rdt, comm));
}

DTC_EXPORT int MPI_Alltoall(const void *sbuf, int sc, MPI_Datatype sdt, void *rbuf, int rc,
                            MPI_Datatype rdt, MPI_Comm comm) {
    DTC_BLOCKING(PMPI_Alltoall(sbuf, sc, sdt, rbuf, rc, rdt, comm));
}

DTC_EXPORT int MPI_Alltoallv(const void *sbuf, const int scs[], const int sdispls[],
                             MPI_Datatype sdt, void *rbuf, const int rcs[], const int rdispls[],
                             MPI_Datatype rdt, MPI_Comm comm) {
    DTC_BLOCKING(PMPI_Alltoallv(sbuf, scs, sdispls, sdt, rbuf, rcs, rdispls, rdt, comm));
}

DTC_EXPORT int MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                        MPI_Comm comm) {
    DTC_BLOCKING(PMPI_Scan(sbuf, rbuf, count, dt, op, comm));
}

DTC_EXPORT int MPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                          MPI_Comm comm) {
    DTC_BLOCKING(PMPI_Exscan(sbuf, rbuf, count, dt, op, comm));
}

DTC_EXPORT int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out) { DTC_BLOCKING(PMPI_Comm_dup(comm, out)); }

DTC_EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out) {
    DTC_BLOCKING(PMPI_Comm_split(comm, color, key, out));
}

DTC_EXPORT int MPI_Comm_create(MPI_Comm comm, MPI_Group g, MPI_Comm *out) {
    DTC_BLOCKING(PMPI_Comm_create(comm, g, out));
}
