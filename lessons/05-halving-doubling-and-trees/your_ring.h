// your_ring.h — lesson 04's ring in lesson 05: the experiment (race.sh) races your
// halving-doubling against the ring you wrote in lesson 04, as a later assignment builds on
// your earlier ones. Registry entry "your_ring" (registry.c); the grader asks the subject
// (subject05.c, linked with lessons/04-ring-allreduce/ring.c) for each rank's ring, as for
// student_rhd, and race_ring.c takes dtlab's ring instead while yours is not a ring yet.
// Provided by the lesson.
#ifndef LESSON05_YOUR_RING_H
#define LESSON05_YOUR_RING_H

#include <stddef.h>

#include "../kit/ring_keys.h"
#include "coll/coll_cost.h"
#include "coll/coll_sched.h"

// Lesson 04's contract (lessons/04-ring-allreduce/student_ring.h): the ring allreduce of
// [off, off+n) as rank r of p on comm, appended to lane l.
void student_ring(dt_lane *l, int comm, int r, int p, size_t off, size_t n);

// The builder: every rank, the whole buffer, its rounds keyed as dtlab's ring's so that the
// race coarsens both alike (kit/ring_keys.h)
static inline void lesson05_build_your_ring(const dt_build_ctx *x, size_t n, int quant,
                                            dt_sched *s) {
    (void)quant;  // fp32 on the wire only (lesson 04)
    dt_lane *l = &s->lanes[0];
    int first = l->n_rounds, p = x->size[DT_COMM_ALL];
    student_ring(l, DT_COMM_ALL, x->rank[DT_COMM_ALL], p, 0, n);
    dt_lane_close(l);
    lesson_tag_ring_steps(l, first, p);
}

// name, builder, the ring's cost, any p, never chosen by `auto`
#define LESSON05_RING_ENTRY {"your_ring", lesson05_build_your_ring, dt_cost_ring, NULL, NULL, 0},

#endif
