// subject09.h — lesson 09's channel between the grader (remote.c, the judge) and the
// student's half.c (subject09.c, the server that runs it): the requests' tags, the arrays'
// guard, and the judge's array calls.
#ifndef LESSON09_SUBJECT_H
#define LESSON09_SUBJECT_H

#include <stddef.h>
#include <stdint.h>

#include "half.h"

enum {
    SUBJECT09_TO_HALF = 0,      // floats in, to_half of each out
    SUBJECT09_FROM_HALF = 1,    // halfs in, from_half of each out
    SUBJECT09_SCALER = 2,       // a state and a run of overflow flags in, each step out
    SUBJECT09_WIRE_PACK = 3,    // n, g, wire (its guard too) in; wire out
    SUBJECT09_WIRE_ACCUMULATE = 4,  // n, acc (its guard too), wire in; acc out
};

// The arrays the grader hands to wire_pack (wire) and wire_accumulate (acc) hold this many
// elements past n (its sentinels): they travel to the subject and back with the n, so that
// a write past n shows in the grader as it would have in place.
#define LESSON09_GUARD 4

// Elements per request of the array calls below: a request stays well under the channel's
// time limit (LESSON_SUBJECT_TIMEOUT, 10 s) even for a slow, correct to_half.
#define LESSON09_CHUNK ((size_t)1 << 20)

// The judge's array calls (remote.c), where a check calls a student function thousands or
// millions of times: one request per LESSON09_CHUNK elements, the subject looping over the
// student's function, instead of one request per call.
void to_half_each(const float *x, uint16_t *h, size_t n);    // h[i] = to_half(x[i])
void from_half_each(const uint16_t *h, float *x, size_t n);  // x[i] = from_half(h[i])
// n steps of scaler_step from *s, the i-th with overflow[i] (0 or 1): ret[i] what it returned,
// after[i] the state after it; *s ends as the last state.
void scaler_steps(scaler *s, const unsigned char *overflow, size_t n, int *ret, scaler *after);

#endif
