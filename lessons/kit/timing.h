// timing.h — lessons 05's and 06's graders time one allreduce on SimGrid's clock (smpirun;
// tests/coll/coll_check.c has the same clock device): a device whose delays are sleeps on
// the simulated clock (dev->delay, for the ring's coarsened rounds: coll_coarsen.c, as
// dtsim does above 16 ranks; a sleep, not a computation, since the K ranks of one host
// would share its CPU and each wait K times too long) and whose additions are skipped
// (γ = 0), with the library's scratch blocks, where messages arrive, one block for every
// rank: smpirun -no-privatize runs them all in one process, and 1024 ranks' own blocks
// would take 1024 copies (16 GiB at 16 MiB a rank), as dtsim's arena avoids too
// (sim/rank.c). Under mpirun (no DT_SMPI) the time is the wall clock and nothing is shared.
#ifndef DT_LESSON_TIMING_H
#define DT_LESSON_TIMING_H

#include <stddef.h>

#include "coll/coll.h"

// Makes the shared scratch block of `bytes` now (it is made once, at the first size asked,
// and larger asks get blocks of their own): a grader that times several sizes asks for
// its largest first. Nothing under mpirun.
void timing_reserve(size_t bytes);

// Seconds of one allreduce of `count` floats with options o, from the last rank's start to
// the last rank's end (the barrier releases ranks apart). Timing only: the sums are not
// looked at.
double timing_one(const dt_coll_opts *o, size_t count);

#endif
