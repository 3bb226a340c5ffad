// subject08.c — the process that runs lesson 08's large_batch.c (lessons/kit/subject.h): a
// server that answers the grader's requests with what the student's functions return.
//   lr_at      the schedule (by value: the grader's copy is the one it judges) and the
//              step in; the rate out
//   lars_step  n, is_weight, lr, the configuration, and w, g, v with their guard
//              (LESSON08_GUARD elements past n) in; the returned ratio and all three
//              arrays, guard included, out
// Linked with large_batch.c, the kit's subject.c and, of dtlab's library, only what
// large_batch.c calls (--gc-sections: dtlab's own schedule is not in this process).
#include "../kit/subject.h"
#include "large_batch.h"
#include "subject08.h"

// A request the grader would never send: the server stops (the grader reports the crash).
static void require(const subject_buf *req) {
    if (req->bad || req->at != req->len) exit(2);
}

static void serve_lr_at(subject_buf *req, subject_buf *reply) {
    schedule s;
    sb_get(req, &s, sizeof s);
    long t = (long)sb_get_u64(req);
    require(req);
    double lr = lr_at(&s, t);
    sb_put(reply, &lr, sizeof lr);
}

// w, g and v are stepped where they lie in the request (no copies: the instructor's
// tensors are 29 MB a request), then written to the reply.
static void serve_lars_step(subject_buf *req, subject_buf *reply) {
    uint64_t n = sb_get_u64(req), is_weight = sb_get_u64(req);
    float lr;
    lars_config c;
    sb_get(req, &lr, sizeof lr);
    sb_get(req, &c, sizeof c);
    size_t left = req->bad ? 0 : req->len - req->at;
    if (req->bad || n > left / (3 * sizeof(float)) ||
        left != 3 * ((size_t)n + LESSON08_GUARD) * sizeof(float) || req->at % sizeof(float))
        exit(2);
    size_t bytes = ((size_t)n + LESSON08_GUARD) * sizeof(float);
    float *w = (float *)(req->p + req->at), *g = w + n + LESSON08_GUARD,
          *v = g + n + LESSON08_GUARD;
    double local = lars_step(w, g, v, (size_t)n, (int)is_weight, lr, &c);
    sb_put(reply, &local, sizeof local);
    sb_put(reply, w, bytes), sb_put(reply, g, bytes), sb_put(reply, v, bytes);
}

int main(void) {
    const subject_handler h[] = {serve_lr_at, serve_lars_step};
    return subject_serve(h, 2);
}
