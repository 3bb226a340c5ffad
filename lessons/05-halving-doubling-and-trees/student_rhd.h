// student_rhd.h — how lesson 05's allreduce plugs into dtlab's registry of algorithms
// (nn/coll/coll_algos.c; docs/architecture.md, "The registry of algorithms"). Provided by
// the lesson: you write student_rhd() in student_rhd.c; this header names it "student_rhd"
// with one registry entry, as tests/coll/algo_reverse_ring.h does for its mirrored ring.
// registry.c compiles coll_algos.c with DT_ALGO_EXTRA pointing here, so the grader (and
// anything built the same way) can run `--algos student_rhd` beside ring, rhd and mpi.
#ifndef LESSON05_STUDENT_RHD_H
#define LESSON05_STUDENT_RHD_H

#include <stddef.h>

#include "coll/coll_sched.h"

// Rabenseifner's allreduce of the elements [off, off+n) of the buffer, as rank r of the p
// ranks of communicator `comm` (Thakur, Rabenseifner & Gropp 2005, §4.5): append this
// rank's rounds to lane l with dt_lane_round / dt_lane_op (coll_sched.h), every op on
// `comm`, every element range inside [off, off+n). After the run, every rank holds the sum
// over all p ranks there. Any p >= 1, any n >= 0. Always halving-doubling (no
// short-message switch): 2·lg p'·α + 2n(p'-1)/p'·β, plus α + nβ in and α + nβ out when
// p is not a power of two (p' = 2^⌊lg p⌋).
void student_rhd(dt_lane *l, int comm, int r, int p, size_t off, size_t n);

// The registry's builder (coll_sched.h's dt_algo_def.build): every rank, the whole buffer,
// on the communicator of everyone. fp16 on the wire is not part of this lesson (quant: the
// grader never asks for it).
static inline void lesson05_build_student_rhd(const dt_build_ctx *x, size_t n, int quant,
                                              dt_sched *s) {
    (void)quant;
    student_rhd(&s->lanes[0], DT_COMM_ALL, x->rank[DT_COMM_ALL], x->size[DT_COMM_ALL], 0, n);
    dt_lane_close(&s->lanes[0]);
}

// One entry: name, builder, no cost of its own (the built-in rhd's, dt_cost_rhd, may price
// the short-message path, which this one never takes: the grader times it against the
// closed form itself), runs on any p, never chosen by `auto`. (The grader's registry,
// registry.c, adds lesson 04's ring beside it: your_ring.h.)
#define LESSON05_RHD_ENTRY {"student_rhd", lesson05_build_student_rhd, NULL, NULL, NULL, 0},
#ifndef DT_ALGO_EXTRA_ENTRIES
#define DT_ALGO_EXTRA_ENTRIES LESSON05_RHD_ENTRY
#endif

#endif
