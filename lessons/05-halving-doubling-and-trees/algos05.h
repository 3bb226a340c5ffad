// algos05.h — the builders of lesson 05's two registry entries (registry.c): your
// halving-doubling (student_rhd.h) and your lesson-04 ring (your_ring.h).
#ifndef LESSON05_ALGOS_H
#define LESSON05_ALGOS_H

#include "student_rhd.h"
#include "your_ring.h"

#endif
