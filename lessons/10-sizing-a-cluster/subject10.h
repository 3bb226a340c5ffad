// subject10.h — lesson 10's channel between the grader (remote.c, the judge) and the
// student's answers.c (subject10.c, the server that reads it): the request's tag, and the
// judge's call that fills in the answer sheet's variables.
#ifndef LESSON10_SUBJECT_H
#define LESSON10_SUBJECT_H

enum { SUBJECT10_ANSWERS = 0 };  // nothing in; offer_flags and the seven numbers out

// offer_flags longer than this is refused as a malformed reply (the offer needs ~150)
#define LESSON10_FLAGS_MAX 4000

// Asks the subject for answers.c's values and sets the grader's copies of answers.h's
// variables (remote.c defines them): the grader calls it once, before its checks.
void answers_fetch(void);

#endif
