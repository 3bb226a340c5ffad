// schedule_check.h — lesson 06's grader reads the student's schedules before running them:
// it builds every rank's lane of student_hier (or student_torus2d) for a shape of P ranks
// and checks, without any MPI, that each op names a communicator of that algorithm the rank
// belongs to, a real peer there and a range inside [off, off+n); that every send meets a
// receive of the same size and the rounds can all complete; and that the rounds and the
// elements moved are those of the algorithm (student_hier.h's costs). A broken schedule
// fails with a hint instead of hanging mpirun.
#ifndef LESSON06_SCHEDULE_CHECK_H
#define LESSON06_SCHEDULE_CHECK_H

#include <stddef.h>

#include "../kit/schedule_check.h"
#include "student_hier.h"

// P ranks as groups of g consecutive ranks (hier; the last one may be smaller), or as Y
// rows of X consecutive ranks (torus, X·Y = P).
typedef struct {
    int p, torus, g, X, Y;
} sc_shape;

// This rank's place in communicator comm of the shape: its rank there and the size (-1 and
// 0 when it is not a member, or comm is not one of the shape's algorithm).
void sc_place(const sc_shape *sh, int r, int comm, int *rank, int *size);

// Every rank's lane of the student's function for the shape (free with sc_free).
dt_lane *sc_build(const sc_shape *sh, size_t off, size_t n);
void sc_free(dt_lane *lanes, int p);

// Each returns 1 when the check holds, else 0 with the hint in hint[0..hn).
int sc_well_formed(const dt_lane *lanes, const sc_shape *sh, size_t off, size_t n, char *hint,
                   size_t hn);
int sc_matched(const dt_lane *lanes, const sc_shape *sh, char *hint, size_t hn);
// hier: rank 0 (the longest) has 2⌈lg g⌉ + 2(L-1) rounds; only the leaders use
// DT_COMM_LEADERS, each sending and receiving at most 2n(L-1)/L elements there (+ L for the
// chunks' rounding); inside a group a rank sends at most n·⌈lg g⌉ (a binomial tree).
// torus: 2(X-1) + 2(Y-1) rounds; at most 2n(X-1)/X elements each way along the row and
// 2(n/X)(Y-1)/Y along the column (+ X + Y).
int sc_rounds_and_traffic(const dt_lane *lanes, const sc_shape *sh, size_t n, char *hint,
                          size_t hn);

#endif
