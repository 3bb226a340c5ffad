// registry_plus.c — the registry of allreduce algorithms (nn/coll/coll_algos.c) with one
// more entry, algo_reverse_ring.h's, for the dtsim and dtrain that tests/coll builds beside
// the real ones: their --help must list reverse_ring, as it must every entry
// (coll.one_entry_reaches_dtsim_and_dtrain_help). This copy overrides the library's weak one.
#define DT_ALGO_EXTRA "algo_reverse_ring.h"
#include "coll/coll_algos.c"
