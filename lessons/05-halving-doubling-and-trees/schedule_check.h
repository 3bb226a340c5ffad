// schedule_check.h — lesson 05's grader reads the student's schedule before running it: it
// builds every rank's lane (student_rhd for r = 0..p-1) and checks, without any MPI, that
// the ops stay in their range, that every send meets a receive of the same size, that the
// runner can finish every round (no deadlock), and that the rounds and the elements moved
// are Rabenseifner's. So a broken schedule fails with a hint instead of hanging mpirun.
// (The first three are the kit's dry run, lessons/kit/schedule_check.h, on one communicator.)
#ifndef LESSON05_SCHEDULE_CHECK_H
#define LESSON05_SCHEDULE_CHECK_H

#include <stddef.h>

#include "../kit/schedule_check.h"
#include "student_rhd.h"

// Every rank's lane of student_rhd(l, comm, r, p, off, n) (free with sc_free).
dt_lane *sc_build(int p, int comm, size_t off, size_t n);
void sc_free(dt_lane *lanes, int p);

// Each returns 1 when the check holds, else 0 with the hint in hint[0..hn).
// Ops: a send or a receive (add or copy), on `comm`, to a peer in [0, p) other than the
// rank itself, inside [off, off+n); a receive-copy overlaps nothing else in its round.
int sc_well_formed(const dt_lane *lanes, int p, int comm, size_t off, size_t n, char *hint,
                   size_t hn);
// The k-th message from a to b meets the k-th receive at b from a, with the same count,
// and the rounds can all complete when a message needs both ends posted (as MPI's
// rendezvous protocol for large messages does).
int sc_matched(const dt_lane *lanes, int p, char *hint, size_t hn);
// For n >= p': the longest rank's rounds are 2·lg p' (+2 when p != p'), and no rank sends
// or receives more than 2n(p'-1)/p' elements (+n when p != p'), give or take the blocks'
// rounding (p' + 2·lg p' elements).
int sc_rounds_and_sizes(const dt_lane *lanes, int p, size_t n, char *hint, size_t hn);

#endif
