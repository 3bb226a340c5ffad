// subject12.h — lesson 12's channel between the grader (remote.c, the judge) and the
// student's one_f_one_b.c (subject12.c, the server that runs it): the request's tag, and
// the ops' guard.
#ifndef LESSON12_SUBJECT_H
#define LESSON12_SUBJECT_H

enum { SUBJECT12_ONE_F_ONE_B = 0 };

// The ops array the grader hands to one_f_one_b holds this many entries past 2m (its
// sentinels): they travel to the subject and back, so that a write past 2m shows in the
// grader as it would have in place.
#define LESSON12_GUARD 4
#define LESSON12_MAX_P 4096
#define LESSON12_MAX_M (1 << 20)

#endif
