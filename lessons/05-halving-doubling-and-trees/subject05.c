// subject05.c — the process that runs lesson 05's student_rhd.c (lessons/kit/subject.h): a
// server that answers the grader's requests for one rank's schedule (and for lesson 04's
// ring.c, the race's ring: your_ring.h). It builds the lane
// with student_rhd and returns its rounds and ops as data (kit/subject_lane.h); the grader
// (remote.c) rebuilds the schedule in its own process and judges it. Linked with
// student_rhd.c, the kit's subject.c and subject_lane.c and, of dtlab's library, only what
// they call (the lane's building blocks: --gc-sections drops the rest, so dtlab's own
// halving-doubling, dt_sched_rhd, is not in this process to be reached by its address).
#include "../kit/subject.h"
#include "../kit/subject_lane.h"
#include "student_rhd.h"
#include "subject05.h"
#include "your_ring.h"

// each request: u64 comm, r, p, off, n (remote.c); reply: the lane (kit/subject_lane.h)
static void serve_rhd(subject_buf *req, subject_buf *reply) {
    lane_serve(req, reply, student_rhd);
}

// lesson 04's student_ring: the race's ring (your_ring.h)
static void serve_ring(subject_buf *req, subject_buf *reply) {
    lane_serve(req, reply, student_ring);
}

int main(void) {
    const subject_handler h[] = {[SUBJECT05_RHD] = serve_rhd, [SUBJECT05_RING] = serve_ring};
    return subject_serve(h, 2);
}
