// dtcoll_mpi_wait.c — libdtcoll_mpi.so's requests: each MPI_Iallreduce the library takes over
// returns a generalized request (MPI_Grequest_start, MPI-3.1 §13.2) that the application
// holds, and a list here holds the allreduce behind it until it finishes. With no progress
// thread, ours advance only inside the calls intercepted here and in dtcoll_mpi.c:
//   MPI_Test, Testany, Testsome, Testall, MPI_Request_get_status, MPI_Iprobe: advance each of
//     ours once, then the MPI library's own call answers;
//   MPI_Wait, Waitany, Waitsome, Waitall, while any of ours is in flight: poll (advance ours,
//     then the MPI library's Test* of the caller's requests) until that answers; so waiting
//     on a plain request never starves an allreduce that another rank waits for.
// An allreduce that finished is completed with MPI_Grequest_complete, and only then does the
// MPI library's own Wait/Test return its request: which requests complete, the statuses,
// MPI_REQUEST_NULL, indices and MPI_ERR_IN_STATUS are always the MPI library's answer over
// the caller's own array, in any mix with requests that are not ours.
// Right by construction: the list's entries are freed in one place (finish), by the loop
// that walks the list; no caller keeps an entry across a call that advances the list; a
// caller waits on MPI handles, which stay valid until the application's own call frees them.
// MPI_Request_free of an active request of ours (MPI-3.1 §5.12 calls this erroneous for a
// nonblocking collective; Open MPI's own tolerate it): the allreduce goes on, advanced by any
// of the calls above, and completes at MPI_Finalize at the latest. MPI_Cancel: see cancel_fn.
// The blocking point-to-point calls and the blocking collectives advance them too
// (dtcoll_mpi_block.c).
#include "dtcoll_mpi.h"

#include <sched.h>
#include <stdlib.h>

// One MPI_Iallreduce in flight.
typedef struct pending {
    MPI_Request greq;  // what the application holds
    dt_coll_req *req;
    dtc_comm *s;
    struct pending *next;
} pending;

// oldest first (an allreduce started earlier is more likely to be waited for first); guarded
// by the library's lock
static pending *head, **tail = &head;
atomic_int dtc_inflight;

// The status of a completed allreduce: that of an empty request (MPI-3.1 §3.7.3); MPI leaves
// MPI_SOURCE and MPI_TAG undefined for collectives, and Open MPI's own requests read so.
static int query_fn(void *extra, MPI_Status *st) {
    (void)extra;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    return MPI_SUCCESS;
}
static int free_fn(void *extra) { (void)extra; return MPI_SUCCESS; }
// Cancelling a nonblocking collective is erroneous (MPI-3.1 §5.12): the error Open MPI's own
// requests give, through MPI_COMM_WORLD's error handler; the allreduce goes on.
static int cancel_fn(void *extra, int done) { (void)extra, (void)done; return MPI_ERR_REQUEST; }

void dtc_track(dt_coll_req *r, dtc_comm *s, MPI_Request *greq) {
    pending *p = callocCheck(1, sizeof *p);
    p->req = r;
    p->s = s;
    s->busy++;
    PMPI_Grequest_start(query_fn, free_fn, cancel_fn, NULL, &p->greq);
    *tail = p;
    tail = &p->next;
    atomic_fetch_add(&dtc_inflight, 1);
    *greq = p->greq;
}

// The one place an entry is freed: *link's allreduce has finished (or finishes now: nn/coll's
// wait blocks), so its request is completed and the entry unlinked.
static void finish(pending **link) {
    pending *p = *link;
    dt_allreduce_wait(p->req);
    PMPI_Grequest_complete(p->greq);
    *link = p->next;
    if (tail == &p->next) tail = link;
    p->s->busy--;
    atomic_fetch_sub(&dtc_inflight, 1);
    free(p);
}

int dtc_step(void) {
    int left = 0;
    for (pending **link = &head; *link;) {
        if (dt_allreduce_progress((*link)->req)) finish(link);
        else link = &(*link)->next, left++;
    }
    dtc_reap();  // states of freed communicators whose last allreduce just finished
    return left;
}

