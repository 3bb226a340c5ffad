// registry.c — dtlab's registry of allreduce algorithms (nn/coll/coll_algos.c) compiled
// with two more entries: "student_rhd" (student_rhd.h), and "your_ring" (your_ring.h: your
// ring from lesson 04, which race.sh races against it). The library's own copy has weak
// symbols, so this one replaces it in the grader (docs/architecture.md, "The registry of
// algorithms"; tests/coll/CMakeLists.txt does the same with -DDT_ALGO_EXTRA).
#define DT_ALGO_EXTRA "algos05.h"
#define DT_ALGO_EXTRA_ENTRIES LESSON05_RHD_ENTRY LESSON05_RING_ENTRY
#include "coll/coll_algos.c"
