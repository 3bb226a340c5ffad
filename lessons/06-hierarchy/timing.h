// timing.h — lesson 06's grader times one allreduce on SimGrid's clock (smpirun): a device
// whose delays are sleeps on the simulated clock and whose additions are skipped (γ = 0),
// with one scratch block shared by every rank (smpirun -no-privatize runs all 1024 in one
// process). Under mpirun (no DT_SMPI) the time is the wall clock and nothing is shared.
#ifndef LESSON06_TIMING_H
#define LESSON06_TIMING_H

#include <stddef.h>

#include "coll/coll.h"

// Seconds of one allreduce of `count` floats with options o, from the last rank's start to
// the last rank's end (the barrier releases ranks apart). Timing only: the sums are not
// looked at.
double timing_one(const dt_coll_opts *o, size_t count);

#endif