void dtc_drain(void) {
    while (head) {
        if (!head->next) finish(&head);  // alone: block in nn/coll
        else dtc_step();
    }
}

// Below MPI_THREAD_MULTIPLE, when the only one of ours in flight is among reqs[0..n): finish
// it blocking in nn/coll (nothing else of ours needs advancing meanwhile).
static void finish_if_alone(const MPI_Request *reqs, int n) {
    if (dtc_multiple()) return;
    dtc_lock();
    if (head && !head->next)
        for (int i = 0; i < n; i++)
            if (reqs[i] == head->greq) {
                finish(&head);
                break;
            }
    dtc_unlock();
}

int dtc_poll(void) {
    dtc_lock();
    int left = dtc_step();
    dtc_unlock();
    if (left && dtc_multiple()) sched_yield();  // the other threads get the lock
    return left;
}

int dtc_wait_polling(MPI_Request *req, MPI_Status *st) {
    for (;;) {
        int left = dtc_poll(), flag = 0, rc = PMPI_Test(req, &flag, st);
        if (rc != MPI_SUCCESS || flag) return rc;
        if (!left) return PMPI_Wait(req, st);
    }
}

static void advance(void) {
    if (!dtc_depth && atomic_load(&dtc_inflight)) dtc_poll();
}

// ---- the nonblocking calls: advance, then the MPI library answers ----

DTC_EXPORT int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st) {
    advance();
    return PMPI_Test(req, flag, st);
}

DTC_EXPORT int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[]) {
    advance();
    return PMPI_Testall(n, reqs, flag, sts);
}

DTC_EXPORT int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st) {
    advance();
    return PMPI_Testany(n, reqs, idx, flag, st);
}

DTC_EXPORT int MPI_Testsome(int n, MPI_Request reqs[], int *n_out, int idx[], MPI_Status sts[]) {
    advance();
    return PMPI_Testsome(n, reqs, n_out, idx, sts);
}

DTC_EXPORT int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *st) {
    advance();
    return PMPI_Request_get_status(req, flag, st);
}

DTC_EXPORT int MPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *st) {
    advance();
    return PMPI_Iprobe(src, tag, comm, flag, st);
}

// ---- the blocking calls: poll while any of ours is in flight ----

DTC_EXPORT int MPI_Wait(MPI_Request *req, MPI_Status *st) {
    if (dtc_depth || !atomic_load(&dtc_inflight)) return PMPI_Wait(req, st);
    finish_if_alone(req, 1);
    return dtc_wait_polling(req, st);
}

DTC_EXPORT int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[]) {
    if (dtc_depth || !atomic_load(&dtc_inflight)) return PMPI_Waitall(n, reqs, sts);
    finish_if_alone(reqs, n);  // all of reqs must complete anyway
    for (;;) {
        int left = dtc_poll(), flag = 0, rc = PMPI_Testall(n, reqs, &flag, sts);
        if (rc != MPI_SUCCESS || flag) return rc;
        if (!left) return PMPI_Waitall(n, reqs, sts);
    }
}

DTC_EXPORT int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st) {
    if (dtc_depth || !atomic_load(&dtc_inflight)) return PMPI_Waitany(n, reqs, idx, st);
    for (;;) {
        int left = dtc_poll(), flag = 0, rc = PMPI_Testany(n, reqs, idx, &flag, st);
        if (rc != MPI_SUCCESS || flag) return rc;
        if (!left) return PMPI_Waitany(n, reqs, idx, st);
    }
}

DTC_EXPORT int MPI_Waitsome(int n, MPI_Request reqs[], int *n_out, int idx[], MPI_Status sts[]) {
    if (dtc_depth || !atomic_load(&dtc_inflight)) return PMPI_Waitsome(n, reqs, n_out, idx, sts);
    for (;;) {
        int left = dtc_poll(), rc = PMPI_Testsome(n, reqs, n_out, idx, sts);
        if (rc != MPI_SUCCESS || *n_out != 0) return rc;  // MPI_UNDEFINED: none active
        if (!left) return PMPI_Waitsome(n, reqs, n_out, idx, sts);
    }
}
