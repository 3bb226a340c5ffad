// subject06.c — the process that runs lesson 06's student_hier.c (lessons/kit/subject.h): a
// server that answers the grader's requests for one rank's schedule of hier or of the 2-D
// torus. It builds the lane with student_hier / student_torus2d and returns its rounds and
// ops as data (kit/subject_lane.h); the grader (remote.c) rebuilds the schedule in its own
// process and judges it. Linked with student_hier.c, the kit's subject.c and
// subject_lane.c and, of dtlab's library, only what they call (the lane's building blocks
// and the ring that calls.txt allows: --gc-sections drops the rest, so dtlab's own binomial
// trees, hier and torus are not in this process to be reached by their addresses).
#include "../kit/subject.h"
#include "../kit/subject_lane.h"
#include "student_hier.h"
#include "subject06.h"

typedef void (*builder)(dt_lane *l, int a, int as, int b, int bs, size_t off, size_t n);

// request: u64 a, as, b, bs, off, n (remote.c); reply: the lane (lane_send)
static void serve(builder build, subject_buf *req, subject_buf *reply) {
    uint64_t a[6];
    sb_get(req, a, sizeof a);
    if (req->bad) exit(2);
    dt_lane l = {0};
    build(&l, (int)a[0], (int)a[1], (int)a[2], (int)a[3], (size_t)a[4], (size_t)a[5]);
    lane_send(reply, &l);
    lane_release(&l);
}
static void serve_hier(subject_buf *req, subject_buf *reply) { serve(student_hier, req, reply); }
static void serve_torus2d(subject_buf *req, subject_buf *reply) {
    serve(student_torus2d, req, reply);
}

int main(void) {
    const subject_handler h[SUBJECT06_COUNT] = {[SUBJECT06_HIER] = serve_hier,
                                                [SUBJECT06_TORUS2D] = serve_torus2d};
    return subject_serve(h, SUBJECT06_COUNT);
}
