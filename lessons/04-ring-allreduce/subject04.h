// subject04.h — lesson 04's channel between the grader (remote.c, the judge) and the
// student's code (subject04.c, subject04_mpi.c): the requests' tags and one op's layout.
#ifndef LESSON04_SUBJECT_H
#define LESSON04_SUBJECT_H

#include <stdint.h>

enum { SUBJECT04_RING = 0, SUBJECT04_RING_MPI = 1 };
#define SUBJECT04_MAX_OPS (1u << 24)  // a schedule longer than this is malformed

// student_ring's reply: u64 rounds, then per round u64 ops and that many of these
typedef struct {
    uint8_t kind, comm;
    int32_t peer;
    uint64_t off, count;
} subject04_op;

#endif
