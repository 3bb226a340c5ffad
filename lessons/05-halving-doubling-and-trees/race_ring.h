// race_ring.h — which ring lesson 05's race runs against halving-doubling (race_ring.c)
#ifndef LESSON05_RACE_RING_H
#define LESSON05_RACE_RING_H

#include <stddef.h>

#include "coll/coll.h"

// On every rank of MPI_COMM_WORLD (p ranks, buffers of n >= p floats): the registry's
// "your_ring" (lesson 04's ring, your_ring.h) when it is a ring, else DT_ALGO_RING. Rank 0
// prints a line saying which, and why not yours.
dt_algo race_ring(int p, size_t n);

#endif
