// remote.c — lesson 09's grader asks the student's code instead of calling it (the judge's
// side of the split grader, lessons/kit/subject.h): the grader is linked with these
// functions in place of half.c, which runs in the subject (subject09.c, another process),
// so that the process that checks and prints verdicts never holds the student's code.
//   to_half_each, from_half_each, scaler_steps   a whole array a request (LESSON09_CHUNK
//       elements at most), for the checks that call a function thousands of times
//   to_half, from_half, scaler_step, wire_pack, wire_accumulate   the student's own
//       signatures, one request a call: the state a scaler_step changes and the arrays the
//       wire functions write (their guard too: subject09.h) come back into the grader's.
#include <stdio.h>
#include <string.h>

#include "../kit/subject.h"
#include "subject09.h"

static subject_buf req, rep;  // kept from one call to the next: no fresh pages each time

static void start_request(void) { req.len = req.at = 0, req.bad = 0; }

// The reply of `what`: exactly `bytes` bytes, copied to out.
static void take_reply(void *out, size_t bytes, const char *what) {
    if (rep.len != bytes) subject_malformed(what);
    sb_get(&rep, out, bytes);
}

void to_half_each(const float *x, uint16_t *h, size_t n) {
    for (size_t at = 0; at < n; at += LESSON09_CHUNK) {
        size_t k = n - at < LESSON09_CHUNK ? n - at : LESSON09_CHUNK;
        start_request();
        sb_put(&req, x + at, k * sizeof *x);
        char what[120];
        if (n == 1) snprintf(what, sizeof what, "to_half(%.9g)", (double)x[0]);
        else snprintf(what, sizeof what, "to_half on %zu floats (%zu of %zu, from %.9g)", k,
                      at, n, (double)x[at]);
        subject_call(SUBJECT09_TO_HALF, &req, &rep, what);
        take_reply(h + at, k * sizeof *h, what);
    }
}

void from_half_each(const uint16_t *h, float *x, size_t n) {
    for (size_t at = 0; at < n; at += LESSON09_CHUNK) {
        size_t k = n - at < LESSON09_CHUNK ? n - at : LESSON09_CHUNK;
        start_request();
        sb_put(&req, h + at, k * sizeof *h);
        char what[120];
        if (n == 1) snprintf(what, sizeof what, "from_half(0x%04x)", h[0]);
        else snprintf(what, sizeof what, "from_half on %zu halfs (%zu of %zu, from 0x%04x)", k,
                      at, n, h[at]);
        subject_call(SUBJECT09_FROM_HALF, &req, &rep, what);
        take_reply(x + at, k * sizeof *x, what);
    }
}

void scaler_steps(scaler *s, const unsigned char *overflow, size_t n, int *ret, scaler *after) {
    start_request();
    sb_put(&req, s, sizeof *s);
    sb_put(&req, overflow, n);
    char what[160];
    if (n == 1) snprintf(what, sizeof what, "scaler_step(S %g, interval %d, good %d, skipped "
                         "%ld; %s)", (double)s->scale, s->interval, s->good, s->skipped,
                         overflow[0] ? "an overflow" : "a clean step");
    else snprintf(what, sizeof what, "%zu steps of scaler_step from S %g, interval %d", n,
                  (double)s->scale, s->interval);
    subject_call(SUBJECT09_SCALER, &req, &rep, what);
    if (rep.len != n * (sizeof(int32_t) + sizeof(scaler))) subject_malformed(what);
    for (size_t i = 0; i < n; i++) {
        int32_t r;
        sb_get(&rep, &r, sizeof r);
        sb_get(&rep, &after[i], sizeof after[i]);
        ret[i] = r;
    }
    if (n) *s = after[n - 1];
}

uint16_t to_half(float x) {
    uint16_t h;
    to_half_each(&x, &h, 1);
    return h;
}

float from_half(uint16_t h) {
    float x;
    from_half_each(&h, &x, 1);
    return x;
}

int scaler_step(scaler *s, int overflow) {
    unsigned char o = overflow != 0;
    int ret;
    scaler after;
    scaler_steps(s, &o, 1, &ret, &after);
    return ret;
}

void wire_pack(const float *g, uint16_t *wire, size_t n) {
    size_t bytes = (n + LESSON09_GUARD) * sizeof *wire;
    start_request();
    sb_u64(&req, n);
    sb_put(&req, g, n * sizeof *g);
    sb_put(&req, wire, bytes);
    char what[80];
    snprintf(what, sizeof what, "wire_pack(n %zu)", n);
    subject_call(SUBJECT09_WIRE_PACK, &req, &rep, what);
    take_reply(wire, bytes, what);
}

void wire_accumulate(float *acc, const uint16_t *wire, size_t n) {
    size_t bytes = (n + LESSON09_GUARD) * sizeof *acc;
    start_request();
    sb_u64(&req, n);
    sb_put(&req, acc, bytes);
    sb_put(&req, wire, n * sizeof *wire);
    char what[80];
    snprintf(what, sizeof what, "wire_accumulate(n %zu)", n);
    subject_call(SUBJECT09_WIRE_ACCUMULATE, &req, &rep, what);
    take_reply(acc, bytes, what);
}
