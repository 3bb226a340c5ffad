// subject11.h — lesson 11's channel between the grader (remote11.c, the judge) and the
// student's sharded step (subject11.c, a process of its own, lessons/kit/subject.h): the
// requests' tags and the callbacks by which the student's code reaches the grader's device
// (the momentum's allocation, which the grader measures) and collectives (which run on the
// grader's buffers and, under SMPI, in its simulated time).
#ifndef LESSON11_SUBJECT_H
#define LESSON11_SUBJECT_H

enum { SUBJECT11_INIT, SUBJECT11_STEP, SUBJECT11_FREE };
enum { CB11_ALLOC, CB11_FREE, CB11_COLL, CB11_WAIT, CB11_PROGRESS, CB11_COUNT };
// CB11_COLL's kinds
enum { COLL11_REDUCE_SCATTER, COLL11_ALLGATHER, COLL11_REDUCE_SCATTER_START,
       COLL11_ALLGATHER_START };
// which buffer of the net a collective runs on
enum { BUF11_GRADS, BUF11_PARAMS };

#endif
