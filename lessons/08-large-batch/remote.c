// remote.c — lesson 08's grader asks the student's code instead of calling it (the judge's
// side of the split grader, lessons/kit/subject.h): the grader is linked with these two
// functions in place of large_batch.c, whose lr_at and lars_step run in the subject
// (subject08.c, another process), so that the process that checks and prints verdicts
// never holds the student's code. Each call is one request; its arguments travel by value
// (the schedule, the configuration) and the arrays lars_step writes come back into the
// grader's own (their guard too: subject08.h). The request and reply buffers live from one
// call to the next: the instructor's tensors (29 MB a request) then cost no fresh pages.
#include <stdio.h>

#include "../kit/subject.h"
#include "large_batch.h"
#include "subject08.h"

static subject_buf req, rep;

static void start_request(void) { req.len = req.at = 0, req.bad = 0; }

double lr_at(const schedule *s, long t) {
    start_request();
    sb_put(&req, s, sizeof *s);
    sb_u64(&req, (uint64_t)t);
    char what[160];
    snprintf(what, sizeof what, "lr_at(batch %d, warm-up %ld, T %ld; t = %ld)", s->batch,
             s->warmup_steps, s->total_steps, t);
    subject_call(SUBJECT08_LR_AT, &req, &rep, what);
    double lr;
    sb_get(&rep, &lr, sizeof lr);
    if (rep.bad || rep.at != rep.len) subject_malformed(what);
    return lr;
}

double lars_step(float *w, const float *g, float *v, size_t n, int is_weight, float lr,
                 const lars_config *c) {
    size_t bytes = (n + LESSON08_GUARD) * sizeof(float);
    start_request();
    sb_u64(&req, n);
    sb_u64(&req, (uint64_t)is_weight);
    sb_put(&req, &lr, sizeof lr);
    sb_put(&req, c, sizeof *c);
    sb_put(&req, w, bytes), sb_put(&req, g, bytes), sb_put(&req, v, bytes);
    char what[160];
    snprintf(what, sizeof what, "lars_step(n %zu, %s, lr %g)", n,
             is_weight ? "a weight" : "a bias/BN", (double)lr);
    subject_call(SUBJECT08_LARS_STEP, &req, &rep, what);
    double local;
    sb_get(&rep, &local, sizeof local);
    if (rep.len != sizeof local + 3 * bytes) subject_malformed(what);
    // g comes back too: the grader's check that lars_step leaves it alone reads it here
    sb_get(&rep, w, bytes), sb_get(&rep, (float *)g, bytes), sb_get(&rep, v, bytes);
    return local;
}
