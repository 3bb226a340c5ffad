// subject04.h — lesson 04's channel between the grader (remote.c, the judge) and the
// student's code (subject04.c, subject04_mpi.c): the requests' tags.
#ifndef LESSON04_SUBJECT_H
#define LESSON04_SUBJECT_H

#include <stddef.h>
#include <stdint.h>

enum { SUBJECT04_RING = 0, SUBJECT04_RING_MPI = 1 };

// What one send of the student's MPI ring carried (grader_mpi.c's profiling wrappers keep
// it in the recording run; the grader's replay reads it back): its length and its first
// LESSON04_KEPT floats.
#define LESSON04_KEPT 4096
#define LESSON04_MAX_MSGS 64
typedef struct {
    size_t count, kept;  // kept = LESSON04_NOT_FLOAT: sent as another datatype than MPI_FLOAT
    float *v;
} lesson04_msg;
#define LESSON04_NOT_FLOAT ((size_t)-1)
extern lesson04_msg lesson04_sent[LESSON04_MAX_MSGS];
extern int lesson04_n_sent;
extern long lesson04_sent_msgs;
extern size_t lesson04_sent_max;
void lesson04_forget_sends(void);  // before each call: no messages, no counts

#endif
