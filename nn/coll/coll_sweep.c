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

#include "coll_hooks.h"

#ifdef DT_SMPI
static void tick_post(dt_sweep *s) {
    MPI_Irecv(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_SELF, &s->tick[0]);
    MPI_Isend(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_SELF, &s->tick[1]);
    s->tick_t = MPI_Wtime();
}

void dt_sweep_start(dt_sweep *s, int on) {
    s->on = on;
    s->tick[0] = s->tick[1] = MPI_REQUEST_NULL;
    if (!on) return;
    tick_post(s);
    MPI_Waitall(2, s->tick, MPI_STATUSES_IGNORE);
    s->tick_lat = MPI_Wtime() - s->tick_t;
    tick_post(s);
    s->swept_t = s->tick_t;
}

void dt_sweep_end(dt_sweep *s) {
    MPI_Waitall(2, s->tick, MPI_STATUSES_IGNORE);
    free(s->all);
}

// 1: every request in flight has been swept at this instant (by who or, without anything
// happening since, by another); 0: who must test (it polls again at the same instant — a
// busy loop, which SMPI's test moves forward by sleeping — or the tick is not back yet).
int dt_sweep_poll(dt_sweep *s, const void *who, int n_sets, MPI_Request *const *sets,
                  const int *lens) {
    double now = MPI_Wtime();
    if (now == s->swept_t) return who != s->swept_by;
    if (now - s->tick_t < s->tick_lat) return 0;
    int n = 0;
    for (int k = 0; k < n_sets; k++) n += lens[k];
    if (n + 1 > s->cap) {
        s->cap = 2 * (n + 1);
        free(s->all);
        s->all = mallocCheck((size_t)s->cap * sizeof(MPI_Request));
    }
    n = 0;
    for (int k = 0; k < n_sets; k++)
        for (int i = 0; i < lens[k]; i++) s->all[n++] = sets[k][i];
    s->all[n] = s->tick[0];
    for (int idx = -1; idx != n;) MPI_Waitany(n + 1, s->all, &idx, MPI_STATUS_IGNORE);
    s->tick[0] = MPI_REQUEST_NULL;
    MPI_Wait(&s->tick[1], MPI_STATUS_IGNORE);
    n = 0;
    for (int k = 0; k < n_sets; k++)
        for (int i = 0; i < lens[k]; i++) sets[k][i] = s->all[n++];
    tick_post(s);
    s->swept_t = s->tick_t;
    s->swept_by = who;
    return 1;
}
#else  // real MPI: polls test
void dt_sweep_start(dt_sweep *s, int on) { s->on = on; }
void dt_sweep_end(dt_sweep *s) { (void)s; }
int dt_sweep_poll(dt_sweep *s, const void *who, int n_sets, MPI_Request *const *sets,
                  const int *lens) {
    (void)s, (void)who, (void)n_sets, (void)sets, (void)lens;
    return 0;
}
#endif
