// dtcoll_mpi.h — what the two halves of libdtcoll_mpi.so share: dtcoll_mpi.c (configuration,
// the per-communicator state, the intercepted allreduces, MPI_Comm_free, MPI_Finalize) and
// dtcoll_mpi_wait.c (our requests in flight and every MPI completion call). Internal to the
// library (hidden visibility); the design is described at the top of dtcoll_mpi.c.
#ifndef DTCOLL_MPI_H
#define DTCOLL_MPI_H

#include <mpi.h>
#include <stdatomic.h>

#include "coll/coll.h"

#define DTC_EXPORT __attribute__((visibility("default")))

// One communicator of the application that an intercepted call has used.
typedef struct dtc_comm {
    MPI_Comm comm;          // the application's handle (valid while `freed` is 0)
    atomic_int freed;       // set by the attribute's delete callback (MPI_Comm_free)
    int inter;              // an inter-communicator: every call on it passes to PMPI
    int fallback;           // the MPI library could not give ours their communicators on
                            // some rank: every rank passes this one's calls to PMPI
    MPI_Comm base[2];       // the library's own copies of comm (MPI_Comm_split: no
                            // attribute of the application's is copied onto them)
    dt_coll *c32, *c64;     // for MPI_FLOAT and MPI_DOUBLE (the same one unless fp16 wire)
    int busy;               // our allreduces on it not yet complete
    struct dtc_comm *next;  // every state, for reaping and MPI_Finalize
} dtc_comm;

// The library's lock, held around every use of its state and of nn/coll. While held (and
// while a thread builds a communicator's state), dtc_depth > 0 on that thread: the MPI calls
// nn/coll makes then come back through our MPI_* symbols and go straight to PMPI.
extern _Thread_local int dtc_depth;
void dtc_lock(void);
void dtc_unlock(void);
// MPI_THREAD_MULTIPLE: no call may block while holding the lock (every wait polls)
int dtc_multiple(void);

void dtc_fail(MPI_Comm comm, const dt_error *err);  // prints err and aborts the job

// ---- dtcoll_mpi_wait.c (all under the lock unless said) ----

// Our allreduces in flight, read without the lock (a hint: 0 means none to advance).
extern atomic_int dtc_inflight;
// Track r (started on s) behind a new generalized request, returned in *greq.
void dtc_track(dt_coll_req *r, dtc_comm *s, MPI_Request *greq);
// Advance each of ours once, oldest first; complete (MPI_Grequest_complete) and forget those
// that finished. Returns how many remain.
int dtc_step(void);
// Every one of ours to completion (MPI_Finalize).
void dtc_drain(void);
// Without the lock: one dtc_step with the lock held just for it (at MPI_THREAD_MULTIPLE
// then a yield to the other threads); how many of ours remain.
int dtc_poll(void);
// Without the lock: wait for the MPI library's request *req, advancing ours meanwhile.
int dtc_wait_polling(MPI_Request *req, MPI_Status *st);

// ---- dtcoll_mpi_block.c ----

// Around a blocking collective passed to PMPI: at MPI_THREAD_MULTIPLE, while any of ours is
// in flight, the progress thread advances them until dtc_block_leave. Returns what to pass it.
int dtc_block_enter(void);
void dtc_block_leave(int entered);
// `return call;` for a blocking collective passed to PMPI, inside enter and leave
#define DTC_BLOCKING(call)             \
    do {                               \
        int in_ = dtc_block_enter();   \
        int rc_ = call;                \
        dtc_block_leave(in_);          \
        return rc_;                    \
    } while (0)
// MPI_Finalize, before anything else: the progress thread ends (joined).
void dtc_progress_stop(void);

// ---- dtcoll_mpi.c ----

// Is this call ours (MPI_SUM of MPI_FLOAT or MPI_DOUBLE, count > 0, an intra-communicator,
// not from inside nn/coll)? Sets *s (the communicator's state, made on first use), *c (the
// context for the type) and *t. Called without the lock.
int dtc_ours(void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
             dtc_comm **s, dt_coll **c, dt_dtype *t);
// Under the lock: complete r (started on s) as a blocking call does, advancing every other
// request of ours meanwhile (at MPI_THREAD_MULTIPLE by polling, letting other threads in).
void dtc_complete(dtc_comm *s, dt_coll_req *r);

// Free the state of every communicator the application has freed and that has nothing of
// ours left in flight.
void dtc_reap(void);

#endif
