// subject07.h — lesson 07's channel between the grader (remote07.c, the judge) and the
// student's planner and overlap (subject07.c, a process of its own): the requests' tags and
// the callbacks by which the student's code reaches the grader's cost model and allreduce
// library (lessons/kit/subject.h).
#ifndef LESSON07_SUBJECT_H
#define LESSON07_SUBJECT_H

#include <stdint.h>

enum { SUBJECT07_PLAN_BYTES, SUBJECT07_PLAN_SEGMENTS, SUBJECT07_READY, SUBJECT07_FINISH };
// callbacks (subject_callback's fn): the cost model of plan_segments, and the four calls of
// the allreduce library that the overlap may make (calls.txt)
enum { CB07_COST, CB07_START, CB07_PROGRESS_ALL, CB07_PROGRESS, CB07_WAIT, CB07_COUNT };
// a request handle in the subject: an address no memory holds, which encodes the grader's id
#define SUBJECT07_HANDLE_BASE ((uintptr_t)0x7e5100000000ull)

#endif
