// registry.c — dtlab's registry of allreduce algorithms (nn/coll/coll_algos.c) compiled
// with one more entry, "student_rhd" (student_rhd.h). The library's own copy has weak
// symbols, so this one replaces it in the grader (docs/architecture.md, "The registry of
// algorithms"; tests/coll/CMakeLists.txt does the same with -DDT_ALGO_EXTRA).
#define DT_ALGO_EXTRA "student_rhd.h"
#include "coll/coll_algos.c"
