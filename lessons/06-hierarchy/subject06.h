// subject06.h — lesson 06's channel between the grader (remote.c, the judge) and the
// student's code (subject06.c, the subject; lessons/kit/subject.h): the requests' tags.
// Both requests carry the same arguments, u64 a, as, b, bs, off, n (the builder's four
// ranks and sizes, then the range), and both replies a lane (kit/subject_lane.h).
#ifndef LESSON06_SUBJECT_H
#define LESSON06_SUBJECT_H

enum { SUBJECT06_HIER = 0, SUBJECT06_TORUS2D = 1, SUBJECT06_COUNT };

#endif
