// remote.c — lesson 05's grader asks the student's code instead of calling it (the judge's
// side of the split grader, lessons/kit/subject.h): the grader is linked with this
// student_rhd in place of student_rhd.c, so that the process that checks and prints the
// verdicts never holds the student's code. It asks the subject (subject05.c: student_rhd.c
// and a server, another process, started on the first call and shared by the calls of
// this process — under smpirun -no-privatize, by every simulated rank) for one rank's
// schedule, and rebuilds it here with dtlab's own dt_lane_round / dt_lane_op
// (kit/subject_lane.h): a schedule is data, which the checks (schedule_check.c) read and
// the library's runner (registry.c's "student_rhd") then runs in this process.
#include <stdio.h>

#include "../kit/subject.h"
#include "../kit/subject_lane.h"
#include "student_rhd.h"
#include "subject05.h"
#include "your_ring.h"

void student_rhd(dt_lane *l, int comm, int r, int p, size_t off, size_t n) {
    lane_ask(SUBJECT05_RHD, "student_rhd", l, comm, r, p, off, n);
}

// lesson 04's ring (your_ring.h), asked of the same subject
void student_ring(dt_lane *l, int comm, int r, int p, size_t off, size_t n) {
    lane_ask(SUBJECT05_RING, "student_ring of lessons/04-ring-allreduce/ring.c", l, comm, r, p,
             off, n);
}
