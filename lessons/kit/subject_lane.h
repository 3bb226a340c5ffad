// subject_lane.h — a schedule's lane over the split grader's channel (subject.h): the
// subject sends the rounds and ops the student's builder appended (lane_send); the judge
// rebuilds them with dtlab's own dt_lane_round / dt_lane_op (lane_receive), so that the
// schedule the grader checks and runs is data built in its own process. Lessons 04-06.
#ifndef DT_LESSON_SUBJECT_LANE_H
#define DT_LESSON_SUBJECT_LANE_H

#include "coll/coll_sched.h"
#include "subject.h"

#define SUBJECT_LANE_MAX_OPS (1u << 24)  // a schedule longer than this is malformed

// reply: u64 rounds, then per round u64 ops and that many subject_lane_op
typedef struct {
    uint8_t kind, comm;
    int32_t peer;
    uint64_t off, count;
} subject_lane_op;

void lane_send(subject_buf *reply, const dt_lane *l);
// Appends the reply's rounds to l; a malformed reply ends the judge (subject_malformed).
void lane_receive(subject_buf *reply, dt_lane *l, const char *what);
// A lane's arrays freed (the subject's side: what a builder allocated)
void lane_release(dt_lane *l);

// The one-communicator builders of lessons 04 and 05 (student_ring, student_rhd): the
// subject's server of one (request: u64 comm, r, p, off, n; reply: the lane), and the
// judge's call of it (tag: the server's; name: how a crash report names the call).
typedef void (*lane_builder)(dt_lane *l, int comm, int r, int p, size_t off, size_t n);
void lane_serve(subject_buf *req, subject_buf *reply, lane_builder build);
void lane_ask(int tag, const char *name, dt_lane *l, int comm, int r, int p, size_t off,
              size_t n);

#endif
