// algo_reverse_ring.h — a throwaway algorithm registered the way any new one is: one entry
// (tests/coll/CMakeLists.txt compiles nn/coll/coll_algos.c with
// -DDT_ALGO_EXTRA='"algo_reverse_ring.h"' into coll_check_plus, for both worlds). It
// proves that an entry is all it takes: --algos reverse_ring then runs everywhere the
// built-ins do, checked against float64 sums and, under SMPI, the cost model.
#include "coll/coll_cost.h"
#include "coll/coll_sched.h"

void test_build_reverse_ring(const dt_build_ctx *x, size_t n, int quant, dt_sched *s);

#define DT_ALGO_EXTRA_ENTRIES \
    {"reverse_ring", test_build_reverse_ring, dt_cost_ring, NULL, NULL, 0},
