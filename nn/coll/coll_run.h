// coll_run.h — the core runner: runs one lane of a schedule (coll_sched.h), round by round.
// For each round it posts the receives, then the sends (MPI_Irecv / MPI_Isend), waits for
// all of them, and then does the round's local work: adds what arrived into the buffer
// (RECV_ADD: the device's add) or finds it already in place (RECV_COPY). That is the whole
// of a ring allreduce once coll_sched.c has listed its rounds.
//
// What else an allreduce can need hooks in through dt_run_hooks, from files that sit on top
// of this one (coll_request.c composes them): fp16 on the wire (coll_fp16.c), device memory
// staged through the host (coll_stage.c), coarsened rounds for the simulator
// (coll_coarsen.c), the MPI library's own allreduce (coll_native.c). Polling several lanes
// and requests at once is coll_request.c's. With no extension (x->hooks NULL) this file alone
// runs a host-memory, float32 or float64 allreduce.
#ifndef DT_COLL_RUN_H
#define DT_COLL_RUN_H

#include <mpi.h>
#include <stdint.h>

#include "../device.h"
#include "coll_sched.h"

typedef struct dt_run dt_run;

// Optional hooks, each NULL where an extension has nothing to do.
typedef struct {
    // May the current round be posted now? 0: not yet (its data is still being copied in,
    // or the library's collectives must keep their order); the caller polls again later.
    int (*ready)(dt_run *x);
    // Before the round's messages leave: wait out coarsened latencies, round fp16 chunks,
    // convert the sends into x->stage.
    void (*before_post)(dt_run *x);
    // Post an op that is not a plain send or receive (DT_OP_NATIVE) on `count` elements at p.
    void (*post_other)(dt_run *x, const dt_op *op, void *p, int count, MPI_Request *q);
    // A received message at src (count elements, wire format) for the buffer at dst: add it
    // (RECV_ADD) or install it (RECV_COPY). NULL: the core adds float32 / float64.
    void (*land)(dt_run *x, const dt_op *op, char *dst, const char *src);
    // After the round's local work (an asynchronous device finishes it here).
    void (*after_round)(dt_run *x);
} dt_run_hooks;

struct dt_run {
    const dt_lane *lane;
    int cur;               // the round in flight (lane->n_rounds once the lane is done)
    int posted;            // its messages are posted
    char *buf;             // the data being reduced, esize bytes per element
    size_t esize;          // 4 (float32) or 8 (float64)
    MPI_Datatype type;     // an element on the wire (MPI_FLOAT, MPI_DOUBLE, MPI_UINT16_T)
    size_t wsize;          // its bytes
    const MPI_Comm *comms; // by DT_COMM_*
    const int *first, *stride;  // one_comm (coll_opts.h): sub-groups in comms[DT_COMM_ALL]
    int tag;
    MPI_Request *reqs;     // max_reqs of them, MPI_REQUEST_NULL when not in use
    int max_reqs;
    char *tmp;             // where a round's messages to add arrive (one round's worth)
    char *stage;           // a round's sends in wire format (NULL: sent from buf)
    int copy_via_tmp;      // RECV_COPY arrives in tmp too (then land installs it)
    dt_device *dev;        // the local add (NULL: a host loop)
    const dt_run_hooks *hooks;  // NULL: none
    void *ctx;             // the extensions' (coll_request.c: the request)
    uint64_t *sent;        // bytes sent are added here (NULL: not counted)
};

// A message longer than this many elements goes as several: MPI counts are ints, and
// SimGrid 3.32 copies a message of 2 GiB or more whole (its size cast to int reads as
// "small", so the send is detached: 11 GB of copies in gpt3-175b's data-parallel allreduce at
// 1024 GPUs). 2^27 elements: 1 GiB of doubles.
#define DT_MSG_MAX ((size_t)1 << 27)

// Does op receive into x->tmp (rather than straight into the buffer)?
int dt_run_recv_to_tmp(const dt_run *x, const dt_op *op);
// Post round x->cur: every receive, then every send. 0 when an extension says not yet.
int dt_run_post(dt_run *x);
// The posted round's messages have all arrived: do its local work, move to the next round.
void dt_run_finish(dt_run *x);
// The whole lane, blocking: post, wait for all, finish, round after round.
void dt_run_all(dt_run *x);

#endif
