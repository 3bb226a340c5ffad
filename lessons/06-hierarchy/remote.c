// remote.c — lesson 06's grader asks the student's code instead of calling it (the judge's
// side of the split grader, lessons/kit/subject.h): the grader is linked with these two
// functions in place of student_hier.c, so that the process that checks and prints the
// verdicts never holds the student's code. Each asks the subject (subject06.c:
// student_hier.c and a server, another process, started on the first call and shared by
// the calls of this process — under smpirun -no-privatize, by every simulated rank) for
// one rank's schedule, and rebuilds it here with dtlab's own dt_lane_round / dt_lane_op
// (kit/subject_lane.h): a schedule is data, which the checks (schedule_check.c) read and
// the library's runner (registry.c's "student_hier", "student_torus2d") then runs here.
#include <stdio.h>

#include "../kit/subject.h"
#include "../kit/subject_lane.h"
#include "student_hier.h"
#include "subject06.h"

// One request: the builder's four ranks and sizes and the range; `what` names the call
// (the judge says it if the subject crashes or hangs there).
static void ask(uint32_t tag, const char *what, dt_lane *l, int a, int as, int b, int bs,
                size_t off, size_t n) {
    subject_buf req = {0}, rep = {0};
    uint64_t args[6] = {(uint64_t)a, (uint64_t)as, (uint64_t)b, (uint64_t)bs, off, n};
    sb_put(&req, args, sizeof args);
    subject_call(tag, &req, &rep, what);
    lane_receive(&rep, l, what);
    sb_free(&req), sb_free(&rep);
}

void student_hier(dt_lane *l, int gr, int gs, int lr, int ls, size_t off, size_t n) {
    char what[160];
    snprintf(what, sizeof what, "student_hier(gr=%d, gs=%d, lr=%d, ls=%d, off=%zu, n=%zu)", gr,
             gs, lr, ls, off, n);
    ask(SUBJECT06_HIER, what, l, gr, gs, lr, ls, off, n);
}

void student_torus2d(dt_lane *l, int x, int X, int y, int Y, size_t off, size_t n) {
    char what[160];
    snprintf(what, sizeof what, "student_torus2d(x=%d, X=%d, y=%d, Y=%d, off=%zu, n=%zu)", x, X,
             y, Y, off, n);
    ask(SUBJECT06_TORUS2D, what, l, x, X, y, Y, off, n);
}
