// coll_sweep.c — how a poll completes requests under SMPI without MPI_Test (opts.sweep).
// SimGrid 3.32 keeps each request a test completes in its rank's list of activities
// (ActivityImpl::test finishes it without the waiting simcall that CommImpl::finish removes
// it with), and every later wait scans that list: with tests, a 1024-GPU dbtree step spent
// a third to a half of its time in that scan. Only waits complete requests cleanly, and a
// wait must not block a poll. So a poll (sweep) waits for any of the requests in flight
// *or* a tick — a zero-byte message to self, sent at the previous sweep, that has arrived
// once the loopback's latency (timed at dt_coll_create) has passed: MPI_Waitany returns
// every request that has arrived, then the tick, without advancing simulated time. Polls
// closer together than that latency (kernels take longer) test. On with opts.sweep (dtsim);
// real MPI tests.
#include <stdlib.h>

#include "coll_internal.h"

#ifdef DT_SMPI
static void tick_post(dt_coll *c) {
    MPI_Irecv(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_SELF, &c->tick[0]);
    MPI_Isend(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_SELF, &c->tick[1]);
    c->tick_t = MPI_Wtime();
}

void dt_coll_tick_start(dt_coll *c) {
    c->tick[0] = c->tick[1] = MPI_REQUEST_NULL;
    if (!c->o.sweep) return;
    tick_post(c);
    MPI_Waitall(2, c->tick, MPI_STATUSES_IGNORE);
    c->tick_lat = MPI_Wtime() - c->tick_t;
    tick_post(c);
    c->swept_t = c->tick_t;
}

void dt_coll_tick_end(dt_coll *c) {
    MPI_Waitall(2, c->tick, MPI_STATUSES_IGNORE);
    free(c->sweep);
}

// 1: every request in flight has been swept at this instant (by r or, without anything
// happening since, by another); 0: r must test (it polls again at the same instant — a
// busy loop, which SMPI's test moves forward by sleeping — or the tick is not back yet).
int dt_coll_sweep(dt_coll *c, const dt_coll_req *r) {
    double now = MPI_Wtime();
    if (now == c->swept_t) return r != c->swept_by;
    if (now - c->tick_t < c->tick_lat) return 0;
    int n = 0;
    for (dt_coll_req *q = c->inflight; q; q = q->next) n += q->s.n_lanes * q->max_reqs;
    if (n + 1 > c->sweep_cap) {
        c->sweep_cap = 2 * (n + 1);
        free(c->sweep);
        c->sweep = mallocCheck((size_t)c->sweep_cap * sizeof(MPI_Request));
    }
    n = 0;
    for (dt_coll_req *q = c->inflight; q; q = q->next)
        for (int i = 0; i < q->s.n_lanes * q->max_reqs; i++) c->sweep[n++] = q->reqs[i];
    c->sweep[n] = c->tick[0];
    for (int idx = -1; idx != n;) MPI_Waitany(n + 1, c->sweep, &idx, MPI_STATUS_IGNORE);
    c->tick[0] = MPI_REQUEST_NULL;
    MPI_Wait(&c->tick[1], MPI_STATUS_IGNORE);
    n = 0;
    for (dt_coll_req *q = c->inflight; q; q = q->next)
        for (int i = 0; i < q->s.n_lanes * q->max_reqs; i++) q->reqs[i] = c->sweep[n++];
    tick_post(c);
    c->swept_t = c->tick_t;
    c->swept_by = r;
    return 1;
}
#else  // real MPI: polls test
void dt_coll_tick_start(dt_coll *c) { (void)c; }
void dt_coll_tick_end(dt_coll *c) { (void)c; }
int dt_coll_sweep(dt_coll *c, const dt_coll_req *r) { (void)c, (void)r; return 0; }
#endif
