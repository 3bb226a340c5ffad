// subject04.c — the process that runs lesson 04's ring.c (lessons/kit/subject.h): a server
// that answers the grader's requests for a rank's schedule. It builds the lane with
// student_ring and returns its rounds and ops as data; the grader (remote.c) rebuilds the
// schedule and judges it. Linked with ring.c, the kit's subject.c and, of dtlab's library,
// only what ring.c calls (the lane's building blocks: the link drops the rest, so dtlab's
// own ring is not in this process to be reached).
#include "../kit/subject.h"
#include "../kit/subject_lane.h"
#include "student_ring.h"
#include "subject04.h"

static void serve_ring(subject_buf *req, subject_buf *reply) {
    lane_serve(req, reply, student_ring);
}

int main(void) {
    const subject_handler h[] = {serve_ring};
    return subject_serve(h, 1);
}
