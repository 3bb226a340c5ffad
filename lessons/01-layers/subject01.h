// subject01.h — lesson 01's channel between the grader (remote01.c, the judge) and the
// student's layers.c (subject01.c, the server that runs it): one request tag per function
// of layers01.h. Every integer travels as a u64, every array as its floats (or int32
// labels), in the order of the function's parameters; an output travels both ways (the
// grader's stale values in, what the call left there out), so that an entry the student
// never writes shows in the grader as it would have in place.
#ifndef LESSON01_SUBJECT_H
#define LESSON01_SUBJECT_H

enum {
    SUBJECT01_IM2COL = 0,
    SUBJECT01_COL2IM,
    SUBJECT01_CONV_FORWARD,
    SUBJECT01_CONV_BACKWARD,
    SUBJECT01_BN_FORWARD,
    SUBJECT01_BN_BACKWARD,
    SUBJECT01_XENT_FORWARD,
    SUBJECT01_XENT_BACKWARD,
    SUBJECT01_N
};

#endif
