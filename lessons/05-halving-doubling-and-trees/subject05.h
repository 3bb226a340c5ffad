// subject05.h — lesson 05's channel between the grader (remote.c, the judge) and the
// student's code (subject05.c, the subject; lessons/kit/subject.h): the requests' tags.
#ifndef LESSON05_SUBJECT_H
#define LESSON05_SUBJECT_H

enum { SUBJECT05_RHD = 0, SUBJECT05_RING = 1 };  // RING: lesson 04's ring.c (your_ring.h)

#endif
