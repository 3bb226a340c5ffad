// subject08.h — lesson 08's channel between the grader (remote.c, the judge) and the
// student's large_batch.c (subject08.c, the server that runs it): the requests' tags, and
// the tensors' guard.
#ifndef LESSON08_SUBJECT_H
#define LESSON08_SUBJECT_H

enum { SUBJECT08_LR_AT = 0, SUBJECT08_LARS_STEP = 1 };

// Every w, g and v the grader hands to lars_step holds this many elements past n (its
// sentinels): they travel to the subject and back with the n, so that a write past n, or
// to g, shows in the grader as it would have in place.
#define LESSON08_GUARD 8

#endif
