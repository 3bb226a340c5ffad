// schedule_check.h — the dry run that lessons 05 and 06 play before any message is sent:
// every rank's lane of the student's schedule (built by the lesson: sc_build), read op by
// op, without MPI. It checks that each op is a send or a receive on a communicator the rank
// belongs to, with a real peer there and a range inside [off, off+n) (sck_well_formed);
// that every send meets a receive of the same size and the rounds can all complete when a
// message needs both ends posted, as MPI's rendezvous protocol for large messages does
// (sck_matched). So a broken schedule fails with a hint instead of hanging mpirun. The
// lesson says what its communicators are (sck_world); what the algorithm's rounds and
// sizes must be stays with the lesson.
#ifndef DT_LESSON_SCHEDULE_CHECK_H
#define DT_LESSON_SCHEDULE_CHECK_H

#include <stddef.h>

#include "coll/coll_sched.h"

typedef struct {
    int p;            // ranks (lanes)
    char shape[64];   // how a hint names the case: "p 5", "P 8 in groups of 3"
    int name_comms;   // 1: hints name each op's communicator (a lesson with several)
    // rank r's rank in communicator comm and its size there (-1 and 0: not a member, or
    // not a communicator of the lesson's algorithm)
    void (*place)(const void *ctx, int r, int comm, int *rank, int *size);
    // the world rank of rank `peer` of communicator comm, seen from its member r
    int (*world)(const void *ctx, int r, int comm, int peer);
    // why an op on comm is wrong for a rank that is not a member there (a hint's tail)
    void (*not_member)(const void *ctx, int comm, char *why, size_t n);
    const char *self_hint;  // added when an op names the rank itself (NULL: nothing)
    const void *ctx;
} sck_world;

// The name a hint gives a communicator (DT_COMM_GROUP, ...)
const char *sck_comm_name(int comm);
// Ops: a send or a receive (add or copy) on a communicator of the rank, to a peer there
// other than the rank itself, inside [off, off+n); a receive-copy overlaps nothing else in
// its round. 1, or 0 with the first problem in hint.
int sck_well_formed(const dt_lane *lanes, const sck_world *w, size_t off, size_t n,
                    char *hint, size_t hn);
// The k-th message from a to b on a communicator meets the k-th receive at b from a there,
// with the same count, and the rounds can all complete (the runner posts a round's receives,
// then its sends, and a message completes once both ends are posted). 1, or 0 with why.
int sck_matched(const dt_lane *lanes, const sck_world *w, char *hint, size_t hn);
// Frees lanes[0..p) and the array.
void sck_free(dt_lane *lanes, int p);

#endif
