// remote.c — lesson 12's grader asks the student's code instead of calling it (the judge's
// side of the split grader, lessons/kit/subject.h): the grader is linked with this
// one_f_one_b in place of one_f_one_b.c, which runs in the subject (subject12.c, another
// process), so that the process that checks and prints verdicts never holds the student's
// code. The ops array travels there with its sentinels and comes back whole.
#include <stdio.h>

#include "../kit/subject.h"
#include "one_f_one_b.h"
#include "subject12.h"

static subject_buf req, rep;  // reused from call to call

int one_f_one_b(int p, int m, int s, pipe_op *ops) {
    size_t bytes = (2 * (size_t)m + LESSON12_GUARD) * sizeof(pipe_op);
    req.len = req.at = 0, req.bad = 0;
    sb_u64(&req, (uint64_t)p), sb_u64(&req, (uint64_t)m), sb_u64(&req, (uint64_t)s);
    sb_put(&req, ops, bytes);
    char what[96];
    snprintf(what, sizeof what, "one_f_one_b(p = %d, m = %d, s = %d)", p, m, s);
    subject_call(SUBJECT12_ONE_F_ONE_B, &req, &rep, what);
    int64_t got = (int64_t)sb_get_u64(&rep);
    if (rep.bad || rep.len - rep.at != bytes) subject_malformed(what);
    sb_get(&rep, ops, bytes);
    return got < -1 || got > 4 * (int64_t)m + 8 ? -1 : (int)got;
}
